//! Link-level retry in the fluid model (UEC 1.0 specification 5.1): a corrupted frame costs its
//! link a go-back-N replay of itself and the frames sent behind it until the NACK is back, a tax
//! on the link's bandwidth (`LossModel::goodput`), and nothing at the transport.

use fabricsim_core::topology::Topology;
use fabricsim_mech::SimParams;
use fabricsim_mech::llr::{CTRL_FRAME_BYTES, replay_window, round_trip};

/// The frames one corrupted frame costs on the topology's costliest link (`None`: no LLR), the
/// packet engine's round trip: serialization, propagation both ways, the receiver's latency.
pub fn window(topo: &Topology, p: &SimParams) -> Option<f64> {
    p.llr?;
    let frame = p.mtu_frame_wire_bytes();
    let ctrl = (CTRL_FRAME_BYTES + p.wire_overhead_bytes) as u64;
    topo.ports
        .iter()
        .map(|port| {
            let link = &topo.links[port.link.idx()];
            let peer = topo.ports[port.peer.idx()].node;
            let latency = if topo.nodes[peer.idx()].is_switch() {
                p.switch_latency
            } else {
                p.nic_latency
            };
            let rtt = round_trip(link.rate, link.delay, latency, frame, ctrl);
            replay_window(link.rate, rtt, frame)
        })
        .reduce(f64::max)
}
