//! The jobs a Python call runs, each the CLI subcommand's road (`fabricsim-cli/src/plan.rs`,
//! `sim.rs`, `train.rs`, `compare.rs`, `collective.rs`, `sweep.rs`) down to the JSON text it
//! writes with `--format json` / `--out` / `--json`: the same scenario, overrides and seed give
//! the same bytes.

use fabricsim::columns;
use fabricsim::compare::model::default_scenario;
use fabricsim::compare::recommend::recommend;
use fabricsim::compare::sweep::PointResult;
use fabricsim::compare::sweep_job;
use fabricsim::scenario::{Scenario, flag_keys};
use fabricsim::sim::RunResult;
use fabricsim::units::parse_time;
use fabricsim::workload::collective::job as collective_job;
use fabricsim::workload::sim_job::SimJob;
use fabricsim::{Error, InputError};

use crate::scenario_arg::ScenarioArg;

/// A job that did not finish: the user's input (with file, line, key), or the run itself.
#[derive(Debug)]
pub enum JobError {
    Input(InputError),
    Run(String),
}

impl From<InputError> for JobError {
    fn from(e: InputError) -> JobError {
        JobError::Input(e)
    }
}

impl From<Error> for JobError {
    fn from(e: Error) -> JobError {
        match e {
            Error::Input(e) => JobError::Input(e),
            e => JobError::Run(e.to_string()),
        }
    }
}

/// Keyword overrides as the CLI's flags: (`--gpus`, `"256"`) pairs, in call order.
pub type Flags = [(String, String)];

/// serde_json's pretty text with a final newline, as the CLI writes it (`output::json`).
fn pretty(v: &serde_json::Value) -> Result<String, JobError> {
    serde_json::to_string_pretty(v)
        .map(|t| t + "\n")
        .map_err(|e| JobError::Run(e.to_string()))
}

/// `fabricsim plan --format json`.
pub fn plan(arg: &ScenarioArg, flags: &Flags) -> Result<String, JobError> {
    let (mut s, _) = arg.load(Scenario::defaults)?;
    s.apply_flags_for(flags, flag_keys::plan)?;
    let (design, topo, plan) = fabricsim::plan::run(&s)?;
    let plan =
        fabricsim::workload::tenants::storage::with_job_checkpoint(&s, &design, &topo, plan)?;
    let traffic = fabricsim::report::plan_traffic::of(&s, &design, &topo)?;
    pretty(&fabricsim::report::plan::json(
        &plan,
        &design,
        traffic.as_ref(),
    ))
}

/// `fabricsim sim SCENARIO [--seed N] [--until T]`'s run; results that break conservation are
/// a run error, as the CLI's exit 1.
fn sim_run(
    arg: &ScenarioArg,
    flags: &Flags,
    seed: Option<u64>,
    until: Option<&str>,
) -> Result<RunResult, JobError> {
    let (mut s, base) = arg.load(Scenario::defaults)?;
    s.apply_flags_for(flags, flag_keys::sim)?;
    let until = until
        .map(|t| {
            parse_time(t).map_err(|p| InputError::flag("until", t, p, "a duration such as 10ms"))
        })
        .transpose()?;
    let job = SimJob::new(&s, &base, seed, until)?;
    let r = job.run(&s, None)?;
    r.check_conservation()
        .map_err(|e| JobError::Run(e.to_string()))?;
    Ok(r)
}

/// `fabricsim sim SCENARIO [--seed N] [--until T]`: the results JSON (without wall-clock
/// figures).
pub fn sim(
    arg: &ScenarioArg,
    flags: &Flags,
    seed: Option<u64>,
    until: Option<&str>,
) -> Result<String, JobError> {
    Ok(sim_run(arg, flags, seed, until)?.to_json(false))
}

/// The tables of a `sim` run (`fabricsim::columns`): `messages` (`sim --format csv`'s) or
/// `series` (`sim --series`'s), as Arrow IPC stream bytes.
pub fn sim_table(
    arg: &ScenarioArg,
    flags: &Flags,
    seed: Option<u64>,
    until: Option<&str>,
    table: &str,
) -> Result<Vec<u8>, JobError> {
    let bad = |problem: &str| InputError::flag("table", table, problem, "messages or series");
    if !matches!(table, "messages" | "series") {
        return Err(bad("is not a table of a sim run").into());
    }
    let r = sim_run(arg, flags, seed, until)?;
    let t = match (table, &r.series) {
        ("messages", _) => columns::messages(&r),
        (_, Some(series)) => columns::series(series),
        (_, None) => {
            return Err(bad(
                "the run has no port series: they need [sim] sample_interval and the packet engine",
            )
            .into());
        }
    };
    Ok(t.write(columns::Format::ArrowStream, "table")?)
}

/// `fabricsim train [--calibrate] --format json` (a training step of the scenario's
/// `[train]` job, or of the built-in defaults' job with overrides such as `model=`).
pub fn train(arg: &ScenarioArg, flags: &Flags, calibrate: bool) -> Result<String, JobError> {
    let (mut s, _) = arg.load(Scenario::defaults)?;
    s.apply_flags_for(flags, flag_keys::train)?;
    let o = fabricsim::workload::train::job::run(&s, calibrate, &mut |_| {})?;
    fabricsim::workload::train::job::json_text(&o)
        .map(|t| t + "\n")
        .map_err(|e| JobError::Run(e.to_string()))
}

/// `fabricsim compare --format json` (the built-in comparison without a scenario).
pub fn compare(arg: &ScenarioArg, flags: &Flags) -> Result<String, JobError> {
    let (mut s, _) = arg.load(default_scenario)?;
    s.apply_compare_flags(flags, flag_keys::compare)?;
    let c = fabricsim::compare::run(&s)?;
    pretty(&fabricsim::report::compare::json(&c, &recommend(&c)))
}

/// The pairs `set` does not take (the scenario's flags), in call order.
fn split(
    flags: &Flags,
    mut set: impl FnMut(&str, &str) -> Result<bool, InputError>,
) -> Result<Vec<(String, String)>, InputError> {
    let mut rest = Vec::new();
    for (f, v) in flags {
        if !set(f, v)? {
            rest.push((f.clone(), v.clone()));
        }
    }
    Ok(rest)
}

/// `fabricsim collective --format json`: the collective's own flags (`--op`, `--min-bytes`,
/// ... `--fit`) and the cluster's.
pub fn collective(arg: &ScenarioArg, flags: &Flags) -> Result<String, JobError> {
    Ok(collective_run(arg, flags)?.json_text()?)
}

/// The rows of `collective`'s table (`workload::table::Table::columns`) as Arrow IPC stream
/// bytes.
pub fn collective_table(arg: &ScenarioArg, flags: &Flags) -> Result<Vec<u8>, JobError> {
    let o = collective_run(arg, flags)?;
    Ok(o.table
        .columns()
        .write(columns::Format::ArrowStream, "table")?)
}

fn collective_run(arg: &ScenarioArg, flags: &Flags) -> Result<collective_job::Outcome, JobError> {
    let mut r = collective_job::Request::default();
    let rest = split(flags, |f, v| r.set(f, v))?;
    let (mut s, _) = arg.load(Scenario::defaults)?;
    s.apply_flags_for(&rest, flag_keys::cluster)?;
    Ok(collective_job::run(&s, &r, &|_| {})?)
}

/// `fabricsim sweep --json FILE`'s record (a local sweep: `--param` once per axis, `--fabric`,
/// `--seed`, `--threads`, `--engine`, `--seeds`).
pub fn sweep(arg: &ScenarioArg, flags: &Flags) -> Result<String, JobError> {
    Ok(sweep_run(arg, flags)?.2)
}

/// The points of `sweep` in columns (`sweep --csv`'s) as Arrow IPC stream bytes.
pub fn sweep_table(arg: &ScenarioArg, flags: &Flags) -> Result<Vec<u8>, JobError> {
    let (job, results, _) = sweep_run(arg, flags)?;
    let t = fabricsim::compare::sweep::table(&job.axes, &results);
    Ok(t.write(columns::Format::ArrowStream, "table")?)
}

fn sweep_run(
    arg: &ScenarioArg,
    flags: &Flags,
) -> Result<(sweep_job::Job, Vec<PointResult>, String), JobError> {
    let mut r = sweep_job::Request::default();
    let rest = split(flags, |f, v| r.set(f, v))?;
    let (mut s, _) = arg.load(default_scenario)?;
    sweep_job::apply_flags(&mut s, &rest)?;
    Ok(sweep_job::run_to_record(&s, &r)?)
}
