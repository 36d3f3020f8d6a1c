//! Compute time of a serving instance's steps, from the training model's tables
//! (`train::compute`, `train::efficiency`): a prefill is one forward pass over the prompt
//! (GEMM-bound at prompt-length rows: the measured GEMM and causal flash-attention
//! efficiencies); a decode step is one forward pass of one token per running request, which
//! reads every weight once and each request's KV cache (Pope et al. 2022, arXiv 2211.05102
//! §2-3: decode is memory-bound at small batch), so each GEMM and attention takes the longer of
//! its compute time at the table's efficiency and its bytes at the HBM bandwidth memory-bound
//! kernels achieve (a roofline: Williams et al. 2009, CACM 52(4)); the norms, adds and
//! activation and the launch gaps are the training model's. Only the last token's logits are
//! computed (the output projection runs on one row per request).

use crate::workload::train::compute::{self, LAUNCH_GAP_S, memory_bound_layer};
use crate::workload::train::config::{Parallelism, Precision, Recompute};
use crate::workload::train::efficiency::Efficiency;
use crate::workload::train::flops::{Gemm, layer_gemms, logits_gemm};
use crate::workload::train::model::ModelSpec;
use fabricsim_input::catalog::Gpu;

/// One instance's model, GPU and number format.
#[derive(Clone, Debug)]
pub struct Compute {
    pub model: ModelSpec,
    pub gpu: Gpu,
    pub eff: Efficiency,
    /// Bytes per weight and KV element.
    pub bytes_per_element: u64,
    pub fp8: bool,
}

impl Compute {
    /// A `tp`-way instance running `tokens` rows (its `Parallelism` for the training tables).
    fn par(&self, tp: u64) -> Parallelism {
        Parallelism {
            tp,
            pp: 1,
            vp: 1,
            dp: 1,
            ep: 1,
            cp: 1,
            micro_batch: 1,
            zero: 0,
            dp_overlap: false,
            tp_overlap: false,
            pp_overlap: false,
            dp_bucket_bytes: 0,
            recompute: Recompute::None,
            sequence_parallel: false,
            precision: if self.fp8 {
                Precision::Fp8
            } else {
                Precision::Bf16
            },
            stage_layers: vec![self.model.layers],
        }
    }

    fn gemm_peak(&self) -> f64 {
        if self.fp8 {
            self.gpu.fp8_tflops.unwrap_or(self.gpu.bf16_tflops) * 1e12 * self.eff.fp8_vs_bf16()
        } else {
            self.gpu.peak_flops()
        }
    }

    /// Seconds of one prefill of a `prompt`-token prompt on a `tp`-way instance: the training
    /// model's forward pass of one sequence of that length (no output projection), plus the
    /// last token's logits.
    pub fn prefill_s(&self, tp: u64, prompt: u64) -> f64 {
        let mut m = self.model.clone();
        m.seq = prompt;
        let fwd = compute::part(&m, &self.gpu, &self.par(tp), &self.eff, m.layers, false);
        fwd.forward_s + self.logits_s(tp, 1)
    }

    /// The output projection for `rows` tokens: compute or reading its weights, the longer.
    fn logits_s(&self, tp: u64, rows: u64) -> f64 {
        let g = logits_gemm(&self.model, rows as f64, tp);
        let weights = g.n * g.k * self.bytes_per_element as f64;
        (g.flops() / (self.eff.gemm(g.m, g.n, g.k) * self.gemm_peak()))
            .max(compute::hbm_s(&self.gpu, weights))
            + LAUNCH_GAP_S
    }

    /// Seconds of one decode step on a `tp`-way instance running `batch` requests whose KV
    /// caches hold `context` tokens in all.
    pub fn decode_s(&self, tp: u64, batch: u64, context: u64) -> f64 {
        let m = &self.model;
        let (b, t) = (batch as f64, tp as f64);
        let bpe = self.bytes_per_element as f64;
        let peak = self.gemm_peak();
        let gemms = layer_gemms(m, b, tp, 1);
        // Routed experts a step touches: of E experts, each token choosing top_k, the expected
        // number with at least one token under uniform routing, E (1 - (1 - k/E)^b).
        let e = m.experts as f64;
        let touched = e * (1.0 - (1.0 - m.top_k as f64 / e.max(1.0)).powf(b));
        let gemm = |g: &Gemm| {
            let expert = g.name.starts_with("expert");
            // Matrices read: one per GEMM, the touched experts' for the routed ones.
            let reads = if expert { touched } else { g.count };
            let bytes = g.n * g.k * bpe * reads;
            (g.flops() / (self.eff.gemm(g.m, g.n, g.k) * peak))
                .max(compute::hbm_s(&self.gpu, bytes))
        };
        let gemm_s: f64 = gemms.iter().map(gemm).sum();
        // Attention of each new token over its context: 4 x context x heads x head_dim / tp
        // FLOPs (scores and values), reading the context's K and V of this GPU's heads.
        let dh = m.head_dim() as f64;
        let attn_flops = 4.0 * context as f64 * m.heads as f64 * dh / t;
        let kv_heads = (m.kv_heads as f64 / t).max(1.0);
        let kv_read = 2.0 * context as f64 * kv_heads * dh * bpe;
        let attn_s = (attn_flops / (self.eff.attention(1.0, false) * self.gpu.peak_flops()))
            .max(compute::hbm_s(&self.gpu, kv_read));
        let (mem_s, mem_kernels) = memory_bound_layer(m, &self.gpu, &self.par(tp), b);
        let launch = (gemms.len() as f64 + 1.0 + mem_kernels) * LAUNCH_GAP_S;
        m.layers as f64 * (gemm_s + attn_s + mem_s + launch) + self.logits_s(tp, batch)
    }
}
