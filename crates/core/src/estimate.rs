//! A figure measured over several seeds: its mean and a 95% confidence interval from Student's
//! t distribution (two-sided, n - 1 degrees of freedom; the quantiles are the standard table,
//! e.g. NIST/SEMATECH e-Handbook of Statistical Methods, 1.3.6.7.2).
//!
//! A figure that cannot be negative (a time, a bandwidth, a rate, a count) takes
//! [`Estimate::of_positive`]: the t interval is symmetric about the mean, and with a few seeds
//! of a heavy-tailed figure (one seed of five meets a 4.29 s RC timeout, or a busbw collapses
//! to 0 in one) its lower end falls below zero. That end is clipped at the domain bound 0 and
//! the estimate says so (`lo_clipped`, in JSON and text): the true mean is >= 0, so
//! intersecting the interval with [0, inf) loses none of its coverage, and the mark tells a
//! reader that the lower end is the bound, not a measurement (the interval is too wide to
//! bound the figure from below: more seeds, or expectation instead of sampling, narrow it).
//! A percentile interval needs far more than 3-5 seeds, and a log-scale interval estimates
//! the geometric mean instead and fails on a 0 (a stalled run's busbw), so neither is used.

use serde::{Deserialize, Serialize};

/// Mean and 95% interval of `n` samples. With one sample the interval is the point itself and
/// `n == 1` says that no spread was measured.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Estimate {
    pub mean: f64,
    /// Lower and upper end of the 95% confidence interval of the mean.
    pub lo: f64,
    pub hi: f64,
    /// Samples (seeds) behind the figure.
    pub n: u32,
    /// The Student-t lower end fell below 0, the bound of a non-negative figure, and `lo` is
    /// that bound ([`Estimate::of_positive`]); written only when true.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub lo_clipped: bool,
}

/// Two-sided 97.5% quantiles of Student's t for 1..=30 degrees of freedom.
const T975: [f64; 30] = [
    12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160,
    2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056,
    2.052, 2.048, 2.045, 2.042,
];

/// The t quantile for `df` degrees of freedom (the normal 1.960 beyond the table, where the
/// two differ by under 2%).
fn t975(df: usize) -> f64 {
    T975.get(df.wrapping_sub(1)).copied().unwrap_or(1.960)
}

impl Estimate {
    /// The estimate of `samples`; `None` when there are none or one is not finite.
    pub fn of(samples: &[f64]) -> Option<Estimate> {
        let n = samples.len();
        if n == 0 || samples.iter().any(|x| !x.is_finite()) {
            return None;
        }
        let mean = samples.iter().sum::<f64>() / n as f64;
        let half = if n == 1 {
            0.0
        } else {
            let var = samples.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
            t975(n - 1) * (var / n as f64).sqrt()
        };
        Some(Estimate {
            mean,
            lo: mean - half,
            hi: mean + half,
            n: n as u32,
            lo_clipped: false,
        })
    }

    /// The estimate of a figure that cannot be negative: as [`Estimate::of`], its lower end
    /// clipped at 0 (and `lo_clipped` set) when the t interval reaches below it. `None` also
    /// when a sample is negative (the figure is not of that kind).
    pub fn of_positive(samples: &[f64]) -> Option<Estimate> {
        if samples.iter().any(|&x| x < 0.0) {
            return None;
        }
        let e = Estimate::of(samples)?;
        Some(match e.lo < 0.0 {
            true => Estimate {
                lo: 0.0,
                lo_clipped: true,
                ..e
            },
            false => e,
        })
    }

    /// The estimate as text with `decimals` decimals: `56.58 ± 0.02`, or the mean alone when
    /// one sample measured no spread; a clipped interval by its ends, `36.3 (0.0 to 77.4,
    /// clipped at 0)`.
    pub fn text(&self, decimals: usize) -> String {
        match self.n {
            0 | 1 => format!("{:.decimals$}", self.mean),
            _ if self.lo_clipped => format!(
                "{:.decimals$} ({:.decimals$} to {:.decimals$}, clipped at 0)",
                self.mean, self.lo, self.hi
            ),
            _ => format!(
                "{:.decimals$} ± {:.decimals$}",
                self.mean,
                self.half_width()
            ),
        }
    }

    /// Half the width of the interval.
    pub fn half_width(&self) -> f64 {
        (self.hi - self.lo) / 2.0
    }

    /// True when the two intervals share a point: the samples do not separate the figures.
    pub fn overlaps(&self, other: &Estimate) -> bool {
        self.lo <= other.hi && other.lo <= self.hi
    }

    /// The estimate with every figure scaled by `k` (k >= 0), for a change of unit.
    pub fn scaled(&self, k: f64) -> Estimate {
        Estimate {
            mean: self.mean * k,
            lo: self.lo * k,
            hi: self.hi * k,
            n: self.n,
            lo_clipped: self.lo_clipped,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interval_of_known_samples() {
        // mean 2, sample sd 1, n 3: half width t(2) * 1 / sqrt(3) = 4.303 / 1.732 = 2.484
        let e = Estimate::of(&[1.0, 2.0, 3.0]).unwrap();
        assert_eq!(e.mean, 2.0);
        assert!((e.half_width() - 4.303 / 3f64.sqrt()).abs() < 1e-12);
        assert_eq!(e.n, 3);
    }

    #[test]
    fn one_sample_has_no_width_and_none_is_refused() {
        let e = Estimate::of(&[5.0]).unwrap();
        assert_eq!((e.lo, e.hi, e.n), (5.0, 5.0, 1));
        assert!(Estimate::of(&[]).is_none());
        assert!(Estimate::of(&[1.0, f64::NAN]).is_none());
    }

    #[test]
    fn overlap_and_scale() {
        let a = Estimate::of(&[1.0, 1.2, 1.1]).unwrap();
        let b = Estimate::of(&[1.15, 1.3, 1.2]).unwrap();
        let c = Estimate::of(&[5.0, 5.1, 5.2]).unwrap();
        assert!(a.overlaps(&b) && b.overlaps(&a));
        assert!(!a.overlaps(&c));
        let s = a.scaled(100.0);
        assert!((s.mean - 110.0).abs() < 1e-9 && (s.hi - a.hi * 100.0).abs() < 1e-9);
    }

    #[test]
    fn text_shows_the_half_width_only_with_a_spread() {
        assert_eq!(
            Estimate::of(&[56.6, 56.56])
                .unwrap()
                .text(2)
                .split(" ± ")
                .count(),
            2
        );
        assert_eq!(Estimate::of(&[5.0]).unwrap().text(1), "5.0");
    }

    #[test]
    fn a_positive_figure_is_clipped_at_zero_and_says_so() {
        // A busbw over 5 seeds, three of them stalled by a timeout (about 1 GB/s): the t
        // interval (mean 18.4, half width 29.2) reaches below 0.
        let xs = [45.0, 44.0, 1.0, 1.0, 1.0];
        let t = Estimate::of(&xs).unwrap();
        assert!(t.lo < 0.0 && !t.lo_clipped);
        let p = Estimate::of_positive(&xs).unwrap();
        assert_eq!((p.mean, p.hi, p.lo), (t.mean, t.hi, 0.0));
        assert!(p.lo_clipped);
        assert!(p.text(1).ends_with("clipped at 0)"), "{}", p.text(1));
        assert!(toml::to_string(&p).unwrap().contains("lo_clipped = true"));
        // An interval above 0 is left alone, and the mark is not written.
        let q = Estimate::of_positive(&[45.0, 44.0, 46.0]).unwrap();
        assert_eq!(q, Estimate::of(&[45.0, 44.0, 46.0]).unwrap());
        assert!(!toml::to_string(&q).unwrap().contains("lo_clipped"));
        assert!(Estimate::of_positive(&[1.0, -1.0]).is_none());
    }

    #[test]
    fn many_samples_use_the_normal_quantile() {
        assert_eq!(t975(30), 2.042);
        assert_eq!(t975(31), 1.960);
    }
}
