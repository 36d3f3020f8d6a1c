//! Which servers each job of a shared cluster gets, by its placement policy, and the job's
//! rank [`Placement`] on them.
//!
//! A job takes whole servers (a training scheduler allocates nodes: Slurm's `--exclusive`,
//! Kubernetes' one pod per node with all its GPUs), the jobs in the order written, each from
//! the servers the jobs before it left free. A server's leaf is the leaf switch of its first
//! NIC (rail 0): the leaf itself on a fat-tree, the scalable unit's rail-0 leaf on a
//! rail-optimized fabric. Ranks follow the server list in ascending order, as a scheduler's
//! host list is sorted (Slurm `scontrol show hostnames`).

use crate::workload::placement::Placement;
use fabricsim_core::rng::{Rng, Stream};
use fabricsim_core::topology::{NodeId, Topology};
use fabricsim_input::scenario::jobs::PlacementPolicy;

/// The servers below each leaf, leaves in order of their first server, servers ascending.
pub fn leaves(topo: &Topology) -> Vec<Vec<u32>> {
    let mut leaves: Vec<(NodeId, Vec<u32>)> = Vec::new();
    for s in 0..topo.servers {
        let Some(h) = topo.host_of(s, 0) else {
            continue;
        };
        let leaf = topo.peer_node(topo.host_port(h));
        match leaves.iter_mut().find(|(l, _)| *l == leaf) {
            Some((_, v)) => v.push(s),
            None => leaves.push((leaf, vec![s])),
        }
    }
    leaves.into_iter().map(|(_, v)| v).collect()
}

/// The free servers of a cluster, per leaf, taken as jobs are placed.
#[derive(Clone, Debug)]
pub struct Free {
    leaves: Vec<Vec<u32>>,
}

impl Free {
    pub fn new(leaves: Vec<Vec<u32>>) -> Free {
        Free { leaves }
    }

    /// Free servers left.
    pub fn count(&self) -> usize {
        self.leaves.iter().map(Vec::len).sum()
    }

    /// Takes `n` servers by `policy` (`random` draws from `Rng::stream(seed, Placement, job)`),
    /// ascending; `None` when fewer are free.
    pub fn take(
        &mut self,
        n: usize,
        policy: PlacementPolicy,
        seed: u64,
        job: u64,
    ) -> Option<Vec<u32>> {
        if n > self.count() {
            return None;
        }
        let mut got = Vec::with_capacity(n);
        match policy {
            PlacementPolicy::Packed => {
                for leaf in &mut self.leaves {
                    let k = (n - got.len()).min(leaf.len());
                    got.extend(leaf.drain(..k));
                }
            }
            PlacementPolicy::Spread => {
                while got.len() < n {
                    for leaf in self.leaves.iter_mut().filter(|l| !l.is_empty()) {
                        if got.len() < n {
                            got.push(leaf.remove(0));
                        }
                    }
                }
            }
            PlacementPolicy::Random => {
                let mut all: Vec<u32> = self.leaves.iter().flatten().copied().collect();
                Rng::stream(seed, Stream::Placement, job).shuffle(&mut all);
                got.extend_from_slice(&all[..n]);
                for leaf in &mut self.leaves {
                    leaf.retain(|s| !got.contains(s));
                }
            }
        }
        got.sort_unstable();
        Some(got)
    }
}

/// The rank placement of a job on `servers` of the cluster whose GPUs sit where `world` says:
/// job GPU `g` is local GPU `g % gpus_per_node` of the job's server `g / gpus_per_node`.
pub fn job_placement(world: &Placement, servers: &[u32]) -> Placement {
    let gpn = world.gpus_per_node();
    Placement::new(servers.len() as u32, gpn, |s, l| {
        world.host(servers[s as usize] * gpn + l)
    })
}

/// The leaves (indices into [`leaves`]) that `servers` touch, ascending.
pub fn leaves_touched(leaves: &[Vec<u32>], servers: &[u32]) -> Vec<u32> {
    (0..leaves.len() as u32)
        .filter(|&l| leaves[l as usize].iter().any(|s| servers.contains(s)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn free() -> Free {
        // 3 leaves of 4 servers.
        Free::new((0..3).map(|l| (4 * l..4 * l + 4).collect()).collect())
    }

    #[test]
    fn packed_fills_leaves_in_order_and_spread_deals_them_round_robin() {
        let mut f = free();
        assert_eq!(
            f.take(6, PlacementPolicy::Packed, 1, 0).unwrap(),
            [0, 1, 2, 3, 4, 5]
        );
        assert_eq!(f.take(3, PlacementPolicy::Spread, 1, 1).unwrap(), [6, 7, 8]);
        assert_eq!(f.count(), 3);
        assert_eq!(f.take(4, PlacementPolicy::Packed, 1, 2), None);
        let mut g = free();
        assert_eq!(
            g.take(5, PlacementPolicy::Spread, 1, 0).unwrap(),
            [0, 1, 4, 5, 8]
        );
    }

    #[test]
    fn random_is_seeded_disjoint_and_fragmented() {
        let mut a = free();
        let x = a.take(4, PlacementPolicy::Random, 7, 0).unwrap();
        let y = a.take(4, PlacementPolicy::Random, 7, 1).unwrap();
        assert!(x.iter().all(|s| !y.contains(s)));
        assert_eq!(free().take(4, PlacementPolicy::Random, 7, 0).unwrap(), x);
        assert_ne!(free().take(4, PlacementPolicy::Random, 8, 0).unwrap(), x);
        assert_eq!(a.count(), 4);
    }
}
