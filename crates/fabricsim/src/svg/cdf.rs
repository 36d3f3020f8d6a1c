//! Empirical CDF chart: for each named sample set, the fraction of samples <= x as a step line.

use super::line::{LineChart, Series};
use super::{Axis, Scale, TickFormat};

/// The empirical CDF of `samples` as step points: (x_i, (i+1)/n) after sorting, starting at
/// (x_0, 0). Non-finite samples are dropped.
pub fn steps(samples: &[f64]) -> Vec<(f64, f64)> {
    let mut v: Vec<f64> = samples.iter().copied().filter(|x| x.is_finite()).collect();
    v.sort_by(f64::total_cmp);
    let n = v.len() as f64;
    let mut out = Vec::with_capacity(2 * v.len());
    for (i, &x) in v.iter().enumerate() {
        out.push((x, i as f64 / n));
        out.push((x, (i + 1) as f64 / n));
    }
    out
}

/// A CDF chart of each (name, samples) on an x axis titled `x_title` (with its unit).
pub fn chart(title: &str, x_title: &str, scale: Scale, sets: &[(String, Vec<f64>)]) -> LineChart {
    let series: Vec<Series> = sets
        .iter()
        .map(|(name, s)| Series {
            name: name.clone(),
            points: steps(s),
            errors: Vec::new(),
        })
        .collect();
    let xs: Vec<f64> = series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.0))
        .collect();
    LineChart {
        title: title.to_string(),
        x: Axis::fit(x_title, scale, TickFormat::Number, &xs),
        y: Axis {
            title: "fraction of messages".into(),
            scale: Scale::Linear,
            min: 0.0,
            max: 1.0,
            format: TickFormat::Percent,
        },
        series,
        markers: false,
    }
}
