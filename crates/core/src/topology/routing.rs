//! Up/down routing structure of a folded Clos: at each switch, a destination below it goes down
//! through the port(s) whose subtree holds it; any other destination goes up through the ECMP
//! set of up ports (Leiserson's fat-tree routing; OpenSM's up/down and fat-tree engines).
//!
//! A switch stores its "below" set as sorted host ranges, so memory grows with the number of
//! ranges, not with hosts × switches: a 131,072-GPU fabric needs a few ranges per switch.

use super::graph::{HostId, NodeId, PortId, Topology};

/// Hosts `lo..hi` are reached through `port_list[ports_start..ports_start + ports_len]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DownRange {
    pub lo: u32,
    pub hi: u32,
    pub ports_start: u32,
    pub ports_len: u32,
}

#[derive(Clone, Debug, Default)]
pub struct Routing {
    /// Per node, its down ranges: `ranges[range_start[n] .. range_start[n + 1]]`, sorted by `lo`.
    range_start: Vec<u32>,
    ranges: Vec<DownRange>,
    /// Per node, its up ports: `port_list[up[n].0 .. up[n].0 + up[n].1]`.
    up: Vec<(u32, u32)>,
    port_list: Vec<PortId>,
}

impl Routing {
    /// Derives the down ranges bottom-up (by tier) and the up sets from the graph.
    pub fn derive(t: &Topology) -> Routing {
        let n = t.nodes.len();
        // Hosts below each node as merged sorted ranges.
        let mut below: Vec<Vec<(u32, u32)>> = vec![Vec::new(); n];
        let mut r = Routing {
            range_start: vec![0; n + 1],
            ranges: Vec::new(),
            up: vec![(0, 0); n],
            port_list: Vec::new(),
        };
        let mut order: Vec<usize> = (0..n).collect();
        order.sort_by_key(|&i| t.nodes[i].tier());
        let mut per_node: Vec<Vec<DownRange>> = vec![Vec::new(); n];
        for &i in &order {
            let node = &t.nodes[i];
            if let super::graph::NodeKind::Nic { host, .. } = node.kind {
                below[i] = vec![(host.0, host.0 + 1)];
            } else {
                // (lo, hi, port) for each down port's subtree range.
                let mut pieces: Vec<(u32, u32, PortId)> = Vec::new();
                for p in node.down_ports() {
                    let peer = t.peer_node(PortId(p));
                    for &(lo, hi) in &below[peer.idx()] {
                        pieces.push((lo, hi, PortId(p)));
                    }
                }
                let (ranges, merged) = elementary_ranges(&pieces, &mut r.port_list);
                per_node[i] = ranges;
                below[i] = merged;
            }
            let start = r.port_list.len() as u32;
            r.port_list.extend(node.up_ports().map(PortId));
            r.up[i] = (start, node.up_ports().len() as u32);
        }
        for (i, ranges) in per_node.iter().enumerate() {
            r.range_start[i] = r.ranges.len() as u32;
            r.ranges.extend_from_slice(ranges);
        }
        r.range_start[n] = r.ranges.len() as u32;
        r
    }

    /// The down ranges of node `n`.
    pub fn down_ranges(&self, n: NodeId) -> &[DownRange] {
        &self.ranges[self.range_start[n.idx()] as usize..self.range_start[n.idx() + 1] as usize]
    }

    /// Ports that lead down towards `dst`, or `None` when `dst` is not below `n`.
    #[inline]
    pub fn down_ports(&self, n: NodeId, dst: HostId) -> Option<&[PortId]> {
        let rs = self.down_ranges(n);
        let i = rs.partition_point(|r| r.hi <= dst.0);
        let r = rs.get(i)?;
        (r.lo <= dst.0).then(|| {
            &self.port_list[r.ports_start as usize..(r.ports_start + r.ports_len) as usize]
        })
    }

    /// The up-facing ports of `n` (its ECMP set towards the top of the fabric).
    #[inline]
    pub fn up_ports(&self, n: NodeId) -> &[PortId] {
        let (s, l) = self.up[n.idx()];
        &self.port_list[s as usize..(s + l) as usize]
    }

    /// Candidate next-hop ports from `n` towards `dst`: down when `dst` is below, else up.
    #[inline]
    pub fn next_hops(&self, n: NodeId, dst: HostId) -> &[PortId] {
        self.next_hops_up(n, dst).0
    }

    /// [`Self::next_hops`] and whether they are `n`'s up ports (else the links down to `dst`).
    #[inline]
    pub fn next_hops_up(&self, n: NodeId, dst: HostId) -> (&[PortId], bool) {
        match self.down_ports(n, dst) {
            Some(d) => (d, false),
            None => (self.up_ports(n), true),
        }
    }

    /// Whether `dst` is below `n`.
    pub fn is_below(&self, n: NodeId, dst: HostId) -> bool {
        self.down_ports(n, dst).is_some()
    }

    /// The number of distinct shortest up/down paths from host `src` to host `dst`.
    pub fn path_count(&self, t: &Topology, src: HostId, dst: HostId) -> u64 {
        if src == dst {
            return 1;
        }
        let first = t.peer_node(t.host_port(src));
        self.paths_from(t, first, dst)
    }

    fn paths_from(&self, t: &Topology, n: NodeId, dst: HostId) -> u64 {
        if t.nics.get(dst.idx()) == Some(&n) {
            return 1;
        }
        let hops = self.next_hops(n, dst);
        hops.iter()
            .map(|&p| self.paths_from(t, t.peer_node(p), dst))
            .sum()
    }
}

/// Splits overlapping (lo, hi, port) pieces into elementary ranges, each with the set of ports
/// that cover it; adjacent ranges with the same port set are merged. Returns those ranges (their
/// port sets appended to `port_list`) and the union of all pieces as merged ranges.
fn elementary_ranges(
    pieces: &[(u32, u32, PortId)],
    port_list: &mut Vec<PortId>,
) -> (Vec<DownRange>, Vec<(u32, u32)>) {
    let mut bounds: Vec<u32> = pieces.iter().flat_map(|p| [p.0, p.1]).collect();
    bounds.sort_unstable();
    bounds.dedup();
    // Sort pieces by lo so a sweep can find the covering ports of each elementary interval.
    let mut sorted: Vec<(u32, u32, PortId)> = pieces.to_vec();
    sorted.sort_unstable_by_key(|p| (p.0, p.2));
    let mut out: Vec<(u32, u32, Vec<PortId>)> = Vec::new();
    let mut active: Vec<(u32, PortId)> = Vec::new(); // (hi, port)
    let mut next = 0;
    for w in bounds.windows(2) {
        let (lo, hi) = (w[0], w[1]);
        while next < sorted.len() && sorted[next].0 <= lo {
            active.push((sorted[next].1, sorted[next].2));
            next += 1;
        }
        active.retain(|&(h, _)| h > lo);
        if active.is_empty() {
            continue;
        }
        let mut ports: Vec<PortId> = active.iter().map(|a| a.1).collect();
        ports.sort_unstable();
        ports.dedup();
        match out.last_mut() {
            Some(last) if last.1 == lo && last.2 == ports => last.1 = hi,
            _ => out.push((lo, hi, ports)),
        }
    }
    let mut merged: Vec<(u32, u32)> = Vec::new();
    let mut ranges = Vec::with_capacity(out.len());
    for (lo, hi, ports) in out {
        match merged.last_mut() {
            Some(m) if m.1 == lo => m.1 = hi,
            _ => merged.push((lo, hi)),
        }
        // Share identical port sets with the previous range to keep the list small.
        let start = port_list.len() as u32;
        let len = ports.len() as u32;
        port_list.extend(ports);
        ranges.push(DownRange {
            lo,
            hi,
            ports_start: start,
            ports_len: len,
        });
    }
    (ranges, merged)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn elementary_ranges_split_overlaps() {
        let mut pl = Vec::new();
        let pieces = [(0, 4, PortId(1)), (2, 6, PortId(2)), (6, 8, PortId(3))];
        let (r, merged) = elementary_ranges(&pieces, &mut pl);
        let sets: Vec<(u32, u32, Vec<u32>)> = r
            .iter()
            .map(|d| {
                (
                    d.lo,
                    d.hi,
                    pl[d.ports_start as usize..(d.ports_start + d.ports_len) as usize]
                        .iter()
                        .map(|p| p.0)
                        .collect(),
                )
            })
            .collect();
        assert_eq!(
            sets,
            vec![
                (0, 2, vec![1]),
                (2, 4, vec![1, 2]),
                (4, 6, vec![2]),
                (6, 8, vec![3])
            ]
        );
        assert_eq!(merged, vec![(0, 8)]);
    }
}
