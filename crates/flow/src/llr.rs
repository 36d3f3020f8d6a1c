//! Link-level retry in the fluid model (UEC 1.0 specification 5.1): a corrupted frame costs its
//! link a go-back-N replay of itself and the frames sent behind it until the NACK is back, a tax
//! on the link's bandwidth (`LossModel::goodput`), and nothing at the transport.

use crate::loss::LossModel;
use fabricsim_core::topology::Topology;
use fabricsim_mech::SimParams;
use fabricsim_mech::llr::{port_round_trip, replay_window};

/// The loss model of `p` on `topo` (`None`: no loss), with LLR the links' replay window in place
/// of the transport's recovery.
pub fn loss_model(topo: &Topology, p: &SimParams) -> Option<LossModel> {
    LossModel::of(p).map(|l| LossModel {
        llr_window: window(topo, p),
        ..l
    })
}

/// The frames one corrupted frame costs on the topology's costliest link (`None`: no LLR), the
/// packet engine's round trip: serialization, propagation both ways, the receiver's latency.
pub fn window(topo: &Topology, p: &SimParams) -> Option<f64> {
    p.llr?;
    let frame = p.mtu_frame_wire_bytes();
    topo.ports
        .iter()
        .map(|port| {
            let (rate, rtt) = port_round_trip(topo, p, port);
            replay_window(rate, rtt, frame)
        })
        .reduce(f64::max)
}
