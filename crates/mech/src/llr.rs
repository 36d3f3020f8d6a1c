//! Link-level retry (UEC 1.0 specification 5.1, LLR): the parameters both engines share, the
//! replay buffer's size from the link's round trip, and the closed form of a link replay's cost
//! the flow engine uses (`fabricsim_flow::loss`).

use crate::params::SimParams;
use fabricsim_core::topology::{Port, Topology};
use fabricsim_core::units::{BitRate, Time};

/// An LLR ACK or NACK is a minimum Ethernet frame (IEEE 802.3: 64 B) [E]: the spec's control
/// ordered set is not public, so it is charged as the smallest frame, as a PAUSE frame is.
pub const CTRL_FRAME_BYTES: u32 = 64;

/// LLR on every Ethernet link.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Llr {
    /// Replay buffer per link direction, bytes on the wire; `None`: the link's round trip at its
    /// rate plus one frame (`replay_buffer_bytes`).
    pub replay_buffer: Option<u64>,
}

/// A link's LLR round trip: a frame's first bit leaves the sender until its ACK is back, behind
/// one frame in progress on the reverse direction: the frame's serialization (store and forward),
/// the propagation both ways, the receiver's pipeline latency, and the ACK's serialization.
pub fn round_trip(
    rate: BitRate,
    delay: Time,
    node_latency: Time,
    frame_wire: u64,
    ctrl_wire: u64,
) -> Time {
    let ser = rate.serialize(frame_wire);
    Time(2 * ser.0 + 2 * delay.0 + node_latency.0 + rate.serialize(ctrl_wire).0)
}

/// The round trip of the link leaving `port` (with its rate), as both engines take it: MTU
/// frames under `p`, ACKs as control frames, the receiving node's pipeline latency (a switch's
/// or a NIC's).
pub fn port_round_trip(topo: &Topology, p: &SimParams, port: &Port) -> (BitRate, Time) {
    let link = &topo.links[port.link.idx()];
    let peer = topo.ports[port.peer.idx()].node;
    let latency = match topo.nodes[peer.idx()].is_switch() {
        true => p.switch_latency,
        false => p.nic_latency,
    };
    let ctrl = (CTRL_FRAME_BYTES + p.wire_overhead_bytes) as u64;
    let rtt = round_trip(
        link.rate,
        link.delay,
        latency,
        p.mtu_frame_wire_bytes(),
        ctrl,
    );
    (link.rate, rtt)
}

/// The default replay buffer [E]: everything sent within one round trip at line rate plus one
/// frame, so a loss-free link never waits for an ACK (the spec sizes the buffer to the link's
/// round trip; its exact figure is not public).
pub fn replay_buffer_bytes(rate: BitRate, rtt: Time, frame_wire: u64) -> u64 {
    rate.bytes_in(rtt) + frame_wire
}

/// Frames a replay resends after one corrupted frame on a busy link: the frame itself and those
/// sent behind it until its NACK is back (go-back-N on the link over one round trip).
pub fn replay_window(rate: BitRate, rtt: Time, frame_wire: u64) -> f64 {
    1.0 + rtt.0 as f64 / rate.serialize(frame_wire).0 as f64
}

/// A busy path's delivered share of its slots under LLR over `hops` alike links with per-frame
/// loss `p`: each corrupted transmission wastes `w` slots (`replay_window`) and a link's replay
/// delays the frames queued behind it on the next links, so the hops' losses add: the go-back-N
/// efficiency (1 - p) / (1 - p + hops p w).
pub fn link_efficiency(p: f64, w: f64, hops: usize) -> f64 {
    if p <= 0.0 {
        return 1.0;
    }
    (1.0 - p) / (1.0 - p + hops as f64 * p * w)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_buffer_covers_the_round_trip() {
        // 400G, 0.5 us, 600 ns pipeline, 4,178 B frames: 2 x 83.56 ns + 1,000 + 600 + 1.28 ns.
        let r = BitRate::gbps(400);
        let rtt = round_trip(r, Time::from_ns(500), Time::from_ns(600), 4178, 84);
        assert_eq!(rtt.0, 2 * 83_560 + 1_000_000 + 600_000 + 1_680);
        let b = replay_buffer_bytes(r, rtt, 4178);
        assert_eq!(b, r.bytes_in(rtt) + 4178);
        assert_eq!(b, 88_440 + 4178);
    }

    #[test]
    fn efficiency_is_go_back_n_over_the_link_window() {
        assert_eq!(link_efficiency(0.0, 20.0, 2), 1.0);
        let e = link_efficiency(1e-3, 21.0, 1);
        assert!((e - 0.999 / (0.999 + 0.021)).abs() < 1e-12);
        assert!(link_efficiency(1e-2, 21.0, 1) < e);
        assert!((link_efficiency(1e-3, 21.0, 2) - 0.999 / (0.999 + 0.042)).abs() < 1e-12);
    }
}
