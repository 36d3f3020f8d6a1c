//! The search: successive halving (Jamieson and Talwalkar, AISTATS 2016; Hyperband's inner
//! loop, Li et al., JMLR 18(185) 2018) with seeds as the budget. Round 1 runs every sampled
//! candidate over `min_seeds` seeds; each next round keeps the best 1/eta (feasible ones first)
//! with eta times the seeds, up to `seeds`, until one is left or a round has run at all the
//! seeds (another would rank the same figures); the best one and the profile's
//! default are then measured over all `seeds` (common random numbers: the same seeds for every
//! candidate). `grid` is one round of every candidate over all seeds. With `screen = "flow"`
//! the rounds start from the candidates the flow engine's screen passes on (`super::screen`).

use serde::{Deserialize, Serialize};

use super::candidate::Candidate;
use super::eval::Sample;
use super::screen::Screened;
use fabricsim_core::estimate::Estimate;
use fabricsim_input::scenario::tune::{Method, TuneSpec};

/// One measurement to make: a candidate (`None`: the scenario's own profile) with seed number
/// `seed_index` of the search's seeds, on the scenario's engine or (`screen`) the flow engine.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Job {
    pub candidate: Option<u64>,
    pub seed_index: u32,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub screen: bool,
}

/// A candidate's figures over the seeds it ran.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Scored {
    /// `None`: the profile's default.
    pub candidate: Option<Candidate>,
    pub samples: Vec<Sample>,
    pub objective: Option<Estimate>,
    pub feasible: bool,
    /// Why it is not feasible.
    pub why: Option<String>,
}

/// One round: its seeds and its candidates, best first.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Round {
    pub seeds: u32,
    pub ranked: Vec<Scored>,
}

/// What the search found; `complete` false when an evaluation did not finish (a stop request
/// or a missing Slurm result): the rounds are those that finished.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Found {
    /// The flow engine's screen, when `[tune] screen` asks for one.
    pub screen: Option<Screened>,
    pub rounds: Vec<Round>,
    pub best: Option<Scored>,
    pub default: Option<Scored>,
    pub complete: bool,
}

/// The samples of `jobs`, in order; `None` where a job did not finish.
pub type Evaluate<'a> = dyn FnMut(&[Job]) -> Vec<Option<Sample>> + 'a;

fn score(spec: &TuneSpec, candidate: Option<Candidate>, samples: Vec<Sample>) -> Scored {
    let why = samples.iter().find_map(|s| {
        if let Some(e) = &s.error {
            return Some(e.clone());
        }
        if let Some(m) = spec.max_drops.filter(|&m| s.packets_dropped > m) {
            return Some(format!(
                "{} packets dropped (max_drops {m})",
                s.packets_dropped
            ));
        }
        spec.max_pause_us
            .filter(|&m| s.pause_us > m)
            .map(|m| format!("{:.1} us of PFC pause (max_pause_us {m})", s.pause_us))
    });
    let objective = match why {
        None => Estimate::of(&samples.iter().map(|s| s.objective).collect::<Vec<_>>()),
        Some(_) => None,
    };
    Scored {
        candidate,
        feasible: why.is_none() && objective.is_some(),
        why,
        objective,
        samples,
    }
}

/// Feasible first, then by mean objective, then by id.
pub(super) fn rank(v: &mut [Scored]) {
    let mean = |s: &Scored| s.objective.map_or(f64::INFINITY, |e| e.mean);
    let id = |s: &Scored| s.candidate.as_ref().map_or(u64::MAX, |c| c.id);
    v.sort_by(|a, b| {
        (!a.feasible)
            .cmp(&!b.feasible)
            .then(mean(a).total_cmp(&mean(b)))
            .then(id(a).cmp(&id(b)))
    });
}

/// Runs `jobs` for `cands` over `seeds` seeds (on the flow engine: `screen`) and scores each;
/// `None` when one did not finish.
pub(super) fn measure(
    spec: &TuneSpec,
    cands: &[Option<Candidate>],
    seeds: u32,
    screen: bool,
    eval: &mut Evaluate,
) -> Option<Vec<Scored>> {
    let jobs: Vec<Job> = cands
        .iter()
        .flat_map(|c| {
            (0..seeds).map(move |seed_index| Job {
                candidate: c.as_ref().map(|c| c.id),
                seed_index,
                screen,
            })
        })
        .collect();
    // Nothing to run is no batch (no Slurm round, no progress line).
    if jobs.is_empty() {
        return Some(Vec::new());
    }
    let mut got = eval(&jobs).into_iter();
    let mut out = Vec::new();
    for c in cands {
        let samples: Option<Vec<Sample>> = got.by_ref().take(seeds as usize).collect();
        out.push(score(spec, c.clone(), samples?));
    }
    Some(out)
}

/// The search over `first` (the first round's candidates).
pub fn run(spec: &TuneSpec, first: Vec<Candidate>, eval: &mut Evaluate) -> Found {
    let mut found = Found {
        screen: None,
        rounds: Vec::new(),
        best: None,
        default: None,
        complete: false,
    };
    let mut alive: Vec<Option<Candidate>> = match spec.screen {
        None => first.into_iter().map(Some).collect(),
        Some(screen) => {
            let Some((screened, passed)) = super::screen::run(spec, screen, first, eval) else {
                return found;
            };
            found.screen = Some(screened);
            passed
        }
    };
    let mut seeds = match spec.method {
        Method::Grid => spec.seeds,
        Method::SuccessiveHalving => spec.min_seeds,
    };
    loop {
        let Some(mut ranked) = measure(spec, &alive, seeds, false, eval) else {
            return found;
        };
        rank(&mut ranked);
        let keep = alive.len().div_ceil(spec.eta);
        alive = ranked
            .iter()
            .take(keep)
            .map(|s| s.candidate.clone())
            .collect();
        found.rounds.push(Round { seeds, ranked });
        let next = (seeds * spec.eta as u32).min(spec.seeds);
        // At all the seeds a next round would rank the same figures again: the best is chosen.
        if spec.method == Method::Grid || alive.len() <= 1 || next == seeds {
            break;
        }
        seeds = next;
    }
    let best = alive.into_iter().next().flatten();
    let Some(mut last) = measure(spec, &[best, None], spec.seeds, false, eval) else {
        return found;
    };
    found.default = last.pop();
    found.best = last.pop();
    found.complete = true;
    found
}

/// The best's improvement on the default: the per-seed difference default - best (the same
/// seeds), and whether the two intervals overlap.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Improvement {
    pub difference: Estimate,
    /// The difference over the default's mean, as a fraction.
    pub fraction: f64,
    pub intervals_overlap: bool,
}

pub fn improvement(best: &Scored, default: &Scored) -> Option<Improvement> {
    let (b, d) = (best.objective?, default.objective?);
    let diff: Vec<f64> = default
        .samples
        .iter()
        .zip(&best.samples)
        .map(|(d, b)| d.objective - b.objective)
        .collect();
    Some(Improvement {
        difference: Estimate::of(&diff)?,
        fraction: (d.mean - b.mean) / d.mean,
        intervals_overlap: b.overlaps(&d),
    })
}

/// One knob's main effect in the first round: the mean objective of the feasible candidates
/// with each of its values, and the spread of those means (one-factor main effects over the
/// sampled grid; Saltelli et al., "Global Sensitivity Analysis: The Primer", 2008, 1.2.5).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Sensitivity {
    pub knob: &'static str,
    /// (value, mean objective, candidates).
    pub levels: Vec<(f64, f64, usize)>,
    pub spread: f64,
}

pub fn sensitivity(spec: &TuneSpec, first: &Round) -> Vec<Sensitivity> {
    spec.knobs
        .iter()
        .enumerate()
        .map(|(i, (knob, values))| {
            let levels: Vec<(f64, f64, usize)> = values
                .iter()
                .filter_map(|&v| {
                    let means: Vec<f64> = first
                        .ranked
                        .iter()
                        .filter(|s| s.feasible)
                        .filter(|s| s.candidate.as_ref().is_some_and(|c| c.values[i] == v))
                        .filter_map(|s| s.objective.map(|e| e.mean))
                        .collect();
                    (!means.is_empty()).then(|| {
                        (
                            v,
                            means.iter().sum::<f64>() / means.len() as f64,
                            means.len(),
                        )
                    })
                })
                .collect();
            let m = levels.iter().map(|l| l.1);
            let spread = match levels.is_empty() {
                true => 0.0,
                false => m.clone().fold(f64::MIN, f64::max) - m.fold(f64::MAX, f64::min),
            };
            Sensitivity {
                knob: knob.name,
                levels,
                spread,
            }
        })
        .collect()
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use crate::tune::candidate::{decode, first_round};
    use fabricsim_input::profile::Family;
    use fabricsim_input::scenario::Scenario;

    /// A made-up objective (never a simulation's), so the search's bookkeeping can be checked
    /// against a known optimum: 10 + the sum over knobs of |value - `best`| + seed noise, the
    /// default at `default`; on the flow engine (a screen's job) knob `flow_ignores` counts not.
    pub fn fake(
        spec: &TuneSpec,
        j: &Job,
        (best, default): (&[f64], &[f64]),
        flow_ignores: Option<usize>,
    ) -> Sample {
        let v = j
            .candidate
            .map_or(default.to_vec(), |id| decode(spec, id).values);
        let off: f64 = (0..v.len())
            .filter(|&i| !(j.screen && flow_ignores == Some(i)))
            .map(|i| (v[i] - best[i]).abs())
            .sum();
        Sample {
            objective: off + 10.0 + j.seed_index as f64 * 0.1,
            packets_dropped: 0,
            pause_us: 0.0,
            ecn_marks: 0,
            error: None,
        }
    }

    #[test]
    fn successive_halving_keeps_a_fraction_with_more_seeds_and_remeasures_the_best() {
        let sc = Scenario::parse(
            "t.toml",
            "[tune]\nseeds = 4\n[tune.knobs]\necn_kmin_bytes = [1, 2, 3, 4, 5, 6, 7, 8]\n",
        )
        .unwrap();
        let spec = fabricsim_input::scenario::tune::resolve(&sc, Family::Roce).unwrap();
        let mut log = Vec::new();
        let found = run(&spec, first_round(&spec, 1), &mut |jobs: &[Job]| {
            log.push(jobs.len());
            jobs.iter()
                .map(|j| Some(fake(&spec, j, (&[3.0], &[9.0]), None)))
                .collect()
        });
        // 8 x 1 seed, 4 x 2, 2 x 4; then the one left and the default x 4.
        assert_eq!(log, [8, 8, 8, 8]);
        let seeds: Vec<u32> = found.rounds.iter().map(|r| r.seeds).collect();
        assert_eq!(seeds, [1, 2, 4]);
        let best = found.best.unwrap();
        assert_eq!(best.candidate.as_ref().unwrap().values, [3.0]);
        assert_eq!(best.samples.len(), 4);
        let imp = improvement(&best, &found.default.unwrap()).unwrap();
        assert!((imp.difference.mean - 6.0).abs() < 1e-9);
        let s = sensitivity(&spec, &found.rounds[0]);
        assert!((s[0].spread - 5.0).abs() < 1e-9, "{s:?}");
    }

    #[test]
    fn an_unfinished_round_ends_the_search_incomplete() {
        let sc =
            Scenario::parse("t.toml", "[tune]\n[tune.knobs]\necn_kmin_bytes = [1, 2]\n").unwrap();
        let spec = fabricsim_input::scenario::tune::resolve(&sc, Family::Roce).unwrap();
        let found = run(&spec, first_round(&spec, 1), &mut |jobs: &[Job]| {
            jobs.iter().map(|_| None).collect()
        });
        assert!(!found.complete && found.rounds.is_empty() && found.best.is_none());
    }
}
