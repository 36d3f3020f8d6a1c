//! Compute time of one micro-batch on one pipeline stage (its layers; the last stage also the
//! output projection): GEMMs and causal flash attention from their measured efficiency, the
//! memory-bound kernels from the bytes they move at the GPU's HBM bandwidth, and a launch gap
//! per kernel.
//!
//! Backward GEMMs (data and weight gradients) do 2x the forward FLOPs and are timed at the
//! forward shapes' efficiency. Causal flash attention does half the full score FLOPs in the
//! forward and 3.5x that with the backward (the table's convention, checked against its rows).
//! Under FP8 the GEMMs run at the FP8 peak times their bf16 efficiency times the table's
//! measured FP8/bf16 ratio (`Efficiency::fp8_vs_bf16`); attention stays bf16.
//!
//! Memory-bound kernels per layer and token (bf16 elements read + written): two norms (2h
//! each), two residual adds (3h each), the MLP activation (SwiGLU 3F, GELU 2F per expert a token
//! visits), two dropouts when the model has them (2h and a 1-byte mask each); with sequence
//! parallelism the norms, adds and dropouts run on 1/tp of the tokens (Korthikanti et al. 2022
//! §4.2.2); the backward moves twice the forward's bytes (the gradient in, the saved input in,
//! the gradient out). Rotary embeddings, the MoE router and permutations, and the embedding
//! lookup are not timed.

use serde::Serialize;

use super::config::{Parallelism, Precision, Recompute, TrainConfig};
use super::efficiency::Efficiency;
use super::flops::{Gemm, attention_flops, layer_gemms, logits_gemm};
use super::model::ModelSpec;
use fabricsim_input::catalog::Gpu;

/// Fraction of the HBM bandwidth a memory-bound kernel achieves: an estimate (no measured
/// kernel in the repository's table).
pub const HBM_ACHIEVED: f64 = 0.8;

/// GPU time lost per kernel between dependent kernels (launch and drain): an estimate.
pub const LAUNCH_GAP_S: f64 = 2e-6;

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
    /// Of the total: GEMMs, attention, memory-bound kernels, launch gaps.
    pub gemm_s: f64,
    pub attention_s: f64,
    pub memory_bound_s: f64,
    pub launch_s: f64,
    /// The layers' forward GEMMs alone (the output projection's apart): what the layers'
    /// tensor-parallel collectives overlap with (`step::tp_exposed`); the backward's are 2x,
    /// the recomputed forward's 1x.
    #[serde(skip)]
    pub layer_gemm_forward_s: f64,
}

impl MicroBatch {
    pub fn total_s(&self) -> f64 {
        self.forward_s + self.backward_s + self.recompute_s
    }
}

/// Seconds to move `bytes` through `gpu`'s HBM at the achieved fraction of its bandwidth.
pub fn hbm_s(gpu: &Gpu, bytes: f64) -> f64 {
    bytes / (gpu.hbm_tbps * 1e12 * HBM_ACHIEVED)
}

/// One micro-batch's compute on pipeline stage `stage` (all its chunks).
pub fn stage(cfg: &TrainConfig, eff: &Efficiency, stage: usize) -> MicroBatch {
    let last = stage + 1 == cfg.par.stage_layers.len();
    part(
        &cfg.model,
        &cfg.gpu,
        &cfg.par,
        eff,
        cfg.par.stage_layers[stage],
        last,
    )
}

/// One micro-batch's compute through model chunk `chunk` of pipeline stage `stage`.
pub fn chunk(cfg: &TrainConfig, eff: &Efficiency, stage: usize, chunk: usize) -> MicroBatch {
    let p = &cfg.par;
    let last = stage + 1 == p.stage_layers.len() && chunk + 1 == p.vp as usize;
    part(
        &cfg.model,
        &cfg.gpu,
        p,
        eff,
        p.chunk_layers(stage)[chunk],
        last,
    )
}

/// Forward seconds of one layer's memory-bound kernels for `tokens` tokens, and their count.
pub fn memory_bound_layer(m: &ModelSpec, gpu: &Gpu, p: &Parallelism, tokens: f64) -> (f64, f64) {
    let h = m.hidden as f64;
    let t = p.tp as f64;
    let row_tokens = if p.sequence_parallel {
        tokens / t
    } else {
        tokens
    };
    let dropouts = if m.dropout { 2.0 } else { 0.0 };
    // Norms 2 x 2h, adds 2 x 3h, dropouts 2 x (2h + h/2 for the 1-byte mask).
    let rows = 4.0 * h + 6.0 * h + dropouts * 2.5 * h;
    let act = |f: f64| if m.swiglu { 3.0 } else { 2.0 } * f / t;
    let mut mlp = act(m.ffn as f64) * m.routed() as f64;
    if m.shared_ffn > 0 {
        mlp += act(m.shared_ffn as f64);
    }
    let bytes = 2.0 * (row_tokens * rows + tokens * mlp);
    let kernels = 2.0 + 2.0 + dropouts + 1.0;
    (hbm_s(gpu, bytes), kernels)
}

/// `layers` layers of `m` on one GPU of `p`'s layout (a micro-batch of `p.micro_batch`
/// sequences of `m.seq` tokens), and the output projection when `logits`.
pub fn part(
    m: &ModelSpec,
    gpu: &Gpu,
    p: &Parallelism,
    eff: &Efficiency,
    layers: u64,
    logits: bool,
) -> MicroBatch {
    let peak = gpu.peak_flops();
    let layers = layers as f64;
    let tokens = (p.micro_batch * m.seq) as f64 / p.cp as f64;
    let gemm_peak = match p.precision {
        Precision::Bf16 => peak,
        Precision::Fp8 => gpu.fp8_tflops.unwrap_or(gpu.bf16_tflops) * 1e12 * eff.fp8_vs_bf16(),
    };
    let time = |g: &Gemm| g.flops() / (eff.gemm(g.m, g.n, g.k) * gemm_peak);
    let layer_gemms = layer_gemms(m, tokens, p.tp, p.ep);
    let gemms: f64 = layer_gemms.iter().map(time).sum();
    let causal_fwd = attention_flops(m, tokens, p.tp) / 2.0;
    let attn_fwd = causal_fwd / (eff.attention(m.seq as f64, false) * peak);
    let attn_bwd = 3.5 * causal_fwd / (eff.attention(m.seq as f64, true) * peak) - attn_fwd;
    let (mem_fwd, mem_kernels) = memory_bound_layer(m, gpu, p, tokens);
    // Forward kernels of a layer: its GEMMs, attention, the memory-bound ones; the backward
    // twice as many (data and weight gradients).
    let kernels_fwd = layer_gemms.len() as f64 + 1.0 + mem_kernels;
    let launch_fwd = kernels_fwd * LAUNCH_GAP_S;
    let logits = if logits {
        time(&logits_gemm(m, tokens, p.tp))
    } else {
        0.0
    };
    let fwd_layer = gemms + attn_fwd + mem_fwd + launch_fwd;
    let recompute = match p.recompute {
        Recompute::None | Recompute::Selective => 0.0,
        Recompute::Full => 1.0,
    };
    MicroBatch {
        forward_s: layers * fwd_layer + logits,
        backward_s: layers * (2.0 * (gemms + mem_fwd + launch_fwd) + attn_bwd) + 2.0 * logits,
        recompute_s: recompute * layers * fwd_layer,
        attention_forward_s: layers * attn_fwd,
        attention_backward_s: layers * attn_bwd,
        gemm_s: layers * gemms * (3.0 + recompute) + 3.0 * logits,
        attention_s: layers * (attn_fwd * (1.0 + recompute) + attn_bwd),
        memory_bound_s: layers * mem_fwd * (3.0 + recompute),
        launch_s: layers * launch_fwd * (3.0 + recompute),
        layer_gemm_forward_s: layers * gemms,
    }
}
