//! Link-level retry (UEC 1.0 specification 5.1, LLR): the parameters both engines share, the
//! replay buffer's size from the link's round trip, and the closed form of a link replay's cost
//! the flow engine uses (`fabricsim_flow::loss`).

use crate::params::SimParams;
use fabricsim_core::topology::{Port, Topology};
use fabricsim_core::units::{BitRate, Time};

/// An LLR ACK or NACK is a control ordered set (CtlOS) the PCS inserts between frames, not a
/// frame: 8 B on the xMII (lanes D0-D7: the 0x5C control character, the message type, its
/// data; the UEC CtlOS layout as documented in
/// https://docs.xenanetworks.com/projects/tdl-xoa-cli/en/latest/cli_ref/uec/ctlos/index.html),
/// with no preamble or inter-frame gap of its own.
pub const CTLOS_BYTES: u32 = 8;

/// The receiver's ACK spacing by default: the OCP SAI LLR proposal's `CTLOS_TARGET_SPACING`
/// default, 2,048 B
/// (https://github.com/opencomputeproject/SAI/blob/master/doc/LLR/SAI-Link_Layer_Retry.md),
/// read here as the bytes received between two cumulative ACKs.
pub const ACK_SPACING_BYTES: u64 = 2048;

/// The longest an accepted frame waits for its coalesced ACK by default [E]: the spec and the
/// SAI proposal leave the ACK timing to the implementation; 1 us is a little over the round
/// trip of a short 400G link, so a lone frame is freed from the replay buffer in about two.
pub const ACK_TIMER: Time = Time::from_ns(1000);

/// LLR on every Ethernet link.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Llr {
    /// Replay buffer per link direction, bytes on the wire; `None`: the link's round trip at its
    /// rate, with the ACK's coalescing delay, plus one frame (`replay_buffer_bytes`).
    pub replay_buffer: Option<u64>,
    /// The receiver ACKs once the frames it accepted since its last ACK reach `ack_spacing`
    /// wire bytes, or `ack_timer` after the first of them, whichever comes first (a NACK goes
    /// at once). 0: an ACK per frame.
    pub ack_spacing: u64,
    pub ack_timer: Time,
}

impl Default for Llr {
    fn default() -> Llr {
        Llr {
            replay_buffer: None,
            ack_spacing: ACK_SPACING_BYTES,
            ack_timer: ACK_TIMER,
        }
    }
}

impl Llr {
    /// The longest a frame's ACK waits at a receiver fed at `rate`: the frames of `ack_spacing`
    /// bytes arriving behind it, or the timer.
    pub fn ack_delay(&self, rate: BitRate) -> Time {
        rate.serialize(self.ack_spacing).min(self.ack_timer)
    }
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
/// frames under `p`, ACKs as control ordered sets, the receiving node's pipeline latency (a
/// switch's or a NIC's).
pub fn port_round_trip(topo: &Topology, p: &SimParams, port: &Port) -> (BitRate, Time) {
    let link = &topo.links[port.link.idx()];
    let peer = topo.ports[port.peer.idx()].node;
    let latency = match topo.nodes[peer.idx()].is_switch() {
        true => p.switch_latency,
        false => p.nic_latency,
    };
    let rtt = round_trip(
        link.rate,
        link.delay,
        latency,
        p.mtu_frame_wire_bytes(),
        CTLOS_BYTES as u64,
    );
    (link.rate, rtt)
}

/// The default replay buffer [E]: everything sent within one round trip (`port_round_trip`)
/// and the ACK's coalescing delay (`Llr::ack_delay`) at line rate, plus one frame, so a
/// loss-free link never waits for an ACK (the spec sizes the buffer to the link's round trip;
/// its exact figure is not public).
pub fn replay_buffer_bytes(llr: &Llr, rate: BitRate, rtt: Time, frame_wire: u64) -> u64 {
    rate.bytes_in(rtt + llr.ack_delay(rate)) + frame_wire
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
        // 400G, 0.5 us, 600 ns pipeline, 4,178 B frames, an 8 B CtlOS: 2 x 83.56 ns + 1,000 +
        // 600 + 0.16 ns.
        let r = BitRate::gbps(400);
        let rtt = round_trip(r, Time::from_ns(500), Time::from_ns(600), 4178, 8);
        assert_eq!(rtt.0, 2 * 83_560 + 1_000_000 + 600_000 + 160);
        let per_frame = Llr {
            ack_spacing: 0,
            ..Llr::default()
        };
        let b = replay_buffer_bytes(&per_frame, r, rtt, 4178);
        assert_eq!(b, r.bytes_in(rtt) + 4178);
        assert_eq!(b, 88_364 + 4178);
        // Coalesced by 2,048 B (40.96 ns at 400G, under the 1 us timer): 2,048 B more.
        let c = replay_buffer_bytes(&Llr::default(), r, rtt, 4178);
        assert_eq!(c, b + 2048);
        // A timer shorter than the spacing's arrival time bounds the wait.
        let t = Llr {
            ack_spacing: 1 << 20,
            ack_timer: Time::from_ns(100),
            ..Llr::default()
        };
        assert_eq!(replay_buffer_bytes(&t, r, rtt, 4178), b + 5000);
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
