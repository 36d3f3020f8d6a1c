//! `fabricsim train`: the step time, tokens/s and MFU of a model on a cluster.

use clap::{Args, ValueEnum};
use std::path::PathBuf;

use fabricsim::workload::train::{report, run};

use crate::outcome::Outcome;
use crate::output;
use crate::scenario_flags::{self, ScenarioFlags};

#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum Format {
    Text,
    Json,
}

/// Flags override the scenario file's [cluster], [fabric], [topology] and [train] sections.
#[derive(Args)]
pub struct TrainArgs {
    /// Scenario file: the cluster as for `plan`, the job in [train].
    pub scenario: Option<PathBuf>,
    #[command(flatten)]
    pub flags: ScenarioFlags<scenario_flags::Train>,
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    pub format: Format,
    /// Write the report to FILE instead of standard output.
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
}

pub fn run(args: TrainArgs) -> Outcome {
    let scenario = args.flags.load(args.scenario.as_deref())?;
    let r = run::run(&scenario)?.report;
    let text = match args.format {
        Format::Text => report::to_text(&r),
        Format::Json => output::json(serde_json::to_string_pretty(&r))?,
    };
    output::emit(args.out.as_deref(), &text)
}
