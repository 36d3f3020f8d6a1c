//! The nccl-tests result table (NVIDIA/nccl-tests src/common.cu: the header, one line per
//! size with the out-of-place columns, the closing "Out of bounds" and "Avg bus bandwidth"
//! lines) and its JSON form, from measured times per size.

use serde::Serialize;

use super::busbw;
use super::collective::Op;
use super::sweep::SweepSize;

/// One measured size.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Measured {
    pub size: SweepSize,
    /// Completion time of the collective (first post to last delivery), seconds.
    pub secs: f64,
}

#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Row {
    pub size_bytes: u64,
    pub count_elements: u64,
    #[serde(rename = "type")]
    pub dtype: &'static str,
    pub redop: &'static str,
    pub root: i64,
    pub time_us: f64,
    #[serde(rename = "algbw_GBps")]
    pub algbw_gbps: f64,
    #[serde(rename = "busbw_GBps")]
    pub busbw_gbps: f64,
}

#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Table {
    pub op: &'static str,
    pub ranks: u32,
    pub rows: Vec<Row>,
    #[serde(rename = "avg_busbw_GBps")]
    pub avg_busbw_gbps: f64,
}

impl Table {
    /// The table of `op` on `ranks` ranks (`root` for broadcast and reduce).
    pub fn new(op: Op, ranks: u32, root: u32, measured: &[Measured]) -> Table {
        let rows: Vec<Row> = measured
            .iter()
            .map(|m| Row {
                size_bytes: m.size.bytes,
                count_elements: m.size.count,
                dtype: "float",
                redop: if op.reduces() { "sum" } else { "none" },
                root: if op.rooted() { root as i64 } else { -1 },
                time_us: m.secs * 1e6,
                algbw_gbps: busbw::algbw_gbps(m.size.bytes, m.secs),
                busbw_gbps: busbw::busbw_gbps(op, ranks, m.size.bytes, m.secs),
            })
            .collect();
        let avg = if rows.is_empty() {
            0.0
        } else {
            rows.iter().map(|r| r.busbw_gbps).sum::<f64>() / rows.len() as f64
        };
        Table {
            op: op.name(),
            ranks,
            rows,
            avg_busbw_gbps: avg,
        }
    }

    /// The text nccl-tests prints (out-of-place columns; `#wrong` is N/A: no data is checked).
    pub fn to_text(&self) -> String {
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
                time_str(r.time_us),
                r.algbw_gbps,
                r.busbw_gbps,
                "N/A"
            ));
        }
        s.push_str("# Out of bounds values : 0 OK\n");
        s.push_str(&format!(
            "# Avg bus bandwidth    : {} \n",
            format_g(self.avg_busbw_gbps)
        ));
        s.push_str("#\n");
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
