//! One local `sweep` job from a scenario, the road the CLI and the Python package share: the
//! sweep's flags checked into axes, points, seeds and the fabric they start from, the points
//! run, and the JSON record `fabricsim sweep --json FILE` writes.

use fabricsim_input::scenario::{Scenario, flag_keys};

use super::sweep::{self, Point, PointResult, SweepAxis};
use super::variant::Variant;
use crate::error::{Error, InputError};
use crate::setup::engine_choice::EngineChoice;

/// The loss sweep's axes (the sweep without `--param`).
pub const LOSS_SWEEP: [&str; 2] = [
    "loss_rate=0,0.0001,0.0003,0.001,0.003,0.01",
    "transport=go-back-n,selective-repeat",
];

/// The fabric profile the points start from by default.
pub const DEFAULT_FABRIC: &str = "roce-400g";

/// The keys of a sweep record that say which sweep it is (`--resume` and a work directory
/// refuse a record that differs in one).
pub const RECORD_HEAD: [&str; 6] = [
    "fabric",
    "engine",
    "seed",
    "seeds",
    "axes",
    "scenario_fnv1a64",
];

/// The scenario flags a sweep takes (over `flag_keys::compare`'s keys).
pub const SCENARIO_FLAGS: [&str; 2] = ["--engine", "--seeds"];

/// What to sweep beyond the scenario: the CLI's flags, each field named as its flag.
#[derive(Clone, Debug, PartialEq)]
pub struct Request {
    /// `--param NAME=V1,V2,...`, once or twice; none: [`LOSS_SWEEP`].
    pub params: Vec<String>,
    pub fabric: String,
    pub seed: u64,
    /// Default: the machine's available parallelism.
    pub threads: Option<usize>,
}

impl Default for Request {
    /// The CLI's defaults.
    fn default() -> Request {
        Request {
            params: Vec::new(),
            fabric: DEFAULT_FABRIC.into(),
            seed: 1,
            threads: None,
        }
    }
}

impl Request {
    /// Sets the field `flag` names from its text (the Python package's keyword overrides;
    /// `--param` adds an axis); `Ok(false)` when `flag` is none of the request's.
    pub fn set(&mut self, flag: &str, value: &str) -> Result<bool, InputError> {
        let whole = |allowed: &'static str| {
            move |_| InputError::flag(flag, value, "not a whole number", allowed.to_string())
        };
        match flag {
            "--param" => self.params.push(value.into()),
            "--fabric" => self.fabric = value.into(),
            "--seed" => self.seed = value.parse().map_err(whole("a seed, 0 or more"))?,
            "--threads" => self.threads = Some(value.parse().map_err(whole("1 or more"))?),
            _ => return Ok(false),
        }
        Ok(true)
    }
}

/// Applies the scenario flags of a sweep (`--engine`, `--seeds`) over `s`; any other flag is
/// refused, naming the flags a sweep takes.
pub fn apply_flags(s: &mut Scenario, pairs: &[(String, String)]) -> Result<(), InputError> {
    if let Some((f, v)) = pairs
        .iter()
        .find(|(f, _)| !SCENARIO_FLAGS.contains(&f.as_str()))
    {
        return Err(InputError::flag(
            f,
            v,
            "is not a sweep flag",
            "--param, --fabric, --seed, --threads, --engine, --seeds",
        ));
    }
    s.apply_flags_for(pairs, flag_keys::compare)
}

/// A sweep checked against its scenario, ready to run: nothing is run before every point's
/// combination is known to build.
pub struct Job {
    pub request: Request,
    pub seeds: Vec<u64>,
    pub engine: EngineChoice,
    pub axes: Vec<SweepAxis>,
    pub fabric: Variant,
    pub points: Vec<Point>,
    pub threads: usize,
}

impl Job {
    /// Checks `r` against `scenario` (flags already applied): the seeds, engine, axes (at most
    /// two), fabric profile, every point and the thread count.
    pub fn new(scenario: &Scenario, r: &Request) -> Result<Job, Error> {
        let n = scenario
            .file
            .compare
            .clone()
            .unwrap_or_default()
            .checked_seeds(scenario)?;
        let seeds = super::seeds::derive(r.seed, n);
        let engine = EngineChoice::of(scenario)?;
        let texts: Vec<String> = if r.params.is_empty() {
            LOSS_SWEEP.iter().map(|s| s.to_string()).collect()
        } else {
            r.params.clone()
        };
        if texts.len() > 2 {
            return Err(InputError::flag(
                "--param",
                texts.len(),
                "too many sweep parameters",
                "one or two --param",
            )
            .into());
        }
        let axes = texts
            .iter()
            .map(|t| SweepAxis::parse("--param", t))
            .collect::<Result<Vec<_>, _>>()?;
        if fabricsim_input::profile::Profile::builtin(&r.fabric).is_err() {
            return Err(InputError::flag(
                "--fabric",
                &r.fabric,
                "is not a fabric profile",
                fabricsim_input::profile::Profile::ids().join(", "),
            )
            .into());
        }
        super::sweep_workload::check_axes(scenario, &axes, "--param")?;
        let fabric = Variant::swept(&r.fabric, engine);
        let points = sweep::expand(&axes);
        sweep::check(scenario, &fabric, &points, "--param")?;
        let threads = r.threads.unwrap_or_else(super::seeds::threads);
        if threads == 0 {
            return Err(InputError::flag("--threads", 0, "no worker thread", "1 or more").into());
        }
        Ok(Job {
            request: r.clone(),
            seeds,
            engine,
            axes,
            fabric,
            points,
            threads,
        })
    }

    /// Runs the points `todo` (with the stress pattern) on the job's threads; `progress` as
    /// [`sweep::run`]'s.
    pub fn run(
        &self,
        scenario: &Scenario,
        todo: &[Point],
        progress: &(dyn Fn(&[Option<PointResult>]) + Sync),
    ) -> Vec<PointResult> {
        sweep::run(
            scenario,
            &self.fabric,
            &self.seeds,
            todo,
            self.threads,
            true,
            progress,
        )
    }

    /// The sweep's JSON record: what it ran and the finished points; a `status` (`running`
    /// while it runs, `interrupted`) marks a partial record, which `--resume` finishes.
    pub fn record(
        &self,
        scenario: &Scenario,
        results: &[&PointResult],
        status: Option<&str>,
    ) -> serde_json::Value {
        let mut v = serde_json::json!({
            "fabric": self.request.fabric,
            "scenario_fnv1a64": format!("{:016x}", fnv1a64(scenario.source.text.as_bytes())),
            "engine": super::engine::choice_name(self.engine),
            "seed": self.request.seed,
            "seeds": self.seeds,
            "axes": self.axes,
            "points": results,
        });
        if let Some(s) = status {
            v["status"] = s.into();
        }
        v
    }
}

/// FNV-1a, 64 bits (Fowler, Noll, Vo; IETF draft-eastlake-fnv): a stable digest of the
/// scenario text, so `--resume` refuses a record made from another scenario.
pub fn fnv1a64(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ b as u64).wrapping_mul(0x0100_0000_01b3)
    })
}

/// The whole local sweep (every point) and its record as the `--json` file holds it: pretty
/// text with a final newline, `"status": "interrupted"` when a stop cut it short.
pub fn run_to_record(
    scenario: &Scenario,
    r: &Request,
) -> Result<(Job, Vec<PointResult>, String), Error> {
    let job = Job::new(scenario, r)?;
    let results = job.run(scenario, &job.points, &|_| {});
    let interrupted = results.len() < job.points.len();
    let all: Vec<&PointResult> = results.iter().collect();
    let v = job.record(scenario, &all, interrupted.then_some("interrupted"));
    let text = serde_json::to_string_pretty(&v)
        .map(|t| t + "\n")
        .map_err(|e| Error::Run(e.to_string()))?;
    Ok((job, results, text))
}
