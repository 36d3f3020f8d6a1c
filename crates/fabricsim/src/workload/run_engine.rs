//! The packet engine as the workload layer's engine closure: a collective's DAG run on the
//! topology, its time the last sender completion (the RC work completion of the last message:
//! every rank then holds its result, as nccl-tests times a collective from launch to the end
//! of its last rank).

use crate::message::{MessageDag, Path};
use crate::sim::{self, Faults, Progress, RunOptions, SimParams, Status};
use crate::topology::Topology;
use crate::units::Time;

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
