//! Wires a folded Clos above placed leaves: 1 tier (one switch), 2 tiers (leaf-spine) or
//! 3 tiers (leaf-spine-core in pods, the core possibly oversubscribed for a `pods` fabric),
//! with the spine and core counts of `sizing`.
//!
//! Links get length 0, delay 0 and `Medium::Unspecified`: the planner assigns lengths and media.
//! Parallel links between the same two switches sit on adjacent ports, so a twin-port OSFP cage
//! (two logical ports, NVIDIA QM97X0 manual) can carry both with one twin-port cable or
//! transceiver.
//!
//! Switch labels (`NodeKind::Switch { group, index }`): a fat-tree leaf is (pod, position in the
//! pod), pod 0 below 3 tiers; a rail leaf (rail-optimized, pods) is (SU, rail); a spine is (pod, index), pod 0 in
//! 2 tiers; a core is (plane, index), plane `j` taking uplink `j` of every leaf. A dual-ToR
//! leaf is (pair, side). In a fabric of several planes (multi-plane, rail-only), plane `p`
//! adds `p·G` to every group label (`G` = the larger of the leaf groups and the uplinks per
//! leaf), so labels stay distinct; each plane is wired as a fabric of its own.

use super::graph::{GraphBuilder, Medium, NodeId, Shape, Topology};
use super::placement::LeafHosts;
use super::pods::spine_up;
use super::sizing::{Sizing, cores_per_plane, pod_spines, spines_2tier};
use super::spec::{Kind, TopologySpec};
use crate::units::Time;

/// Builds the graph for the planes' `leaves` (from `placement::place`) as sized by `sizing`.
pub fn wire(spec: &TopologySpec, sizing: &Sizing, planes: &[Vec<LeafHosts>]) -> Topology {
    let mut w = Wiring {
        b: GraphBuilder::new(),
        spec,
        base: 0,
    };
    // Every NIC first, in host order (plane by plane), then each plane's switches.
    let nics: Vec<Vec<Vec<NodeId>>> = planes
        .iter()
        .map(|leaves| {
            leaves
                .iter()
                .map(|l| l.hosts.iter().map(|&(s, r)| w.b.add_nic(s, r)).collect())
                .collect()
        })
        .collect();
    let stride = sizing.groups.max(sizing.leaf.up).max(1);
    for (p, (leaves, nics)) in planes.iter().zip(&nics).enumerate() {
        w.base = p as u32 * stride;
        w.plane(sizing, leaves, nics);
    }
    let shape = match spec.kind {
        Kind::FatTree => Shape::FatTree,
        Kind::RailOptimized => Shape::RailOptimized,
        Kind::RailOnly => Shape::RailOnly,
        Kind::DualTor => Shape::DualTor,
        Kind::Pods(_) => Shape::Pods,
    };
    let mut t = w.b.finish(shape, sizing.tiers, sizing.servers);
    t.planes = sizing.plane.planes;
    t
}

struct Wiring<'a> {
    b: GraphBuilder,
    spec: &'a TopologySpec,
    /// Added to the group label of every switch of the plane being wired.
    base: u32,
}

impl Wiring<'_> {
    fn switch(&mut self, tier: u8, group: u32, index: u32) -> NodeId {
        self.b
            .add_switch(tier, self.base + group, index, self.spec.switch_radix)
    }

    /// One plane: its leaves above their `nics`, and the Clos above the leaves.
    fn plane(&mut self, sizing: &Sizing, leaves: &[LeafHosts], nics: &[Vec<NodeId>]) {
        let per_pod = match sizing.tiers {
            3 => (sizing.leaf.groups_per_pod * sizing.leaf.leaves_per_group) as usize,
            _ => leaves.len(),
        };
        let leaf_ids: Vec<NodeId> = leaves
            .iter()
            .enumerate()
            .map(|(i, l)| {
                let (group, index) = match sizing.plane.kind {
                    Kind::RailOptimized | Kind::DualTor | Kind::Pods(_) => (l.group, l.rail),
                    Kind::FatTree | Kind::RailOnly => ((i / per_pod) as u32, (i % per_pod) as u32),
                };
                self.switch(1, group, index)
            })
            .collect();
        for (&leaf, hosts) in leaf_ids.iter().zip(nics) {
            for &nic in hosts {
                self.link(nic, leaf);
            }
        }
        let up = sizing.leaf.up;
        match sizing.tiers {
            1 => {}
            2 => self.two_tier(&leaf_ids, up),
            _ => self.three_tier(&leaf_ids, per_pod, up),
        }
    }

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
        let spines: Vec<NodeId> = (0..s).map(|i| self.switch(2, 0, i)).collect();
        for &leaf in leaves {
            for j in 0..up {
                self.link(leaf, spines[(j / per_spine) as usize]);
            }
        }
    }

    /// Pods of `per_pod` leaves, each with its own spines; planes of cores above them. A spine
    /// sends `spine_up(Lp)` links up per plane it serves (`Lp` unless the core is
    /// oversubscribed, module `pods`).
    fn three_tier(&mut self, leaves: &[NodeId], per_pod: usize, up: u32) {
        let k = self.spec.switch_radix;
        let pod = self.spec.kind.pod();
        let pods: Vec<&[NodeId]> = leaves.chunks(per_pod).collect();
        let pod_up: Vec<u32> = pods
            .iter()
            .map(|p| spine_up(pod.as_ref(), p.len() as u32))
            .collect();
        let c = cores_per_plane(&pod_up, k).expect("sizing admits at most k pods");
        let spines: Vec<Vec<NodeId>> = pods
            .iter()
            .zip(&pod_up)
            .enumerate()
            .map(|(p, (pod, &pu))| {
                let sp = pod_spines(pod.len() as u32, pu, up, c, k);
                (0..sp).map(|s| self.switch(2, p as u32, s)).collect()
            })
            .collect();
        let cores: Vec<NodeId> = (0..up * c).map(|i| self.switch(3, i / c, i % c)).collect();
        // Per plane, the next core in round-robin order: every core's load is within one link
        // of the plane's average, and a spine's max(Lp, C) ≥ C links reach every core.
        let mut next = vec![0u32; up as usize];
        for ((pod, pod_spines), &pu) in pods.iter().zip(&spines).zip(&pod_up) {
            let planes = up / pod_spines.len() as u32;
            for &leaf in pod.iter() {
                for j in 0..up {
                    self.link(leaf, pod_spines[(j / planes) as usize]);
                }
            }
            let m = pu.max(c);
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
