//! A network read from another tool's file (ns-3 HPCC, ibnetdiscover) as a [`Topology`]:
//! hosts are the nodes that are not switches, each with one link; switch tiers are the BFS
//! distance from the nearest host and every link is connected lower tier -> upper tier, so
//! the up/down routing of the topology module applies.

use fabricsim_core::topology::{GraphBuilder, HostId, Medium, NodeId, Shape, Topology};
use fabricsim_core::units::{BitRate, Time};
use fabricsim_mech::faults::{Dir, Fault, LinkLoss};

/// Propagation speed used to turn a link delay into a length (about 5 ns/m in fibre and
/// copper: 1.98e8 m/s in sonic-swss `buffer_headroom_mellanox.lua`, 4.5 ns/m in NVIDIA
/// MCP4Y10 DACs).
pub const PS_PER_M: f64 = 5_000.0;

/// A topology read from a file, with the id mappings its flow or fault lines need.
#[derive(Clone, Debug)]
pub struct ImportedTopology {
    pub topo: Topology,
    /// File node id -> host, for hosts.
    pub host_of: Vec<Option<HostId>>,
    /// File node id -> node of the topology.
    pub node_of: Vec<NodeId>,
    /// Links with a non-zero loss rate, as per-link loss faults.
    pub link_loss: Vec<Fault>,
}

/// One link between file nodes `a` and `b`.
pub struct Link {
    pub a: usize,
    pub b: usize,
    pub rate: BitRate,
    pub delay: Time,
    /// Per-packet loss probability (0: none).
    pub loss: f64,
}

/// Why the nodes and links do not make a tiered network.
#[derive(Debug, PartialEq)]
pub enum Unfit {
    /// Every node is a switch.
    NoHost,
    /// Switch `.0` reaches no host.
    Unreachable(usize),
    /// Host `.0` has `.1` links, not one.
    HostLinks(usize, usize),
    /// Link `.0` (its index) joins two nodes of the same tier.
    SameTier(usize),
    /// More than 255 tiers.
    TooDeep,
}

/// The topology of nodes `is_switch` (one flag per file node) joined by `links`.
pub fn build(is_switch: &[bool], links: &[Link]) -> Result<ImportedTopology, Unfit> {
    let n = is_switch.len();
    let mut adj: Vec<Vec<usize>> = vec![Vec::new(); n];
    for l in links {
        adj[l.a].push(l.b);
        adj[l.b].push(l.a);
    }
    // Tier = BFS distance from the nearest host.
    let mut level = vec![u32::MAX; n];
    let mut frontier: Vec<usize> = (0..n).filter(|&i| !is_switch[i]).collect();
    if frontier.is_empty() {
        return Err(Unfit::NoHost);
    }
    for &h in &frontier {
        level[h] = 0;
    }
    while !frontier.is_empty() {
        let mut next = Vec::new();
        for &u in &frontier {
            for &v in &adj[u] {
                if level[v] == u32::MAX && is_switch[v] {
                    level[v] = level[u] + 1;
                    next.push(v);
                }
            }
        }
        frontier = next;
    }
    for (i, &l) in level.iter().enumerate() {
        if l == u32::MAX {
            return Err(Unfit::Unreachable(i));
        }
        if !is_switch[i] && adj[i].len() != 1 {
            return Err(Unfit::HostLinks(i, adj[i].len()));
        }
    }
    if let Some(i) = links.iter().position(|l| level[l.a] == level[l.b]) {
        return Err(Unfit::SameTier(i));
    }
    let tiers = level.iter().copied().max().unwrap_or(0);
    if tiers > u8::MAX as u32 {
        return Err(Unfit::TooDeep);
    }
    let mut b = GraphBuilder::new();
    let mut node_of = vec![NodeId(0); n];
    let mut host_of = vec![None; n];
    let mut servers = 0u32;
    for i in 0..n {
        if !is_switch[i] {
            node_of[i] = b.add_nic(servers, 0);
            host_of[i] = Some(HostId(servers));
            servers += 1;
        }
    }
    let mut index_in_tier = vec![0u32; tiers as usize + 1];
    for i in 0..n {
        if is_switch[i] {
            let tier = level[i] as usize;
            node_of[i] = b.add_switch(tier as u8, 0, index_in_tier[tier], adj[i].len() as u32);
            index_in_tier[tier] += 1;
        }
    }
    let mut link_loss = Vec::new();
    for l in links {
        let (lo, hi) = if level[l.a] < level[l.b] {
            (l.a, l.b)
        } else {
            (l.b, l.a)
        };
        let length_m = l.delay.0 as f64 / PS_PER_M;
        let id = b.connect(
            node_of[lo],
            node_of[hi],
            l.rate,
            length_m,
            l.delay,
            Medium::Unspecified,
        );
        if l.loss > 0.0 {
            link_loss.push(Fault::Loss {
                link: id,
                dir: Dir::Both,
                loss: LinkLoss::Rate(l.loss),
            });
        }
    }
    let topo = b.finish(Shape::Imported, tiers as u8, servers);
    Ok(ImportedTopology {
        topo,
        host_of,
        node_of,
        link_loss,
    })
}
