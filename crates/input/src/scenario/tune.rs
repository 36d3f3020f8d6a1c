//! The `[tune]` section: what `fabricsim tune` searches (the knobs of the scenario's fabric
//! profile, each a list of values: `crate::profile_knobs`), against which objective of the
//! scenario's `[traffic]` run (or of one NCCL collective, `[tune.collective]`), under which
//! constraints, and how.
//!
//! ```toml
//! [tune]
//! objective = "fct_p99"        # fct_p50 | fct_p99 | fct_p999 | fct_max | mean_slowdown | collective_time | step_time | ttft_p99
//! method = "successive_halving" # successive_halving | grid
//! screen = "flow"              # optional: the sampled candidates first on the flow engine
//! screen_keep = 0.25           # the fraction of them the screen passes on
//! candidates = 16              # grid points the first round samples (all when fewer)
//! eta = 2                      # each round keeps 1/eta of the candidates, with eta x the seeds
//! min_seeds = 1                # seeds of the first round
//! seeds = 5                    # seeds the best and the default are re-measured over
//! max_drops = 0                # constraint: packets dropped per run
//! max_pause_us = 500           # constraint: PFC pause time per run, summed over ports
//! [tune.knobs]
//! ecn_kmin_bytes = [20000, 150000, 400000]
//! ecn_kmax_bytes = [400000, 1500000]
//! ```
//!
//! A collective instead of `[traffic]` (the objective then is `collective_time`, its launch to
//! its last rank's completion, as `fabricsim collective` times it):
//!
//! ```toml
//! [tune.collective]
//! op = "all_reduce"            # as collective --op
//! bytes = "64M"                # one size, as collective --min-bytes
//! algo = "ring"                # optional: the op's first algorithm
//! channels = 4                 # optional: NCCL's default for the algorithm
//! ```
//!
//! `objective = "step_time"` scores the scenario's `[train]` step as `fabricsim train
//! --calibrate` times it (its collectives fitted to engine runs); `objective = "ttft_p99"` the
//! `[serve]` deployment's p99 time to first token as `fabricsim serve` runs one seed.

use serde::Deserialize;
use std::collections::BTreeMap;

use crate::profile::Family;
use crate::profile_knobs::{self, Knob};
use crate::scenario::Scenario;
use crate::scenario::nccl::MAXCHANNELS;
use crate::scenario::value::SizeValue;
use fabricsim_core::error::InputError;

#[derive(Clone, Debug, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct TuneSection {
    pub objective: Option<String>,
    pub method: Option<String>,
    pub candidates: Option<u32>,
    pub eta: Option<u32>,
    pub min_seeds: Option<u32>,
    pub seeds: Option<u32>,
    pub max_drops: Option<u64>,
    pub max_pause_us: Option<f64>,
    pub screen: Option<String>,
    pub screen_keep: Option<f64>,
    #[serde(default)]
    pub knobs: BTreeMap<String, Vec<toml::Value>>,
    pub collective: Option<CollectiveSection>,
}

/// `[tune.collective]`: the one collective each candidate runs in place of `[traffic]`.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct CollectiveSection {
    pub op: String,
    pub bytes: SizeValue,
    pub algo: Option<String>,
    pub channels: Option<u32>,
}

/// A checked `[tune.collective]`: the op and algorithm names are checked where the collectives
/// are (the driver's `workload::collective`), against these keys.
#[derive(Clone, Debug, PartialEq)]
pub struct TuneCollective {
    pub op: String,
    pub bytes: u64,
    pub algo: Option<String>,
    pub channels: Option<u32>,
}

/// What a candidate is scored by (lower is better), from the run's summary.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Objective {
    FctP50,
    FctP99,
    FctP999,
    FctMax,
    MeanSlowdown,
    /// `[tune.collective]`'s launch to its last message's completion (nccl-tests' time).
    CollectiveTime,
    /// The `[train]` step, its collectives fitted to engine runs (`train --calibrate`).
    StepTime,
    /// The `[serve]` deployment's p99 time to first token (`fabricsim serve`, one seed).
    TtftP99,
}

impl Objective {
    pub const ALL: [Objective; 8] = [
        Objective::FctP50,
        Objective::FctP99,
        Objective::FctP999,
        Objective::FctMax,
        Objective::MeanSlowdown,
        Objective::CollectiveTime,
        Objective::StepTime,
        Objective::TtftP99,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Objective::FctP50 => "fct_p50",
            Objective::FctP99 => "fct_p99",
            Objective::FctP999 => "fct_p999",
            Objective::FctMax => "fct_max",
            Objective::MeanSlowdown => "mean_slowdown",
            Objective::CollectiveTime => "collective_time",
            Objective::StepTime => "step_time",
            Objective::TtftP99 => "ttft_p99",
        }
    }

    /// The unit its figures are in.
    pub fn unit(self) -> &'static str {
        match self {
            Objective::MeanSlowdown => "x",
            Objective::StepTime | Objective::TtftP99 => "ms",
            _ => "us",
        }
    }

    /// Whether its runs' packet counters (drops, PFC pause) are measured: a training step's
    /// time comes from fits to its collectives' times, a serving run's from its transfers'
    /// times, and neither keeps the counters.
    pub fn counts_packets(self) -> bool {
        !matches!(self, Objective::StepTime | Objective::TtftP99)
    }
}

/// Where the sampled candidates are screened before the rounds of the search.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Screen {
    /// The fraction of the screened candidates the search goes on with (at least one).
    pub keep: f64,
}

/// How the candidates are searched.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Method {
    /// Successive halving (Jamieson and Talwalkar, AISTATS 2016; the inner loop of Hyperband,
    /// Li et al., JMLR 2018) with seeds as the budget.
    SuccessiveHalving,
    /// Every candidate at the full seeds.
    Grid,
}

/// A checked `[tune]`.
#[derive(Clone, Debug, PartialEq)]
pub struct TuneSpec {
    pub objective: Objective,
    pub method: Method,
    pub candidates: usize,
    pub eta: usize,
    pub min_seeds: u32,
    pub seeds: u32,
    pub max_drops: Option<u64>,
    pub max_pause_us: Option<f64>,
    /// The knobs and their values, in `profile_knobs::KNOBS` order.
    pub knobs: Vec<(&'static Knob, Vec<f64>)>,
    /// The collective run in place of `[traffic]`.
    pub collective: Option<TuneCollective>,
    /// A first round on the flow engine (`screen = "flow"`).
    pub screen: Option<Screen>,
}

/// Most candidates a first round may sample.
pub const MAX_CANDIDATES: u32 = 4096;
/// Most seeds per candidate.
pub const MAX_SEEDS: u32 = 64;

/// The scenario's `[tune]`, checked for a profile of `family`.
pub fn resolve(sc: &Scenario, family: Family) -> Result<TuneSpec, InputError> {
    let Some(t) = &sc.file.tune else {
        return Err(sc.error(
            "tune",
            "(missing)",
            "no [tune] section",
            "a [tune] section with [tune.knobs], e.g. ecn_kmin_bytes = [50000, 150000]",
        ));
    };
    let collective = t
        .collective
        .as_ref()
        .map(|c| collective(sc, c))
        .transpose()?;
    let objective = match &t.objective {
        None if collective.is_some() => Objective::CollectiveTime,
        None => Objective::FctP99,
        Some(o) => Objective::ALL
            .into_iter()
            .find(|x| x.name() == o)
            .ok_or_else(|| {
                let names: Vec<_> = Objective::ALL.iter().map(|x| x.name()).collect();
                sc.error("tune.objective", o, "is not an objective", names.join(", "))
            })?,
    };
    // The collective's time is the objective of a collective, and only of one; the step's
    // that of a `[train]` job.
    let work = match (objective, collective.is_some()) {
        (Objective::CollectiveTime, false) => Some((
            "times a collective, and there is no [tune.collective]",
            "a [tune.collective] section, or an objective of the [traffic] run",
        )),
        (o, true) if o != Objective::CollectiveTime => Some((
            "does not score a collective; [tune.collective] runs a collective in place of [traffic]",
            "collective_time (or no [tune.collective])",
        )),
        (Objective::StepTime, _) if sc.file.train.is_none() => Some((
            "times a training step, and there is no [train]",
            "a [train] section (as fabricsim train reads it), or an objective of the [traffic] run",
        )),
        (Objective::TtftP99, _) if sc.file.serve.is_none() => Some((
            "times a serving run's first tokens, and there is no [serve]",
            "a [serve] section (as fabricsim serve reads it), or an objective of the [traffic] run",
        )),
        _ => None,
    };
    if let Some((problem, allowed)) = work {
        return Err(sc.error("tune.objective", objective.name(), problem, allowed));
    }
    if !objective.counts_packets() {
        let set = [
            ("tune.max_drops", t.max_drops.map(|v| v.to_string())),
            ("tune.max_pause_us", t.max_pause_us.map(|v| v.to_string())),
        ];
        if let Some((key, Some(v))) = set.iter().find(|(_, v)| v.is_some()) {
            return Err(sc.error(
                key,
                v,
                format!(
                    "bounds a packet counter that {} does not measure (its runs keep none)",
                    objective.name()
                ),
                format!("no packet constraint with {}", objective.name()),
            ));
        }
    }
    let screen = screen(sc, t, objective)?;
    let method = match t.method.as_deref() {
        None | Some("successive_halving") => Method::SuccessiveHalving,
        Some("grid") => Method::Grid,
        Some(m) => {
            return Err(sc.error(
                "tune.method",
                m,
                "is not a search method",
                "successive_halving, grid",
            ));
        }
    };
    let count = |key: &str, v: Option<u32>, default: u32, lo: u32, hi: u32| {
        let v = v.unwrap_or(default);
        match (lo..=hi).contains(&v) {
            true => Ok(v),
            false => Err(sc.error(key, v, "is out of range", format!("{lo} to {hi}"))),
        }
    };
    let seeds = count("tune.seeds", t.seeds, 5, 2, MAX_SEEDS)?;
    let min_seeds = count("tune.min_seeds", t.min_seeds, 1, 1, seeds)?;
    let eta = count("tune.eta", t.eta, 2, 2, 16)? as usize;
    let candidates = count("tune.candidates", t.candidates, 64, 1, MAX_CANDIDATES)? as usize;
    if let Some(p) = t.max_pause_us.filter(|p| !(p.is_finite() && *p >= 0.0)) {
        return Err(sc.error(
            "tune.max_pause_us",
            p,
            "is not a pause time",
            "0 or more microseconds",
        ));
    }
    if t.knobs.is_empty() {
        return Err(sc.error(
            "tune.knobs",
            "(empty)",
            "names no knob",
            format!("one or more of {}", profile_knobs::names()),
        ));
    }
    let mut knobs = Vec::new();
    for (name, values) in &t.knobs {
        let key = format!("tune.knobs.{name}");
        let knob = profile_knobs::knob(name)
            .ok_or_else(|| sc.error(&key, name, "is not a knob", profile_knobs::names()))?;
        if !knob.families.contains(&family) {
            let on: Vec<_> = knob.families.iter().map(|f| f.name()).collect();
            return Err(sc.error(
                &key,
                name,
                format!("is not a knob of a {} profile", family.name()),
                format!("{name} on {} profiles; for this one: {}", on.join(", "), {
                    let mine: Vec<_> = profile_knobs::KNOBS
                        .iter()
                        .filter(|k| k.families.contains(&family))
                        .map(|k| k.name)
                        .collect();
                    mine.join(", ")
                }),
            ));
        }
        if values.is_empty() {
            return Err(sc.error(&key, "[]", "lists no value", knob.allowed()));
        }
        let mut vs = Vec::new();
        for v in values {
            let x = v.as_float().or_else(|| v.as_integer().map(|i| i as f64));
            let problem = match x {
                None => Some("is not a number".to_string()),
                Some(x) if vs.contains(&x) => Some(format!("lists {x} twice")),
                Some(x) => knob.refuse(x),
            };
            if let Some(p) = problem {
                return Err(sc.error(&key, v, p, knob.allowed()));
            }
            vs.extend(x);
        }
        knobs.push((knob, vs));
    }
    knobs.sort_by_key(|(k, _)| profile_knobs::KNOBS.iter().position(|o| o.name == k.name));
    Ok(TuneSpec {
        objective,
        method,
        candidates,
        eta,
        min_seeds,
        seeds,
        max_drops: t.max_drops,
        max_pause_us: t.max_pause_us,
        knobs,
        collective,
        screen,
    })
}

/// `screen` and `screen_keep` checked: the flow engine, a fraction in (0, 1]; a screen on the
/// flow engine when every run is on it already (`engine = "flow"`, or a serving run without an
/// `engine`, which `serve` runs there) would screen nothing.
fn screen(sc: &Scenario, t: &TuneSection, o: Objective) -> Result<Option<Screen>, InputError> {
    let on = match t.screen.as_deref() {
        None | Some("none") => false,
        Some("flow") => true,
        Some(s) => return Err(sc.error("tune.screen", s, "is not a screen", "flow, none")),
    };
    if let Some(k) = t.screen_keep {
        if !(k > 0.0 && k <= 1.0) {
            return Err(sc.error(
                "tune.screen_keep",
                k,
                "is not a fraction to keep",
                "above 0 and at most 1, such as 0.25",
            ));
        }
        if !on {
            return Err(sc.error(
                "tune.screen_keep",
                k,
                "keeps a fraction of a screen, and there is none",
                "screen = \"flow\" with it, or no screen_keep",
            ));
        }
    }
    let engine = sc.file.engine.as_deref();
    if on && (engine == Some("flow") || (engine.is_none() && o == Objective::TtftP99)) {
        return Err(sc.error(
            "tune.screen",
            "flow",
            "screens on the flow engine, and every round runs there already (engine = \"flow\", \
             or a serving run without an engine)",
            "screen = \"flow\" with engine = \"packet\" or \"auto\", or no screen",
        ));
    }
    Ok(on.then_some(Screen {
        keep: t.screen_keep.unwrap_or(0.25),
    }))
}

/// `[tune.collective]` checked: a size above 0, channels within NCCL's MAXCHANNELS.
fn collective(sc: &Scenario, c: &CollectiveSection) -> Result<TuneCollective, InputError> {
    let bytes = c.bytes.bytes(&sc.source, "tune.collective.bytes")?;
    if bytes == 0 {
        return Err(sc.error(
            "tune.collective.bytes",
            0,
            "a collective of 0 bytes moves nothing to tune",
            "a size above 0, such as 64M",
        ));
    }
    if let Some(n) = c.channels.filter(|n| !(1..=MAXCHANNELS).contains(n)) {
        return Err(sc.error(
            "tune.collective.channels",
            n,
            "is not an NCCL channel count",
            format!("1 to {MAXCHANNELS} (NCCL's MAXCHANNELS)"),
        ));
    }
    Ok(TuneCollective {
        op: c.op.clone(),
        bytes,
        algo: c.algo.clone(),
        channels: c.channels,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(text: &str) -> Result<TuneSpec, InputError> {
        resolve(&Scenario::parse("t.toml", text).unwrap(), Family::Roce)
    }

    #[test]
    fn a_tune_section_resolves_with_defaults_and_knobs_in_table_order() {
        let s = spec(
            "[tune]\n[tune.knobs]\necn_kmax_bytes = [400000]\necn_kmin_bytes = [20000, 150000]\n",
        )
        .unwrap();
        assert_eq!(
            (s.objective, s.method, s.eta, s.min_seeds, s.seeds),
            (Objective::FctP99, Method::SuccessiveHalving, 2, 1, 5)
        );
        let names: Vec<_> = s.knobs.iter().map(|(k, _)| k.name).collect();
        assert_eq!(names, ["ecn_kmin_bytes", "ecn_kmax_bytes"]);
        assert_eq!((s.collective, s.screen), (None, None));
    }

    #[test]
    fn a_training_step_is_timed_in_ms_and_a_flow_screen_keeps_a_quarter_by_default() {
        let s = spec(
            "[train]\nmodel = \"llama3-8b\"\n[tune]\nobjective = \"step_time\"\n\
             screen = \"flow\"\n[tune.knobs]\necn_pmax = [1]\n",
        )
        .unwrap();
        assert_eq!(
            (s.objective, s.objective.unit()),
            (Objective::StepTime, "ms")
        );
        assert!(!s.objective.counts_packets());
        assert_eq!(s.screen, Some(Screen { keep: 0.25 }));
    }

    #[test]
    fn a_collective_is_timed_by_default() {
        let s = spec(
            "[tune]\n[tune.knobs]\necn_pmax = [1]\n[tune.collective]\nop = \"all_reduce\"\n\
             bytes = \"64M\"\n",
        )
        .unwrap();
        assert_eq!(s.objective, Objective::CollectiveTime);
        let c = s.collective.unwrap();
        assert_eq!(
            (c.op.as_str(), c.bytes, c.channels),
            ("all_reduce", 64 << 20, None)
        );
    }

    #[test]
    fn bad_tune_input_names_line_key_value_and_what_is_allowed() {
        let cases = [
            (
                "[tune]\nobjective = \"fast\"\n[tune.knobs]\necn_pmax = [1]\n",
                2,
                "tune.objective",
                "fast",
            ),
            (
                "[tune]\n[tune.knobs]\necn_pmax = [0.5, 2]\n",
                3,
                "tune.knobs.ecn_pmax",
                "2",
            ),
            (
                "[tune]\n[tune.knobs]\nkmin = [1]\n",
                3,
                "tune.knobs.kmin",
                "kmin",
            ),
            (
                "[tune]\n[tune.knobs]\nccti_increase = [1]\n",
                3,
                "tune.knobs.ccti_increase",
                "ccti_increase",
            ),
            (
                "[tune]\nseeds = 1\n[tune.knobs]\necn_pmax = [1]\n",
                2,
                "tune.seeds",
                "1",
            ),
            (
                "[tune]\n[tune.knobs]\necn_kmin_bytes = [1.5]\n",
                3,
                "tune.knobs.ecn_kmin_bytes",
                "1.5",
            ),
            (
                "[tune]\nobjective = \"collective_time\"\n[tune.knobs]\necn_pmax = [1]\n",
                2,
                "tune.objective",
                "collective_time",
            ),
            (
                "[tune]\nobjective = \"fct_p99\"\n[tune.knobs]\necn_pmax = [1]\n\
                 [tune.collective]\nop = \"all_reduce\"\nbytes = \"1M\"\n",
                2,
                "tune.objective",
                "fct_p99",
            ),
            (
                "[tune]\n[tune.knobs]\necn_pmax = [1]\n[tune.collective]\nop = \"all_reduce\"\n\
                 bytes = \"1M\"\nchannels = 0\n",
                7,
                "tune.collective.channels",
                "0",
            ),
            (
                "[tune]\n[tune.knobs]\necn_pmax = [1]\n[tune.collective]\nop = \"all_reduce\"\n\
                 bytes = 0\n",
                6,
                "tune.collective.bytes",
                "0",
            ),
            (
                "[tune]\nobjective = \"step_time\"\n[tune.knobs]\necn_pmax = [1]\n",
                2,
                "tune.objective",
                "step_time",
            ),
            (
                "[train]\nmodel = \"llama3-8b\"\n[tune]\nobjective = \"step_time\"\nmax_drops = 0\n\
                 [tune.knobs]\necn_pmax = [1]\n",
                5,
                "tune.max_drops",
                "0",
            ),
            (
                "[tune]\nobjective = \"ttft_p99\"\n[tune.knobs]\necn_pmax = [1]\n",
                2,
                "tune.objective",
                "ttft_p99",
            ),
            (
                "[tune]\nscreen = \"packet\"\n[tune.knobs]\necn_pmax = [1]\n",
                2,
                "tune.screen",
                "packet",
            ),
            (
                "[tune]\nscreen = \"flow\"\nscreen_keep = 1.5\n[tune.knobs]\necn_pmax = [1]\n",
                3,
                "tune.screen_keep",
                "1.5",
            ),
            (
                "[tune]\nscreen_keep = 0.5\n[tune.knobs]\necn_pmax = [1]\n",
                2,
                "tune.screen_keep",
                "0.5",
            ),
            (
                "engine = \"flow\"\n[tune]\nscreen = \"flow\"\n[tune.knobs]\necn_pmax = [1]\n",
                3,
                "tune.screen",
                "flow",
            ),
        ];
        for (text, line, key, value) in cases {
            let e = spec(text).unwrap_err();
            assert_eq!(
                (e.file.as_str(), e.line, e.key.as_str(), e.value.as_str()),
                ("t.toml", Some(line), key, value),
                "{text}"
            );
            assert!(!e.allowed.is_empty(), "{text}");
        }
    }
}
