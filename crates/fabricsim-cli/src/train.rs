//! `fabricsim train`: the step time, tokens/s and MFU of a model on a cluster.

use clap::Args;
use std::path::PathBuf;

use fabricsim::engine_choice::{EngineChoice, EngineKind};
use fabricsim::memory::Run;
use fabricsim::workload::train::flow_step::{self, Pass, StepModel};
use fabricsim::workload::train::step_dag;
use fabricsim::workload::train::{report, run};
use fabricsim::workload::train_engine::{self, calibrate_on_engine};

use crate::interrupt;
use crate::outcome::{Failure, Outcome, unless_interrupted};
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
    let engine = EngineChoice::of(&scenario)?;
    let model = StepModel::of(&scenario)?;
    if matches!(args.format, Format::Csv) && model == StepModel::FlowDag {
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
    let tr = run::run(&scenario)?;
    let flow_params = match model {
        StepModel::FlowDag => Some(flow_step::scenario_params(&scenario, &tr)?),
        StepModel::Analytic => None,
    };
    // Refused before the step's DAG is built (or any engine runs) when its first pass would
    // not fit in memory.
    if let Some((_, fp)) = &flow_params {
        let opts = flow_step::first_pass(&tr.config, fp.paths, flow_step::DEFAULT_FIRST_RING_STEPS);
        let messages = step_dag::messages(&tr.config, &opts);
        fabricsim::memory::admit(
            &scenario,
            EngineKind::Flow,
            Run::TrainStep,
            messages,
            |_| {
                "fewer data-parallel replicas or micro-batches (a smaller global batch), or a \
             larger max_memory on a larger machine"
                    .into()
            },
        )?;
    }
    let (tr, provenance) = if args.calibrate {
        let (tr, p) = calibrate_on_engine(tr, engine, None)?;
        (tr, Some(p))
    } else {
        (tr, None)
    };
    let flow = match &flow_params {
        Some((params, fp)) => {
            let first = flow_step::DEFAULT_FIRST_RING_STEPS;
            let tty = crate::progress::wanted();
            let mut pass = 0;
            let mut on_pass = |p: &Pass| {
                pass += 1;
                if tty {
                    eprintln!(
                        "[train] flow_dag pass {pass}: {} of {} ring steps simulated, {} rings \
                         meet a pipeline flow; engine {:.1} s",
                        p.ring_steps_simulated,
                        p.ring_steps_total,
                        p.rings_meeting_pipeline,
                        p.engine_wall_s
                    );
                }
            };
            match flow_step::simulate_run(&tr, params, fp, first, &mut on_pass) {
                Err(_) if interrupt::received().is_some() => None,
                r => Some(r?),
            }
        }
        None => None,
    };
    let r = tr.report;
    // A stop cut the whole-step simulation short: the analytic step is written, marked.
    let interrupted = flow_params.is_some() && flow.is_none();
    let text = match args.format {
        Format::Text => {
            let mut t = report::to_text(&r);
            if interrupted {
                t += INTERRUPTED;
            }
            if let Some(p) = &provenance {
                t += &train_engine::to_text(p);
            }
            if let Some(f) = &flow {
                t += &flow_step::to_text(f);
            }
            t
        }
        Format::Csv => report::to_csv(&r),
        Format::Json if provenance.is_none() && flow.is_none() && !interrupted => {
            output::json(serde_json::to_string_pretty(&r))?
        }
        Format::Json => {
            let json = |v: serde_json::Result<serde_json::Value>| {
                v.map_err(|e| Failure::Run(e.to_string()))
            };
            let mut v = json(serde_json::to_value(&r))?;
            if let Some(p) = &provenance {
                v["calibration"] = json(serde_json::to_value(p))?;
            }
            if let Some(f) = &flow {
                v["flow_step"] = json(serde_json::to_value(f))?;
            }
            if interrupted {
                v["status"] = "interrupted".into();
            }
            output::json(serde_json::to_string_pretty(&v))?
        }
    };
    output::emit(args.out.as_deref(), &text)?;
    unless_interrupted(|| {
        "the analytic step written; the whole-step simulation did not finish".into()
    })
}

const INTERRUPTED: &str =
    "# interrupted: the whole-step simulation (--step-model flow_dag) did not finish\n";
