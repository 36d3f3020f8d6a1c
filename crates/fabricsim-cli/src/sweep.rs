//! `fabricsim sweep`: one or two parameters over value lists, each point's training step timed
//! by packet-engine runs, points in parallel; a table on stdout, CSV, JSON and an SVG chart.
//! Without --param it runs the loss sweep: MFU against loss rate 0..1% for go-back-N and
//! selective repeat on roce-400g.

use clap::{Args, ValueEnum};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use crate::outcome::{Failure, Outcome, unless_interrupted};
use crate::outpath;
use crate::output;
use crate::progress::Bar;
use crate::slurm::Jobs;
use crate::sweep_dir::{Shard, WorkDir};
use fabricsim::InputError;
use fabricsim::columns;
use fabricsim::compare::model::default_scenario;
use fabricsim::compare::sweep::{self, Point, PointResult};
use fabricsim::compare::sweep_job::{self, Job, Request};
pub use fabricsim::compare::sweep_job::{RECORD_HEAD, fnv1a64};
use fabricsim::scenario::Scenario;

/// Where the points run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Backend {
    /// This machine's threads.
    Local,
    /// A Slurm job array over a shared --work-dir, then a merge job.
    Slurm,
}

#[derive(Args, Debug)]
pub struct SweepArgs {
    /// Scenario file ([cluster], [train], ...); without one, the built-in comparison's cluster.
    pub scenario: Option<PathBuf>,
    /// NAME=V1,V2,... for loss_rate, transport, gpus, oversubscription, profile (link speed),
    /// ecn_kmin, ecn_kmax (bytes: 50K), dcqcn_rai (rate: 5Mbps), dcqcn_timer (time: 55us), ber
    /// (pre-FEC, every link), mtbf_scale (x every MTBF), optics (dsp, lpo, lro),
    /// checkpoint_interval (time: 1800s), rate_gbps (GPU 0's NIC link trained down: 200) or
    /// lane_ber (a BER per lane, every link: 1e-8/1e-8/4e-3/1e-8); model, tp, pp, ep; rate (a [serve] deployment's
    /// requests/s), tenants (the first N [[jobs]]), placement (packed, spread, random) or
    /// moe_skew (uniform, zipf:S), failed_uplinks (leaves with one up-link down before the
    /// step, routed around; the whole step DAG only); once or twice (the first is the chart's x axis). Default:
    /// the loss sweep. A training point also runs the comparison's stress pattern (incast over
    /// background load); a scenario with [serve] sweeps its deployment (TTFT, TPOT, goodput,
    /// cost per delivered token), one with [[jobs]] its jobs (each job's slowdown).
    #[arg(long = "param", value_name = "NAME=VALUES")]
    pub params: Vec<String>,
    /// Fabric profile the points start from.
    #[arg(long, default_value = sweep_job::DEFAULT_FABRIC)]
    pub fabric: String,
    /// Engine for the DAG runs: packet, flow or auto (flow above 20M fabric packets) (engine).
    #[arg(long)]
    pub engine: Option<String>,
    /// Seed of the packet-engine runs (the same for every point): the first of the seeds.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Seeds each point is measured over, reported as mean and 95% interval ([compare] seeds;
    /// default 5).
    #[arg(long, allow_hyphen_values = true)]
    pub seeds: Option<String>,
    /// Worker threads (default: the machine's available parallelism).
    #[arg(long)]
    pub threads: Option<usize>,
    #[arg(long, value_name = "FILE")]
    pub csv: Option<PathBuf>,
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// The CSV's table as Parquet (cargo feature `columnar`).
    #[arg(long, value_name = "FILE")]
    pub parquet: Option<PathBuf>,
    /// The CSV's table as an Arrow IPC file (cargo feature `columnar`).
    #[arg(long, value_name = "FILE")]
    pub arrow: Option<PathBuf>,
    /// SVG chart of MFU against the first parameter (a numeric one).
    #[arg(long, value_name = "FILE")]
    pub svg: Option<PathBuf>,
    /// Finish an interrupted sweep: the points already done are kept (from the --json file, or
    /// without one from the record kept beside the --csv or --svg file), the others run; the
    /// outputs are then the same bytes as an uninterrupted run's.
    #[arg(long)]
    pub resume: bool,
    /// Where the points run: local (this machine's threads) or slurm (sbatch: a job array of
    /// --tasks tasks over a shared --work-dir, then a merge job that writes --csv/--json/--svg,
    /// the same bytes as a local run). Re-submitting to the same --work-dir runs only the points
    /// not yet finished.
    #[arg(long, value_enum, default_value = "local")]
    pub backend: Backend,
    /// The shared directory of a Slurm sweep: sweep.json, the job scripts, one file per finished
    /// point (points/), the task logs (logs/).
    #[arg(long, value_name = "DIR")]
    pub work_dir: Option<PathBuf>,
    /// Array tasks of a Slurm sweep (default: one per point, at most 64).
    #[arg(long)]
    pub tasks: Option<usize>,
    /// An extra `#SBATCH` line for both job scripts, e.g. `--partition=gpu` or `--time=2:00:00`
    /// (repeatable).
    #[arg(long = "sbatch-arg", value_name = "ARG", allow_hyphen_values = true)]
    pub sbatch_args: Vec<String>,
    /// With --backend slurm: write the job scripts and print how to submit them; submit nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// With --backend slurm: wait until the merge job has written the outputs.
    #[arg(long)]
    pub wait: bool,
    /// Run shard I of N of the points into --work-dir, skipping points already there (what
    /// each array task of a Slurm sweep runs).
    #[arg(long, value_name = "I/N")]
    pub shard: Option<String>,
    /// Write the outputs from the points finished in DIR (a Slurm sweep's --work-dir) instead
    /// of running them; missing points are listed and the outputs marked incomplete.
    #[arg(long, value_name = "DIR")]
    pub merge: Option<PathBuf>,
}

impl SweepArgs {
    /// The job's request: these flags, field by field.
    fn request(&self) -> Request {
        Request {
            params: self.params.clone(),
            fabric: self.fabric.clone(),
            seed: self.seed,
            threads: self.threads,
        }
    }

    /// Where the record of finished points is kept while the sweep runs: the --json file, else
    /// a hidden file beside the --csv (or --svg, --parquet, --arrow) file, removed once every
    /// point is done.
    fn record_path(&self) -> Option<(PathBuf, bool)> {
        if let Some(j) = &self.json {
            return Some((j.clone(), false));
        }
        let beside = [&self.csv, &self.svg, &self.parquet, &self.arrow]
            .into_iter()
            .find_map(|p| p.as_ref())?;
        let name = beside.file_name()?.to_string_lossy();
        let dir = beside.parent().unwrap_or(Path::new(""));
        Some((dir.join(format!(".{name}.sweep-record.json")), true))
    }
}

/// The points of `points` already in the JSON record at `path` (none when it does not exist
/// yet); exit 2 when the record is of another sweep or unreadable.
fn finished(
    path: &Path,
    head: &serde_json::Value,
    points: &[Point],
) -> Result<Vec<PointResult>, InputError> {
    let bad = |why: String| {
        InputError::flag(
            "--resume",
            path.display(),
            why,
            "the record of an interrupted run of the same sweep (its --json file, or the one kept beside its --csv or --svg file; same scenario file, --param, --fabric, --engine, --seed and --seeds)",
        )
    };
    let text = match std::fs::read_to_string(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        r => r.map_err(|e| bad(format!("cannot read it: {e}")))?,
    };
    let mut v: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| bad(format!("not a sweep record: {e}")))?;
    for key in RECORD_HEAD {
        if v[key] != head[key] {
            return Err(bad(format!(
                "its {key} is {}, this sweep's is {}",
                v[key], head[key]
            )));
        }
    }
    let done: Vec<PointResult> = serde_json::from_value(v["points"].take())
        .map_err(|e| bad(format!("its points do not read back: {e}")))?;
    match done
        .iter()
        .find(|r| points.get(r.point.id) != Some(&r.point))
    {
        Some(r) => Err(bad(format!(
            "point {} is not one of this sweep's",
            r.point.id
        ))),
        None => Ok(done),
    }
}

/// Where the points of this invocation come from.
enum Mode {
    /// Run here (and `--resume`).
    Local,
    /// Run one shard into the work directory (an array task).
    Shard(Shard, WorkDir),
    /// Submit the job array and the merge job.
    Submit(WorkDir),
    /// Read the points from the work directory.
    Merge(WorkDir),
}

impl Mode {
    fn of(a: &SweepArgs) -> Result<Mode, InputError> {
        let only = |flag: &str, given: bool, with: &str| match given {
            true => Err(InputError::flag(
                flag,
                "given",
                format!("only applies {with}"),
                with.to_string(),
            )),
            false => Ok(()),
        };
        let slurm = a.backend == Backend::Slurm;
        only("--dry-run", a.dry_run && !slurm, "with --backend slurm")?;
        only("--wait", a.wait && !slurm, "with --backend slurm")?;
        crate::slurm::check_flags(slurm, a.tasks, &a.sbatch_args)?;
        only(
            "--resume",
            a.resume && (slurm || a.shard.is_some() || a.merge.is_some()),
            "to a local sweep (a Slurm sweep resumes by submitting again to its --work-dir)",
        )?;
        only(
            "--merge",
            a.merge.is_some() && (slurm || a.shard.is_some()),
            "alone (not with --backend slurm or --shard)",
        )?;
        only(
            "--shard",
            a.shard.is_some() && slurm,
            "without --backend slurm (the array tasks run it)",
        )?;
        let work_dir = || {
            a.work_dir
                .as_deref()
                .map(|d| WorkDir::new(&absolute(d)))
                .ok_or_else(|| {
                    InputError::flag(
                        "--work-dir",
                        "missing",
                        "a Slurm sweep and its shards need a shared work directory",
                        "--work-dir DIR, a directory every node sees",
                    )
                })
        };
        Ok(match (&a.shard, &a.merge) {
            (Some(s), _) => Mode::Shard(Shard::parse(s)?, work_dir()?),
            (None, Some(d)) => Mode::Merge(WorkDir::new(&absolute(d))),
            (None, None) if slurm => Mode::Submit(work_dir()?),
            (None, None) => Mode::Local,
        })
    }
}

/// `p` from the working directory (a job script names every path absolutely).
pub fn absolute(p: &Path) -> PathBuf {
    std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf())
}

/// The arguments that say which sweep this is, as an array task repeats them.
fn sweep_words(a: &SweepArgs) -> Vec<String> {
    let mut w: Vec<String> = Vec::new();
    if let Some(s) = &a.scenario {
        w.push(absolute(s).display().to_string());
    }
    for p in &a.params {
        w.extend(["--param".to_string(), p.clone()]);
    }
    w.extend([
        "--fabric".to_string(),
        a.fabric.clone(),
        "--seed".into(),
        a.seed.to_string(),
    ]);
    for (flag, v) in [("--engine", &a.engine), ("--seeds", &a.seeds)] {
        if let Some(v) = v {
            w.extend([flag.to_string(), v.clone()]);
        }
    }
    w
}

/// The output flags, with absolute paths, as the merge job writes them.
fn output_words(a: &SweepArgs) -> Vec<String> {
    [
        ("--csv", &a.csv),
        ("--json", &a.json),
        ("--svg", &a.svg),
        ("--parquet", &a.parquet),
        ("--arrow", &a.arrow),
    ]
    .into_iter()
    .filter_map(|(f, p)| {
        p.as_ref()
            .map(|p| [f.to_string(), absolute(p).display().to_string()])
    })
    .flatten()
    .collect()
}

/// Runs the points of `shard` not yet in `dir`, writing each as it finishes.
fn run_shard(
    shard: Shard,
    dir: &WorkDir,
    head: &serde_json::Value,
    run: impl Fn(&[Point], &(dyn Fn(&[Option<PointResult>]) + Sync)) -> Vec<PointResult>,
    points: &[Point],
) -> Outcome {
    dir.check("--work-dir", head)?;
    let mine: Vec<Point> = points.iter().filter(|p| shard.holds(p)).cloned().collect();
    let done = dir.finished("--work-dir", &mine)?;
    let todo: Vec<Point> = mine
        .iter()
        .filter(|p| !done.iter().any(|r| r.point.id == p.id))
        .cloned()
        .collect();
    let written = Mutex::new(vec![false; todo.len()]);
    let failed: Mutex<Option<Failure>> = Mutex::new(None);
    let progress = |slots: &[Option<PointResult>]| {
        let mut w = written.lock().expect("no panics while holding the lock");
        for (i, slot) in slots.iter().enumerate() {
            if let (Some(r), false) = (slot, w[i]) {
                w[i] = true;
                if let Err(e) = dir.put(r) {
                    *failed.lock().expect("no panics while holding the lock") = Some(e);
                }
            }
        }
    };
    let ran = run(&todo, &progress);
    if let Some(e) = failed.into_inner().expect("threads joined") {
        return Err(e);
    }
    println!(
        "shard {}/{}: {} points, {} finished before, {} run now",
        shard.i,
        shard.n,
        mine.len(),
        done.len(),
        ran.len()
    );
    unless_interrupted(|| {
        format!(
            "shard {}/{}: {} of {} points left",
            shard.i,
            shard.n,
            todo.len() - ran.len(),
            mine.len()
        )
    })
}

pub fn run(args: SweepArgs) -> Outcome {
    let mode = Mode::of(&args)?;
    outpath::check(&[
        ("--csv", args.csv.as_deref()),
        ("--json", args.json.as_deref()),
        ("--svg", args.svg.as_deref()),
        ("--parquet", args.parquet.as_deref()),
        ("--arrow", args.arrow.as_deref()),
    ])?;
    let tables = [
        ("--parquet", &args.parquet, columns::Format::Parquet),
        ("--arrow", &args.arrow, columns::Format::ArrowFile),
    ];
    for (flag, path, f) in &tables {
        if path.is_some() {
            f.check(flag)?;
        }
    }
    let mut scenario = match &args.scenario {
        Some(p) => Scenario::load(&p.display().to_string())?,
        None => default_scenario(),
    };
    let flags: Vec<(String, String)> = [("--engine", &args.engine), ("--seeds", &args.seeds)]
        .into_iter()
        .filter_map(|(f, v)| v.as_ref().map(|v| (f.to_string(), v.clone())))
        .collect();
    sweep_job::apply_flags(&mut scenario, &flags)?;
    let job = Job::new(&scenario, &args.request())?;
    let (axes, points) = (&job.axes, &job.points);
    let rec =
        |results: &[&PointResult], status: Option<&str>| job.record(&scenario, results, status);
    let head = rec(&[], None);
    let run_points = |todo: &[Point], progress: &(dyn Fn(&[Option<PointResult>]) + Sync)| {
        job.run(&scenario, todo, progress)
    };
    let merged = match &mode {
        Mode::Shard(shard, dir) => return run_shard(*shard, dir, &head, run_points, points),
        Mode::Submit(dir) => {
            dir.create("--work-dir", &head)?;
            let bin = std::env::current_exe()
                .map_err(|e| Failure::Run(format!("cannot find this binary's path: {e}")))?;
            let cwd = std::env::current_dir()
                .map_err(|e| Failure::Run(format!("cannot read the working directory: {e}")))?;
            let jobs = Jobs {
                command: "sweep",
                bin,
                cwd,
                sweep: sweep_words(&args),
                outputs: output_words(&args),
                tasks: args.tasks.unwrap_or(64).min(points.len()),
                threads: args.threads.unwrap_or(1),
                sbatch: &args.sbatch_args,
                dir,
            };
            print!("{}", jobs.submit(args.dry_run, args.wait)?);
            return Ok(());
        }
        Mode::Merge(dir) => {
            dir.check("--merge", &head)?;
            Some(dir.finished("--merge", points)?)
        }
        Mode::Local => None,
    };
    let record_at = args.record_path();
    let mut results = match (args.resume, &record_at, merged) {
        (_, _, Some(found)) => found,
        (false, _, None) => Vec::new(),
        (true, Some((p, _)), None) => finished(p, &head, points)?,
        (true, None, None) => {
            return Err(InputError::flag(
                "--resume",
                "true",
                "needs the record of the finished points, kept with an output file",
                "--json, --csv or --svg FILE, the same files as the interrupted run's",
            )
            .into());
        }
    };
    let merging = matches!(mode, Mode::Merge(_));
    // A merge runs nothing: what the tasks did not finish is reported missing.
    let todo: Vec<Point> = points
        .iter()
        .filter(|p| !merging && !results.iter().any(|r| r.point.id == p.id))
        .cloned()
        .collect();
    let bar = Bar::new();
    // After each point: the bar, and the JSON record so far (a crash or a kill loses at most
    // the points running; `--resume` finishes the rest).
    let progress = |slots: &[Option<PointResult>]| {
        let mut now: Vec<&PointResult> = results.iter().chain(slots.iter().flatten()).collect();
        bar.show(now.len(), points.len(), "points", "");
        if let Some((p, _)) = &record_at {
            now.sort_by_key(|r| r.point.id);
            let v = rec(&now, Some("running"));
            if let Ok(text) = output::json(serde_json::to_string_pretty(&v)) {
                let _ = outpath::write(p, text.as_bytes());
            }
        }
    };
    let more = run_points(&todo, &progress);
    bar.finish();
    results.extend(more);
    results.sort_by_key(|r| r.point.id);
    let interrupted = results.len() < points.len();
    let (status, mark) = match &mode {
        Mode::Merge(dir) => {
            let missing: Vec<String> = points
                .iter()
                .filter(|p| !results.iter().any(|r| r.point.id == p.id))
                .map(|p| p.id.to_string())
                .collect();
            (
                "incomplete",
                format!(
                    "# incomplete: {} of {} points finished in {}; missing points {}; submit the sweep again to the same --work-dir (finished points are skipped), then merge\n",
                    results.len(),
                    points.len(),
                    dir.root.display(),
                    missing.join(", ")
                ),
            )
        }
        _ => (
            "interrupted",
            format!(
                "# interrupted: {} of {} points finished; run again with --resume (and the same output files) to finish\n",
                results.len(),
                points.len()
            ),
        ),
    };

    let mut table = String::new();
    for a in axes {
        table += &format!("{:>18}", a.param.name());
    }
    if let Some(rows) = workload_rows(&results) {
        table += &rows;
    } else {
        table += &format!(
            "{:>20}{:>18}{:>12}{:>10}{:>20}{:>8}{:>22}\n",
            "step_time_s",
            "MFU",
            "retransmits",
            "timeouts",
            "stress_bg_p99_us",
            "ETTR",
            "USD/M tokens w/ ETTR"
        );
        for r in &results {
            for (_, v) in &r.point.values {
                table += &format!("{v:>18}");
            }
            match (&r.error, r.step_time_s, r.mfu, &r.engine) {
                (None, Some(t), Some(m), Some(e)) => {
                    let p99 = r
                        .stress_over_seeds
                        .as_ref()
                        .and_then(|s| s.get("bg_fct_p99_us"))
                        .map(|p| p.text(1))
                        .unwrap_or_else(|| "-".into());
                    let ettr = r.ettr.map_or("-".into(), |x| format!("{x:.3}"));
                    let usd = r
                        .usd_per_million_good_tokens
                        .map_or("-".into(), |u| u.text(3));
                    table += &format!(
                        "{:>20}{:>18}{:>12}{:>10}{p99:>20}{ettr:>8}{usd:>22}\n",
                        t.text(3),
                        fabricsim::report::compare::percent(&m, 2),
                        e.retransmitted_packets,
                        e.timeouts
                    )
                }
                (e, ..) => table += &format!("  error: {}\n", e.as_deref().unwrap_or("no result")),
            }
        }
    }
    if interrupted {
        table += &mark;
    }
    print!("{table}");
    if let Some(p) = &args.csv {
        let mut csv = sweep::csv(axes, &results);
        if interrupted {
            csv += &mark;
        }
        outpath::write(p, csv.as_bytes())?;
    }
    for (flag, path, f) in &tables {
        if let Some(p) = path {
            outpath::write(p, &sweep::table(axes, &results).write(*f, flag)?)?;
        }
    }
    match &record_at {
        // A record beside the other outputs is kept only while points are left.
        Some((p, true)) if !interrupted => {
            let _ = std::fs::remove_file(p);
        }
        Some((p, _)) => {
            let all: Vec<&PointResult> = results.iter().collect();
            let v = rec(&all, interrupted.then_some(status));
            outpath::write(
                p,
                output::json(serde_json::to_string_pretty(&v))?.as_bytes(),
            )?;
        }
        None => {}
    }
    if let Some(p) = &args.svg {
        let svg = sweep::chart(axes, &results).ok_or_else(|| {
            Failure::Input(InputError::flag(
                "--svg",
                p.display(),
                "needs a numeric first parameter",
                "loss_rate, gpus, ecn_kmin, ecn_kmax, dcqcn_rai, dcqcn_timer, ber, mtbf_scale, checkpoint_interval, rate_gbps, rate, tenants or moe_skew as the first --param",
            ))
        })?;
        outpath::write(p, svg.as_bytes())?;
    }
    if merging && interrupted {
        return Err(Failure::Run(
            mark.trim_start_matches("# ").trim_end().into(),
        ));
    }
    unless_interrupted(|| mark.trim_start_matches("# interrupted: ").trim_end().into())
}

/// The table's header and rows past the axes for a serving sweep (TTFT and TPOT p99, goodput,
/// cost per delivered token) or a multi-tenant one (the most slowed job's slowdown and each
/// job's); `None` for a training sweep.
fn workload_rows(results: &[PointResult]) -> Option<String> {
    let serving = results.iter().any(|r| r.serving.is_some());
    let jobs = results.iter().any(|r| r.tenants.is_some());
    if !serving && !jobs {
        return None;
    }
    let mut t = match serving {
        true => format!(
            "{:>20}{:>20}{:>20}{:>24}\n",
            "TTFT_p99_s", "TPOT_p99_s", "goodput", "USD/M good tokens"
        ),
        false => format!("{:>20}  {}\n", "slowdown_max", "each job's slowdown"),
    };
    for r in results {
        for (_, v) in &r.point.values {
            t += &format!("{v:>18}");
        }
        match (&r.error, &r.serving, &r.tenants) {
            (None, Some(s), _) => {
                let usd = s
                    .usd_per_million_good_tokens
                    .map_or("-".into(), |u| u.text(3));
                t += &format!(
                    "{:>20}{:>20}{:>20}{usd:>24}\n",
                    s.ttft_p99_s.text(4),
                    s.tpot_p99_s.text(5),
                    s.goodput.text(3)
                );
            }
            (None, _, Some(jobs)) => {
                let max = jobs
                    .iter()
                    .map(|j| j.slowdown)
                    .max_by(|a, b| a.mean.total_cmp(&b.mean));
                let each: Vec<String> = jobs
                    .iter()
                    .map(|j| format!("{} {}", j.job, j.slowdown.text(3)))
                    .collect();
                let max = max.map_or("-".into(), |m| m.text(3));
                t += &format!("{max:>20}  {}\n", each.join(", "));
            }
            (e, ..) => t += &format!("  error: {}\n", e.as_deref().unwrap_or("no result")),
        }
    }
    Some(t)
}
