//! One measurement of the search: a candidate's profile (or the scenario's own) on the
//! scenario's `[traffic]` run with one seed, the run `fabricsim sim` makes (`setup::build`), on
//! `[tune.collective]` (`super::collective`), on the `[train]` step (`super::train`) or on the
//! `[serve]` deployment (`super::serve`), reduced
//! to the objective and the figures the constraints bound; on the scenario's engine, or on the
//! flow engine for the screen.

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::setup::build::build_with;
use crate::setup::engine_choice::{self, EngineChoice};
use crate::workload::run_engine::fabric_packets;
use fabricsim_input::profile::Profile;
use fabricsim_input::scenario::Scenario;
use fabricsim_input::scenario::tune::{Objective, TuneCollective, TuneSpec};
use fabricsim_mech::{Faults, RunResult, Status};
use fabricsim_packet::RunOptions;

/// What one run measured; `error` says why it has no figures (a candidate the engine refuses,
/// a run that did not complete).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Sample {
    /// The objective (`Objective::unit`); NaN (JSON null) when the run failed.
    #[serde(deserialize_with = "nan_if_null")]
    pub objective: f64,
    pub packets_dropped: u64,
    /// PFC pause time summed over the ports.
    pub pause_us: f64,
    pub ecn_marks: u64,
    pub error: Option<String>,
}

/// JSON writes NaN as null: read it back as NaN.
fn nan_if_null<'de, D: serde::Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    Ok(Option::<f64>::deserialize(d)?.unwrap_or(f64::NAN))
}

impl Sample {
    /// A sample of a run that could not be made.
    pub fn failed(e: String) -> Sample {
        Sample {
            objective: f64::NAN,
            packets_dropped: 0,
            pause_us: 0.0,
            ecn_marks: 0,
            error: Some(e),
        }
    }

    /// A sample of a run that keeps no packet counters (`Objective::counts_packets`).
    fn timed(objective: f64) -> Sample {
        Sample {
            objective,
            packets_dropped: 0,
            pause_us: 0.0,
            ecn_marks: 0,
            error: None,
        }
    }
}

/// Runs `sc`'s work (`spec.collective`, the `[train]` step for `step_time`, the `[serve]`
/// deployment for `ttft_p99`, else its `[traffic]`) with `profile` (`None`: its own) and `seed`, on `engine` (`None`: the
/// scenario's); files are found relative to `dir`.
pub fn run(
    sc: &Scenario,
    dir: &Path,
    profile: Option<&Profile>,
    seed: u64,
    spec: &TuneSpec,
    engine: Option<EngineChoice>,
) -> Sample {
    let run = || -> Result<Sample, String> {
        let scenario_engine = || match engine {
            Some(e) => Ok(e),
            None => EngineChoice::of(sc).map_err(|e| e.to_string()),
        };
        match spec.objective {
            Objective::StepTime => {
                let ms = super::train::step_ms(sc, profile, scenario_engine()?, seed)?;
                return Ok(Sample::timed(ms));
            }
            Objective::TtftP99 => {
                return Ok(Sample::timed(super::serve::ttft_p99_ms(
                    sc, profile, engine, seed,
                )?));
            }
            _ => {}
        }
        let engine = scenario_engine()?;
        let r = match &spec.collective {
            None => traffic(sc, dir, profile, seed, engine)?,
            Some(c) => collective(sc, profile, c, seed, engine)?,
        };
        r.check_conservation().map_err(|e| e.to_string())?;
        if r.sim.status != Status::Complete {
            return Err(format!(
                "{} of {} messages did not complete ({:?})",
                r.summary.messages_total - r.summary.messages_completed,
                r.summary.messages_total,
                r.sim.status
            ));
        }
        let s = &r.summary;
        let us = |ps: Option<u64>| ps.map(|p| p as f64 / 1e6);
        let value = match spec.objective {
            Objective::FctP50 => us(s.fct_p50_ps),
            Objective::FctP99 => us(s.fct_p99_ps),
            Objective::FctP999 => us(s.fct_p999_ps),
            Objective::FctMax => us(s.max_fct_ps),
            Objective::MeanSlowdown => s.mean_slowdown,
            // Launch to the last message's completion, as `run_engine::run_collective` times it.
            Objective::CollectiveTime => us(r.messages.iter().filter_map(|m| m.finish_ps).max()),
            Objective::StepTime | Objective::TtftP99 => unreachable!("timed above"),
        };
        Ok(Sample {
            objective: value.ok_or("no message completed")?,
            packets_dropped: r.counters.drops.total(),
            pause_us: r
                .flow_control
                .as_ref()
                .map_or(0.0, |f| f.pause_time_ps_total as f64 / 1e6),
            ecn_marks: r.counters.ecn_marks,
            error: None,
        })
    };
    run().unwrap_or_else(Sample::failed)
}

/// The scenario's `[traffic]` as `sim` runs it (its faults included).
fn traffic(
    sc: &Scenario,
    dir: &Path,
    profile: Option<&Profile>,
    seed: u64,
    engine: EngineChoice,
) -> Result<RunResult, String> {
    let mut setup = build_with(sc, dir, Some(seed), profile).map_err(|e| e.to_string())?;
    crate::workload::chakra::complete(sc, &mut setup).map_err(|e| e.to_string())?;
    let kind = engine.resolve(fabric_packets(&setup.params, &setup.dag));
    let opts = RunOptions {
        until: setup.until,
        progress: None,
    };
    let t = &setup.net.topo;
    engine_choice::run(kind, t, &setup.params, &setup.dag, &setup.faults, opts)
        .map_err(|e| e.to_string())
}

/// `[tune.collective]` as `collective` runs one size: on a healthy fabric, to its end.
fn collective(
    sc: &Scenario,
    profile: Option<&Profile>,
    c: &TuneCollective,
    seed: u64,
    engine: EngineChoice,
) -> Result<RunResult, String> {
    let (mut cluster, spec) =
        super::collective::prepare(sc, profile, c).map_err(|e| e.to_string())?;
    cluster.params.seed = seed;
    let dag = super::collective::dag(&cluster, &spec).map_err(|e| e.to_string())?;
    let kind = engine.resolve(fabric_packets(&cluster.params, &dag));
    let opts = RunOptions {
        until: None,
        progress: None,
    };
    engine_choice::run(
        kind,
        &cluster.topology,
        &cluster.params,
        &dag,
        &Faults::default(),
        opts,
    )
    .map_err(|e| e.to_string())
}
