//! InfiniBand routing: static destination-based tables computed like OpenSM's fat-tree / D-mod-K
//! routing, and adaptive routing per packet.
//!
//! D-mod-K (Zahavi, "D-Mod-K routing providing non-blocking traffic for shift permutations on
//! real life fat trees", 2010): at a switch of tier l the up port for destination d is
//! ⌊d / W⌋ mod K, where K is its number of up ports and W the product of the up-port counts of
//! the tiers below it. The table of a switch is this function of d, so it is stored as the one
//! divisor W per switch (`divisors`) and evaluated by `route::choose` (`RoutePolicy::DModK`).
//!
//! Adaptive routing (NVIDIA AR; physics.md C2): among the allowed ports, the one whose egress
//! queue holds the fewest bytes, or (`CcParams::ar_most_credits`) the one holding the most
//! credits for the data VL; ties keep the static port, then the next ports in order.

use crate::topology::{PortId, Topology};

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
}
