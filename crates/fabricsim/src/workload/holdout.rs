//! How well an alpha-beta fit predicts sizes it was not fitted to: fit on every other point
//! of a sweep (the first, third, ... and always the last, so the fit spans the sweep) and
//! compare its prediction with the measured time at the points left out.

use serde::Serialize;

use super::alpha_beta::{Fit, FitError, fit};

/// One size left out of the fit.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Check {
    pub size_bytes: u64,
    pub measured_s: f64,
    pub model_s: f64,
    /// (model - measured) / measured.
    pub rel_err: f64,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Holdout {
    pub fit: Fit,
    /// Sizes the fit used.
    pub fitted_sizes: Vec<u64>,
    pub checks: Vec<Check>,
}

impl Holdout {
    /// Largest |relative error| over the left-out sizes (0 when none were left out).
    pub fn max_abs_rel_err(&self) -> f64 {
        self.checks
            .iter()
            .map(|c| c.rel_err.abs())
            .fold(0.0, f64::max)
    }
}

/// Fits `points` (size, seconds) at even indices and the last; checks the others.
pub fn holdout(points: &[(u64, f64)]) -> Result<Holdout, FitError> {
    let last = points.len().saturating_sub(1);
    let used = |i: usize| i % 2 == 0 || i == last;
    let train: Vec<(u64, f64)> = (0..points.len())
        .filter(|&i| used(i))
        .map(|i| points[i])
        .collect();
    let f = fit(&train)?;
    let checks = (0..points.len())
        .filter(|&i| !used(i))
        .map(|i| {
            let (size_bytes, measured_s) = points[i];
            let model_s = f.model.time_s(size_bytes);
            Check {
                size_bytes,
                measured_s,
                model_s,
                rel_err: (model_s - measured_s) / measured_s,
            }
        })
        .collect();
    Ok(Holdout {
        fit: f,
        fitted_sizes: train.iter().map(|p| p.0).collect(),
        checks,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_exact_line_predicts_the_left_out_sizes_exactly() {
        // time = 10 us + S / 20 GB/s at 1, 2, 4, ... 64 MiB: the fit is exact, so is the check.
        let pts: Vec<(u64, f64)> = (0..7)
            .map(|i| {
                let s = (1u64 << 20) << i;
                (s, 10e-6 + s as f64 / 20e9)
            })
            .collect();
        let h = holdout(&pts).unwrap();
        assert_eq!(h.fitted_sizes.len(), 4);
        assert_eq!(h.checks.len(), 3);
        assert!(h.max_abs_rel_err() < 1e-9, "{h:?}");
        assert!((h.fit.model.bytes_per_s - 20e9).abs() < 1.0);
        // A kink the line cannot follow shows up at the left-out sizes.
        let mut bent = pts.clone();
        bent[3].1 *= 1.5;
        assert!(holdout(&bent).unwrap().max_abs_rel_err() > 0.3);
    }
}
