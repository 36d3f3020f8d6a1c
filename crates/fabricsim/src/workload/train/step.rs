//! One training step: compute from the measured efficiency table, the communication of each
//! parallelism timed by a [`CommModel`], the 1F1B pipeline bubble, and data-parallel overlap.
//!
//! Per micro-batch, on the slowest (last) pipeline stage: forward and backward GEMMs (backward
//! = data + weight gradients = 2 x forward, at the forward shapes' efficiency) and causal flash
//! attention, plus the communication on the critical path: TP all-reduces (2 forward + 2
//! backward per layer, Megatron; with sequence parallelism the all-gather + reduce-scatter
//! pair moves the same bytes), EP all-to-alls (dispatch + combine, forward and backward), CP
//! K/V all-gathers and dK/dV reduce-scatters overlapped with the attention kernel, and the PP
//! activation and gradient sends (physics.md F4). 1F1B runs (m + pp - 1) micro-batch slots of
//! which pp - 1 are the bubble (Narayanan et al. 2021, bubble fraction (pp-1)/m). Data-parallel
//! gradients are reduced in buckets as the last micro-batch's backward produces them, so
//! only what outlasts the backward (at least the last bucket) is exposed; ZeRO-1/2 parameter
//! all-gathers overlap the next forward the same way; with overlap off all of it is exposed.

use serde::Serialize;

use super::config::{Recompute, TrainConfig};
use super::efficiency::{Efficiency, MEASURED_ON};
use super::flops::{attention_flops, flops_per_token, layer_gemms, logits_gemm};
use super::groups::{Groups, groups};
use super::memory::{self, Memory};
use crate::error::InputError;
use crate::workload::collective::Op;
use crate::workload::collective::piece;
use crate::workload::comm_model::{CommModel, GroupShape};

/// Bytes per activation and gradient element (bf16).
const ELEM: f64 = 2.0;

/// One collective of the step.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CommRow {
    pub name: &'static str,
    pub op: &'static str,
    pub ranks: u32,
    pub servers: u32,
    pub bytes_per_call: u64,
    pub calls_per_step: u64,
    pub time_per_call_s: f64,
    pub total_s: f64,
    pub exposed_s: f64,
}

/// Compute time of one micro-batch on the slowest stage, seconds.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct MicroBatch {
    pub forward_s: f64,
    pub backward_s: f64,
    pub recompute_s: f64,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct StepReport {
    pub model: String,
    pub params: u64,
    pub gpus: u64,
    pub gpu: String,
    pub tp: u64,
    pub pp: u64,
    pub dp: u64,
    pub ep: u64,
    pub cp: u64,
    pub zero: u64,
    pub micro_batch: u64,
    pub micro_batches: u64,
    pub global_batch: u64,
    pub seq: u64,
    pub flops_per_token: f64,
    pub model_flops_per_step: f64,
    pub step_time_s: f64,
    pub compute_s: f64,
    pub bubble_s: f64,
    pub exposed_comm_s: f64,
    pub tokens_per_s: f64,
    pub tflops_per_gpu: f64,
    /// Model FLOPs / (step time x GPUs x peak), Megatron's MFU.
    pub mfu: f64,
    /// Model FLOPs / (compute time x GPUs x peak): the MFU with a free network and no bubble.
    pub compute_efficiency: f64,
    pub per_micro_batch: MicroBatch,
    pub collectives: Vec<CommRow>,
    pub memory: Memory,
    pub compute_source: String,
    pub comm_source: String,
}

/// Time the collectives of `ops` (bucket times, in order) take when bucket j becomes available
/// after (j+1)/n of a `window` of compute; returns the part that outlasts the window.
fn exposed_after(bucket_times: &[f64], window: f64) -> f64 {
    let n = bucket_times.len() as f64;
    let mut finish: f64 = 0.0;
    for (j, t) in bucket_times.iter().enumerate() {
        let ready = window * (j + 1) as f64 / n;
        finish = finish.max(ready) + t;
    }
    (finish - window).max(0.0)
}

struct Ctx<'a> {
    comm: &'a dyn CommModel,
    rows: Vec<CommRow>,
}

impl Ctx<'_> {
    fn per_micro_batch(
        &mut self,
        name: &'static str,
        op: Op,
        bytes: f64,
        group: GroupShape,
        calls: u64,
        exposed_each: Option<f64>,
    ) -> f64 {
        if group.ranks <= 1 || calls == 0 {
            return 0.0;
        }
        let b = bytes.round() as u64;
        let t = self.comm.time_s(op, b, group);
        let exposed = exposed_each.unwrap_or(t);
        self.rows.push(CommRow {
            name,
            op: op.name(),
            ranks: group.ranks,
            servers: group.servers,
            bytes_per_call: b,
            calls_per_step: calls,
            time_per_call_s: t,
            total_s: t * calls as f64,
            exposed_s: exposed * calls as f64,
        });
        exposed
    }
}

/// Bucketed data-parallel collectives: one entry per (name, op, bytes, group).
struct Bucketed {
    name: &'static str,
    op: Op,
    bytes: f64,
    group: GroupShape,
}

/// Models one step of `cfg` with `comm` timing the collectives.
pub fn step(
    cfg: &TrainConfig,
    eff: &Efficiency,
    comm: &dyn CommModel,
) -> Result<StepReport, InputError> {
    let (m, p) = (&cfg.model, &cfg.par);
    let mem = memory::per_gpu(cfg);
    if mem.total_gb > mem.hbm_gb {
        return Err(cfg.origin.error(
            "gpu",
            &cfg.gpu.id,
            format!(
                "the plan needs {:.1} GB per GPU (weights {:.1}, gradients {:.1}, optimizer {:.1}, activations {:.1}) but a {} has {} GB",
                mem.total_gb, mem.weights_gb, mem.grads_gb, mem.optimizer_gb, mem.activations_gb, cfg.gpu.id, mem.hbm_gb
            ),
            "a plan that fits: more tp or pp, a higher zero stage, recompute = full, a smaller micro_batch, or a GPU with more memory",
        ));
    }
    let g: Groups = groups(cfg);
    let peak = cfg.gpu.peak_flops();
    let mbs = p.micro_batches(m.global_batch);
    let stage_layers = (m.layers / p.pp) as f64;
    let tokens = (p.micro_batch * m.seq) as f64 / p.cp as f64;

    // Compute per micro-batch.
    let gemm_time = |gm: &super::flops::Gemm| gm.flops() / (eff.gemm(gm.m, gm.n, gm.k) * peak);
    let layer_fwd: f64 = layer_gemms(m, tokens, p.tp, p.ep)
        .iter()
        .map(gemm_time)
        .sum();
    // Causal flash attention does half the full score FLOPs forward, 3.5x that with backward.
    let attn_causal_fwd = attention_flops(m, tokens, p.tp) / 2.0;
    let attn_fwd = attn_causal_fwd / (eff.attention(m.seq as f64, false) * peak);
    let attn_fwd_bwd = 3.5 * attn_causal_fwd / (eff.attention(m.seq as f64, true) * peak);
    let logits_fwd = gemm_time(&logits_gemm(m, tokens, p.tp));
    let mb = MicroBatch {
        forward_s: stage_layers * (layer_fwd + attn_fwd) + logits_fwd,
        backward_s: stage_layers * (2.0 * layer_fwd + attn_fwd_bwd - attn_fwd) + 2.0 * logits_fwd,
        recompute_s: match p.recompute {
            Recompute::None => 0.0,
            Recompute::Full => stage_layers * (layer_fwd + attn_fwd),
        },
    };
    let mb_compute = mb.forward_s + mb.backward_s + mb.recompute_s;

    // Communication on the critical path of every micro-batch.
    let mut ctx = Ctx {
        comm,
        rows: Vec::new(),
    };
    let calls = |per_mb: f64| (per_mb * mbs as f64).round() as u64;
    let recompute_fwd = if p.recompute == Recompute::Full {
        1.0
    } else {
        0.0
    };
    let act = tokens * m.hidden as f64 * ELEM;
    let mut mb_comm = 0.0;
    mb_comm += (2.0 * (2.0 + recompute_fwd))
        * stage_layers
        * ctx.per_micro_batch(
            "tp_all_reduce",
            Op::AllReduce,
            act,
            g.tp,
            calls((4.0 + 2.0 * recompute_fwd) * stage_layers),
            None,
        );
    if m.is_moe() {
        let dispatch = tokens * m.top_k as f64 * m.hidden as f64 * ELEM / p.tp as f64;
        mb_comm += 4.0
            * stage_layers
            * ctx.per_micro_batch(
                "ep_all_to_all",
                Op::AllToAll,
                dispatch,
                g.ep,
                calls(4.0 * stage_layers),
                None,
            );
    }
    if p.cp > 1 {
        let kv_local = (m.kv_heads as f64 / p.tp as f64).max(1.0) * m.head_dim() as f64;
        let kv = (p.micro_batch * m.seq) as f64 * 2.0 * kv_local * ELEM;
        let t_ag = comm.time_s(Op::AllGather, kv.round() as u64, g.cp);
        let t_rs = comm.time_s(Op::ReduceScatter, kv.round() as u64, g.cp);
        let fwd_exposed = (t_ag - attn_fwd).max(0.0);
        let bwd_exposed = (t_ag + t_rs - (attn_fwd_bwd - attn_fwd)).max(0.0);
        // The backward exposure is shared by its all-gather and reduce-scatter by time.
        let ag_share = if t_ag + t_rs > 0.0 {
            t_ag / (t_ag + t_rs)
        } else {
            0.5
        };
        let ag_each = (fwd_exposed + bwd_exposed * ag_share) / 2.0;
        let rs_each = bwd_exposed * (1.0 - ag_share);
        mb_comm += 2.0
            * stage_layers
            * ctx.per_micro_batch(
                "cp_kv_all_gather",
                Op::AllGather,
                kv,
                g.cp,
                calls(2.0 * stage_layers),
                Some(ag_each),
            );
        mb_comm += stage_layers
            * ctx.per_micro_batch(
                "cp_dkv_reduce_scatter",
                Op::ReduceScatter,
                kv,
                g.cp,
                calls(stage_layers),
                Some(rs_each),
            );
    }
    if p.pp > 1 {
        mb_comm += 2.0
            * ctx.per_micro_batch(
                "pp_send_recv",
                Op::SendRecv,
                act / p.tp as f64,
                g.pp_pair,
                calls(2.0),
                None,
            );
    }
    let slot = mb_compute + mb_comm;
    let compute = mbs as f64 * mb_compute;
    let bubble = (p.pp - 1) as f64 * slot;

    // Data parallelism, bucketed and overlapped.
    let (psi_d, psi_e) = memory::params_per_gpu(cfg);
    let grads = |op: Op, name_d: &'static str, name_e: &'static str| {
        let mut v = vec![Bucketed {
            name: name_d,
            op,
            bytes: psi_d * ELEM,
            group: g.dp,
        }];
        if psi_e > 0.0 {
            v.push(Bucketed {
                name: name_e,
                op,
                bytes: psi_e * ELEM,
                group: g.edp,
            });
        }
        v
    };
    let last_bwd = mb.backward_s + mb.recompute_s;
    let mut phases: Vec<(Vec<Bucketed>, f64, u64)> = Vec::new(); // (collectives, window, times per step)
    match p.zero {
        0 => phases.push((
            grads(Op::AllReduce, "dp_grad_all_reduce", "edp_grad_all_reduce"),
            last_bwd,
            1,
        )),
        1 | 2 => {
            phases.push((
                grads(
                    Op::ReduceScatter,
                    "dp_grad_reduce_scatter",
                    "edp_grad_reduce_scatter",
                ),
                last_bwd,
                1,
            ));
            phases.push((
                grads(Op::AllGather, "dp_param_all_gather", "edp_param_all_gather"),
                mb.forward_s,
                1,
            ));
        }
        _ => {
            phases.push((
                grads(
                    Op::AllGather,
                    "dp_param_all_gather_fwd",
                    "edp_param_all_gather_fwd",
                ),
                mb.forward_s,
                mbs,
            ));
            phases.push((
                grads(
                    Op::AllGather,
                    "dp_param_all_gather_bwd",
                    "edp_param_all_gather_bwd",
                ),
                last_bwd,
                mbs,
            ));
            phases.push((
                grads(
                    Op::ReduceScatter,
                    "dp_grad_reduce_scatter",
                    "edp_grad_reduce_scatter",
                ),
                last_bwd,
                1,
            ));
        }
    }
    let mut dp_exposed = 0.0;
    for (colls, window, times) in phases {
        let mut buckets = Vec::new(); // (collective index, time) in the order they are issued
        let mut totals = vec![0.0; colls.len()];
        for (i, c) in colls.iter().enumerate() {
            if c.group.ranks <= 1 || c.bytes <= 0.0 {
                continue;
            }
            let total = c.bytes.round() as u64;
            let nb = total.div_ceil(p.dp_bucket_bytes).max(1);
            for j in 0..nb {
                let t = comm.time_s(c.op, piece(total, nb, j), c.group);
                buckets.push((i, t));
                totals[i] += t;
            }
        }
        let times_only: Vec<f64> = buckets.iter().map(|b| b.1).collect();
        let sum: f64 = times_only.iter().sum();
        let exposed = if p.dp_overlap {
            exposed_after(&times_only, window)
        } else {
            sum
        };
        dp_exposed += exposed * times as f64;
        for (i, c) in colls.iter().enumerate() {
            if totals[i] == 0.0 {
                continue;
            }
            let share = if sum > 0.0 { totals[i] / sum } else { 0.0 };
            let bytes = c.bytes.round() as u64;
            ctx.rows.push(CommRow {
                name: c.name,
                op: c.op.name(),
                ranks: c.group.ranks,
                servers: c.group.servers,
                bytes_per_call: bytes,
                calls_per_step: times,
                time_per_call_s: totals[i],
                total_s: totals[i] * times as f64,
                exposed_s: exposed * share * times as f64,
            });
        }
    }

    let step = mbs as f64 * slot + bubble + dp_exposed;
    let fpt = flops_per_token(m);
    let tokens_step = (m.global_batch * m.seq) as f64;
    let model_flops = fpt * tokens_step;
    let n = cfg.gpus as f64;
    let exposed_comm: f64 = ctx.rows.iter().map(|r| r.exposed_s).sum();
    Ok(StepReport {
        model: m.id.clone(),
        params: m.params(),
        gpus: cfg.gpus,
        gpu: cfg.gpu.id.clone(),
        tp: p.tp,
        pp: p.pp,
        dp: p.dp,
        ep: p.ep,
        cp: p.cp,
        zero: p.zero,
        micro_batch: p.micro_batch,
        micro_batches: mbs,
        global_batch: m.global_batch,
        seq: m.seq,
        flops_per_token: fpt,
        model_flops_per_step: model_flops,
        step_time_s: step,
        compute_s: compute,
        bubble_s: bubble,
        exposed_comm_s: exposed_comm,
        tokens_per_s: tokens_step / step,
        tflops_per_gpu: model_flops / step / n / 1e12,
        mfu: model_flops / (step * n * peak),
        compute_efficiency: model_flops / (compute * n * peak),
        per_micro_batch: mb,
        collectives: ctx.rows,
        memory: mem,
        compute_source: if cfg.gpu.id == MEASURED_ON {
            "measured H200 efficiency table (data/compute/h200.csv)".into()
        } else {
            format!(
                "estimate: H200 measured efficiency applied to the {} peak of {} TFLOP/s",
                cfg.gpu.id, cfg.gpu.peak_bf16_tflops
            )
        },
        comm_source: comm.describe(),
    })
}
