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

use fabricsim_core::topology::{LinkId, NodeKind, PortId, Topology};
use fabricsim_core::units::Time;

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
                    let rs = topo
                        .routing
                        .down_ranges(fabricsim_core::topology::NodeId(i as u32));
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

/// A fabric whose links `down` failed before the run and that has converged around them (local
/// repair and the global reroute both done): a port is usable towards a destination when its
/// link is up and the reroute still reaches the destination through it. The flow engine's view
/// of a failed link (it has no transient; the packet engine runs the delays).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Converged {
    link_up: Vec<bool>,
    reach: Reach,
}

impl Converged {
    pub fn new(topo: &Topology, down: &[LinkId]) -> Converged {
        let mut link_up = vec![true; topo.links.len()];
        for l in down {
            link_up[l.idx()] = false;
        }
        let reach = Reach::compute(topo, &link_up);
        Converged { link_up, reach }
    }

    /// Whether routing sends traffic for host `dst` out of `port`.
    #[inline]
    pub fn usable(&self, topo: &Topology, port: PortId, dst: u32) -> bool {
        self.link_up[topo.ports[port.idx()].link.idx()] && self.reach.reaches(port.idx(), dst)
    }

    /// Whether topology link `link` is up.
    #[inline]
    pub fn link_up(&self, link: LinkId) -> bool {
        self.link_up[link.idx()]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
