//! InfiniBand routing: static destination-based tables computed like OpenSM's fat-tree / D-mod-K
//! routing, and adaptive routing per packet.
//!
//! D-mod-K (Zahavi, "D-Mod-K routing providing non-blocking traffic for shift permutations on
//! real life fat trees", 2010): at a switch of tier l the up port for destination d is
//! ⌊d / W⌋ mod K, where K is its number of up ports and W the product of the up-port counts of
//! the tiers below it. The table of a switch is this function of d, so it is stored as the one
//! divisor W per switch (`divisors`) and evaluated by `route::choose` (`RoutePolicy::DModK`).
//!
//! Adaptive routing (NVIDIA AR; physics.md C2), by `CcParams::ar_select`: among the allowed
//! ports, the one holding the most credits for the packet's VL normalized by its link's length
//! (`ArSelect::Credits`), or the one whose egress queue holds the fewest bytes
//! (`ArSelect::Queue`); ties keep the static port, then the next ports in order.
//!
//! The credit rule is Mellanox's patent US 10,200,294 B2, "Adaptive routing based on
//! flow-control credits" (Shpiner, Zdornov, Haramaty, Zahavi; filed 2016, granted 2019) [S: a
//! patent shows the vendor's design, not what Quantum firmware ships]: claim 1, the switch
//! derives the credits available on each candidate port from the link-level flow-control
//! notifications, normalizes them by the lengths of the links to the next hops and selects by
//! the normalized credits; claim 3, only the credits of the packet's VL. The claims give no
//! formula for the normalization; `credit_scales` has the one used here and why.

use super::credits::{BLOCK_BYTES, blocks};
use super::params::{CreditParams, SimParams};
use crate::topology::{PortId, Topology};

/// Fixed-point one of `credit_scales`: a port's score is its credits x 2^32 / its share.
const SCALE_ONE: u64 = 1 << 32;

/// Per egress port, the factor adaptive routing by credits multiplies its available credits by:
/// 2^32 / the credits a sender on that link can hold while sending at line rate, i.e. the
/// peer's per-VL buffer less the credits the link's round trip keeps in flight (line rate x 2
/// x propagation delay: the data on the wire and the credit updates coming back), at least one
/// MTU frame's. The score is the share of those credits the port holds. Why this normalization
/// (claim 1 of US 10,200,294 B2 names only "by the lengths of the links"): a busy port on a
/// long link always misses its in-flight credits, so raw counts make it look fuller than a
/// short link's whose next hop holds as much; with the share, two ports whose next hops hold
/// alike score alike whatever their lengths. Dividing by the bare length instead would rank a
/// 1 m link 100 times a 100 m one with the buffers equal (as here: one per-VL buffer per switch
/// or NIC port, `CreditParams`) and divide by zero on unplanned, zero-length links. Equal
/// lengths and buffers give equal factors: the ranking of the raw credits.
pub fn credit_scales(topo: &Topology, p: &SimParams, c: &CreditParams) -> Vec<u64> {
    let frame = blocks(p.data_frame_bytes(p.mtu_bytes)) as u64;
    topo.ports
        .iter()
        .map(|port| {
            let peer = topo.ports[port.peer.idx()].node;
            let buffer = c.vl_buffer_blocks(topo.nodes[peer.idx()].is_switch()) as u64;
            let link = &topo.links[port.link.idx()];
            let in_flight = link.rate.bytes_in(link.delay + link.delay) / BLOCK_BYTES as u64;
            SCALE_ONE / buffer.saturating_sub(in_flight).max(frame).max(1)
        })
        .collect()
}

/// The D-mod-K divisor W of every node (1 for leaves and NICs).
pub fn divisors(topo: &Topology) -> Vec<u32> {
    // Up ports per switch at each tier (the largest, for fabrics with uneven pods).
    let max_tier = topo.nodes.iter().map(|n| n.tier()).max().unwrap_or(0) as usize;
    let mut up = vec![1u64; max_tier + 2];
    for n in &topo.nodes {
        if n.is_switch() {
            let t = n.tier() as usize;
            up[t] = up[t].max(n.up_ports().len() as u64);
        }
    }
    topo.nodes
        .iter()
        .map(|n| {
            if !n.is_switch() {
                return 1;
            }
            let w: u64 = (1..n.tier() as usize).map(|t| up[t].max(1)).product();
            w.min(u32::MAX as u64) as u32
        })
        .collect()
}

/// The adaptive choice among `cands`: the least `load`, preferring the static index `k` and
/// then the candidates after it on ties; only ports with `usable` true.
#[inline]
pub fn least_loaded(
    cands: &[PortId],
    k: usize,
    usable: impl Fn(usize) -> bool,
    load: impl Fn(usize) -> u64,
) -> Option<usize> {
    let n = cands.len();
    let mut best: Option<(u64, usize)> = None;
    for j in 0..n {
        let i = (k + j) % n;
        let pi = cands[i].idx();
        if !usable(pi) {
            continue;
        }
        let l = load(pi);
        if best.is_none_or(|(b, _)| l < b) {
            best = Some((l, i));
        }
    }
    best.map(|b| b.1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn least_loaded_prefers_the_static_port_on_ties() {
        let c = [PortId(10), PortId(11), PortId(12), PortId(13)];
        let loads = [5u64, 3, 3, 9];
        let f = |pi: usize| loads[pi - 10];
        assert_eq!(least_loaded(&c, 2, |_| true, f), Some(2));
        assert_eq!(least_loaded(&c, 0, |_| true, f), Some(1));
        assert_eq!(least_loaded(&c, 0, |pi| pi != 11, f), Some(2));
        assert_eq!(least_loaded(&c, 0, |_| false, f), None);
    }

    /// `credit_scales`: on equal links every port gets one factor (the raw credits' ranking);
    /// a longer link's port gets the larger factor, by its buffer over the buffer less the
    /// line rate x round trip (closed form: 400 Gb/s x 2 x 500 ns = 50,000 B = 781 blocks of a
    /// 4,096-block buffer).
    #[test]
    fn credit_scales_normalize_by_the_round_trip_in_flight() {
        use crate::sim::params::FlowControl;
        use crate::topology::{GraphBuilder, Medium, Shape};
        use crate::units::{BitRate, Time};
        // One leaf (one NIC below) with an uplink to each of two spines, of delay `d0` and `d1`.
        let leaf_up = |d0: u64, d1: u64| {
            let mut b = GraphBuilder::new();
            let nic = b.add_nic(0, 0);
            let leaf = b.add_switch(1, 0, 0, 3);
            let spines = [b.add_switch(2, 0, 0, 1), b.add_switch(2, 0, 1, 1)];
            let rate = BitRate::gbps(400);
            b.connect(nic, leaf, rate, 0.0, Time::ZERO, Medium::Unspecified);
            for (s, d) in spines.into_iter().zip([d0, d1]) {
                b.connect(leaf, s, rate, 0.0, Time::from_ns(d), Medium::Unspecified);
            }
            b.finish(Shape::FatTree, 2, 1)
        };
        let p = SimParams::ib();
        let FlowControl::Credits(c) = p.flow_control else {
            panic!("IB credits expected")
        };
        let ups = |t: &Topology| {
            t.links[1..]
                .iter()
                .map(|l| l.ends[0].idx())
                .collect::<Vec<_>>()
        };
        let t = leaf_up(50, 50);
        let (s, u) = (credit_scales(&t, &p, &c), ups(&t));
        assert_eq!(s[u[0]], s[u[1]]);
        let t = leaf_up(500, 0);
        let (s, u) = (credit_scales(&t, &p, &c), ups(&t));
        assert_eq!(s[u[0]], SCALE_ONE / (4096 - 781));
        assert_eq!(s[u[1]], SCALE_ONE / 4096);
    }
}
