//! `fabricsim train`: the step time, tokens/s and MFU of a model on a cluster.

use clap::Args;
use std::path::PathBuf;

use fabricsim::workload::train::flow_step::{self, Pass, StepModel};
use fabricsim::workload::train::{job, report};
use fabricsim::workload::train_engine;

use crate::outcome::{Outcome, unless_interrupted};
use crate::outpath;
use crate::output::{self, Format};
use crate::scenario_flags::{self, ScenarioFlags};

/// Flags override the scenario file's [cluster], [fabric], [topology] and [train] sections.
/// With `--step-model flow_dag` the whole step is also simulated on the flow engine
/// (`workload::train::flow_step`) and reported after the analytic step.
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
    /// Output format: text, json, or csv (the analytic step's communication: each collective
    /// and each kind, TP, CP, EP, PP, DP, with its time, exposed and hidden).
    #[arg(long, value_enum, default_value = "text")]
    pub format: Format,
    /// Write the report to FILE instead of standard output.
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
}

pub fn run(args: TrainArgs) -> Outcome {
    outpath::check(&[("--out", args.out.as_deref())])?;
    let scenario = args.flags.load(args.scenario.as_deref())?;
    if matches!(args.format, Format::Csv) && StepModel::of(&scenario)? == StepModel::FlowDag {
        return Err(scenario
            .error(
                "train.step_model",
                "\"flow_dag\"",
                "--format csv writes the analytic step's communication table, without the \
                 whole-step simulation",
                "analytic with --format csv, or --format text or json",
            )
            .into());
    }
    let tty = crate::progress::wanted();
    let mut pass = 0;
    let mut on_pass = |p: &Pass| {
        pass += 1;
        if tty {
            eprintln!(
                "[train] flow_dag pass {pass}: {} of {} ring steps simulated, {} rings meet a \
                 pipeline flow; engine {:.1} s",
                p.ring_steps_simulated,
                p.ring_steps_total,
                p.rings_meeting_pipeline,
                p.engine_wall_s
            );
        }
    };
    let o = job::run(&scenario, args.calibrate, &mut on_pass)?;
    let text = match args.format {
        Format::Text => {
            let mut t = report::to_text(&o.report);
            if o.interrupted {
                t += INTERRUPTED;
            }
            if let Some(l) = &o.loss {
                t += &format!("{}\n", l.summary());
            }
            if let Some(p) = &o.calibration {
                t += &train_engine::to_text(p);
            }
            if let Some(x) = &o.over_seeds {
                t += &train_engine::over_seeds_text(x);
            }
            if let Some(f) = &o.flow {
                t += &flow_step::to_text(f);
            }
            t
        }
        Format::Csv => report::table(&o.report).to_csv(),
        Format::Json => output::json(job::json_text(&o))?,
    };
    output::emit(args.out.as_deref(), &text)?;
    unless_interrupted(|| {
        "the analytic step written; the whole-step simulation did not finish".into()
    })
}

const INTERRUPTED: &str =
    "# interrupted: the whole-step simulation (--step-model flow_dag) did not finish\n";
