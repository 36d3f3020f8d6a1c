//! Graphviz DOT export (https://graphviz.org/doc/info/lang.html): an undirected graph, one node
//! per NIC port and switch, one edge per link labelled with its rate, each tier on one rank.
//!
//! Node names: `nic_s{server}_r{rail}`; fat-tree leaves `leaf_p{pod}_{index}`; rail leaves
//! `leaf_su{su}_r{rail}`; spines `spine_p{pod}_{index}`; cores `core_pl{plane}_{index}` (see
//! `clos` for the labels). Imported graphs carry no such structure, so their switch names end in
//! the node id to stay unique.

use std::io::{self, Write};

use super::graph::{NodeId, NodeKind, Shape, Topology};

/// The DOT name of node `n`.
pub fn node_name(t: &Topology, n: NodeId) -> String {
    match t.node(n).kind {
        NodeKind::Nic { server, rail, .. } => format!("nic_s{server}_r{rail}"),
        NodeKind::Switch { tier, group, index } => match (&t.shape, tier) {
            (Shape::Imported, _) => format!("sw_t{tier}_g{group}_i{index}_n{}", n.0),
            (Shape::RailOptimized | Shape::Pods, 1) => format!("leaf_su{group}_r{index}"),
            (_, 1) => format!("leaf_p{group}_{index}"),
            (_, 2) => format!("spine_p{group}_{index}"),
            (_, _) => format!("core_pl{group}_{index}"),
        },
    }
}

/// Writes `t` as a DOT graph.
pub fn write(t: &Topology, w: &mut impl Write) -> io::Result<()> {
    let names: Vec<String> = (0..t.nodes.len())
        .map(|i| node_name(t, NodeId(i as u32)))
        .collect();
    writeln!(w, "graph fabric {{")?;
    writeln!(
        w,
        "  // {:?}, {} switch tiers, {} hosts, {} servers, {} links",
        t.shape,
        t.tiers,
        t.num_hosts(),
        t.servers,
        t.links.len()
    )?;
    for tier in 0..=t.tiers {
        let shape = if tier == 0 { "ellipse" } else { "box" };
        writeln!(w, "  {{ rank=same; node [shape={shape}];")?;
        for (i, node) in t.nodes.iter().enumerate() {
            if node.tier() == tier {
                writeln!(w, "    \"{}\";", names[i])?;
            }
        }
        writeln!(w, "  }}")?;
    }
    for l in &t.links {
        let lower = t.port(l.ends[0]).node;
        let upper = t.port(l.ends[1]).node;
        writeln!(
            w,
            "  \"{}\" -- \"{}\" [label=\"{}\"];",
            names[lower.idx()],
            names[upper.idx()],
            l.rate
        )?;
    }
    writeln!(w, "}}")
}
