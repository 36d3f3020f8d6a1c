//! The nccl-tests result table (NVIDIA/nccl-tests src/common.cu: the header, one line per
//! size with the out-of-place columns, the closing "Out of bounds" and "Avg bus bandwidth"
//! lines) and its JSON form, from measured times per size. Over several seeds each figure is
//! an estimate (`core::estimate`, the lower end clipped at 0): text `mean ± half` per column,
//! JSON `{mean, lo, hi, n}`; with one seed the text is nccl-tests' own.

use fabricsim_core::estimate::Estimate;

use crate::columns::{self, Cells};
use serde::Serialize;

use super::busbw;
use super::collective::Op;
use super::sweep::SweepSize;

/// One measured size.
#[derive(Clone, Debug, PartialEq)]
pub struct Measured {
    pub size: SweepSize,
    /// Completion time of the collective (first post to last delivery), seconds, per seed.
    pub secs: Vec<f64>,
}

#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Row {
    pub size_bytes: u64,
    pub count_elements: u64,
    #[serde(rename = "type")]
    pub dtype: &'static str,
    pub redop: &'static str,
    pub root: i64,
    pub time_us: Estimate,
    #[serde(rename = "algbw_GBps")]
    pub algbw_gbps: Estimate,
    #[serde(rename = "busbw_GBps")]
    pub busbw_gbps: Estimate,
}

#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Table {
    pub op: &'static str,
    pub ranks: u32,
    /// Seeds behind each figure.
    pub seeds: u32,
    pub rows: Vec<Row>,
    /// Each seed's average over the sizes, estimated over the seeds.
    #[serde(rename = "avg_busbw_GBps")]
    pub avg_busbw_gbps: Estimate,
}

/// The estimate of per-seed figures, the lower end clipped at 0; a figure that is not finite
/// (a run of no time) is its mean alone, as one run's would be.
fn estimate(xs: &[f64]) -> Estimate {
    Estimate::of_positive(xs).unwrap_or_else(|| {
        let mean = xs.iter().sum::<f64>() / xs.len().max(1) as f64;
        Estimate {
            mean,
            lo: mean,
            hi: mean,
            n: xs.len() as u32,
            lo_clipped: false,
        }
    })
}

impl Table {
    /// The table of `op` on `ranks` ranks (`root` for broadcast and reduce); each figure is
    /// computed per seed, then estimated over the seeds (every size has the same seeds).
    pub fn new(op: Op, ranks: u32, root: u32, measured: &[Measured]) -> Table {
        let per_seed = |f: &dyn Fn(u64, f64) -> f64, m: &Measured| {
            estimate(
                &m.secs
                    .iter()
                    .map(|&t| f(m.size.bytes, t))
                    .collect::<Vec<_>>(),
            )
        };
        let busbw = |b: u64, t: f64| busbw::busbw_gbps(op, ranks, b, t);
        let rows: Vec<Row> = measured
            .iter()
            .map(|m| Row {
                size_bytes: m.size.bytes,
                count_elements: m.size.count,
                dtype: "float",
                redop: if op.reduces() { "sum" } else { "none" },
                root: if op.rooted() { root as i64 } else { -1 },
                time_us: per_seed(&|_, t| t * 1e6, m),
                algbw_gbps: per_seed(&busbw::algbw_gbps, m),
                busbw_gbps: per_seed(&busbw, m),
            })
            .collect();
        let seeds = measured.first().map_or(1, |m| m.secs.len());
        let avg: Vec<f64> = (0..seeds)
            .map(|k| match measured.len() {
                0 => 0.0,
                n => {
                    measured
                        .iter()
                        .map(|m| busbw(m.size.bytes, m.secs[k]))
                        .sum::<f64>()
                        / n as f64
                }
            })
            .collect();
        Table {
            op: op.name(),
            ranks,
            seeds: seeds as u32,
            rows,
            avg_busbw_gbps: estimate(&avg),
        }
    }

    /// The text nccl-tests prints (out-of-place columns; `#wrong` is N/A: no data is checked);
    /// over several seeds each figure with the half width of its 95% interval.
    pub fn to_text(&self) -> String {
        if self.seeds > 1 {
            return self.seeds_text();
        }
        let mut s = String::new();
        s.push_str("#\n");
        s.push_str(&format!(
            "# {:>10}  {:>12}  {:>8}  {:>6}  {:>6}           out-of-place\n",
            "", "", "", "", ""
        ));
        s.push_str(&format!(
            "# {:>10}  {:>12}  {:>8}  {:>6}  {:>6} {:>7}  {:>6}  {:>6}  {:>6}\n",
            "size", "count", "type", "redop", "root", "time", "algbw", "busbw", "#wrong"
        ));
        s.push_str(&format!(
            "# {:>10}  {:>12}  {:>8}  {:>6}  {:>6} {:>7}  {:>6}  {:>6}  {:>5}\n",
            "(B)", "(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)", ""
        ));
        for r in &self.rows {
            s.push_str(&format!(
                "{:>12}  {:>12}  {:>8}  {:>6}  {:>6}  {:>7}  {:>6.2}  {:>6.2}  {:>5}\n",
                r.size_bytes,
                r.count_elements,
                r.dtype,
                r.redop,
                r.root,
                time_str(r.time_us.mean),
                r.algbw_gbps.mean,
                r.busbw_gbps.mean,
                "N/A"
            ));
        }
        s.push_str("# Out of bounds values : 0 OK\n");
        s.push_str(&format!(
            "# Avg bus bandwidth    : {} \n",
            format_g(self.avg_busbw_gbps.mean)
        ));
        s.push_str("#\n");
        s
    }

    /// The table over several seeds: nccl-tests' columns, each figure `mean ± half` (a
    /// clipped interval `mean (lo to hi, clipped at 0)`), `#wrong` left out.
    fn seeds_text(&self) -> String {
        let mut s = format!(
            "#\n# {} seeds per size: mean ± half width of the 95% interval (Student t)\n",
            self.seeds
        );
        s.push_str(&format!(
            "# {:>10}  {:>12}  {:>8}  {:>6}  {:>6}  {:>17}  {:>15}  {:>15}\n",
            "size", "count", "type", "redop", "root", "time", "algbw", "busbw"
        ));
        s.push_str(&format!(
            "# {:>10}  {:>12}  {:>8}  {:>6}  {:>6}  {:>17}  {:>15}  {:>15}\n",
            "(B)", "(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)"
        ));
        for r in &self.rows {
            s.push_str(&format!(
                "{:>12}  {:>12}  {:>8}  {:>6}  {:>6}  {:>17}  {:>15}  {:>15}\n",
                r.size_bytes,
                r.count_elements,
                r.dtype,
                r.redop,
                r.root,
                r.time_us.text(2),
                r.algbw_gbps.text(2),
                r.busbw_gbps.text(2),
            ));
        }
        s.push_str("# Out of bounds values : 0 OK\n");
        s.push_str(&format!(
            "# Avg bus bandwidth    : {} \n#\n",
            self.avg_busbw_gbps.text(4)
        ));
        s
    }
}

/// nccl-tests' time column: `%7.0f` from 10 ms, `%7.1f` from 100 us, else `%7.2f`.
fn time_str(us: f64) -> String {
    if us >= 10_000.0 {
        format!("{us:.0}")
    } else if us >= 100.0 {
        format!("{us:.1}")
    } else {
        format!("{us:.2}")
    }
}

/// C's `%g`: six significant digits, trailing zeros removed, exponent form outside 1e-4..1e6.
pub fn format_g(x: f64) -> String {
    if x == 0.0 || !x.is_finite() {
        return if x == 0.0 { "0".into() } else { format!("{x}") };
    }
    let exp = x.abs().log10().floor() as i32;
    // Rounding to 6 digits can carry into the next decade (999999.5 -> 1e+06).
    let rounded: f64 = format!("{:.5e}", x).parse().unwrap_or(x);
    let exp = if rounded.abs() >= 10f64.powi(exp + 1) {
        exp + 1
    } else {
        exp
    };
    if !(-4..6).contains(&exp) {
        let m = format!("{:.5e}", x);
        let (mant, e) = m.split_once('e').unwrap_or((&m, "0"));
        let e: i32 = e.parse().unwrap_or(0);
        let mant = strip_zeros(mant);
        format!("{mant}e{}{:02}", if e < 0 { '-' } else { '+' }, e.abs())
    } else {
        let decimals = (5 - exp).max(0) as usize;
        strip_zeros(&format!("{x:.decimals$}"))
    }
}

fn strip_zeros(s: &str) -> String {
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn format_g_matches_c_printf() {
        assert_eq!(format_g(0.0), "0");
        assert_eq!(format_g(123.456789), "123.457");
        assert_eq!(format_g(47.5), "47.5");
        assert_eq!(format_g(1234567.0), "1.23457e+06");
        assert_eq!(format_g(0.00001234), "1.234e-05");
        assert_eq!(format_g(0.5), "0.5");
        assert_eq!(format_g(999999.7), "1e+06");
        assert_eq!(format_g(100.0), "100");
    }
}

impl Table {
    /// The rows in columns, named as the JSON's (`size_bytes`, `time_us`, `busbw_GBps`, ...),
    /// each estimate as its mean and the ends of its 95% interval (`_lo`, `_hi`).
    pub fn columns(&self) -> columns::Table {
        let r = &self.rows;
        let mut t = columns::Table::default();
        t.push(
            "size_bytes",
            Cells::U64(r.iter().map(|r| Some(r.size_bytes)).collect()),
        );
        t.push(
            "count_elements",
            Cells::U64(r.iter().map(|r| Some(r.count_elements)).collect()),
        );
        let text = |f: fn(&Row) -> String| Cells::Text(r.iter().map(|r| Some(f(r))).collect());
        t.push("type", text(|r| r.dtype.to_string()));
        t.push("redop", text(|r| r.redop.to_string()));
        t.push("root", Cells::I64(r.iter().map(|r| Some(r.root)).collect()));
        t.push_estimate("time_us", r.iter().map(|r| Some(r.time_us)));
        t.push_estimate("algbw_GBps", r.iter().map(|r| Some(r.algbw_gbps)));
        t.push_estimate("busbw_GBps", r.iter().map(|r| Some(r.busbw_gbps)));
        t
    }
}
