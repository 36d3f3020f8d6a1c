//! Compute time of one micro-batch on one pipeline stage (its layers; the last stage also the
//! output projection), from the measured efficiency of each GEMM shape and of causal flash
//! attention.
//!
//! Backward GEMMs (data and weight gradients) do 2x the forward FLOPs and are timed at the
//! forward shapes' efficiency. Causal flash attention does half the full score FLOPs in the
//! forward and 3.5x that with the backward (the table's convention, checked against its rows).
//! The last stage also runs the output projection; embedding lookups, norms, the router and
//! the optimizer step are not timed.

use serde::Serialize;

use super::config::{Recompute, TrainConfig};
use super::efficiency::Efficiency;
use super::flops::{Gemm, attention_flops, layer_gemms, logits_gemm};

/// Seconds of compute per micro-batch.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct MicroBatch {
    pub forward_s: f64,
    pub backward_s: f64,
    /// The forward run again in the backward under full recomputation (selective
    /// recomputation, the attention core's, is inside flash attention's measured backward).
    pub recompute_s: f64,
    /// Attention kernels alone (what context-parallel exchanges overlap with).
    pub attention_forward_s: f64,
    pub attention_backward_s: f64,
}

impl MicroBatch {
    pub fn total_s(&self) -> f64 {
        self.forward_s + self.backward_s + self.recompute_s
    }
}

/// One micro-batch's compute on pipeline stage `stage` (all its chunks).
pub fn stage(cfg: &TrainConfig, eff: &Efficiency, stage: usize) -> MicroBatch {
    let last = stage + 1 == cfg.par.stage_layers.len();
    part(cfg, eff, cfg.par.stage_layers[stage], last)
}

/// One micro-batch's compute through model chunk `chunk` of pipeline stage `stage`.
pub fn chunk(cfg: &TrainConfig, eff: &Efficiency, stage: usize, chunk: usize) -> MicroBatch {
    let p = &cfg.par;
    let last = stage + 1 == p.stage_layers.len() && chunk + 1 == p.vp as usize;
    part(cfg, eff, p.chunk_layers(stage)[chunk], last)
}

/// `layers` layers, and the output projection when `logits`.
fn part(cfg: &TrainConfig, eff: &Efficiency, layers: u64, logits: bool) -> MicroBatch {
    let (m, p) = (&cfg.model, &cfg.par);
    let peak = cfg.gpu.peak_flops();
    let layers = layers as f64;
    let tokens = (p.micro_batch * m.seq) as f64 / p.cp as f64;
    let time = |g: &Gemm| g.flops() / (eff.gemm(g.m, g.n, g.k) * peak);
    let gemms: f64 = layer_gemms(m, tokens, p.tp, p.ep).iter().map(time).sum();
    let causal_fwd = attention_flops(m, tokens, p.tp) / 2.0;
    let attn_fwd = causal_fwd / (eff.attention(m.seq as f64, false) * peak);
    let attn_bwd = 3.5 * causal_fwd / (eff.attention(m.seq as f64, true) * peak) - attn_fwd;
    let logits = if logits {
        time(&logits_gemm(m, tokens, p.tp))
    } else {
        0.0
    };
    MicroBatch {
        forward_s: layers * (gemms + attn_fwd) + logits,
        backward_s: layers * (2.0 * gemms + attn_bwd) + 2.0 * logits,
        recompute_s: match p.recompute {
            Recompute::None | Recompute::Selective => 0.0,
            Recompute::Full => layers * (gemms + attn_fwd),
        },
        attention_forward_s: layers * attn_fwd,
        attention_backward_s: layers * attn_bwd,
    }
}
