//! The `[train]` section: a training job for `fabricsim train` (model, parallelism, overlap).
//! The cluster it runs on is `[cluster]`, `[fabric]` and `[topology]`, shared with `plan`.
//! Every key is optional here; `workload::train::config` fills defaults and validates.

use serde::Deserialize;

#[derive(Clone, Debug, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct TrainSection {
    /// Preset id (data/models/*.toml); the model keys below override its values.
    pub model: Option<String>,
    pub layers: Option<u64>,
    pub hidden: Option<u64>,
    pub ffn: Option<u64>,
    pub heads: Option<u64>,
    pub kv_heads: Option<u64>,
    pub head_dim: Option<u64>,
    pub vocab: Option<u64>,
    pub seq: Option<u64>,
    pub global_batch: Option<u64>,
    pub micro_batch: Option<u64>,
    pub experts: Option<u64>,
    pub top_k: Option<u64>,
    pub shared_ffn: Option<u64>,
    pub swiglu: Option<bool>,
    pub tp: Option<u64>,
    pub pp: Option<u64>,
    /// Virtual pipeline stages (model chunks) per pipeline rank: 1 = 1F1B, more = interleaved
    /// 1F1B (Narayanan et al. 2021, §2.2.2).
    pub vp: Option<u64>,
    /// Layers of each pipeline stage, first to last (default: a balanced split).
    pub stage_layers: Option<Vec<u64>>,
    pub dp: Option<u64>,
    /// GPUs of each server (NVLink domain) the job uses, the rest idle, so that its TP x CP x
    /// EP blocks line up with the domains (EP 64 on 72-GPU racks); default all of them.
    pub gpus_per_domain: Option<u64>,
    pub ep: Option<u64>,
    pub cp: Option<u64>,
    /// ZeRO stage 0-3 (3 = FSDP).
    pub zero: Option<u64>,
    /// Hide data-parallel communication behind compute except the last bucket.
    pub dp_overlap: Option<bool>,
    /// Overlap the tensor-parallel all-gathers and reduce-scatters (sequence parallelism) with
    /// the GEMMs beside them (Megatron-Core `tp_comm_overlap`, Transformer Engine userbuffers).
    pub tp_overlap: Option<bool>,
    /// Overlap the pipeline sends with the next chunk's compute in the steady 1F1B phase
    /// (Megatron `overlap_p2p_comm`; default on with vp > 1, interleaved only).
    pub pp_overlap: Option<bool>,
    /// Gradient bucket size, MB (1e6 bytes).
    pub dp_bucket_mb: Option<f64>,
    /// Activation recomputation: "none", "selective" (the attention core) or "full".
    pub recompute: Option<String>,
    /// Sequence parallelism with tensor parallelism (Korthikanti et al. 2022): norms and
    /// dropouts split over the TP group.
    pub sequence_parallel: Option<bool>,
    /// GEMM precision: "bf16" or "fp8" (GPUs with an FP8 peak in the catalog).
    pub precision: Option<String>,
    /// Random loss per link (0 <= p < 0.5) the job's fabric sees, costed in expectation on
    /// the step's collectives at their real sizes (`workload::train::loss_cost`).
    pub loss_rate: Option<f64>,
    /// The recovery from that loss (`mech::recovery::TRANSPORTS`; default: the profile's).
    pub recovery: Option<String>,
    /// How the step is timed: "analytic" (closed form) or "flow_dag" (the whole step on the
    /// flow engine, `workload::train::flow_step`).
    pub step_model: Option<String>,
    /// The routing skew of the MoE layers' expert-parallel all-to-alls: "uniform" (default),
    /// "zipf:S" or "histogram:FILE" (relative to the scenario; `moe_skew::Skew`).
    pub moe_skew: Option<String>,
    /// Expert capacity as a multiple of the even share, tokens over it dropped (Fedus et al.
    /// 2021, Switch Transformer, arXiv 2101.03961, §2.2); default none (DeepSeek-V3 drops no
    /// token: Liu et al. 2024, arXiv 2412.19437, §2.1.2).
    pub capacity_factor: Option<f64>,
}
