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

use super::sizing::Sizing;
use super::spec::Kind;

/// One leaf: its label and its hosts as (server, rail) in host order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LeafHosts {
    /// Leaf group: the SU (rail-optimized) or the leaf's position (fat-tree).
    pub group: u32,
    /// Position in the group: the rail (rail-optimized) or 0 (fat-tree).
    pub rail: u32,
    pub hosts: Vec<(u32, u16)>,
}

/// The leaves of the fabric in host order.
pub fn place(kind: Kind, nics_per_node: u32, sizing: &Sizing) -> Vec<LeafHosts> {
    let spg = sizing.leaf.servers_per_group;
    let mut leaves = Vec::with_capacity(sizing.leaves() as usize);
    for g in 0..sizing.groups {
        let servers = g * spg..((g + 1) * spg).min(sizing.servers);
        match kind {
            Kind::FatTree => leaves.push(LeafHosts {
                group: g,
                rail: 0,
                hosts: servers
                    .flat_map(|s| (0..nics_per_node).map(move |r| (s, r as u16)))
                    .collect(),
            }),
            Kind::RailOptimized => leaves.extend((0..nics_per_node).map(|r| LeafHosts {
                group: g,
                rail: r,
                hosts: servers.clone().map(|s| (s, r as u16)).collect(),
            })),
        }
    }
    leaves
}
