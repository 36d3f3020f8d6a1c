//! The matrix multiplications of a transformer layer and the model FLOPs they add up to.
//!
//! One list of GEMMs serves both the FLOP count and the compute time, so the two cannot
//! drift apart. Summed over a whole model, forward and backward (backward = 2 x forward: data
//! and weight gradients), it is Megatron's `num_floating_point_operations` (Narayanan et al.
//! 2021, arXiv 2104.04473, Appendix): 12 * B * s * L * h^2 * [(1 + G/H + s/h) *
//! q/h + F/h * k * (3/2 if SwiGLU) + F_shared/h * (3/2) + V / (2 L h)], with attention
//! scores counted in full (not halved for the causal mask) and the vocabulary unpadded.

use super::config::Recompute;
use super::model::ModelSpec;

/// An (m x k) * (k x n) matrix product done `count` times.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Gemm {
    pub name: &'static str,
    pub m: f64,
    pub n: f64,
    pub k: f64,
    pub count: f64,
}

impl Gemm {
    pub fn flops(&self) -> f64 {
        2.0 * self.m * self.n * self.k * self.count
    }
}

/// The forward GEMMs of one layer for `tokens` tokens on one GPU of a `tp`-way tensor-parallel
/// group whose experts are spread over `ep` GPUs (Megatron: column-parallel QKV and MLP-up,
/// row-parallel output and MLP-down; K/V heads replicated when there are fewer than `tp`).
pub fn layer_gemms(m: &ModelSpec, tokens: f64, tp: u64, ep: u64) -> Vec<Gemm> {
    let (h, dh, t) = (m.hidden as f64, m.head_dim() as f64, tp as f64);
    let q = m.heads as f64 * dh / t;
    let kv = (m.kv_heads as f64 / t).max(1.0) * dh;
    let gate = if m.swiglu { 2.0 } else { 1.0 };
    let mut v = vec![
        Gemm {
            name: "qkv",
            m: tokens,
            n: q + 2.0 * kv,
            k: h,
            count: 1.0,
        },
        Gemm {
            name: "attn_out",
            m: tokens,
            n: h,
            k: q,
            count: 1.0,
        },
    ];
    let mut mlp = |name_up, name_down, rows: f64, ffn: f64, count: f64| {
        v.push(Gemm {
            name: name_up,
            m: rows,
            n: gate * ffn / t,
            k: h,
            count,
        });
        v.push(Gemm {
            name: name_down,
            m: rows,
            n: h,
            k: ffn / t,
            count,
        });
    };
    if m.is_moe() {
        // Each GPU holds experts/ep experts; the ep GPUs' tokens are routed top_k times over
        // all experts, so each local expert sees tokens * top_k * ep / experts rows.
        let e = m.experts as f64;
        let per_expert = tokens * m.top_k as f64 * ep as f64 / e;
        mlp(
            "expert_up",
            "expert_down",
            per_expert,
            m.ffn as f64,
            e / ep as f64,
        );
    } else {
        mlp("mlp_up", "mlp_down", tokens, m.ffn as f64, 1.0);
    }
    if m.shared_ffn > 0 {
        mlp("shared_up", "shared_down", tokens, m.shared_ffn as f64, 1.0);
    }
    v
}

/// The output projection to the vocabulary (last pipeline stage), vocab split over TP.
pub fn logits_gemm(m: &ModelSpec, tokens: f64, tp: u64) -> Gemm {
    Gemm {
        name: "logits",
        m: tokens,
        n: m.vocab as f64 / tp as f64,
        k: m.hidden as f64,
        count: 1.0,
    }
}

/// Forward attention-score FLOPs of one layer (Q K^T and scores x V), counted in full as
/// Megatron does: 4 * tokens * seq * heads * head_dim / tp.
pub fn attention_flops(m: &ModelSpec, tokens: f64, tp: u64) -> f64 {
    4.0 * tokens * m.seq as f64 * m.heads as f64 * m.head_dim() as f64 / tp as f64
}

/// Model FLOPs per trained token (forward and backward).
pub fn flops_per_token(m: &ModelSpec) -> f64 {
    let s = m.seq as f64;
    let layer: f64 =
        layer_gemms(m, s, 1, 1).iter().map(Gemm::flops).sum::<f64>() + attention_flops(m, s, 1);
    3.0 * (m.layers as f64 * layer + logits_gemm(m, s, 1).flops()) / s
}

/// FLOPs per trained token that recomputation adds to the model's (hardware FLOPs only; MFU
/// stays on model FLOPs, Korthikanti et al. 2022, arXiv 2205.05198, §6): selective redoes each
/// layer's attention core forward (4 s^2 h per sequence and layer at h = heads x head_dim,
/// §5), full the whole layer forward (the output projection is not recomputed).
pub fn recompute_flops_per_token(m: &ModelSpec, recompute: Recompute) -> f64 {
    let s = m.seq as f64;
    let layer = match recompute {
        Recompute::None => 0.0,
        Recompute::Selective => attention_flops(m, s, 1),
        Recompute::Full => {
            layer_gemms(m, s, 1, 1).iter().map(Gemm::flops).sum::<f64>() + attention_flops(m, s, 1)
        }
    };
    m.layers as f64 * layer / s
}
