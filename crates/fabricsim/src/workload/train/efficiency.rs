//! Achieved compute efficiency from the measured H200 table (data/compute/h200.csv).
//!
//! GEMMs: inverse-distance weighting over the four nearest measured shapes in
//! (log2 m, log2 n, log2 k) space (an exact shape returns its measurement). Attention: linear
//! in log2(sequence length) between the causal flash-attention rows, clamped at the ends.
//! Efficiency is achieved / the catalog's dense bf16 peak of the GPU the table was taken on
//! (H200, data/catalog/gpus.toml); other GPUs get the same fraction of their own peak, marked as
//! an estimate. FP8 GEMMs: the table's FP8 rows (square shapes) against the bf16 rows of the same
//! shapes give FP8's efficiency relative to bf16's, each against its own peak; an FP8 GEMM of any
//! shape is timed at its bf16 efficiency times that ratio, of the FP8 peak.

use crate::error::Error;
use fabricsim_input::catalog::Catalog;

const TABLE: &str = include_str!("../../../../../data/compute/h200.csv");

/// The GPU the table was measured on.
pub const MEASURED_ON: &str = "h200";

#[derive(Clone, Debug)]
pub struct Efficiency {
    /// (log2 m, log2 n, log2 k, efficiency)
    gemm: Vec<([f64; 3], f64)>,
    /// (log2 seq, efficiency) of causal attention forward, and forward + backward.
    attn_fwd: Vec<(f64, f64)>,
    attn_fwd_bwd: Vec<(f64, f64)>,
    /// Mean over the shapes measured in both of FP8 efficiency / bf16 efficiency.
    fp8_vs_bf16: f64,
}

impl Efficiency {
    /// The shipped H200 table, relative to the H200 peak in `catalog`.
    pub fn h200(catalog: &Catalog) -> Efficiency {
        let gpu = catalog
            .gpu(MEASURED_ON)
            .expect("the built-in catalog has the h200 and user files only add or replace ids");
        // A user catalog may replace the h200 without an FP8 peak: the H100 family's dense FP8
        // peak is twice its bf16 (NVIDIA H100 whitepaper: 1,979 against 989 TFLOP/s).
        let fp8 = gpu.fp8_tflops.unwrap_or(2.0 * gpu.bf16_tflops);
        Efficiency::parse(TABLE, gpu.bf16_tflops, fp8)
            .expect("shipped compute table parses (tested)")
    }

    /// Parses `kind,m,n,k,extra,ms,tflops` rows ('#' lines are comments); efficiencies are
    /// relative to `peak_tflops` (bf16) and `fp8_peak_tflops`, the peaks of the GPU the table
    /// was measured on.
    pub fn parse(text: &str, peak_tflops: f64, fp8_peak_tflops: f64) -> Result<Efficiency, Error> {
        let mut e = Efficiency {
            gemm: Vec::new(),
            attn_fwd: Vec::new(),
            attn_fwd_bwd: Vec::new(),
            fp8_vs_bf16: 0.0,
        };
        let mut fp8: Vec<([f64; 3], f64)> = Vec::new();
        for (i, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') || line.starts_with("kind,") {
                continue;
            }
            let f: Vec<&str> = line.split(',').collect();
            if f.len() != 7 {
                return Err(Error::Workload(format!(
                    "line {}: expected 7 fields",
                    i + 1
                )));
            }
            let num = |s: &str| {
                s.parse::<f64>()
                    .map_err(|_| Error::Workload(format!("line {}: bad number {s}", i + 1)))
            };
            let (m, n, k, tflops) = (num(f[1])?, num(f[2])?, num(f[3])?, num(f[6])?);
            let eff = tflops / peak_tflops;
            match f[0] {
                "gemm" => e.gemm.push(([m.log2(), n.log2(), k.log2()], eff)),
                "attn_fwd" | "attn_fwd_bwd" => {
                    let seq = f[4]
                        .split_whitespace()
                        .find_map(|w| w.strip_prefix("seq="))
                        .ok_or_else(|| {
                            Error::Workload(format!("line {}: attention row without seq=", i + 1))
                        })?;
                    let pt = (num(seq)?.log2(), eff);
                    if f[0] == "attn_fwd" {
                        e.attn_fwd.push(pt)
                    } else {
                        e.attn_fwd_bwd.push(pt)
                    }
                }
                "gemm_fp8" => fp8.push(([m.log2(), n.log2(), k.log2()], tflops / fp8_peak_tflops)),
                _ => {} // the device line
            }
        }
        let ratios: Vec<f64> = fp8
            .iter()
            .filter_map(|(p, eff)| e.gemm.iter().find(|(q, _)| q == p).map(|(_, b)| eff / b))
            .collect();
        if ratios.is_empty() {
            return Err(Error::Workload(
                "the table needs FP8 GEMM rows of shapes it also measures in bf16".into(),
            ));
        }
        e.fp8_vs_bf16 = ratios.iter().sum::<f64>() / ratios.len() as f64;
        e.attn_fwd.sort_by(|a, b| a.0.total_cmp(&b.0));
        e.attn_fwd_bwd.sort_by(|a, b| a.0.total_cmp(&b.0));
        if e.gemm.len() < 4 || e.attn_fwd.is_empty() || e.attn_fwd_bwd.is_empty() {
            return Err(Error::Workload(
                "the table needs GEMM and attention rows".into(),
            ));
        }
        Ok(e)
    }

    /// Efficiency of an (m x k) * (k x n) bf16 GEMM.
    pub fn gemm(&self, m: f64, n: f64, k: f64) -> f64 {
        let q = [m.max(1.0).log2(), n.max(1.0).log2(), k.max(1.0).log2()];
        let mut d: Vec<(f64, usize)> = self
            .gemm
            .iter()
            .enumerate()
            .map(|(i, (p, _))| {
                let s: f64 = (0..3).map(|j| (p[j] - q[j]).powi(2)).sum();
                (s.sqrt(), i)
            })
            .collect();
        d.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
        if d[0].0 < 1e-9 {
            return self.gemm[d[0].1].1;
        }
        let (mut num, mut den) = (0.0, 0.0);
        for &(dist, i) in &d[..4] {
            let w = 1.0 / (dist * dist);
            num += w * self.gemm[i].1;
            den += w;
        }
        num / den
    }

    /// FP8 efficiency (of the FP8 peak) relative to bf16's (of the bf16 peak), measured.
    pub fn fp8_vs_bf16(&self) -> f64 {
        self.fp8_vs_bf16
    }

    /// Efficiency of causal flash attention at sequence length `seq`, forward only or forward
    /// and backward, in the table's FLOP convention (causal forward = 2*b*s^2*heads*dim;
    /// forward + backward = 3.5 x that).
    pub fn attention(&self, seq: f64, backward: bool) -> f64 {
        let pts = if backward {
            &self.attn_fwd_bwd
        } else {
            &self.attn_fwd
        };
        let x = seq.max(1.0).log2();
        if x <= pts[0].0 {
            return pts[0].1;
        }
        for w in pts.windows(2) {
            if x <= w[1].0 {
                let t = (x - w[0].0) / (w[1].0 - w[0].0);
                return w[0].1 + t * (w[1].1 - w[0].1);
            }
        }
        pts[pts.len() - 1].1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_shapes_return_their_measurement_and_others_stay_in_range() {
        // Relative to the catalog's H200 peak, 989 TFLOP/s (data/catalog/gpus.toml).
        let e = Efficiency::h200(&Catalog::builtin().unwrap());
        // gemm,4096,28672/8... the table row "gemm,16384,8192,8192,attn_out h=8192 tp=1": 686.4.
        assert!((e.gemm(16384.0, 8192.0, 8192.0) - 686.4 / 989.0).abs() < 1e-12);
        assert!((e.attention(4096.0, true) - 478.3 / 989.0).abs() < 1e-12);
        // Between seq 4096 and 8192 rows, on the line in log2(seq).
        let mid = e.attention(4096.0 * 2f64.sqrt(), true);
        assert!((mid - (478.3 + 540.9) / 2.0 / 989.0).abs() < 1e-9);
        assert_eq!(e.attention(100_000.0, false), 652.8 / 989.0);
        // FP8 over bf16 at the three square shapes measured in both, each of its own peak
        // (1979 and 989 TFLOP/s): 4096, 8192, 16384.
        let want = [(1327.4, 632.9), (1466.0, 797.5), (1308.0, 695.1)]
            .iter()
            .map(|(f, b)| (f / 1979.0) / (b / 989.0))
            .sum::<f64>()
            / 3.0;
        assert!((e.fp8_vs_bf16() - want).abs() < 1e-12);
        for (m, n, k) in [
            (8192.0, 3584.0, 8192.0),
            (1000.0, 500.0, 7000.0),
            (3e5, 1e5, 1e4),
        ] {
            let x = e.gemm(m, n, k);
            assert!(x > 0.09 && x < 0.81, "{m} {n} {k}: {x}");
        }
    }
}
