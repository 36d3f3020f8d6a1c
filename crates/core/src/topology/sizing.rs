//! Tier and radix arithmetic of the folded Clos: how many hosts a leaf takes, how many spines and
//! cores a (possibly partial) fabric needs, and the largest fabric a radix reaches.
//!
//! The full k-ary fat-tree is Al-Fares, Loukissas & Vahdat, "A scalable, commodity data center
//! network architecture" (SIGCOMM 2008): 2 tiers reach k²/2 hosts with k/2 spines and k leaves;
//! 3 tiers reach k³/4 hosts with 5k²/4 switches (k pods of k/2 leaves and k/2 spines, k²/4
//! cores). Here it is generalised as follows (k = switch radix in logical ports, d:u = leaf
//! oversubscription, h = ⌊k/2⌋):
//!
//! - **Leaf ports.** A leaf keeps `k − ⌈k·u/(d+u)⌉` ports for hosts (never more oversubscribed
//!   than asked: 64 ports at 2:1 give 42 host ports). A fat-tree leaf takes whole servers
//!   (`⌊host ports / nics_per_node⌋` of them); a rail leaf takes one NIC from each server of its
//!   scalable unit (SU), so an SU has as many servers as a leaf has host ports and one leaf per
//!   rail (the NVIDIA DGX SuperPOD pattern: 32 servers × 8 rails on 64-port leaves). A full leaf
//!   with `H` hosts gets `U = ⌈H·u/d⌉` uplinks: exactly H at 1:1, so its uplink capacity equals
//!   its downlink capacity. Every leaf, full or not, is cabled with all `U` uplinks, so a partial
//!   leaf is never more oversubscribed than a full one and servers can be added without
//!   recabling the spine layer.
//! - **1 tier**: a single switch with every port for hosts (no oversubscription to speak of).
//! - **2 tiers**: every leaf connects to every spine with `U/S` parallel links, where `S` is the
//!   fewest spines that terminate all leaf uplinks: the smallest divisor of `U` with
//!   `S·k ≥ L·U` (L leaves). Full fabric: `S = U`, `L ≤ k`.
//! - **3 tiers**: pods of `P = ⌊h / leaves per group⌋` whole leaf groups (h leaves for a
//!   fat-tree). Uplink `j` of every leaf belongs to plane `j`; plane `j` has `C` cores. A pod
//!   with `Lp` leaves has the fewest spines `Sp` (a divisor of `U`; spine `s` serves the planes
//!   `s·U/Sp .. (s+1)·U/Sp`, taking `U/Sp` links from each leaf of its pod) that fit
//!   `(U/Sp)·(Lp + max(Lp, C)) ≤ k`; for each plane it serves, a spine has `max(Lp, C)`
//!   uplinks (as many as its downlinks, so the fabric above the leaves is non-blocking for the
//!   hosts present, and at least one to every core of the plane, so every core reaches every
//!   pod), dealt round-robin over the plane's cores. `C` is the smallest value in
//!   `1 ..= full-pod leaves` with `Σ_pods max(Lp, C) ≤ C·k`. Full fabric: `Sp = U`, `C = h`,
//!   `k` pods.
//! - **Dual-ToR** (a fat-tree whose leaves come in pairs): a server puts the first half of its
//!   NIC ports on one leaf of its pair and the second half on the other, so a pair of leaves
//!   takes `⌊host ports / (n/2)⌋` servers and counts as one leaf group of 2 leaves.
//! - **Pods** (`pods`, module `pods`): rail-optimized scalable units grouped into pods of
//!   `Ps` units (`Lp = Ps·n` leaves), each pod with its own spines, pods joined by cores as in
//!   3 tiers above, except that a spine sends `⌈Lp·u/d⌉` links up per plane it serves at core
//!   oversubscription `d:u` instead of `Lp`, and `C` ranges over `1 ..= ⌈Lp·u/d⌉` of the full
//!   pod. Always 3 tiers. Full fabric: `k` pods, `Sp = U` spines per pod, `C = ⌈Lp·u/d⌉`, so
//!   `k·Lp` leaves, `k·U` spines and `U·C` cores.
//! - **Planes.** A fabric of `P` planes is `P` copies of the fabric of one plane, the plane
//!   holding `n/P` NIC ports of every server (port `r` on plane `r mod P`); rail-only is `n`
//!   planes of one port each, each a fat-tree of 1-port servers. So the closed forms are the
//!   plane's times `P`: with 1-port servers at 1:1, rail-only reaches `k²/2` servers in 2 tiers
//!   with `n·3k/2` switches (`k` leaves and `k/2` spines per rail) and `k³/4` in 3 tiers with
//!   `n·5k²/4`; a partial plane follows the rules above.

use super::spec::{BuildError, Kind, Tiers, TopologySpec};

/// How leaves fill with hosts for a given radix, oversubscription, kind and tier count.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LeafShape {
    /// Hosts (NIC ports) on a full leaf.
    pub hosts: u32,
    /// Uplinks of every leaf.
    pub up: u32,
    /// Leaves in a leaf group: 1 for a fat-tree, one per rail (`nics_per_node`) for rail.
    pub leaves_per_group: u32,
    /// Servers in a full leaf group (a fat-tree leaf, or a rail-optimized scalable unit).
    pub servers_per_group: u32,
    /// Leaf groups in a full pod of a 3-tier fabric: as many as fill half a spine's ports, or
    /// a `pods` fabric's pod.
    pub groups_per_pod: u32,
    /// A `pods` fabric: 3 tiers only.
    pub pods: bool,
}

impl LeafShape {
    /// Leaf shape for `tiers` switch tiers; `hosts == 0` when a server's NICs cannot fit.
    pub fn new(kind: Kind, radix: u32, tiers: u8, oversub: (u32, u32), nics: u32) -> LeafShape {
        let (d, u) = oversub;
        let host_ports = if tiers <= 1 {
            radix
        } else {
            radix - (radix as u64 * u as u64).div_ceil((d + u) as u64) as u32
        };
        let (servers_per_group, hosts, leaves_per_group) = match kind {
            Kind::FatTree => {
                let s = host_ports / nics;
                (s, s * nics, 1)
            }
            Kind::RailOptimized | Kind::Pods(_) => (host_ports, host_ports, nics),
            // A pair of leaves, each taking half of every server's ports.
            Kind::DualTor => {
                let s = if nics >= 2 {
                    host_ports / (nics / 2)
                } else {
                    0
                };
                (s, s * (nics / 2), 2)
            }
            // One rail of a rail-only fabric is a fat-tree of 1-port servers (`Plane::of`).
            Kind::RailOnly => (host_ports / nics, host_ports / nics * nics, 1),
        };
        let up = if tiers <= 1 {
            0
        } else {
            (hosts as u64 * u as u64).div_ceil(d as u64) as u32
        };
        let groups_per_pod = match kind {
            Kind::Pods(p) => p.sus_per_pod(radix, leaves_per_group),
            _ => (radix / 2) / leaves_per_group,
        };
        LeafShape {
            hosts,
            up,
            leaves_per_group,
            servers_per_group,
            groups_per_pod,
            pods: kind.pod().is_some(),
        }
    }

    /// The most servers this shape reaches with `radix` in `tiers` tiers.
    pub fn max_servers(&self, radix: u32, tiers: u8) -> u64 {
        let spg = self.servers_per_group as u64;
        match tiers {
            _ if self.pods && tiers != 3 => 0,
            // One switch: only a single leaf group of one leaf.
            1 if self.leaves_per_group == 1 => spg,
            1 => 0,
            2 => (radix / self.leaves_per_group) as u64 * spg,
            _ => radix as u64 * self.groups_per_pod as u64 * spg,
        }
    }
}

/// One plane of a fabric: its kind, NIC ports per server and how many planes there are.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Plane {
    pub kind: Kind,
    pub nics: u32,
    pub planes: u32,
}

impl Plane {
    /// The plane of a fabric of `kind` over servers of `nics` ports in `planes` planes:
    /// rail-only is one plane per rail, each a fat-tree of 1-port servers.
    pub fn of(kind: Kind, nics: u32, planes: u32) -> Plane {
        match kind {
            Kind::RailOnly => Plane {
                kind: Kind::FatTree,
                nics: 1,
                planes: nics,
            },
            _ => Plane {
                kind,
                nics: nics / planes.max(1),
                planes: planes.max(1),
            },
        }
    }

    /// The plane's leaf shape in `tiers` tiers.
    pub fn leaf(&self, radix: u32, tiers: u8, oversub: (u32, u32)) -> LeafShape {
        LeafShape::new(self.kind, radix, tiers, oversub, self.nics)
    }
}

/// The largest number of hosts (NIC ports) a `radix`-port switch reaches in `tiers` tiers for a
/// kind, leaf oversubscription `down:up` and NICs per server in one plane (see the module doc
/// for the rules). With k = radix at 1:1 and one NIC per server: 2 tiers give k²/2, 3 tiers
/// k³/4.
pub fn max_hosts(kind: Kind, radix: u32, tiers: u8, oversub: (u32, u32), nics: u32) -> u64 {
    if radix < 2 || nics == 0 || oversub.0 == 0 || oversub.1 == 0 {
        return 0;
    }
    let plane = Plane::of(kind, nics, 1);
    plane.leaf(radix, tiers, oversub).max_servers(radix, tiers) * nics as u64
}

/// The smallest divisor `d` of `n` with `ok(d)` (`n` itself when none smaller qualifies).
fn smallest_divisor(n: u32, ok: impl Fn(u32) -> bool) -> u32 {
    (1..=n).find(|&d| n.is_multiple_of(d) && ok(d)).unwrap_or(n)
}

/// Spines of a 2-tier fabric with `leaves` leaves of `up` uplinks each: the smallest divisor
/// `S` of `up` with `S·radix ≥ leaves·up`.
pub fn spines_2tier(leaves: u32, up: u32, radix: u32) -> u32 {
    smallest_divisor(up, |s| s as u64 * radix as u64 >= leaves as u64 * up as u64)
}

/// Cores per plane of a 3-tier fabric whose pods' spines send `pod_up` links up per plane
/// (`Lp` for a fat-tree pod; full pods first): the smallest `C` in `1..=full` with
/// `Σ max(pod_up, C) ≤ C·radix`.
pub fn cores_per_plane(pod_up: &[u32], radix: u32) -> Option<u32> {
    let full = pod_up.iter().copied().max()?;
    (1..=full).find(|&c| {
        let links: u64 = pod_up.iter().map(|&l| l.max(c) as u64).sum();
        links <= c as u64 * radix as u64
    })
}

/// Spines of a pod with `leaves` leaves of `up` uplinks, each spine sending `spine_up` links
/// up per plane, `cores` cores per plane: the smallest divisor `Sp` of `up` with
/// `(up/Sp)·(leaves + max(spine_up, cores)) ≤ radix`.
pub fn pod_spines(leaves: u32, spine_up: u32, up: u32, cores: u32, radix: u32) -> u32 {
    let ports_per_plane = (leaves + spine_up.max(cores)) as u64;
    smallest_divisor(up, |s| (up / s) as u64 * ports_per_plane <= radix as u64)
}

/// What the builder builds: a validated spec's tier count, leaf shape and server count.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sizing {
    pub tiers: u8,
    /// One plane (the whole fabric when `plane.planes == 1`); `leaf` and `groups` are per plane.
    pub plane: Plane,
    pub leaf: LeafShape,
    /// Servers: ⌈gpus / gpus_per_node⌉ (a last, partly filled server still has all its NICs).
    pub servers: u32,
    /// Leaf groups: ⌈servers / servers per group⌉.
    pub groups: u32,
}

impl Sizing {
    /// Validates `spec` and picks the tier count (the fewest that fit for `Tiers::Auto`).
    pub fn of(spec: &TopologySpec) -> Result<Sizing, BuildError> {
        validate(spec)?;
        let servers = spec.gpus.div_ceil(spec.gpus_per_node);
        let plane = Plane::of(spec.kind, spec.nics_per_node, spec.planes);
        let shape = |t: u8| plane.leaf(spec.switch_radix, t, spec.oversubscription);
        let fits = |t: u8| shape(t).max_servers(spec.switch_radix, t) >= servers as u64;
        let tiers = match spec.tiers {
            Tiers::Fixed(t) if fits(t) => t,
            Tiers::Auto => match (1..=3).find(|&t| fits(t)) {
                Some(t) => t,
                None => return Err(too_large(spec, servers)),
            },
            Tiers::Fixed(_) => return Err(too_large(spec, servers)),
        };
        let leaf = shape(tiers);
        Ok(Sizing {
            tiers,
            plane,
            leaf,
            servers,
            groups: servers.div_ceil(leaf.servers_per_group),
        })
    }

    /// Leaves in one plane.
    pub fn leaves(&self) -> u32 {
        self.groups * self.leaf.leaves_per_group
    }
}

/// The most GPUs `spec`'s radix, kind, oversubscription and server shape reach in `tiers` tiers.
pub fn max_gpus(spec: &TopologySpec, tiers: u8) -> u64 {
    Plane::of(spec.kind, spec.nics_per_node, spec.planes)
        .leaf(spec.switch_radix, tiers, spec.oversubscription)
        .max_servers(spec.switch_radix, tiers)
        * spec.gpus_per_node as u64
}

fn err(field: &'static str, problem: String, allowed: impl Into<String>) -> BuildError {
    BuildError {
        field,
        problem,
        allowed: allowed.into(),
    }
}

fn validate(spec: &TopologySpec) -> Result<(), BuildError> {
    if spec.gpus == 0 {
        return Err(err("gpus", "0 GPUs".into(), "a positive number of GPUs"));
    }
    if spec.gpus_per_node == 0 {
        return Err(err(
            "gpus_per_node",
            "0 GPUs per node".into(),
            "a positive number of GPUs per node",
        ));
    }
    if spec.nics_per_node == 0 || spec.nics_per_node > u16::MAX as u32 {
        return Err(err(
            "nics_per_node",
            format!("{} NICs per node", spec.nics_per_node),
            format!("1 to {} NICs per node", u16::MAX),
        ));
    }
    let (d, u) = spec.oversubscription;
    if d == 0 || u == 0 || u > d {
        return Err(err(
            "oversubscription",
            format!("leaf oversubscription {d}:{u}"),
            "down:up with down ≥ up ≥ 1, e.g. 1:1, 2:1, 3:1",
        ));
    }
    if spec.switch_radix < 2 {
        return Err(err(
            "switch_radix",
            format!("switch radix {}", spec.switch_radix),
            "at least 2 ports",
        ));
    }
    if spec.port_rate.bps() == 0 {
        return Err(err(
            "port_rate",
            "port rate 0".into(),
            "a positive port rate",
        ));
    }
    if let Tiers::Fixed(t) = spec.tiers
        && !(1..=3).contains(&t)
    {
        return Err(err("tiers", format!("{t} tiers"), "1, 2, 3 or auto"));
    }
    if spec.planes == 0 || !spec.nics_per_node.is_multiple_of(spec.planes) {
        return Err(err(
            "planes",
            format!(
                "{} planes for {} NIC ports per node",
                spec.planes, spec.nics_per_node
            ),
            format!(
                "a divisor of nics_per_node ({}): each plane takes the same ports of every server",
                spec.nics_per_node
            ),
        ));
    }
    if spec.kind == Kind::RailOnly && spec.planes != 1 {
        return Err(err(
            "planes",
            format!("{} planes with kind rail-only", spec.planes),
            "planes = 1 with rail-only (every rail is already its own plane)",
        ));
    }
    let plane = Plane::of(spec.kind, spec.nics_per_node, spec.planes);
    if spec.kind == Kind::DualTor && !plane.nics.is_multiple_of(2) {
        return Err(err(
            "nics_per_node",
            format!(
                "{} NIC ports per node per plane cannot split over two leaves",
                plane.nics
            ),
            "an even number of NIC ports per node in each plane for a dual-tor fabric",
        ));
    }
    if let Kind::Pods(pod) = spec.kind {
        validate_pod(spec, &pod, plane.nics)?;
    }
    // A fat-tree leaf must take all NICs of a server; check it for a multi-tier leaf.
    let leaf = plane.leaf(spec.switch_radix, 2, spec.oversubscription);
    if leaf.hosts == 0 {
        let host_ports = spec.switch_radix
            - (spec.switch_radix as u64 * u as u64).div_ceil((d + u) as u64) as u32;
        return Err(err(
            "nics_per_node",
            format!(
                "a server's {} NICs do not fit on one {} leaf: radix {} at {d}:{u} leaves \
                 {host_ports} host ports",
                plane.nics,
                spec.kind.name(),
                spec.switch_radix
            ),
            format!(
                "at most {host_ports} NICs per node for a fat-tree, kind rail-optimized, or a \
                 switch with more ports"
            ),
        ));
    }
    Ok(())
}

/// A `pods` fabric: 3 tiers, a core ratio `d:u` with `d ≥ u ≥ 1`, and pods whose spines fit.
fn validate_pod(spec: &TopologySpec, pod: &super::pods::Pod, rails: u32) -> Result<(), BuildError> {
    if let Tiers::Fixed(t) = spec.tiers
        && t != 3
    {
        return Err(err(
            "tiers",
            format!("{t} tiers with kind pods"),
            "3 or auto (a pod fabric is leaves, pod spines and a core; 2 tiers of shared \
             spines is kind rail-optimized)",
        ));
    }
    let (d, u) = pod.core_oversubscription;
    if d == 0 || u == 0 || u > d {
        return Err(err(
            "core_oversubscription",
            format!("pod spine oversubscription {d}:{u}"),
            "down:up with down ≥ up ≥ 1, e.g. 1:1, 3:1, 15:1",
        ));
    }
    let k = spec.switch_radix;
    let most = pod.most_sus(k, rails);
    if most == 0 || pod.sus > most {
        return Err(err(
            "pod_sus",
            format!(
                "{} of {rails} rail leaves per pod at core oversubscription {d}:{u}: a pod \
                 spine of {k} ports takes one link from each leaf and ⌈leaves·{u}/{d}⌉ up",
                match pod.sus {
                    0 => "one scalable unit".to_string(),
                    s => format!("{s} scalable units"),
                }
            ),
            match most {
                0 => "a switch with more ports, or fewer NIC ports per server".to_string(),
                m => format!("1 to {m} scalable units per pod (or leave pod_sus out for {m})"),
            },
        ));
    }
    Ok(())
}

/// The error for a fabric larger than the radix reaches in the allowed tiers.
fn too_large(spec: &TopologySpec, servers: u32) -> BuildError {
    let (d, u) = spec.oversubscription;
    let k = spec.switch_radix;
    let reach: Vec<String> = (1..=3)
        .map(|t| {
            format!(
                "{} GPUs in {t} tier{}",
                max_gpus(spec, t),
                if t > 1 { "s" } else { "" }
            )
        })
        .collect();
    let kind = spec.kind.name();
    let problem = format!(
        "{} GPUs ({servers} servers of {} NICs) do not fit a {kind} fabric of {k}-port switches at \
         {d}:{u}{}: it reaches at most {}",
        spec.gpus,
        spec.nics_per_node,
        match spec.tiers {
            Tiers::Fixed(t) => format!(" in {t} tier{}", if t > 1 { "s" } else { "" }),
            Tiers::Auto => String::new(),
        },
        reach.join(", ")
    );
    let larger = (1..=3).find(|&t| max_gpus(spec, t) >= spec.gpus as u64);
    match (spec.tiers, larger) {
        (Tiers::Fixed(_), Some(t)) => err(
            "tiers",
            problem,
            format!("tiers = {t} or more (or auto) for {} GPUs", spec.gpus),
        ),
        _ => err(
            "switch_radix",
            problem,
            format!(
                "at most {} GPUs with {k}-port switches, or a switch with more ports",
                max_gpus(spec, 3)
            ),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn leaf_ports_follow_the_rule() {
        let shape = |kind, k, o, nics| LeafShape::new(kind, k, 2, o, nics);
        // 64 ports: 1:1 → 32 + 32; 3:1 → 48 + 16; 2:1 → 64 − ⌈64/3⌉ = 42 host ports, 21 up.
        assert_eq!(shape(Kind::RailOptimized, 64, (1, 1), 8).hosts, 32);
        assert_eq!(shape(Kind::RailOptimized, 64, (1, 1), 8).up, 32);
        assert_eq!(shape(Kind::RailOptimized, 64, (3, 1), 8).up, 16);
        let s = shape(Kind::RailOptimized, 64, (2, 1), 8);
        assert_eq!(
            (s.hosts, s.up, s.leaves_per_group, s.servers_per_group),
            (42, 21, 8, 42)
        );
        // A fat-tree leaf takes whole 8-NIC servers: 5 of them in 42 ports, 20 uplinks.
        let s = shape(Kind::FatTree, 64, (2, 1), 8);
        assert_eq!((s.hosts, s.up, s.servers_per_group), (40, 20, 5));
        // One tier: every port for hosts, no uplinks.
        let s = LeafShape::new(Kind::FatTree, 64, 1, (3, 1), 8);
        assert_eq!((s.hosts, s.up), (64, 0));
    }

    #[test]
    fn spine_and_core_counts() {
        // 2 tiers, 32 uplinks on 64 ports: 1 leaf → 1 spine; 8 → 4; 24 → 12 → 16; 64 → 32.
        let s: Vec<u32> = [1, 8, 24, 64]
            .iter()
            .map(|&l| spines_2tier(l, 32, 64))
            .collect();
        assert_eq!(s, [1, 4, 16, 32]);
        // k pods of k/2 leaves need k/2 cores per plane; 3 pods of 32 on 64 ports need 2.
        assert_eq!(cores_per_plane(&[32; 64], 64), Some(32));
        assert_eq!(cores_per_plane(&[32, 32, 32], 64), Some(2));
        assert_eq!(cores_per_plane(&[32; 65], 64), None);
        // A full pod keeps one spine per plane; a 1-leaf pod with 2 cores per plane needs
        // (32/Sp)·(1 + 2) ≤ 64 → Sp = 2.
        assert_eq!(pod_spines(32, 32, 32, 32, 64), 32);
        assert_eq!(pod_spines(1, 1, 32, 2, 64), 2);
    }
}
