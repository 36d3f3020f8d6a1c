//! The route policy seam: next-hop choice among the equal-cost ports the topology's up/down
//! routing offers, one file per policy, dispatched on [`RoutePolicy`] (an enum fixed for the
//! run, no `dyn`):
//!
//! - `ecmp`: the flow's 5-tuple hash, per switch salted (per flow);
//! - `dmodk`: IB static tables, D-mod-K per tier (per destination; `ibroute::divisors`);
//! - adaptive routing: per packet by credits or queue, D-mod-K fallback (`ibroute`, the
//!   engine's `engine::adaptive`);
//! - `spray`: per packet over the ECMP set by an entropy index the sender picks.
//!
//! [`choose`] is the static choice (the inline hop, `RouteTable::static_choice`); the per-packet
//! policies (adaptive, spray) refine it in the engine's general hop.

pub mod dmodk;
pub mod ecmp;
pub mod reps;
pub mod spray;

pub use ecmp::{crc32, five_tuple_hash, host_ip, qp_sport, switch_salt};

use super::cc::CcParams;
use super::params::RoutePolicy;
use fabricsim_core::message::{Message, Path};
use fabricsim_core::topology::{HostId, NodeId, PortId, Topology};

/// Index into `n` candidates for a packet with flow hash `hash` and destination `dst` at a
/// switch with salt `salt`: the policy's static choice (spraying's ECMP choice, from which the
/// engine offsets each packet, `spray::pick`); `up` says whether the candidates are the switch's
/// up ports (else they are the parallel links down to the one child that leads to `dst`).
#[inline]
pub fn choose(policy: RoutePolicy, n: usize, hash: u32, dst: u32, salt: u32, up: bool) -> usize {
    match policy {
        RoutePolicy::EcmpFlowHash | RoutePolicy::Spray(_) => ecmp::pick(n, hash, salt),
        RoutePolicy::DModK | RoutePolicy::Adaptive => dmodk::pick(n, dst, salt, up),
    }
}

/// The first of candidates `k, k + 1, ...` (mod `n`) that `usable` accepts: the step past a
/// port that local repair or the global reroute has removed (`reroute`), as both engines take it.
#[inline]
pub fn first_usable(k: usize, n: usize, usable: impl Fn(usize) -> bool) -> Option<usize> {
    (0..n).map(|j| (k + j) % n).find(|&j| usable(j))
}

/// Queue pairs of the `Net` messages: `qps_per_connection` per (src, dst, qp index, class), numbered
/// in order of first use, a connection's QPs consecutive (message part j on its first QP + j,
/// `entropy::parts`). Returns each message's first QP (`u32::MAX` for NVLink messages) and
/// each QP's (src, dst). Shared by the packet and flow engines so a QP gets the same number,
/// source port and hash.
pub fn number_qps(messages: &[Message], qps_per_connection: u16) -> (Vec<u32>, Vec<(u32, u32)>) {
    let qpc = qps_per_connection.max(1) as u32;
    // Bucket the Net messages by source (counting sort), then sort each bucket by (dst, qp,
    // index) in cache: a group of equal (dst, qp) is one QP, first used by its first member.
    let hosts = messages.iter().map(|m| m.src.0 + 1).max().unwrap_or(0) as usize;
    let mut start = vec![0u32; hosts + 1];
    for m in messages.iter().filter(|m| m.path == Path::Net) {
        start[m.src.0 as usize + 1] += 1;
    }
    for h in 0..hosts {
        start[h + 1] += start[h];
    }
    let mut fill = start.clone();
    let mut by_src = vec![(0u32, 0u32, 0u32); start[hosts] as usize];
    for (i, m) in messages.iter().enumerate() {
        if m.path == Path::Net {
            let at = &mut fill[m.src.0 as usize];
            // A QP has one traffic class (its SL / priority): the class is part of the key.
            let qp_class = (m.qp as u32) << 9 | m.class.map_or(0, |c| c as u32 + 1);
            by_src[*at as usize] = (m.dst.0, qp_class, i as u32);
            *at += 1;
        }
    }
    // Each message's group, groups numbered in (src, dst, qp) order.
    let mut group = vec![u32::MAX; messages.len()];
    let mut group_ends: Vec<(u32, u32)> = Vec::new();
    for h in 0..hosts {
        let bucket = &mut by_src[start[h] as usize..start[h + 1] as usize];
        bucket.sort_unstable();
        for (k, &(d, q, i)) in bucket.iter().enumerate() {
            if k == 0 || (bucket[k - 1].0, bucket[k - 1].1) != (d, q) {
                group_ends.push((h as u32, d));
            }
            group[i as usize] = group_ends.len() as u32 - 1;
        }
    }
    // QP numbers in order of first use.
    let mut qp_of_group = vec![u32::MAX; group_ends.len()];
    let mut ends = Vec::with_capacity(group_ends.len());
    let mut msg_qp = vec![u32::MAX; messages.len()];
    for (i, &g) in group.iter().enumerate() {
        if g == u32::MAX {
            continue;
        }
        let q = &mut qp_of_group[g as usize];
        if *q == u32::MAX {
            *q = ends.len() as u32;
            ends.extend((0..qpc).map(|_| group_ends[g as usize]));
        }
        msg_qp[i] = *q;
    }
    (msg_qp, ends)
}

/// [`number_qps`] for a run's connections: with data split on QPs, each message starts at its
/// connection's first QP; else the connection's messages take its QPs in turn, in message order
/// (NCCL's per-request QP rotation, net_ib/common.h `ncclIbCommBaseGetQpForRequest`), each
/// message whole on one QP.
pub fn connection_qps(messages: &[Message], cc: &CcParams) -> (Vec<u32>, Vec<(u32, u32)>) {
    let qpc = cc.qps_per_connection.max(1) as u32;
    let (mut msg_qp, ends) = number_qps(messages, cc.qps_per_connection);
    if !cc.split_data_on_qps && qpc > 1 {
        let mut next = vec![0u32; ends.len() / qpc as usize];
        for q in msg_qp.iter_mut().filter(|q| **q != u32::MAX) {
            let turn = &mut next[(*q / qpc) as usize];
            *q += *turn % qpc;
            *turn += 1;
        }
    }
    (msg_qp, ends)
}

/// What `choose` reads per node as its `salt`: the ECMP hash salt, or for D-mod-K and adaptive
/// routing the switch's D-mod-K divisor (`ibroute::divisors`).
pub fn salts(topo: &Topology, policy: RoutePolicy) -> Vec<u32> {
    match policy {
        RoutePolicy::DModK | RoutePolicy::Adaptive => super::ibroute::divisors(topo),
        RoutePolicy::EcmpFlowHash | RoutePolicy::Spray(_) => {
            (0..topo.nodes.len() as u32).map(switch_salt).collect()
        }
    }
}

/// Per switch, what the packet path reads to route: its `choose` salt ([`salts`]) and its
/// candidate ports towards any destination, in O(1) when its down ranges are uniform (a fat
/// tree: child `b`, or `b`'s group of parallel links, covers hosts `lo + b * 2^shift ..`), else
/// through `Routing::next_hops_up` (a binary search over the ranges). One 32-byte record per
/// node, so a hop touches one line of it and one of `ports`.
#[derive(Clone, Copy, Debug)]
#[repr(C, align(32))]
struct NodeRoute {
    /// Hosts below (fast path only): `lo..lo + span`.
    lo: u32,
    span: u32,
    /// In `RouteTable::ports`: block `b`'s candidates at `down + b * per` (`per` of them), the
    /// up set at `up` (`up_len`).
    down: u32,
    per: u32,
    up: u32,
    up_len: u32,
    salt: u32,
    shift: u8,
    fast: bool,
    /// `fast`, and `static_choice` answers here (`RouteTable::new`'s `inline`).
    inline: bool,
}

/// The routing of every node as the packet path reads it; same candidates, in the same order, as
/// `Routing::next_hops_up`.
pub struct RouteTable {
    nodes: Vec<NodeRoute>,
    ports: Vec<PortId>,
    /// The policy `choose` applies (`static_choice`).
    policy: RoutePolicy,
}

/// Whether every candidate port of `topo`'s routing is one of its ports (the engine indexes its
/// per-port tables by them unchecked, `engine::tab`).
pub fn candidates_within(topo: &Topology) -> bool {
    let r = &topo.routing;
    let n = topo.ports.len();
    (0..topo.nodes.len() as u32).map(NodeId).all(|node| {
        let down = r
            .down_ranges(node)
            .iter()
            .flat_map(|x| r.down_ports(node, HostId(x.lo)).unwrap_or(&[]));
        r.up_ports(node).iter().chain(down).all(|p| p.idx() < n)
    })
}

impl RouteTable {
    /// The table of `topo` under `policy`; `inline`: whether `static_choice` gives the static
    /// choice (the packet engine passes false when a hop must always take the general path:
    /// adaptive routing, forced next hops).
    pub fn new(topo: &Topology, policy: RoutePolicy, inline: bool) -> RouteTable {
        let salt = salts(topo, policy);
        let r = &topo.routing;
        let mut ports = Vec::new();
        let nodes = (0..topo.nodes.len())
            .map(|i| {
                let n = NodeId(i as u32);
                let rs = r.down_ranges(n);
                let mut nr = NodeRoute {
                    lo: 0,
                    span: 0,
                    down: 0,
                    per: 0,
                    up: 0,
                    up_len: 0,
                    salt: salt[i],
                    shift: 0,
                    fast: false,
                    inline: false,
                };
                let Some(first) = rs.first() else {
                    return nr;
                };
                let w = first.hi - first.lo;
                let uniform = w.is_power_of_two()
                    && rs.iter().enumerate().all(|(b, x)| {
                        x.lo == first.lo + b as u32 * w
                            && x.hi - x.lo == w
                            && x.ports_len == first.ports_len
                    });
                if !uniform || rs.len() as u64 * w as u64 > u32::MAX as u64 - first.lo as u64 {
                    return nr;
                }
                nr.lo = first.lo;
                nr.span = rs.len() as u32 * w;
                nr.shift = w.trailing_zeros() as u8;
                nr.per = first.ports_len;
                nr.down = ports.len() as u32;
                for x in rs {
                    let d = r.down_ports(n, HostId(x.lo)).expect("a down range");
                    // `next_hops_up` slices `per` ports per block unchecked.
                    assert_eq!(d.len(), nr.per as usize, "a down range's port count");
                    ports.extend_from_slice(d);
                }
                nr.up = ports.len() as u32;
                ports.extend_from_slice(r.up_ports(n));
                nr.up_len = ports.len() as u32 - nr.up;
                nr.fast = true;
                nr.inline = inline;
                nr
            })
            .collect();
        RouteTable {
            nodes,
            ports,
            policy,
        }
    }

    /// `choose`'s salt at `node`.
    #[inline]
    pub fn salt(&self, node: u32) -> u32 {
        self.nodes[node as usize].salt
    }

    /// Whether `node` takes the fast path (uniform blocks below it).
    pub fn is_fast(&self, node: u32) -> bool {
        self.nodes[node as usize].fast
    }

    /// `Routing::next_hops_up(node, dst)` and `node`'s salt. Inlined into the packet path
    /// (called for every switch hop), the general case kept out of line.
    #[inline(always)]
    pub fn next_hops_up<'a>(
        &'a self,
        topo: &'a Topology,
        node: u32,
        dst: u32,
    ) -> (&'a [PortId], bool, u32) {
        self.hops_of(&self.nodes[node as usize], topo, node, dst)
    }

    /// The static choice of the table's policy at switch `node` for a packet to `dst` with flow
    /// hash `hash` (`choose` among `next_hops_up`), at a node with uniform blocks when the table
    /// is `inline`; `None` otherwise or without candidates. The packet engine's hop, inlined.
    ///
    /// # Safety
    /// `node` is one of the topology's nodes (below the node count the table was built for).
    #[inline(always)]
    pub unsafe fn static_choice(&self, node: u32, dst: u32, hash: u32) -> Option<PortId> {
        debug_assert!((node as usize) < self.nodes.len());
        // SAFETY: the caller's contract; `new` made one record per node.
        let nr = unsafe { self.nodes.get_unchecked(node as usize) };
        if !nr.inline {
            return None;
        }
        let (cands, up, salt) = self.fast_hops(nr, dst);
        if cands.is_empty() {
            return None;
        }
        let k = choose(self.policy, cands.len(), hash, dst, salt, up);
        debug_assert!(k < cands.len());
        // SAFETY: `choose` returns an index below the count it is given.
        Some(unsafe { *cands.get_unchecked(k) })
    }

    /// `next_hops_up` from `node`'s record `nr`.
    #[inline(always)]
    fn hops_of<'a>(
        &'a self,
        nr: &NodeRoute,
        topo: &'a Topology,
        node: u32,
        dst: u32,
    ) -> (&'a [PortId], bool, u32) {
        if !nr.fast {
            return Self::searched(topo, node, dst, nr.salt);
        }
        self.fast_hops(nr, dst)
    }

    /// `hops_of` at a node with uniform blocks (`nr.fast`).
    #[inline(always)]
    fn fast_hops(&self, nr: &NodeRoute, dst: u32) -> (&[PortId], bool, u32) {
        debug_assert!(nr.fast);
        // One compare for `lo <= dst < lo + span` (below `lo` wraps past `span`).
        let off = dst.wrapping_sub(nr.lo);
        let (s, n, up) = if off >= nr.span {
            (nr.up as usize, nr.up_len as usize, true)
        } else {
            // Block `off >> shift` < the node's block count, as `off < span`.
            let b = off >> nr.shift;
            ((nr.down + b * nr.per) as usize, nr.per as usize, false)
        };
        debug_assert!(s + n <= self.ports.len());
        // SAFETY: `new` laid out a fast node's blocks (`per` ports each, asserted there) and its
        // up set (`up_len`) inside `ports`; these fields are private and never changed after.
        (unsafe { self.ports.get_unchecked(s..s + n) }, up, nr.salt)
    }

    /// `next_hops_up` at a node without uniform blocks: the routing's binary search.
    #[cold]
    #[inline(never)]
    fn searched(topo: &Topology, node: u32, dst: u32, salt: u32) -> (&[PortId], bool, u32) {
        let (c, up) = topo.routing.next_hops_up(NodeId(node), HostId(dst));
        (c, up, salt)
    }
}

/// The packet engine's static next-hop choice as a picker for [`walk`]: `choose` with each
/// node's `salt` ([`salts`]), for a flow with `hash` towards `dst`.
pub fn hashed(
    policy: RoutePolicy,
    hash: u32,
    dst: u32,
    salt: &[u32],
) -> impl Fn(NodeId, &[PortId], bool) -> usize + '_ {
    move |node, c, up| choose(policy, c.len(), hash, dst, salt[node.idx()], up)
}

/// Walks the up/down route from host `src` to `dst`: at each switch `pick` chooses among
/// `Routing::next_hops` (see [`hashed`] for the packet engine's choice on a fabric without
/// failed links). Calls `visit` with each egress port, the source NIC's first.
pub fn walk(
    topo: &Topology,
    src: u32,
    dst: u32,
    mut pick: impl FnMut(NodeId, &[PortId], bool) -> usize,
    mut visit: impl FnMut(PortId),
) {
    let first = topo.host_port(HostId(src));
    visit(first);
    let mut node = topo.peer_node(first);
    while topo.nics[dst as usize] != node {
        let (c, up) = topo.routing.next_hops_up(node, HostId(dst));
        let p = c[pick(node, c, up)];
        visit(p);
        node = topo.peer_node(p);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crc32_matches_the_standard_check_value() {
        // The CRC-32/ISO-HDLC check value of "123456789" is 0xCBF43926.
        assert_eq!(crc32(b"123456789"), 0xCBF4_3926);
    }

    #[test]
    fn host_ip_matches_ns3() {
        assert_eq!(host_ip(0), 0x0b00_0001);
        assert_eq!(host_ip(257), 0x0b01_0101);
    }
}
