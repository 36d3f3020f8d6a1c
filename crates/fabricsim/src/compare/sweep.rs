//! Parameter sweeps: one or two parameters over value lists, expanded into points with stable
//! ids (row-major over the axes), each point a pure function of (scenario, fabric, seed,
//! point) so results are the same whatever the thread count or order of evaluation. Every
//! point's step is timed by packet-engine runs of its collectives (`super::step`).
//!
//! All points use the same seeds (common random numbers): differences between points come from
//! the parameters, not from different random loss patterns. Each figure is measured over the
//! seeds ([`super::seeds`]) and reported with its 95% interval.

use serde::{Deserialize, Serialize};

use super::engine::params;
use super::model::train_config;
use super::step::EngineTotals;
use super::stress::{StressOverSeeds, StressResult};
use super::sweep_workload::{self, ServingPoint, TenantPoint, Workload};
use super::variant::{MAX_BER, Variant, profile_recovery};
use super::whole_step::{self, Timing};
use crate::columns::{self, Cells};
use crate::error::Error;
use crate::workload::placement::Placement;
use crate::workload::tenants::storage::checkpoint_write;
use crate::workload::train::config::TrainConfig;
use crate::workload::train::step::StepReport;
use fabricsim_core::error::InputError;
use fabricsim_core::estimate::Estimate;
use fabricsim_core::topology::Topology;
use fabricsim_core::units::{Time, parse_bytes, parse_rate, parse_time};
use fabricsim_input::catalog::Drive;
use fabricsim_input::profile::Profile;
use fabricsim_input::scenario::jobs::PlacementPolicy;
use fabricsim_input::scenario::link_phy;
use fabricsim_input::scenario::reliability::{
    CHECKPOINT_INTERVAL_S, MTBF_SCALE, ReliabilitySection,
};
use fabricsim_input::scenario::train::TrainSection;
use fabricsim_input::scenario::{Design, Scenario};
use fabricsim_mech::Transport;
use fabricsim_mech::fec::MAX_LANES;

/// A parameter a sweep can vary.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Param {
    /// Per-packet random loss on every link.
    LossRate,
    /// Loss recovery: go-back-n or selective-repeat.
    Transport,
    /// GPUs in the cluster ([cluster] gpus).
    Gpus,
    /// Leaf down:up ratio ([topology] oversubscription).
    Oversubscription,
    /// Fabric profile, which sets the link speed (roce-400g, roce-800g, ib-ndr, ib-xdr).
    Profile,
    /// ECN marking threshold Kmin (bytes; RoCE).
    EcnKmin,
    /// ECN marking threshold Kmax (bytes; RoCE).
    EcnKmax,
    /// DCQCN additive increase Rai (a rate; tuned RoCE).
    DcqcnRai,
    /// DCQCN rate-increase timer (a time; tuned RoCE).
    DcqcnTimer,
    /// Pre-FEC BER on every link ([compare] fabrics' `ber`): the RS(544,514) loss of an MTU frame.
    Ber,
    /// Every MTBF of the failure-rate table times this ([reliability] mtbf_scale).
    MtbfScale,
    /// The module drive where optics are needed ([layout] optics: dsp, lpo, lro).
    Optics,
    /// Work between checkpoints (a time; [reliability] checkpoint_interval_s).
    CheckpointInterval,
    /// GPU 0's NIC link trained down to this rate, Gb/s (a degraded link, as `[[faults.link]]
    /// rate_gbps`): its rank paces the synchronous step.
    RateGbps,
    /// A pre-FEC BER per lane on every link, lanes separated by `/` (as `[[faults.link]]
    /// lane_ber`): `1e-8/1e-8/4e-3/1e-8` is one bad lane of four.
    LaneBer,
    /// The training job's model preset ([train] model: a MoE one with `ep` gives expert
    /// all-to-all).
    Model,
    /// Tensor-, pipeline- and expert-parallel degrees ([train] tp, pp, ep).
    Tp,
    Pp,
    Ep,
    /// A `[serve]` deployment's Poisson request rate (requests/s), and every serving job's.
    Rate,
    /// The first N of the `[[jobs]]` share the fabric (`super::sweep_workload`).
    Tenants,
    /// Every job's placement policy ([[jobs]] placement: packed, spread, random).
    Placement,
    /// The MoE expert-parallel routing skew (uniform or zipf:S) of `[train]`, `[serve]` and
    /// every job.
    MoeSkew,
    /// Leaves with one up-link down before the step, routed around (`Variant::failed_uplinks`).
    FailedUplinks,
}

/// Most leaves a `failed_uplinks` point may fail one up-link of.
pub const MAX_FAILED_UPLINKS: u32 = 4096;

impl Param {
    pub const ALL: [Param; 24] = [
        Param::LossRate,
        Param::Transport,
        Param::Gpus,
        Param::Oversubscription,
        Param::Profile,
        Param::EcnKmin,
        Param::EcnKmax,
        Param::DcqcnRai,
        Param::DcqcnTimer,
        Param::Ber,
        Param::MtbfScale,
        Param::Optics,
        Param::CheckpointInterval,
        Param::RateGbps,
        Param::LaneBer,
        Param::Model,
        Param::Tp,
        Param::Pp,
        Param::Ep,
        Param::Rate,
        Param::Tenants,
        Param::Placement,
        Param::MoeSkew,
        Param::FailedUplinks,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Param::LossRate => "loss_rate",
            Param::Transport => "transport",
            Param::Gpus => "gpus",
            Param::Oversubscription => "oversubscription",
            Param::Profile => "profile",
            Param::EcnKmin => "ecn_kmin",
            Param::EcnKmax => "ecn_kmax",
            Param::DcqcnRai => "dcqcn_rai",
            Param::DcqcnTimer => "dcqcn_timer",
            Param::Ber => "ber",
            Param::MtbfScale => "mtbf_scale",
            Param::Optics => "optics",
            Param::CheckpointInterval => "checkpoint_interval",
            Param::RateGbps => "rate_gbps",
            Param::LaneBer => "lane_ber",
            Param::Model => "model",
            Param::Tp => "tp",
            Param::Pp => "pp",
            Param::Ep => "ep",
            Param::Rate => "rate",
            Param::Tenants => "tenants",
            Param::Placement => "placement",
            Param::MoeSkew => "moe_skew",
            Param::FailedUplinks => "failed_uplinks",
        }
    }

    /// The value as a number for a chart's x axis (bytes, Mb/s, us), when the parameter has one.
    pub fn number(self, v: &str) -> Option<f64> {
        match self {
            Param::LossRate | Param::Gpus | Param::Ber | Param::MtbfScale => v.parse().ok(),
            Param::Tp | Param::Pp | Param::Ep | Param::Rate | Param::Tenants => v.parse().ok(),
            Param::FailedUplinks => v.parse().ok(),
            Param::RateGbps => v.parse().ok(),
            Param::MoeSkew => super::sweep_workload::zipf_exponent(v),
            Param::CheckpointInterval => parse_time(v).ok().map(|t| t.as_secs_f64()),
            Param::EcnKmin | Param::EcnKmax => parse_bytes(v).ok().map(|b| b as f64),
            Param::DcqcnRai => parse_rate(v).ok().map(|r| r.bps() as f64 / 1e6),
            Param::DcqcnTimer => parse_time(v).ok().map(|t| t.as_us_f64()),
            Param::Transport
            | Param::Oversubscription
            | Param::Profile
            | Param::Optics
            | Param::Model
            | Param::LaneBer
            | Param::Placement => None,
        }
    }

    /// True when values are numbers (a chart can put them on an x axis).
    pub fn numeric(self) -> bool {
        !matches!(
            self,
            Param::Transport
                | Param::Oversubscription
                | Param::Profile
                | Param::Optics
                | Param::Model
                | Param::LaneBer
                | Param::Placement
        )
    }
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SweepAxis {
    pub param: Param,
    pub values: Vec<String>,
}

impl SweepAxis {
    /// Parses `name=v1,v2,...` (the `--param` flag); values are checked here.
    pub fn parse(flag: &str, text: &str) -> Result<SweepAxis, InputError> {
        let names: Vec<&str> = Param::ALL.iter().map(|p| p.name()).collect();
        let (name, list) = text.split_once('=').ok_or_else(|| {
            InputError::flag(flag, text, "is not NAME=V1,V2,...", names.join(", "))
        })?;
        let param = Param::ALL
            .into_iter()
            .find(|p| p.name() == name.trim())
            .ok_or_else(|| {
                InputError::flag(flag, name, "is not a sweep parameter", names.join(", "))
            })?;
        let values: Vec<String> = list.split(',').map(|v| v.trim().to_string()).collect();
        for v in &values {
            let ok = match param {
                Param::LossRate => v.parse::<f64>().is_ok_and(|p| (0.0..0.5).contains(&p)),
                Param::Transport => Transport::parse(v).is_some(),
                Param::Gpus => v.parse::<u32>().is_ok_and(|g| g > 0),
                Param::Oversubscription => v.contains(':'),
                Param::Profile => Profile::builtin(v).is_ok(),
                Param::EcnKmin | Param::EcnKmax => parse_bytes(v).is_ok_and(|b| b > 0),
                Param::DcqcnRai => parse_rate(v).is_ok(),
                Param::DcqcnTimer => parse_time(v).is_ok_and(|t| t > Time::ZERO),
                Param::Ber => v.parse::<f64>().is_ok_and(|b| (0.0..=MAX_BER).contains(&b)),
                Param::MtbfScale => v.parse::<f64>().is_ok_and(|x| within(x, MTBF_SCALE)),
                Param::Optics => Drive::ALL.iter().any(|d| d.key() == v),
                Param::CheckpointInterval => {
                    parse_time(v).is_ok_and(|t| within(t.as_secs_f64(), CHECKPOINT_INTERVAL_S))
                }
                Param::RateGbps => v.parse::<u32>().is_ok_and(|g| g > 0),
                Param::LaneBer => lane_bers(v).is_some(),
                Param::Model => !v.is_empty(),
                Param::Tp | Param::Pp | Param::Ep | Param::Tenants => {
                    v.parse::<u64>().is_ok_and(|g| g > 0)
                }
                Param::Rate => v.parse::<f64>().is_ok_and(|r| r.is_finite() && r > 0.0),
                Param::Placement => PlacementPolicy::parse(v).is_some(),
                Param::MoeSkew => super::sweep_workload::skew_ok(v),
                Param::FailedUplinks => v.parse::<u32>().is_ok_and(|n| n <= MAX_FAILED_UPLINKS),
            };
            if !ok {
                let allowed = match param {
                    Param::LossRate => "probabilities from 0 up to 0.5".to_string(),
                    Param::Transport => Transport::allowed(),
                    Param::Gpus => "whole numbers of GPUs".into(),
                    Param::Oversubscription => "ratios such as 1:1, 2:1".into(),
                    Param::Profile => Profile::ids().join(", "),
                    Param::EcnKmin | Param::EcnKmax => {
                        "positive byte counts such as 50K, 150000, 1.5M".into()
                    }
                    Param::DcqcnRai => "positive rates such as 5Mbps, 40Mbps".into(),
                    Param::DcqcnTimer => "positive times such as 55us, 300us".into(),
                    Param::Ber => format!("pre-FEC bit error ratios from 0 to {MAX_BER}"),
                    Param::MtbfScale => format!(
                        "factors from {} to {} (0.5: parts fail twice as often)",
                        MTBF_SCALE.0, MTBF_SCALE.1
                    ),
                    Param::Optics => Drive::ALL.map(|d| d.key()).join(", "),
                    Param::CheckpointInterval => format!(
                        "times from {} s to {} s, such as 600s, 1800s",
                        CHECKPOINT_INTERVAL_S.0, CHECKPOINT_INTERVAL_S.1
                    ),
                    Param::RateGbps => "whole Gb/s below the link's rate, such as 200, 100".into(),
                    Param::LaneBer => format!(
                        "1, 2, 4 or {MAX_LANES} pre-FEC BERs from 0 to 0.5, one per lane, \
                         separated by /, such as 1e-8/1e-8/4e-3/1e-8"
                    ),
                    Param::Model => "a model preset such as mixtral-8x7b, deepseek-v3".into(),
                    Param::Tp | Param::Pp | Param::Ep => "whole numbers from 1".into(),
                    Param::Rate => "positive request rates per second such as 5, 20".into(),
                    Param::Tenants => "whole numbers of jobs from 1 (the first N [[jobs]])".into(),
                    Param::Placement => PlacementPolicy::ALLOWED.into(),
                    Param::MoeSkew => super::sweep_workload::SKEW_ALLOWED.into(),
                    Param::FailedUplinks => format!(
                        "whole numbers of leaves from 0 to {MAX_FAILED_UPLINKS} (one up-link \
                         down on each)"
                    ),
                };
                return Err(InputError::flag(
                    flag,
                    v,
                    format!("is not a {} value", param.name()),
                    allowed,
                ));
            }
        }
        Ok(SweepAxis { param, values })
    }
}

/// One point: its id and a value per axis.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Point {
    pub id: usize,
    pub values: Vec<(Param, String)>,
}

/// All points, row-major (the last axis varies fastest).
pub fn expand(axes: &[SweepAxis]) -> Vec<Point> {
    let mut points = vec![Vec::new()];
    for a in axes {
        points = points
            .into_iter()
            .flat_map(|p: Vec<(Param, String)>| {
                a.values.iter().map(move |v| {
                    let mut q = p.clone();
                    q.push((a.param, v.clone()));
                    q
                })
            })
            .collect();
    }
    points
        .into_iter()
        .enumerate()
        .map(|(id, values)| Point { id, values })
        .collect()
}

/// One point's figures, each over the seeds; it reads back from the sweep's JSON
/// (`sweep --resume`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PointResult {
    pub point: Point,
    pub step_time_s: Option<Estimate>,
    pub tokens_per_s: Option<Estimate>,
    pub mfu: Option<Estimate>,
    pub network_capex_usd: Option<f64>,
    pub usd_per_million_tokens: Option<Estimate>,
    /// Summed over the seeds.
    pub engine: Option<EngineTotals>,
    /// The first seed's stress run on the point's cluster, when the sweep runs it.
    pub stress: Option<StressResult>,
    /// The stress runs of every seed, figure by figure.
    pub stress_over_seeds: Option<StressOverSeeds>,
    /// Why the point has no result (an invalid combination, an engine run that failed).
    pub error: Option<String>,
    /// The plan's network power (switches, optics, NICs), kW.
    #[serde(default)]
    pub network_power_kw: Option<f64>,
    /// The plan's job interruptions per day and the ETTR at its checkpoint interval
    /// (`plan::reliability`).
    #[serde(default)]
    pub interruptions_per_day: Option<f64>,
    #[serde(default)]
    pub ettr: Option<f64>,
    /// TCO over the tokens trained between interruptions: `usd_per_million_tokens` / ETTR.
    #[serde(default)]
    pub usd_per_million_good_tokens: Option<Estimate>,
    /// A `[serve]` scenario's point: its deployment's figures (`super::sweep_workload`).
    #[serde(default)]
    pub serving: Option<ServingPoint>,
    /// A `[[jobs]]` scenario's point: each job's slowdown.
    #[serde(default)]
    pub tenants: Option<Vec<TenantPoint>>,
}

impl PointResult {
    /// A point with no figure yet.
    fn empty(point: &Point) -> PointResult {
        PointResult {
            point: point.clone(),
            step_time_s: None,
            tokens_per_s: None,
            mfu: None,
            network_capex_usd: None,
            usd_per_million_tokens: None,
            engine: None,
            stress: None,
            stress_over_seeds: None,
            error: None,
            network_power_kw: None,
            interruptions_per_day: None,
            ettr: None,
            usd_per_million_good_tokens: None,
            serving: None,
            tenants: None,
        }
    }

    /// A point that has no result, and why.
    fn failed(point: &Point, why: String) -> PointResult {
        PointResult {
            error: Some(why),
            ..PointResult::empty(point)
        }
    }
}

/// The scenario and fabric of `point`: `base` and `fabric` with the point's values applied
/// (values were checked by [`SweepAxis::parse`]).
pub fn apply(base: &Scenario, fabric: &Variant, point: &Point) -> (Scenario, Variant) {
    let mut s = base.clone();
    let mut v = fabric.clone();
    if s.file.train.is_none() && Workload::of(base) == Workload::Train {
        s.file.train = super::model::default_scenario().file.train;
    }
    let transport = point.values.iter().any(|(p, _)| *p == Param::Transport);
    for (param, value) in &point.values {
        match param {
            Param::LossRate => v.loss_rate = value.parse().unwrap_or(v.loss_rate),
            Param::Transport => v.recovery = Transport::parse(value).unwrap_or(v.recovery),
            Param::Gpus => s.file.cluster.gpus = value.parse().unwrap_or(s.file.cluster.gpus),
            Param::Oversubscription => s.file.topology.oversubscription = value.clone(),
            Param::Profile => {
                v.profile = value.clone();
                // The new profile's own loss recovery, unless a transport axis sets it.
                if !transport {
                    v.recovery = profile_recovery(value);
                }
            }
            Param::EcnKmin => v.tune.ecn_kmin_bytes = parse_bytes(value).ok(),
            Param::EcnKmax => v.tune.ecn_kmax_bytes = parse_bytes(value).ok(),
            Param::DcqcnRai => v.tune.dcqcn_rai = parse_rate(value).ok(),
            Param::DcqcnTimer => v.tune.dcqcn_rate_increase_timer = parse_time(value).ok(),
            Param::Ber => v.ber = value.parse().unwrap_or(v.ber),
            Param::MtbfScale => reliability(&mut s).mtbf_scale = value.parse().ok(),
            Param::Optics => s.file.layout.optics = value.clone(),
            Param::CheckpointInterval => {
                reliability(&mut s).checkpoint_interval_s =
                    parse_time(value).ok().map(|t| t.as_secs_f64())
            }
            Param::RateGbps => v.phy.degraded_gbps = value.parse().ok(),
            Param::LaneBer => v.phy.lane_ber = lane_bers(value).unwrap_or_default(),
            Param::Model => train(&mut s).model = Some(value.clone()),
            Param::Tp => train(&mut s).tp = value.parse().ok().or(train(&mut s).tp),
            Param::Pp => train(&mut s).pp = value.parse().ok().or(train(&mut s).pp),
            Param::Ep => train(&mut s).ep = value.parse().ok().or(train(&mut s).ep),
            Param::Rate | Param::Tenants | Param::Placement | Param::MoeSkew => {
                sweep_workload::apply(&mut s, *param, value)
            }
            Param::FailedUplinks => v.failed_uplinks = value.parse().unwrap_or(0),
        }
    }
    s.file.fabric.profile = v.profile.clone();
    (s, v)
}

/// The scenario's `[train]` section (filled with the built-in comparison's by [`apply`]; the
/// training axes are refused on the other workloads, `sweep_workload::check_axes`).
fn train(s: &mut Scenario) -> &mut TrainSection {
    s.file.train.get_or_insert_with(Default::default)
}

/// The scenario's `[reliability]` section, created empty when it has none.
fn reliability(s: &mut Scenario) -> &mut ReliabilitySection {
    s.file.reliability.get_or_insert_with(Default::default)
}

/// `v`'s BERs, one per lane separated by `/`, when they are 1, 2, 4 or 8 of them, each in [0, 0.5).
fn lane_bers(v: &str) -> Option<Vec<f64>> {
    let b: Vec<f64> = v
        .split('/')
        .map(|x| x.trim().parse().ok())
        .collect::<Option<_>>()?;
    let ok = [1, 2, 4, MAX_LANES].contains(&b.len()) && b.iter().all(|x| (0.0..0.5).contains(x));
    ok.then_some(b)
}

/// `topo` with GPU 0's NIC link at `v`'s degraded rate, if it has one.
fn degrade(design: &Design, topo: &mut Topology, v: &Variant) -> Result<(), Error> {
    let Some(g) = v.phy.degraded_gbps else {
        return Ok(());
    };
    let place = Placement::on_topology(topo, design.spec.gpus_per_node);
    let link = topo.port(topo.host_port(place.host(0))).link;
    let gbps = topo.link(link).rate.bps() / 1_000_000_000;
    let rate = link_phy::degraded(gbps, g).map_err(|allowed| {
        Error::Unsupported(format!(
            "rate_gbps {g}: GPU 0's NIC link runs at {gbps}G, a degraded link runs slower ({allowed})"
        ))
    })?;
    topo.links[link.0 as usize].rate = rate;
    Ok(())
}

/// Whether `x` lies in the closed interval `(lo, hi)`.
fn within(x: f64, (lo, hi): (f64, f64)) -> bool {
    x.is_finite() && (lo..=hi).contains(&x)
}

/// Checks that every point's combination builds and gives valid engine parameters (an ECN
/// threshold on a fabric without ECN, Kmin not below Kmax, a GPU count the cluster cannot
/// have), before anything runs; the error names `flag` and the point.
pub fn check(
    base: &Scenario,
    fabric: &Variant,
    points: &[Point],
    flag: &str,
) -> Result<(), InputError> {
    for point in points {
        let (s, v) = apply(base, fabric, point);
        let values: Vec<String> = point
            .values
            .iter()
            .map(|(p, x)| format!("{}={x}", p.name()))
            .collect();
        let problem =
            crate::plan::run(&s)
                .map_err(Error::from)
                .and_then(|(design, mut topo, _)| {
                    params(&v, &design, 1)?;
                    degrade(&design, &mut topo, &v)?;
                    sweep_workload::check_point(&s, &design, &topo, point)
                });
        if let Err(e) = problem {
            return Err(InputError::flag(
                flag,
                values.join(" "),
                e,
                "values this fabric and cluster admit",
            ));
        }
    }
    Ok(())
}

/// Evaluates one point over `seeds`: `base` scenario and fabric with the point's values
/// applied, each seed's step timed as `compare` times it (`whole_step::seed_step`: the whole
/// step on the flow engine where its DAG runs, run once for all seeds, else the fits); with
/// `stress`, also the comparison's stress run ([`super::stress`]) on the point's cluster.
pub fn run_point(
    base: &Scenario,
    fabric: &Variant,
    seeds: &[u64],
    point: &Point,
    stress: bool,
) -> PointResult {
    run_point_timed(base, fabric, seeds, point, stress).0
}

/// [`run_point`] and how its step was timed (`None`: the point failed before its step).
pub fn run_point_timed(
    base: &Scenario,
    fabric: &Variant,
    seeds: &[u64],
    point: &Point,
    stress: bool,
) -> (PointResult, Option<Timing>) {
    let mut whole: Option<Timing> = None;
    let r = timed_point(base, fabric, seeds, point, |cfg, design, topo, v, seed| {
        let mut ran = EngineTotals::default();
        let t = match &mut whole {
            Some(t) => t,
            None => {
                let t = whole_step::run(cfg, design, topo, v)?;
                if let Timing::Dag(d) = &t {
                    (ran.runs, ran.flow_runs) = (d.engine_runs, d.engine_runs);
                }
                whole.insert(t)
            }
        };
        let (r, _, es) = whole_step::seed_step(cfg, design, topo, v, seed, t)?;
        ran.add(&es.totals, seed);
        let st = match stress {
            true => Some(super::stress::run(design, topo, v, seed)?),
            false => None,
        };
        Ok((r, ran, st))
    });
    (r, whole)
}

/// The step of a point and what it ran: the report, the engine runs, and the stress run.
pub type PointStep = (StepReport, EngineTotals, Option<StressResult>);

/// [`run_point`] with the step of the point's job, design, topology and fabric timed by `time`
/// for each of `seeds` (the engine-calibrated step, or another model of it).
pub fn timed_point(
    base: &Scenario,
    fabric: &Variant,
    seeds: &[u64],
    point: &Point,
    mut time: impl FnMut(&TrainConfig, &Design, &Topology, &Variant, u64) -> Result<PointStep, Error>,
) -> PointResult {
    let (s, v) = apply(base, fabric, point);
    let other = match Workload::of(&s) {
        Workload::Train => None,
        Workload::Serve => Some(sweep_workload::serve_point(&s, seeds).map(|r| PointResult {
            serving: Some(r),
            ..PointResult::empty(point)
        })),
        Workload::Tenants => {
            Some(
                sweep_workload::tenants_point(&s, &v, seeds).map(|r| PointResult {
                    tenants: Some(r),
                    ..PointResult::empty(point)
                }),
            )
        }
    };
    if let Some(r) = other {
        return r.unwrap_or_else(|e| PointResult::failed(point, e));
    }
    let outcome = (|| -> Result<_, String> {
        let (design, mut topo, plan) = crate::plan::run(&s).map_err(|e| e.to_string())?;
        degrade(&design, &mut topo, &v).map_err(|e| e.to_string())?;
        let cfg = train_config(&s, &design, &topo).map_err(|e| e.to_string())?;
        let write = checkpoint_write(&s, &cfg, &design, &topo).map_err(|e| e.to_string())?;
        let reliability = plan.reliability.clone().with_checkpoint(&design, write);
        let secs = super::model::period_s(&design, 1.0);
        let (mut steps, mut totals, mut runs) = (Vec::new(), EngineTotals::default(), Vec::new());
        for &seed in seeds {
            let (r, t, st) = time(&cfg, &design, &topo, &v, seed).map_err(|e| e.to_string())?;
            totals.add(&t, seed);
            steps.push(r);
            runs.extend(st);
        }
        let stress = !runs.is_empty();
        let over = |what: &str, g: &dyn Fn(&crate::workload::train::step::StepReport) -> f64| {
            super::seeds::estimate(what, &steps.iter().map(g).collect::<Vec<_>>())
        };
        let tco = plan.cost.cluster_tco_usd;
        let usd = over("USD per million tokens", &|r| {
            super::model::usd_per_million_tokens(tco, r.tokens_per_s, secs)
        })?;
        let ettr = reliability.ettr;
        Ok(PointResult {
            point: point.clone(),
            step_time_s: Some(over("step time", &|r| r.step_time_s)?),
            tokens_per_s: Some(over("tokens/s", &|r| r.tokens_per_s)?),
            mfu: Some(over("MFU", &|r| r.mfu)?),
            network_capex_usd: Some(plan.cost.network_capex_usd),
            usd_per_million_tokens: Some(usd),
            engine: Some(totals),
            stress_over_seeds: stress.then(|| super::stress::over_seeds(&runs)),
            stress: runs.into_iter().next(),
            error: None,
            network_power_kw: Some(plan.power.total_kw()),
            interruptions_per_day: Some(reliability.interruptions_per_day),
            ettr: Some(ettr),
            usd_per_million_good_tokens: Some(usd.scaled(1.0 / ettr)),
            serving: None,
            tenants: None,
        })
    })();
    outcome.unwrap_or_else(|e| PointResult::failed(point, e))
}

/// Runs every point on `threads` threads (`seeds::run_jobs_reporting`); after each point
/// `progress(slots)` with every point's slot (`None`: not finished), one call at a time (a
/// caller can checkpoint them). Results come back in point order; after a stop request
/// (`fabricsim_core::stop`) only the points that finished before it.
pub fn run(
    base: &Scenario,
    fabric: &Variant,
    seeds: &[u64],
    points: &[Point],
    threads: usize,
    stress: bool,
    progress: &(dyn Fn(&[Option<PointResult>]) + Sync),
) -> Vec<PointResult> {
    let run = |p: &Point| run_point(base, fabric, seeds, p, stress);
    crate::workload::seeds::run_jobs_reporting(points, threads, run, progress)
        .into_iter()
        .flatten()
        .collect()
}

/// The results in columns: one row per point, a column per axis (a numeric axis whose values
/// are plain numbers as floats, else as text), then the figures, each figure over the seeds as
/// its mean and the ends of its 95% interval (`_lo`, `_hi`); the CSV, Arrow and Parquet
/// outputs of `sweep`.
pub fn table(axes: &[SweepAxis], results: &[PointResult]) -> columns::Table {
    let mut t = columns::Table::default();
    let ids = results.iter().map(|r| Some(r.point.id as u64)).collect();
    t.push("point", Cells::U64(ids));
    for (k, a) in axes.iter().enumerate() {
        let texts: Vec<&str> = results
            .iter()
            .map(|r| r.point.values[k].1.as_str())
            .collect();
        // A float column only when each value reads back as the same text (the CSV's bytes).
        let floats: Option<Vec<Option<f64>>> = texts
            .iter()
            .map(|v| {
                v.parse::<f64>()
                    .ok()
                    .filter(|x| a.param.numeric() && format!("{x}") == *v)
                    .map(Some)
            })
            .collect();
        let cells = match floats {
            Some(f) => Cells::F64(f),
            None => Cells::Text(texts.iter().map(|v| Some(v.to_string())).collect()),
        };
        t.push(a.param.name(), cells);
    }
    let n = |r: &PointResult| {
        let serve = r.serving.as_ref().map(|x| x.ttft_p99_s);
        let jobs = r
            .tenants
            .as_ref()
            .and_then(|t| t.first())
            .map(|j| j.slowdown);
        [r.step_time_s, r.mfu, serve, jobs]
            .iter()
            .flatten()
            .map(|e| u64::from(e.n))
            .next()
    };
    t.push("seeds", Cells::U64(results.iter().map(n).collect()));
    t.push_estimate("step_time_s", results.iter().map(|r| r.step_time_s));
    t.push_estimate("tokens_per_s", results.iter().map(|r| r.tokens_per_s));
    t.push_estimate("mfu", results.iter().map(|r| r.mfu));
    let capex = results.iter().map(|r| r.network_capex_usd).collect();
    t.push("network_capex_usd", Cells::F64(capex));
    t.push_estimate(
        "usd_per_million_tokens",
        results.iter().map(|r| r.usd_per_million_tokens),
    );
    let totals = |get: fn(&EngineTotals) -> u64| {
        Cells::U64(results.iter().map(|r| r.engine.as_ref().map(get)).collect())
    };
    t.push("packets_dropped", totals(|e| e.packets_dropped));
    t.push("retransmitted_packets", totals(|e| e.retransmitted_packets));
    t.push("timeouts", totals(|e| e.timeouts));
    for fig in &super::stress::FIGURES {
        t.push_estimate(
            &format!("stress_{}", fig.key),
            results
                .iter()
                .map(|r| r.stress_over_seeds.as_ref().and_then(|s| s.get(fig.key))),
        );
    }
    t.push(
        "error",
        Cells::Text(results.iter().map(|r| r.error.clone()).collect()),
    );
    let floats =
        |get: fn(&PointResult) -> Option<f64>| Cells::F64(results.iter().map(get).collect());
    t.push("network_power_kw", floats(|r| r.network_power_kw));
    t.push("interruptions_per_day", floats(|r| r.interruptions_per_day));
    t.push("ettr", floats(|r| r.ettr));
    t.push_estimate(
        "usd_per_million_good_tokens",
        results.iter().map(|r| r.usd_per_million_good_tokens),
    );
    sweep_workload::push_columns(&mut t, results);
    t
}

/// The CSV of the results ([`table`]).
pub fn csv(axes: &[SweepAxis], results: &[PointResult]) -> String {
    table(axes, results).to_csv()
}

/// The chart: against the first axis (which must be numeric), MFU for the loss, GPU-count and
/// link parameters, the stress run's background p99 completion time for the congestion-control
/// parameters (they act on congestion, which the step's collectives hardly meet), MFU x ETTR
/// for the reliability ones (they leave the step alone); one series per value of the second
/// axis (or one series).
pub fn chart(axes: &[SweepAxis], results: &[PointResult]) -> Option<String> {
    use crate::svg::line::{LineChart, Series};
    use crate::svg::{Scale, TickFormat};
    let x = axes.first()?;
    if !x.param.numeric() {
        return None;
    }
    let cc = matches!(
        x.param,
        Param::EcnKmin | Param::EcnKmax | Param::DcqcnRai | Param::DcqcnTimer
    );
    let failures = matches!(x.param, Param::MtbfScale | Param::CheckpointInterval);
    let y = |r: &PointResult| -> Option<Estimate> {
        if let Some(v) = sweep_workload::chart_y(r) {
            Some(v)
        } else if cc {
            r.stress_over_seeds.as_ref()?.get("bg_fct_p99_us")
        } else if failures {
            Some(r.mfu?.scaled(r.ettr?))
        } else {
            r.mfu
        }
    };
    let log = matches!(x.param, Param::LossRate | Param::Ber);
    let groups: Vec<String> = axes
        .get(1)
        .map(|a| a.values.clone())
        .unwrap_or_else(|| vec![String::new()]);
    let series: Vec<Series> = groups
        .iter()
        .map(|g| {
            Series::of_estimates(
                if g.is_empty() {
                    x.param.name().into()
                } else {
                    g.clone()
                },
                results
                    .iter()
                    .filter(|r| g.is_empty() || r.point.values.get(1).map(|v| &v.1) == Some(g))
                    .filter_map(|r| Some((x.param.number(&r.point.values[0].1)?, y(r)?)))
                    // A log axis has no place for a lossless point (the tables give it).
                    .filter(|p| !log || p.0 > 0.0),
            )
        })
        .collect();
    let (title, fmt) = match x.param {
        Param::LossRate => (
            "packet loss rate (per packet per link)",
            TickFormat::Percent,
        ),
        Param::EcnKmin => ("ECN Kmin (bytes)", TickFormat::Bytes),
        Param::EcnKmax => ("ECN Kmax (bytes)", TickFormat::Bytes),
        Param::DcqcnRai => ("DCQCN Rai (Mb/s)", TickFormat::Number),
        Param::DcqcnTimer => ("DCQCN rate-increase timer (us)", TickFormat::Number),
        Param::Ber => ("pre-FEC bit error ratio", TickFormat::Number),
        Param::MtbfScale => ("MTBF scale (x the failure-rate table)", TickFormat::Number),
        Param::CheckpointInterval => ("checkpoint interval (s)", TickFormat::Number),
        Param::Rate => ("request rate (requests/s)", TickFormat::Number),
        Param::Tenants => ("jobs sharing the fabric", TickFormat::Number),
        Param::MoeSkew => ("MoE routing Zipf exponent (0: uniform)", TickFormat::Number),
        Param::FailedUplinks => ("leaves with a failed up-link", TickFormat::Number),
        _ => ("GPUs", TickFormat::Number),
    };
    let (y_title, y_fmt, what) = if results.iter().any(|r| r.serving.is_some()) {
        ("TTFT p99 (s)", TickFormat::Number, "TTFT p99")
    } else if results.iter().any(|r| r.tenants.is_some()) {
        (
            "most slowed job's slowdown (together / alone)",
            TickFormat::Number,
            "slowdown",
        )
    } else if cc {
        (
            "background FCT p99 under stress (us)",
            TickFormat::Number,
            "stress p99 FCT",
        )
    } else if failures {
        (
            "MFU x ETTR (time between interruptions counted)",
            TickFormat::Percent,
            "MFU x ETTR",
        )
    } else {
        ("MFU (model FLOPs / peak)", TickFormat::Percent, "MFU")
    };
    Some(
        LineChart::fitted(
            &format!("{what} against {}", x.param.name()),
            (
                title,
                match log {
                    // Loss rates and BERs span decades: a log axis (issue 24).
                    true => Scale::Log10,
                    false => Scale::Linear,
                },
                fmt,
            ),
            (y_title, Scale::Linear, y_fmt),
            series,
        )
        .to_svg(),
    )
}
