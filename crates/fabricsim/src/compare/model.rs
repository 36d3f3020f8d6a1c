//! The comparison: one cluster and one training step on each fabric. Per fabric: the plan
//! (CAPEX, power, TCO), the training step (step time, tokens/s, MFU) with that fabric's
//! communication model, and the cost per delivered training throughput (cluster TCO over the
//! period divided by the tokens and model FLOPs the period delivers); then each relative to the
//! best fabric.

use serde::Serialize;

use super::curves::{self, BusbwCurve};
use super::probe::{self, Probes};
use super::progress::{Report, Tracker};
use super::step::EngineTotals;
use super::stress::{self, StressOverSeeds, StressResult};
use super::variant::{self, Variant};
use crate::plan::Plan;
use crate::plan::cost::HOURS_PER_YEAR;
use crate::workload::placement::Placement;
use crate::workload::seeds::FirstSeed;
use crate::workload::tenants::storage::checkpoint_write;
use crate::workload::train::config::TrainConfig;
use crate::workload::train::random_loss;
use crate::workload::train::step::StepReport;
use fabricsim_core::error::InputError;
use fabricsim_core::estimate::Estimate;
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

/// Delivered training throughput and what it costs, each figure over the seeds.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Delivered {
    pub step_time_s: Estimate,
    /// The step's split: compute, exposed communication and pipeline bubble.
    pub compute_s: Estimate,
    pub exposed_comm_s: Estimate,
    /// The exposed communication's part inside a server (NVLink: groups of one server) and
    /// across servers (the fabric's).
    pub exposed_nvlink_s: Estimate,
    pub exposed_fabric_s: Estimate,
    pub bubble_s: Estimate,
    pub tokens_per_s: Estimate,
    pub mfu: Estimate,
    /// Tokens trained over the TCO period at the stated utilization.
    pub tokens_per_period: Estimate,
    /// Cluster TCO per million tokens trained.
    pub usd_per_million_tokens: Estimate,
    /// Cluster TCO per 10^18 model FLOPs delivered (Megatron's FLOP count).
    pub usd_per_model_eflop: Estimate,
    /// Tokens/s of each seed, in seed order (the recommendation scores seed by seed).
    pub tokens_per_s_by_seed: Vec<f64>,
    /// The same job on an infinitely fast fabric, and the MFU lost to this one.
    pub ideal_network: super::ideal::Baseline,
    /// Where the step's communication times come from.
    pub comm_source: String,
    /// How the step time was timed: `flow engine: whole step DAG` (collectives concurrent) or
    /// `alpha-beta fits per collective (fallback: why)`.
    pub step_timed_by: String,
}

/// A lossy fabric's step at one end of its loss-rate interval ([`loss_ends`]), seed by seed:
/// the interval the verdict is tested under ([`super::robust`]).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LossCase {
    /// `low` or `high` ([`LOSS_ENDS`]).
    pub end: &'static str,
    pub loss_rate: f64,
    /// Tokens/s of each seed (empty with an error).
    pub tokens_per_s_by_seed: Vec<f64>,
    pub error: Option<String>,
}

/// One fabric's results, each simulated figure over the seeds. `delivered` is `None` (with the
/// reason in `missing`) when its numbers need a model that is not available: nothing is filled
/// in by guess.
#[derive(Clone, Debug)]
pub struct FabricResult {
    pub variant: Variant,
    pub design: Design,
    pub topology: Topology,
    pub plan: Plan,
    /// The first seed's training step (its collectives and memory; the figures over the seeds
    /// are in `delivered`).
    pub step: Option<StepReport>,
    /// All-reduce and all-to-all over the whole cluster, measured on the packet engine.
    pub busbw: Vec<BusbwCurve>,
    /// The first seed's incast-over-background run (its completion-time CDFs).
    pub stress: Option<StressResult>,
    /// The stress runs of every seed, figure by figure.
    pub stress_over_seeds: Option<StressOverSeeds>,
    /// Ping-pong latencies and the long flow's bandwidth.
    pub probes: Option<Probes>,
    /// What the packet-engine runs saw, summed over the seeds, for fabrics whose step was
    /// calibrated on them.
    pub engine: Option<super::step::EngineTotals>,
    pub delivered: Option<Delivered>,
    /// The seeds every simulated figure was measured with.
    pub seeds: Vec<u64>,
    /// A lossy fabric's step at its loss rate x0.1 and x10.
    pub loss_cases: Vec<LossCase>,
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
    /// The `[serve]` deployment on each fabric (empty without one).
    pub serving: Vec<super::serving::ServingFabric>,
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
    /// The scenario's `[[jobs]]` on each fabric ([`super::tenants`]; empty without jobs).
    pub tenants: Vec<super::tenants::FabricTenants>,
    /// Where tuned RoCE and InfiniBand part ([`super::regimes`]; `None` without both, or under
    /// `[compare] claims = "off"`).
    pub regimes: Option<super::regimes::Regimes>,
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
    if let Some(t) = &s.file.train {
        random_loss::refuse(
            &s,
            "train",
            t,
            "each compared fabric's own loss_rate and recovery in [[compare.fabrics]]",
        )?;
    }
    let place = Placement::on_topology(topo, design.spec.gpus_per_node);
    TrainConfig::resolve(&s, design, place)
}

fn engine_source(r: &StepReport, t: &EngineTotals, seeds: usize) -> String {
    let mut src = match t.runs {
        0 => format!(
            "{}; the split of compute, bubble and NVLink in closed form",
            r.comm_source
        ),
        _ => format!(
            "{}; fitted from {} packet-engine runs over {seeds} seed(s) ({} drops, {} retransmitted packets, {} timeouts)",
            r.comm_source, t.runs, t.packets_dropped, t.retransmitted_packets, t.timeouts
        ),
    };
    if !t.unfitted.is_empty() {
        src += &format!("; no fit, closed form kept for: {}", t.unfitted.join(", "));
    }
    if let Some(l) = &t.loss {
        src += &format!("; {}", l.summary());
    }
    if !t.stalled.is_empty() {
        src += &format!(
            "; runs with timeouts set apart from the fit: {}",
            t.stalled.join(", ")
        );
    }
    src
}

/// Seconds of training over the TCO period of `design` at `utilization`.
pub fn period_s(design: &Design, utilization: f64) -> f64 {
    design.cost.years as f64 * HOURS_PER_YEAR * SECONDS_PER_HOUR * utilization
}

/// Cluster TCO `tco_usd` per million tokens trained at `tokens_per_s` over `period_s` seconds.
pub fn usd_per_million_tokens(tco_usd: f64, tokens_per_s: f64, period_s: f64) -> f64 {
    tco_usd / (tokens_per_s * period_s / 1e6)
}

/// Exposed seconds of `r`'s collectives across servers (`fabric`) or inside one server.
pub fn exposed(r: &StepReport, fabric: bool) -> f64 {
    r.collectives
        .iter()
        .filter(|c| (c.servers > 1) == fabric)
        .map(|c| c.exposed_s)
        .sum()
}

/// The title of a comparison: the scenario's `name` when no flag changed it, else what ran.
fn title(s: &Scenario, fabrics: &[FabricResult]) -> String {
    let f = &fabrics[0];
    let ran = match &f.step {
        Some(st) => format!(
            "{} x {}, {} step",
            st.gpus,
            f.design.gpu.id.to_uppercase(),
            st.model
        ),
        None => format!(
            "{} x {}",
            f.design.spec.gpus,
            f.design.gpu.id.to_uppercase()
        ),
    };
    match &s.file.name {
        Some(n) if s.flags.is_empty() => n.clone(),
        _ => ran,
    }
}

/// Throughput and its cost over the TCO period, over the steps of the seeds.
fn deliver(
    steps: &[StepReport],
    lost: &[super::ideal::Lost],
    design: &Design,
    plan: &Plan,
    utilization: f64,
    (source, timed_by): (String, String),
) -> Result<Delivered, String> {
    let seconds = period_s(design, utilization);
    let tco = plan.cost.cluster_tco_usd;
    let over = |what: &str, g: &dyn Fn(&StepReport) -> f64| {
        super::seeds::estimate(what, &steps.iter().map(g).collect::<Vec<_>>())
    };
    Ok(Delivered {
        step_time_s: over("step time", &|r| r.step_time_s)?,
        compute_s: over("compute time", &|r| r.compute_s)?,
        exposed_comm_s: over("exposed communication", &|r| r.exposed_comm_s)?,
        exposed_nvlink_s: over("exposed NVLink communication", &|r| exposed(r, false))?,
        // Fitted, the sum of the collectives across servers; whole, what the step takes over
        // its ideal (`whole_step::apply`).
        exposed_fabric_s: over("exposed fabric communication", &|r| {
            r.exposed_comm_s - exposed(r, false)
        })?,
        bubble_s: over("pipeline bubble", &|r| r.bubble_s)?,
        tokens_per_s: over("tokens/s", &|r| r.tokens_per_s)?,
        mfu: over("MFU", &|r| r.mfu)?,
        tokens_per_period: over("tokens per period", &|r| r.tokens_per_s * seconds)?,
        usd_per_million_tokens: over("USD per million tokens", &|r| {
            usd_per_million_tokens(tco, r.tokens_per_s, seconds)
        })?,
        usd_per_model_eflop: over("USD per model EFLOP", &|r| {
            tco / (r.model_flops_per_step / r.step_time_s * seconds / 1e18)
        })?,
        tokens_per_s_by_seed: steps.iter().map(|r| r.tokens_per_s).collect(),
        ideal_network: super::ideal::over_seeds(lost)?,
        comm_source: source,
        step_timed_by: timed_by,
    })
}

/// The start of [`Delivered::step_timed_by`] for a step timed whole on the flow engine.
pub const WHOLE_STEP: &str = "flow engine: whole step DAG";

/// Stages of each fabric and seed (`progress`): the training step, and with fabric runs the
/// busbw curves, the stress run and the latency probes.
fn stages(sec: &CompareSection) -> usize {
    if sec.fabric_runs { 4 } else { 1 }
}

/// One fabric planned: its scenario (the comparison's with the fabric's profile), design,
/// topology, plan and training job; the same for every seed.
struct Planned {
    sv: Scenario,
    design: Design,
    topology: Topology,
    plan: Plan,
    cfg: TrainConfig,
    /// The whole step on the flow engine, run by the first job that needs it: it draws
    /// nothing from a seed (`super::whole_step::run`), so it stands for every seed.
    whole: std::sync::OnceLock<Result<super::whole_step::Timing, String>>,
    /// The busbw curves under the first seed, for every seed when they drew nothing at random.
    curves: FirstSeed<Vec<BusbwCurve>>,
}

impl Planned {
    /// The fabric's whole step ([`Planned::whole`]) with `v`'s parameters.
    fn whole_step(&self, v: &Variant) -> Result<super::whole_step::Timing, String> {
        self.whole
            .get_or_init(|| {
                super::whole_step::run(&self.cfg, &self.design, &self.topology, v)
                    .map_err(|e| e.to_string())
            })
            .clone()
    }
}

fn planned(s: &Scenario, v: &Variant) -> Result<Planned, InputError> {
    let mut sv = s.clone();
    sv.file.fabric.profile = v.profile.clone();
    let (design, topology, mut plan) = crate::plan::run(&sv)?;
    let cfg = train_config(&sv, &design, &topology)?;
    let write = checkpoint_write(&sv, &cfg, &design, &topology)?;
    plan.reliability = plan.reliability.with_checkpoint(&design, write);
    Ok(Planned {
        sv,
        design,
        topology,
        plan,
        cfg,
        whole: std::sync::OnceLock::new(),
        curves: FirstSeed::new(),
    })
}

/// What one seed's runs of one fabric measured.
struct SeedRun {
    step: StepReport,
    totals: EngineTotals,
    /// The step against the ideal-network baseline.
    lost: super::ideal::Lost,
    busbw: Vec<BusbwCurve>,
    stress: Option<StressResult>,
    probes: Option<Probes>,
    /// The whole step on the flow engine (the same for every seed).
    timing: super::whole_step::Timing,
}

fn fabric_error(s: &Scenario, v: &Variant, what: &str, e: &dyn std::fmt::Display) -> InputError {
    s.error(
        "compare.fabrics",
        &v.name,
        format!("{what}: {e}"),
        "a fabric the packet engine can run",
    )
}

fn one_seed(
    s: &Scenario,
    v: &Variant,
    f: &Planned,
    sec: &CompareSection,
    seed: u64,
    track: &Tracker,
) -> Result<SeedRun, InputError> {
    let name = v.name.as_str();
    let fail = |what: &str, e: &dyn std::fmt::Display| fabric_error(s, v, what, e);
    let (design, topology) = (&f.design, &f.topology);
    // The whole step where the step DAG runs (the seed's fits then only split it and cost its
    // loss), else every collective fitted from the seed's engine runs, so fabrics compare on
    // the same footing (`super::whole_step::seed_step`, as `sweep` and the claims time it).
    let (timing, (step, lost, es)) = track.stage(name, "training step", || {
        let timing = f
            .whole_step(v)
            .map_err(|e| fail("whole step on the flow engine", &e))?;
        let seed_step = super::whole_step::seed_step(&f.cfg, design, topology, v, seed, &timing)
            .map_err(|e| fail("training step", &e))?;
        Ok::<_, InputError>((timing, seed_step))
    })?;
    let totals = es.totals;
    let (busbw, stress, probes) = if sec.fabric_runs {
        (
            track
                .stage(name, "busbw curves", || {
                    f.curves.get(sec.seed, seed, |seed| {
                        curves::measured(design, topology, v, seed)
                    })
                })
                .map_err(|e| fail("busbw", &e))?,
            Some(
                track
                    .stage(name, "stress run", || {
                        stress::run(design, topology, v, seed)
                    })
                    .map_err(|e| fail("stress run", &e))?,
            ),
            Some(
                track
                    .stage(name, "latency probes", || {
                        probe::run(&f.sv, design, topology, v, seed)
                    })
                    .map_err(|e| fail("latency probes", &e))?,
            ),
        )
    } else {
        (Vec::new(), None, None)
    };
    Ok(SeedRun {
        step,
        totals,
        lost,
        busbw,
        stress,
        probes,
        timing,
    })
}

/// The fabric's results from the runs of its seeds.
fn combine(
    s: &Scenario,
    v: &Variant,
    f: Planned,
    sec: &CompareSection,
    seeds: &[u64],
    runs: Vec<SeedRun>,
    loss_cases: Vec<LossCase>,
) -> Result<FabricResult, InputError> {
    let fail = |what: &str, e: &dyn std::fmt::Display| fabric_error(s, v, what, e);
    let mut totals = EngineTotals::default();
    for (r, &seed) in runs.iter().zip(seeds) {
        totals.add(&r.totals, seed);
    }
    let steps: Vec<StepReport> = runs.iter().map(|r| r.step.clone()).collect();
    let lost: Vec<super::ideal::Lost> = runs.iter().map(|r| r.lost.clone()).collect();
    let source = engine_source(&steps[0], &totals, seeds.len());
    let timed_by = match &runs[0].timing {
        super::whole_step::Timing::Dag(d) => {
            // The one whole-step run stands for every seed: its runs count once.
            totals.runs += d.engine_runs;
            totals.flow_runs += d.engine_runs;
            format!(
                "{WHOLE_STEP} ({} messages, {} ring steps derived, {}): DP rings, pipeline \
                 sends and TP across servers run at once",
                d.messages, d.ring_steps_derived, d.verdict
            )
        }
        super::whole_step::Timing::Fallback(why) => {
            format!("alpha-beta fits per collective, each timed alone (fallback: {why})")
        }
    };
    let delivered = deliver(
        &steps,
        &lost,
        &f.design,
        &f.plan,
        sec.utilization,
        (source, timed_by),
    )
    .map_err(|e| fail("training step", &e))?;
    let busbw: Vec<Vec<BusbwCurve>> = runs.iter().map(|r| r.busbw.clone()).collect();
    let stress_runs: Vec<StressResult> = runs.iter().filter_map(|r| r.stress.clone()).collect();
    let probe_runs: Vec<Probes> = runs.iter().filter_map(|r| r.probes.clone()).collect();
    Ok(FabricResult {
        variant: v.clone(),
        step: Some(steps[0].clone()),
        busbw: curves::over_seeds(&busbw).map_err(|e| fail("busbw", &e))?,
        stress_over_seeds: (!stress_runs.is_empty()).then(|| stress::over_seeds(&stress_runs)),
        stress: stress_runs.into_iter().next(),
        probes: match probe_runs.is_empty() {
            true => None,
            false => Some(probe::over_seeds(&probe_runs).map_err(|e| fail("latency probes", &e))?),
        },
        delivered: Some(delivered),
        engine: Some(totals),
        seeds: seeds.to_vec(),
        loss_cases,
        missing: None,
        design: f.design,
        topology: f.topology,
        plan: f.plan,
    })
}

/// The loss-rate interval of a lossy fabric without `loss_rate_interval`: its rate scaled by
/// these factors (a rate at or above 0.5 is not run).
pub const LOSS_FACTORS: [f64; 2] = [0.1, 10.0];

/// The names of the interval's two ends, in [`loss_ends`]' order.
pub const LOSS_ENDS: [&str; 2] = ["low", "high"];

/// The loss rates `v`'s verdict is tested under: its `loss_rate_interval`, else its rate x0.1
/// and x10; `None` for a lossless fabric without an interval.
pub fn loss_ends(v: &Variant) -> Option<[f64; 2]> {
    match v.loss_interval {
        Some(i) => Some(i),
        None if v.loss_rate > 0.0 => Some(LOSS_FACTORS.map(|k| v.loss_rate * k)),
        None => None,
    }
}

/// The comparison's runs: each fabric at each seed, and each lossy fabric's step at each end
/// of its loss-rate interval ([`loss_ends`]) and seed.
enum Job {
    Seed {
        fabric: usize,
        seed: u64,
    },
    Loss {
        fabric: usize,
        factor: usize,
        seed: u64,
        at: Variant,
    },
}

enum Done {
    Seed(Result<SeedRun, InputError>),
    /// Tokens/s at the end's loss rate.
    Loss(usize, Result<f64, String>),
}

/// `v` at loss rate `rate`, when that is a loss rate the engines take.
fn at_loss(v: &Variant, rate: f64) -> Option<Variant> {
    (rate < 0.5).then(|| Variant {
        loss_rate: rate,
        ..v.clone()
    })
}

fn relative(fabrics: &[FabricResult]) -> Vec<Relative> {
    let best_tps = fabrics
        .iter()
        .filter_map(|f| f.delivered.as_ref().map(|d| d.tokens_per_s.mean))
        .fold(0.0, f64::max);
    let low =
        |g: &dyn Fn(&FabricResult) -> f64| fabrics.iter().map(g).fold(f64::INFINITY, f64::min);
    let low_capex = low(&|f| f.plan.cost.network_capex_usd);
    let low_tco = low(&|f| f.plan.cost.cluster_tco_usd);
    let low_cpt = fabrics
        .iter()
        .filter_map(|f| f.delivered.as_ref().map(|d| d.usd_per_million_tokens.mean))
        .fold(f64::INFINITY, f64::min);
    fabrics
        .iter()
        .map(|f| Relative {
            fabric: f.variant.name.clone(),
            throughput_vs_best: f.delivered.as_ref().map(|d| d.tokens_per_s.mean / best_tps),
            network_capex_vs_lowest: f.plan.cost.network_capex_usd / low_capex,
            cluster_tco_vs_lowest: f.plan.cost.cluster_tco_usd / low_tco,
            cost_per_token_vs_lowest: f
                .delivered
                .as_ref()
                .map(|d| d.usd_per_million_tokens.mean / low_cpt),
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
    let seeds = super::seeds::derive(section.seed, section.seeds);
    let plans = variants
        .iter()
        .map(|v| planned(s, v))
        .collect::<Result<Vec<_>, _>>()?;
    // Seed by seed across the fabrics, so a fabric's first seed has run (and its seed-free
    // figures are kept: `FirstSeed`) by the time its next seed starts.
    let mut jobs = Vec::new();
    for &seed in &seeds {
        jobs.extend((0..variants.len()).map(|fabric| Job::Seed { fabric, seed }));
    }
    for (fabric, v) in variants.iter().enumerate() {
        for (factor, &k) in loss_ends(v).iter().flatten().enumerate() {
            if let Some(at) = at_loss(v, k) {
                jobs.extend(seeds.iter().map(|&seed| Job::Loss {
                    fabric,
                    factor,
                    seed,
                    at: at.clone(),
                }));
            }
        }
    }
    let loss_jobs = jobs
        .iter()
        .filter(|j| matches!(j, Job::Loss { .. }))
        .count();
    let track = Tracker::new(
        variants.len() * seeds.len() * stages(&section) + loss_jobs,
        progress,
    );
    // Fabrics and seeds are independent: the jobs share the cores, results in job order, each
    // with whether a stop request came before it ended (it may then be cut short).
    let done = super::seeds::run_jobs(&jobs, super::seeds::threads(), |j| {
        let r = match j {
            Job::Seed { fabric, seed } => Done::Seed(one_seed(
                s,
                &variants[*fabric],
                &plans[*fabric],
                &section,
                *seed,
                &track,
            )),
            Job::Loss {
                fabric,
                factor,
                seed,
                at,
            } => {
                let f = &plans[*fabric];
                let tps = track.stage(&at.name, "loss interval", || {
                    // The fabric's whole step (lossless), with this loss rate's cost.
                    let timing = f.whole_step(&variants[*fabric])?;
                    let (cfg, design, topo) = (&f.cfg, &f.design, &f.topology);
                    super::whole_step::seed_step(cfg, design, topo, at, *seed, &timing)
                        .map(|(r, _, _)| r.tokens_per_s)
                        .map_err(|e| e.to_string())
                });
                Done::Loss(*factor, tps)
            }
        };
        (r, fabricsim_core::stop::requested())
    });
    let mut per_fabric: Vec<(Vec<SeedRun>, Vec<Vec<Result<f64, String>>>, bool)> = variants
        .iter()
        .map(|_| (Vec::new(), vec![Vec::new(); LOSS_ENDS.len()], false))
        .collect();
    for (j, d) in jobs.iter().zip(done) {
        let (fabric, cut) = match j {
            Job::Seed { fabric, .. } | Job::Loss { fabric, .. } => (*fabric, d.is_none()),
        };
        let slot = &mut per_fabric[fabric];
        let Some((d, stopped)) = d else {
            slot.2 = true;
            continue;
        };
        slot.2 |= cut || stopped;
        match d {
            Done::Seed(r) => slot.0.push(r?),
            Done::Loss(factor, r) => slot.1[factor].push(r),
        }
    }
    let mut fabrics = Vec::new();
    let mut unfinished = Vec::new();
    for ((v, f), (runs, losses, cut)) in variants.iter().zip(plans).zip(per_fabric) {
        if cut {
            unfinished.push(v.name.clone());
            continue;
        }
        let loss_cases = LOSS_ENDS
            .iter()
            .zip(loss_ends(v).unwrap_or_default())
            .zip(losses)
            .filter(|(_, r)| !r.is_empty())
            .map(|((&end, rate), r)| {
                let by_seed: Result<Vec<f64>, String> = r.into_iter().collect();
                LossCase {
                    end,
                    loss_rate: rate,
                    error: by_seed.as_ref().err().cloned(),
                    tokens_per_s_by_seed: by_seed.unwrap_or_default(),
                }
            })
            .collect();
        fabrics.push(combine(s, v, f, &section, &seeds, runs, loss_cases)?);
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
        "Training step: where the step DAG models the job (dense, cp 1, ZeRO 0-2, no DP ranks sharing a server, within the flow engine's bounds) the step time is the whole step on the flow engine, its DP rings, pipeline sends and TP across servers running at once and contending, and the ideal-network baseline is the same DAG with every message across servers instant; otherwise (the fallback, named per fabric below) every collective of the step is run alone on the engine the scenario's engine key picks (auto: packet up to 20M packets) at up to 64 MiB, fitted to alpha-beta and extrapolated to the step's sizes. Channels: NCCL's defaults under [nccl] (ring and tree 2 per NIC, all-to-all and send/recv NCCL_NCHANNELS_PER_NET_PEER, else NCCL's per-peer halving with the rank count: 1 per peer at 256 GPUs). The busbw curves are packet-engine runs of all-reduce and all-to-all over every GPU at 64 KiB, 1 MiB and 8 MiB.".to_string(),
        "Tuned and untuned are the profile's two parameter sets (data/profiles): RoCE tuned = PFC with the SONiC headroom, ECN below XOFF and DCQCN (ConnectX firmware set); untuned = DCQCN off, ECN thresholds above XOFF and a legacy fixed headroom; InfiniBand = credits per VL and adaptive routing.".to_string(),
    ];
    notes.push(format!(
        "Seeds: every simulated figure is measured with {} seed(s) ({}; the first is [compare] seed, the others derived from it) and shown as mean ± the half width of its 95% Student-t interval; JSON gives mean, lo, hi and n.",
        seeds.len(),
        seeds.iter().map(u64::to_string).collect::<Vec<_>>().join(", ")
    ));
    if section.fabric_runs {
        notes.push(format!("Stress: {} (an ESTIMATE of a congested moment, one packet-engine run per fabric and seed with its own parameters, loss included).", stress::pattern(fabrics[0].topology.num_hosts() as u32)));
    } else {
        notes.push(
            "[compare] fabric_runs = false: no busbw curves, stress run or latency probes.".into(),
        );
    }
    if s.file.train.is_none() {
        notes.push("No [train] section: the step is the built-in comparison's (examples/compare-default.toml: Llama 3 70B, TP 8, PP 4, ZeRO-1).".into());
    }
    notes.extend(fabrics.iter().filter_map(|f| {
        let d = f.delivered.as_ref()?;
        Some(format!(
            "{}: step timed by {}.",
            f.variant.name, d.step_timed_by
        ))
    }));
    notes.extend(fabrics.iter().filter_map(|f| f.missing.clone()));
    notes.extend(fabrics.iter().filter_map(|f| {
        let l = f.engine.as_ref()?.loss.as_ref()?;
        Some(format!("{}: {}.", f.variant.name, l.summary()))
    }));
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
            let threads = super::seeds::threads();
            track.add(loss_points.len());
            let (name, before) = (base.name.as_str(), track.done());
            let tell = |slots: &[Option<super::sweep::PointResult>]| {
                let d = slots.iter().flatten().count();
                track.tell(name, "loss sweep", before + d)
            };
            let r = super::sweep::run(s, base, &seeds, &loss_points, threads, false, &tell);
            track.advance(loss_points.len());
            (loss_axes(), r)
        });
    let claims = super::claims::run(s, &section, &fabrics, &track);
    let regimes = match section.claims {
        fabricsim_input::scenario::compare::ClaimsMode::Off => None,
        _ if fabricsim_core::stop::requested() => None,
        _ => super::regimes::run(s, &fabrics, seeds[0], &track),
    };
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
    // The [serve] deployment on each fabric, after the training comparison.
    let serving = match &s.file.serve {
        Some(_) if !fabricsim_core::stop::requested() => {
            match super::serving::run(s, &fabrics, section.seeds, section.utilization)? {
                Ok(v) => {
                    notes.push(format!("Serving: the [serve] deployment on each fabric ({}), its KV-cache transfers and TP collectives on the flow engine (docs/serving.md); cost per delivered token = cluster TCO over the period at [compare] utilization / output tokens of the requests meeting both SLOs.", v.first().map_or(String::new(), |f| f.report.arrivals.clone())));
                    v
                }
                Err(note) => {
                    notes.push(note);
                    Vec::new()
                }
            }
        }
        _ => Vec::new(),
    };
    let tenants = super::tenants::run(s, &variants)?;
    if !tenants.is_empty() {
        notes.push("Tenants: the scenario's [[jobs]] run on each fabric's profile (fabricsim tenants): each job alone (its placement, the others absent) and together; slowdown = together / alone. Each [compare] fabrics entry's profile and tuned or untuned set apply to the jobs; its loss rate and transport to the training step only.".into());
    }
    Ok(Comparison {
        serving,
        claims,
        regimes,
        tenants,
        interrupted: fabricsim_core::stop::requested(),
        loss_sweep,
        name: title(s, &fabrics),
        relative: relative(&fabrics),
        fabrics,
        section,
        years,
        notes,
    })
}
