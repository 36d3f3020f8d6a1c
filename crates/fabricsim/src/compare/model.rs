//! The comparison: one cluster and one training step on each fabric. Per fabric: the plan
//! (CAPEX, power, TCO), the training step (step time, tokens/s, MFU) with that fabric's
//! communication model, and the cost per delivered training throughput (cluster TCO over the
//! period divided by the tokens and model FLOPs the period delivers); then each relative to the
//! best fabric.

use serde::Serialize;

use super::curves::{self, BusbwCurve};
use super::probe::{self, Probes};
use super::progress::{Report, Tracker};
use super::stress::{self, StressResult};
use super::variant::{self, Variant};
use crate::error::Error;
use crate::plan::Plan;
use crate::plan::cost::HOURS_PER_YEAR;
use crate::workload::placement::Placement;
use crate::workload::train::config::TrainConfig;
use crate::workload::train::step::StepReport;
use fabricsim_core::error::InputError;
use fabricsim_core::topology::Topology;
use fabricsim_input::scenario::compare::CompareSection;
use fabricsim_input::scenario::{Design, Scenario};

/// The built-in comparison (examples/compare-default.toml): `fabricsim compare` without a
/// scenario runs it, and its `[train]` step is used by scenarios without one.
pub const DEFAULT_SCENARIO: &str = include_str!("../../../../examples/compare-default.toml");

pub fn default_scenario() -> Scenario {
    Scenario::parse("(built-in) examples/compare-default.toml", DEFAULT_SCENARIO)
        .expect("the built-in comparison parses")
}

/// Delivered training throughput and what it costs.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Delivered {
    pub step_time_s: f64,
    pub tokens_per_s: f64,
    pub mfu: f64,
    /// Tokens trained over the TCO period at the stated utilization.
    pub tokens_per_period: f64,
    /// Cluster TCO per million tokens trained.
    pub usd_per_million_tokens: f64,
    /// Cluster TCO per 10^18 model FLOPs delivered (Megatron's FLOP count).
    pub usd_per_model_eflop: f64,
    /// Where the step's communication times come from.
    pub comm_source: String,
}

/// One fabric's results. `delivered` is `None` (with the reason in `missing`) when its numbers
/// need a model that is not available: nothing is filled in by guess.
#[derive(Clone, Debug)]
pub struct FabricResult {
    pub variant: Variant,
    pub design: Design,
    pub topology: Topology,
    pub plan: Plan,
    pub step: Option<StepReport>,
    /// All-reduce and all-to-all over the whole cluster, measured on the packet engine.
    pub busbw: Vec<BusbwCurve>,
    /// The incast-over-background run.
    pub stress: Option<StressResult>,
    /// Ping-pong latencies and the long flow's bandwidth.
    pub probes: Option<Probes>,
    /// What the packet-engine runs saw, for fabrics whose step was calibrated on them.
    pub engine: Option<super::step::EngineTotals>,
    pub delivered: Option<Delivered>,
    pub missing: Option<String>,
}

/// Each fabric's figures over the best fabric's (1.0 = the best).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Relative {
    pub fabric: String,
    /// Tokens/s over the highest tokens/s (None without a step).
    pub throughput_vs_best: Option<f64>,
    /// Network CAPEX over the lowest network CAPEX.
    pub network_capex_vs_lowest: f64,
    pub cluster_tco_vs_lowest: f64,
    /// USD per token over the lowest USD per token.
    pub cost_per_token_vs_lowest: Option<f64>,
}

#[derive(Clone, Debug)]
pub struct Comparison {
    pub name: String,
    pub fabrics: Vec<FabricResult>,
    pub relative: Vec<Relative>,
    pub section: CompareSection,
    pub years: u32,
    /// MFU against loss rate for go-back-N and selective repeat on the first RoCE fabric
    /// (packet-engine runs; [`super::sweep`]), with its axes.
    pub loss_sweep: Option<(Vec<super::sweep::SweepAxis>, Vec<super::sweep::PointResult>)>,
    /// The field's claims answered by runs at other sizes ([`super::claims`]; `None` under
    /// `[compare] claims = "off"`).
    pub claims: Option<super::claims::Claims>,
    /// Statements about what the figures mean and what is not modelled.
    pub notes: Vec<String>,
    /// A stop request (`fabricsim_core::stop`) came during the run: fabrics or loss-sweep points it cut
    /// short are left out (the notes say which).
    pub interrupted: bool,
}

const SECONDS_PER_HOUR: f64 = 3600.0;

/// Loss rates of the comparison's MFU-against-loss chart (0 to 1%).
const COMPARE_LOSS_RATES: &str = "loss_rate=0,0.001,0.003,0.01";

/// The loss sweep's axes: the loss rates by the two recoveries.
fn loss_axes() -> Vec<super::sweep::SweepAxis> {
    vec![
        super::sweep::SweepAxis::parse("loss_rate", COMPARE_LOSS_RATES).expect("built-in axis"),
        super::sweep::SweepAxis::parse("transport", "transport=go-back-n,selective-repeat")
            .expect("built-in axis"),
    ]
}

/// The training job of `s` (its `[train]`, or the built-in comparison's when it has none) on
/// `design`'s cluster, with the ranks placed on `topo`'s hosts.
pub fn train_config(
    s: &Scenario,
    design: &Design,
    topo: &Topology,
) -> Result<TrainConfig, InputError> {
    let mut s = s.clone();
    if s.file.train.is_none() {
        s.file.train = default_scenario().file.train;
    }
    let place = Placement::on_topology(topo, design.spec.gpus_per_node);
    TrainConfig::resolve(&s, design, place)
}

fn engine_source(r: &StepReport, t: &super::step::EngineTotals) -> String {
    let mut src = format!(
        "{}; fitted from {} packet-engine runs ({} drops, {} retransmitted packets, {} timeouts)",
        r.comm_source, t.runs, t.packets_dropped, t.retransmitted_packets, t.timeouts
    );
    if !t.unfitted.is_empty() {
        src += &format!("; no fit, closed form kept for: {}", t.unfitted.join(", "));
    }
    if !t.stalled.is_empty() {
        src += &format!(
            "; runs with timeouts set apart from the fit: {}",
            t.stalled.join(", ")
        );
    }
    src
}

/// Throughput and its cost over the TCO period.
fn deliver(
    r: &StepReport,
    design: &Design,
    plan: &Plan,
    utilization: f64,
    source: String,
) -> Delivered {
    let seconds = design.cost.years as f64 * HOURS_PER_YEAR * SECONDS_PER_HOUR * utilization;
    let tokens = r.tokens_per_s * seconds;
    let flops = r.model_flops_per_step / r.step_time_s * seconds;
    let tco = plan.cost.cluster_tco_usd;
    Delivered {
        step_time_s: r.step_time_s,
        tokens_per_s: r.tokens_per_s,
        mfu: r.mfu,
        tokens_per_period: tokens,
        usd_per_million_tokens: tco / (tokens / 1e6),
        usd_per_model_eflop: tco / (flops / 1e18),
        comm_source: source,
    }
}

/// Stages of each fabric (`progress`): the training step, and with fabric runs the busbw
/// curves, the stress run and the latency probes.
fn stages(sec: &CompareSection) -> usize {
    if sec.fabric_runs { 4 } else { 1 }
}

fn one(
    s: &Scenario,
    v: &Variant,
    sec: &CompareSection,
    track: &Tracker,
) -> Result<FabricResult, InputError> {
    let seed = sec.seed;
    let mut sv = s.clone();
    sv.file.fabric.profile = v.profile.clone();
    let name = v.name.as_str();
    let (design, topology, plan, r, totals) = track.stage(name, "training step", || {
        let (design, topology, plan) = crate::plan::run(&sv)?;
        let cfg = train_config(&sv, &design, &topology)?;
        // Every fabric's step is timed by packet-engine runs of its collectives, so fabrics
        // compare on the same footing; loss acts only through these runs.
        let (r, totals) =
            super::step::engine_step(&cfg, &design, &topology, v, seed).map_err(|e| {
                s.error(
                    "compare.fabrics",
                    &v.name,
                    e,
                    "a fabric the packet engine can run",
                )
            })?;
        Ok::<_, InputError>((design, topology, plan, r, totals))
    })?;
    let delivered = deliver(
        &r,
        &design,
        &plan,
        sec.utilization,
        engine_source(&r, &totals),
    );
    let fail = |what: &str, e: Error| {
        s.error(
            "compare.fabrics",
            &v.name,
            format!("{what}: {e}"),
            "a fabric the packet engine can run",
        )
    };
    let (busbw, stress, probes) = if sec.fabric_runs {
        (
            track
                .stage(name, "busbw curves", || {
                    curves::measured(&design, &topology, v, seed)
                })
                .map_err(|e| fail("busbw", e))?,
            Some(
                track
                    .stage(name, "stress run", || {
                        stress::run(&design, &topology, v, seed)
                    })
                    .map_err(|e| fail("stress run", e))?,
            ),
            Some(
                track
                    .stage(name, "latency probes", || {
                        probe::run(&sv, &design, &topology, v, seed)
                    })
                    .map_err(|e| fail("latency probes", e))?,
            ),
        )
    } else {
        (Vec::new(), None, None)
    };
    Ok(FabricResult {
        variant: v.clone(),
        design,
        topology,
        plan,
        step: Some(r),
        busbw,
        stress,
        probes,
        delivered: Some(delivered),
        engine: Some(totals),
        missing: None,
    })
}

fn relative(fabrics: &[FabricResult]) -> Vec<Relative> {
    let best_tps = fabrics
        .iter()
        .filter_map(|f| f.delivered.as_ref().map(|d| d.tokens_per_s))
        .fold(0.0, f64::max);
    let low =
        |g: &dyn Fn(&FabricResult) -> f64| fabrics.iter().map(g).fold(f64::INFINITY, f64::min);
    let low_capex = low(&|f| f.plan.cost.network_capex_usd);
    let low_tco = low(&|f| f.plan.cost.cluster_tco_usd);
    let low_cpt = fabrics
        .iter()
        .filter_map(|f| f.delivered.as_ref().map(|d| d.usd_per_million_tokens))
        .fold(f64::INFINITY, f64::min);
    fabrics
        .iter()
        .map(|f| Relative {
            fabric: f.variant.name.clone(),
            throughput_vs_best: f.delivered.as_ref().map(|d| d.tokens_per_s / best_tps),
            network_capex_vs_lowest: f.plan.cost.network_capex_usd / low_capex,
            cluster_tco_vs_lowest: f.plan.cost.cluster_tco_usd / low_tco,
            cost_per_token_vs_lowest: f
                .delivered
                .as_ref()
                .map(|d| d.usd_per_million_tokens / low_cpt),
        })
        .collect()
}

/// Compares the fabrics of `s`'s `[compare]` section (or the default three) on `s`'s cluster.
pub fn run(s: &Scenario) -> Result<Comparison, InputError> {
    run_with(s, &|_| {})
}

/// [`run`], telling `progress` each stage of each fabric and each loss-sweep point. After a stop
/// request (`fabricsim_core::stop`) the fabrics it cut short are left out and named in the notes (an
/// error when none finished).
pub fn run_with(s: &Scenario, progress: Report) -> Result<Comparison, InputError> {
    let section = s.file.compare.clone().unwrap_or_default();
    section.check(s)?;
    let variants = variant::resolve(s, &section)?;
    let loss_points = super::sweep::expand(&loss_axes());
    let track = Tracker::new(variants.len() * stages(&section), progress);
    // Fabrics are independent: one thread each, results in comparison order, each with
    // whether a stop request came before it ended (it may then be cut short).
    let runs = std::thread::scope(|scope| {
        let runs: Vec<_> = variants
            .iter()
            .map(|v| {
                scope.spawn(|| {
                    let r = one(s, v, &section, &track);
                    (r, fabricsim_core::stop::requested())
                })
            })
            .collect();
        runs.into_iter()
            .map(|h| h.join().expect("a fabric's run does not panic"))
            .collect::<Vec<_>>()
    });
    let mut fabrics = Vec::new();
    let mut unfinished = Vec::new();
    for (v, (r, cut)) in variants.iter().zip(runs) {
        match cut {
            true => unfinished.push(v.name.clone()),
            false => fabrics.push(r?),
        }
    }
    if fabrics.is_empty() {
        return Err(s.error(
            "compare.fabrics",
            unfinished.join(", "),
            "interrupted before any fabric finished",
            "a run left to finish",
        ));
    }
    let years = fabrics[0].design.cost.years;
    let mut notes = vec![
        "Training-step communication: every collective of the step is run on the engine the scenario's engine key picks (auto: packet up to 20M packets) at up to 64 MiB, fitted to alpha-beta and extrapolated to the step's sizes. The busbw curves are packet-engine runs of all-reduce and all-to-all over every GPU at 64 KiB, 1 MiB and 8 MiB.".to_string(),
        "Tuned and untuned are the profile's two parameter sets (data/profiles): RoCE tuned = PFC with the SONiC headroom, ECN below XOFF and DCQCN (ConnectX firmware set); untuned = DCQCN off, ECN thresholds above XOFF and a legacy fixed headroom; InfiniBand = credits per VL and adaptive routing.".to_string(),
    ];
    if section.fabric_runs {
        notes.push(format!("Stress: {} (an ESTIMATE of a congested moment, one packet-engine run per fabric with its own parameters, loss included).", stress::pattern(fabrics[0].topology.num_hosts() as u32)));
    } else {
        notes.push(
            "[compare] fabric_runs = false: no busbw curves, stress run or latency probes.".into(),
        );
    }
    if s.file.train.is_none() {
        notes.push("No [train] section: the step is the built-in comparison's (examples/compare-default.toml: Llama 3 70B, TP 8, PP 4, ZeRO-1).".into());
    }
    notes.extend(fabrics.iter().filter_map(|f| f.missing.clone()));
    // The loss sweep's fabric: the first RoCE one, without its own loss.
    let loss_base = fabrics
        .iter()
        .find(|f| f.design.profile.family == fabricsim_input::profile::Family::Roce)
        .map(|f| Variant {
            loss_rate: 0.0,
            ..f.variant.clone()
        });
    let loss_sweep = loss_base
        .as_ref()
        .filter(|_| !fabricsim_core::stop::requested())
        .map(|base| {
            let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
            track.add(loss_points.len());
            let (name, before) = (base.name.as_str(), track.done());
            let tell = |slots: &[Option<super::sweep::PointResult>]| {
                let d = slots.iter().flatten().count();
                track.tell(name, "loss sweep", before + d)
            };
            let r = super::sweep::run(s, base, section.seed, &loss_points, threads, false, &tell);
            (loss_axes(), r)
        });
    let claims = super::claims::run(
        s,
        &section,
        &fabrics,
        loss_base
            .as_ref()
            .zip(loss_sweep.as_ref().map(|l| l.1.as_slice())),
        &track,
        track.done() + loss_sweep.as_ref().map_or(0, |l| l.1.len()),
    );
    if !unfinished.is_empty()
        || loss_sweep
            .as_ref()
            .is_some_and(|l| l.1.len() < loss_points.len())
    {
        notes.push(format!(
            "Interrupted: a partial comparison (fabrics not finished: {}; loss-sweep points \
             finished: {} of {}).",
            if unfinished.is_empty() {
                "none".to_string()
            } else {
                unfinished.join(", ")
            },
            loss_sweep.as_ref().map_or(0, |l| l.1.len()),
            loss_points.len()
        ));
    }
    Ok(Comparison {
        claims,
        interrupted: fabricsim_core::stop::requested(),
        loss_sweep,
        name: s.file.name.clone().unwrap_or_else(|| {
            let d = &fabrics[0].design;
            format!("{} x {}", d.spec.gpus, d.gpu.id)
        }),
        relative: relative(&fabrics),
        fabrics,
        section,
        years,
        notes,
    })
}
