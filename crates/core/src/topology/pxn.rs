//! Traffic between planes of a fabric of parallel planes (rail-only, multi-plane), where no
//! switch joins two planes: a message to a host of another plane first crosses the sending
//! server's NVLink to its NIC port on the destination's plane, then the network (NCCL's PXN,
//! "PCI x NVLink", NCCL 2.12 release notes; the rail-only design of Wang et al., arXiv
//! 2307.12169, 2023, routes cross-rail traffic the same way). The NVLink leg is not timed (it
//! runs at the GPU's NVLink rate, several times the NIC's).

use std::borrow::Cow;

use super::graph::{HostId, NodeKind, Topology};
use crate::error::CoreError;
use crate::message::{MessageDag, Path};

/// `dag` with every network message between two planes sent from the source server's port on
/// the destination's plane, and one between two ports of one server over NVLink; borrowed
/// unchanged on a fabric of one plane. `Err` when a server has no port that reaches the
/// destination, or a message must cross NVLink and the DAG has no NVLink rate.
pub fn relay<'a>(t: &Topology, dag: &'a MessageDag) -> Result<Cow<'a, MessageDag>, CoreError> {
    if t.planes <= 1 {
        return Ok(Cow::Borrowed(dag));
    }
    let mut out = dag.clone();
    for (i, m) in out.messages.iter_mut().enumerate() {
        if m.path != Path::Net || m.src == m.dst || super::up_down(t, m.src, m.dst).is_some() {
            continue;
        }
        let (server, dst_server) = (server_of(t, m.src), server_of(t, m.dst));
        if server == dst_server {
            if dag.nvlink_rate.is_none() {
                return Err(CoreError::Dag(format!(
                    "message {i}: hosts {} and {} are ports of server {server} on different \
                     planes (an NVLink transfer), but the DAG has no NVLink rate",
                    m.src.0, m.dst.0
                )));
            }
            m.path = Path::NvLink;
            continue;
        }
        m.src = (0..t.rails_per_server() as u16)
            .filter_map(|r| t.host_of(server, r))
            .find(|&h| super::up_down(t, h, m.dst).is_some())
            .ok_or_else(|| {
                CoreError::Dag(format!(
                    "message {i}: no port of server {server} reaches host {}",
                    m.dst.0
                ))
            })?;
    }
    Ok(Cow::Owned(out))
}

fn server_of(t: &Topology, h: HostId) -> u32 {
    match t.node(t.host_node(h)).kind {
        NodeKind::Nic { server, .. } => server,
        NodeKind::Switch { .. } => unreachable!("a host is a NIC"),
    }
}
