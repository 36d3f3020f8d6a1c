//! Memory per GPU: weights, gradients and optimizer states, activations for the schedule's
//! in-flight micro-batches, communication buffers and a fragmentation allowance.
//!
//! States: mixed-precision Adam keeps 2 bytes of bf16 weights, 2 of bf16 gradients and 12 of
//! fp32 master weights, momentum and variance per parameter; ZeRO stage 1 (Megatron's
//! distributed optimizer) shards the 12 over the data-parallel group, stage 2 also the
//! gradients, stage 3 (FSDP) also the weights (Rajbhandari et al. 2020, arXiv 1910.02054, §3 and
//! Fig. 1). Expert parameters shard over the expert-data-parallel group (dp / ep).
//!
//! Activations: Korthikanti et al. 2022 (arXiv 2205.05198), §4.1, per layer and token: the
//! attention block stores its input to QKV (2h), Q and K (4h), V (2h), the scores (5as bytes:
//! softmax output, dropout mask and output), the projection's input (2h) and its dropout mask
//! (h); the two layer norms their inputs (4h); a GELU MLP 19h (= 3h + 4F at F = 4h): 34h + 5as
//! in all (a model without dropout drops the masks and the dropout's output). Generalised as the formula's terms are: K and V scale with the K/V heads (GQA), a
//! SwiGLU MLP stores its input (2h) and gate, up and product (6F), routed experts count top_k
//! times. Tensor parallelism splits all but the norms, the QKV and MLP inputs and the dropout
//! masks (10h of the 34h, §4.2.1); sequence parallelism splits those too (§4.2.2). Selective
//! recomputation drops the scores (§5), full keeps each layer's input (2h) and one layer's
//! working set (§4.2). The last stage also keeps the output layer's input (2h) and fp32 logits
//! for the loss (4V) for the one micro-batch it holds (§4.3). The schedule sets how many
//! micro-batches' activations a rank holds (`schedule::peak_layers_in_flight`).

use serde::Serialize;

use super::config::{Recompute, TrainConfig};
use super::model::ModelSpec;
use super::schedule;

/// NCCL's buffer per channel and peer (NCCL_BUFFSIZE default, 4 MiB: NCCL environment-variable
/// documentation), for 2 peers (a ring) on 16 channels per communicator: an estimate.
const NCCL_BYTES_PER_COMMUNICATOR: f64 = 4.0 * 1048576.0 * 2.0 * 16.0;

/// Memory the PyTorch caching allocator holds but cannot use (fragmentation), as a fraction of
/// what the step allocates: an estimate (no measured figure in the repository).
pub const FRAGMENTATION: f64 = 0.05;

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

/// Activation bytes per token of one layer, before any parallelism, in Korthikanti's three
/// parts: (kept whole by tensor parallelism without sequence parallelism, split by it, the
/// attention scores).
pub fn activation_terms(m: &ModelSpec) -> (f64, f64, f64) {
    let (h, dh) = (m.hidden as f64, m.head_dim() as f64);
    let (q, kv) = (m.heads as f64 * dh, m.kv_heads as f64 * dh);
    let mask = if m.dropout { h } else { 0.0 };
    // Norm inputs 4h, QKV input 2h, the projection's dropout mask h.
    let mut whole = 6.0 * h + mask;
    // Q 2q, K and V 2kv each, the projection's input 2q.
    let mut split = 4.0 * q + 4.0 * kv;
    let mlp = |f: f64| {
        if m.swiglu {
            (2.0 * h, 6.0 * f)
        } else {
            // Input 2h and dropout mask h; the first GEMM's output and GELU's output 4F.
            (2.0 * h + mask, 4.0 * f)
        }
    };
    let (w, sp) = mlp(m.ffn as f64);
    whole += w * m.routed() as f64;
    split += sp * m.routed() as f64;
    if m.shared_ffn > 0 {
        let (w, sp) = mlp(m.shared_ffn as f64);
        whole += w;
        split += sp;
    }
    // Softmax output (2 bytes), dropout mask (1) and output (2) per score; 2 without dropout.
    let scores = if m.dropout { 5.0 } else { 2.0 } * m.heads as f64 * m.seq as f64;
    (whole, split, scores)
}

/// Activation bytes of one layer for one micro-batch on one GPU, stored under `recompute`.
pub fn layer_activation_bytes(cfg: &TrainConfig, recompute: Recompute) -> f64 {
    let (m, p) = (&cfg.model, &cfg.par);
    let tokens = (p.micro_batch * m.seq) as f64 / p.cp as f64;
    let t = p.tp as f64;
    let sp = if p.sequence_parallel { t } else { 1.0 };
    let (whole, split, scores) = activation_terms(m);
    tokens
        * match recompute {
            Recompute::None => whole / sp + (split + scores) / t,
            Recompute::Selective => whole / sp + split / t,
            Recompute::Full => 2.0 * m.hidden as f64 / sp,
        }
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Memory {
    /// The pipeline stage this is (the one needing the most).
    pub stage: usize,
    #[serde(rename = "weights_GB")]
    pub weights_gb: f64,
    #[serde(rename = "grads_GB")]
    pub grads_gb: f64,
    #[serde(rename = "optimizer_GB")]
    pub optimizer_gb: f64,
    #[serde(rename = "activations_GB")]
    pub activations_gb: f64,
    /// Layer-activations (layers x micro-batches) the schedule holds at its peak.
    pub layers_in_flight: u64,
    #[serde(rename = "comm_buffers_GB")]
    pub comm_buffers_gb: f64,
    #[serde(rename = "fragmentation_GB")]
    pub fragmentation_gb: f64,
    #[serde(rename = "total_GB")]
    pub total_gb: f64,
    #[serde(rename = "hbm_GB")]
    pub hbm_gb: f64,
}

impl Memory {
    /// "weights 6.4, gradients 6.4, ..." in GB.
    pub fn breakdown(&self) -> String {
        format!(
            "weights {:.1}, gradients {:.1}, optimizer {:.1}, activations {:.1} ({} layer-micro-batches), communication buffers {:.1}, fragmentation allowance {:.1}",
            self.weights_gb,
            self.grads_gb,
            self.optimizer_gb,
            self.activations_gb,
            self.layers_in_flight,
            self.comm_buffers_gb,
            self.fragmentation_gb
        )
    }
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

/// Memory per GPU of pipeline stage `stage`.
pub fn stage_per_gpu(cfg: &TrainConfig, stage: usize) -> Memory {
    let (m, p) = (&cfg.model, &cfg.par);
    let (d, e) = stage_params_per_gpu(cfg, stage);
    let edp = (p.dp / p.ep) as f64;
    let dp = p.dp as f64;
    let shard = |stage: u64, psi: f64, group: f64| if p.zero >= stage { psi / group } else { psi };
    let states = |bytes: f64, stage: u64| bytes * (shard(stage, d, dp) + shard(stage, e, edp));
    let mbs = p.micro_batches(m.global_batch);
    let in_flight = schedule::peak_layers_in_flight(&p.order(mbs, stage), &p.chunk_layers(stage));
    let stored = layer_activation_bytes(cfg, p.recompute);
    let mut activations = in_flight as f64 * stored;
    if p.recompute == Recompute::Full {
        // The layer being recomputed holds its full working set (flash attention).
        activations += layer_activation_bytes(cfg, Recompute::Selective);
    }
    if stage + 1 == p.stage_layers.len() {
        let tokens = (p.micro_batch * m.seq) as f64 / p.cp as f64;
        activations += tokens * (2.0 * m.hidden as f64 + 4.0 * m.vocab as f64) / p.tp as f64;
    }
    // One NCCL communicator per parallelism the GPU takes part in, and the all-gathered layer
    // input of sequence parallelism (Megatron's global buffer).
    let communicators = [p.tp, p.cp, p.dp, p.ep, p.pp]
        .iter()
        .filter(|&&g| g > 1)
        .count() as f64;
    let gathered = if p.sequence_parallel && p.tp > 1 {
        2.0 * (p.micro_batch * m.seq) as f64 / p.cp as f64 * m.hidden as f64
    } else {
        0.0
    };
    let comm = communicators * NCCL_BYTES_PER_COMMUNICATOR + gathered;
    let gb = |b: f64| b / 1e9;
    let (w, g, o) = (states(2.0, 3), states(2.0, 2), states(12.0, 1));
    let allocated = w + g + o + activations + comm;
    let frag = FRAGMENTATION * allocated;
    Memory {
        stage,
        weights_gb: gb(w),
        grads_gb: gb(g),
        optimizer_gb: gb(o),
        activations_gb: gb(activations),
        layers_in_flight: in_flight,
        comm_buffers_gb: gb(comm),
        fragmentation_gb: gb(frag),
        total_gb: gb(allocated + frag),
        hbm_gb: cfg.gpu.hbm_gb,
    }
}
