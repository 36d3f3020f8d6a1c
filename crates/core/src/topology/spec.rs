//! What the topology builders are asked to build (from the scenario's [cluster] and [topology]).

use super::pods::Pod;
use crate::units::BitRate;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Folded-Clos fat-tree; all NICs of a server go to the same leaf.
    FatTree,
    /// Rail-optimized: NIC i of every server in a group goes to the rail-i leaf of that group.
    RailOptimized,
    /// Rail-only: every rail is its own fabric, no spine joins two rails; traffic between rails
    /// crosses the server's NVLink to the NIC on the destination's rail (PXN) (Wang et al.,
    /// "How to Build Low-cost Networks for Large Language Models (without Sacrificing
    /// Performance)", arXiv 2307.12169, 2023).
    RailOnly,
    /// Dual-ToR: a server's NIC ports split over a pair of leaves, the first half on one and the
    /// second half on the other, both leaves above the same servers (Qian et al., "Alibaba HPN: A
    /// Data Center Network for Large Language Model Training", SIGCOMM 2024, "non-stacked dual-ToR").
    DualTor,
    /// Pods of rail-optimized scalable units, each pod with its own spines, pods joined by a
    /// core tier (`pods`: the DGX SuperPOD's scalable units, Meta's AI Zones, HPN's pods).
    Pods(Pod),
}

impl Kind {
    /// The `[topology] kind` value that names it.
    pub fn name(self) -> &'static str {
        match self {
            Kind::FatTree => "fat-tree",
            Kind::RailOptimized => "rail-optimized",
            Kind::RailOnly => "rail-only",
            Kind::DualTor => "dual-tor",
            Kind::Pods(_) => "pods",
        }
    }

    /// The pod shape of a `pods` fabric.
    pub fn pod(self) -> Option<Pod> {
        match self {
            Kind::Pods(p) => Some(p),
            _ => None,
        }
    }

    /// Every kind, in the order reports list them (pods at their largest, non-blocking).
    pub const ALL: [Kind; 5] = [
        Kind::FatTree,
        Kind::RailOptimized,
        Kind::RailOnly,
        Kind::DualTor,
        Kind::Pods(Pod::LARGEST),
    ];
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tiers {
    /// The fewest tiers that fit.
    Auto,
    Fixed(u8),
}

#[derive(Clone, Debug, PartialEq)]
pub struct TopologySpec {
    pub gpus: u32,
    pub gpus_per_node: u32,
    pub nics_per_node: u32,
    pub kind: Kind,
    pub tiers: Tiers,
    /// Leaf oversubscription as down:up (1:1 is non-blocking).
    pub oversubscription: (u32, u32),
    /// Logical switch ports at `port_rate` (radix).
    pub switch_radix: u32,
    /// Rate of every switch port and NIC port.
    pub port_rate: BitRate,
    /// Parallel fabrics (multi-plane): NIC port `r` of every server sits on plane `r % planes`,
    /// each plane a separate fabric of `kind` with no switch shared between planes (Alibaba HPN
    /// dual-plane, SIGCOMM 2024; NVIDIA Spectrum-X multiplane, "NVIDIA Spectrum-X Network
    /// Platform Architecture" white paper, 2024). 1: one fabric.
    pub planes: u32,
}

/// Why a spec cannot be built; `field` names the spec field at fault so the scenario layer can
/// point at the right key (`gpus`, `tiers`, `switch_radix`, `oversubscription`, `nics_per_node`, `planes`,
/// `pod_sus`, `core_oversubscription`).
#[derive(Clone, Debug, PartialEq)]
pub struct BuildError {
    pub field: &'static str,
    pub problem: String,
    pub allowed: String,
}
