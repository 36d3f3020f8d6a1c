//! `fabricsim sweep`: one or two parameters over value lists, each point's training step timed
//! by packet-engine runs, points in parallel; a table on stdout, CSV, JSON and an SVG chart.
//! Without --param it runs the loss sweep: MFU against loss rate 0..1% for go-back-N and
//! selective repeat on roce-400g.

use clap::Args;
use std::io::IsTerminal;
use std::path::PathBuf;

use crate::compare::write_file;
use crate::outcome::{Failure, Outcome};
use fabricsim::InputError;
use fabricsim::compare::model::default_scenario;
use fabricsim::compare::sweep::{self, SweepAxis};
use fabricsim::compare::variant::{Tune, Variant};
use fabricsim::engine_choice::EngineChoice;
use fabricsim::scenario::Scenario;
use fabricsim::sim::Transport;

/// The loss sweep's axes.
const LOSS_SWEEP: [&str; 2] = [
    "loss_rate=0,0.0001,0.0003,0.001,0.003,0.01",
    "transport=go-back-n,selective-repeat",
];

#[derive(Args, Debug)]
pub struct SweepArgs {
    /// Scenario file ([cluster], [train], ...); without one, the built-in comparison's cluster.
    pub scenario: Option<PathBuf>,
    /// NAME=V1,V2,... for loss_rate, transport, gpus, oversubscription, profile (link speed),
    /// ecn_kmin, ecn_kmax (bytes: 50K), dcqcn_rai (rate: 5Mbps) or dcqcn_timer (time: 55us);
    /// once or twice (the first is the chart's x axis). Default: the loss sweep. Every point
    /// also runs the comparison's stress pattern (incast over background load).
    #[arg(long = "param", value_name = "NAME=VALUES")]
    pub params: Vec<String>,
    /// Fabric profile the points start from.
    #[arg(long, default_value = "roce-400g")]
    pub fabric: String,
    /// Engine for the DAG runs: packet, flow or auto (flow above 20M fabric packets) (engine).
    #[arg(long)]
    pub engine: Option<String>,
    /// Seed of the packet-engine runs (the same for every point).
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Worker threads (default: the machine's available parallelism).
    #[arg(long)]
    pub threads: Option<usize>,
    #[arg(long, value_name = "FILE")]
    pub csv: Option<PathBuf>,
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// SVG chart of MFU against the first parameter (a numeric one).
    #[arg(long, value_name = "FILE")]
    pub svg: Option<PathBuf>,
}

pub fn run(args: SweepArgs) -> Outcome {
    let mut scenario = match &args.scenario {
        Some(p) => Scenario::load(&p.display().to_string())?,
        None => default_scenario(),
    };
    if let Some(e) = &args.engine {
        scenario.apply_flags(&[("--engine".to_string(), e.clone())])?;
    }
    let engine = EngineChoice::of(&scenario)?;
    let texts: Vec<String> = if args.params.is_empty() {
        LOSS_SWEEP.iter().map(|s| s.to_string()).collect()
    } else {
        args.params.clone()
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
    if fabricsim::profile::Profile::builtin(&args.fabric).is_err() {
        return Err(InputError::flag(
            "--fabric",
            &args.fabric,
            "is not a fabric profile",
            fabricsim::profile::Profile::ids().join(", "),
        )
        .into());
    }
    let fabric = Variant {
        name: args.fabric.clone(),
        profile: args.fabric.clone(),
        recovery: Transport::GoBackN,
        loss_rate: 0.0,
        tuned: true,
        tune: Tune::default(),
        engine,
    };
    let points = sweep::expand(&axes);
    sweep::check(&scenario, &fabric, &points, "--param")?;
    let threads = args
        .threads
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    let tty = std::io::stderr().is_terminal();
    let progress = move |done: usize, total: usize| {
        if tty {
            let w = 30 * done / total.max(1);
            eprint!(
                "\r[{}{}] {done}/{total} points",
                "#".repeat(w),
                ".".repeat(30 - w)
            );
            if done == total {
                eprintln!();
            }
        }
    };
    let results = sweep::run(
        &scenario, &fabric, args.seed, &points, threads, true, &progress,
    );

    let mut table = String::new();
    for a in &axes {
        table += &format!("{:>18}", a.param.name());
    }
    table += &format!(
        "{:>14}{:>10}{:>12}{:>10}{:>20}\n",
        "step_time_s", "MFU", "retransmits", "timeouts", "stress_bg_p99_us"
    );
    for r in &results {
        for (_, v) in &r.point.values {
            table += &format!("{v:>18}");
        }
        match (&r.error, r.step_time_s, r.mfu, &r.engine) {
            (None, Some(t), Some(m), Some(e)) => {
                let p99 = r
                    .stress
                    .as_ref()
                    .and_then(|s| s.background.fct_p99_ps)
                    .map(|p| format!("{:.1}", p as f64 / 1e6))
                    .unwrap_or_else(|| "-".into());
                table += &format!(
                    "{t:>14.3}{:>9.2}%{:>12}{:>10}{p99:>20}\n",
                    100.0 * m,
                    e.retransmitted_packets,
                    e.timeouts
                )
            }
            (e, ..) => table += &format!("  error: {}\n", e.as_deref().unwrap_or("no result")),
        }
    }
    print!("{table}");
    if let Some(p) = &args.csv {
        write_file(p, sweep::csv(&axes, &results).as_bytes())?;
    }
    if let Some(p) = &args.json {
        let v = serde_json::json!({
            "fabric": args.fabric,
            "engine": fabricsim::compare::engine::choice_name(engine),
            "seed": args.seed,
            "axes": axes,
            "points": results,
        });
        let text = serde_json::to_string_pretty(&v).map_err(|e| Failure::Run(e.to_string()))?;
        write_file(p, (text + "\n").as_bytes())?;
    }
    if let Some(p) = &args.svg {
        let svg = sweep::chart(&axes, &results).ok_or_else(|| {
            Failure::Input(InputError::flag(
                "--svg",
                p.display(),
                "needs a numeric first parameter",
                "loss_rate, gpus, ecn_kmin, ecn_kmax, dcqcn_rai or dcqcn_timer as the first --param",
            ))
        })?;
        write_file(p, svg.as_bytes())?;
    }
    Ok(())
}
