//! Credit-limited rates on long InfiniBand links: a sender may have at most the receiver's
//! per-VL buffer in flight (IBA Vol. 1 7.9), and a credit comes back one credit round trip
//! after its block left, so a directed link carries at most
//! `rate <= buffer x 8 / (2 x propagation + frame serialization + receiver pipeline)`
//! (IBA Vol. 1 7.9; the buffer must cover BW x RTT + MTU for line rate: Mellanox patent US
//! 2016/0021016, a per-VL buffer sized by RTT + MTU). On a short link the
//! buffer covers the round trip and the line rate binds; the closed form only bites on long
//! (multi-hundred-metre) links. The packet engine runs the same credits per VL
//! (`sim::credits`), checked by `fabricsim-lab credits`.

use super::effect::Effect;
use fabricsim_core::topology::Topology;
use fabricsim_mech::{FlowControl, SimParams};

/// The effect: every directed link's capacity lowered to its credit limit ([`limit`]).
pub struct Credits;

impl Effect for Credits {
    fn link_caps(&self, topo: &Topology, p: &SimParams, caps: &mut Vec<u64>) {
        *caps = limit(topo, p, std::mem::take(caps));
    }
}

/// The capacity of every directed link (`paths::capacities` order), lowered to its credit
/// limit under credit flow control.
pub fn limit(topo: &Topology, p: &SimParams, mut caps: Vec<u64>) -> Vec<u64> {
    let FlowControl::Credits(c) = &p.flow_control else {
        return caps;
    };
    let frame_bits = 8 * p.mtu_frame_wire_bytes();
    for (d, cap) in caps.iter_mut().enumerate() {
        let link = &topo.links[d / 2];
        // The receiving end: the upper node going up (even ids), the lower one going down.
        let head = link.ends[if d % 2 == 0 { 1 } else { 0 }];
        let node = &topo.nodes[topo.ports[head.idx()].node.idx()];
        let (buffer, pipeline) = if node.is_switch() {
            (c.switch_vl_buffer_bytes, p.switch_latency.ps())
        } else {
            (c.nic_vl_buffer_bytes, p.nic_latency.ps())
        };
        *cap = (*cap).min(credit_rate(
            buffer,
            link.delay.ps(),
            frame_bits,
            *cap,
            pipeline,
        ));
    }
    caps
}

/// The credit-limited rate (bit/s) of a link of `line_bps` with one-way delay `delay_ps`, a
/// receive buffer of `buffer` bytes, frames of `frame_bits` and a receiver pipeline of
/// `pipeline_ps` before the credit goes back.
pub fn credit_rate(
    buffer: u64,
    delay_ps: u64,
    frame_bits: u64,
    line_bps: u64,
    pipeline_ps: u64,
) -> u64 {
    let ser_ps = (frame_bits as u128 * 1_000_000_000_000).div_ceil(line_bps.max(1) as u128);
    let rtt_ps = 2 * delay_ps as u128 + ser_ps + pipeline_ps as u128;
    let rate = buffer as u128 * 8 * 1_000_000_000_000 / rtt_ps.max(1);
    rate.min(u64::MAX as u128) as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_links_are_limited_by_the_buffer_over_the_credit_round_trip() {
        // 256 KB per VL, 400 Gb/s, a 4,122-byte frame (82.44 ns), 600 ns pipeline:
        // at 10 km (50 us each way) the round trip is 100,682.44 ns and the cap
        // 262,144 x 8 / 100,682.44 ns = 20.83 Gb/s.
        let r = credit_rate(262_144, 50_000_000, 4_122 * 8, 400_000_000_000, 600_000);
        assert_eq!(r, 20_829_372_033);
        // At 10 m (50 ns) the buffer covers the round trip: above the line rate.
        assert!(
            credit_rate(262_144, 50_000, 4_122 * 8, 400_000_000_000, 600_000) > 400_000_000_000
        );
    }
}
