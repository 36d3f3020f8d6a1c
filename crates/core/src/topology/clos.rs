//! Wires a folded Clos above placed leaves: 1 tier (one switch), 2 tiers (leaf-spine) or
//! 3 tiers (leaf-spine-core in pods), with the spine and core counts of `sizing`.
//!
//! Links get length 0, delay 0 and `Medium::Unspecified`: the planner assigns lengths and media.
//! Parallel links between the same two switches sit on adjacent ports, so a twin-port OSFP cage
//! (two logical ports, NVIDIA QM97X0 manual) can carry both with one twin-port cable or
//! transceiver.
//!
//! Switch labels (`NodeKind::Switch { group, index }`): a fat-tree leaf is (pod, position in the
//! pod), pod 0 below 3 tiers; a rail leaf is (SU, rail); a spine is (pod, index), pod 0 in
//! 2 tiers; a core is (plane, index), plane `j` taking uplink `j` of every leaf.

use super::graph::{GraphBuilder, Medium, NodeId, Shape, Topology};
use super::placement::LeafHosts;
use super::sizing::{Sizing, cores_per_plane, pod_spines, spines_2tier};
use super::spec::{Kind, TopologySpec};
use crate::units::Time;

/// Builds the graph for `leaves` (from `placement::place`) as sized by `sizing`.
pub fn wire(spec: &TopologySpec, sizing: &Sizing, leaves: &[LeafHosts]) -> Topology {
    let mut w = Wiring {
        b: GraphBuilder::new(),
        spec,
    };
    let nics: Vec<Vec<NodeId>> = leaves
        .iter()
        .map(|l| l.hosts.iter().map(|&(s, r)| w.b.add_nic(s, r)).collect())
        .collect();
    let per_pod = match sizing.tiers {
        3 => {
            (sizing.leaf.groups_per_pod(spec.switch_radix) * sizing.leaf.leaves_per_group) as usize
        }
        _ => leaves.len(),
    };
    let leaf_ids: Vec<NodeId> = leaves
        .iter()
        .enumerate()
        .map(|(i, l)| {
            let (group, index) = match spec.kind {
                Kind::RailOptimized => (l.group, l.rail),
                Kind::FatTree => ((i / per_pod) as u32, (i % per_pod) as u32),
            };
            w.b.add_switch(1, group, index, spec.switch_radix)
        })
        .collect();
    for (&leaf, hosts) in leaf_ids.iter().zip(&nics) {
        for &nic in hosts {
            w.link(nic, leaf);
        }
    }
    let up = sizing.leaf.up;
    match sizing.tiers {
        1 => {}
        2 => w.two_tier(&leaf_ids, up),
        _ => w.three_tier(&leaf_ids, per_pod, up),
    }
    let shape = match spec.kind {
        Kind::FatTree => Shape::FatTree,
        Kind::RailOptimized => Shape::RailOptimized,
    };
    w.b.finish(shape, sizing.tiers, sizing.servers)
}

struct Wiring<'a> {
    b: GraphBuilder,
    spec: &'a TopologySpec,
}

impl Wiring<'_> {
    fn link(&mut self, lower: NodeId, upper: NodeId) {
        self.b.connect(
            lower,
            upper,
            self.spec.port_rate,
            0.0,
            Time::ZERO,
            Medium::Unspecified,
        );
    }

    /// Every leaf to every spine with `up / S` parallel links (uplinks in blocks per spine).
    fn two_tier(&mut self, leaves: &[NodeId], up: u32) {
        let k = self.spec.switch_radix;
        let s = spines_2tier(leaves.len() as u32, up, k);
        let per_spine = up / s;
        let spines: Vec<NodeId> = (0..s).map(|i| self.b.add_switch(2, 0, i, k)).collect();
        for &leaf in leaves {
            for j in 0..up {
                self.link(leaf, spines[(j / per_spine) as usize]);
            }
        }
    }

    /// Pods of `per_pod` leaves, each with its own spines; planes of cores above them.
    fn three_tier(&mut self, leaves: &[NodeId], per_pod: usize, up: u32) {
        let k = self.spec.switch_radix;
        let pods: Vec<&[NodeId]> = leaves.chunks(per_pod).collect();
        let pod_leaves: Vec<u32> = pods.iter().map(|p| p.len() as u32).collect();
        let c = cores_per_plane(&pod_leaves, k).expect("sizing admits at most k pods");
        let spines: Vec<Vec<NodeId>> = pods
            .iter()
            .enumerate()
            .map(|(p, pod)| {
                let sp = pod_spines(pod.len() as u32, up, c, k);
                (0..sp)
                    .map(|s| self.b.add_switch(2, p as u32, s, k))
                    .collect()
            })
            .collect();
        let cores: Vec<NodeId> = (0..up * c)
            .map(|i| self.b.add_switch(3, i / c, i % c, k))
            .collect();
        // Per plane, the next core in round-robin order: every core's load is within one link
        // of the plane's average, and a spine's max(Lp, C) ≥ C links reach every core.
        let mut next = vec![0u32; up as usize];
        for (pod, pod_spines) in pods.iter().zip(&spines) {
            let planes = up / pod_spines.len() as u32;
            for &leaf in pod.iter() {
                for j in 0..up {
                    self.link(leaf, pod_spines[(j / planes) as usize]);
                }
            }
            let m = (pod.len() as u32).max(c);
            for (s, &spine) in pod_spines.iter().enumerate() {
                let mut targets: Vec<NodeId> = Vec::new();
                for j in s as u32 * planes..(s as u32 + 1) * planes {
                    let n = &mut next[j as usize];
                    targets.extend((0..m).map(|t| cores[(j * c + (*n + t) % c) as usize]));
                    *n = (*n + m) % c;
                }
                targets.sort_unstable();
                for core in targets {
                    self.link(spine, core);
                }
            }
        }
    }
}
