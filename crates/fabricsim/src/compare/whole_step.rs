//! The training step as it runs: the step's DAG (`workload::train::step_dag`: 1F1B compute as
//! delays, TP on NVLink or across servers, the pipeline's sends and every stage's DP ring
//! all-reduce, Narayanan et al. 2021, arXiv 2104.04473) simulated whole on the flow engine
//! (`workload::train::flow_step`), so the collectives that run at once share links and
//! contend; and its ideal-network baseline from the same DAG with every message across servers
//! empty. Where the DAG does not model the job (MoE, cp > 1, ZeRO 3), the engine choice is the
//! packet engine, or the run would not fit the flow engine's bounds, the step stays the
//! per-collective alpha-beta fit ([`super::step`]) and the reason is reported.
//!
//! The flow engine draws from the seed only for random loss (`flow/src/loss.rs`); the DAG runs
//! lossless (loss is costed in expectation, `workload::train::loss_cost`), so one run stands
//! for every seed of a fabric ([`run`] takes none), and [`seed_step`] is each seed's step as
//! `compare`, `sweep` and the claims all time it.

use serde::Serialize;

use super::engine::params;
use super::memo;
use super::step::{EngineStep, engine_step_with};
use super::variant::Variant;
use crate::error::Error;
use crate::setup::engine_choice::{self, EngineChoice};
use crate::workload::comm_model::AlphaBetaModel;
use crate::workload::link_params::FabricParams;
use crate::workload::train::config::TrainConfig;
use crate::workload::train::efficiency::Efficiency;
use crate::workload::train::flow_step::{self, FlowStep};
use crate::workload::train::step::StepReport;
use crate::workload::train::step_dag::{self, DagOptions};
use fabricsim_core::message::Path;
use fabricsim_core::topology::Topology;
use fabricsim_core::units::{BitRate, Time};
use fabricsim_input::scenario::Design;

/// The whole step on the flow engine and its ideal.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct DagStep {
    pub step_time_s: f64,
    pub mfu: f64,
    /// The last pipeline message's end (compute, TP and the pipeline's sends, slowed by what
    /// shares their links), and the DP all-reduce after it.
    pub pipeline_s: f64,
    pub dp_tail_s: f64,
    /// The same DAG with every message across servers empty and instant (an infinitely fast
    /// fabric): its end and MFU.
    pub ideal_step_s: f64,
    pub ideal_mfu: f64,
    /// `exact`, `bounded` or `approximation` (`flow_step::Checks::verdict`).
    pub verdict: &'static str,
    pub messages: u64,
    pub ring_steps_derived: u64,
    /// The class the pipeline's excess over the ideal goes to: `pp`, or `tp` without a
    /// pipeline (TP groups across servers).
    pub pipeline_class: &'static str,
    /// Flow-engine runs behind it: the step's passes and its ideal.
    pub engine_runs: u64,
}

/// How the step of one fabric was timed.
#[derive(Clone, Debug, PartialEq)]
pub enum Timing {
    Dag(DagStep),
    /// The per-collective fits, and why the DAG did not run.
    Fallback(String),
}

/// Why `cfg` on `v` keeps the per-collective fits, if it does, before any run.
fn refused(cfg: &TrainConfig, v: &Variant, gpus_per_node: u64) -> Option<String> {
    if v.engine == EngineChoice::Packet {
        return Some("engine = \"packet\": the step DAG runs on the flow engine only".into());
    }
    if let Err(e) = step_dag::check(cfg) {
        return Some(e.to_string());
    }
    // The ideal ring is instant only when no two DP ranks of a ring share a server.
    if cfg.par.dp > 1 && cfg.par.tp < gpus_per_node {
        return Some(format!(
            "TP {} < {gpus_per_node} GPUs per server: DP ranks share a server (NVLink ring \
             edges the ideal baseline does not separate)",
            cfg.par.tp
        ));
    }
    None
}

/// The whole step of `cfg` on `v`'s fabric (its engine parameters without loss: nothing is
/// drawn from a seed), or the reason the fits stay. A step already run in this process with
/// the same inputs ([`memo`]) is not run again: the comparison's fabrics, the claims' seeds
/// and sizes, the regimes and a sweep's seeds ask for the same steps.
pub fn run(
    cfg: &TrainConfig,
    design: &Design,
    topo: &Topology,
    v: &Variant,
) -> Result<Timing, Error> {
    if let Some(why) = refused(cfg, v, design.spec.gpus_per_node as u64) {
        if v.failed_uplinks > 0 {
            return Err(Error::Workload(format!(
                "failed_uplinks = {}: a failed link is routed around in the whole step DAG on \
                 the flow engine only, and this job keeps the per-collective fits ({why})",
                v.failed_uplinks
            )));
        }
        return Ok(Timing::Fallback(why));
    }
    let mut p = params(v, design, 0)?;
    (p.loss_rate, p.ber) = (0.0, 0.0);
    let failed_links = match v.failed_uplinks {
        0 => Vec::new(),
        n => topo.first_uplinks(n).ok_or_else(|| {
            Error::Workload(format!(
                "failed_uplinks = {n}: the fabric has fewer leaves with an up-link"
            ))
        })?,
    };
    let fp = fabricsim_flow::FlowParams {
        failed_links,
        ..engine_choice::flow_params(topo, &p)
    };
    let eff = Efficiency::h200(&design.catalog);
    let nvlink = BitRate((cfg.gpu.nvlink_one_way_bytes_per_s() * 8.0).round() as u64);
    // Everything the run reads: the job, the design (catalog, profile, cluster), the engine
    // parameters and the topology built from them.
    let key = format!("{cfg:?}\n{design:?}\n{p:?}\n{fp:?}\n{topo:?}");
    memo::get_or_run(&STEPS, key, || {
        dag_step(cfg, design, topo, (&p, &fp), (&eff, nvlink))
    })
}

/// Whole steps run in this process, by their inputs.
static STEPS: memo::Memo<Timing> = memo::Memo::new();
/// Ideal-network ends by their DAG's inputs ([`ideal_end`]).
static IDEALS: memo::Memo<f64> = memo::Memo::new();

/// [`run`] on the flow engine.
fn dag_step(
    cfg: &TrainConfig,
    design: &Design,
    topo: &Topology,
    (p, fp): (&fabricsim_mech::SimParams, &fabricsim_flow::FlowParams),
    (eff, nvlink): (&Efficiency, BitRate),
) -> Result<Timing, Error> {
    let model = AlphaBetaModel::new(FabricParams::of(design));
    let fabric = flow_step::Fabric {
        topology: topo,
        params: p,
        flow: fp,
    };
    let first = flow_step::DEFAULT_FIRST_RING_STEPS;
    let f: FlowStep =
        match flow_step::simulate(cfg, eff, nvlink, &model, fabric, first, &mut |_| ()) {
            Ok(f) => f,
            // What the step DAG or its derivation does not model (too many ring messages under
            // load-aware paths, for one): the fits stay, with the reason.
            Err(Error::Workload(why)) => return Ok(Timing::Fallback(why)),
            Err(e) => return Err(e),
        };
    let ideal_step_s = ideal_end(cfg, eff, nvlink, topo, p, fp)?;
    let sd_mfu = |t: f64| f.mfu * f.step_time_s / t;
    Ok(Timing::Dag(DagStep {
        step_time_s: f.step_time_s,
        mfu: f.mfu,
        pipeline_s: f.pipeline_s,
        dp_tail_s: f.dp_all_reduce_s,
        ideal_step_s,
        ideal_mfu: sd_mfu(ideal_step_s),
        verdict: f.checks.verdict,
        messages: f.messages,
        ring_steps_derived: f.ring_steps_derived,
        pipeline_class: if cfg.par.pp > 1 { "pp" } else { "tp" },
        engine_runs: f.passes.len() as u64 + 1,
    }))
}

/// One seed's step of `cfg` on `v` as the comparison times it: by `t` (the fabric's [`run`])
/// where the step DAG ran, the seed's closed-form split and loss cost scaled to it ([`apply`]);
/// else the per-collective fits of the seed's engine runs. The step, its MFU lost against the
/// ideal network, and the engine step behind it.
pub fn seed_step(
    cfg: &TrainConfig,
    design: &Design,
    topo: &Topology,
    v: &Variant,
    seed: u64,
    t: &Timing,
) -> Result<(StepReport, super::ideal::Lost, EngineStep), Error> {
    let es = engine_step_with(cfg, design, topo, v, seed, matches!(t, Timing::Fallback(_)))?;
    Ok(match t {
        Timing::Dag(d) => {
            let r = apply(&es.step, d, es.loss_s);
            let l = lost(d, r.step_time_s);
            (r, l, es)
        }
        Timing::Fallback(_) => (es.step.clone(), super::ideal::lost(&es.step, &es.ideal), es),
    })
}

/// The end of `cfg`'s pipeline with every message across servers empty and instant (its path
/// NVLink to itself, 0 B: `flow::fluid` completes it when posted); the DP rings, across
/// servers only ([`refused`]), take no time then. Every message of that DAG is on NVLink, which
/// `flow::fluid` times by the DAG's NVLink rate alone, so the end depends on the job, the
/// compute model and NVLink only: it is run once per job and shared by its fabrics.
fn ideal_end(
    cfg: &TrainConfig,
    eff: &Efficiency,
    nvlink: BitRate,
    topo: &Topology,
    p: &fabricsim_mech::SimParams,
    fp: &fabricsim_flow::FlowParams,
) -> Result<f64, Error> {
    let key = format!("{cfg:?}\n{eff:?}\n{nvlink:?}");
    memo::get_or_run(&IDEALS, key, || ideal_run(cfg, eff, nvlink, topo, p, fp))
}

/// [`ideal_end`] on the flow engine.
fn ideal_run(
    cfg: &TrainConfig,
    eff: &Efficiency,
    nvlink: BitRate,
    topo: &Topology,
    p: &fabricsim_mech::SimParams,
    fp: &fabricsim_flow::FlowParams,
) -> Result<f64, Error> {
    let opts = DagOptions {
        ring_steps: Some(1),
        ring_steps_each: Vec::new(),
    };
    let mut sd = step_dag::compile(cfg, eff, nvlink, opts)?;
    // Pipeline messages come first and depend only on earlier ones.
    sd.dag.messages.truncate(sd.pipeline_messages as usize);
    for m in &mut sd.dag.messages {
        if m.path == Path::Net {
            (m.path, m.dst, m.bytes) = (Path::NvLink, m.src, 0);
        }
    }
    let (r, _) = fabricsim_flow::run(topo, p, &sd.dag, fp)?;
    let end = r
        .messages
        .iter()
        .filter_map(|m| m.finish_ps)
        .max()
        .unwrap_or(0);
    Ok(Time(end).as_secs_f64())
}

/// The MFU lost against the DAG's ideal, split by class ([`super::ideal::CLASSES`]) in
/// proportion to the seconds each adds: the DP all-reduce's tail after the pipeline to `dp`,
/// the pipeline's excess over the ideal (its sends, TP across servers, and their contention
/// with the rings that run beside them) to `pipeline_class`.
pub fn lost(d: &DagStep, step_s: f64) -> super::ideal::Lost {
    let mfu = d.mfu * d.step_time_s / step_s;
    let total = d.ideal_mfu - mfu;
    let secs = |c: &str| match c {
        "dp" => d.dp_tail_s,
        c if c == d.pipeline_class => d.pipeline_s - d.ideal_step_s,
        _ => 0.0,
    };
    let shares: Vec<f64> = super::ideal::CLASSES.iter().map(|c| secs(c)).collect();
    let sum: f64 = shares.iter().sum();
    super::ideal::Lost {
        ideal_step_s: d.ideal_step_s,
        ideal_mfu: d.ideal_mfu,
        total,
        by_class: shares
            .iter()
            .map(|s| if sum > 0.0 { total * s / sum } else { 0.0 })
            .collect(),
    }
}

/// `r` (a seed's fitted step) timed by `d`, plus `loss_s` (what loss adds in expectation):
/// the step time, its throughput and FLOP figures; exposed communication is the closed form's
/// inside servers (NVLink, in the ideal too) plus what the step takes over its ideal.
pub fn apply(r: &StepReport, d: &DagStep, loss_s: f64) -> StepReport {
    let t = d.step_time_s + loss_s;
    let k = r.step_time_s / t;
    StepReport {
        step_time_s: t,
        exposed_comm_s: super::model::exposed(r, false) + (t - d.ideal_step_s),
        tokens_per_s: r.tokens_per_s * k,
        tflops_per_gpu: r.tflops_per_gpu * k,
        mfu: r.mfu * k,
        hfu: r.hfu * k,
        ..r.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use fabricsim_input::scenario::Scenario;

    fn job(gpus: u32, extra: &str, over: &str) -> (TrainConfig, Design, Topology) {
        let s = Scenario::parse(
            "t.toml",
            &format!(
                "[cluster]\ngpus = {gpus}\ngpus_per_node = 8\nnics_per_node = 8\ngpu = \"h100\"\n\
                 [fabric]\nprofile = \"roce-400g\"\n[topology]\nkind = \"fat-tree\"\n\
                 oversubscription = \"{over}\"\n\
                 [train]\nzero = 1\nglobal_batch = 64\nseq = 2048\n{extra}"
            ),
        )
        .unwrap();
        let (design, topo, _) = crate::plan::run(&s).unwrap();
        let cfg = crate::compare::model::train_config(&s, &design, &topo).unwrap();
        (cfg, design, topo)
    }

    fn roce() -> Variant {
        Variant {
            name: "roce".into(),
            ..Variant::swept("roce-400g", EngineChoice::Auto)
        }
    }

    fn dag(t: Timing) -> DagStep {
        match t {
            Timing::Dag(d) => d,
            Timing::Fallback(why) => panic!("fell back: {why}"),
        }
    }

    /// A failed up-link is routed around in the whole step; more leaves than the fabric has, or a job on the per-collective
    /// fits, is an error naming `failed_uplinks`.
    #[test]
    fn failed_uplinks_run_in_the_whole_step_or_are_refused() {
        let (cfg, design, topo) = job(256, "model = \"llama3-8b\"\ntp = 8\npp = 2\n", "1:1");
        let failing = |n| Variant {
            failed_uplinks: n,
            ..roce()
        };
        // Each leaf has 64 up-links: the flows hashed onto a failed one move to the next
        // (`route::first_usable`), here to a free one, so the step may not move;
        // `tests/flow_failed_link.rs` checks the reroute itself on both engines.
        let failed = dag(run(&cfg, &design, &topo, &failing(4)).unwrap());
        assert!(failed.step_time_s >= failed.ideal_step_s, "{failed:?}");
        let leaves = topo.switches().filter(|(_, n)| n.tier() == 1).count() as u32;
        let e = run(&cfg, &design, &topo, &failing(leaves + 1))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("failed_uplinks") && e.contains("fewer leaves"),
            "{e}"
        );
        let packet = Variant {
            engine: EngineChoice::Packet,
            ..failing(1)
        };
        let e = run(&cfg, &design, &topo, &packet).unwrap_err().to_string();
        assert!(e.contains("flow engine only"), "{e}");
    }

    /// The whole step is at least its ideal (same DAG, fabric messages instant); the MFU lost
    /// is split into DP (the all-reduce after the pipeline) and PP (the pipeline's excess),
    /// both positive, adding up to the total.
    #[test]
    fn the_whole_step_loses_mfu_to_dp_and_pp_against_its_own_ideal() {
        let (cfg, design, topo) = job(64, "model = \"llama3-8b\"\ntp = 8\npp = 2\n", "1:1");
        let d = dag(run(&cfg, &design, &topo, &roce()).unwrap());
        assert!(
            d.ideal_step_s < d.pipeline_s && d.pipeline_s < d.step_time_s,
            "{d:?}"
        );
        assert!(d.ideal_mfu > d.mfu, "{d:?}");
        let l = lost(&d, d.step_time_s);
        assert!((l.total - (d.ideal_mfu - d.mfu)).abs() < 1e-12, "{l:?}");
        let sum: f64 = l.by_class.iter().sum();
        assert!((sum - l.total).abs() < 1e-12, "{l:?}");
        assert!(l.by_class[0] > 0.0 && l.by_class[2] > 0.0, "{l:?}");
    }

    /// A 4:1 leaf puts the pipeline sends and the DP rings of 256 GPUs (32 servers, several
    /// leaves) on a quarter of the uplinks: the whole step, whose collectives share those
    /// links, is longer; the ideal is not.
    #[test]
    fn oversubscription_slows_the_whole_step_not_its_ideal() {
        let v = roce();
        let (cfg, design, topo) = job(256, "model = \"llama3-8b\"\ntp = 8\npp = 2\n", "1:1");
        let a = dag(run(&cfg, &design, &topo, &v).unwrap());
        let (cfg, design, topo) = job(256, "model = \"llama3-8b\"\ntp = 8\npp = 2\n", "4:1");
        let b = dag(run(&cfg, &design, &topo, &v).unwrap());
        assert!(b.step_time_s > a.step_time_s, "{a:?} {b:?}");
        assert_eq!(a.ideal_step_s, b.ideal_step_s);
    }

    /// What the DAG does not model keeps the fits, and says why.
    #[test]
    fn a_moe_job_or_the_packet_engine_falls_back_with_the_reason() {
        let (cfg, design, topo) = job(
            64,
            "model = \"mixtral-8x7b\"\ntp = 4\npp = 1\nep = 8\n",
            "1:1",
        );
        let Timing::Fallback(why) = run(&cfg, &design, &topo, &roce()).unwrap() else {
            panic!("a MoE job ran as a step DAG");
        };
        assert!(why.contains("MoE"), "{why}");
        let (cfg, design, topo) = job(64, "model = \"llama3-8b\"\ntp = 8\npp = 2\n", "1:1");
        let packet = Variant {
            engine: EngineChoice::Packet,
            ..roce()
        };
        let Timing::Fallback(why) = run(&cfg, &design, &topo, &packet).unwrap() else {
            panic!("ran on the packet engine");
        };
        assert!(why.contains("packet"), "{why}");
    }
}
