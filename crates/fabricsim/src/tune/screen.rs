//! The screen (`screen = "flow"`): every sampled candidate first runs on the flow engine, and
//! only the best `screen_keep` of them go on to successive halving on the scenario's engine
//! (issue #30: "a coarse grid on the flow engine to screen, then successive halving on the
//! packet engine with several seeds"). A screen on a model that ignores a knob would rank
//! its values by noise, so each searched knob is checked first: each of its values is also run
//! at the screen's best point, the other knobs held; a knob whose values give the very same
//! figures wherever the screen ran two points that differ in it alone is one the flow engine
//! does not model for this scenario, and the screen is then skipped (every candidate goes on,
//! and the report says which knob).

use serde::Serialize;

use super::candidate::{Candidate, encode};
use super::search::{Evaluate, Round, Scored, measure, rank};
use fabricsim_input::scenario::tune::{Screen, TuneSpec};

/// What the screen did.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Screened {
    /// The engine the candidates were screened on.
    pub engine: &'static str,
    /// The screened candidates, best first.
    pub round: Round,
    /// The points run to check the knobs (the screen's best with one knob changed), beyond
    /// those the round ran.
    pub probes: Vec<Scored>,
    /// Knobs whose values the flow engine's figures do not move with.
    pub ignored: Vec<&'static str>,
    /// Why the screen passed every candidate on (`None`: it kept its best fraction).
    pub skipped: Option<String>,
    /// The candidates passed on to the search's rounds.
    pub passed: usize,
}

/// Screens `first`; `None` when a measurement did not finish. Returns what it did and the
/// candidates passed on, best first.
pub fn run(
    spec: &TuneSpec,
    screen: Screen,
    first: Vec<Candidate>,
    eval: &mut Evaluate,
) -> Option<(Screened, Vec<Option<Candidate>>)> {
    let n = first.len();
    let all: Vec<Option<Candidate>> = first.into_iter().map(Some).collect();
    let mut ranked = measure(spec, &all, spec.min_seeds, true, eval)?;
    rank(&mut ranked);
    let best = ranked
        .iter()
        .find(|s| s.feasible)
        .and_then(|s| s.candidate.clone());
    let (probes, ignored, skipped) = match best {
        None => {
            let why = ranked
                .first()
                .and_then(|s| s.why.clone())
                .unwrap_or_default();
            let skip = format!("no candidate ran on the flow engine ({why})");
            (Vec::new(), Vec::new(), Some(skip))
        }
        Some(b) => {
            let (probes, ignored) = check_knobs(spec, &b, &ranked, eval)?;
            let skip = (!ignored.is_empty()).then(|| {
                format!(
                    "the flow engine's {} does not move with {} (no two screened points that \
                     differ in that knob alone give different figures): it does not model {} \
                     for this scenario",
                    spec.objective.name(),
                    ignored.join(", "),
                    if ignored.len() == 1 { "it" } else { "them" }
                )
            });
            (probes, ignored, skip)
        }
    };
    let keep = match skipped {
        Some(_) => n,
        None => ((n as f64 * screen.keep).ceil() as usize).clamp(1, n),
    };
    let passed: Vec<Option<Candidate>> = match skipped {
        // Skipped: the candidates go on in their sampled order, the flow figures unused.
        Some(_) => all,
        None => ranked
            .iter()
            .take(keep)
            .map(|s| s.candidate.clone())
            .collect(),
    };
    let screened = Screened {
        engine: "flow",
        round: Round {
            seeds: spec.min_seeds,
            ranked,
        },
        probes,
        ignored,
        skipped,
        passed: keep,
    };
    Some((screened, passed))
}

/// Runs, on the flow engine, `best` with each knob's every value (the others held), and
/// returns those runs and the knobs the flow engine's figures do not move with: no two
/// feasible points of the screen that differ in that knob alone give different figures (a
/// failed run, such as Kmin above Kmax, tells nothing either way).
fn check_knobs(
    spec: &TuneSpec,
    best: &Candidate,
    ranked: &[Scored],
    eval: &mut Evaluate,
) -> Option<(Vec<Scored>, Vec<&'static str>)> {
    let ran = |id: u64| {
        ranked
            .iter()
            .any(|s| s.candidate.as_ref().is_some_and(|c| c.id == id))
    };
    let mut todo: Vec<Option<Candidate>> = Vec::new();
    for (i, (_, values)) in spec.knobs.iter().enumerate() {
        for &v in values {
            let mut values = best.values.clone();
            values[i] = v;
            let c = encode(spec, values);
            if !ran(c.id) && !todo.iter().flatten().any(|t| t.id == c.id) {
                todo.push(Some(c));
            }
        }
    }
    let probes = measure(spec, &todo, spec.min_seeds, true, eval)?;
    let points: Vec<(&[f64], Vec<f64>)> = ranked
        .iter()
        .chain(&probes)
        .filter(|s| s.feasible)
        .filter_map(|s| {
            let c = s.candidate.as_ref()?;
            Some((
                &c.values[..],
                s.samples.iter().map(|x| x.objective).collect(),
            ))
        })
        .collect();
    let moves = |i: usize| {
        points.iter().any(|(a, fa)| {
            points.iter().any(|(b, fb)| {
                let alone = (0..a.len()).all(|j| (j == i) != (a[j] == b[j]));
                alone && fa != fb
            })
        })
    };
    let ignored = spec
        .knobs
        .iter()
        .enumerate()
        .filter(|(i, (_, values))| values.len() > 1 && !moves(*i))
        .map(|(_, (k, _))| k.name)
        .collect();
    Some((probes, ignored))
}

#[cfg(test)]
mod tests {
    use crate::tune::candidate::first_round;
    use crate::tune::search::tests::fake;
    use crate::tune::search::{Job, run};
    use fabricsim_input::profile::Family;
    use fabricsim_input::scenario::Scenario;

    fn search(flow_ignores_pmax: bool) -> (crate::tune::search::Found, Vec<Job>) {
        let sc = Scenario::parse(
            "t.toml",
            "[tune]\nseeds = 2\nscreen = \"flow\"\nscreen_keep = 0.25\n[tune.knobs]\n\
             ecn_kmin_bytes = [1, 2, 3, 4, 5, 6, 7, 8]\necn_pmax = [0.1, 0.5]\n",
        )
        .unwrap();
        let spec = fabricsim_input::scenario::tune::resolve(&sc, Family::Roce).unwrap();
        let mut jobs = Vec::new();
        let found = run(&spec, first_round(&spec, 1), &mut |js: &[Job]| {
            jobs.extend_from_slice(js);
            // The optimum at Kmin 3, Pmax 0.5; the flow engine ignores Pmax (knob 1) or not.
            let ignores = flow_ignores_pmax.then_some(1);
            js.iter()
                .map(|j| Some(fake(&spec, j, (&[3.0, 0.5], &[9.0, 0.0]), ignores)))
                .collect()
        });
        (found, jobs)
    }

    #[test]
    fn a_screen_passes_its_best_fraction_on_to_the_rounds() {
        let (found, jobs) = search(false);
        let s = found.screen.as_ref().unwrap();
        assert_eq!(
            (s.round.ranked.len(), s.passed, s.skipped.as_ref()),
            (16, 4, None)
        );
        // Round 1 runs the 4 passed on, not the 16 screened, and not on the flow engine.
        assert_eq!(found.rounds[0].ranked.len(), 4);
        let packet = jobs.iter().filter(|j| !j.screen).count();
        assert_eq!(packet, 4 + 2 * 2 + 2 * 2);
        assert_eq!(found.best.unwrap().candidate.unwrap().values, [3.0, 0.5]);
    }

    #[test]
    fn a_knob_the_flow_engine_ignores_skips_the_screen() {
        let (found, _) = search(true);
        let s = found.screen.as_ref().unwrap();
        assert_eq!(s.ignored, ["ecn_pmax"]);
        assert!(s.skipped.as_ref().unwrap().contains("ecn_pmax"), "{s:?}");
        assert_eq!((s.passed, found.rounds[0].ranked.len()), (16, 16));
    }
}
