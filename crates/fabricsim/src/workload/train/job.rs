//! One `train` job from a scenario, the road the CLI and the Python package share: the
//! analytic step, calibrated on an engine when asked (`--calibrate`), and with
//! `step_model = "flow_dag"` the whole step on the flow engine, with `[train] loss_rate` costed
//! in expectation; its JSON is the text
//! `fabricsim train --format json` writes.

use serde_json::Value;

use super::flow_step::{self, FlowStep, Pass, StepModel};
use super::loss_cost::StepLoss;
use super::run;
use super::step::StepReport;
use super::step_dag;
use crate::error::Error;
use crate::setup::engine_choice::{EngineChoice, EngineKind};
use crate::setup::memory::{self, Run};
use crate::workload::train_engine::{OverSeeds, Provenance, calibrate_on_engine};
use fabricsim_input::scenario::Scenario;

/// What a `train` job computed.
pub struct Outcome {
    pub report: StepReport,
    /// Where each collective's time came from, when calibrated on an engine.
    pub calibration: Option<Vec<Provenance>>,
    /// The calibrated step over the engine's seeds (`seeds` > 1).
    pub over_seeds: Option<OverSeeds>,
    /// What `[train] loss_rate` costs the step, in expectation.
    pub loss: Option<StepLoss>,
    /// The whole step on the flow engine (`step_model = "flow_dag"`).
    pub flow: Option<FlowStep>,
    /// A stop (`fabricsim::stop`) cut the whole-step simulation short; the analytic step
    /// stands.
    pub interrupted: bool,
}

/// Runs `s`'s `[train]` job; `on_pass` hears of each whole-step pass (progress).
pub fn run(
    s: &Scenario,
    calibrate: bool,
    on_pass: &mut dyn FnMut(&Pass),
) -> Result<Outcome, Error> {
    let engine = EngineChoice::of(s)?;
    let model = StepModel::of(s)?;
    let tr = run::run(s)?;
    if model == StepModel::FlowDag && tr.loss.is_some() {
        return Err(s
            .error(
                "train.loss_rate",
                tr.loss.map_or(0.0, |l| l.rate),
                "random loss is costed in expectation on the analytic step; the whole-step flow \
                 simulation runs lossless",
                "step_model = \"analytic\" with loss_rate, or no loss_rate with flow_dag",
            )
            .into());
    }
    let flow_params = match model {
        StepModel::FlowDag => Some(flow_step::scenario_params(s, &tr)?),
        StepModel::Analytic => None,
    };
    // Refused before the step's DAG is built (or any engine runs) when its first pass would
    // not fit in memory.
    if let Some((_, fp)) = &flow_params {
        let opts = flow_step::first_pass(&tr.config, fp.paths, flow_step::DEFAULT_FIRST_RING_STEPS);
        let messages = step_dag::messages(&tr.config, &opts);
        memory::admit(s, EngineKind::Flow, Run::TrainStep, messages, |_| {
            "fewer data-parallel replicas or micro-batches (a smaller global batch), or a larger \
             max_memory on a larger machine"
                .into()
        })?;
    }
    let (tr, calibration, over_seeds) = if calibrate {
        let (tr, p, o) = calibrate_on_engine(tr, engine, None, s.engine_seeds()?)?;
        (tr, Some(p), o)
    } else {
        (tr, None, None)
    };
    let flow = match &flow_params {
        Some((params, fp)) => {
            let first = flow_step::DEFAULT_FIRST_RING_STEPS;
            match flow_step::simulate_run(&tr, params, fp, first, on_pass) {
                Err(_) if fabricsim_core::stop::requested() => None,
                r => Some(r?),
            }
        }
        None => None,
    };
    Ok(Outcome {
        loss: tr.step_loss,
        report: tr.report,
        calibration,
        over_seeds,
        interrupted: flow_params.is_some() && flow.is_none(),
        flow,
    })
}

/// The text of `fabricsim train --format json` (without its final newline): the step report
/// in its fields' order, or, with `calibration`, `flow_step` or `"status": "interrupted"`
/// added, the report as a JSON object with those keys.
pub fn json_text(o: &Outcome) -> Result<String, serde_json::Error> {
    if o.calibration.is_none() && o.loss.is_none() && o.flow.is_none() && !o.interrupted {
        return serde_json::to_string_pretty(&o.report);
    }
    let mut v: Value = serde_json::to_value(&o.report)?;
    if let Some(p) = &o.calibration {
        v["calibration"] = serde_json::to_value(p)?;
    }
    if let Some(l) = &o.loss {
        v["loss"] = serde_json::to_value(l)?;
    }
    if let Some(x) = &o.over_seeds {
        v["over_seeds"] = serde_json::to_value(x)?;
    }
    if let Some(f) = &o.flow {
        v["flow_step"] = serde_json::to_value(f)?;
    }
    if o.interrupted {
        v["status"] = "interrupted".into();
    }
    serde_json::to_string_pretty(&v)
}
