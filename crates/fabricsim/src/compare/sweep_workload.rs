//! The workload axes of a sweep (issue 28): `rate` (a `[serve]` deployment's Poisson request
//! rate, and every serving job's), `tenants` (the first N of the `[[jobs]]`, in the order
//! written, share the fabric; the others are absent and their servers idle), `placement` (every
//! job's policy) and `moe_skew` (the MoE routing skew of `[train]`, `[serve]` and every job);
//! and the points they run. A scenario with `[[jobs]]` sweeps its jobs (`workload::tenants`:
//! each job alone and together, its slowdown), one with `[serve]` its deployment
//! (`workload::serve`: TTFT, TPOT, goodput, cost per delivered token), any other its training
//! step (`super::sweep`).

use serde::{Deserialize, Serialize};

use super::model::{period_s, usd_per_million_tokens};
use super::sweep::{Param, Point, PointResult, SweepAxis};
use super::variant::Variant;
use crate::columns::Table;
use crate::error::Error;
use crate::workload::run_engine::Cluster;
use crate::workload::serve::{self, ServeJob};
use crate::workload::tenants;
use fabricsim_core::error::InputError;
use fabricsim_core::estimate::Estimate;
use fabricsim_core::topology::Topology;
use fabricsim_input::moe_skew::MAX_ZIPF;
use fabricsim_input::scenario::Design;
use fabricsim_input::scenario::Scenario;

/// What the skew axis takes (a histogram file belongs in the scenario, not on a value list).
pub const SKEW_ALLOWED: &str = "uniform or zipf:S (0 < S <= 8), such as uniform,zipf:0.8,zipf:1.5";

/// What a sweep's points run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Workload {
    /// The training step (`[train]`, or the built-in comparison's).
    Train,
    /// The `[serve]` deployment.
    Serve,
    /// The `[[jobs]]`, alone and together.
    Tenants,
}

impl Workload {
    pub fn of(s: &Scenario) -> Workload {
        if !s.file.jobs.is_empty() {
            Workload::Tenants
        } else if s.file.serve.is_some() {
            Workload::Serve
        } else {
            Workload::Train
        }
    }

    fn what(self) -> &'static str {
        match self {
            Workload::Train => "a training step",
            Workload::Serve => "a [serve] deployment",
            Workload::Tenants => "[[jobs]] sharing the fabric",
        }
    }
}

/// Whether `v` is a skew the axis takes.
pub fn skew_ok(v: &str) -> bool {
    v == "uniform" || zipf_exponent(v).is_some_and(|s| s > 0.0)
}

/// The skew's Zipf exponent for a chart's x axis (uniform: 0, the exponent that flattens it).
pub fn zipf_exponent(v: &str) -> Option<f64> {
    match v {
        "uniform" => Some(0.0),
        _ => v
            .strip_prefix("zipf:")?
            .trim()
            .parse::<f64>()
            .ok()
            .filter(|s| *s > 0.0 && *s <= MAX_ZIPF),
    }
}

/// Whether `param` acts on what `w`'s points run; the serving and multi-tenant runs take the
/// cluster, topology and profile from the plan and the fabric profile's own transport, so the
/// loss, congestion-control, reliability and parallelism axes would not move them.
fn acts_on(param: Param, w: Workload) -> bool {
    match param {
        Param::Gpus | Param::Oversubscription | Param::Profile | Param::Optics => true,
        Param::MoeSkew => true,
        Param::Rate => w != Workload::Train,
        Param::Tenants | Param::Placement => w == Workload::Tenants,
        _ => w == Workload::Train,
    }
}

/// Refuses an axis that does not act on the scenario's workload, and a `tenants` value above
/// its job count; the error names `flag`, the axis and its value.
pub fn check_axes(s: &Scenario, axes: &[SweepAxis], flag: &str) -> Result<(), InputError> {
    let w = Workload::of(s);
    for a in axes {
        let name = a.param.name();
        let at = |v: &str| format!("{name}={v}");
        let serving = s.file.serve.is_some() || s.file.jobs.iter().any(|j| j.serve.is_some());
        let moe = s.file.train.is_some()
            || s.file.serve.is_some()
            || s.file
                .jobs
                .iter()
                .any(|j| j.serve.is_some() || j.train.is_some());
        let refuse = |allowed: &str| {
            Err(InputError::flag(
                flag,
                at(&a.values.join(",")),
                format!("does not act on this scenario's points ({})", w.what()),
                allowed.to_string(),
            ))
        };
        match a.param {
            Param::Rate if !serving => {
                return refuse("a scenario with [serve] or a serving [[jobs]] entry");
            }
            Param::MoeSkew if !moe && w != Workload::Train => {
                return refuse("a scenario with [train], [serve] or [[jobs]]");
            }
            Param::Tenants | Param::Placement if w != Workload::Tenants => {
                return refuse("a scenario with [[jobs]]");
            }
            p if !acts_on(p, w) => {
                return refuse(match w {
                    Workload::Train => "a scenario with [serve] or [[jobs]]",
                    _ => {
                        "gpus, oversubscription, profile, optics, rate, moe_skew (and tenants, placement with [[jobs]])"
                    }
                });
            }
            _ => {}
        }
        if a.param == Param::Tenants {
            let n = s.file.jobs.len();
            if let Some(v) = a
                .values
                .iter()
                .find(|v| v.parse::<usize>().map_or(true, |k| k > n))
            {
                return Err(InputError::flag(
                    flag,
                    at(v),
                    format!("the scenario has {n} [[jobs]]"),
                    format!("1 to {n}: the first N jobs, in the order written, share the fabric"),
                ));
            }
        }
    }
    Ok(())
}

/// Sets `param` (one of the workload axes) to `value` in `s` (checked by `SweepAxis::parse`).
pub fn apply(s: &mut Scenario, param: Param, value: &str) {
    match param {
        Param::Rate => {
            let rate = value.parse().ok();
            let jobs = s.file.jobs.iter_mut().filter_map(|j| j.serve.as_mut());
            for d in s.file.serve.iter_mut().chain(jobs) {
                d.rate = rate;
            }
        }
        Param::Tenants => {
            let n = value.parse().unwrap_or(s.file.jobs.len());
            s.file.jobs.truncate(n);
        }
        Param::Placement => {
            for j in &mut s.file.jobs {
                j.placement = Some(value.to_string());
            }
        }
        Param::MoeSkew => {
            let skew = Some(value.to_string());
            let mut train: Vec<_> = s.file.train.iter_mut().collect();
            let mut serve: Vec<_> = s.file.serve.iter_mut().collect();
            for j in &mut s.file.jobs {
                train.extend(j.train.as_mut());
                serve.extend(j.serve.as_mut());
            }
            // A dense model's step ignores the skew; a serving deployment takes it with its
            // experts parallel (`[serve] expert_parallel`, refused otherwise).
            train.into_iter().for_each(|t| t.moe_skew = skew.clone());
            serve.into_iter().for_each(|d| d.moe_skew = skew.clone());
        }
        _ => unreachable!("{} is not a workload axis", param.name()),
    }
}

/// Checks that the point's workload resolves on its plan (a rate out of range, a skew without
/// expert parallelism or on a dense model, jobs that do not fit the cluster); a training
/// point's step is resolved here only when it sets the skew (the other training axes leave an
/// invalid combination to its point's error, as before).
pub fn check_point(
    s: &Scenario,
    design: &Design,
    topo: &Topology,
    point: &Point,
) -> Result<(), Error> {
    match Workload::of(s) {
        Workload::Train if point.values.iter().any(|(p, _)| *p == Param::MoeSkew) => {
            Ok(super::model::train_config(s, design, topo).map(|_| ())?)
        }
        Workload::Train => Ok(()),
        Workload::Serve => Ok(ServeJob::resolve(s, design).map(|_| ())?),
        Workload::Tenants => Ok(tenants::resolve(s).map(|_| ())?),
    }
}

/// A serving point's figures over the seeds (`workload::serve::report` names them).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ServingPoint {
    pub ttft_p50_s: Estimate,
    pub ttft_p99_s: Estimate,
    pub tpot_p50_s: Estimate,
    pub tpot_p99_s: Estimate,
    pub goodput: Estimate,
    pub tokens_per_s_per_gpu: Estimate,
    /// Of all TTFT, the network's share (KV transfers and prefill TP collectives).
    pub ttft_network_share: Estimate,
    /// The plan's cluster TCO per million output tokens of the requests meeting both SLOs;
    /// `None` when no request met them in some seed.
    pub usd_per_million_good_tokens: Option<Estimate>,
}

/// One job of a multi-tenant point: its time alone and together, and its slowdown.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TenantPoint {
    pub job: String,
    pub alone_s: Estimate,
    pub together_s: Estimate,
    pub slowdown: Estimate,
}

/// Serves `s`'s deployment (with the fabric's profile, set by `sweep::apply`) for each of
/// `seeds`, on the engine `fabricsim serve` takes; the cost as the training point's (the plan's
/// TCO over its years at full utilization).
pub fn serve_point(s: &Scenario, seeds: &[u64]) -> Result<ServingPoint, String> {
    let (design, topo, plan) = crate::plan::run(s).map_err(|e| e.to_string())?;
    let job = ServeJob::resolve(s, &design).map_err(|e| e.to_string())?;
    let engine = serve::engine_of(s).map_err(|e| e.to_string())?;
    let secs = period_s(&design, 1.0);
    let cluster = Cluster::of(design, topo, engine).map_err(|e| e.to_string())?;
    let report = serve::run(&job, &cluster, seeds, &mut |_| {}).map_err(|e| e.to_string())?;
    let tco = plan.cost.cluster_tco_usd;
    let cost: Vec<f64> = report
        .per_seed
        .iter()
        .map(|m| usd_per_million_tokens(tco, m.get("good_tokens_per_s"), secs))
        .collect();
    Ok(ServingPoint {
        ttft_p50_s: report.get("ttft_p50"),
        ttft_p99_s: report.get("ttft_p99"),
        tpot_p50_s: report.get("tpot_p50"),
        tpot_p99_s: report.get("tpot_p99"),
        goodput: report.get("goodput"),
        tokens_per_s_per_gpu: report.get("tokens_per_s_per_gpu"),
        ttft_network_share: report.get("ttft_network_share"),
        usd_per_million_good_tokens: crate::workload::seeds::estimate("cost", &cost).ok(),
    })
}

/// Runs `s`'s jobs alone and together (`workload::tenants::run`) on `fabric`'s profile and tuned
/// set, over `seeds` (the engine's seed and the random placements' servers).
pub fn tenants_point(
    s: &Scenario,
    fabric: &Variant,
    seeds: &[u64],
) -> Result<Vec<TenantPoint>, String> {
    let mut s = s.clone();
    s.file.seeds = Some(seeds.len() as u32);
    let sim = s.file.sim.get_or_insert_with(Default::default);
    sim.tuned = Some(fabric.tuned);
    sim.seed = seeds.first().copied();
    let t = tenants::resolve(&s).map_err(|e| e.to_string())?;
    let r = tenants::run::run(&t, &|_, _| {}).map_err(|e| e.to_string())?;
    let r = r.ok_or("the jobs' runs were stopped before they finished")?;
    Ok(r.jobs
        .into_iter()
        .map(|j| TenantPoint {
            job: j.name,
            alone_s: j.alone_s,
            together_s: j.together_s,
            slowdown: j.slowdown,
        })
        .collect())
}

/// A serving point's figure, when it has one.
type Figure = fn(&ServingPoint) -> Option<Estimate>;

/// The serving columns (`serve_` + the figure) when some point served, and the multi-tenant
/// ones when some point ran jobs: `slowdown_max` (the most slowed job's) and each job's
/// `slowdown_NAME`, `alone_s_NAME`, `together_s_NAME` (empty where a point has not that job).
pub fn push_columns(t: &mut Table, results: &[PointResult]) {
    if results.iter().any(|r| r.serving.is_some()) {
        let figures: [(&str, Figure); 8] = [
            ("ttft_p50_s", |x| Some(x.ttft_p50_s)),
            ("ttft_p99_s", |x| Some(x.ttft_p99_s)),
            ("tpot_p50_s", |x| Some(x.tpot_p50_s)),
            ("tpot_p99_s", |x| Some(x.tpot_p99_s)),
            ("goodput", |x| Some(x.goodput)),
            ("tokens_per_s_per_gpu", |x| Some(x.tokens_per_s_per_gpu)),
            ("ttft_network_share", |x| Some(x.ttft_network_share)),
            ("usd_per_million_good_tokens", |x| {
                x.usd_per_million_good_tokens
            }),
        ];
        for (name, get) in figures {
            let rows = results.iter().map(|r| r.serving.as_ref().and_then(get));
            t.push_estimate(&format!("serve_{name}"), rows);
        }
    }
    if results.iter().any(|r| r.tenants.is_some()) {
        t.push_estimate("slowdown_max", results.iter().map(max_slowdown));
        let mut names: Vec<&str> = Vec::new();
        for j in results.iter().flat_map(|r| r.tenants.iter().flatten()) {
            if !names.contains(&j.job.as_str()) {
                names.push(&j.job);
            }
        }
        let job = |r: &PointResult, name: &str| -> Option<TenantPoint> {
            r.tenants.as_ref()?.iter().find(|j| j.job == name).cloned()
        };
        for name in names {
            let rows = |get: fn(&TenantPoint) -> Estimate| {
                results.iter().map(move |r| job(r, name).as_ref().map(get))
            };
            t.push_estimate(&format!("slowdown_{name}"), rows(|j| j.slowdown));
            t.push_estimate(&format!("alone_s_{name}"), rows(|j| j.alone_s));
            t.push_estimate(&format!("together_s_{name}"), rows(|j| j.together_s));
        }
    }
}

/// The most slowed job's slowdown (by its mean).
fn max_slowdown(r: &PointResult) -> Option<Estimate> {
    r.tenants
        .as_ref()?
        .iter()
        .map(|j| j.slowdown)
        .max_by(|a, b| a.mean.total_cmp(&b.mean))
}

/// The chart's figure for a serving point (its TTFT p99) or a multi-tenant one (its most slowed
/// job's slowdown); `None` for a training point.
pub fn chart_y(r: &PointResult) -> Option<Estimate> {
    r.serving
        .as_ref()
        .map(|s| s.ttft_p99_s)
        .or_else(|| max_slowdown(r))
}
