//! The alpha-beta (Hockney) model of a collective, time(S) = alpha + S / B_eff, and its fit
//! from (size, time) points of packet-level runs.
//!
//! The fit minimises the squared *relative* residuals, sum(((t_i - alpha - S_i/B) / t_i)^2),
//! so small sizes (latency-bound) weigh as much as large ones (bandwidth-bound); a negative
//! intercept is clamped to zero and the slope refitted (a latency cannot be negative).
//!
//! Runs that met an RC retransmission timeout ([`fit_runs`]) are set apart: a lost tail packet
//! stalls its message by a whole local ACK timeout (4.096 us x 2^exp, up to seconds; IBA
//! 9.7.6.1.3), an outlier that would bend the line by where in the size range it fell. The
//! line is fitted to the runs without one, and the stalls enter as their mean excess over that
//! line per run, added to alpha: a tail loss costs per message, and a collective call sends
//! the same messages per rank and channel at every size, so its expected stall is per call.

use std::fmt;

/// time(S) = alpha + S / bytes_per_s.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AlphaBeta {
    pub alpha_s: f64,
    /// Effective bandwidth B_eff, bytes per second (infinite for a free network).
    pub bytes_per_s: f64,
}

impl AlphaBeta {
    /// A network that costs nothing.
    pub const FREE: AlphaBeta = AlphaBeta {
        alpha_s: 0.0,
        bytes_per_s: f64::INFINITY,
    };

    pub fn time_s(&self, bytes: u64) -> f64 {
        self.alpha_s + bytes as f64 / self.bytes_per_s
    }

    /// Two phases one after the other: latencies add, and so do the per-byte costs.
    pub fn then(self, o: AlphaBeta) -> AlphaBeta {
        AlphaBeta {
            alpha_s: self.alpha_s + o.alpha_s,
            bytes_per_s: 1.0 / (1.0 / self.bytes_per_s + 1.0 / o.bytes_per_s),
        }
    }
}

/// A fitted model with its error on the points it was fitted to.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Fit {
    pub model: AlphaBeta,
    pub points: usize,
    /// Largest |model - measured| / measured over the points.
    pub max_rel_err: f64,
    /// Root mean square of the relative errors.
    pub rms_rel_err: f64,
    /// Runs that met a retransmission timeout ([`fit_runs`]); 0 for [`fit`].
    pub stalled_runs: usize,
    /// Whether they were set apart from the line (else too few sizes were free of timeouts,
    /// and the line goes through them).
    pub set_apart: bool,
    /// Their mean excess over the line per run (all runs counted), included in `alpha_s`.
    pub stall_s: f64,
}

#[derive(Clone, Debug, PartialEq)]
pub enum FitError {
    /// Fewer than two distinct sizes: a line needs two.
    TooFewSizes(usize),
    /// A time that is zero, negative or not finite.
    BadTime { bytes: u64, secs: f64 },
    /// Times do not grow with size.
    NoBandwidth,
}

impl fmt::Display for FitError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FitError::TooFewSizes(n) => {
                write!(f, "an alpha-beta fit needs two distinct sizes, got {n}")
            }
            FitError::BadTime { bytes, secs } => {
                write!(f, "time {secs} s for {bytes} bytes is not positive")
            }
            FitError::NoBandwidth => write!(f, "times do not grow with size: no bandwidth to fit"),
        }
    }
}

impl std::error::Error for FitError {}

/// Fits alpha and B_eff to `(bytes, seconds)` points.
pub fn fit(points: &[(u64, f64)]) -> Result<Fit, FitError> {
    for &(bytes, secs) in points {
        if !(secs.is_finite() && secs > 0.0) {
            return Err(FitError::BadTime { bytes, secs });
        }
    }
    let mut sizes: Vec<u64> = points.iter().map(|p| p.0).collect();
    sizes.sort_unstable();
    sizes.dedup();
    if sizes.len() < 2 {
        return Err(FitError::TooFewSizes(sizes.len()));
    }
    // Weighted normal equations with w = 1/t^2 for t = a + b*S.
    let (mut sw, mut sws, mut swss, mut swt, mut swst) = (0.0, 0.0, 0.0, 0.0, 0.0);
    for &(bytes, t) in points {
        let (s, w) = (bytes as f64, 1.0 / (t * t));
        sw += w;
        sws += w * s;
        swss += w * s * s;
        swt += w * t;
        swst += w * s * t;
    }
    let det = sw * swss - sws * sws;
    let (mut a, mut b) = (
        (swt * swss - sws * swst) / det,
        (sw * swst - sws * swt) / det,
    );
    if a < 0.0 {
        a = 0.0;
        b = swst / swss;
    }
    if b.is_nan() || b <= 0.0 {
        return Err(FitError::NoBandwidth);
    }
    let model = AlphaBeta {
        alpha_s: a,
        bytes_per_s: 1.0 / b,
    };
    let errs: Vec<f64> = points
        .iter()
        .map(|&(bytes, t)| (model.time_s(bytes) - t).abs() / t)
        .collect();
    Ok(Fit {
        model,
        points: points.len(),
        max_rel_err: errs.iter().cloned().fold(0.0, f64::max),
        rms_rel_err: (errs.iter().map(|e| e * e).sum::<f64>() / errs.len() as f64).sqrt(),
        stalled_runs: 0,
        set_apart: false,
        stall_s: 0.0,
    })
}

/// Fits `(bytes, seconds)` runs of which those with `timeouts[i] > 0` met a retransmission
/// timeout: the line through the others (with its error on them), plus the stalled runs' mean
/// excess over it per run in alpha. With fewer than two distinct sizes free of timeouts, the
/// line goes through every run, as [`fit`], and `stalled_runs` says so.
pub fn fit_runs(points: &[(u64, f64)], timeouts: &[u64]) -> Result<Fit, FitError> {
    assert_eq!(points.len(), timeouts.len(), "one timeout count per run");
    let clean: Vec<(u64, f64)> = (points.iter().zip(timeouts))
        .filter(|(_, t)| **t == 0)
        .map(|(p, _)| *p)
        .collect();
    let stalled_runs = points.len() - clean.len();
    let mut f = match fit(&clean) {
        Ok(f) if stalled_runs > 0 => f,
        _ => fit(points)?,
    };
    f.stalled_runs = stalled_runs;
    f.set_apart = f.points < points.len();
    if f.set_apart {
        let excess: f64 = (points.iter().zip(timeouts))
            .filter(|(_, t)| **t > 0)
            .map(|(&(bytes, secs), _)| (secs - f.model.time_s(bytes)).max(0.0))
            .sum();
        f.stall_s = excess / points.len() as f64;
        f.model.alpha_s += f.stall_s;
    }
    Ok(f)
}

#[cfg(test)]
mod tests {
    use super::*;
    use fabricsim_core::rng::{Rng, Stream};

    #[test]
    fn recovers_an_exact_line() {
        let truth = AlphaBeta {
            alpha_s: 25e-6,
            bytes_per_s: 45e9,
        };
        let pts: Vec<(u64, f64)> = (10..31)
            .map(|e| (1u64 << e, truth.time_s(1 << e)))
            .collect();
        let f = fit(&pts).unwrap();
        assert!((f.model.alpha_s - truth.alpha_s).abs() / truth.alpha_s < 1e-9);
        assert!((f.model.bytes_per_s - truth.bytes_per_s).abs() / truth.bytes_per_s < 1e-9);
        assert!(f.max_rel_err < 1e-9);
    }

    #[test]
    fn noisy_points_fit_within_the_noise() {
        // +-2% multiplicative noise: the fit's parameters stay within a few percent and its
        // reported error is of the noise's size.
        for seed in 0..20 {
            let mut rng = Rng::stream(seed, Stream::Test(7), 0);
            let truth = AlphaBeta {
                alpha_s: 10e-6,
                bytes_per_s: 90e9,
            };
            let pts: Vec<(u64, f64)> = (12..32)
                .map(|e| {
                    let noise = 1.0 + 0.04 * (rng.next_f64() - 0.5);
                    (1u64 << e, truth.time_s(1 << e) * noise)
                })
                .collect();
            let f = fit(&pts).unwrap();
            assert!(
                (f.model.alpha_s / truth.alpha_s - 1.0).abs() < 0.05,
                "{f:?}"
            );
            assert!(
                (f.model.bytes_per_s / truth.bytes_per_s - 1.0).abs() < 0.05,
                "{f:?}"
            );
            assert!(f.max_rel_err <= 0.04 && f.rms_rel_err > 0.0, "{f:?}");
        }
    }

    #[test]
    fn timeout_runs_add_their_mean_stall_per_call_to_alpha() {
        // Four sizes on the line 10 us + S / 50 GB/s; the 1 MiB run also waited out one
        // 4.3 s timeout (4.096 us x 2^20). The line comes from the three others (exact), the
        // stall is 4.3 s / 4 runs in alpha.
        let truth = AlphaBeta {
            alpha_s: 10e-6,
            bytes_per_s: 50e9,
        };
        let rto = 4.096e-6 * (1u64 << 20) as f64;
        let sizes = [64u64 << 10, 1 << 20, 8 << 20, 64 << 20];
        let timeouts = [0, 1, 0, 0];
        let pts: Vec<(u64, f64)> = (sizes.iter().zip(timeouts))
            .map(|(&s, t)| (s, truth.time_s(s) + t as f64 * rto))
            .collect();
        let f = fit_runs(&pts, &timeouts).unwrap();
        assert_eq!((f.points, f.stalled_runs, f.set_apart), (3, 1, true));
        assert!((f.stall_s / (rto / 4.0) - 1.0).abs() < 1e-9, "{f:?}");
        assert!(
            (f.model.alpha_s - (truth.alpha_s + rto / 4.0)).abs() < 1e-9,
            "{f:?}"
        );
        assert!((f.model.bytes_per_s / truth.bytes_per_s - 1.0).abs() < 1e-9);
        // Through all four runs, the relative weights (1/t^2) leave the stall nearly out of the
        // line: its expected cost per call would be lost.
        let all = fit(&pts).unwrap();
        assert!(
            all.model.alpha_s < truth.alpha_s + 1e-3 * rto / 4.0,
            "{all:?}"
        );
        // Without timeouts fit_runs is fit; with one clean size left it fits every run.
        assert_eq!(fit_runs(&pts, &[0; 4]), fit(&pts));
        let g = fit_runs(&pts, &[1, 1, 0, 1]).unwrap();
        assert_eq!(
            (g.points, g.stalled_runs, g.set_apart, g.stall_s),
            (4, 3, false, 0.0)
        );
        assert_eq!(g.model, all.model);
    }

    #[test]
    fn rejects_degenerate_inputs() {
        assert_eq!(fit(&[(8, 1e-6)]), Err(FitError::TooFewSizes(1)));
        assert_eq!(fit(&[(8, 1e-6), (8, 2e-6)]), Err(FitError::TooFewSizes(1)));
        assert!(matches!(
            fit(&[(8, 0.0), (16, 1e-6)]),
            Err(FitError::BadTime { .. })
        ));
        assert_eq!(fit(&[(8, 2e-6), (16, 1e-6)]), Err(FitError::NoBandwidth));
    }
}
