//! The packet engine as the workload layer's engine closure: a collective's DAG run on the
//! topology, its time the last sender completion (the RC work completion of the last message:
//! every rank then holds its result, as nccl-tests times a collective from launch to the end
//! of its last rank).

use crate::error::InputError;
use crate::message::{MessageDag, Path};
use crate::scenario::{Design, Scenario};
use crate::sim::{self, Faults, Progress, RunOptions, SimParams, Status, params_from_design};
use crate::topology::Topology;
use crate::units::{BitRate, Time};
use crate::workload::placement::Placement;

/// A scenario ready for packet runs: its design, topology, engine parameters and rank placement.
pub struct PacketCluster {
    pub design: Design,
    pub topology: Topology,
    pub params: SimParams,
    pub place: Placement,
}

impl PacketCluster {
    /// Builds the scenario's topology and places one rank per GPU on it.
    pub fn new(s: &Scenario) -> Result<PacketCluster, InputError> {
        let (design, topology) = s.design_and_topology()?;
        PacketCluster::of(design, topology)
    }

    /// The same from a design and topology already built.
    pub fn of(design: Design, topology: Topology) -> Result<PacketCluster, InputError> {
        let params = params_from_design(&design, true)?;
        let place = Placement::on_topology(&topology, design.spec.gpus_per_node);
        Ok(PacketCluster {
            design,
            topology,
            params,
            place,
        })
    }

    /// The catalog GPU's one-way NVLink rate, as the collective DAGs record it.
    pub fn nvlink(&self) -> BitRate {
        BitRate((self.design.gpu.nvlink_one_way_bytes_per_s() * 8.0).round() as u64)
    }

    /// Runs a collective's DAG on this cluster ([`run_collective`]).
    pub fn run(
        &self,
        dag: &MessageDag,
        progress: Option<&mut dyn FnMut(&Progress) -> bool>,
    ) -> Result<CollectiveRun, String> {
        run_collective(&self.topology, &self.params, dag, progress)
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

/// What one packet-level run of a collective gave.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CollectiveRun {
    /// Launch to the last message's completion at its sender.
    pub time: Time,
    /// Payload bytes the engine placed at receivers over the fabric (each byte once).
    pub fabric_bytes_delivered: u64,
    /// Payload bytes moved over NVLink (never on the fabric).
    pub nvlink_bytes: u64,
}

/// Runs `dag` on `topo` without faults; `Err` when the engine rejects it or a message does not
/// complete (a collective on a healthy fabric always completes).
pub fn run_collective(
    topo: &Topology,
    params: &SimParams,
    dag: &MessageDag,
    progress: Option<&mut dyn FnMut(&Progress) -> bool>,
) -> Result<CollectiveRun, String> {
    let opts = RunOptions {
        until: None,
        progress,
    };
    let r = sim::run(topo, params, dag, &Faults::default(), opts)?;
    if r.sim.status != Status::Complete {
        return Err(format!(
            "the collective did not complete ({:?}: {} of {} messages done)",
            r.sim.status, r.summary.messages_completed, r.summary.messages_total
        ));
    }
    let end = r.messages.iter().filter_map(|m| m.finish_ps).max();
    Ok(CollectiveRun {
        time: Time::from_ps(end.unwrap_or(0)),
        fabric_bytes_delivered: r.counters.bytes_delivered,
        nvlink_bytes: dag
            .messages
            .iter()
            .filter(|m| m.path == Path::NvLink)
            .map(|m| m.bytes)
            .sum(),
    })
}
