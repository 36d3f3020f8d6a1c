//! `fabricsim compare`: one cluster and training step on each fabric side by side, the cost per
//! delivered throughput, a scored recommendation, and an HTML report.

use clap::{Args, ValueEnum};
use std::path::PathBuf;

use crate::outcome::{Failure, Outcome};
use fabricsim::compare::model::default_scenario;
use fabricsim::compare::recommend::recommend;
use fabricsim::report::compare as report;
use fabricsim::scenario::Scenario;

#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum Format {
    Text,
    Json,
}

#[derive(Args, Debug)]
pub struct CompareArgs {
    /// Scenario file with [cluster], [train] and [compare] sections; without one, the built-in
    /// comparison (examples/compare-default.toml: 256 H100, Llama 3 70B step, ib-ndr vs
    /// roce-400g tuned vs roce-400g untuned).
    pub scenario: Option<PathBuf>,
    /// GPUs in the cluster ([cluster] gpus).
    #[arg(long, allow_hyphen_values = true)]
    pub gpus: Option<String>,
    /// A catalog file merged over the built-in catalog (same ids replace, new ids add).
    #[arg(long)]
    pub catalog: Option<String>,
    /// Years for the TCO ([cost] years).
    #[arg(long, allow_hyphen_values = true)]
    pub years: Option<String>,
    /// Engine for the DAG runs: packet, flow or auto (flow above 20M fabric packets) (engine).
    #[arg(long)]
    pub engine: Option<String>,
    /// Also write a self-contained HTML report (inline CSS and SVG charts) to FILE.
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    pub format: Format,
    /// Write the report to FILE instead of standard output.
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
}

pub fn write_file(path: &PathBuf, bytes: &[u8]) -> Result<(), Failure> {
    std::fs::write(path, bytes)
        .map_err(|e| Failure::Run(format!("cannot write {}: {e}", path.display())))
}

pub fn run(args: CompareArgs) -> Outcome {
    let mut scenario = match &args.scenario {
        Some(p) => Scenario::load(&p.display().to_string())?,
        None => default_scenario(),
    };
    let flags: Vec<(String, String)> = [
        ("--gpus", &args.gpus),
        ("--catalog", &args.catalog),
        ("--years", &args.years),
        ("--engine", &args.engine),
    ]
    .into_iter()
    .filter_map(|(f, v)| v.as_ref().map(|v| (f.to_string(), v.clone())))
    .collect();
    scenario.apply_flags(&flags)?;
    let c = fabricsim::compare::run(&scenario)?;
    let r = recommend(&c);
    if let Some(path) = &args.html {
        write_file(
            path,
            fabricsim::report::html::compare::report(&c, &r).as_bytes(),
        )?;
    }
    let out = match args.format {
        Format::Text => report::text(&c, &r),
        Format::Json => {
            serde_json::to_string_pretty(&report::json(&c, &r))
                .map_err(|e| Failure::Run(e.to_string()))?
                + "\n"
        }
    };
    match &args.out {
        Some(path) => write_file(path, out.as_bytes())?,
        None => print!("{out}"),
    }
    Ok(())
}
