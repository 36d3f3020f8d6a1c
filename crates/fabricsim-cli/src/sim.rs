//! `fabricsim sim SCENARIO`: run the packet-level engine on a scenario's network, [sim],
//! [traffic] and [faults], write the results as JSON, or the per-message table as CSV, Arrow or
//! Parquet (`fabricsim::columns`), and optionally an ns-3 style fct.txt and the port series.

use std::io::Write;
use std::path::Path;

use clap::{Args, ValueEnum};
use fabricsim::InputError;
use fabricsim::columns;
use fabricsim::engine_choice::{AUTO_FLOW_ABOVE_PACKETS, EngineChoice, EngineKind};
use fabricsim::io::fct::write_fct;
use fabricsim::sim::{Progress, Status};
use fabricsim::units::parse_time;
use fabricsim::workload::sim_job::SimJob;

use crate::outcome::{Failure, Outcome};
use crate::outpath;
use crate::scenario_flags::{self, ScenarioFlags};

/// What `--out` holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// The results: counters, summary, each message, the series.
    Json,
    /// The per-message table (`fabricsim::columns::messages`).
    Csv,
    /// The per-message table as Parquet (cargo feature `columnar`).
    Parquet,
    /// The per-message table as an Arrow IPC file (cargo feature `columnar`).
    Arrow,
}

impl Format {
    /// The table format, `None` for JSON.
    fn table(self) -> Option<columns::Format> {
        match self {
            Format::Json => None,
            Format::Csv => Some(columns::Format::Csv),
            Format::Parquet => Some(columns::Format::Parquet),
            Format::Arrow => Some(columns::Format::ArrowFile),
        }
    }
}

#[derive(Args)]
pub struct SimArgs {
    /// Scenario TOML with [traffic], optionally [sim] and [faults], and the network: [cluster],
    /// [fabric], [topology] (or an ns-3 file in sim.topology_file).
    pub scenario: String,
    #[command(flatten)]
    pub flags: ScenarioFlags<scenario_flags::Sim>,
    /// Random seed (overrides sim.seed).
    #[arg(long)]
    pub seed: Option<u64>,
    /// Write the results here instead of stdout.
    #[arg(long)]
    pub out: Option<String>,
    /// What --out holds: json (the results), or the per-message table (id, qp, class, src,
    /// dst, bytes, start_ps, recv_ps, finish_ps, fct_ps, ideal_fct_ps) as csv, parquet or
    /// arrow (an Arrow IPC file); parquet and arrow need the cargo feature `columnar`.
    #[arg(long, value_enum, default_value = "json")]
    pub format: Format,
    /// Also write the per-port time series ([sim] sample_interval) as a table (port, node,
    /// time_ps, queue_bytes, tx_bytes) in --format's table format (csv with json).
    #[arg(long)]
    pub series: Option<String>,
    /// Stop at this simulated time (e.g. 10ms); results are then partial, not a failure.
    #[arg(long)]
    pub until: Option<String>,
    /// Also write completion times in the ns-3 HPCC fct.txt format.
    #[arg(long)]
    pub fct: Option<String>,
    /// Also write a Chrome trace-event JSON (Perfetto opens it): message spans per sender and
    /// QP, queue counters of the ports sampled every [sim] sample_interval.
    #[arg(long)]
    pub trace: Option<String>,
    /// The most events --trace writes (about 110 bytes each): past it the earliest are kept
    /// and the trace and stderr say where it was cut.
    #[arg(long, default_value_t = 1_000_000, requires = "trace",
          value_parser = clap::value_parser!(u64).range(1..))]
    pub trace_max_events: u64,
    /// Also write the wall-clock figures (wall_s, events_per_s, packets_per_s) in the JSON; off
    /// by default so that the same scenario and seed give the same bytes (stderr has them).
    #[arg(long)]
    pub timing: bool,
}

pub fn run(a: SimArgs) -> Outcome {
    outpath::check(&[
        ("--out", a.out.as_deref().map(Path::new)),
        ("--fct", a.fct.as_deref().map(Path::new)),
        ("--trace", a.trace.as_deref().map(Path::new)),
        ("--series", a.series.as_deref().map(Path::new)),
    ])?;
    let table = a.format.table();
    if let Some(f) = table {
        f.check("--format")?;
    }
    let sc = a.flags.load(Some(Path::new(&a.scenario)))?;
    let base = Path::new(&a.scenario).parent().unwrap_or(Path::new("."));
    let until = a
        .until
        .as_deref()
        .map(|s| {
            parse_time(s).map_err(|p| InputError::flag("--until", s, p, "a duration such as 10ms"))
        })
        .transpose()?;
    let job = SimJob::new(&sc, base, a.seed, until)?;
    if let Some(path) = &a.series {
        // Only the packet engine samples the ports (the flow engine's results have no series).
        let missing = if job.setup.params.sample_interval.is_none() {
            Some((
                "the scenario samples no time series",
                "a scenario with [sim] sample_interval, such as \"10us\"",
            ))
        } else if job.kind == EngineKind::Flow {
            Some((
                "the flow engine samples no port series",
                "the packet engine (--engine packet)",
            ))
        } else {
            None
        };
        if let Some((problem, allowed)) = missing {
            return Err(InputError::flag("--series", path, problem, allowed).into());
        }
    }
    if job.choice == EngineChoice::Auto {
        eprintln!(
            "[sim] engine auto: {} ({} fabric packets, flow above {AUTO_FLOW_ABOVE_PACKETS})",
            job.kind.name(),
            job.packets
        );
    }
    let tty = crate::progress::wanted();
    let mut progress = |p: &Progress| {
        if tty {
            eprint!(
                "\r[sim] t = {:.3} us, {} events, {}/{} messages done   ",
                p.now.as_us_f64(),
                p.events,
                p.completed,
                p.total
            );
        }
        true
    };
    let r = job.run(&sc, Some(&mut progress))?;
    if tty {
        eprintln!();
    }
    let out = match table {
        None => r.to_json(a.timing).into_bytes(),
        Some(f) => columns::messages(&r).write(f, "--format")?,
    };
    match &a.out {
        Some(path) => outpath::write(Path::new(path), &out)?,
        None => std::io::stdout()
            .write_all(&out)
            .map_err(|e| Failure::Run(format!("cannot write stdout: {e}")))?,
    }
    if let Some(path) = &a.series {
        let series = r.series.as_ref().ok_or_else(|| {
            Failure::Run("the packet engine's results have no port series".into())
        })?;
        let f = table.unwrap_or(columns::Format::Csv);
        outpath::write(
            Path::new(path),
            &columns::series(series).write(f, "--format")?,
        )?;
    }
    if let Some(path) = &a.fct {
        outpath::write(
            Path::new(path),
            write_fct(&r, job.setup.params.udp_dport).as_bytes(),
        )?;
    }
    if let Some(path) = &a.trace {
        let t = fabricsim::report::trace::chrome(&r, a.trace_max_events as usize);
        outpath::write(Path::new(path), t.text.as_bytes())?;
        if let Some(cut) = t.cut {
            eprintln!("[sim] note: {path}: {}", cut.note());
        }
    }
    for w in &r.sim.warnings {
        eprintln!("[sim] warning: {w}");
    }
    let s = &r.summary;
    eprintln!(
        "[sim] {} engine, {:?}: {}/{} messages, {} events in {:.3} s ({:.1} M events/s), p99 FCT {}",
        r.sim.engine,
        r.sim.status,
        s.messages_completed,
        s.messages_total,
        r.sim.events,
        r.sim.wall_s,
        r.sim.events_per_s / 1e6,
        s.fct_p99_ps
            .map(|p| format!("{:.3} us", p as f64 / 1e6))
            .unwrap_or_else(|| "-".into())
    );
    let us = |p: Option<u64>| p.map_or_else(|| "-".into(), |p| format!("{:.3} us", p as f64 / 1e6));
    for c in &r.classes {
        eprintln!(
            "[sim] class {}: {}/{} messages, {} B, FCT p50 {} p99 {}{}",
            c.class,
            c.messages_completed,
            c.messages,
            c.bytes_completed,
            us(c.fct_p50_ps),
            us(c.fct_p99_ps),
            c.pause_frames
                .map(|n| format!(", {n} PAUSE frames"))
                .unwrap_or_default()
        );
    }
    r.check_conservation()
        .map_err(|e| Failure::Run(e.to_string()))?;
    match r.sim.status {
        Status::Complete | Status::StoppedAtUntil => Ok(()),
        Status::Interrupted => Err(Failure::Interrupted(
            "partial results written, marked \"status\": \"interrupted\"".into(),
        )),
        Status::Unfinished => Err(Failure::Run(format!(
            "{} of {} messages did not complete ({} failed after exhausting retries); results written",
            s.messages_total - s.messages_completed,
            s.messages_total,
            s.messages_failed
        ))),
        Status::Deadlock => {
            let cycle = r
                .flow_control
                .as_ref()
                .and_then(|f| f.deadlock.as_ref())
                .map(|d| {
                    d.cycle
                        .iter()
                        .map(|h| format!("node {} -> node {} (tc {})", h.node, h.peer_node, h.tc))
                        .collect::<Vec<_>>()
                        .join(", ")
                })
                .unwrap_or_default();
            Err(Failure::Run(format!(
                "deadlock: a cycle of paused queues: {cycle}; results written"
            )))
        }
    }
}
