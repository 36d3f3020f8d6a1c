//! `fabricsim compare`: one cluster and training step on each fabric side by side, the cost per
//! delivered throughput, a scored recommendation, and an HTML report.

use clap::{Args, ValueEnum};
use std::path::PathBuf;

use crate::outcome::{Outcome, unless_interrupted};
use crate::outpath;
use crate::output;
use crate::progress::Bar;
use crate::scenario_flags::{self, ScenarioFlags};
use fabricsim::compare::model::default_scenario;
use fabricsim::compare::progress::Stage;
use fabricsim::compare::recommend::recommend;
use fabricsim::report::compare as report;
use fabricsim::scenario::Scenario;

#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum Format {
    Text,
    Json,
}

#[derive(Args)]
pub struct CompareArgs {
    /// Scenario file with [cluster], [train] and [compare] sections; without one, the built-in
    /// comparison (examples/compare-default.toml: 256 H100, Llama 3 70B step, ib-ndr vs
    /// roce-400g tuned vs roce-400g untuned).
    pub scenario: Option<PathBuf>,
    /// The scenario flags the other commands take; `--fabric` is the list of fabrics compared.
    #[command(flatten)]
    pub flags: ScenarioFlags<scenario_flags::Compare>,
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

pub fn run(args: CompareArgs) -> Outcome {
    outpath::check(&[
        ("--out", args.out.as_deref()),
        ("--html", args.html.as_deref()),
    ])?;
    let mut scenario = match &args.scenario {
        Some(p) => Scenario::load(&p.display().to_string())?,
        None => default_scenario(),
    };
    args.flags.apply_to(&mut scenario)?;
    let bar = Bar::new();
    let show = |s: &Stage| {
        bar.show(
            s.done,
            s.total,
            "stages",
            &format!("{}: {}", s.fabric, s.stage),
        )
    };
    let c = fabricsim::compare::run_with(&scenario, &show);
    bar.finish();
    let c = match c {
        Err(e) => {
            unless_interrupted(|| format!("nothing written ({})", e.problem))?;
            return Err(e.into());
        }
        Ok(c) => c,
    };
    let r = recommend(&c);
    if let Some(path) = &args.html {
        outpath::write(
            path,
            fabricsim::report::html::compare::report(&c, &r).as_bytes(),
        )?;
    }
    let out = match args.format {
        Format::Text => report::text(&c, &r),
        Format::Json => output::json(serde_json::to_string_pretty(&report::json(&c, &r)))?,
    };
    output::emit(args.out.as_deref(), &out)?;
    unless_interrupted(|| {
        format!(
            "the {} fabric(s) that finished are written, marked interrupted",
            c.fabrics.len()
        )
    })
}
