//! The field's claims answered by the tool's own runs (issue 23 item 3): tuned RoCEv2's
//! training-step throughput as a share of InfiniBand's at 128, 512 and 1,024 GPUs with the
//! network CAPEX it saves, what 0.1% random loss does to MFU under each loss recovery, and
//! whether InfiniBand's advantage grows past 10,000 GPUs. Every figure is the comparison's own
//! step (`sweep::run_point`: plan, job and `whole_step::seed_step`) of the scenario's job on its
//! fabrics with the cluster resized, run over seeds and given as a mean with its 95% interval
//! (`estimate::Estimate`) and the engine that timed it. Nothing is written in: the claims'
//! ranges below are the field's words, set against the runs.

use serde::Serialize;

use super::model::FabricResult;
use super::progress::Tracker;
use super::step::EngineTotals;
use super::sweep::{self, Param, Point, PointResult};
use super::variant::Variant;
use crate::setup::engine_choice::EngineChoice;
use crate::workload::comm_model::AlphaBetaModel;
use crate::workload::link_params::FabricParams;
use crate::workload::train::efficiency::Efficiency;
use crate::workload::train::step::step;
use fabricsim_core::estimate::Estimate;
use fabricsim_input::profile::Family;
use fabricsim_input::scenario::Scenario;
use fabricsim_input::scenario::compare::{ClaimsMode, CompareSection};
use fabricsim_mech::recovery::TRANSPORTS;

/// A claim as the field states it (the mission of the DEVELOPERS guide), with the range it
/// names when it names one.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Claim {
    pub text: &'static str,
    pub range: Option<(f64, f64)>,
}

pub const THROUGHPUT: Claim = Claim {
    text: "tuned RoCEv2 reaches 90-95% of InfiniBand at 100-1,000+ GPUs",
    range: Some((0.90, 0.95)),
};
pub const CAPEX: Claim = Claim {
    text: "for 30-50% less network CAPEX",
    range: Some((0.30, 0.50)),
};
pub const LOSS: Claim = Claim {
    text: "0.1% loss collapses MFU",
    range: None,
};
pub const LARGE: Claim = Claim {
    text: "InfiniBand is the only safe choice at 10K+ GPUs",
    range: None,
};

/// Cluster sizes of the throughput claim ("100-1,000+ GPUs"); the last is the reference of
/// the large point.
pub const SIZES: [u32; 3] = [128, 512, 1024];
/// Sizes past 1,024 GPUs that only `claims = "full"` runs (a step at 4,096 GPUs costs several
/// times the three above together).
pub const FULL_SIZES: [u32; 2] = [2048, 4096];
/// The size past 10,000 GPUs.
pub const LARGE_GPUS: u32 = 16_384;
/// The loss claim's rate: 0.1% per packet on every link.
pub const LOSS_RATE: f64 = 0.001;
/// Seeds per simulated figure at most: the comparison's first ones (`compare::seeds::derive`);
/// the claims run 9 steps per seed, so they take fewer seeds than the comparison's default.
const SEEDS: u32 = 3;

/// Where a figure or its interval lies against a claimed range.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Against {
    Below,
    Within,
    Above,
    /// The interval reaches both inside and outside the range.
    Straddles,
}

impl Against {
    fn of(lo: f64, hi: f64, (a, b): (f64, f64)) -> Against {
        if hi < a {
            Against::Below
        } else if lo > b {
            Against::Above
        } else if lo >= a && hi <= b {
            Against::Within
        } else {
            Against::Straddles
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Against::Below => "below",
            Against::Within => "within",
            Against::Above => "above",
            Against::Straddles => "straddles",
        }
    }
}

/// One seed's step.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SeedRun {
    /// `None` for a closed-form step (nothing random in it).
    pub seed: Option<u64>,
    pub tokens_per_s: f64,
    pub mfu: f64,
}

/// One fabric on one cluster size (and, for the loss rows, one recovery and loss rate).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Figures {
    pub fabric: String,
    pub gpus: u32,
    /// One entry per seed that gave a step; more seeds fill it.
    pub runs: Vec<SeedRun>,
    pub tokens_per_s: Option<Estimate>,
    pub mfu: Option<Estimate>,
    /// The plan's network CAPEX at this size (no seed moves it).
    pub network_capex_usd: Option<f64>,
    /// Where the step's collective times came from: `packet`, `flow`, `packet+flow`, or
    /// `closed form` when no engine run timed them.
    pub timed_on: String,
    /// Engine runs behind the figure, over all its seeds.
    pub engine_runs: u64,
    /// Collectives whose runs admitted no fit (their closed form stayed in the step).
    pub closed_form_kept: Vec<String>,
    /// Why seeds gave no step.
    pub errors: Vec<String>,
}

impl Figures {
    fn of(fabric: &str, gpus: u32, results: &[(Option<u64>, &PointResult)]) -> Figures {
        let mut runs = Vec::new();
        let mut totals = EngineTotals::default();
        let mut errors = Vec::new();
        let mut capex = None;
        for (seed, r) in results {
            // Each batch runs one seed, so each figure is that seed's (n = 1).
            if let (Some(t), Some(m)) = (r.tokens_per_s, r.mfu) {
                runs.push(SeedRun {
                    seed: *seed,
                    tokens_per_s: t.mean,
                    mfu: m.mean,
                });
            }
            capex = capex.or(r.network_capex_usd);
            if let Some(e) = &r.engine {
                totals.add(e, seed.unwrap_or(0));
            }
            if let Some(e) = &r.error
                && !errors.contains(e)
            {
                errors.push(e.clone());
            }
        }
        let timed_on = match (totals.packet_runs > 0, totals.flow_runs > 0) {
            (true, true) => "packet+flow",
            (true, false) => "packet",
            (false, true) => "flow",
            (false, false) => "closed form",
        };
        let est =
            |g: fn(&SeedRun) -> f64| Estimate::of_positive(&runs.iter().map(g).collect::<Vec<_>>());
        Figures {
            fabric: fabric.to_string(),
            gpus,
            tokens_per_s: est(|r| r.tokens_per_s),
            mfu: est(|r| r.mfu),
            runs,
            network_capex_usd: capex,
            timed_on: timed_on.into(),
            engine_runs: totals.runs,
            closed_form_kept: totals.unfitted,
            errors,
        }
    }

    /// `f(self, other)` over the seeds both have (the same seed on both: common random numbers).
    fn paired(&self, other: &Figures, f: impl Fn(&SeedRun, &SeedRun) -> f64) -> Option<Estimate> {
        let v: Vec<f64> = self
            .runs
            .iter()
            .filter_map(|a| {
                let b = other.runs.iter().find(|b| b.seed == a.seed)?;
                Some(f(a, b))
            })
            .collect();
        Estimate::of(&v)
    }
}

/// Tuned RoCE against InfiniBand at one cluster size.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SizePoint {
    pub gpus: u32,
    pub infiniband: Figures,
    pub roce: Figures,
    /// RoCE's tokens/s over InfiniBand's, per seed.
    pub roce_vs_ib: Option<Estimate>,
    /// InfiniBand's advantage: its tokens/s over RoCE's, less 1, per seed.
    pub ib_advantage: Option<Estimate>,
    /// 1 - RoCE's network CAPEX / InfiniBand's (the plans).
    pub network_capex_saved: Option<f64>,
    pub throughput_vs_claim: Option<Against>,
    pub capex_vs_claim: Option<Against>,
}

impl SizePoint {
    fn of(gpus: u32, infiniband: Figures, roce: Figures) -> SizePoint {
        let roce_vs_ib = roce.paired(&infiniband, |r, i| r.tokens_per_s / i.tokens_per_s);
        let ib_advantage = infiniband.paired(&roce, |i, r| i.tokens_per_s / r.tokens_per_s - 1.0);
        let saved = match (roce.network_capex_usd, infiniband.network_capex_usd) {
            (Some(r), Some(i)) if i > 0.0 => Some(1.0 - r / i),
            _ => None,
        };
        let range = |c: Claim| c.range.expect("the claim names a range");
        SizePoint {
            gpus,
            throughput_vs_claim: roce_vs_ib.map(|e| Against::of(e.lo, e.hi, range(THROUGHPUT))),
            capex_vs_claim: saved.map(|x| Against::of(x, x, range(CAPEX))),
            infiniband,
            roce,
            roce_vs_ib,
            ib_advantage,
            network_capex_saved: saved,
        }
    }
}

/// MFU without loss and at [`LOSS_RATE`] under one recovery.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LossRow {
    pub recovery: &'static str,
    pub lossless: Figures,
    pub lossy: Figures,
    /// MFU with loss over MFU without, per seed.
    pub mfu_kept: Option<Estimate>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LossClaim {
    /// The tuned RoCE fabric, its loss rate replaced by the rows'.
    pub fabric: String,
    pub gpus: u32,
    pub loss_rate: f64,
    /// One row per recovery of `mech::recovery::TRANSPORTS`.
    pub rows: Vec<LossRow>,
}

/// How InfiniBand's advantage moves from the reference size to the large one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Trend {
    /// InfiniBand's advantage is larger at the large size (intervals apart).
    Grows,
    Shrinks,
    /// The intervals overlap: the runs do not separate the two sizes.
    NotSeparated,
}

impl Trend {
    fn of(reference: &Estimate, large: &Estimate) -> Trend {
        if large.lo > reference.hi {
            Trend::Grows
        } else if large.hi < reference.lo {
            Trend::Shrinks
        } else {
            Trend::NotSeparated
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Trend::Grows => "grows",
            Trend::Shrinks => "shrinks",
            Trend::NotSeparated => "does not separate",
        }
    }
}

/// The point past 10,000 GPUs and the largest of [`SIZES`] (the reference), both timed one
/// way, so that the trend is not a change of method.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LargePoint {
    /// `closed form` (alpha-beta on the profiles' link parameters: no congestion, no loss) or
    /// `flow engine`.
    pub method: &'static str,
    pub reference: SizePoint,
    pub point: SizePoint,
    /// None when either point has no ratio.
    pub trend: Option<Trend>,
}

impl LargePoint {
    fn of(method: &'static str, reference: SizePoint, point: SizePoint) -> LargePoint {
        LargePoint {
            method,
            trend: match (&reference.ib_advantage, &point.ib_advantage) {
                (Some(a), Some(b)) => Some(Trend::of(a, b)),
                _ => None,
            },
            reference,
            point,
        }
    }
}

/// A point the section could not run, and why.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct NotRun {
    pub what: String,
    pub why: String,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Claims {
    pub mode: &'static str,
    pub claims: [Claim; 4],
    /// The compared fabrics the claims are about (name: what it means).
    pub infiniband: Option<String>,
    pub roce: Option<String>,
    /// Seeds of the simulated figures.
    pub seeds: Vec<u64>,
    pub throughput: Vec<SizePoint>,
    pub loss: Option<LossClaim>,
    pub large: Vec<LargePoint>,
    pub not_run: Vec<NotRun>,
}

fn gpus_point(id: usize, gpus: u32) -> Point {
    Point {
        id,
        values: vec![(Param::Gpus, gpus.to_string())],
    }
}

fn loss_point(id: usize, rate: f64, recovery: &str) -> Point {
    Point {
        id,
        values: vec![
            (Param::LossRate, rate.to_string()),
            (Param::Transport, recovery.to_string()),
        ],
    }
}

/// The closed-form step of `v` at `point` (the comparison's plan and job, the step's
/// collectives timed by the alpha-beta closed form on the profile's link parameters).
fn closed_form(s: &Scenario, v: &Variant, point: &Point) -> PointResult {
    // The closed form draws nothing at random: one seed stands for all.
    sweep::timed_point(s, v, &[0], point, |cfg, design, _, _, _| {
        let model = AlphaBetaModel::new(FabricParams::of(design));
        let r = step(cfg, &Efficiency::h200(&design.catalog), &model);
        Ok((r, EngineTotals::default(), None))
    })
}

/// The runs of one fabric and seed: its points, and their results once run.
struct Batch {
    fabric: Variant,
    seed: u64,
    points: Vec<Point>,
    results: Vec<PointResult>,
}

/// Runs every batch in order, each over the machine's threads (`sweep::run`), telling `track`
/// each point done.
fn run_batches(s: &Scenario, batches: &mut [Batch], track: &Tracker) {
    let threads = super::seeds::threads();
    track.add(batches.iter().map(|b| b.points.len()).sum());
    for b in batches.iter_mut() {
        let done = track.done();
        let tell = |slots: &[Option<PointResult>]| {
            let d = slots.iter().flatten().count();
            track.tell(&b.fabric.name, "claims", done + d)
        };
        let r = sweep::run(s, &b.fabric, &[b.seed], &b.points, threads, false, &tell);
        b.results.extend(r);
        track.advance(b.points.len());
    }
}

/// `fabric`'s figures at point `id` of `gpus` GPUs over the batches' seeds.
fn figures(batches: &[Batch], fabric: &Variant, id: usize, gpus: u32) -> Figures {
    let rs: Vec<(Option<u64>, &PointResult)> = batches
        .iter()
        .filter(|b| &b.fabric == fabric)
        .filter_map(|b| Some((Some(b.seed), b.results.iter().find(|r| r.point.id == id)?)))
        .collect();
    Figures::of(&fabric.name, gpus, &rs)
}

/// InfiniBand and RoCE (`fabrics`) at point `id` of `gpus` GPUs, with a line in `not_run` for
/// each figure short of `seeds` seeds (`on`: how the point was run, for that line).
fn size_point(
    batches: &[Batch],
    fabrics: [&Variant; 2],
    id: usize,
    gpus: u32,
    seeds: usize,
    on: &str,
    not_run: &mut Vec<NotRun>,
) -> SizePoint {
    let [ib, roce] = fabrics.map(|v| {
        let f = figures(batches, v, id, gpus);
        not_run.extend(shortfall(format!("{gpus} GPUs, {}{on}", v.name), &f, seeds));
        f
    });
    SizePoint::of(gpus, ib, roce)
}

/// The comparison's fabrics the claims are about: the first InfiniBand one and the first tuned
/// RoCE one.
fn pick(fabrics: &[FabricResult]) -> (Option<&Variant>, Option<&Variant>) {
    let first = |fam: Family, tuned_only: bool| {
        fabrics
            .iter()
            .find(|f| f.design.profile.family == fam && (f.variant.tuned || !tuned_only))
            .map(|f| &f.variant)
    };
    (first(Family::Infiniband, false), first(Family::Roce, true))
}

/// A line for each figure with fewer seeds than asked, and why.
fn shortfall(what: String, f: &Figures, seeds: usize) -> Option<NotRun> {
    (f.runs.len() < seeds).then(|| NotRun {
        what: format!(
            "{what}: {} of {seeds} seeds without a step",
            seeds - f.runs.len()
        ),
        why: if f.errors.is_empty() {
            "interrupted before it finished".into()
        } else {
            f.errors.join("; ")
        },
    })
}

/// The claims section of a comparison of `s` whose fabrics are `fabrics`.
pub(super) fn run(
    s: &Scenario,
    sec: &CompareSection,
    fabrics: &[FabricResult],
    track: &Tracker,
) -> Option<Claims> {
    if sec.claims == ClaimsMode::Off {
        return None;
    }
    let seeds = super::seeds::derive(sec.seed, sec.seeds.min(SEEDS));
    let mut out = Claims {
        mode: sec.claims.name(),
        claims: [THROUGHPUT, CAPEX, LOSS, LARGE],
        infiniband: None,
        roce: None,
        seeds: seeds.clone(),
        throughput: Vec::new(),
        loss: None,
        large: Vec::new(),
        not_run: Vec::new(),
    };
    let (Some(ib), Some(roce)) = pick(fabrics) else {
        let why = match pick(fabrics) {
            (None, None) => "neither an InfiniBand nor a tuned RoCE fabric",
            (None, _) => "no InfiniBand fabric",
            _ => "no tuned RoCE fabric",
        };
        out.not_run.push(NotRun {
            what: "every claim".into(),
            why: format!("the comparison has {why}: the claims set tuned RoCE against InfiniBand"),
        });
        return Some(out);
    };
    out.infiniband = Some(format!("{}: {}", ib.name, ib.describe()));
    out.roce = Some(format!("{}: {}", roce.name, roce.describe()));
    let gpus = fabrics[0].design.spec.gpus as u32;
    let full = sec.claims == ClaimsMode::Full;
    let reference = SIZES[SIZES.len() - 1];
    let size_list: Vec<u32> = match full {
        true => SIZES.iter().chain(&FULL_SIZES).copied().collect(),
        false => SIZES.to_vec(),
    };
    // Point ids: the sizes, two per recovery (without loss, with it), then the large pair.
    let sizes: Vec<Point> = size_list
        .iter()
        .enumerate()
        .map(|(i, &g)| gpus_point(i, g))
        .collect();
    let loss_id = |k: usize, j: usize| sizes.len() + 2 * k + j;
    let loss_points: Vec<Point> = TRANSPORTS
        .iter()
        .enumerate()
        .flat_map(|(k, t)| {
            [0.0, LOSS_RATE]
                .into_iter()
                .enumerate()
                .map(move |(j, rate)| loss_point(loss_id(k, j), rate, t.name()))
        })
        .collect();
    let large_id = loss_id(TRANSPORTS.len(), 0);
    let large_points = [
        gpus_point(large_id, reference),
        gpus_point(large_id + 1, LARGE_GPUS),
    ];
    let flow = |v: &Variant| Variant {
        engine: EngineChoice::Flow,
        ..v.clone()
    };
    let mut batches = Vec::new();
    for &seed in &seeds {
        batches.push(Batch {
            fabric: ib.clone(),
            seed,
            points: sizes.clone(),
            results: Vec::new(),
        });
        let mut points = sizes.clone();
        points.extend(loss_points.iter().cloned());
        batches.push(Batch {
            fabric: roce.clone(),
            seed,
            points,
            results: Vec::new(),
        });
        if full {
            for v in [ib, roce] {
                batches.push(Batch {
                    fabric: flow(v),
                    seed,
                    points: large_points.to_vec(),
                    results: Vec::new(),
                });
            }
        }
    }
    run_batches(s, &mut batches, track);
    let n = seeds.len();
    let mut not_run = Vec::new();
    for (p, &g) in sizes.iter().zip(&size_list) {
        let point = size_point(&batches, [ib, roce], p.id, g, n, "", &mut not_run);
        out.throughput.push(point);
    }
    let rows = TRANSPORTS
        .iter()
        .enumerate()
        .map(|(k, t)| {
            let lossless = figures(&batches, roce, loss_id(k, 0), gpus);
            let lossy = figures(&batches, roce, loss_id(k, 1), gpus);
            let what = |x: &str| format!("{gpus} GPUs, {} {x}, {}", roce.name, t.name());
            not_run.extend(shortfall(what("without loss"), &lossless, n));
            not_run.extend(shortfall(what(&format!("at loss {LOSS_RATE}")), &lossy, n));
            LossRow {
                recovery: t.name(),
                mfu_kept: lossy.paired(&lossless, |l, z| l.mfu / z.mfu),
                lossless,
                lossy,
            }
        })
        .collect();
    out.loss = Some(LossClaim {
        fabric: roce.name.clone(),
        gpus,
        loss_rate: LOSS_RATE,
        rows,
    });
    // Closed form: no engine and no seed, at both sizes.
    let cf =
        |v: &Variant, p: &Point, g: u32| Figures::of(&v.name, g, &[(None, &closed_form(s, v, p))]);
    let [p0, p1] = &large_points;
    out.large.push(LargePoint::of(
        "closed form",
        SizePoint::of(reference, cf(ib, p0, reference), cf(roce, p0, reference)),
        SizePoint::of(LARGE_GPUS, cf(ib, p1, LARGE_GPUS), cf(roce, p1, LARGE_GPUS)),
    ));
    if full {
        let on = [&flow(ib), &flow(roce)];
        let mut at = |p: &Point, g: u32| {
            size_point(
                &batches,
                on,
                p.id,
                g,
                n,
                " on the flow engine",
                &mut not_run,
            )
        };
        let lp = LargePoint::of("flow engine", at(p0, reference), at(p1, LARGE_GPUS));
        out.large.push(lp);
    } else {
        let more: Vec<String> = FULL_SIZES.iter().map(u32::to_string).collect();
        not_run.push(NotRun {
            what: format!("{} GPUs", more.join(" and ")),
            why: "not in the quick claims (their steps cost several times the smaller sizes together): `--claims full` runs them".into(),
        });
        not_run.push(NotRun {
            what: format!("{LARGE_GPUS} and {reference} GPUs on the flow engine"),
            why: "not in the quick claims (their flow runs are over the default comparison's time): `--claims full` runs them".into(),
        });
    }
    out.not_run = not_run;
    Some(out)
}
