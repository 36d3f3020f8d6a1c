//! A dense all-to-all (every rank sends every other one the same bytes on each channel, all at
//! once) run as flow classes instead of one flow per message: 134 M messages at 4,096 GPUs and
//! 8 channels, which no per-message state fits in memory.
//!
//! A class is every flow from one leaf to another (or within one leaf). Its flows start
//! together with the same bytes, and under ECMP taken as an even split of each flow over its
//! equal-cost paths (the fluid limit of hashing many flows; `PathModel::Spray` over every
//! candidate is the per-flow engine's form of it), the flows of a class cross the same links
//! in the same shares but for their own NICs' links, where every flow of a NIC is alike. So
//! when the per-flow max-min allocation gives a class's flows one rate, the classes' max-min
//! (`weighted`) is that allocation, and the completion times follow exactly: equal work at
//! equal rates ends together. Links are grouped by the classes that load them and by how much
//! (a group is filled as one link); a grouping that does not hold for every link is refused,
//! and the caller runs the messages per flow.
//!
//! Exact against the per-flow engine when its flows of a class do share one rate: an even
//! split (`tests/flow_dense.rs` checks it), no loss model, and more flows than
//! `FlowParams::lossless_max_active`, above which the per-flow engine ends its lossless models
//! (`hol`, `nic_send`, port service) at its first solve. On hashed ECMP it leaves out what
//! hashing adds, its collisions: it runs only where they are small, with enough flows per
//! link that their largest relative excess is bounded within `calibration::HASH_SPREAD_MAX`
//! (docs/flow-calibration.md has the figures). The effects that set per-flow caps at a flow's
//! start (`dcqcn_incast`, `dcqcn_victim`) are not applied.
//! A flow's arrival takes its class's slowest path (a sprayed message waits for its last
//! part). NVLink transfers take the per-flow engine's pipe: a host's transfers one after
//! another at the NVLink rate.

use std::collections::BTreeMap;

use super::calibration::HASH_SPREAD_MAX;
use super::compose::Effects;
use super::fluid::limits;
use super::params::FlowParams;
use super::paths::{self, PathModel, directed_link};
use super::rate_model::RateModel;
use super::state::PS_PER_S;
use super::weighted::Weighted;
use crate::error::FlowError;
use fabricsim_core::message::MessageDag;
use fabricsim_core::topology::{HostId, NodeId, Topology};
use fabricsim_core::units::BitRate;
use fabricsim_mech::{SimParams, entropy};

/// The largest common scale of the classes' path shares (`Weighted`'s `Q`).
const MAX_SCALE: u64 = 1 << 40;

/// The all-to-all: rank `r` on host `hosts[r]` in server `servers[r]` sends `bytes` to every
/// other rank on each of `channels` channels; ranks of one server over NVLink at `nvlink`.
pub struct AllToAll<'a> {
    pub hosts: &'a [HostId],
    pub servers: &'a [u32],
    pub bytes: u64,
    pub channels: u32,
    pub nvlink: BitRate,
}

/// What a dense run gave.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DenseRun {
    /// The last sender completion (ps).
    pub end_ps: u64,
    /// Payload over the fabric and over NVLink.
    pub fabric_bytes: u64,
    pub nvlink_bytes: u64,
    /// Flows over the fabric, the classes they ran as, the link groups, the solves.
    pub flows: u64,
    pub classes: u64,
    pub groups: u64,
    pub solves: u64,
}

/// Why a dense all-to-all runs per flow instead.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PerFlow {
    /// The flow engine models loss per flow.
    Loss,
    /// Few enough flows that the per-flow engine keeps its lossless models (and fits).
    Few,
    /// A message's parts over the connection's QPs differ in size.
    UnevenParts,
    /// The fabric's paths are not the even structure the classes need (paths of unequal
    /// length, links of a group loaded unequally, shares past the common scale).
    Irregular,
    /// Hashed ECMP with too few flows per link for an even split
    /// (`calibration::HASH_SPREAD_MAX`).
    Collisions,
    /// A fabric of parallel planes (rail-only, multi-plane): messages between planes are
    /// relayed over NVLink to the port on the destination's plane (`topology::pxn::relay`),
    /// which the per-message run does and flow classes do not.
    Planes,
    /// Links down since before the run: the per-flow engine routes each flow around them.
    FailedLinks,
}

impl PerFlow {
    /// Why, in words, for the user; `None` for `Few`, the usual case of a small run, which
    /// costs nothing to run per flow.
    pub fn said(self) -> Option<&'static str> {
        match self {
            PerFlow::Few => None,
            PerFlow::Loss => Some("the flow engine models loss per flow"),
            PerFlow::UnevenParts => Some("its parts over the connection's QPs differ in size"),
            PerFlow::Irregular => {
                Some("the fabric's paths are not the even structure flow classes need")
            }
            PerFlow::Collisions => Some("hashed ECMP has too few flows per link for an even split"),
            PerFlow::Planes => {
                Some("traffic between the fabric's planes is relayed over NVLink (PXN) per message")
            }
            PerFlow::FailedLinks => Some("a failed link's reroute is taken per flow"),
        }
    }
}

/// Runs `a` on `topo` as flow classes; `Ok(Err(why))` when it must run per flow.
pub fn all_to_all(
    topo: &Topology,
    p: &SimParams,
    fp: &FlowParams,
    a: &AllToAll,
) -> Result<Result<DenseRun, PerFlow>, FlowError> {
    p.validate()?;
    fp.rates.validate()?;
    if topo.planes > 1 {
        return Ok(Err(PerFlow::Planes));
    }
    let qpc = p.cc.qps_per_connection.max(1);
    let parts = entropy::parts(a.bytes, qpc);
    let part = entropy::part_bytes(a.bytes, qpc, 0);
    if (0..parts).any(|j| entropy::part_bytes(a.bytes, qpc, j) != part) {
        return Ok(Err(PerFlow::UnevenParts));
    }
    if fp.loss.is_some() {
        return Ok(Err(PerFlow::Loss));
    }
    if !fp.failed_links.is_empty() {
        return Ok(Err(PerFlow::FailedLinks));
    }
    let shape = Shape::of(topo, a);
    let per_pair = a.channels as u64 * parts as u64;
    let flows = shape.net_pairs * per_pair;
    if flows <= fp.lossless_max_active {
        return Ok(Err(PerFlow::Few));
    }
    let mut caps = paths::capacities(topo);
    Effects::new(topo, p, &MessageDag::default(), fp, 0, 0).link_caps(topo, p, &mut caps);
    let Some(classes) = Classes::build(topo, p, &shape, per_pair, &caps, &fp.rates) else {
        return Ok(Err(PerFlow::Irregular));
    };
    if fp.paths == PathModel::Hash && classes.spread > HASH_SPREAD_MAX {
        return Ok(Err(PerFlow::Collisions));
    }
    // Every flow of the run starts after its NIC's latency with the same work.
    let wire = paths::wire_bytes(p, part).max(1) as u128 * 8 * PS_PER_S;
    let k = classes.solver.classes();
    let mut work = vec![wire; k];
    let mut active = vec![true; k];
    let mut rate = vec![0u64; k];
    let mut now = p.nic_latency.ps();
    let mut end = 0u64;
    let mut solves = 0u64;
    while active.iter().any(|&x| x) {
        classes.solver.solve(&active, &mut rate);
        solves += 1;
        let dt = (0..k)
            .filter(|&c| active[c])
            .map(|c| work[c].div_ceil(rate[c].max(1) as u128) as u64)
            .min()
            .expect("an active class");
        now += dt;
        for c in 0..k {
            if !active[c] {
                continue;
            }
            let moved = rate[c] as u128 * dt as u128;
            if moved >= work[c] {
                active[c] = false;
                end = end.max(now + classes.lat_ps[c] + classes.ack_ps[c]);
            } else {
                work[c] -= moved;
            }
        }
    }
    let nv = nvlink_end(a, &shape);
    Ok(Ok(DenseRun {
        end_ps: end.max(nv),
        fabric_bytes: shape.net_pairs * a.channels as u64 * a.bytes,
        nvlink_bytes: shape.nv_pairs * a.channels as u64 * a.bytes,
        flows,
        classes: k as u64,
        groups: classes.solver.groups() as u64,
        solves,
    }))
}

/// When the last NVLink transfer ends: a host sends its ranks' transfers to the other ranks of
/// their server one after another (`fluid`'s NVLink pipe), each `bytes` at the NVLink rate.
fn nvlink_end(a: &AllToAll, shape: &Shape) -> u64 {
    let one = a.nvlink.serialize(a.bytes).ps();
    let mut per_host: BTreeMap<u32, u64> = BTreeMap::new();
    for r in 0..a.hosts.len() {
        let peers = shape.server_ranks[&a.servers[r]] - 1;
        *per_host.entry(a.hosts[r].0).or_default() += peers * a.channels as u64;
    }
    per_host.values().map(|&m| m * one).max().unwrap_or(0)
}

/// Where the ranks are: per leaf, its hosts with their rank counts; per server and leaf, its
/// ranks there.
struct Shape {
    /// Leaves with ranks, in node order, and each host's rank count under them.
    leaves: Vec<(NodeId, Vec<(HostId, u64)>)>,
    /// Per (server, leaf index): ranks of the server under the leaf.
    server_leaf: BTreeMap<(u32, u32), u64>,
    /// Per leaf index: ranks under it.
    leaf_ranks: Vec<u64>,
    server_ranks: BTreeMap<u32, u64>,
    /// Ordered rank pairs in different servers (over the fabric) and in one server (NVLink).
    net_pairs: u64,
    nv_pairs: u64,
    /// Per host: its server.
    host_server: BTreeMap<u32, u32>,
}

impl Shape {
    fn of(topo: &Topology, a: &AllToAll) -> Shape {
        let leaf = |h: HostId| topo.peer_node(topo.host_port(h));
        let mut by_leaf: BTreeMap<NodeId, BTreeMap<u32, u64>> = BTreeMap::new();
        let mut server_ranks: BTreeMap<u32, u64> = BTreeMap::new();
        let mut host_server = BTreeMap::new();
        for (&h, &s) in a.hosts.iter().zip(a.servers) {
            *by_leaf.entry(leaf(h)).or_default().entry(h.0).or_default() += 1;
            *server_ranks.entry(s).or_default() += 1;
            host_server.insert(h.0, s);
        }
        let leaves: Vec<(NodeId, Vec<(HostId, u64)>)> = by_leaf
            .into_iter()
            .map(|(l, hs)| (l, hs.into_iter().map(|(h, c)| (HostId(h), c)).collect()))
            .collect();
        let mut server_leaf = BTreeMap::new();
        let mut leaf_ranks = Vec::new();
        for (i, (_, hs)) in leaves.iter().enumerate() {
            leaf_ranks.push(hs.iter().map(|h| h.1).sum());
            for &(h, c) in hs {
                *server_leaf
                    .entry((host_server[&h.0], i as u32))
                    .or_default() += c;
            }
        }
        let n = a.hosts.len() as u64;
        let nv_pairs: u64 = server_ranks.values().map(|&r| r * (r - 1)).sum();
        Shape {
            leaves,
            server_leaf,
            leaf_ranks,
            server_ranks,
            net_pairs: n * (n - 1) - nv_pairs,
            nv_pairs,
            host_server,
        }
    }

    /// Fabric peers of host `h` (with `c` ranks) under leaf `b`: its ranks times the ranks
    /// there outside its server.
    fn peers(&self, h: HostId, c: u64, b: usize) -> u64 {
        let own = self
            .server_leaf
            .get(&(self.host_server[&h.0], b as u32))
            .copied()
            .unwrap_or(0);
        c * (self.leaf_ranks[b] - own)
    }
}

/// The classes and what the loop reads of them.
struct Classes {
    solver: Weighted,
    /// Per class: its slowest path's one-way latency and its reverse (the ACK's), ps.
    lat_ps: Vec<u64>,
    ack_ps: Vec<u64>,
    /// The hash-collision spread `sqrt(2 ln L / F)` of the L inner links (between switches)
    /// the classes load, F the fewest flows one of them carries (`calibration::HASH_SPREAD_MAX`).
    spread: f64,
}

/// One class's links with their loads, from which both passes read: (link, load) where load
/// over `scale` is the class's flows on that link per flow of rate.
struct Usage {
    links: Vec<(u32, u128)>,
    scale: u128,
    /// The slowest path's latency from the source leaf's NICs to the destination's.
    lat_ps: u64,
}

impl Classes {
    fn build(
        topo: &Topology,
        p: &SimParams,
        shape: &Shape,
        per_pair: u64,
        caps: &[u64],
        rates: &RateModel,
    ) -> Option<Classes> {
        let nl = shape.leaves.len();
        let pairs: Vec<(usize, usize)> = (0..nl)
            .flat_map(|a| (0..nl).map(move |b| (a, b)))
            .filter(|&(a, b)| {
                shape.leaves[a]
                    .1
                    .iter()
                    .any(|&(h, c)| shape.peers(h, c, b) > 0)
            })
            .collect();
        let mut sc = Scratch::new(topo);
        let mut usage = |&pair: &(usize, usize)| usage(topo, p, shape, per_pair, pair, &mut sc);
        // Pass 1: each link's signature, the classes and loads on it in class order (pass 2
        // checks that links of one signature carry the same, so a collision is refused).
        let mut mix = vec![0u128; caps.len()];
        let mut used = vec![false; caps.len()];
        let mut carried = vec![0f64; caps.len()];
        for (k, pair) in pairs.iter().enumerate() {
            let u = usage(pair)?;
            for &(l, load) in &u.links {
                carried[l as usize] += load as f64 / u.scale as f64;
                let x = &mut mix[l as usize];
                *x = x
                    .wrapping_mul(0x9E37_79B9_7F4A_7C15_F39C_C060_5CED_C835)
                    .wrapping_add(((k as u128) << 96) ^ load);
                used[l as usize] = true;
            }
        }
        let inner = |l: usize| used[l] && topo.links[l / 2].tier > 1;
        let fewest = (0..caps.len()).filter(|&l| inner(l)).map(|l| carried[l]);
        let fewest = fewest.fold(f64::INFINITY, f64::min);
        let count = (0..caps.len()).filter(|&l| inner(l)).count() as f64;
        let spread = if count > 0.0 {
            (2.0 * count.ln().max(0.0) / fewest).sqrt()
        } else {
            0.0
        };
        let mut group_of = vec![u32::MAX; caps.len()];
        let mut index: BTreeMap<(u128, u64), u32> = BTreeMap::new();
        let mut group_cap = Vec::new();
        let mut group_size: Vec<u64> = Vec::new();
        for l in (0..caps.len()).filter(|&l| used[l]) {
            let next = index.len() as u32;
            let g = *index.entry((mix[l], caps[l])).or_insert(next);
            if g == next {
                group_cap.push(caps[l]);
                group_size.push(0);
            }
            group_of[l] = g;
            group_size[g as usize] += 1;
        }
        // Pass 2: each class's load per group, the same on every link of it (else refused).
        let mut rows: Vec<Row> = Vec::with_capacity(pairs.len());
        for pair in &pairs {
            let u = usage(pair)?;
            let mut entries: Vec<(u32, u128, u64)> = Vec::new();
            let mut slowest = u64::MAX;
            for &(l, load) in &u.links {
                slowest = slowest.min(caps[l as usize]);
                let g = group_of[l as usize];
                match entries.iter_mut().find(|e| e.0 == g) {
                    Some(e) if e.1 == load => e.2 += 1,
                    Some(_) => return None,
                    None => entries.push((g, load, 1)),
                }
            }
            if entries.iter().any(|e| e.2 != group_size[e.0 as usize]) {
                return None;
            }
            rows.push(Row {
                entries,
                scale: u.scale,
                slowest,
                lat_ps: u.lat_ps,
                pair: *pair,
            });
        }
        // The common scale: the least common multiple of the classes' (reduced) scales.
        let mut q: u128 = 1;
        let reduced: Vec<u128> = rows
            .iter()
            .map(|c| c.entries.iter().fold(c.scale, |g, x| gcd(g, x.1)))
            .collect();
        for (c, r) in rows.iter().zip(&reduced) {
            let s = c.scale / r;
            q = q / gcd(q, s) * s;
            if q > MAX_SCALE as u128 {
                return None;
            }
        }
        let mut solver = Weighted::new(&group_cap, q as u64);
        let mut lat_ps = Vec::with_capacity(rows.len());
        let mut at = BTreeMap::new();
        let mut entries = Vec::new();
        for (k, (c, r)) in rows.iter().zip(&reduced).enumerate() {
            entries.clear();
            for &(g, load, _) in &c.entries {
                let w = load / r * (q / (c.scale / r));
                entries.push((g, u64::try_from(w).ok()?));
            }
            solver.push_class(limits(rates, c.slowest, 1.0).0, &entries);
            lat_ps.push(c.lat_ps);
            at.insert(c.pair, k);
        }
        // The ACK's latency: the reverse class's (the same tiers back).
        let ack_ps = rows
            .iter()
            .enumerate()
            .map(|(k, c)| {
                at.get(&(c.pair.1, c.pair.0))
                    .map_or(lat_ps[k], |&r| lat_ps[r])
            })
            .collect();
        Some(Classes {
            solver,
            lat_ps,
            ack_ps,
            spread,
        })
    }
}

/// A class's row before the common scale: per group its load on each link and its link count,
/// its own scale, its slowest link (bit/s), its slowest path's latency, its (source, destination)
/// leaves.
struct Row {
    entries: Vec<(u32, u128, u64)>,
    scale: u128,
    slowest: u64,
    lat_ps: u64,
    pair: (usize, usize),
}

fn gcd(a: u128, b: u128) -> u128 {
    if b == 0 { a } else { gcd(b, a % b) }
}

/// What [`usage`] reuses from class to class: per directed link and per node an accumulator
/// and the list of those touched (a class reaches a few thousand of a fabric's links).
struct Scratch {
    link: Vec<u128>,
    links: Vec<u32>,
    node: Vec<(u128, u64)>,
    nodes: Vec<NodeId>,
}

impl Scratch {
    fn new(topo: &Topology) -> Scratch {
        Scratch {
            link: vec![0; 2 * topo.links.len()],
            links: Vec::new(),
            node: vec![(0, 0); topo.nodes.len()],
            nodes: Vec::new(),
        }
    }
}

/// The links of the class from leaf `a` to leaf `b` with its loads on them: each source NIC's
/// up link carrying its flows, the paths between the leaves (each flow split evenly at every
/// switch over the next hops toward `b`), each destination NIC's down link; `None` when the
/// paths from `a` do not all reach `b` in the same number of hops.
fn usage(
    topo: &Topology,
    p: &SimParams,
    shape: &Shape,
    per_pair: u64,
    (a, b): (usize, usize),
    sc: &mut Scratch,
) -> Option<Usage> {
    let (la, src) = (shape.leaves[a].0, &shape.leaves[a].1);
    let (lb, dst) = (shape.leaves[b].0, &shape.leaves[b].1);
    let enter = |node: NodeId| {
        if topo.nodes[node.idx()].is_switch() {
            p.switch_latency.ps()
        } else {
            p.nic_latency.ps()
        }
    };
    let delay = |port: u32| topo.links[topo.ports[port as usize].link.idx()].delay.ps();
    // The paths between the leaves, layer by layer: (node, share numerator, latency so far),
    // shares over `scale`.
    let mut layer: Vec<(NodeId, u128, u64)> = vec![(la, 1, 0)];
    let mut scale: u128 = 1;
    let toward = dst[0].0;
    sc.links.clear();
    while layer.iter().any(|x| x.0 != lb) {
        if layer.iter().any(|x| x.0 == lb) {
            for &l in &sc.links {
                sc.link[l as usize] = 0;
            }
            return None;
        }
        let lcm = layer.iter().fold(1u128, |m, x| {
            let c = topo.routing.next_hops_up(x.0, toward).0.len() as u128;
            m / gcd(m, c) * c
        });
        scale = scale.checked_mul(lcm)?;
        for &l in &sc.links {
            sc.link[l as usize] *= lcm;
        }
        sc.nodes.clear();
        for x in &layer {
            let c = topo.routing.next_hops_up(x.0, toward).0;
            let share = x.1 * (lcm / c.len() as u128);
            for &port in c {
                let l = directed_link(topo, port);
                if sc.link[l as usize] == 0 {
                    sc.links.push(l);
                }
                sc.link[l as usize] += share;
                let to = topo.peer_node(port);
                let lat = x.2 + delay(port.0) + enter(to);
                let e = &mut sc.node[to.idx()];
                if e.0 == 0 {
                    sc.nodes.push(to);
                }
                e.0 += share;
                e.1 = e.1.max(lat);
            }
        }
        layer.clear();
        for &n in &sc.nodes {
            let e = std::mem::take(&mut sc.node[n.idx()]);
            layer.push((n, e.0, e.1));
        }
    }
    let inner_lat = layer.iter().map(|x| x.2).max().unwrap_or(0);
    // Flows of the class: per source host its peers under `b`, per destination host its peers
    // under `a`.
    let from = src
        .iter()
        .map(|&(h, c)| (h, shape.peers(h, c, b) * per_pair));
    let into = dst
        .iter()
        .map(|&(h, c)| (h, shape.peers(h, c, a) * per_pair));
    let flows: u64 = from.clone().map(|x| x.1).sum();
    let mut links: Vec<(u32, u128)> = Vec::with_capacity(src.len() + sc.links.len() + dst.len());
    let mut up_lat = 0;
    for (h, f) in from.filter(|x| x.1 > 0) {
        let port = topo.host_port(h);
        links.push((directed_link(topo, port), f as u128 * scale));
        up_lat = up_lat.max(delay(port.0) + enter(topo.peer_node(port)));
    }
    for &l in &sc.links {
        let share = std::mem::take(&mut sc.link[l as usize]);
        links.push((l, share * flows as u128));
    }
    let mut down_lat = 0;
    for (h, f) in into.filter(|x| x.1 > 0) {
        // The leaf's port down to the host: the host port's peer.
        let port = topo.ports[topo.host_port(h).idx()].peer;
        links.push((directed_link(topo, port), f as u128 * scale));
        down_lat = down_lat.max(delay(port.0) + enter(topo.host_node(h)));
    }
    Some(Usage {
        links,
        scale,
        lat_ps: up_lat + inner_lat + down_lat,
    })
}
