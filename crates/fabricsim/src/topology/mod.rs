//! Fabric topologies: the graph the planner and the simulators share, its builders and exports.

pub mod graph;
pub mod routing;
pub mod spec;

pub use graph::{
    GraphBuilder, HostId, Link, LinkId, Medium, Node, NodeId, NodeKind, Port, PortId, Shape,
    Topology,
};
pub use routing::Routing;
pub use spec::{BuildError, Kind, Tiers, TopologySpec};
