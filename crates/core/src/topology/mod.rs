//! Fabric topologies: the graph the planner and the simulators share, its builders and exports.

pub mod clos;
pub mod dot;
pub mod graph;
pub mod placement;
pub mod routing;
pub mod sizing;
pub mod spec;

pub use graph::{
    GraphBuilder, HostId, Link, LinkId, Medium, Node, NodeId, NodeKind, Port, PortId, Shape,
    Topology,
};
pub use routing::Routing;
pub use sizing::{max_gpus, max_hosts};
pub use spec::{BuildError, Kind, Tiers, TopologySpec};

/// Builds the fabric `spec` asks for: validates it, picks the tier count (the fewest that fit
/// for `Tiers::Auto`), places NICs on leaves and wires the Clos above them. The rules for leaf
/// ports, spines and cores (full and partial fabrics) are in `sizing`.
pub fn build(spec: &TopologySpec) -> Result<Topology, BuildError> {
    let sizing = sizing::Sizing::of(spec)?;
    let leaves = placement::place(spec.kind, spec.nics_per_node, &sizing);
    Ok(clos::wire(spec, &sizing, &leaves))
}
