//! Fabric topologies: the graph the planner and the simulators share, its builders and exports.

pub mod clos;
pub mod dot;
pub mod graph;
pub mod placement;
pub mod pods;
pub mod pxn;
pub mod routing;
pub mod sizing;
pub mod spec;

pub use graph::{
    GraphBuilder, HostId, Link, LinkId, Medium, Node, NodeId, NodeKind, Port, PortId, Shape,
    Topology,
};
pub use pods::Pod;
pub use routing::Routing;
pub use sizing::{Plane, max_gpus, max_hosts};
pub use spec::{BuildError, Kind, Tiers, TopologySpec};

/// Switches on the up/down path from `src` to `dst`: up from `src`'s leaf to the first switch
/// that has `dst` below it (tier T), then down: 2T - 1. `None` when `dst` is unreachable.
pub fn switch_hops(t: &Topology, src: HostId, dst: HostId) -> Option<u32> {
    up_down(t, src, dst).map(|(hops, _)| hops)
}

/// [`switch_hops`] and the path's propagation delay, the links up from `src` (the first up
/// port at each switch) taken as mirrored by those down to `dst`.
pub fn up_down(t: &Topology, src: HostId, dst: HostId) -> Option<(u32, crate::units::Time)> {
    let up = t.host_port(src);
    let mut delay = t.link(t.port(up).link).delay.0;
    let mut n = t.peer_node(up);
    while !t.routing.is_below(n, dst) {
        let p = *t.routing.up_ports(n).first()?;
        delay += t.link(t.port(p).link).delay.0;
        n = t.peer_node(p);
    }
    Some((
        2 * t.node(n).tier() as u32 - 1,
        crate::units::Time(2 * delay),
    ))
}

/// Builds the fabric `spec` asks for: validates it, picks the tier count (the fewest that fit
/// for `Tiers::Auto`), places NICs on leaves and wires the Clos above them. The rules for leaf
/// ports, spines and cores (full and partial fabrics) are in `sizing`.
pub fn build(spec: &TopologySpec) -> Result<Topology, BuildError> {
    let sizing = sizing::Sizing::of(spec)?;
    let leaves = placement::place(&sizing);
    Ok(clos::wire(spec, &sizing, &leaves))
}
