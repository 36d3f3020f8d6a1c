//! `objective = "step_time"`: a candidate's `[train]` step as `fabricsim train --calibrate`
//! times it (`workload::train_engine`: every collective of the step small enough is run on the
//! engine at a few sizes, fitted to alpha-beta, and the step model recomputed with the fits),
//! the candidate's profile in place of the scenario's and the search's seed on the runs.

use crate::setup::engine_choice::EngineChoice;
use crate::workload::train::run::run_with;
use crate::workload::train_engine::calibrate_on_engine;
use fabricsim_input::profile::Profile;
use fabricsim_input::scenario::Scenario;

/// The step time in ms of `sc`'s `[train]` with `profile` (`None`: its own), the collectives
/// run on `engine` with `seed`.
pub fn step_ms(
    sc: &Scenario,
    profile: Option<&Profile>,
    engine: EngineChoice,
    seed: u64,
) -> Result<f64, String> {
    let tr = run_with(sc, profile).map_err(|e| e.to_string())?;
    let (tr, provenance, _) =
        calibrate_on_engine(tr, engine, Some(seed), 1).map_err(|e| e.to_string())?;
    // A step none of whose collectives was fitted is the closed form's, which no knob moves.
    if !provenance.iter().any(|p| p.source == "fit") {
        return Err("no collective of the step was fitted to an engine run".into());
    }
    Ok(tr.report.step_time_s * 1e3)
}
