//! One training step compiled into a [`MessageDag`] for the engines: compute as message
//! delays, tensor parallelism on NVLink, the pipeline's sends and the data-parallel gradient
//! all-reduce on the fabric, so the step time is the DAG's end.
//!
//! Per data-parallel replica and TP rank (a rail: the TP ranks of a server compute in lockstep
//! and each sends its 1/tp of the activations on its own NIC, sequence parallelism), every
//! stage runs Megatron's order ([`schedule::order`]: 1F1B, or interleaved 1F1B with vp model
//! chunks per rank, virtual stage c * pp + s sending to virtual stage c * pp + s + 1, so the
//! last rank's chunk c feeds the first rank's chunk c + 1; Narayanan et al. 2021, arXiv
//! 2104.04473, §2.2). One operation (a micro-batch's forward or backward through one chunk of
//! a stage) is one NVLink message from the GPU to the
//! next TP rank of its server: posted `delay` = the stage's compute after its inputs
//! ([`compute::stage`], the model `train` uses), carrying the bytes the GPU sends in that
//! operation's TP all-reduces (2 per layer forward, 2 backward, 2 more under full
//! recomputation; a ring moves 2(t-1)/t of each buffer: nccl-tests). Its
//! completion ends the operation: the next operation of the GPU and the operation's pipeline
//! send wait for it. With tp = 1 the message goes to the GPU itself with no bytes (a marker).
//! The GPU's TP traffic thus runs after its compute, as it does on the critical path
//! (Megatron's TP all-reduces are not overlapped). An operation's pipeline send blocks the
//! rank's next operation (Megatron's `send_forward_recv_backward` and kin wait for the send)
//! but, with `pp_overlap` (`overlap_p2p_comm`, interleaved schedules), in the steady 1F1B
//! phase, where it runs beside the next operation; the warm-up and flush sends block.
//!
//! After a stage's last backward and its send to the previous stage (the end of Megatron's
//! schedule: its pipeline sends block unless `overlap_p2p_comm`), each GPU's gradients (bf16, the stage's parameters) are
//! all-reduced over its data-parallel group by the workload layer's ring compiler
//! ([`ring::run`] with a step count), one message per rank and step (no NCCL chunks: at the flow level a
//! step's chunks follow each other on the same links, so the step lasts as long). The gradient
//! reduction is not overlapped with the backward (Megatron's `overlap_grad_reduce` off);
//! ZeRO 1/2 run it as the reduce-scatter and all-gather halves, the same ring. Dense models
//! with cp = 1 and ZeRO 0-2 only: MoE, context parallelism and FSDP are refused.

use super::compute;
use super::config::TrainConfig;
use super::efficiency::Efficiency;
use super::flops::flops_per_token;
use super::memory;
use super::schedule::{self, PipeOp};
use crate::error::Error;
use crate::workload::collective::{Builder, Comm, Frontier, Lane, Phases, ring};
use fabricsim_core::message::MessageDag;
use fabricsim_core::units::{BitRate, Time};

/// Bytes per activation, gradient and parameter element (bf16).
const ELEM: u64 = 2;

/// Queue pairs of the pipeline's forward and backward sends, and of the first ring channel.
const QP_FORWARD: u32 = 1;
const QP_BACKWARD: u32 = 2;
const QP_RING: u32 = 8;

/// Message tags: what each message is.
pub const TAG_OP: u32 = 0;
pub const TAG_FORWARD: u32 = 1;
pub const TAG_BACKWARD: u32 = 2;
/// Ring messages carry `TAG_RING + step`.
pub const TAG_RING: u32 = 16;

/// What to compile.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DagOptions {
    /// Steps of every data-parallel ring to compile; `None`: all 2(dp - 1). A simulation of
    /// fewer steps must derive the rest (see [`RingIndex`]).
    pub ring_steps: Option<u32>,
    /// Steps to compile per ring, in [`StepDag::rings`] order (stage-major, then rail),
    /// overriding `ring_steps` when not empty.
    pub ring_steps_each: Vec<u32>,
}

/// Where one data-parallel ring's messages sit in the DAG: step `k` (of the compiled ones)
/// of ring position `i` (replica `i`) is message `first + k * ranks + i`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RingIndex {
    pub stage: u32,
    pub rail: u32,
    pub first: u32,
    pub ranks: u32,
    pub steps_compiled: u32,
    /// 2(ranks - 1).
    pub steps_total: u32,
    /// Gradient bytes per GPU.
    pub bytes: u64,
}

#[derive(Clone, Debug)]
pub struct StepDag {
    pub dag: MessageDag,
    /// Messages of the pipeline (operations and sends), which come first.
    pub pipeline_messages: u32,
    pub rings: Vec<RingIndex>,
    /// Model FLOPs of the step (Megatron's count, [`flops_per_token`]).
    pub model_flops: f64,
    /// The job's GPUs and pipeline stages, and the GPUs' dense bf16 peak (FLOP/s).
    pub gpus: u64,
    pub pipeline_stages: u64,
    pub peak_flops: f64,
}

impl StepDag {
    /// MFU of a step that lasts `step_s` seconds (Chowdhery et al., PaLM, 2022, Appendix B: model
    /// FLOPs / (time
    /// x GPUs x peak)).
    pub fn mfu(&self, step_s: f64) -> f64 {
        self.model_flops / (step_s * self.gpus as f64 * self.peak_flops)
    }
}

/// The operations of stage `s` in 1F1B order: (backward?, micro-batch).
pub fn one_f_one_b(pp: u64, m: u64, s: u64) -> Vec<(bool, u64)> {
    schedule::order(pp, 1, m, s)
        .into_iter()
        .map(|o| (o.backward, o.micro))
        .collect()
}

/// `Err` naming what of `cfg` the DAG does not model: MoE, context parallelism, ZeRO 3,
/// tensor-parallel overlap.
pub fn check(cfg: &TrainConfig) -> Result<(), Error> {
    let (m, p) = (&cfg.model, &cfg.par);
    if m.is_moe() || p.cp > 1 || p.zero > 2 {
        return Err(Error::Workload(format!(
            "the step DAG models dense models with cp = 1 and ZeRO 0-2 (this job: {}, cp {}, \
             ZeRO {})",
            if m.is_moe() { "MoE" } else { "dense" },
            p.cp,
            p.zero
        )));
    }
    if p.tp_overlap {
        return Err(Error::Workload(
            "the step DAG runs the tensor-parallel collectives after their compute \
             (tp_overlap = false); tp_overlap is modelled by the analytic step only"
                .into(),
        ));
    }
    Ok(())
}

/// The messages [`compile`] builds for `cfg` and `opts`, in closed form (the memory estimate's
/// count before the DAG exists): per replica and rail, 2 operations per micro-batch and virtual
/// stage and a send forward and one back per micro-batch between neighbour virtual stages,
/// m (4 pp vp - 2);
/// then every compiled ring step, one message per replica.
pub fn messages(cfg: &TrainConfig, opts: &DagOptions) -> u64 {
    let p = &cfg.par;
    let (tp, pp, dp) = (p.tp, p.pp, p.dp);
    let mbs = p.micro_batches(cfg.model.global_batch);
    let pipeline = dp * tp * mbs * (4 * pp * p.vp).saturating_sub(2);
    if dp < 2 {
        return pipeline;
    }
    let total = 2 * (dp - 1);
    let steps: u64 = (0..(pp * tp) as usize)
        .map(|i| {
            let each = opts.ring_steps_each.get(i).copied();
            let k = each.or(opts.ring_steps).map_or(total, u64::from);
            k.clamp(1, total)
        })
        .sum();
    pipeline + steps * dp
}

/// Compiles `cfg`'s step; `nvlink` is the GPU's one-way NVLink rate. `Err` names what the
/// DAG does not model.
pub fn compile(
    cfg: &TrainConfig,
    eff: &Efficiency,
    nvlink: BitRate,
    opts: DagOptions,
) -> Result<StepDag, Error> {
    check(cfg)?;
    let (m, p) = (&cfg.model, &cfg.par);
    let (tp, pp, dp) = (p.tp, p.pp, p.dp);
    let mbs = p.micro_batches(m.global_batch);
    let place = &cfg.place;
    let mut b = Builder::new(place, nvlink);
    // Megatron rank layout (config.rs), cp = 1: GPU = tp_i + tp * (dp_i + dp * pp_i).
    let gpu = |rail: u64, d: u64, s: u64| (rail + tp * (d + dp * s)) as u32;
    let tokens = p.micro_batch * m.seq;
    let act = tokens * m.hidden * ELEM;
    // Per GPU and TP all-reduce call: 2(t-1)/t of the buffer (ring).
    let tp_call = if tp > 1 { 2 * (tp - 1) * act / tp } else { 0 };
    let tp_calls_fwd = 2;
    let tp_calls_bwd = 2 + 2 * u64::from(p.recompute == super::config::Recompute::Full);
    // The activation (or gradient) slice each TP rank sends to the next stage.
    let send_bytes = act / tp;
    let vp = p.vp;
    // Virtual stages: v = chunk * pp + stage.
    let virt = pp * vp;
    let chunks: Vec<compute::MicroBatch> = (0..virt)
        .map(|v| compute::chunk(cfg, eff, (v % pp) as usize, (v / pp) as usize))
        .collect();
    let chunk_layers: Vec<Vec<u64>> = (0..pp as usize).map(|s| p.chunk_layers(s)).collect();
    // Per (replica, rail, stage): the end of its schedule (its gradients are ready).
    let mut grads_ready = vec![u32::MAX; (dp * tp * pp) as usize];
    // Sends of the current (replica, rail): [virtual stage][micro-batch].
    let mut fwd_send = vec![u32::MAX; (virt * mbs) as usize];
    let mut bwd_send = vec![u32::MAX; (virt * mbs) as usize];
    let schedule: Vec<Vec<PipeOp>> = (0..pp as usize).map(|s| p.order(mbs, s)).collect();
    let warm: Vec<u64> = (0..pp).map(|s| schedule::warmup(pp, vp, mbs, s)).collect();
    let mut deps: Vec<u32> = Vec::with_capacity(2);
    for d in 0..dp {
        for rail in 0..tp {
            // Stages advance together, one operation at a time in a round over the stages,
            // so that every message's inputs exist when it is pushed: an operation waits for
            // a send of its neighbour virtual stage, which a round-robin over the schedules
            // reaches first (Megatron's orders are deadlock-free).
            let mut next = vec![0usize; pp as usize];
            let mut prev = vec![u32::MAX; pp as usize];
            // The last operation's send of each stage (the end of its schedule but the first's).
            let mut last_send = vec![u32::MAX; pp as usize];
            // The send the stage's next operation waits for (a blocking one).
            let mut blocking = vec![u32::MAX; pp as usize];
            let mut left: usize = schedule.iter().map(Vec::len).sum();
            while left > 0 {
                let mut progressed = false;
                for s in 0..pp {
                    let su = s as usize;
                    let Some(&op) = schedule[su].get(next[su]) else {
                        continue;
                    };
                    let (bwd, u) = (op.backward, op.micro);
                    let v = op.chunk * pp + s;
                    let input = match bwd {
                        false if v == 0 => None,
                        false => Some(fwd_send[((v - 1) * mbs + u) as usize]),
                        true if v == virt - 1 => None,
                        true => Some(bwd_send[((v + 1) * mbs + u) as usize]),
                    };
                    if input == Some(u32::MAX) {
                        continue; // its input is not pushed yet
                    }
                    deps.clear();
                    deps.extend(input);
                    if prev[su] != u32::MAX {
                        deps.push(prev[su]);
                    }
                    if blocking[su] != u32::MAX {
                        deps.push(blocking[su]);
                    }
                    let g = gpu(rail, d, s);
                    let c = &chunks[v as usize];
                    let (calls, compute_s) = if bwd {
                        (tp_calls_bwd, c.backward_s + c.recompute_s)
                    } else {
                        (tp_calls_fwd, c.forward_s)
                    };
                    let peer = gpu((rail + 1) % tp, d, s);
                    let bytes = calls * chunk_layers[su][op.chunk as usize] * tp_call;
                    let id = b.send(g, peer, bytes, &deps, 0, TAG_OP);
                    // Posted after its compute: `delay` counts from the last dependency, and
                    // the first operation, which has none, starts at its compute's end.
                    let msg = &mut b.dag.messages[id as usize];
                    if deps.is_empty() {
                        msg.start = Time::from_secs_f64(compute_s);
                    } else {
                        msg.delay = Time::from_secs_f64(compute_s);
                    }
                    prev[su] = id;
                    last_send[su] = u32::MAX;
                    blocking[su] = u32::MAX;
                    let to = if bwd { v.checked_sub(1) } else { Some(v + 1) };
                    if let Some(to) = to.filter(|&t| t < virt) {
                        let (qp, tag, table) = if bwd {
                            (QP_BACKWARD, TAG_BACKWARD, &mut bwd_send)
                        } else {
                            (QP_FORWARD, TAG_FORWARD, &mut fwd_send)
                        };
                        let sent = b.send(g, gpu(rail, d, to % pp), send_bytes, &[id], qp, tag);
                        table[(v * mbs + u) as usize] = sent;
                        last_send[su] = sent;
                        let (i, n) = (next[su] as u64, schedule[su].len() as u64);
                        let steady = (warm[su]..n - warm[su]).contains(&i);
                        if !(p.pp_overlap && steady) {
                            blocking[su] = sent;
                        }
                    }
                    next[su] += 1;
                    left -= 1;
                    progressed = true;
                }
                assert!(
                    progressed,
                    "Megatron's pipeline orders always have a runnable operation"
                );
            }
            // A stage's schedule ends with its last backward and, but on the first virtual
            // stage, its send to the previous one (Megatron's pipeline sends block without
            // `overlap_p2p_comm`); then its gradients are all-reduced.
            for s in 0..pp as usize {
                grads_ready[((d * tp + rail) * pp) as usize + s] = if last_send[s] != u32::MAX {
                    last_send[s]
                } else {
                    prev[s]
                };
            }
            fwd_send.fill(u32::MAX);
            bwd_send.fill(u32::MAX);
        }
    }
    let pipeline_messages = b.dag.messages.len() as u32;
    // Data-parallel gradient all-reduce per (stage, rail), after each GPU's last backward.
    let mut rings = Vec::new();
    if dp > 1 {
        let total = 2 * (dp - 1) as u32;
        if !opts.ring_steps_each.is_empty() && opts.ring_steps_each.len() != (pp * tp) as usize {
            return Err(Error::Workload(format!(
                "ring_steps_each has {} entries for {} rings",
                opts.ring_steps_each.len(),
                pp * tp
            )));
        }
        for s in 0..pp {
            let bytes = (memory::stage_params_per_gpu(cfg, s as usize).0.round() as u64) * ELEM;
            for rail in 0..tp {
                let steps = opts
                    .ring_steps_each
                    .get((s * tp + rail) as usize)
                    .copied()
                    .or(opts.ring_steps)
                    .unwrap_or(total)
                    .clamp(1, total);
                let comm = Comm {
                    place,
                    gpus: (0..dp).map(|d| gpu(rail, d, s)).collect(),
                };
                let ready: Frontier = (0..dp)
                    .map(|d| vec![grads_ready[((d * tp + rail) * pp + s) as usize]])
                    .collect();
                let lane = Lane {
                    channel: 0,
                    channels: 1,
                    chunk_bytes: 0,
                };
                let first = b.dag.messages.len() as u32;
                ring::run(
                    &mut b,
                    &comm,
                    bytes,
                    lane,
                    &ready,
                    Phases::ALL_REDUCE,
                    steps as usize,
                );
                for msg in &mut b.dag.messages[first as usize..] {
                    msg.qp = QP_RING as u16;
                    msg.tag += TAG_RING;
                }
                rings.push(RingIndex {
                    stage: s as u32,
                    rail: rail as u32,
                    first,
                    ranks: dp as u32,
                    steps_compiled: steps,
                    steps_total: total,
                    bytes,
                });
            }
        }
    }
    Ok(StepDag {
        dag: b.finish(),
        pipeline_messages,
        rings,
        model_flops: flops_per_token(m) * (m.global_batch * m.seq) as f64,
        gpus: cfg.gpus,
        pipeline_stages: pp,
        peak_flops: cfg.gpu.peak_flops(),
    })
}
