//! What the topology builders are asked to build (from the scenario's [cluster] and [topology]).

use crate::units::BitRate;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Folded-Clos fat-tree; all NICs of a server go to the same leaf.
    FatTree,
    /// Rail-optimized: NIC i of every server in a group goes to the rail-i leaf of that group.
    RailOptimized,
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
}

/// Why a spec cannot be built; `field` names the spec field at fault so the scenario layer can
/// point at the right key (`gpus`, `tiers`, `switch_radix`, `oversubscription`, `nics_per_node`).
#[derive(Clone, Debug, PartialEq)]
pub struct BuildError {
    pub field: &'static str,
    pub problem: String,
    pub allowed: String,
}
