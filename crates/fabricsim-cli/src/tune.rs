//! `fabricsim tune SCENARIO`: search the fabric profile's knobs in `[tune]` for the scenario's
//! `[traffic]` run (`fabricsim::tune`); the report on stdout, `--json`, `--csv`, and the best
//! settings as a profile file (`--profile-out`, for `--fabric FILE`). Measurements run on this
//! machine's threads, or each round as a Slurm job array (`--backend slurm`, `crate::slurm`);
//! with `--work-dir` every finished measurement is kept, so a stopped search resumes.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use clap::Args;
use fabricsim::InputError;
use fabricsim::tune::Tuning;
use fabricsim::tune::eval::Sample;
use fabricsim::tune::report::TuneReport;
use fabricsim::tune::search::Job;

use crate::outcome::{Failure, Outcome, unless_interrupted};
use crate::outpath;
use crate::output;
use crate::progress::Bar;
use crate::scenario_flags::{self, ScenarioFlags};
use crate::slurm::Jobs;
use crate::sweep::{Backend, absolute, fnv1a64};
use crate::sweep_dir::{Shard, WorkDir};
use crate::tune_dir::TuneDir;

#[derive(Args)]
pub struct TuneArgs {
    /// Scenario TOML with [tune] (objective, knobs), [traffic], and the network from [cluster],
    /// [fabric] (the profile the search starts from) and [topology].
    pub scenario: PathBuf,
    #[command(flatten)]
    pub flags: ScenarioFlags<scenario_flags::Sim>,
    /// Seed of the first round's sample of the grid and the first of the runs' seeds.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Worker threads (default: the machine's available parallelism); per task on Slurm.
    #[arg(long)]
    pub threads: Option<usize>,
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    #[arg(long, value_name = "FILE")]
    pub csv: Option<PathBuf>,
    /// Write the best settings as a fabric profile (extends the shipped profile; `--fabric FILE`).
    #[arg(long, value_name = "FILE")]
    pub profile_out: Option<PathBuf>,
    /// Where the measurements run: local (threads) or slurm (each round a job array over
    /// --work-dir, waited for).
    #[arg(long, value_enum, default_value = "local")]
    pub backend: Backend,
    /// Keep every finished measurement here (a re-run skips them); shared with the Slurm tasks.
    #[arg(long, value_name = "DIR")]
    pub work_dir: Option<PathBuf>,
    /// Array tasks per Slurm round (default: one per measurement, at most 64).
    #[arg(long)]
    pub tasks: Option<usize>,
    /// An extra `#SBATCH` line, e.g. `--partition=cpu` (repeatable).
    #[arg(long = "sbatch-arg", value_name = "ARG", allow_hyphen_values = true)]
    pub sbatch_args: Vec<String>,
    /// What an array task runs: the measurements listed in FILE (a round of --work-dir)...
    #[arg(long, value_name = "FILE", requires = "shard")]
    pub jobs: Option<PathBuf>,
    /// ...those whose place in the list is I modulo N.
    #[arg(long, value_name = "I/N", requires = "jobs")]
    pub shard: Option<String>,
}

/// This search's identity in a work directory.
fn head(a: &TuneArgs, t: &Tuning) -> serde_json::Value {
    serde_json::json!({
        "scenario_fnv1a64": format!("{:016x}", fnv1a64(t.sc.source.text.as_bytes())),
        "flags": a.flags.pairs(),
        "seed": a.seed,
    })
}

/// The arguments an array task repeats (the scenario and its flags, the seed).
fn words(a: &TuneArgs) -> Vec<String> {
    let mut w = vec![absolute(&a.scenario).display().to_string()];
    for (flag, v) in a.flags.pairs() {
        w.extend([flag.clone(), v.clone()]);
    }
    w.extend(["--seed".into(), a.seed.to_string()]);
    w
}

/// Runs `jobs` on `threads` threads, skipping those in `dir`, writing each finished one there;
/// `None` for a job a stop request left unrun.
fn local(
    t: &Tuning,
    dir: Option<&TuneDir>,
    threads: usize,
    jobs: &[Job],
    bar: &Bar,
    what: &str,
) -> Vec<Option<Sample>> {
    let done = AtomicUsize::new(0);
    let failed = std::sync::Mutex::new(None);
    let out = fabricsim::workload::seeds::run_jobs(jobs, threads, |j| {
        let s = match dir.and_then(|d| d.get(j)) {
            Some(s) => s,
            None => {
                let s = t.measure(j);
                // A run a stop request cut short is no measurement.
                if fabricsim::stop::requested() {
                    return None;
                }
                if let Some(Err(e)) = dir.map(|d| d.put(j, &s)) {
                    *failed.lock().expect("no panics while holding the lock") = Some(e);
                }
                s
            }
        };
        bar.show(
            done.fetch_add(1, Ordering::Relaxed) + 1,
            jobs.len(),
            "runs",
            what,
        );
        Some(s)
    });
    out.into_iter().map(Option::flatten).collect()
}

pub fn run(a: TuneArgs) -> Outcome {
    outpath::check(&[
        ("--json", a.json.as_deref()),
        ("--csv", a.csv.as_deref()),
        ("--profile-out", a.profile_out.as_deref()),
    ])?;
    let sc = a.flags.load(Some(&a.scenario))?;
    let base = a.scenario.parent().unwrap_or(Path::new("."));
    let t = Tuning::new(sc, base, a.seed)?;
    t.admit()?;
    let threads = a
        .threads
        .unwrap_or_else(fabricsim::workload::seeds::threads);
    let dir = a.work_dir.as_deref().map(|d| TuneDir::new(&absolute(d)));
    let slurm = a.backend == Backend::Slurm;
    crate::slurm::check_flags(slurm, a.tasks, &a.sbatch_args)?;
    if (slurm || a.shard.is_some()) && dir.is_none() {
        return Err(InputError::flag(
            "--work-dir",
            "missing",
            "a Slurm search and its array tasks need a shared work directory",
            "--work-dir DIR, a directory every node sees",
        )
        .into());
    }
    if let Some(d) = &dir {
        d.open(&head(&a, &t))?;
    }
    if let (Some(jobs), Some(shard), Some(d)) = (&a.jobs, &a.shard, &dir) {
        return task(&t, d, jobs, Shard::parse(shard)?, threads);
    }
    let bar = Bar::new();
    // `round` numbers every batch of measurements (the Slurm rounds' files); the progress
    // counts the screen's batches apart from the search's rounds.
    let (mut round, mut searched) = (0, 0);
    let mut failed: Option<Failure> = None;
    let found = t.search(&mut |jobs: &[Job]| {
        round += 1;
        let what = match jobs.first().is_some_and(|j| j.screen) {
            true => "screen (flow engine)".to_string(),
            false => {
                searched += 1;
                format!("round {searched}")
            }
        };
        match (slurm, &dir) {
            (true, Some(d)) => match on_slurm(&a, d, round, jobs, threads) {
                Ok(v) => v,
                Err(e) => {
                    failed = Some(e);
                    vec![None; jobs.len()]
                }
            },
            _ => local(&t, dir.as_ref(), threads, jobs, &bar, &what),
        }
    });
    bar.finish();
    if let Some(e) = failed {
        return Err(e);
    }
    let complete = found.complete;
    let report = TuneReport::new(&t, found);
    if let Some(p) = &a.json {
        outpath::write(p, output::json(report.json())?.as_bytes())?;
    }
    if let Some(p) = &a.csv {
        outpath::write(p, report.table().to_csv().as_bytes())?;
    }
    if let (Some(p), Some(text)) = (&a.profile_out, &report.profile_toml) {
        outpath::write(p, text.as_bytes())?;
    }
    print!("{}", report.text());
    unless_interrupted(|| {
        "the finished rounds are reported, marked \"status\": \"interrupted\"".into()
    })?;
    match complete {
        true => Ok(()),
        false => Err(Failure::Run(format!(
            "the search is incomplete: measurements are missing{}",
            match &dir {
                Some(d) => format!(
                    " from {}; run the same command again to finish",
                    d.root.display()
                ),
                None => String::new(),
            }
        ))),
    }
}

/// One round as a Slurm job array: the measurements not yet in `d` are listed in
/// `jobs/round-NN.json` and run by `tasks` array tasks; then read back (`None`: missing).
fn on_slurm(
    a: &TuneArgs,
    d: &TuneDir,
    round: usize,
    jobs: &[Job],
    threads: usize,
) -> Result<Vec<Option<Sample>>, Failure> {
    let missing: Vec<Job> = jobs
        .iter()
        .filter(|j| d.get(j).is_none())
        .copied()
        .collect();
    if !missing.is_empty() {
        let list = d.jobs_path(round);
        outpath::write(
            &list,
            output::json(serde_json::to_string(&missing))?.as_bytes(),
        )?;
        let bin = std::env::current_exe()
            .map_err(|e| Failure::Run(format!("cannot find this binary's path: {e}")))?;
        let cwd = std::env::current_dir()
            .map_err(|e| Failure::Run(format!("cannot read the working directory: {e}")))?;
        let work = WorkDir::new(&d.root);
        let mut w = words(a);
        w.extend(["--jobs".into(), list.display().to_string()]);
        let jobs_spec = Jobs {
            command: "tune",
            bin,
            cwd,
            sweep: w,
            outputs: Vec::new(),
            tasks: a.tasks.unwrap_or(64).min(missing.len()),
            threads,
            sbatch: &a.sbatch_args,
            dir: &work,
        };
        let script = d.root.join(format!("round-{round:02}.sbatch"));
        eprintln!(
            "round {round}: {} measurements ({} already done); {}",
            jobs.len(),
            jobs.len() - missing.len(),
            jobs_spec.run_array(&script)?
        );
    }
    Ok(jobs.iter().map(|j| d.get(j)).collect())
}

/// An array task: the measurements of `list` in its shard that `d` does not hold yet.
fn task(t: &Tuning, d: &TuneDir, list: &Path, shard: Shard, threads: usize) -> Outcome {
    let text = std::fs::read_to_string(list)
        .map_err(|e| InputError::flag("--jobs", list.display(), e, "a round's jobs file"))?;
    let jobs: Vec<Job> = serde_json::from_str(&text).map_err(|e| {
        InputError::flag(
            "--jobs",
            list.display(),
            e,
            "a round's jobs file of --work-dir",
        )
    })?;
    let mine: Vec<Job> = jobs
        .iter()
        .enumerate()
        .filter(|(i, _)| i % shard.n == shard.i)
        .map(|(_, j)| *j)
        .collect();
    let before = mine.iter().filter(|j| d.get(j).is_some()).count();
    let got = local(t, Some(d), threads, &mine, &Bar::new(), "");
    println!(
        "shard {}/{}: {} measurements, {before} finished before, {} run now",
        shard.i,
        shard.n,
        mine.len(),
        got.iter().flatten().count() - before
    );
    unless_interrupted(|| format!("shard {}/{}: stopped", shard.i, shard.n))
}
