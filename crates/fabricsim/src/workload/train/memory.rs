//! Memory per GPU: weights, gradients and optimizer states by ZeRO stage, and activations.
//!
//! States: mixed-precision Adam keeps 2 bytes of bf16 weights, 2 of bf16 gradients and 12 of
//! fp32 master weights, momentum and variance per parameter; ZeRO stage 1 shards the 12 over
//! the data-parallel group, stage 2 also the gradients, stage 3 (FSDP) also the weights
//! (Rajbhandari et al. 2020, arXiv 1910.02054, §3 and Fig. 1). Expert parameters shard over
//! the expert-data-parallel group (dp / ep).
//!
//! Activations (Korthikanti et al. 2022, arXiv 2205.05198, §4.1, with sequence parallelism and
//! flash attention, so no s^2 score term): per token of a layer, 11h + 4h bytes for attention
//! and the two layer norms, plus the MLP's stored inputs: 3h + 4F for a GELU MLP (19h when
//! F = 4h, the paper's 34 s b h in total) or 2h + 6F for SwiGLU, times top_k for routed experts;
//! all divided by tp * cp. 1F1B keeps min(pp - s, micro-batches) micro-batches in flight on
//! stage s; the memory reported is that of the stage needing the most. Full recomputation keeps only each layer's 2h-byte input plus one layer's
//! working set. Framework buffers, fragmentation and the logits are not counted.

use serde::Serialize;

use super::config::{Recompute, TrainConfig};
use super::model::ModelSpec;

/// Parameters held by one GPU of pipeline stage `stage`: (dense, expert).
pub fn stage_params_per_gpu(cfg: &TrainConfig, stage: usize) -> (f64, f64) {
    let (m, p) = (&cfg.model, &cfg.par);
    let (dense, expert) = m.layer_params();
    let layers = p.stage_layers[stage] as f64;
    // The first stage holds the embedding, the last the output projection; one stage both.
    let last = p.stage_layers.len() - 1;
    let embed_tables = f64::from(u8::from(stage == 0) + u8::from(stage == last));
    let d = layers * dense as f64 / p.tp as f64
        + embed_tables * m.embedding_params() as f64 / p.tp as f64;
    let e = layers * expert as f64 / (p.tp * p.ep) as f64;
    (d, e)
}

/// Parameters held by one GPU of the heaviest pipeline stage: (dense, expert).
pub fn params_per_gpu(cfg: &TrainConfig) -> (f64, f64) {
    (0..cfg.par.stage_layers.len())
        .map(|s| stage_params_per_gpu(cfg, s))
        .fold((0.0, 0.0), |a, b| if b.0 + b.1 > a.0 + a.1 { b } else { a })
}

/// Activation bytes stored per token of one layer, before dividing by tp * cp.
pub fn activation_bytes_per_token(m: &ModelSpec) -> f64 {
    let (h, f) = (m.hidden as f64, m.ffn as f64);
    let mlp = |f: f64| {
        if m.swiglu {
            2.0 * h + 6.0 * f
        } else {
            3.0 * h + 4.0 * f
        }
    };
    let mut b = 15.0 * h + mlp(f) * m.routed() as f64;
    if m.shared_ffn > 0 {
        b += mlp(m.shared_ffn as f64);
    }
    b
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Memory {
    #[serde(rename = "weights_GB")]
    pub weights_gb: f64,
    #[serde(rename = "grads_GB")]
    pub grads_gb: f64,
    #[serde(rename = "optimizer_GB")]
    pub optimizer_gb: f64,
    #[serde(rename = "activations_GB")]
    pub activations_gb: f64,
    #[serde(rename = "total_GB")]
    pub total_gb: f64,
    #[serde(rename = "hbm_GB")]
    pub hbm_gb: f64,
}

/// Memory per GPU of the pipeline stage that needs the most.
pub fn per_gpu(cfg: &TrainConfig) -> Memory {
    (0..cfg.par.stage_layers.len())
        .map(|s| stage_per_gpu(cfg, s))
        .fold(None, |a: Option<Memory>, b| match a {
            Some(a) if a.total_gb >= b.total_gb => Some(a),
            _ => Some(b),
        })
        .expect("a pipeline has at least one stage")
}

/// Memory per GPU of pipeline stage `stage`: 1F1B keeps min(pp - stage, micro-batches)
/// micro-batches' activations in flight there (Narayanan et al. 2021, arXiv 2104.04473, §2.2).
pub fn stage_per_gpu(cfg: &TrainConfig, stage: usize) -> Memory {
    let (m, p) = (&cfg.model, &cfg.par);
    let (d, e) = stage_params_per_gpu(cfg, stage);
    let edp = (p.dp / p.ep) as f64;
    let dp = p.dp as f64;
    let shard = |stage: u64, psi: f64, group: f64| if p.zero >= stage { psi / group } else { psi };
    let states = |bytes: f64, stage: u64| bytes * (shard(stage, d, dp) + shard(stage, e, edp));
    let tokens = (p.micro_batch * m.seq) as f64 / (p.tp * p.cp) as f64;
    let per_layer = activation_bytes_per_token(m) * tokens;
    let stage_layers = p.stage_layers[stage] as f64;
    let in_flight = (p.pp - stage as u64).min(p.micro_batches(m.global_batch)) as f64;
    let activations = match p.recompute {
        Recompute::None => stage_layers * in_flight * per_layer,
        Recompute::Full => stage_layers * in_flight * 2.0 * m.hidden as f64 * tokens + per_layer,
    };
    let gb = |b: f64| b / 1e9;
    let mem = Memory {
        weights_gb: gb(states(2.0, 3)),
        grads_gb: gb(states(2.0, 2)),
        optimizer_gb: gb(states(12.0, 1)),
        activations_gb: gb(activations),
        total_gb: 0.0,
        hbm_gb: cfg.gpu.hbm_gb,
    };
    Memory {
        total_gb: mem.weights_gb + mem.grads_gb + mem.optimizer_gb + mem.activations_gb,
        ..mem
    }
}
