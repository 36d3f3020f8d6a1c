//! A whole training step simulated on the flow engine, its data-parallel rings derived where
//! that is exact: the [`step_dag`] DAG (1F1B compute as message delays, TP on NVLink, the
//! pipeline's sends, every stage's DP ring all-reduce) run by [`flow::run`], so the step time
//! and MFU come from the engine, not from the closed form.
//!
//! A ring all-reduce over DP ranks has 2(dp - 1) steps: 2,046 per ring at DP 1,024, 268 M
//! ring messages in all at 131,072 GPUs, too many to simulate. Each ring's first steps are
//! simulated and the rest derived ([`derive_rings`]) by the flow engine's own rule for a flow
//! alone on its path. A first pass simulates `first_ring_steps` of every ring; while a derived
//! step of a ring would share a link with a pipeline flow, the next pass simulates that ring
//! [`MARGIN`] steps past the last such step (so the engine, not the rule, times every step
//! whose set of concurrent flows differs), up to [`MAX_PASSES`]. The result says how exact
//! the derivation is: the rule reproduces the simulated steps to the picosecond, no directed
//! link carries two ring flows, and the derived steps meet no pipeline flow (else a bound).

use std::time::Instant;

use serde::Serialize;

use super::config::TrainConfig;
use super::efficiency::Efficiency;
use super::run::TrainRun;
use super::step::step;
use super::step_dag::{self, DagOptions, RingIndex, StepDag};
use crate::error::Error;
use crate::setup::engine_choice::{self, EngineChoice};
use crate::setup::params_from_design;
use crate::workload::comm_model::CommModel;
use crate::workload::train_engine::MAX_FLOW_MESSAGES_PER_RUN;
use fabricsim_core::error::InputError;
use fabricsim_core::message::Path;
use fabricsim_core::topology::{LinkId, Topology};
use fabricsim_core::units::BitRate;
use fabricsim_flow::{self as flow, FlowParams, FlowStats, PathModel, paths};
use fabricsim_input::scenario::Scenario;
use fabricsim_mech::{RunResult, SimParams};

/// Passes before the result reports what the last one left inexact.
pub const MAX_PASSES: u32 = 4;
/// Ring steps a pass simulates past the last derived step that met a pipeline flow. The
/// meetings the next pass simulates move both the rings and the pipeline, so a third pass may
/// find new ones: at 131,072 GPUs a margin of 8 steps still left 2 rings to a third pass (as 1
/// left 3), so the margin is kept small and the passes go on until none meets.
pub const MARGIN: u32 = 1;
/// Fewest ring steps the first pass simulates: the derivation reads the drain, path and ACK
/// latencies of the last simulated step and checks the rule on the ones after step 0.
pub const MIN_FIRST_RING_STEPS: u32 = 3;
/// Ring messages a run with every ring step simulated may hold (the flow engine's limit for
/// one run of `train --engine flow`): under adaptive routing or spraying nothing is derived.
pub const MAX_SIMULATED_RING_MESSAGES: u64 = MAX_FLOW_MESSAGES_PER_RUN;
/// Ring steps the first pass simulates by default (`train`'s and flow_bench (b)'s choice).
pub const DEFAULT_FIRST_RING_STEPS: u32 = 4;

/// The fabric the step runs on: topology, the engine parameters of its profile, and the flow
/// engine's parameters (hashed paths only: see [`simulate`]).
#[derive(Clone, Copy)]
pub struct Fabric<'a> {
    pub topology: &'a Topology,
    pub params: &'a SimParams,
    pub flow: &'a FlowParams,
}

/// How `fabricsim train` times the step: the scenario's `[train] step_model`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum StepModel {
    /// The closed form (`step::step`).
    #[default]
    Analytic,
    /// The whole step simulated on the flow engine ([`simulate`]).
    FlowDag,
}

impl StepModel {
    /// The allowed spellings, for error messages.
    pub const ALLOWED: &'static str = "analytic, flow_dag";

    /// The scenario's `train.step_model` (default `analytic`), or an error naming it.
    pub fn of(s: &Scenario) -> Result<StepModel, InputError> {
        match s.file.train.as_ref().and_then(|t| t.step_model.as_deref()) {
            None | Some("analytic") => Ok(StepModel::Analytic),
            Some("flow_dag") => Ok(StepModel::FlowDag),
            Some(v) => Err(s.error(
                "train.step_model",
                format!("\"{v}\""),
                "unknown step model",
                StepModel::ALLOWED,
            )),
        }
    }
}

/// The scenario's fabric for [`simulate`]: its profile's engine parameters (as every engine
/// run of `train` takes them, `params_from_design`) and the flow engine's parameters for them
/// (`engine_choice::flow_params`). An error names the key in the way: `engine = "packet"`
/// (the step runs on the flow engine only), a job the step DAG does not model, or a profile
/// whose routing the derivation does not follow.
pub fn scenario_params(s: &Scenario, tr: &TrainRun) -> Result<(SimParams, FlowParams), InputError> {
    let flow_dag = "\"flow_dag\"";
    if EngineChoice::of(s)? == EngineChoice::Packet {
        return Err(s.error(
            "engine",
            "\"packet\"",
            "train.step_model = \"flow_dag\" simulates the whole step on the flow engine (its \
             ring steps are derived by the flow engine's rule); the packet engine cannot run it \
             (use step_model = \"analytic\" with --calibrate for packet runs)",
            "flow, auto",
        ));
    }
    step_dag::check(&tr.config)
        .map_err(|problem| s.error("train.step_model", flow_dag, problem, "analytic"))?;
    let params = params_from_design(&tr.design, true)?;
    let fp = engine_choice::flow_params(&tr.topology, &params);
    let ring_messages = ring_messages(&tr.config);
    if fp.paths != PathModel::Hash && ring_messages > MAX_SIMULATED_RING_MESSAGES {
        return Err(s.error(
            "fabric.profile",
            format!("\"{}\"", tr.design.profile.id),
            format!(
                "train.step_model = \"flow_dag\" derives ring steps along each flow's hashed \
                 path; this profile's routing ({:?}) splits messages over paths by load, so \
                 every ring step must be simulated: {ring_messages} ring messages, more than \
                 the {MAX_SIMULATED_RING_MESSAGES} one run may hold",
                params.routing
            ),
            "a profile with ECMP hashing (roce-400g, roce-800g), a smaller data-parallel \
             degree, or step_model = \"analytic\"",
        ));
    }
    Ok((params, fp))
}

/// [`simulate`] on a training run (its job, GPU, topology and communication model) with the
/// engine parameters of [`scenario_params`].
pub fn simulate_run(
    tr: &TrainRun,
    params: &SimParams,
    flow: &FlowParams,
    first_ring_steps: u32,
    on_pass: &mut dyn FnMut(&Pass),
) -> Result<FlowStep, Error> {
    let nvlink = BitRate((tr.design.gpu.nvlink_one_way_bytes_per_s() * 8.0).round() as u64);
    let fabric = Fabric {
        topology: &tr.topology,
        params,
        flow,
    };
    let eff = Efficiency::h200(&tr.design.catalog);
    let first = first_ring_steps;
    simulate(&tr.config, &eff, nvlink, &tr.comm, fabric, first, on_pass)
}

/// The DAG options of the first pass: `first_ring_steps` (at least [`MIN_FIRST_RING_STEPS`])
/// of every ring on hashed paths, every step on load-aware ones (nothing is derived there).
pub fn first_pass(cfg: &TrainConfig, paths: PathModel, first_ring_steps: u32) -> DagOptions {
    let total = 2 * (cfg.par.dp as u32).saturating_sub(1);
    let first = match paths == PathModel::Hash {
        true => first_ring_steps.max(MIN_FIRST_RING_STEPS).min(total),
        false => total,
    };
    DagOptions {
        ring_steps: None,
        ring_steps_each: vec![first; (cfg.par.tp * cfg.par.pp) as usize],
    }
}

/// One pass of the simulation.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Pass {
    pub ring_steps_simulated: u64,
    pub ring_steps_total: u64,
    pub messages: u64,
    /// Rings whose derived steps share a link with a pipeline flow (simulated further next).
    pub rings_meeting_pipeline: u64,
    /// Wall time of the DAG's compilation and of the engine run (not serialized: output
    /// must not depend on the machine).
    #[serde(skip)]
    pub dag_wall_s: f64,
    #[serde(skip)]
    pub engine_wall_s: f64,
}

/// The flow engine's figures for the last pass.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct EngineStats {
    pub messages: u64,
    pub flows: u64,
    pub routes: u64,
    pub peak_active_flows: u64,
    pub event_times: u64,
    pub solves: u64,
    pub flows_resolved: u64,
    pub cache_hits: u64,
    pub end_ps: u64,
    pub fct_p50_ps: u64,
    pub fct_p99_ps: u64,
    pub fct_max_ps: u64,
}

impl EngineStats {
    pub fn of(r: &RunResult, st: &FlowStats) -> EngineStats {
        let s = &r.summary;
        EngineStats {
            messages: s.messages_total,
            flows: st.flows,
            routes: st.routes,
            peak_active_flows: st.peak_active,
            event_times: st.batches,
            solves: st.solve.resolves,
            flows_resolved: st.solve.flows_solved,
            cache_hits: st.solve.cache_hits,
            end_ps: r.sim.end_ps,
            fct_p50_ps: s.fct_p50_ps.unwrap_or(0),
            fct_p99_ps: s.fct_p99_ps.unwrap_or(0),
            fct_max_ps: s.max_fct_ps.unwrap_or(0),
        }
    }
}

/// How far the derived ring steps can be trusted.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Checks {
    /// Simulated ring messages after step 0 the rule was checked on, and reproduced to the
    /// picosecond.
    pub checked: u64,
    pub reproduced: u64,
    /// Missed ones that met a pipeline flow on a link (the engine simulated it).
    pub met_pipeline: u64,
    /// Missed ones with no pipeline flow on their links then: the rule is wrong for them.
    pub unexplained: u64,
    /// Directed links carrying two ring flows (the rule assumes none).
    pub shared_links: u64,
    /// Rings whose derived steps meet no other flow.
    pub exact_rings: u64,
    /// Pipeline flows the inexact rings' derived steps meet, the most wire time they can take
    /// from one such ring, and the least time such a ring ends before the step.
    pub pipeline_flows_met: u64,
    pub worst_ring_overlap_ps: u64,
    pub least_ring_slack_ps: Option<u64>,
    /// The most one (replica, rail)'s pipeline can be slowed by derived ring flows on its
    /// links (the sum of its sends' wire times there).
    pub pipeline_bound_ps: u64,
    /// The ring that ends the step, and whether its derived steps meet no other flow.
    pub last_ring_stage: u32,
    pub last_ring_rail: u32,
    pub last_ring_exact: bool,
    /// `exact` (for this model), `bounded` (exact up to `pipeline_bound_ps`) or
    /// `approximation`.
    pub verdict: &'static str,
}

/// A whole step on the flow engine, beside the analytic step of the same job.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct FlowStep {
    pub gpus: u64,
    pub tp: u64,
    pub pp: u64,
    pub dp: u64,
    pub stage_layers: Vec<u64>,
    pub micro_batches: u64,
    pub step_time_s: f64,
    /// The last pipeline message's end (compute, TP and sends), then the DP all-reduce.
    pub pipeline_s: f64,
    pub dp_all_reduce_s: f64,
    pub mfu: f64,
    pub analytic_step_time_s: f64,
    pub analytic_mfu: f64,
    pub passes: Vec<Pass>,
    pub messages: u64,
    pub pipeline_messages: u64,
    pub rings: u64,
    pub ring_ranks: u32,
    pub ring_steps_per_ring: u32,
    pub ring_steps_simulated: u64,
    pub ring_steps_derived: u64,
    pub ring_messages_derived: u64,
    /// Per simulated ring step k >= 1 (of ring 0's count), min and max over all rings' edges
    /// of finish(position d, step k) - finish(position d - 1, step k - 1).
    pub ring_step_min_max_ps: Vec<[u64; 2]>,
    pub checks: Checks,
    pub engine: EngineStats,
}

/// Simulates `cfg`'s step on `fabric` with the flow engine, the first pass simulating
/// `first_ring_steps` (at least [`MIN_FIRST_RING_STEPS`]) of every ring; `comm` times the
/// analytic step beside it; `on_pass` sees each pass as it ends. `Err` names what the DAG
/// or the derivation does not model (MoE, cp > 1, ZeRO 3; a path model other than hashing,
/// whose paths the derivation could not follow).
pub fn simulate(
    cfg: &TrainConfig,
    eff: &Efficiency,
    nvlink: BitRate,
    comm: &dyn CommModel,
    fabric: Fabric,
    first_ring_steps: u32,
    on_pass: &mut dyn FnMut(&Pass),
) -> Result<FlowStep, Error> {
    // Hashed paths: derive what the rule makes exact. Load-aware paths (adaptive routing,
    // spraying) move with the load, so the rule cannot follow them: simulate every step.
    let derive = fabric.flow.paths == PathModel::Hash;
    if !derive && ring_messages(cfg) > MAX_SIMULATED_RING_MESSAGES {
        return Err(Error::Workload(format!(
            "the whole-step simulation derives ring steps along each flow's hashed path; the \
             flow engine's path model here is {:?} (adaptive routing or spraying), so every \
             ring step must be simulated: {} ring messages, more than the {} one run may hold",
            fabric.flow.paths,
            ring_messages(cfg),
            MAX_SIMULATED_RING_MESSAGES
        )));
    }
    let analytic = step(cfg, eff, comm);
    let total = 2 * (cfg.par.dp as u32).saturating_sub(1);
    let mut opts = first_pass(cfg, fabric.flow.paths, first_ring_steps);
    let mut passes = Vec::new();
    loop {
        let t0 = Instant::now();
        let sd = step_dag::compile(cfg, eff, nvlink, opts.clone())?;
        let dag_wall_s = t0.elapsed().as_secs_f64();
        let t1 = Instant::now();
        let (r, st) = flow::run(fabric.topology, fabric.params, &sd.dag, fabric.flow)?;
        let engine_wall_s = t1.elapsed().as_secs_f64();
        if r.sim.status == fabricsim_mech::Status::Interrupted {
            return Err(Error::Workload(
                "the whole-step simulation was interrupted (a stop request)".into(),
            ));
        }
        let d = match derive {
            true => derive_rings(
                fabric.topology,
                fabric.params,
                &fabric.flow.failed_links,
                &sd,
                &r,
            ),
            false => simulated_rings(&sd, &r),
        };
        let met = d.last_met.iter().filter(|m| m.is_some()).count() as u64;
        let p = Pass {
            ring_steps_simulated: opts.ring_steps_each.iter().map(|&k| k as u64).sum(),
            ring_steps_total: total as u64 * sd.rings.len() as u64,
            messages: sd.dag.messages.len() as u64,
            rings_meeting_pipeline: met,
            dag_wall_s,
            engine_wall_s,
        };
        on_pass(&p);
        passes.push(p);
        if met == 0 || passes.len() as u32 == MAX_PASSES {
            let mut out = result(cfg, &sd, &r, &st, &d, passes);
            (out.analytic_step_time_s, out.analytic_mfu) = (analytic.step_time_s, analytic.mfu);
            return Ok(out);
        }
        for (i, m) in d.last_met.iter().enumerate() {
            if let Some(k) = m {
                opts.ring_steps_each[i] = (k + 1 + MARGIN).clamp(opts.ring_steps_each[i], total);
            }
        }
    }
}

/// The result of the last pass (the analytic figures are filled in by the caller).
fn result(
    cfg: &TrainConfig,
    sd: &StepDag,
    r: &RunResult,
    st: &FlowStats,
    d: &Derived,
    passes: Vec<Pass>,
) -> FlowStep {
    let pipe_end = r.messages[..sd.pipeline_messages as usize]
        .iter()
        .filter_map(|m| m.finish_ps)
        .max()
        .unwrap_or(0);
    let end_ps = pipe_end.max(d.end_ps);
    let step_s = end_ps as f64 / 1e12;
    let rings = sd.rings.len();
    let exact: Vec<bool> = (0..rings).map(|i| d.overlaps[i] == 0).collect();
    // An inexact ring's end plus its bound stays below the step's end: the step time holds.
    let holds = (0..rings)
        .all(|i| exact[i] || d.ring_end[i] + d.overlap_ps[i] + d.pipeline_bound_ps <= end_ps);
    let (ranks, per_ring) = sd
        .rings
        .first()
        .map_or((0, 0), |r| (r.ranks, r.steps_total));
    let simulated: u64 = sd.rings.iter().map(|r| r.steps_compiled as u64).sum();
    let derived = per_ring as u64 * rings as u64 - simulated;
    let inexact = (0..rings).filter(|&i| !exact[i]);
    let last = sd.rings.get(d.last_ring);
    let last_exact = exact.get(d.last_ring).copied().unwrap_or(true);
    let verdict = if !(last_exact && holds && d.shared_links == 0 && d.unexplained == 0) {
        "approximation"
    } else if d.pipeline_bound_ps == 0 {
        "exact"
    } else {
        "bounded"
    };
    FlowStep {
        gpus: sd.gpus,
        tp: cfg.par.tp,
        pp: cfg.par.pp,
        dp: cfg.par.dp,
        stage_layers: cfg.par.stage_layers.clone(),
        micro_batches: cfg.par.micro_batches(cfg.model.global_batch),
        step_time_s: step_s,
        pipeline_s: pipe_end as f64 / 1e12,
        dp_all_reduce_s: step_s - pipe_end as f64 / 1e12,
        mfu: sd.mfu(step_s),
        analytic_step_time_s: 0.0,
        analytic_mfu: 0.0,
        passes,
        messages: sd.dag.messages.len() as u64,
        pipeline_messages: sd.pipeline_messages as u64,
        rings: rings as u64,
        ring_ranks: ranks,
        ring_steps_per_ring: per_ring,
        ring_steps_simulated: simulated,
        ring_steps_derived: derived,
        ring_messages_derived: derived * ranks as u64,
        ring_step_min_max_ps: d.per_step.iter().skip(1).map(|&(a, b)| [a, b]).collect(),
        checks: Checks {
            checked: d.checked,
            reproduced: d.reproduced,
            met_pipeline: d.checked - d.reproduced - d.unexplained,
            unexplained: d.unexplained,
            shared_links: d.shared_links,
            exact_rings: exact.iter().filter(|&&e| e).count() as u64,
            pipeline_flows_met: d.overlaps.iter().sum(),
            worst_ring_overlap_ps: inexact.clone().map(|i| d.overlap_ps[i]).max().unwrap_or(0),
            least_ring_slack_ps: inexact.map(|i| end_ps - d.ring_end[i]).min(),
            pipeline_bound_ps: d.pipeline_bound_ps,
            last_ring_stage: last.map_or(0, |r| r.stage),
            last_ring_rail: last.map_or(0, |r| r.rail),
            last_ring_exact: last_exact,
            verdict,
        },
        engine: EngineStats::of(r, st),
    }
}

/// What [`derive_rings`] found.
struct Derived {
    /// The latest finish of a ring's last step, and that ring.
    end_ps: u64,
    last_ring: usize,
    /// Per simulated step (of ring 0's count): min and max over all ring edges of
    /// finish(d, k) - finish(d-1, k-1).
    per_step: Vec<(u64, u64)>,
    checked: u64,
    reproduced: u64,
    /// Simulated ring messages the rule misses without a pipeline flow on their links then.
    unexplained: u64,
    shared_links: u64,
    /// Per ring: its derived end, the pipeline flows that share one of its links while one
    /// of its derived steps runs there, their wire time on that link, and its last derived
    /// step that met one.
    ring_end: Vec<u64>,
    overlaps: Vec<u64>,
    overlap_ps: Vec<u64>,
    last_met: Vec<Option<u32>>,
    /// The most one (replica, rail)'s pipeline can be slowed by derived ring flows on its
    /// links: the sum of its sends' wire times there.
    pipeline_bound_ps: u64,
}

/// Ring messages of `cfg`'s step: a ring per (stage, rail) of `dp` ranks, 2(dp - 1) steps.
fn ring_messages(cfg: &TrainConfig) -> u64 {
    let dp = cfg.par.dp as u64;
    (cfg.par.tp * cfg.par.pp) as u64 * dp * 2 * dp.saturating_sub(1)
}

/// What the simulated ring steps give by themselves: per step the spread of
/// finish(d, k) - finish(d - 1, k - 1), each ring's last simulated finish and the latest of
/// them; nothing derived, nothing checked (the whole result when every step was simulated).
fn simulated_rings(sd: &StepDag, r: &RunResult) -> Derived {
    let rings = sd.rings.len();
    let n = sd.rings.first().map_or(0, |r| r.ranks as usize);
    let mut out = Derived {
        end_ps: 0,
        last_ring: 0,
        per_step: vec![(u64::MAX, 0); sd.rings.first().map_or(0, |r| r.steps_compiled) as usize],
        checked: 0,
        reproduced: 0,
        unexplained: 0,
        shared_links: 0,
        ring_end: vec![0; rings],
        overlaps: vec![0; rings],
        overlap_ps: vec![0; rings],
        last_met: vec![None; rings],
        pipeline_bound_ps: 0,
    };
    let fin = |i: usize| r.messages[i].finish_ps.expect("every message completes");
    let id = |ri: &RingIndex, k: u32, d: usize| (ri.first + k * ri.ranks) as usize + d;
    for (ix, ri) in sd.rings.iter().enumerate() {
        if ri.steps_compiled == 0 {
            continue;
        }
        for k in 1..ri.steps_compiled {
            for d in 0..n {
                let gap = fin(id(ri, k, d)) - fin(id(ri, k - 1, (d + n - 1) % n));
                if let Some(s) = out.per_step.get_mut(k as usize) {
                    *s = (s.0.min(gap), s.1.max(gap));
                }
            }
        }
        let last = ri.steps_compiled.saturating_sub(1);
        out.ring_end[ix] = (0..n).map(|d| fin(id(ri, last, d))).max().unwrap_or(0);
        if out.ring_end[ix] > out.end_ps {
            (out.end_ps, out.last_ring) = (out.ring_end[ix], ix);
        }
    }
    out
}

/// The time `bytes` take on the GPU's NVLink (`flow::fluid`: serial per sender at the DAG's
/// NVLink rate).
fn nvlink_ps(sd: &StepDag, bytes: u64) -> u64 {
    let rate = sd
        .dag
        .nvlink_rate
        .expect("a DAG with NVLink messages has the rate");
    rate.serialize(bytes).ps()
}

/// The ring steps the run did not simulate, from the last simulated one, by the flow engine's
/// rule for a flow alone on its path (`flow::fluid`): ring position d's step k is posted when
/// position d-1's step k-1 completes; its bytes start after the NIC latency, or when its QP's
/// previous message has drained if later; they drain at the route's line rate (wire bytes,
/// `ceil(bits x 10^12 / rate)` ps); the receiver has them one path latency later and the
/// sender's completion comes one ACK latency after that. Exact when every ring flow is alone
/// on its links: checked by the rule reproducing the simulated steps, no directed link
/// carrying two ring flows, and no pipeline flow on a ring edge's links (from its post to its
/// completion) while one of that edge's derived steps runs (bytes start to receipt).
fn derive_rings(
    topo: &Topology,
    p: &SimParams,
    failed: &[LinkId],
    sd: &StepDag,
    r: &RunResult,
) -> Derived {
    let rings = sd.rings.len();
    let n = sd.rings.first().map_or(0, |r| r.ranks as usize);
    let mut out = simulated_rings(sd, r);
    if rings == 0 {
        return out;
    }
    (out.end_ps, out.last_ring) = (0, 0);
    let router = paths::Router::with_failed(topo, p.routing, failed);
    let caps = paths::capacities(topo);
    let nic = p.nic_latency.ps();
    let mut links = Vec::new();
    // The directed links of message `i` (a Net message) and their line rate.
    let route = |i: usize, links: &mut Vec<u32>| -> u64 {
        let m = &r.messages[i];
        let qp = m.qp.expect("a fabric message");
        let (hash, _) = paths::qp_hashes(p, qp, m.src, m.dst);
        links.clear();
        let hm = PathModel::Hash;
        paths::subflow_links(topo, &router, hm, m.src, m.dst, hash, 0, |_| 0, links);
        links.iter().map(|&l| caps[l as usize]).min().unwrap_or(0)
    };
    let fin = |i: usize| r.messages[i].finish_ps.expect("every message completes");
    let recv = |i: usize| r.messages[i].recv_ps.expect("every message completes");
    // Ring edges (ring `ix`, position d: edge `ix * n + d`): per directed link how many ring
    // flows use it and the edge (the last one seen); per edge its drain time, path and ACK
    // latencies.
    let id = |ri: &RingIndex, k: u32, d: usize| (ri.first + k * ri.ranks) as usize + d;
    let mut used = vec![0u8; caps.len()];
    let mut edge_of = vec![u32::MAX; caps.len()];
    let edges = rings * n;
    let (mut drain, mut lat, mut ack) = (vec![0u64; edges], vec![0u64; edges], vec![0u64; edges]);
    // Per edge the sender's delay before the bytes move (`flow::fluid`'s `bytes_start`): the
    // NIC latency on the fabric, none on NVLink.
    let mut post_delay = vec![nic; edges];
    // Ring edges inside a server (DP ranks on one node's GPUs) take the GPU's NVLink, serial
    // per sender (`flow::fluid`'s `start`): per sending host, its edge.
    let mut nv_edge_of = vec![u32::MAX; topo.num_hosts()];
    for (ix, ri) in sd.rings.iter().enumerate() {
        for d in 0..n {
            let (e, i) = (ix * n + d, id(ri, ri.steps_compiled - 1, d));
            let m = &sd.dag.messages[i];
            if m.path == Path::NvLink {
                drain[e] = nvlink_ps(sd, m.bytes);
                post_delay[e] = 0;
                ack[e] = fin(i) - recv(i);
                nv_edge_of[m.src.idx()] = e as u32;
                continue;
            }
            let rate = route(i, &mut links);
            let wire = paths::wire_bytes(p, r.messages[i].bytes) as u128;
            drain[e] = (wire * 8 * 1_000_000_000_000).div_ceil(rate as u128) as u64;
            lat[e] = paths::one_way_ps(topo, p, &links);
            ack[e] = fin(i) - recv(i);
            for &l in &links {
                used[l as usize] = used[l as usize].saturating_add(1);
                edge_of[l as usize] = e as u32;
            }
        }
    }
    out.shared_links = used.iter().filter(|&&u| u > 1).count() as u64;
    // Pipeline flows on a ring edge's links, or on its sender's NVLink: (post, finish,
    // message, its wire time there) per edge.
    let mut on_edge: Vec<Vec<(u64, u64, u32, u64)>> = vec![Vec::new(); edges];
    for (i, m) in sd.dag.messages[..sd.pipeline_messages as usize]
        .iter()
        .enumerate()
    {
        let post = r.messages[i].start_ps.expect("posted");
        if m.path == Path::NvLink {
            if let Some(&e) = nv_edge_of.get(m.src.idx()).filter(|&&e| e != u32::MAX) {
                on_edge[e as usize].push((post, fin(i), i as u32, nvlink_ps(sd, m.bytes)));
            }
            continue;
        }
        route(i, &mut links);
        for &l in &links {
            if let Some(&e) = edge_of.get(l as usize).filter(|&&e| e != u32::MAX) {
                let wire = paths::wire_bytes(p, m.bytes) as u128 * 8 * 1_000_000_000_000;
                let t = wire.div_ceil(caps[l as usize] as u128) as u64;
                on_edge[e as usize].push((post, fin(i), i as u32, t));
            }
        }
    }
    // Per pipeline message: the most wire time it lost to a derived ring flow on one link.
    let mut met_ps = vec![0u64; sd.pipeline_messages as usize];
    let mut missed: Vec<(usize, usize)> = Vec::new();
    for (ix, ri) in sd.rings.iter().enumerate() {
        let last = ri.steps_compiled - 1;
        let e0 = ix * n;
        for k in 1..=last {
            for d in 0..n {
                let e = e0 + d;
                let prev = fin(id(ri, k - 1, (d + n - 1) % n));
                out.checked += 1;
                // The rule: (recv, finish) of step k at d from step k-1's.
                let bytes_start = (prev + post_delay[e]).max(recv(id(ri, k - 1, d)) - lat[e]);
                let rv = bytes_start + drain[e] + lat[e];
                if (rv, rv + ack[e]) == (recv(id(ri, k, d)), fin(id(ri, k, d))) {
                    out.reproduced += 1;
                } else {
                    missed.push((id(ri, k, d), e));
                }
            }
        }
        let mut rv: Vec<u64> = (0..n).map(|d| recv(id(ri, last, d))).collect();
        let mut f: Vec<u64> = (0..n).map(|d| fin(id(ri, last, d))).collect();
        let pipe_edges: Vec<usize> = (0..n).filter(|&d| !on_edge[e0 + d].is_empty()).collect();
        for k in last + 1..ri.steps_total {
            // The rule in place: position d's step reads d-1's previous one, so positions go
            // down (the ring's wrap read first); 268 M steps at 131,072 GPUs, no division.
            let wrap = f[n - 1];
            for d in (0..n).rev() {
                let e = e0 + d;
                let prev_fin = if d == 0 { wrap } else { f[d - 1] };
                let bytes_start = (prev_fin + post_delay[e]).max(rv[d] - lat[e]);
                rv[d] = bytes_start + drain[e] + lat[e];
                f[d] = rv[d] + ack[e];
            }
            for &d in &pipe_edges {
                let e = e0 + d;
                let start = rv[d] - drain[e] - lat[e];
                for &(a, b, i, t) in &on_edge[e] {
                    if a < rv[d] && b > start {
                        if met_ps[i as usize] == 0 {
                            out.overlaps[ix] += 1;
                            out.overlap_ps[ix] += t;
                        }
                        met_ps[i as usize] = met_ps[i as usize].max(t);
                        out.last_met[ix] = Some(k);
                    }
                }
            }
        }
        out.ring_end[ix] = f.iter().copied().max().unwrap_or(0);
        if out.ring_end[ix] > out.end_ps {
            (out.end_ps, out.last_ring) = (out.ring_end[ix], ix);
        }
    }
    // The derived ring flows were not in the engine to slow the pipeline flows they met: the
    // delay runs down the met flows' (replica, rail) pipeline, whose sends are contiguous.
    let chains = (sd.gpus / sd.pipeline_stages) as usize;
    let per_chain = sd.pipeline_messages as usize / chains;
    let mut chain_extra = vec![0u64; chains];
    for (i, &t) in met_ps.iter().enumerate() {
        chain_extra[i / per_chain] += t;
    }
    out.pipeline_bound_ps = chain_extra.iter().copied().max().unwrap_or(0);
    for &(i, e) in &missed {
        let (post, end) = (r.messages[i].start_ps.expect("posted"), fin(i));
        if !on_edge[e].iter().any(|&(a, b, _, _)| a < end && b > post) {
            out.unexplained += 1;
        }
    }
    out
}

/// The result as text, one figure per line group (after the analytic report in `train`).
pub fn to_text(f: &FlowStep) -> String {
    let c = &f.checks;
    let e = &f.engine;
    let us = |ps: u64| ps as f64 / 1e6;
    let ms = |ps: u64| ps as f64 / 1e9;
    let mut s = format!(
        "\nWhole step on the flow engine (train.step_model = \"flow_dag\")\n\
         {} GPUs, TP {} PP {} DP {}, stages of {:?} layers, {} micro-batches\n",
        f.gpus, f.tp, f.pp, f.dp, f.stage_layers, f.micro_batches
    );
    for (i, p) in f.passes.iter().enumerate() {
        s += &format!(
            "  pass {}: {} ring steps simulated of {} ({} messages); rings whose derived steps \
             share a link with a pipeline flow: {}\n",
            i + 1,
            p.ring_steps_simulated,
            p.ring_steps_total,
            p.messages,
            p.rings_meeting_pipeline
        );
    }
    s += &format!(
        "  DAG of {} messages: {} pipeline (compute as delays, TP on NVLink, sends) + {} rings \
         x {} ranks x (simulated steps) of {} ring all-reduce steps\n",
        f.messages, f.pipeline_messages, f.rings, f.ring_ranks, f.ring_steps_per_ring
    );
    s += &format!(
        "  engine: {} flows, {} routes, peak {} active; {} event times, {} solves ({} flows \
         re-solved, {} cache hits); end {:.3} us, FCT p50 {:.3} us p99 {:.3} us max {:.3} us\n",
        e.flows,
        e.routes,
        e.peak_active_flows,
        e.event_times,
        e.solves,
        e.flows_resolved,
        e.cache_hits,
        us(e.end_ps),
        us(e.fct_p50_ps),
        us(e.fct_p99_ps),
        us(e.fct_max_ps),
    );
    for (k, [lo, hi]) in f.ring_step_min_max_ps.iter().enumerate().take(3) {
        s += &format!(
            "  ring step {}: {:.3} .. {:.3} us from the previous rank's step (all rings)\n",
            k + 1,
            us(*lo),
            us(*hi)
        );
    }
    // Under load-aware paths every ring step is simulated: nothing derived, nothing checked.
    let all_simulated = f.ring_steps_derived == 0 && c.checked == 0;
    if all_simulated {
        s += "  every ring step simulated (paths split by load: the rule is not used)\n";
    } else {
        s += &format!(
            "  derived: {} ring steps ({} messages) by the flow engine's rule for a flow alone on \
         its path; the rule reproduces {} of {} simulated ring messages after step 0 to the \
         picosecond ({} met a pipeline flow; unexplained: {}); directed links carrying two \
         ring flows: {}; exact rings: {} of {}\n",
            f.ring_steps_derived,
            f.ring_messages_derived,
            c.reproduced,
            c.checked,
            c.met_pipeline,
            c.unexplained,
            c.shared_links,
            c.exact_rings,
            f.rings,
        );
    }
    if let Some(slack) = c.least_ring_slack_ps {
        s += &format!(
            "  the other rings' derived steps share a link with {} pipeline flows: at most \
             {:.3} ms per ring, and those rings end at least {:.3} ms before the step does\n",
            c.pipeline_flows_met,
            ms(c.worst_ring_overlap_ps),
            ms(slack)
        );
    }
    s += &format!(
        "  the step ends with ring (stage {}, rail {}), derived {}; the step time is {}\n",
        c.last_ring_stage,
        c.last_ring_rail,
        match (all_simulated, c.last_ring_exact) {
            (true, _) => "none",
            (false, true) => "exactly",
            (false, false) => "NOT exactly",
        },
        match c.verdict {
            "exact" => "exact for this model".to_string(),
            "bounded" => format!(
                "exact for this model up to +{:.3} ms (pipeline sends sharing a link with a \
                 derived ring flow)",
                ms(c.pipeline_bound_ps)
            ),
            _ => "an APPROXIMATION".to_string(),
        }
    );
    s += &format!(
        "  step time {:.6} s (pipeline and TP {:.6} s, then the DP all-reduce {:.6} s), MFU \
         {:.1}%; analytic step {:.3} s, MFU {:.1}%\n",
        f.step_time_s,
        f.pipeline_s,
        f.dp_all_reduce_s,
        100.0 * f.mfu,
        f.analytic_step_time_s,
        100.0 * f.analytic_mfu
    );
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::train::run;
    use fabricsim_input::test_util::scenario;

    /// A Llama-3-8B on `gpus` H100s, TP 8, PP `pp`, the gradient all-reduce after the flush
    /// in one bucket (the DAG's one ring per stage and rail).
    fn job(gpus: &str, pp: &str, extra: &[(&str, &str)]) -> Scenario {
        let mut flags = vec![
            ("--gpus", gpus),
            ("--model", "llama3-8b"),
            ("--global-batch", "32"),
            ("--tp", "8"),
            ("--pp", pp),
            ("--dp-overlap", "false"),
            ("--dp-bucket-mb", "100000"),
        ];
        flags.extend_from_slice(extra);
        scenario(&flags)
    }

    #[test]
    fn derived_rings_give_the_fully_simulated_step_to_the_picosecond() {
        // DP 8 (128 GPUs, PP 2) and DP 4 (128 GPUs, PP 4): rings of 2(dp-1) = 14 and 6 steps,
        // 4 simulated and the rest derived. Where the result calls itself exact, the same DAG
        // with every ring step simulated must end at the same picosecond.
        for pp in ["2", "4"] {
            let s = job("128", pp, &[]);
            let tr = run::run(&s).unwrap();
            let (params, fp) = scenario_params(&s, &tr).unwrap();
            let mut passes = 0;
            let f = simulate_run(&tr, &params, &fp, DEFAULT_FIRST_RING_STEPS, &mut |_| {
                passes += 1
            })
            .unwrap();
            assert_eq!(passes, f.passes.len());
            let total = f.rings * f.ring_steps_per_ring as u64;
            assert_eq!(f.ring_steps_simulated + f.ring_steps_derived, total);
            assert!(f.ring_steps_derived > 0, "pp {pp}: nothing derived");
            assert_eq!(f.checks.verdict, "exact", "pp {pp}: {:?}", f.checks);
            assert_eq!(f.checks.reproduced, f.checks.checked);
            let nvlink = BitRate((tr.design.gpu.nvlink_one_way_bytes_per_s() * 8.0).round() as u64);
            let eff = Efficiency::h200(&tr.design.catalog);
            let full = step_dag::compile(&tr.config, &eff, nvlink, DagOptions::default()).unwrap();
            let (r, _) = flow::run(&tr.topology, &params, &full.dag, &fp).unwrap();
            let end = r.messages.iter().filter_map(|m| m.finish_ps).max().unwrap();
            assert_eq!((f.step_time_s * 1e12).round() as u64, end, "pp {pp}");
            assert_eq!(f.analytic_step_time_s, tr.report.step_time_s);
        }
    }

    /// The step DAG is rail-aligned by construction (one ring per stage and rail, pipeline
    /// sends between the same TP rank of two servers), so on a rail-only fabric (no spine joins
    /// two rails) no message needs the PXN relay (`topology::pxn::relay`) the per-message runs
    /// apply, and the whole-step run hands the DAG to the flow engine as compiled. TP 2 puts
    /// four GPUs of a DP group on each server: the case where a ring could have crossed rails.
    #[test]
    fn a_rail_only_step_needs_no_pxn_relay() {
        let s = scenario(&[
            ("--gpus", "64"),
            ("--model", "llama3-8b"),
            ("--global-batch", "32"),
            ("--tp", "2"),
            ("--pp", "2"),
            ("--dp-overlap", "false"),
            ("--dp-bucket-mb", "100000"),
            ("--topology", "rail-only"),
        ]);
        let tr = run::run(&s).unwrap();
        assert!(tr.topology.planes > 1);
        let nvlink = BitRate((tr.design.gpu.nvlink_one_way_bytes_per_s() * 8.0).round() as u64);
        let eff = Efficiency::h200(&tr.design.catalog);
        let full = step_dag::compile(&tr.config, &eff, nvlink, DagOptions::default()).unwrap();
        let relayed = fabricsim_core::topology::pxn::relay(&tr.topology, &full.dag).unwrap();
        assert_eq!(relayed.messages, full.dag.messages);
        let (params, fp) = scenario_params(&s, &tr).unwrap();
        let f = simulate_run(&tr, &params, &fp, DEFAULT_FIRST_RING_STEPS, &mut |_| ()).unwrap();
        assert!(f.step_time_s > 0.0);
    }

    #[test]
    fn under_adaptive_routing_every_ring_step_is_simulated() {
        // ib-ndr routes adaptively: its flows' paths move with the load, so nothing is
        // derived; the result is the fully simulated DAG's end, in one pass.
        let s = job("128", "2", &[("--fabric", "ib-ndr")]);
        let tr = run::run(&s).unwrap();
        let (params, fp) = scenario_params(&s, &tr).unwrap();
        assert_ne!(fp.paths, PathModel::Hash);
        let f = simulate_run(&tr, &params, &fp, DEFAULT_FIRST_RING_STEPS, &mut |_| ()).unwrap();
        assert_eq!((f.passes.len(), f.ring_steps_derived), (1, 0));
        assert_eq!(f.checks.verdict, "exact");
        assert!(
            f.ring_step_min_max_ps
                .iter()
                .all(|&[lo, hi]| 0 < lo && lo <= hi)
        );
        let nvlink = BitRate((tr.design.gpu.nvlink_one_way_bytes_per_s() * 8.0).round() as u64);
        let eff = Efficiency::h200(&tr.design.catalog);
        let full = step_dag::compile(&tr.config, &eff, nvlink, DagOptions::default()).unwrap();
        let (r, _) = flow::run(&tr.topology, &params, &full.dag, &fp).unwrap();
        let end = r.messages.iter().filter_map(|m| m.finish_ps).max().unwrap();
        assert_eq!((f.step_time_s * 1e12).round() as u64, end);
        assert!(to_text(&f).contains("every ring step simulated"));
        // DP 1,024 (8,192 GPUs, TP 8): 8 rings x 1,024 ranks x 2,046 steps, too many.
        let s = job(
            "8192",
            "1",
            &[("--fabric", "ib-ndr"), ("--global-batch", "2048")],
        );
        let e = scenario_params(&s, &run::run(&s).unwrap())
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("16760832 ring messages") && e.contains("ib-ndr"),
            "{e}"
        );
    }

    #[test]
    fn bad_step_model_and_packet_engine_are_input_errors() {
        let s = Scenario::parse("s.toml", "[train]\nstep_model = \"fluid\"\n").unwrap();
        let e = StepModel::of(&s).unwrap_err().to_string();
        assert!(
            e.contains("s.toml") && e.contains("step_model") && e.contains("fluid"),
            "{e}"
        );
        assert!(e.contains(StepModel::ALLOWED), "{e}");
        let s = job(
            "64",
            "2",
            &[("--engine", "packet"), ("--step-model", "flow_dag")],
        );
        assert_eq!(StepModel::of(&s).unwrap(), StepModel::FlowDag);
        let e = scenario_params(&s, &run::run(&s).unwrap())
            .unwrap_err()
            .to_string();
        assert!(e.contains("--engine") && e.contains("flow engine"), "{e}");
    }
}
