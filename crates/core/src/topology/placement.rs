//! Which NIC port sits on which leaf, and the order hosts are numbered in.
//!
//! Hosts are numbered leaf by leaf (leaves in group order, groups in pod order), so the hosts
//! below any switch form one contiguous range per leaf, pod or plane and the routing tables stay
//! a few ranges per switch (`routing`).
//!
//! - Fat-tree: all NICs of a server on the same leaf; leaf `l` takes servers
//!   `l·s .. (l+1)·s` (s servers per leaf), each server's NICs in rail order.
//! - Rail-optimized: scalable unit (SU) `g` holds servers `g·s .. (g+1)·s` and one leaf per rail;
//!   NIC `r` of every server of the SU goes to the rail-`r` leaf of that SU (NVIDIA DGX SuperPOD
//!   reference architecture; "rail-optimized" in Wang et al., "Rail-only", arXiv 2307.12169 §2).
//! - Dual-ToR: a group's two leaves take the same servers, leaf `t` their ports
//!   `t·n/2 .. (t+1)·n/2`.
//! - Planes: the hosts of plane 0 first, then plane 1, ...; port `q` of a server in plane `p`
//!   is its NIC port `q·P + p` (port `r` on plane `r mod P`). A rail-only fabric is one plane
//!   per rail.

use super::sizing::Sizing;
use super::spec::Kind;

/// One leaf: its label and its hosts as (server, rail) in host order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LeafHosts {
    /// Leaf group: the SU (rail-optimized), the pair (dual-ToR) or the leaf's position.
    pub group: u32,
    /// Position in the group: the rail (rail-optimized), the side of the pair (dual-ToR) or 0.
    pub rail: u32,
    pub hosts: Vec<(u32, u16)>,
}

/// The leaves of each plane, planes in order, each plane's leaves in host order.
pub fn place(sizing: &Sizing) -> Vec<Vec<LeafHosts>> {
    let p = sizing.plane;
    (0..p.planes)
        .map(|plane| {
            let mut leaves = place_plane(p.kind, p.nics, sizing);
            for h in leaves.iter_mut().flat_map(|l| l.hosts.iter_mut()) {
                h.1 = (h.1 as u32 * p.planes + plane) as u16;
            }
            leaves
        })
        .collect()
}

/// The leaves of one plane whose servers have `nics` ports each (numbered 0..nics).
fn place_plane(kind: Kind, nics: u32, sizing: &Sizing) -> Vec<LeafHosts> {
    let spg = sizing.leaf.servers_per_group;
    let mut leaves = Vec::with_capacity(sizing.leaves() as usize);
    let ports = |servers: std::ops::Range<u32>, rails: std::ops::Range<u32>| {
        servers
            .flat_map(move |s| rails.clone().map(move |r| (s, r as u16)))
            .collect()
    };
    for g in 0..sizing.groups {
        let servers = g * spg..((g + 1) * spg).min(sizing.servers);
        match kind {
            Kind::FatTree | Kind::RailOnly => leaves.push(LeafHosts {
                group: g,
                rail: 0,
                hosts: ports(servers, 0..nics),
            }),
            Kind::DualTor => leaves.extend((0..2).map(|t| LeafHosts {
                group: g,
                rail: t,
                hosts: ports(servers.clone(), t * nics / 2..(t + 1) * nics / 2),
            })),
            Kind::RailOptimized | Kind::Pods(_) => leaves.extend((0..nics).map(|r| LeafHosts {
                group: g,
                rail: r,
                hosts: ports(servers.clone(), r..r + 1),
            })),
        }
    }
    leaves
}
