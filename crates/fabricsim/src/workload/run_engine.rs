//! The engines as the workload layer's engine closure: a collective's DAG run on the topology
//! by the scenario's engine (`engine_choice`), its time the last sender completion (the RC
//! work completion of the last message: every rank then holds its result, as nccl-tests times
//! a collective from launch to the end of its last rank).

use std::cell::Cell;

use crate::error::Error;
use crate::setup::engine_choice::{self, AUTO_FLOW_ABOVE_PACKETS, EngineChoice, EngineKind};
use crate::setup::params_from_design;
use crate::workload::collective::{Algo, CollectiveSpec, Comm, Op};
use crate::workload::measure::Timed;
use crate::workload::placement::Placement;
use fabricsim_core::error::InputError;
use fabricsim_core::message::{MessageDag, Path};
use fabricsim_core::topology::Topology;
use fabricsim_core::units::{BitRate, Time};
use fabricsim_flow::dense::{self, DenseRun, PerFlow};
use fabricsim_input::profile::Profile;
use fabricsim_input::scenario::{Design, Scenario};
use fabricsim_mech::{Faults, SimParams, Status};
use fabricsim_packet::{Progress, RunOptions};

/// A scenario ready for engine runs: its design, topology, engine parameters, rank placement
/// and engine choice.
pub struct Cluster {
    pub design: Design,
    pub topology: Topology,
    pub params: SimParams,
    pub place: Placement,
    pub engine: EngineChoice,
    /// The engine `auto` last chose (it says so on stderr when that changes).
    auto_said: Cell<Option<EngineKind>>,
}

impl Cluster {
    /// Builds the scenario's topology, places one rank per GPU on it and reads its engine, its
    /// traffic classes and `[sim] tuned`.
    pub fn new(s: &Scenario) -> Result<Cluster, InputError> {
        Cluster::with_profile(s, None)
    }

    /// [`Self::new`] with `profile` in place of the scenario's fabric profile (`fabricsim
    /// tune`'s candidates; `None`: the scenario's own), as `setup::build::build_with` takes it.
    pub fn with_profile(s: &Scenario, profile: Option<&Profile>) -> Result<Cluster, InputError> {
        let engine = EngineChoice::of(s)?;
        let (mut design, topology) = s.design_and_topology()?;
        if let Some(p) = profile {
            design.profile = p.clone();
        }
        let mut c = Cluster::of(design, topology, engine)?;
        // The profile's untuned parameter set when `[sim] tuned = false`.
        if s.file.sim.as_ref().and_then(|x| x.tuned) == Some(false) {
            c.params = params_from_design(&c.design, false)?;
        }
        // The traffic classes and their scheduling (`[classes]`), as `sim` applies them.
        if let Some(classes) = &s.file.classes {
            classes.apply(&s.source, c.design.profile.family.name(), &mut c.params)?;
        }
        Ok(c)
    }

    /// The same from a design and topology already built.
    pub fn of(
        design: Design,
        topology: Topology,
        engine: EngineChoice,
    ) -> Result<Cluster, InputError> {
        let params = params_from_design(&design, true)?;
        let place = Placement::on_topology(&topology, design.spec.gpus_per_node);
        Ok(Cluster {
            design,
            topology,
            params,
            place,
            engine,
            auto_said: Cell::new(None),
        })
    }

    /// The engine that runs `dag`; with `auto`, says on stderr which one and why whenever the
    /// choice differs from the last one.
    pub fn engine_for(&self, dag: &MessageDag) -> EngineKind {
        let packets = fabric_packets(&self.params, dag);
        let kind = self.engine.resolve(packets);
        if self.engine == EngineChoice::Auto && self.auto_said.replace(Some(kind)) != Some(kind) {
            let why = if kind == EngineKind::Flow { ">" } else { "<=" };
            eprintln!(
                "engine auto: {} ({packets} fabric packets {why} {AUTO_FLOW_ABOVE_PACKETS})",
                kind.name()
            );
        }
        kind
    }

    /// Runs `spec` over `comm` as flow classes (`flow::dense`) when it is a dense all-to-all
    /// on the flow engine: every message the same size (the size divides evenly over channels
    /// and ranks), and the engine `auto` would choose by its packets is the flow engine.
    /// `Ok(Err(why))`: it runs per message (`Err(None)`: not a dense all-to-all on the flow
    /// engine at all).
    pub fn run_dense(
        &self,
        spec: &CollectiveSpec,
        comm: &Comm,
    ) -> Result<Result<DenseRun, Option<PerFlow>>, Error> {
        let Some(bytes) = self.dense_bytes(spec, comm) else {
            return Ok(Err(None));
        };
        let hosts: Vec<_> = comm.gpus.iter().map(|&g| self.place.host(g)).collect();
        let servers: Vec<u32> = comm.gpus.iter().map(|&g| self.place.server(g)).collect();
        let a = dense::AllToAll {
            hosts: &hosts,
            servers: &servers,
            bytes,
            channels: spec.channels,
            nvlink: self.nvlink(),
        };
        let fp = engine_choice::flow_params(&self.topology, &self.params);
        Ok(dense::all_to_all(&self.topology, &self.params, &fp, &a)?.map_err(Some))
    }

    /// Whether `spec` over `comm` is a dense all-to-all on the flow engine ([`Self::run_dense`]
    /// may still run it per message: `flow::dense::PerFlow`).
    pub fn dense_candidate(&self, spec: &CollectiveSpec, comm: &Comm) -> bool {
        self.dense_bytes(spec, comm).is_some()
    }

    /// Each message's bytes when `spec` is a dense all-to-all on the flow engine.
    fn dense_bytes(&self, spec: &CollectiveSpec, comm: &Comm) -> Option<u64> {
        let n = comm.len() as u64;
        let c = spec.channels.max(1) as u64;
        let per_channel = spec.bytes / c;
        let even = spec.bytes % c == 0 && per_channel % n == 0 && per_channel > 0;
        if spec.op != Op::AllToAll || spec.algo != Algo::Direct || !even {
            return None;
        }
        let bytes = per_channel / n;
        let mtu = self.params.mtu_bytes.max(1) as u64;
        let packets = (n * (n - 1) * c).saturating_mul(bytes.div_ceil(mtu));
        (self.engine.resolve(packets) == EngineKind::Flow).then_some(bytes)
    }

    /// The catalog GPU's one-way NVLink rate, as the collective DAGs record it.
    pub fn nvlink(&self) -> BitRate {
        self.design.gpu.nvlink_rate()
    }

    /// Runs a collective's DAG on this cluster's engine ([`run_collective`]).
    pub fn run(
        &self,
        dag: &MessageDag,
        progress: Option<&mut dyn FnMut(&Progress) -> bool>,
    ) -> Result<CollectiveRun, Error> {
        let kind = self.engine_for(dag);
        run_collective(kind, &self.topology, &self.params, dag, progress)
    }
}

/// Packets the DAG puts on the fabric (NVLink transfers excluded), the engine's work measure.
pub fn fabric_packets(params: &SimParams, dag: &MessageDag) -> u64 {
    let mtu = params.mtu_bytes.max(1) as u64;
    dag.messages
        .iter()
        .filter(|m| m.path == Path::Net)
        .map(|m| m.bytes.div_ceil(mtu).max(1))
        .sum()
}

/// What one engine run of a collective gave.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CollectiveRun {
    /// The engine that ran it.
    pub engine: EngineKind,
    /// Launch to the last message's completion at its sender.
    pub time: Time,
    /// Payload bytes the engine placed at receivers over the fabric (each byte once).
    pub fabric_bytes_delivered: u64,
    /// Payload bytes moved over NVLink (never on the fabric).
    pub nvlink_bytes: u64,
    /// RC retransmission timeouts the run met.
    pub timeouts: u64,
}

impl From<DenseRun> for CollectiveRun {
    fn from(r: DenseRun) -> CollectiveRun {
        CollectiveRun {
            engine: EngineKind::Flow,
            time: Time::from_ps(r.end_ps),
            fabric_bytes_delivered: r.fabric_bytes,
            nvlink_bytes: r.nvlink_bytes,
            timeouts: 0,
        }
    }
}

impl From<CollectiveRun> for Timed {
    fn from(r: CollectiveRun) -> Timed {
        Timed {
            time: r.time,
            timeouts: r.timeouts,
        }
    }
}

/// Runs `dag` on `topo` with the engine `kind`, without faults; `Err` when the engine rejects
/// it or a message does not complete (a collective on a healthy fabric always completes).
pub fn run_collective(
    kind: EngineKind,
    topo: &Topology,
    params: &SimParams,
    dag: &MessageDag,
    progress: Option<&mut dyn FnMut(&Progress) -> bool>,
) -> Result<CollectiveRun, Error> {
    let opts = RunOptions {
        until: None,
        progress,
    };
    let r = engine_choice::run(kind, topo, params, dag, &Faults::default(), opts)?;
    if r.sim.status != Status::Complete {
        return Err(Error::Run(format!(
            "the collective did not complete ({:?}: {} of {} messages done)",
            r.sim.status, r.summary.messages_completed, r.summary.messages_total
        )));
    }
    let end = r.messages.iter().filter_map(|m| m.finish_ps).max();
    Ok(CollectiveRun {
        engine: kind,
        time: Time::from_ps(end.unwrap_or(0)),
        fabric_bytes_delivered: r.counters.bytes_delivered,
        nvlink_bytes: dag
            .messages
            .iter()
            .filter(|m| m.path == Path::NvLink)
            .map(|m| m.bytes)
            .sum(),
        timeouts: r.counters.timeouts,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `[sim] tuned = false` gives the profile's untuned set (roce-400g's: DCQCN off) to every
    /// command's cluster, as `sim` gives it to its run.
    #[test]
    fn the_untuned_set_reaches_the_cluster() {
        let cluster = |extra: &str| {
            let text = format!("[cluster]\ngpus = 16\n[fabric]\nprofile = \"roce-400g\"\n{extra}");
            Cluster::new(&Scenario::parse("t.toml", &text).unwrap()).unwrap()
        };
        let (tuned, untuned) = (cluster(""), cluster("[sim]\ntuned = false\n"));
        assert_eq!(tuned.params.cc, cluster("[sim]\ntuned = true\n").params.cc);
        assert_ne!(tuned.params.cc, untuned.params.cc);
    }
}
