//! `fabricsim train`: the step time, tokens/s and MFU of a model on a cluster.

use clap::{Args, ValueEnum};
use std::path::PathBuf;

use fabricsim::engine_choice::EngineChoice;
use fabricsim::workload::train::{report, run};
use fabricsim::workload::train_engine::{self, calibrate_on_engine};

use crate::outcome::{Failure, Outcome};
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
    /// Fit the step's collectives to engine runs (`--engine`) at a few sizes and recompute the step
    /// (collectives too large to simulate keep the closed form; the report says which).
    #[arg(long)]
    pub calibrate: bool,
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    pub format: Format,
    /// Write the report to FILE instead of standard output.
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
}

pub fn run(args: TrainArgs) -> Outcome {
    let scenario = args.flags.load(args.scenario.as_deref())?;
    let engine = EngineChoice::of(&scenario)?;
    let tr = run::run(&scenario)?;
    let (r, provenance) = if args.calibrate {
        let (tr, p) = calibrate_on_engine(tr, engine).map_err(Failure::Run)?;
        (tr.report, Some(p))
    } else {
        (tr.report, None)
    };
    let text = match (args.format, &provenance) {
        (Format::Text, None) => report::to_text(&r),
        (Format::Text, Some(p)) => report::to_text(&r) + &train_engine::to_text(p),
        (Format::Json, None) => output::json(serde_json::to_string_pretty(&r))?,
        (Format::Json, Some(p)) => {
            let mut v = serde_json::to_value(&r).map_err(|e| Failure::Run(e.to_string()))?;
            v["calibration"] = serde_json::to_value(p).map_err(|e| Failure::Run(e.to_string()))?;
            output::json(serde_json::to_string_pretty(&v))?
        }
    };
    output::emit(args.out.as_deref(), &text)
}
