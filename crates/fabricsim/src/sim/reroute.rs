//! Link-failure recovery in two steps, each after its own delay from a link's state change:
//!
//! - **Local repair**: the failed link's two ends stop choosing it among their candidate ports
//!   (InfiniBand SHIELD / Fast Link Fault Recovery: "the switch selects the alternative output
//!   port if the output port provided in the LFT is not Active", NVIDIA IB cluster bring-up
//!   guide; Ethernet: the switch drops the dead next hop from its ECMP group on link-down,
//!   RFC 7938 7.1). Switches further away keep forwarding towards the failure, and a packet
//!   that reaches a switch with no way down is dropped as `no_route`. SHIELD's notification of
//!   neighbour switches (FLFN) is not modelled: it is part of what the global step does.
//! - **Global reroute**: every switch stops choosing a port from which a destination can no
//!   longer be reached (the IB subnet manager's sweep and new LFTs, 10-20 s on very large
//!   fabrics per Mellanox, enterpriseai.news 2017-06-15; BGP withdrawals converging through a Clos,
//! sub-second
//!   with fast fallover, RFC 7938 7).
//!
//! The global step is a [`Reach`] table computed from the link states when it happens: for each
//! switch port, the destination host ranges it still routes but can no longer reach, under the
//! same up/down routing the topology uses (a packet goes up until its destination is below, then
//! only down). The table holds only ports with something blocked, as sorted ranges, so a healthy
//! port costs one comparison and the route choice allocates nothing.

use serde::Deserialize;

use crate::topology::{NodeKind, PortId, Topology};
use crate::units::Time;

/// When the two recovery steps act after a link goes down or comes back; `None`: never.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RerouteDelays {
    pub local_repair: Option<Time>,
    pub global: Option<Time>,
}

/// A profile's `[reroute]` table: the fabric's recovery delays in microseconds.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RerouteProfile {
    pub local_repair_us: u64,
    pub global_reroute_us: u64,
}

impl RerouteProfile {
    pub fn delays(&self) -> RerouteDelays {
        RerouteDelays {
            local_repair: Some(Time::from_us(self.local_repair_us)),
            global: Some(Time::from_us(self.global_reroute_us)),
        }
    }
}

/// Sorted, disjoint, non-adjacent half-open host ranges.
type Ranges = Vec<(u32, u32)>;

/// `a` ∪ `b`.
fn union(a: &[(u32, u32)], b: &[(u32, u32)]) -> Ranges {
    let mut all: Ranges = a.iter().chain(b).copied().collect();
    all.sort_unstable();
    let mut out: Ranges = Vec::with_capacity(all.len());
    for (lo, hi) in all {
        match out.last_mut() {
            Some(last) if lo <= last.1 => last.1 = last.1.max(hi),
            _ => out.push((lo, hi)),
        }
    }
    out
}

/// `a` \ `b`.
fn minus(a: &[(u32, u32)], b: &[(u32, u32)]) -> Ranges {
    let mut out = Vec::new();
    let mut j = 0;
    for &(lo, hi) in a {
        let mut lo = lo;
        while j < b.len() && b[j].1 <= lo {
            j += 1;
        }
        let mut k = j;
        while lo < hi && k < b.len() && b[k].0 < hi {
            if b[k].0 > lo {
                out.push((lo, b[k].0));
            }
            lo = lo.max(b[k].1);
            k += 1;
        }
        if lo < hi {
            out.push((lo, hi));
        }
    }
    out
}

/// Per switch port, the destinations it routes but can no longer reach.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Reach {
    /// Port `p`'s blocked ranges are `blocked[start[p]..start[p + 1]]`.
    start: Vec<u32>,
    blocked: Ranges,
}

impl Reach {
    /// Nothing blocked (before any global reroute).
    pub fn healthy(ports: usize) -> Reach {
        Reach {
            start: vec![0; ports + 1],
            blocked: Vec::new(),
        }
    }

    /// The table for `topo` with the links for which `link_up[link]` is false removed.
    pub fn compute(topo: &Topology, link_up: &[bool]) -> Reach {
        let n = topo.nodes.len();
        let hosts = topo.num_hosts() as u32;
        let alive = |p: u32| link_up[topo.ports[p as usize].link.idx()];
        let peer = |p: u32| topo.peer_node(PortId(p)).idx();
        let mut order: Vec<usize> = (0..n).collect();
        order.sort_by_key(|&i| (topo.nodes[i].tier(), i));
        // Hosts below each node (routed down from it), from the routing's down ranges.
        let below: Vec<Ranges> = (0..n)
            .map(|i| match topo.nodes[i].kind {
                NodeKind::Nic { host, .. } => vec![(host.0, host.0 + 1)],
                _ => {
                    let rs = topo.routing.down_ranges(crate::topology::NodeId(i as u32));
                    let pieces: Ranges = rs.iter().map(|r| (r.lo, r.hi)).collect();
                    union(&pieces, &[])
                }
            })
            .collect();
        // Reachable going only down (bottom-up): the union over live down links.
        let mut down: Vec<Ranges> = vec![Vec::new(); n];
        for &i in &order {
            down[i] = match topo.nodes[i].kind {
                NodeKind::Nic { .. } => below[i].clone(),
                _ => topo.nodes[i]
                    .down_ports()
                    .filter(|&p| alive(p))
                    .fold(Vec::new(), |acc, p| union(&acc, &down[peer(p)])),
            };
        }
        // Reachable from a node (top-down): below it only down; elsewhere through a live up
        // link whose upper node reaches the destination.
        let mut reach: Vec<Ranges> = vec![Vec::new(); n];
        for &i in order.iter().rev() {
            let up = topo.nodes[i]
                .up_ports()
                .filter(|&p| alive(p))
                .fold(Vec::new(), |acc, p| union(&acc, &reach[peer(p)]));
            reach[i] = union(&down[i], &minus(&up, &below[i]));
        }
        let mut start = Vec::with_capacity(topo.ports.len() + 1);
        let mut blocked = Vec::new();
        for (pi, port) in topo.ports.iter().enumerate() {
            start.push(blocked.len() as u32);
            let node = &topo.nodes[port.node.idx()];
            if !node.is_switch() {
                continue;
            }
            let p = pi as u32;
            let is_down = node.down_ports().contains(&p);
            // What routing sends through the port, and what still gets there.
            let routed = if is_down {
                below[peer(p)].clone()
            } else {
                minus(&[(0, hosts)], &below[port.node.idx()])
            };
            let got: &[(u32, u32)] = match (alive(p), is_down) {
                (false, _) => &[],
                (true, true) => &down[peer(p)],
                (true, false) => &reach[peer(p)],
            };
            blocked.extend(minus(&routed, got));
        }
        start.push(blocked.len() as u32);
        Reach { start, blocked }
    }

    /// Whether port `port` has any destination blocked.
    #[inline]
    pub fn any_blocked(&self, port: usize) -> bool {
        self.start[port] != self.start[port + 1]
    }

    /// Whether routing may send a packet for host `dst` out of switch port `port`.
    #[inline]
    pub fn reaches(&self, port: usize, dst: u32) -> bool {
        let r = &self.blocked[self.start[port] as usize..self.start[port + 1] as usize];
        let i = r.partition_point(|&(_, hi)| hi <= dst);
        !(i < r.len() && r[i].0 <= dst)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Source;
    use crate::rng::Rng;
    use crate::topology::{HostId, NodeId};

    /// The k = 4 fat tree of examples/sim-ft4.topo.txt: hosts 0-15, edges 16-23, aggregations
    /// 24-31, cores 32-35 (ns-3 ids); links 0-15 host-edge, 16-31 edge-agg, 32-47 agg-core.
    fn ft4() -> Topology {
        let text = include_str!("../../../../examples/sim-ft4.topo.txt");
        crate::io::ns3::read_topology(&Source::new("sim-ft4.topo.txt", text))
            .unwrap()
            .topo
    }

    /// Independent reference: whether a packet at `node` for `dst` can get there by up/down
    /// routing over live links (a search over every candidate, no ranges).
    fn can_reach(t: &Topology, up: &[bool], node: NodeId, dst: u32) -> bool {
        if t.nics[dst as usize] == node {
            return true;
        }
        if !t.nodes[node.idx()].is_switch() {
            // A NIC sends through its one port.
            let p = PortId(t.nodes[node.idx()].ports().start);
            return up[t.ports[p.idx()].link.idx()] && can_reach(t, up, t.peer_node(p), dst);
        }
        t.routing
            .next_hops(node, HostId(dst))
            .iter()
            .any(|&p| up[t.ports[p.idx()].link.idx()] && can_reach(t, up, t.peer_node(p), dst))
    }

    /// Every (switch port, destination routed through it): the table agrees with the search.
    fn check_against_search(t: &Topology, up: &[bool]) -> usize {
        let r = Reach::compute(t, up);
        let mut blocked = 0;
        for (ni, node) in t.nodes.iter().enumerate() {
            if !node.is_switch() {
                continue;
            }
            for dst in 0..t.num_hosts() as u32 {
                for &p in t.routing.next_hops(NodeId(ni as u32), HostId(dst)) {
                    let want =
                        up[t.ports[p.idx()].link.idx()] && can_reach(t, up, t.peer_node(p), dst);
                    assert_eq!(r.reaches(p.idx(), dst), want, "port {} dst {dst}", p.0);
                    blocked += usize::from(!want);
                }
            }
        }
        blocked
    }

    #[test]
    fn range_set_operations() {
        assert_eq!(
            union(&[(0, 2), (5, 7)], &[(2, 3), (6, 9)]),
            vec![(0, 3), (5, 9)]
        );
        assert_eq!(
            minus(&[(0, 10)], &[(2, 3), (5, 7)]),
            vec![(0, 2), (3, 5), (7, 10)]
        );
        assert_eq!(minus(&[(0, 4), (6, 8)], &[(3, 7)]), vec![(0, 3), (7, 8)]);
        assert_eq!(minus(&[(2, 4)], &[(0, 10)]), vec![]);
    }

    #[test]
    fn a_healthy_fabric_blocks_nothing() {
        let t = ft4();
        let r = Reach::compute(&t, &vec![true; t.links.len()]);
        assert_eq!(r, Reach::healthy(t.ports.len()));
    }

    #[test]
    fn an_edge_aggregation_failure_is_avoided_fabric_wide() {
        let t = ft4();
        let mut up = vec![true; t.links.len()];
        // Link 16: edge 16 (hosts 0, 1) to aggregation 24.
        up[16] = false;
        let r = Reach::compute(&t, &up);
        let port_to = |from: u32, to: u32| {
            t.nodes[from as usize]
                .ports()
                .find(|&p| t.peer_node(PortId(p)).0 == to)
                .unwrap() as usize
        };
        // The edge's dead up-port carries nothing any more; its other one everything.
        assert!(
            (0..16)
                .filter(|&d| d >= 2)
                .all(|d| !r.reaches(port_to(16, 24), d))
        );
        assert!((2..16).all(|d| r.reaches(port_to(16, 25), d)));
        // Aggregation 24 has no way down to hosts 0 and 1: the cores avoid it for them (and
        // only for them), and so does the other edge of the pod.
        for core in 32..34 {
            let p = port_to(core, 24);
            assert!(
                !r.reaches(p, 0) && !r.reaches(p, 1) && r.reaches(p, 2),
                "core {core}"
            );
        }
        assert!(!r.reaches(port_to(17, 24), 0) && r.reaches(port_to(17, 24), 5));
        // Other pods' aggregations: their up-ports to cores 32 and 33 (which connect to 24)
        // no longer reach hosts 0 and 1; those to cores 34 and 35 do.
        assert!(!r.reaches(port_to(26, 32), 0) && r.reaches(port_to(27, 34), 0));
        // Aggregation 26 reaches pod 0 only through cores 32 and 33: the edges of its pod
        // avoid it for hosts 0 and 1 (and use it for the rest).
        assert!(!r.reaches(port_to(18, 26), 0) && r.reaches(port_to(18, 27), 0));
        assert!(r.reaches(port_to(18, 26), 2));
        // Blocked (port, destination) pairs: edge 16 up 14, agg 24 down 2, cores 32-33 down
        // 2 x 2, edge 17 up 2, aggs 26/28/30 up to 32-33 3 x 2 x 2, edges of pods 1-3 up to
        // those aggs 6 x 2 = 46.
        assert_eq!(check_against_search(&t, &up), 46);
    }

    #[test]
    fn random_failures_agree_with_a_path_search() {
        // ft4 and a built 3-tier fabric with single links between switches (k = 8 switch).
        let built = crate::test_util::scenario(&[
            ("--gpus", "128"),
            ("--fabric", "ib-ndr"),
            ("--tiers", "3"),
        ])
        .design_and_topology()
        .unwrap()
        .1;
        for t in [ft4(), built] {
            for seed in 0..20u64 {
                let mut rng = Rng::stream(seed, 0x5e_4007e, 0);
                let fail = 1 + rng.below(6) as usize;
                let mut up = vec![true; t.links.len()];
                for _ in 0..fail {
                    up[rng.below(t.links.len() as u64) as usize] = false;
                }
                check_against_search(&t, &up);
            }
        }
    }
}
