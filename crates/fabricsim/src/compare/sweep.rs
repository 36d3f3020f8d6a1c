//! Parameter sweeps: one or two parameters over value lists, expanded into points with stable
//! ids (row-major over the axes), each point a pure function of (scenario, fabric, seed,
//! point) so results are the same whatever the thread count or order of evaluation. Every
//! point's step is timed by packet-engine runs of its collectives (`super::step`).
//!
//! All points use the same seed (common random numbers): differences between points come from
//! the parameters, not from different random loss patterns.

use serde::Serialize;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use super::model::train_config;
use super::step::{EngineTotals, engine_step};
use super::variant::{Recovery, Variant};
use crate::error::InputError;
use crate::profile::Profile;
use crate::scenario::Scenario;

/// A parameter a sweep can vary.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
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
}

impl Param {
    pub const ALL: [Param; 5] = [
        Param::LossRate,
        Param::Transport,
        Param::Gpus,
        Param::Oversubscription,
        Param::Profile,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Param::LossRate => "loss_rate",
            Param::Transport => "transport",
            Param::Gpus => "gpus",
            Param::Oversubscription => "oversubscription",
            Param::Profile => "profile",
        }
    }

    /// True when values are numbers (a chart can put them on an x axis).
    pub fn numeric(self) -> bool {
        matches!(self, Param::LossRate | Param::Gpus)
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
                Param::Transport => Recovery::parse(v).is_some(),
                Param::Gpus => v.parse::<u32>().is_ok_and(|g| g > 0),
                Param::Oversubscription => v.contains(':'),
                Param::Profile => Profile::builtin(v).is_ok(),
            };
            if !ok {
                let allowed = match param {
                    Param::LossRate => "probabilities from 0 up to 0.5".to_string(),
                    Param::Transport => "go-back-n, selective-repeat".into(),
                    Param::Gpus => "whole numbers of GPUs".into(),
                    Param::Oversubscription => "ratios such as 1:1, 2:1".into(),
                    Param::Profile => Profile::ids().join(", "),
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
#[derive(Clone, Debug, PartialEq, Serialize)]
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

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PointResult {
    pub point: Point,
    pub step_time_s: Option<f64>,
    pub tokens_per_s: Option<f64>,
    pub mfu: Option<f64>,
    pub network_capex_usd: Option<f64>,
    pub usd_per_million_tokens: Option<f64>,
    pub engine: Option<EngineTotals>,
    /// Why the point has no result (an invalid combination, an engine run that failed).
    pub error: Option<String>,
}

/// Evaluates one point: `base` scenario and fabric with the point's values applied.
pub fn run_point(base: &Scenario, fabric: &Variant, seed: u64, point: &Point) -> PointResult {
    let mut s = base.clone();
    let mut v = fabric.clone();
    for (param, value) in &point.values {
        match param {
            Param::LossRate => v.loss_rate = value.parse().unwrap_or(v.loss_rate),
            Param::Transport => v.recovery = Recovery::parse(value).unwrap_or(v.recovery),
            Param::Gpus => s.file.cluster.gpus = value.parse().unwrap_or(s.file.cluster.gpus),
            Param::Oversubscription => s.file.topology.oversubscription = value.clone(),
            Param::Profile => v.profile = value.clone(),
        }
    }
    s.file.fabric.profile = v.profile.clone();
    let outcome = (|| -> Result<_, String> {
        let (design, topo, plan) = crate::plan::run(&s).map_err(|e| e.to_string())?;
        let cfg = train_config(&s, &design, &topo).map_err(|e| e.to_string())?;
        let (r, totals) = engine_step(&cfg, &design, &topo, &v, seed)?;
        let secs = design.cost.years as f64 * crate::plan::cost::HOURS_PER_YEAR * 3600.0;
        let cpt = plan.cost.cluster_tco_usd / (r.tokens_per_s * secs / 1e6);
        Ok((r, totals, plan.cost.network_capex_usd, cpt))
    })();
    match outcome {
        Ok((r, totals, capex, cpt)) => PointResult {
            point: point.clone(),
            step_time_s: Some(r.step_time_s),
            tokens_per_s: Some(r.tokens_per_s),
            mfu: Some(r.mfu),
            network_capex_usd: Some(capex),
            usd_per_million_tokens: Some(cpt),
            engine: Some(totals),
            error: None,
        },
        Err(e) => PointResult {
            point: point.clone(),
            step_time_s: None,
            tokens_per_s: None,
            mfu: None,
            network_capex_usd: None,
            usd_per_million_tokens: None,
            engine: None,
            error: Some(e),
        },
    }
}

/// Runs every point on `threads` threads; `progress(done, total)` after each point. Results
/// come back in point order.
pub fn run(
    base: &Scenario,
    fabric: &Variant,
    seed: u64,
    points: &[Point],
    threads: usize,
    progress: &(dyn Fn(usize, usize) + Sync),
) -> Vec<PointResult> {
    let next = AtomicUsize::new(0);
    let done = AtomicUsize::new(0);
    let slots: Mutex<Vec<Option<PointResult>>> = Mutex::new(vec![None; points.len()]);
    std::thread::scope(|scope| {
        for _ in 0..threads.max(1).min(points.len().max(1)) {
            scope.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(p) = points.get(i) else { break };
                    let r = run_point(base, fabric, seed, p);
                    slots.lock().expect("no panics while holding the lock")[i] = Some(r);
                    progress(done.fetch_add(1, Ordering::Relaxed) + 1, points.len());
                }
            });
        }
    });
    slots
        .into_inner()
        .expect("threads joined")
        .into_iter()
        .map(|r| r.expect("every point ran"))
        .collect()
}

/// The CSV of the results: one row per point, a column per axis, then the figures.
pub fn csv(axes: &[SweepAxis], results: &[PointResult]) -> String {
    let mut out = String::from("point");
    for a in axes {
        out += &format!(",{}", a.param.name());
    }
    out += ",step_time_s,tokens_per_s,mfu,network_capex_usd,usd_per_million_tokens,packets_dropped,retransmitted_packets,timeouts,error\n";
    let f = |x: Option<f64>| x.map(|v| format!("{v}")).unwrap_or_default();
    for r in results {
        out += &r.point.id.to_string();
        for (_, v) in &r.point.values {
            out += &format!(",{v}");
        }
        let e = r.engine.as_ref();
        out += &format!(
            ",{},{},{},{},{},{},{},{},{}\n",
            f(r.step_time_s),
            f(r.tokens_per_s),
            f(r.mfu),
            f(r.network_capex_usd),
            f(r.usd_per_million_tokens),
            e.map(|e| e.packets_dropped.to_string()).unwrap_or_default(),
            e.map(|e| e.retransmitted_packets.to_string())
                .unwrap_or_default(),
            e.map(|e| e.timeouts.to_string()).unwrap_or_default(),
            r.error.as_deref().unwrap_or("").replace([',', '\n'], ";"),
        );
    }
    out
}

/// The chart: MFU against the first axis (which must be numeric), one series per value of the
/// second axis (or one series).
pub fn chart(axes: &[SweepAxis], results: &[PointResult]) -> Option<String> {
    use crate::report::svg::line::{LineChart, Series};
    use crate::report::svg::{Scale, TickFormat};
    let x = axes.first()?;
    if !x.param.numeric() {
        return None;
    }
    let groups: Vec<String> = axes
        .get(1)
        .map(|a| a.values.clone())
        .unwrap_or_else(|| vec![String::new()]);
    let series: Vec<Series> = groups
        .iter()
        .map(|g| Series {
            name: if g.is_empty() {
                "MFU".into()
            } else {
                g.clone()
            },
            points: results
                .iter()
                .filter(|r| g.is_empty() || r.point.values.get(1).map(|v| &v.1) == Some(g))
                .filter_map(|r| Some((r.point.values[0].1.parse().ok()?, r.mfu?)))
                .collect(),
        })
        .collect();
    let (title, fmt) = match x.param {
        Param::LossRate => (
            "packet loss rate (per packet per link)",
            TickFormat::Percent,
        ),
        _ => ("GPUs", TickFormat::Number),
    };
    Some(
        LineChart::fitted(
            &format!("MFU against {}", x.param.name()),
            (title, Scale::Linear, fmt),
            (
                "MFU (model FLOPs / peak)",
                Scale::Linear,
                TickFormat::Percent,
            ),
            series,
        )
        .to_svg(),
    )
}
