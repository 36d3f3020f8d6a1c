//! `sim`'s job, the one road the command line and the Python package share: a scenario's
//! network, traffic and faults built (`setup::build`), its engine chosen by its fabric packets
//! (`setup::engine_choice`) and its memory checked (`setup::memory`), then run.

use std::path::Path;

use crate::error::Error;
use crate::setup::build::{SimSetup, build};
use crate::setup::engine_choice::{self, EngineChoice, EngineKind};
use crate::setup::memory;
use crate::workload::run_engine::fabric_packets;
use fabricsim_core::units::Time;
use fabricsim_input::scenario::Scenario;
use fabricsim_mech::RunResult;
use fabricsim_packet::{Progress, RunOptions};

/// A `sim` run ready to start: what it runs, on which engine, until when.
pub struct SimJob {
    pub setup: SimSetup,
    /// The engine run: the scenario's, or the one `auto` chose by `packets`.
    pub kind: EngineKind,
    pub choice: EngineChoice,
    /// The run's fabric packets (what `auto` chooses by).
    pub packets: u64,
    /// The stop time: `until` given, else `[sim] until`.
    pub until: Option<Time>,
}

impl SimJob {
    /// Builds the run of scenario `sc` (its relative paths taken from `base`) with `seed` over
    /// `[sim] seed` and `until` over `[sim] until`; refuses it over `max_memory`.
    pub fn new(
        sc: &Scenario,
        base: &Path,
        seed: Option<u64>,
        until: Option<Time>,
    ) -> Result<SimJob, Error> {
        let mut setup = build(sc, base, seed)?;
        crate::workload::chakra::complete(sc, &mut setup)?;
        let choice = EngineChoice::of(sc)?;
        let packets = fabric_packets(&setup.params, &setup.dag);
        let kind = choice.resolve(packets);
        memory::check(sc, kind, memory::Run::Sim, &setup.dag)?;
        Ok(SimJob {
            until: until.or(setup.until),
            setup,
            kind,
            choice,
            packets,
        })
    }

    /// Runs it; what the flow engine cannot run (faults, loss, stop times) is an error against
    /// the scenario's `engine` key.
    pub fn run(
        &self,
        sc: &Scenario,
        progress: Option<&mut dyn FnMut(&Progress) -> bool>,
    ) -> Result<RunResult, Error> {
        let s = &self.setup;
        let opts = RunOptions {
            until: self.until,
            progress,
        };
        engine_choice::run(self.kind, &s.net.topo, &s.params, &s.dag, &s.faults, opts).map_err(
            |e| match self.kind {
                EngineKind::Flow => Error::Input(sc.error(
                    "engine",
                    "\"flow\"",
                    e,
                    "engine = \"packet\" (or --engine packet) for faults, loss and stop times",
                )),
                EngineKind::Packet => e,
            },
        )
    }
}
