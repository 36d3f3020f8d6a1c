//! One training step: compute from the measured efficiency table, the communication of each
//! parallelism timed by a [`CommModel`], the pipeline bubble of the schedule (1F1B or
//! interleaved), and data-parallel overlap.
//!
//! Every micro-batch has on its critical path, besides its compute (`compute`): TP
//! all-reduces (2 forward + 2 backward per layer, 2 more when the forward is recomputed;
//! Megatron, with sequence parallelism the all-gather + reduce-scatter pair moves the same
//! bytes), EP all-to-alls (dispatch and combine, forward and backward), CP K/V all-gathers
//! and dK/dV reduce-scatters less what the attention kernel hides, the PP activation and
//! gradient sends (Narayanan et al. 2021), and ZeRO-3 parameter gathers less what the layer compute
//! hides. 1F1B runs m + pp - 1 such slots, pp - 1 of them the bubble (Narayanan et al. 2021:
//! bubble fraction (pp-1)/m); interleaved 1F1B with vp chunks per rank m + (pp - 1) / vp,
//! each micro-batch sending its activations and gradients across 2 vp chunk boundaries per
//! rank (§2.2.2: bubble (pp-1)/(vp m), vp times the pipeline sends). Gradients are reduced in buckets as the last micro-batch's
//! backward produces them and ZeRO-1/2 parameters gathered as the next forward needs them, so
//! only what outlasts that compute (at least one bucket) is exposed; with overlap off, all.
//! With `tp_overlap` the TP collectives pipeline with the GEMMs beside them ([`tp_exposed`]);
//! with `pp_overlap` the steady phase's pipeline sends run beside the next chunk ([`pp_exposed`]),
//! the bubble's keeping their full time. Each row's hidden time is its total less its exposed.

use serde::Serialize;

use super::compute::{self, MicroBatch};
use super::config::{Recompute, TrainConfig};
use super::efficiency::{Efficiency, MEASURED_ON};
use super::flops::{flops_per_token, recompute_flops_per_token};
use super::groups::{Groups, Layout, groups};
use super::memory::{self, Memory};
use crate::workload::collective::{Op, piece};
use crate::workload::comm_model::{CommModel, GroupShape};
use crate::workload::moe::{self, Slowest};

/// Bytes per activation, gradient and parameter element on the wire (bf16).
const ELEM: f64 = 2.0;

/// One collective of the step.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CommRow {
    pub name: &'static str,
    pub op: &'static str,
    pub ranks: u32,
    pub servers: u32,
    /// GPUs between consecutive ranks of the group (Megatron layout; the group of GPU 0).
    pub gpu_stride: u64,
    pub bytes_per_call: u64,
    pub calls_per_step: u64,
    /// Time of one call (data-parallel rows: all buckets of one call).
    pub time_per_call_s: f64,
    pub total_s: f64,
    /// What compute does not hide (the steady-state part; the bubble is reported apart).
    pub exposed_s: f64,
    /// What compute hides: `total_s - exposed_s`.
    pub hidden_s: f64,
    /// The pieces each call is issued in (data-parallel buckets: `collective::piece`; 1 for a
    /// collective timed whole), for what costs a piece (`workload::loss_cost`).
    #[serde(skip)]
    pub pieces: u64,
    /// The routing skew of an MoE all-to-all (absent under uniform routing).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub skew: Option<SkewRow>,
}

/// How a skewed MoE all-to-all is timed: its slowest rank, which ends it (`workload::moe`).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SkewRow {
    /// The slowest rank's bytes over the mean rank's, on the link class the all-to-all is
    /// bound by.
    pub slowest_over_mean: f64,
    /// The same over a rank's under uniform routing: the call is timed at `bytes_per_call`
    /// times this.
    pub slowest_over_uniform: f64,
    /// The uniform call's time, for the skew's cost.
    pub uniform_time_per_call_s: f64,
    /// The share of the routed tokens sent; the rest are dropped over the expert capacity.
    pub kept_share: f64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct StepReport {
    pub model: String,
    pub params: u64,
    pub gpus: u64,
    /// GPUs of the cluster left idle so that the job's blocks line up with the servers
    /// (`gpus_per_domain`).
    #[serde(skip_serializing_if = "is_zero")]
    pub idle_gpus: u64,
    pub gpu: String,
    pub tp: u64,
    pub pp: u64,
    /// Model chunks per pipeline rank (1: 1F1B; more: interleaved 1F1B).
    pub vp: u64,
    pub dp: u64,
    pub ep: u64,
    pub cp: u64,
    pub zero: u64,
    pub recompute: &'static str,
    pub precision: &'static str,
    pub sequence_parallel: bool,
    /// Tensor-parallel collectives overlapped with the GEMMs (`tp_exposed`).
    pub tp_overlap: bool,
    /// Pipeline sends overlapped with compute in the steady 1F1B phase (`pp_exposed`).
    pub pp_overlap: bool,
    pub micro_batch: u64,
    pub micro_batches: u64,
    /// Layers of each pipeline stage, listed only when they differ (an even split is
    /// layers / pp each).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stage_layers: Option<Vec<u64>>,
    pub global_batch: u64,
    pub seq: u64,
    pub flops_per_token: f64,
    pub model_flops_per_step: f64,
    /// Model FLOPs plus what recomputation adds (`flops::recompute_flops_per_token`).
    pub hardware_flops_per_step: f64,
    pub step_time_s: f64,
    /// The micro-batches' compute (the optimizer apart).
    pub compute_s: f64,
    /// The compute split: GEMMs, attention, memory-bound kernels, launch gaps.
    pub gemm_s: f64,
    pub attention_s: f64,
    pub memory_bound_s: f64,
    pub launch_s: f64,
    /// The optimizer step after the last backward (Adam on the GPU's shard, memory-bound).
    pub optimizer_s: f64,
    pub bubble_s: f64,
    pub exposed_comm_s: f64,
    /// Per communication kind (TP, CP, EP, PP, DP): its time, exposed and hidden.
    pub comm_by_kind: Vec<KindSplit>,
    pub tokens_per_s: f64,
    pub tflops_per_gpu: f64,
    /// Model FLOPs / (step time x GPUs x peak): Megatron's MFU.
    pub mfu: f64,
    /// Hardware FLOPs / (step time x GPUs x peak).
    pub hfu: f64,
    /// Model FLOPs / ((compute + optimizer) x GPUs x peak): the MFU with a free network and no
    /// bubble.
    pub compute_efficiency: f64,
    pub per_micro_batch: MicroBatch,
    pub collectives: Vec<CommRow>,
    pub memory: Memory,
    pub compute_source: String,
    pub comm_source: String,
}

/// One communication kind's time per step and what of it compute hides.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct KindSplit {
    pub kind: &'static str,
    pub total_s: f64,
    pub exposed_s: f64,
    pub hidden_s: f64,
}

/// The kind of the collective named `name`: the parallelism it serves.
fn kind(name: &str) -> &'static str {
    match name.split('_').next() {
        Some("tp") => "TP",
        Some("cp") => "CP",
        Some("ep") => "EP",
        Some("pp") => "PP",
        _ => "DP",
    }
}

/// The rows summed per kind, in the order TP, CP, EP, PP, DP (kinds without a row left out).
pub fn by_kind(rows: &[CommRow]) -> Vec<KindSplit> {
    ["TP", "CP", "EP", "PP", "DP"]
        .into_iter()
        .filter_map(|k| {
            let of: Vec<&CommRow> = rows.iter().filter(|r| kind(r.name) == k).collect();
            (!of.is_empty()).then(|| KindSplit {
                kind: k,
                total_s: of.iter().map(|r| r.total_s).sum(),
                exposed_s: of.iter().map(|r| r.exposed_s).sum(),
                hidden_s: of.iter().map(|r| r.hidden_s).sum(),
            })
        })
        .collect()
}

/// The share of a GPU's SMs the communication kernels of Transformer Engine's TP overlap take
/// while they run beside a GEMM: the mean `num_sm` of the ten overlaps of NeMo's
/// `userbuffers_bf16_h100_h8192_tp4_mbs1_seqlen8192` (Llama 3 70B on H100;
/// nemo/collections/llm/recipes/tp_overlap_configs/userbuffers.py: 78 SMs over 10, ring
/// exchanges 1 SM each, pipelined and bulk ones 2 to 24) over the H100 SXM's 132 SMs (NVIDIA
/// H100 Tensor Core GPU Architecture whitepaper, 2022). Applied to every GPU: an estimate.
pub const TP_OVERLAP_SM_SHARE: f64 = 7.8 / 132.0;

/// Exposed seconds of `comm` seconds of tensor-parallel communication overlapped with `gemm`
/// seconds of the GEMMs beside it, both split into `chunks` pieces that pipeline (Wang et al.,
/// ASPLOS 2023, "Overlap Communication with Dependent Computation via Decomposition", §3;
/// Transformer Engine's userbuffers ring exchange runs tp steps): one piece of the longer of
/// the two cannot overlap (the first transfer waits for a GEMM piece, the last reduce-scatter
/// piece follows the last one), so (1 - 1/chunks) max(0, comm - gemm) + comm / chunks; and
/// while the two overlap, (1 - 1/chunks) min(comm, gemm), the GEMMs run on the SMs the
/// communication leaves ([`TP_OVERLAP_SM_SHARE`] slower). Never more than `comm`; with the
/// GEMMs much longer it tends to comm (1/chunks + share (1 - 1/chunks)).
pub fn tp_exposed(comm: f64, gemm: f64, chunks: f64) -> f64 {
    let overlapped = 1.0 - 1.0 / chunks;
    overlapped * (comm - gemm).max(0.0)
        + comm / chunks
        + TP_OVERLAP_SM_SHARE * overlapped * comm.min(gemm)
}

/// Exposed seconds of one micro-batch's pipeline sends, `vp` forward and `vp` backward of
/// `t` seconds each, with `overlap_p2p_comm` (Megatron-LM
/// `forward_backward_pipelining_with_interleaving`, megatron/core/pipeline_parallel/
/// schedules.py): in the steady 1F1B phase each send runs while the rank computes its next
/// chunk operation, a forward send behind a backward chunk (`bwd / vp` seconds) and a backward
/// send behind a forward chunk (`fwd / vp`); without overlap all 2 vp t.
pub fn pp_exposed(t: f64, vp: f64, fwd: f64, bwd: f64, overlap: bool) -> f64 {
    if overlap {
        vp * ((t - bwd / vp).max(0.0) + (t - fwd / vp).max(0.0))
    } else {
        2.0 * vp * t
    }
}

/// Exposed time of collectives issued in buckets while `window` seconds of compute run:
/// bucket j becomes available after (j+1)/n of the window (gradients of a backward; by time
/// reversal also parameters needed by a forward), the network runs them one after another.
pub fn exposed_after(bucket_times: &[f64], window: f64) -> f64 {
    let n = bucket_times.len() as f64;
    let mut finish: f64 = 0.0;
    for (j, t) in bucket_times.iter().enumerate() {
        finish = finish.max(window * (j + 1) as f64 / n) + t;
    }
    (finish - window).max(0.0)
}

/// A collective of the step, before timing.
struct Coll {
    name: &'static str,
    op: Op,
    bytes: f64,
    layout: Layout,
    /// The slowest rank of a skewed MoE all-to-all, which times the call.
    slowest: Option<Slowest>,
}

impl Coll {
    fn group(&self) -> GroupShape {
        self.layout.shape
    }
}

struct Step<'a> {
    comm: &'a dyn CommModel,
    micro_batches: u64,
    bucket_bytes: u64,
    overlap: bool,
    rows: Vec<CommRow>,
}

impl Step<'_> {
    /// `calls` of `c` per micro-batch, on its critical path; `exposed(t)` is what compute
    /// does not hide of them per micro-batch when one call takes `t` seconds. Returns the
    /// exposed seconds per micro-batch.
    fn per_micro_batch(&mut self, c: Coll, calls: f64, exposed: impl Fn(f64) -> f64) -> f64 {
        if c.group().ranks <= 1 || calls == 0.0 {
            return 0.0;
        }
        let bytes = c.bytes.round() as u64;
        let mut t = self.comm.time_s(c.op, bytes, c.group());
        let skew = c.slowest.map(|sl| {
            let uniform = t;
            t = moe::exchange_time_s(self.comm, c.bytes, c.group(), sl);
            SkewRow {
                slowest_over_mean: sl.over_mean,
                slowest_over_uniform: sl.over_uniform,
                uniform_time_per_call_s: uniform,
                kept_share: sl.kept,
            }
        });
        let exposed = exposed(t);
        self.push(
            &c,
            (bytes, 1),
            (calls * self.micro_batches as f64).round() as u64,
            t,
            exposed * self.micro_batches as f64,
        );
        if let Some(row) = self.rows.last_mut() {
            row.skew = skew;
        }
        exposed
    }

    /// Collectives issued in buckets during `window` seconds of compute, `times` per step.
    /// Returns the exposed seconds of one issue.
    fn bucketed(&mut self, colls: Vec<Coll>, window: f64, times: u64) -> f64 {
        let mut buckets = Vec::new();
        let mut per_coll = Vec::new();
        for c in colls {
            if c.group().ranks <= 1 || c.bytes <= 0.0 {
                continue;
            }
            let total = c.bytes.round() as u64;
            let nb = total.div_ceil(self.bucket_bytes).max(1);
            let before = buckets.len();
            buckets.extend((0..nb).map(|j| self.comm.time_s(c.op, piece(total, nb, j), c.group())));
            per_coll.push((c, total, nb, buckets[before..].iter().sum::<f64>()));
        }
        let sum: f64 = buckets.iter().sum();
        let exposed = if self.overlap {
            exposed_after(&buckets, window)
        } else {
            sum
        };
        for (c, bytes, nb, t) in per_coll {
            let share = if sum > 0.0 { t / sum } else { 0.0 };
            self.push(&c, (bytes, nb), times, t, exposed * share * times as f64);
        }
        exposed
    }

    /// Adds the row of `c`: `(bytes, pieces)` per call, `calls` per step.
    fn push(
        &mut self,
        c: &Coll,
        (bytes, pieces): (u64, u64),
        calls: u64,
        per_call: f64,
        exposed: f64,
    ) {
        self.rows.push(CommRow {
            name: c.name,
            op: c.op.name(),
            ranks: c.group().ranks,
            servers: c.group().servers,
            gpu_stride: c.layout.stride,
            bytes_per_call: bytes,
            calls_per_step: calls,
            time_per_call_s: per_call,
            total_s: per_call * calls as f64,
            exposed_s: exposed,
            hidden_s: per_call * calls as f64 - exposed,
            pieces,
            skew: None,
        });
    }
}

/// The critical path of one micro-batch on a stage of `layers` layers computing `mb` and
/// holding `psi` = (dense, expert) parameters per GPU: its compute and the collectives it
/// waits for, and the seconds of pipeline sends it hides (exposed again in the fill and flush,
/// which `overlap_p2p_comm` does not overlap). Pushes their rows into `st`.
fn slot(
    st: &mut Step,
    cfg: &TrainConfig,
    g: &Groups,
    mb: &MicroBatch,
    layers: f64,
    psi: (f64, f64),
) -> (f64, f64) {
    let (m, p) = (&cfg.model, &cfg.par);
    let mbs = st.micro_batches;
    let tokens = (p.micro_batch * m.seq) as f64 / p.cp as f64;
    let act = tokens * m.hidden as f64 * ELEM;
    let coll = |name, op, bytes, layout| Coll {
        name,
        op,
        bytes,
        layout,
        slowest: None,
    };
    let mut slot = mb.total_s();
    let recompute = if p.recompute == Recompute::Full {
        1.0
    } else {
        0.0
    };
    // Forward: 2 collectives per layer beside the layer's forward GEMMs; backward: 2 (4 with
    // the forward recomputed) beside the data- and weight-gradient GEMMs (2x; 3x recomputed).
    let tp_calls = [2.0 * layers, (2.0 + 2.0 * recompute) * layers];
    let tp_gemms = [1.0, 2.0 + recompute].map(|x| x * mb.layer_gemm_forward_s);
    let (tp_overlap, tp) = (p.tp_overlap, p.tp as f64);
    slot += st.per_micro_batch(
        coll("tp_all_reduce", Op::AllReduce, act, g.tp),
        tp_calls[0] + tp_calls[1],
        |t| match tp_overlap {
            true => (0..2)
                .map(|i| tp_exposed(t * tp_calls[i], tp_gemms[i], tp))
                .sum(),
            false => t * (tp_calls[0] + tp_calls[1]),
        },
    );
    if m.is_moe() {
        let dispatch = act * m.top_k as f64 / p.tp as f64;
        // Dispatch and combine, forward and backward: under a skew the slowest EP rank (the
        // hot experts' receiver in the dispatch, their sender in the combine) ends each call.
        let servers: Vec<u32> =
            g.ep.members()
                .iter()
                .map(|&gpu| cfg.place.server(gpu))
                .collect();
        let slowest = cfg.route.as_ref().map(|r| r.slowest(&servers));
        slot += st.per_micro_batch(
            Coll {
                slowest,
                ..coll("ep_all_to_all", Op::AllToAll, dispatch, g.ep)
            },
            4.0 * layers,
            |t| t * 4.0 * layers,
        );
    }
    if p.cp > 1 {
        let kv_local = (m.kv_heads as f64 / p.tp as f64).max(1.0) * m.head_dim() as f64;
        let kv = (p.micro_batch * m.seq) as f64 * 2.0 * kv_local * ELEM;
        // Forward gathers hide behind forward attention; the backward's gather and
        // reduce-scatter behind backward attention (split by their share of the calls).
        let behind = |calls: f64, window: f64| move |t: f64| (t * calls - window).max(0.0);
        slot += st.per_micro_batch(
            coll("cp_kv_all_gather", Op::AllGather, kv, g.cp),
            2.0 * layers,
            behind(
                2.0 * layers,
                mb.attention_forward_s + mb.attention_backward_s / 2.0,
            ),
        );
        slot += st.per_micro_batch(
            coll("cp_dkv_reduce_scatter", Op::ReduceScatter, kv, g.cp),
            layers,
            behind(layers, mb.attention_backward_s / 2.0),
        );
    }
    let mut pp_hidden = 0.0;
    if p.pp > 1 {
        let (vp, overlap) = (p.vp as f64, p.pp_overlap);
        let (fwd, bwd) = (mb.forward_s, mb.backward_s + mb.recompute_s);
        slot += st.per_micro_batch(
            coll("pp_send_recv", Op::SendRecv, act / p.tp as f64, g.pp_pair),
            2.0 * vp,
            |t| pp_exposed(t, vp, fwd, bwd, overlap),
        );
        let row = st.rows.last().filter(|r| r.name == "pp_send_recv");
        pp_hidden = row.map_or(0.0, |r| r.hidden_s) / mbs as f64;
    }
    if p.zero >= 3 {
        // FSDP gathers the parameters again for every micro-batch, forward and backward.
        let colls = |dense, expert| {
            vec![
                coll(dense, Op::AllGather, psi.0 * ELEM, g.dp),
                coll(expert, Op::AllGather, psi.1 * ELEM, g.edp),
            ]
        };
        slot += st.bucketed(
            colls("dp_param_all_gather_fwd", "edp_param_all_gather_fwd"),
            mb.forward_s,
            mbs,
        );
        slot += st.bucketed(
            colls("dp_param_all_gather_bwd", "edp_param_all_gather_bwd"),
            mb.backward_s + mb.recompute_s,
            mbs,
        );
    }
    (slot, pp_hidden)
}

/// Adam's update of the parameters a GPU holds the optimizer states of (`psi` = (dense,
/// expert) on the stage, sharded over dp and dp / ep from ZeRO 1 on: Megatron's distributed
/// optimizer): it reads and writes the fp32 master weight, momentum and variance (24 bytes),
/// reads the bf16 gradient and writes the bf16 weight (4), and the gradient clipping reads the
/// gradient once more (2), at the HBM bandwidth memory-bound kernels achieve.
fn optimizer_s(cfg: &TrainConfig, psi: (f64, f64)) -> f64 {
    let p = &cfg.par;
    let shard = if p.zero >= 1 {
        psi.0 / p.dp as f64 + psi.1 / (p.dp / p.ep) as f64
    } else {
        psi.0 + psi.1
    };
    compute::hbm_s(&cfg.gpu, 30.0 * shard)
}

/// Models one step of `cfg` (validated, so it fits in memory) with `comm` timing the
/// collectives. The pipeline runs at the pace of its slowest stage: every slot, the bubble's
/// included, waits for it, so the step is (m + (pp - 1) / vp) of its slots (stages of unequal
/// layers: Dubey et al. 2024, §3.3.2).
pub fn step(cfg: &TrainConfig, eff: &Efficiency, comm: &dyn CommModel) -> StepReport {
    let (m, p) = (&cfg.model, &cfg.par);
    let mem = memory::per_gpu(cfg);
    let g = groups(cfg);
    let mbs = p.micro_batches(m.global_batch);
    let (psi_d, psi_e) = memory::params_per_gpu(cfg);
    let new_step = || Step {
        comm,
        micro_batches: mbs,
        bucket_bytes: p.dp_bucket_bytes,
        overlap: p.dp_overlap,
        rows: Vec::new(),
    };
    // The slowest stage (the first of equals).
    let mut slowest: Option<((f64, f64), MicroBatch, Step)> = None;
    for (s, &layers) in p.stage_layers.iter().enumerate() {
        let mb = compute::stage(cfg, eff, s);
        let mut st = new_step();
        let psi = memory::stage_params_per_gpu(cfg, s);
        let t = slot(&mut st, cfg, &g, &mb, layers as f64, psi);
        if slowest.as_ref().is_none_or(|b| t.0 > b.0.0) {
            slowest = Some((t, mb, st));
        }
    }
    let ((slot, pp_hidden), mb, mut st) = slowest.expect("a pipeline has at least one stage");
    let coll = |name, op, bytes, layout| Coll {
        name,
        op,
        bytes,
        layout,
        slowest: None,
    };

    // Data parallelism (the heaviest stage's parameters): dense weights over dp, expert
    // weights over dp / ep.
    let dp_colls = |op: Op, dense: &'static str, expert: &'static str| {
        vec![
            coll(dense, op, psi_d * ELEM, g.dp),
            coll(expert, op, psi_e * ELEM, g.edp),
        ]
    };
    let last_bwd = mb.backward_s + mb.recompute_s;
    let mut dp_exposed = 0.0;
    match p.zero {
        0 => {
            dp_exposed += st.bucketed(
                dp_colls(Op::AllReduce, "dp_grad_all_reduce", "edp_grad_all_reduce"),
                last_bwd,
                1,
            )
        }
        1 | 2 => {
            dp_exposed += st.bucketed(
                dp_colls(
                    Op::ReduceScatter,
                    "dp_grad_reduce_scatter",
                    "edp_grad_reduce_scatter",
                ),
                last_bwd,
                1,
            );
            dp_exposed += st.bucketed(
                dp_colls(Op::AllGather, "dp_param_all_gather", "edp_param_all_gather"),
                mb.forward_s,
                1,
            );
        }
        _ => {
            dp_exposed += st.bucketed(
                dp_colls(
                    Op::ReduceScatter,
                    "dp_grad_reduce_scatter",
                    "edp_grad_reduce_scatter",
                ),
                last_bwd,
                1,
            );
        }
    }

    let compute = mbs as f64 * mb.total_s();
    // The fill and flush slots wait for their pipeline sends (`overlap_p2p_comm` overlaps the
    // steady phase only: NeMo docs, "Communication Overlap").
    let bubble = (p.pp - 1) as f64 * (slot + pp_hidden) / p.vp as f64;
    let optimizer = optimizer_s(cfg, (psi_d, psi_e));
    let step = mbs as f64 * slot + bubble + dp_exposed + optimizer;
    let fpt = flops_per_token(m);
    let tokens_step = (m.global_batch * m.seq) as f64;
    let model_flops = fpt * tokens_step;
    let hardware_flops = model_flops + recompute_flops_per_token(m, p.recompute) * tokens_step;
    let (n, peak) = (cfg.gpus as f64, cfg.gpu.peak_flops());
    StepReport {
        model: m.id.clone(),
        params: m.params(),
        gpus: cfg.gpus,
        idle_gpus: (cfg.place.servers() * (cfg.place.gpus_per_node() - cfg.place.used_per_node()))
            as u64,
        gpu: cfg.gpu.id.clone(),
        tp: p.tp,
        pp: p.pp,
        vp: p.vp,
        dp: p.dp,
        ep: p.ep,
        cp: p.cp,
        zero: p.zero,
        recompute: p.recompute.name(),
        precision: p.precision.name(),
        sequence_parallel: p.sequence_parallel,
        tp_overlap: p.tp_overlap,
        pp_overlap: p.pp_overlap,
        micro_batch: p.micro_batch,
        micro_batches: mbs,
        stage_layers: (!p.even_stages()).then(|| p.stage_layers.clone()),
        global_batch: m.global_batch,
        seq: m.seq,
        flops_per_token: fpt,
        model_flops_per_step: model_flops,
        hardware_flops_per_step: hardware_flops,
        step_time_s: step,
        compute_s: compute,
        gemm_s: mbs as f64 * mb.gemm_s,
        attention_s: mbs as f64 * mb.attention_s,
        memory_bound_s: mbs as f64 * mb.memory_bound_s,
        launch_s: mbs as f64 * mb.launch_s,
        optimizer_s: optimizer,
        bubble_s: bubble,
        exposed_comm_s: st.rows.iter().map(|r| r.exposed_s).sum(),
        comm_by_kind: by_kind(&st.rows),
        tokens_per_s: tokens_step / step,
        tflops_per_gpu: model_flops / step / n / 1e12,
        mfu: model_flops / (step * n * peak),
        hfu: hardware_flops / (step * n * peak),
        compute_efficiency: model_flops / ((compute + optimizer) * n * peak),
        per_micro_batch: mb,
        collectives: st.rows,
        memory: mem,
        compute_source: format!(
            "{}; {}memory-bound kernels at {:.0}% of {} TB/s HBM and {:.0} us per kernel (estimates)",
            if cfg.gpu.id == MEASURED_ON {
                "measured H200 efficiency table (data/compute/h200.csv)".to_string()
            } else {
                format!(
                    "estimate: H200 measured efficiency applied to the {} peak of {} TFLOP/s",
                    cfg.gpu.id, cfg.gpu.bf16_tflops
                )
            },
            match p.precision {
                super::config::Precision::Bf16 => String::new(),
                super::config::Precision::Fp8 => format!(
                    "FP8 GEMMs at the {} TFLOP/s FP8 peak x {:.3} (the table's FP8/bf16 efficiency); ",
                    cfg.gpu.fp8_tflops.unwrap_or(0.0),
                    eff.fp8_vs_bf16()
                ),
            },
            100.0 * compute::HBM_ACHIEVED,
            cfg.gpu.hbm_tbps,
            compute::LAUNCH_GAP_S * 1e6
        ),
        comm_source: comm.describe(),
    }
}

#[cfg(test)]
mod tests {
    use super::{TP_OVERLAP_SM_SHARE as SM, exposed_after, pp_exposed, tp_exposed};

    #[test]
    fn tp_overlap_closed_forms() {
        // A hand-computed case: 8 ms of communication beside 4 ms of GEMMs in 4 pieces: one
        // piece of each waits for the other, (1 - 1/4) (8 - 4) + 8/4 = 5 ms, and the 3 ms the
        // two overlap run slower by the SMs the communication takes.
        assert!((tp_exposed(8.0, 4.0, 4.0) - (5.0 + 3.0 * SM)).abs() < 1e-12);
        // GEMMs much longer: the last piece, comm / chunks, and the SMs' share of the rest.
        let rest = 0.125 + SM * 0.875;
        assert!((tp_exposed(1.0, 1e6, 8.0) - rest).abs() < 1e-12);
        // Never more than the communication; one piece is no overlap at all.
        for (c, g, n) in [
            (1.0, 0.0, 8.0),
            (3.0, 2.0, 2.0),
            (0.5, 9.0, 4.0),
            (7.0, 7.0, 8.0),
        ] {
            assert!(tp_exposed(c, g, n) <= c + 1e-12, "{c} {g} {n}");
            assert!((tp_exposed(c, g, 1.0) - c).abs() < 1e-12);
        }
        assert_eq!(tp_exposed(0.0, 5.0, 8.0), 0.0);
    }

    #[test]
    fn pp_overlap_closed_forms() {
        // vp = 2, a micro-batch's 6 ms forward and 12 ms backward (chunks of 3 and 6 ms) hide
        // sends of 1 ms; a 3 ms forward and 6 ms backward (chunks of 1.5 and 3 ms) leave of
        // sends of 4 ms 2 (4 - 3) + 2 (4 - 1.5) = 7 ms of the 16 exposed; without overlap all.
        assert_eq!(pp_exposed(1.0, 2.0, 6.0, 12.0, true), 0.0);
        assert!((pp_exposed(4.0, 2.0, 3.0, 6.0, true) - 7.0).abs() < 1e-12);
        assert_eq!(pp_exposed(4.0, 2.0, 3.0, 6.0, false), 16.0);
    }

    #[test]
    fn bucket_overlap_closed_forms() {
        // n buckets of t seconds released evenly over a window W: when t <= W/n the network
        // keeps up and only the last bucket shows (t); otherwise it is the bottleneck from the
        // first release on: W/n + n t - W.
        let (w, n) = (10.0, 5);
        assert!((exposed_after(&vec![1.0; n], w) - 1.0).abs() < 1e-12);
        assert!((exposed_after(&vec![3.0; n], w) - (w / n as f64 + 15.0 - w)).abs() < 1e-12);
        assert_eq!(exposed_after(&[], w), 0.0);
        assert_eq!(exposed_after(&[4.0], 0.0), 4.0);
    }
}
