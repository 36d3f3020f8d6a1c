//! Where fabrics part: the comparison's job moved along the axes that expose the network (GPU
//! count on the flow engine, a MoE job with cross-node expert-parallel all-to-all from the
//! Mixtral preset (DeepSeek-V3 through `sweep`), leaf oversubscription) on the first InfiniBand and the
//! first tuned RoCE fabric, until their tokens/s differ by more than [`PART`]; each point names
//! the engine that timed it. A dense job is timed whole on the flow engine
//! ([`super::whole_step`]); a job the step DAG does not model (MoE) by its per-collective fits
//! ([`super::step`]), as the point says. One seed, the comparison's first: the whole step
//! draws nothing at random (`super::whole_step`), and the job itself is the comparison's own
//! first-seed step, timed by the same path (`whole_step::seed_step`), not run again.

use serde::Serialize;

use super::model::FabricResult;
use super::progress::Tracker;
use super::step::EngineTotals;
use super::sweep::{self, Param, Point};
use super::variant::Variant;
use super::whole_step::Timing;
use crate::setup::engine_choice::EngineChoice;
use fabricsim_input::profile::Family;
use fabricsim_input::scenario::Scenario;

/// Tokens/s apart by more than this share are "parted": a stated threshold (1%, an ESTIMATE of
/// the run-to-run spread an operator's own step-time measurements resolve), not a fit.
pub const PART: f64 = 0.01;

/// The regimes and their settings, in report order; within a regime, settings move away from
/// the comparison's job. GPU counts run on the flow engine. Kept to one setting each so the
/// default comparison stays within its time (more: `sweep --param`, e.g. gpus=1024,4096 or
/// model=deepseek-v3 with tp, pp, ep).
pub const REGIMES: &[(&str, &[(Param, &str)])] = &[
    ("the comparison's job", &[]),
    ("GPUs", &[(Param::Gpus, "1024")]),
    ("oversubscription", &[(Param::Oversubscription, "4:1")]),
    // One leaf up-link down before the step, the fabric converged around it (the whole step
    // DAG on the flow engine: `flow::paths::Router::with_failed`).
    ("failed link", &[(Param::FailedUplinks, "1")]),
    (
        "MoE expert all-to-all",
        &[
            (Param::Model, "mixtral-8x7b"),
            (Param::Tp, "4"),
            (Param::Pp, "1"),
            (Param::Ep, "8"),
        ],
    ),
];

/// One fabric at one point.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Fig {
    pub fabric: String,
    pub step_time_s: Option<f64>,
    pub tokens_per_s: Option<f64>,
    pub mfu: Option<f64>,
    /// The engine and model that timed the step.
    pub ran_on: String,
    pub error: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RegimePoint {
    pub regime: &'static str,
    /// The point's settings (`name=value`, space-separated; empty for the job itself).
    pub setting: String,
    pub infiniband: Fig,
    pub roce: Fig,
    /// RoCE's tokens/s over InfiniBand's.
    pub roce_vs_ib: Option<f64>,
    /// |roce_vs_ib - 1| > [`PART`].
    pub parted: Option<bool>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Regimes {
    pub infiniband: String,
    pub roce: String,
    pub seed: u64,
    pub threshold: f64,
    pub points: Vec<RegimePoint>,
    /// Per regime, the first setting where the fabrics part (`None`: they stay equal over the
    /// settings run).
    pub first_parted: Vec<(&'static str, Option<String>)>,
}

/// How the step of `v` at a point was timed, for [`Fig::ran_on`].
fn ran_on(t: &Timing, totals: &EngineTotals) -> String {
    match t {
        Timing::Dag(d) => format!("flow engine, whole step DAG ({})", d.verdict),
        Timing::Fallback(why) => {
            let on = match (totals.packet_runs > 0, totals.flow_runs > 0) {
                (true, true) => "packet+flow",
                (true, false) => "packet",
                (false, true) => "flow",
                (false, false) => "closed form",
            };
            format!("per-collective fits on the {on} engine ({why})")
        }
    }
}

fn fig(s: &Scenario, v: &Variant, seed: u64, point: &Point) -> Fig {
    // Timed as the comparison times a step (`sweep::run_point`, `whole_step::seed_step`).
    let (r, timing) = sweep::run_point_timed(s, v, &[seed], point, false);
    let ran = r.engine.clone().unwrap_or_default();
    Fig {
        fabric: v.name.clone(),
        step_time_s: r.step_time_s.map(|e| e.mean),
        tokens_per_s: r.tokens_per_s.map(|e| e.mean),
        mfu: r.mfu.map(|e| e.mean),
        ran_on: timing.map_or_else(String::new, |t| ran_on(&t, &ran)),
        error: r.error,
    }
}

/// The first InfiniBand and the first tuned RoCE fabric of the comparison.
fn pick(fabrics: &[FabricResult]) -> Option<(&FabricResult, &FabricResult)> {
    let first = |fam: Family| {
        fabrics
            .iter()
            .find(|f| f.design.profile.family == fam && f.variant.tuned)
    };
    Some((first(Family::Infiniband)?, first(Family::Roce)?))
}

/// The comparison's job itself: the fabric's first-seed step as the comparison ran it (the
/// same path, `whole_step::seed_step`, and seed a point would run again).
fn own(f: &FabricResult) -> Fig {
    let step = f.step.as_ref();
    Fig {
        fabric: f.variant.name.clone(),
        step_time_s: step.map(|r| r.step_time_s),
        tokens_per_s: step.map(|r| r.tokens_per_s),
        mfu: step.map(|r| r.mfu),
        ran_on: f.delivered.as_ref().map_or_else(String::new, |d| {
            format!("the comparison's step: {}", d.step_timed_by)
        }),
        error: f.missing.clone(),
    }
}

/// The section for `s`'s comparison of `fabrics` with `seed`; `None` without an InfiniBand and
/// a tuned RoCE fabric.
pub(super) fn run(
    s: &Scenario,
    fabrics: &[FabricResult],
    seed: u64,
    track: &Tracker,
) -> Option<Regimes> {
    let (ib_result, roce_result) = pick(fabrics)?;
    let (ib, roce) = (&ib_result.variant, &roce_result.variant);
    let points: Vec<(&'static str, Point)> = REGIMES
        .iter()
        .enumerate()
        .map(|(id, (regime, values))| {
            let values = values.iter().map(|(p, v)| (*p, v.to_string())).collect();
            (*regime, Point { id, values })
        })
        .collect();
    // GPU counts on the flow engine (the packet engine's runs outgrow a comparison's time).
    let on = |v: &Variant, p: &Point| match p.values.iter().any(|(k, _)| *k == Param::Gpus) {
        true => Variant {
            engine: EngineChoice::Flow,
            ..v.clone()
        },
        false => v.clone(),
    };
    // The job itself (no setting) is the comparison's own first-seed step: not run again.
    let jobs: Vec<(usize, &Variant)> = (0..points.len())
        .filter(|&i| !points[i].1.values.is_empty())
        .flat_map(|i| [(i, ib), (i, roce)])
        .collect();
    track.add(jobs.len());
    let figs = super::seeds::run_jobs(&jobs, super::seeds::threads(), |&(i, v)| {
        let p = &points[i].1;
        track.stage(&v.name, "where fabrics part", || fig(s, &on(v, p), seed, p))
    });
    let mut out = Vec::new();
    let mut ran = figs.into_iter();
    for (regime, p) in &points {
        let (a, b) = match p.values.is_empty() {
            true => (Some(own(ib_result)), Some(own(roce_result))),
            false => (ran.next().flatten(), ran.next().flatten()),
        };
        let (Some(a), Some(b)) = (a, b) else {
            continue; // a stop request cut it short
        };
        let ratio = match (b.tokens_per_s, a.tokens_per_s) {
            (Some(r), Some(i)) if i > 0.0 => Some(r / i),
            _ => None,
        };
        out.push(RegimePoint {
            regime,
            setting: p
                .values
                .iter()
                .map(|(k, v)| format!("{}={v}", k.name()))
                .collect::<Vec<_>>()
                .join(" "),
            infiniband: a,
            roce: b,
            roce_vs_ib: ratio,
            parted: ratio.map(|x| (x - 1.0).abs() > PART),
        });
    }
    let mut first_parted: Vec<(&'static str, Option<String>)> = Vec::new();
    for p in &out {
        if p.setting.is_empty() {
            continue;
        }
        match first_parted.iter_mut().find(|(r, _)| *r == p.regime) {
            Some((_, Some(_))) => {}
            Some((_, slot)) => *slot = p.parted.filter(|&x| x).map(|_| p.setting.clone()),
            None => {
                first_parted.push((p.regime, p.parted.filter(|&x| x).map(|_| p.setting.clone())))
            }
        }
    }
    Some(Regimes {
        infiniband: ib.name.clone(),
        roce: roce.name.clone(),
        seed,
        threshold: PART,
        points: out,
        first_parted,
    })
}

/// The section as text.
pub fn text(r: &Regimes) -> String {
    let mut s = format!(
        "\nWhere fabrics part: {} against {} (seed {}; parted = tokens/s more than {:.0}% apart)\n",
        r.roce,
        r.infiniband,
        r.seed,
        100.0 * r.threshold
    );
    let tps = |f: &Fig| {
        f.tokens_per_s
            .map_or_else(|| "-".to_string(), |t| format!("{t:.0}"))
    };
    for p in &r.points {
        let setting = if p.setting.is_empty() {
            "-"
        } else {
            &p.setting
        };
        s += &format!(
            "  {:<22} {:<52} IB {:>10} tok/s  RoCE {:>10} tok/s  RoCE/IB {}{}\n",
            p.regime,
            setting,
            tps(&p.infiniband),
            tps(&p.roce),
            p.roce_vs_ib
                .map_or_else(|| "-".to_string(), |x| format!("{x:.4}")),
            match p.parted {
                Some(true) => "  PARTED",
                _ => "",
            }
        );
        for f in [&p.infiniband, &p.roce] {
            s += &format!("      {}: {}", f.fabric, f.ran_on);
            if let Some(e) = &f.error {
                s += &format!(" (no step: {e})");
            }
            s.push('\n');
        }
    }
    for (regime, at) in &r.first_parted {
        s += &match at {
            Some(x) => format!("  {regime}: they stop being equal at {x}\n"),
            None => format!(
                "  {regime}: equal within {:.0}% at every setting run\n",
                100.0 * r.threshold
            ),
        };
    }
    s
}

/// The section's table for the HTML report: its header and one row per point.
pub fn rows(r: &Regimes) -> (Vec<String>, Vec<(String, Vec<String>)>) {
    let header = [
        "regime",
        "setting",
        "InfiniBand tokens/s",
        "tuned RoCE tokens/s",
        "RoCE / IB",
        "parted",
        "InfiniBand timed by",
        "tuned RoCE timed by",
    ]
    .map(String::from)
    .to_vec();
    let tps = |f: &Fig| {
        f.tokens_per_s.map_or_else(
            || f.error.clone().unwrap_or("-".into()),
            |t| format!("{t:.0}"),
        )
    };
    let rows = r
        .points
        .iter()
        .map(|p| {
            (
                p.regime.to_string(),
                vec![
                    p.setting.clone(),
                    tps(&p.infiniband),
                    tps(&p.roce),
                    p.roce_vs_ib.map_or("-".into(), |x| format!("{x:.4}")),
                    match p.parted {
                        Some(true) => "yes".into(),
                        Some(false) => "no".into(),
                        None => "-".into(),
                    },
                    p.infiniband.ran_on.clone(),
                    p.roce.ran_on.clone(),
                ],
            )
        })
        .collect();
    (header, rows)
}
