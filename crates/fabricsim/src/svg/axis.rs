//! Chart axes: a range, a scale (linear, log 10, log 2), "nice" ticks (1-2-5 steps; Heckbert,
//! "Nice numbers for graph labels", Graphics Gems 1990) and tick labels with units.

/// How values map to positions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scale {
    Linear,
    /// Ticks at powers of ten.
    Log10,
    /// Ticks at powers of two (message sizes).
    Log2,
}

/// How tick labels are written (the unit is in the axis title unless the format carries it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TickFormat {
    /// Plain numbers with up to 3 significant digits, k/M/G for large values.
    Number,
    /// Byte sizes: 64 KiB, 1 MiB, 4 GiB.
    Bytes,
    /// Fractions written as percentages (0.05 -> 5%).
    Percent,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Axis {
    /// The axis title with its unit, e.g. "message size (bytes)".
    pub title: String,
    pub scale: Scale,
    pub min: f64,
    pub max: f64,
    pub format: TickFormat,
}

/// The 1-2-5 step nearest `raw`.
fn nice_step(raw: f64) -> f64 {
    let mag = 10f64.powf(raw.log10().floor());
    let f = raw / mag;
    let n = if f <= 1.0 {
        1.0
    } else if f <= 2.0 {
        2.0
    } else if f <= 5.0 {
        5.0
    } else {
        10.0
    };
    n * mag
}

impl Axis {
    /// An axis covering `values` (non-finite ones ignored; log scales ignore values <= 0).
    /// A linear axis of non-negative data starts at 0.
    pub fn fit(title: &str, scale: Scale, format: TickFormat, values: &[f64]) -> Axis {
        let usable: Vec<f64> = values
            .iter()
            .copied()
            .filter(|v| v.is_finite() && (scale == Scale::Linear || *v > 0.0))
            .collect();
        let lo = usable.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = usable.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let (min, max) = match scale {
            _ if usable.is_empty() => match scale {
                Scale::Linear => (0.0, 1.0),
                _ => (1.0, 10.0),
            },
            Scale::Linear => {
                let lo = lo.min(0.0);
                let hi = if hi > lo { hi } else { lo + 1.0 };
                let step = nice_step((hi - lo) / 5.0);
                ((lo / step).floor() * step, (hi / step).ceil() * step)
            }
            Scale::Log10 => {
                let (a, b) = (lo.log10().floor(), hi.log10().ceil());
                (10f64.powf(a), 10f64.powf(if b > a { b } else { a + 1.0 }))
            }
            Scale::Log2 => {
                let (a, b) = (lo.log2().floor(), hi.log2().ceil());
                (2f64.powf(a), 2f64.powf(if b > a { b } else { a + 1.0 }))
            }
        };
        Axis {
            title: title.to_string(),
            scale,
            min,
            max,
            format,
        }
    }

    fn t(&self, v: f64) -> f64 {
        match self.scale {
            Scale::Linear => v,
            Scale::Log10 => v.log10(),
            Scale::Log2 => v.log2(),
        }
    }

    /// Position of `v` between pixel positions `from` (at min) and `to` (at max), clamped.
    pub fn map(&self, v: f64, from: f64, to: f64) -> f64 {
        let (a, b) = (self.t(self.min), self.t(self.max));
        let f = if b > a {
            (self.t(v) - a) / (b - a)
        } else {
            0.0
        };
        let f = if f.is_finite() {
            f.clamp(0.0, 1.0)
        } else {
            0.0
        };
        from + f * (to - from)
    }

    /// Tick values, at most about 8.
    pub fn ticks(&self) -> Vec<f64> {
        match self.scale {
            Scale::Linear => {
                let step = nice_step((self.max - self.min) / 5.0);
                let n = ((self.max - self.min) / step).round() as i64;
                (0..=n).map(|i| self.min + i as f64 * step).collect()
            }
            Scale::Log10 | Scale::Log2 => {
                let base: f64 = if self.scale == Scale::Log10 {
                    10.0
                } else {
                    2.0
                };
                let (a, b) = (
                    self.t(self.min).round() as i64,
                    self.t(self.max).round() as i64,
                );
                let every = ((b - a) as f64 / 8.0).ceil().max(1.0) as i64;
                (a..=b)
                    .filter(|e| (e - a) % every == 0)
                    .map(|e| base.powi(e as i32))
                    .collect()
            }
        }
    }

    /// The label of tick `v`.
    pub fn label_of(&self, v: f64) -> String {
        match self.format {
            TickFormat::Number => number(v),
            TickFormat::Bytes => bytes(v),
            TickFormat::Percent => format!("{}%", number(v * 100.0)),
        }
    }
}

/// Up to 3 significant digits, k/M/G suffixes from 10^4, 10^6 and 10^9 on; stable text.
pub fn number(v: f64) -> String {
    let a = v.abs();
    let (x, suffix) = if a >= 1e9 {
        (v / 1e9, "G")
    } else if a >= 1e6 {
        (v / 1e6, "M")
    } else if a >= 1e4 {
        (v / 1e3, "k")
    } else {
        (v, "")
    };
    let ax = x.abs();
    let s = if ax == 0.0 || ax >= 100.0 {
        format!("{x:.0}")
    } else if ax >= 10.0 {
        format!("{x:.1}")
    } else if ax >= 1.0 {
        format!("{x:.2}")
    } else if ax >= 0.01 {
        format!("{x:.3}")
    } else {
        format!("{x:.1e}")
    };
    let s = if s.contains('.') && !s.contains('e') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    };
    format!("{s}{suffix}")
}

/// Binary byte sizes: 512 B, 64 KiB, 1 MiB, 4 GiB.
pub fn bytes(v: f64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut x = v;
    let mut u = 0;
    while x >= 1024.0 && u + 1 < UNITS.len() {
        x /= 1024.0;
        u += 1;
    }
    format!("{} {}", number(x), UNITS[u])
}
