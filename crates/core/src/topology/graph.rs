//! The fabric as a plain graph: nodes (NIC ports and switches), their ports, and links.
//!
//! Dense `u32` ids everywhere so the engines index arrays, never hash. Invariants (checked by
//! [`Topology::check`] and the property tests):
//! - every port belongs to exactly one link, and `ports[p].peer` is the port at the other end;
//! - a node's ports are `first_port .. first_port + num_ports`, down-facing ports first, then
//!   up-facing ones (`first_up`), so the up-ECMP set of a switch is one contiguous slice;
//! - NIC ports (hosts) are numbered `0 .. nics.len()` in `nics`, in the order that makes every
//!   switch's set of hosts below it a few contiguous ranges (see `routing`).

use crate::error::CoreError;
use crate::units::{BitRate, Time};

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct NodeId(pub u32);
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct PortId(pub u32);
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct LinkId(pub u32);
/// A host index: the position of a NIC port in [`Topology::nics`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct HostId(pub u32);

impl NodeId {
    #[inline]
    pub fn idx(self) -> usize {
        self.0 as usize
    }
}
impl PortId {
    #[inline]
    pub fn idx(self) -> usize {
        self.0 as usize
    }
}
impl LinkId {
    #[inline]
    pub fn idx(self) -> usize {
        self.0 as usize
    }
}
impl HostId {
    #[inline]
    pub fn idx(self) -> usize {
        self.0 as usize
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NodeKind {
    /// A NIC port attached to a GPU: `server` is the node (chassis) index, `rail` the GPU/NIC
    /// index inside it. `host` is its index in `Topology::nics`.
    Nic {
        server: u32,
        rail: u16,
        host: HostId,
    },
    /// A switch at `tier` (1 = leaf, 2 = spine/aggregation, 3 = core). `group` is the pod (for
    /// tier 1 and 2 in a 3-tier fabric) or the plane/rail group, `index` its position there.
    Switch { tier: u8, group: u32, index: u32 },
}

#[derive(Clone, Debug)]
pub struct Node {
    pub kind: NodeKind,
    pub first_port: u32,
    pub num_ports: u32,
    /// The first up-facing port (`first_port + num_ports` when there is none).
    pub first_up: u32,
    /// Ports the device has (radix), used or not; 0 for NIC ports (they have exactly one).
    pub radix: u32,
}

impl Node {
    pub fn is_switch(&self) -> bool {
        matches!(self.kind, NodeKind::Switch { .. })
    }
    pub fn tier(&self) -> u8 {
        match self.kind {
            NodeKind::Nic { .. } => 0,
            NodeKind::Switch { tier, .. } => tier,
        }
    }
    pub fn ports(&self) -> std::ops::Range<u32> {
        self.first_port..self.first_port + self.num_ports
    }
    pub fn down_ports(&self) -> std::ops::Range<u32> {
        self.first_port..self.first_up
    }
    pub fn up_ports(&self) -> std::ops::Range<u32> {
        self.first_up..self.first_port + self.num_ports
    }
}

#[derive(Clone, Copy, Debug)]
pub struct Port {
    pub node: NodeId,
    pub link: LinkId,
    /// The port at the other end of the link.
    pub peer: PortId,
}

/// What carries a link: chosen by the planner from the catalog by reach, or given by a file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Medium {
    /// Not chosen (imported topologies).
    Unspecified,
    /// An index into the catalog's cable/optic list.
    Catalog(u16),
}

#[derive(Clone, Debug)]
pub struct Link {
    /// `ends[0]` is the lower-tier end (NIC or down-facing switch port is `ends[0]`'s peer).
    pub ends: [PortId; 2],
    pub rate: BitRate,
    pub length_m: f64,
    /// One-way propagation delay.
    pub delay: Time,
    /// The tier of the upper end's switch (1: NIC-leaf, 2: leaf-spine, 3: spine-core).
    pub tier: u8,
    pub medium: Medium,
}

/// How the fabric was built (for reports and export).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Shape {
    FatTree,
    RailOptimized,
    RailOnly,
    DualTor,
    Pods,
    /// Read from a file (ns-3 topology); structure derived from the graph.
    Imported,
}

#[derive(Clone, Debug)]
pub struct Topology {
    pub shape: Shape,
    /// Switch tiers (1, 2 or 3).
    pub tiers: u8,
    pub nodes: Vec<Node>,
    pub ports: Vec<Port>,
    pub links: Vec<Link>,
    /// Host index -> its NIC node.
    pub nics: Vec<NodeId>,
    /// GPU servers (chassis).
    pub servers: u32,
    /// Parallel planes no switch joins (rail-only, multi-plane; `topology::pxn`); 1 otherwise.
    pub planes: u32,
    /// Routing structure derived from the graph (`routing::Routing::derive`).
    pub routing: super::routing::Routing,
    /// (server, rail) -> host: `host_index[server * rails_per_server + rail]`, `u32::MAX` where
    /// a server has no NIC for that rail (see [`Topology::host_of`]).
    host_index: Vec<u32>,
    rails_per_server: u32,
}

impl Topology {
    #[inline]
    pub fn node(&self, n: NodeId) -> &Node {
        &self.nodes[n.idx()]
    }
    #[inline]
    pub fn port(&self, p: PortId) -> &Port {
        &self.ports[p.idx()]
    }
    #[inline]
    pub fn link(&self, l: LinkId) -> &Link {
        &self.links[l.idx()]
    }
    #[inline]
    pub fn host_node(&self, h: HostId) -> NodeId {
        self.nics[h.idx()]
    }
    /// The single port of a host's NIC.
    #[inline]
    pub fn host_port(&self, h: HostId) -> PortId {
        PortId(self.nodes[self.nics[h.idx()].idx()].first_port)
    }
    pub fn num_hosts(&self) -> usize {
        self.nics.len()
    }
    /// The host of NIC `rail` of `server` (where workloads place GPU ranks), if it exists.
    #[inline]
    pub fn host_of(&self, server: u32, rail: u16) -> Option<HostId> {
        if rail as u32 >= self.rails_per_server {
            return None;
        }
        let i = server as usize * self.rails_per_server as usize + rail as usize;
        let h = *self.host_index.get(i)?;
        (h != u32::MAX).then_some(HostId(h))
    }
    /// NICs per server (the largest rail index plus one).
    pub fn rails_per_server(&self) -> u32 {
        self.rails_per_server
    }
    pub fn switches(&self) -> impl Iterator<Item = (NodeId, &Node)> {
        self.nodes
            .iter()
            .enumerate()
            .filter(|(_, n)| n.is_switch())
            .map(|(i, n)| (NodeId(i as u32), n))
    }
    /// The first up-link of each of the first `leaves` leaf switches (tier 1, in node order):
    /// a failure spread over leaves, one each; `None` when the fabric has fewer leaves with
    /// up-links (a single-switch fabric has none).
    pub fn first_uplinks(&self, leaves: u32) -> Option<Vec<LinkId>> {
        let ups: Vec<LinkId> = self
            .switches()
            .filter(|(_, n)| n.tier() == 1)
            .filter_map(|(_, n)| n.up_ports().next())
            .map(|p| self.ports[p as usize].link)
            .take(leaves as usize)
            .collect();
        (ups.len() == leaves as usize).then_some(ups)
    }
    /// The node at the other end of port `p`.
    #[inline]
    pub fn peer_node(&self, p: PortId) -> NodeId {
        self.ports[self.ports[p.idx()].peer.idx()].node
    }

    /// Checks the structural invariants listed in the module doc; returns the first violation.
    pub fn check(&self) -> Result<(), CoreError> {
        for (i, p) in self.ports.iter().enumerate() {
            let peer = &self.ports[p.peer.idx()];
            if peer.peer.idx() != i {
                return Err(CoreError::Topology(format!(
                    "port {i}: peer's peer is {}",
                    peer.peer.0
                )));
            }
            if peer.link != p.link {
                return Err(CoreError::Topology(format!(
                    "port {i}: link {} but peer on link {}",
                    p.link.0, peer.link.0
                )));
            }
            let n = &self.nodes[p.node.idx()];
            if !n.ports().contains(&(i as u32)) {
                return Err(CoreError::Topology(format!(
                    "port {i} not in its node's port range"
                )));
            }
        }
        for (i, l) in self.links.iter().enumerate() {
            for e in l.ends {
                if self.ports[e.idx()].link.idx() != i {
                    return Err(CoreError::Topology(format!(
                        "link {i}: end port {} is on link {}",
                        e.0,
                        self.ports[e.idx()].link.0
                    )));
                }
            }
        }
        for (i, n) in self.nodes.iter().enumerate() {
            if n.radix > 0 && n.num_ports > n.radix {
                return Err(CoreError::Topology(format!(
                    "node {i} uses {} ports but has {}",
                    n.num_ports, n.radix
                )));
            }
            if !(n.first_port..=n.first_port + n.num_ports).contains(&n.first_up) {
                return Err(CoreError::Topology(format!(
                    "node {i}: first_up outside its ports"
                )));
            }
        }
        for (h, &n) in self.nics.iter().enumerate() {
            match self.nodes[n.idx()].kind {
                NodeKind::Nic { host, .. } if host.idx() == h => {}
                _ => {
                    return Err(CoreError::Topology(format!(
                        "host {h} does not map to its NIC node"
                    )));
                }
            }
            if self.nodes[n.idx()].num_ports != 1 {
                return Err(CoreError::Topology(format!(
                    "host {h}: a NIC port must have exactly one link"
                )));
            }
        }
        Ok(())
    }
}

/// Builds a [`Topology`] edge by edge; used by the fat-tree builders and the importers.
#[derive(Default)]
pub struct GraphBuilder {
    nodes: Vec<Node>,
    /// Per node, its (peer node, link, is_up) edges in insertion order.
    adj: Vec<Vec<(NodeId, LinkId, bool)>>,
    links: Vec<(NodeId, NodeId, Link)>,
    nics: Vec<NodeId>,
}

impl GraphBuilder {
    pub fn new() -> GraphBuilder {
        GraphBuilder::default()
    }
    pub fn add_nic(&mut self, server: u32, rail: u16) -> NodeId {
        let host = HostId(self.nics.len() as u32);
        let id = self.push(NodeKind::Nic { server, rail, host }, 1);
        self.nics.push(id);
        id
    }
    pub fn add_switch(&mut self, tier: u8, group: u32, index: u32, radix: u32) -> NodeId {
        self.push(NodeKind::Switch { tier, group, index }, radix)
    }
    fn push(&mut self, kind: NodeKind, radix: u32) -> NodeId {
        let id = NodeId(self.nodes.len() as u32);
        let radix = if matches!(kind, NodeKind::Nic { .. }) {
            0
        } else {
            radix
        };
        self.nodes.push(Node {
            kind,
            first_port: 0,
            num_ports: 0,
            first_up: 0,
            radix,
        });
        self.adj.push(Vec::new());
        id
    }
    pub fn num_nodes(&self) -> usize {
        self.nodes.len()
    }
    /// Connects `lower` (NIC or lower-tier switch) to `upper` with a link of the given rate,
    /// length and delay. On `lower` the port faces up; on `upper` it faces down.
    pub fn connect(
        &mut self,
        lower: NodeId,
        upper: NodeId,
        rate: BitRate,
        length_m: f64,
        delay: Time,
        medium: Medium,
    ) -> LinkId {
        let tier = self.nodes[upper.idx()].tier();
        let l = LinkId(self.links.len() as u32);
        self.links.push((
            lower,
            upper,
            Link {
                ends: [PortId(0); 2],
                rate,
                length_m,
                delay,
                tier,
                medium,
            },
        ));
        self.adj[lower.idx()].push((upper, l, true));
        self.adj[upper.idx()].push((lower, l, false));
        l
    }

    /// Lays out ports (down first, then up, each in insertion order), wires peers and derives
    /// the routing structure.
    pub fn finish(self, shape: Shape, tiers: u8, servers: u32) -> Topology {
        let GraphBuilder {
            mut nodes,
            adj,
            links,
            nics,
        } = self;
        let mut ports: Vec<Port> = Vec::with_capacity(links.len() * 2);
        let mut link_ports: Vec<[Option<PortId>; 2]> = vec![[None, None]; links.len()];
        for (i, edges) in adj.iter().enumerate() {
            let node = &mut nodes[i];
            node.first_port = ports.len() as u32;
            node.num_ports = edges.len() as u32;
            let downs = edges.iter().filter(|e| !e.2);
            let ups = edges.iter().filter(|e| e.2);
            node.first_up = node.first_port + edges.iter().filter(|e| !e.2).count() as u32;
            for &(_, l, up) in downs.chain(ups) {
                let pid = PortId(ports.len() as u32);
                ports.push(Port {
                    node: NodeId(i as u32),
                    link: l,
                    peer: PortId(u32::MAX),
                });
                // ends[0] is the lower node's (up-facing) port.
                link_ports[l.idx()][if up { 0 } else { 1 }] = Some(pid);
            }
        }
        let mut out_links = Vec::with_capacity(links.len());
        for (i, (_, _, mut link)) in links.into_iter().enumerate() {
            let [a, b] = link_ports[i];
            let (a, b) = (a.expect("lower end"), b.expect("upper end"));
            ports[a.idx()].peer = b;
            ports[b.idx()].peer = a;
            link.ends = [a, b];
            out_links.push(link);
        }
        let (host_index, rails_per_server) = host_index(&nodes, &nics, servers);
        let mut topo = Topology {
            shape,
            tiers,
            nodes,
            ports,
            links: out_links,
            nics,
            servers,
            planes: 1,
            routing: super::routing::Routing::default(),
            host_index,
            rails_per_server,
        };
        topo.routing = super::routing::Routing::derive(&topo);
        topo
    }
}

/// The dense (server, rail) -> host table behind [`Topology::host_of`].
fn host_index(nodes: &[Node], nics: &[NodeId], servers: u32) -> (Vec<u32>, u32) {
    let nic = |n: &NodeId| match nodes[n.idx()].kind {
        NodeKind::Nic { server, rail, host } => (server, rail as u32, host.0),
        NodeKind::Switch { .. } => unreachable!("nics holds NIC nodes only"),
    };
    let rails = nics.iter().map(|n| nic(n).1 + 1).max().unwrap_or(0);
    let servers = servers.max(nics.iter().map(|n| nic(n).0 + 1).max().unwrap_or(0));
    let mut index = vec![u32::MAX; servers as usize * rails as usize];
    for n in nics {
        let (server, rail, host) = nic(n);
        index[server as usize * rails as usize + rail as usize] = host;
    }
    (index, rails)
}
