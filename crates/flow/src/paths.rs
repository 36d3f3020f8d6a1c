//! Where a message's bytes go: directed links, the per-QP routes of the packet engine, and the
//! split of a message over several paths for spraying and adaptive routing.
//!
//! - `Hash`: the packet engine's routing exactly: QPs numbered as it numbers them
//!   (`route::number_qps`), the same 5-tuple hash per QP (`route::five_tuple_hash` of the QP's
//!   UDP source port) and the same per-switch choice (`route::hashed`), so the same flows
//!   collide on the same links. With `RoutePolicy::DModK` (and `Adaptive`'s static fallback)
//!   the choice is the packet engine's D-mod-K table ([`Router`] holds its divisors).
//! - `Spray { paths: k }`: per-packet spraying as an even split: the message becomes k
//!   subflows of equal bytes; subflow j takes, at every switch, the j-th candidate after the
//!   hashed one, so the k subflows leave the first switch on k different ports when it has k.
//!   The message completes when its last subflow does (a sprayed message waits for its slowest
//!   path, as the receiver needs every packet).
//! - `Adaptive { paths: k }`: adaptive routing as a load-aware split: k subflows, each placed
//!   when it starts, at every switch, on the candidate port whose path on is least loaded: the
//!   more active flows of its link and of the next hop's least-loaded link toward the
//!   destination, then its link's own (ties go to the hashed candidate, then the next ones in
//!   order). This is the fluid view of per-packet adaptive routing by normalized credits (the
//!   IB profiles' rule, `sim::ibroute`): a port's credits fall when its next hop's egress is
//!   held, so AR sees one hop ahead; load spreads by occupancy, not by hash.

use std::collections::BTreeMap;

use fabricsim_core::topology::{LinkId, NodeId, PortId, Topology};
use fabricsim_mech::reroute::Converged;
use fabricsim_mech::{RoutePolicy, SimParams, entropy, route};

/// How messages are placed on paths.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PathModel {
    /// One path per QP, exactly as the packet engine's `SimParams::routing` picks it.
    Hash,
    /// Even split over `paths` subflows (packet spraying).
    Spray { paths: u16 },
    /// Load-aware split over `paths` subflows placed on the least-loaded ports.
    Adaptive { paths: u16 },
}

impl PathModel {
    /// Subflows per message.
    pub fn subflows(self) -> u32 {
        match self {
            PathModel::Hash => 1,
            PathModel::Spray { paths } | PathModel::Adaptive { paths } => paths.max(1) as u32,
        }
    }
}

/// The directed link leaving through egress port `p`: `2 * link` going up (from the lower
/// end), `2 * link + 1` going down. Links are full duplex: each direction has its own rate.
#[inline]
pub fn directed_link(topo: &Topology, p: PortId) -> u32 {
    let l = topo.ports[p.idx()].link;
    let up = topo.links[l.idx()].ends[0] == p;
    2 * l.0 + (!up) as u32
}

/// Whether directed link `l` runs from a switch down to a NIC (a tier-1 link's down
/// direction).
pub fn into_nic(topo: &Topology, l: u32) -> bool {
    l % 2 == 1 && topo.links[(l / 2) as usize].tier == 1
}

/// Capacity of every directed link, bit/s.
pub fn capacities(topo: &Topology) -> Vec<u64> {
    topo.links
        .iter()
        .flat_map(|l| [l.rate.bps(), l.rate.bps()])
        .collect()
}

/// The QP's flow hashes (forward, and reverse for its ACKs), as the packet engine sets them
/// (the destination QP folded in when the switches hash it, `entropy::flow_hashes`).
pub fn qp_hashes(p: &SimParams, qp: u32, src: u32, dst: u32) -> (u32, u32) {
    entropy::flow_hashes(src, dst, qp, p.udp_dport, p.cc.hash_dest_qp)
}

/// The fabric's static next-hop rule: the routing policy and what `route::choose` reads per
/// node (ECMP salt or D-mod-K divisor, `route::salts`), and the links down since before the
/// run that routing has converged around (`None`: every link up).
pub struct Router {
    pub policy: RoutePolicy,
    pub salt: Vec<u32>,
    pub converged: Option<Converged>,
}

impl Router {
    pub fn new(topo: &Topology, policy: RoutePolicy) -> Router {
        Router::with_failed(topo, policy, &[])
    }

    /// The router of a fabric converged around the links `failed`.
    pub fn with_failed(topo: &Topology, policy: RoutePolicy, failed: &[LinkId]) -> Router {
        Router {
            policy,
            salt: route::salts(topo, policy),
            converged: (!failed.is_empty()).then(|| Converged::new(topo, failed)),
        }
    }

    /// Whether routing sends traffic for `dst` out of `port`.
    #[inline]
    fn usable(&self, topo: &Topology, port: PortId, dst: u32) -> bool {
        self.converged
            .as_ref()
            .is_none_or(|c| c.usable(topo, port, dst))
    }

    /// The first directed link of `links` that is down, if any (a route that cannot avoid it).
    pub fn down_link(&self, links: &[u32]) -> Option<u32> {
        let c = self.converged.as_ref()?;
        links.iter().copied().find(|&l| !c.link_up(LinkId(l / 2)))
    }
}

/// Appends the directed links of subflow `j` of a QP from `src` to `dst` with flow hash
/// `hash` to `out`; `load` gives a directed link's active flow count for `Adaptive`.
#[allow(clippy::too_many_arguments)]
pub fn subflow_links(
    topo: &Topology,
    router: &Router,
    model: PathModel,
    src: u32,
    dst: u32,
    hash: u32,
    j: u32,
    load: impl Fn(u32) -> u32,
    out: &mut Vec<u32>,
) {
    let hashed = route::hashed(router.policy, hash, dst, &router.salt);
    // Going up, a port's load as adaptive routing by credits sees it: the more loaded of its
    // link and the next hop's least-loaded link on to `dst` (the next hop's buffer fills, and
    // the port's credits fall, when that egress is held; `ibroute::CreditShare`).
    let ahead = |p: PortId| -> u32 {
        let own = load(directed_link(topo, p));
        let next = topo.peer_node(p);
        if topo.nics[dst as usize] == next {
            return own;
        }
        let (c, _) = topo
            .routing
            .next_hops_up(next, fabricsim_core::topology::HostId(dst));
        let on = c
            .iter()
            .filter(|&&q| router.usable(topo, q, dst))
            .map(|&q| load(directed_link(topo, q)))
            .min();
        own.max(on.unwrap_or(0))
    };
    // A port a failed link's reroute removed is passed over as the packet engine passes it
    // (`route::first_usable`); with none usable the route keeps the dead one (`down_link`).
    let usable = |c: &[PortId], i: usize| router.usable(topo, c[i], dst);
    let pick = |node: NodeId, c: &[PortId], up: bool| -> usize {
        let h = hashed(node, c, up);
        let n = c.len();
        match model {
            PathModel::Hash => route::first_usable(h, n, |i| usable(c, i)).unwrap_or(h),
            PathModel::Spray { .. } => {
                let k = (h + j as usize) % n;
                route::first_usable(k, n, |i| usable(c, i)).unwrap_or(k)
            }
            PathModel::Adaptive { .. } => (0..n)
                .map(|i| (h + i) % n)
                .filter(|&k| usable(c, k))
                .min_by_key(|&k| (ahead(c[k]), load(directed_link(topo, c[k]))))
                .unwrap_or(h),
        }
    };
    route::walk(topo, src, dst, pick, |p| out.push(directed_link(topo, p)));
}

/// One-way latency along directed links, after the sender's NIC pipeline: per link its
/// propagation delay and the pipeline latency of the node it enters (switch or receiving NIC),
/// as the packet engine's unloaded latency with cut-through (serialization is the fluid drain).
pub fn one_way_ps(topo: &Topology, p: &SimParams, links: &[u32]) -> u64 {
    links
        .iter()
        .map(|&d| {
            let link = &topo.links[(d / 2) as usize];
            let head = link.ends[if d % 2 == 0 { 1 } else { 0 }];
            let node = topo.ports[head.idx()].node;
            let pipeline = if topo.nodes[node.idx()].is_switch() {
                p.switch_latency
            } else {
                p.nic_latency
            };
            (link.delay + pipeline).ps()
        })
        .sum()
}

/// Whether every link of a tier has the same propagation delay (then a path and its reverse,
/// which cross the same tiers, have the same latency).
pub fn delays_uniform_per_tier(topo: &Topology) -> bool {
    let mut delay: [Option<fabricsim_core::units::Time>; 4] = [None; 4];
    topo.links.iter().all(|l| {
        let d = &mut delay[(l.tier as usize).min(3)];
        *d.get_or_insert(l.delay) == l.delay
    })
}

/// Bytes a message of `bytes` payload puts on the wire: full MTU packets and a last partial
/// one, each with the profile's header and per-frame wire overhead (the payload efficiency
/// `mtu / (mtu + overhead)` of full packets, exact for the last one).
pub fn wire_bytes(p: &SimParams, bytes: u64) -> u64 {
    let mtu = p.mtu_bytes as u64;
    let (full, last) = (bytes / mtu, bytes % mtu);
    let frame =
        |payload: u64| p.data_frame_bytes(payload as u32) as u64 + p.wire_overhead_bytes as u64;
    // Saturating: a size past `units::MAX_BYTES` (refused at input) must not wrap to a short
    // flow.
    full.saturating_mul(frame(mtu))
        .saturating_add(if last > 0 { frame(last) } else { 0 })
}

/// What the flow engine reads of a route: the cap it gives the solver (bit/s, `maxmin::NO_CAP`
/// when the links are the limit), the rate a flow reaches alone on it, its one-way latency
/// after the sender's NIC (ps) and its number of links (for the loss model; 0 without loss).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RouteInfo {
    pub cap: u64,
    pub line: u64,
    pub lat_ps: u32,
    pub hops: f32,
}

/// Every route's [`RouteInfo`], stored once per distinct value: routes differ in the tiers
/// they cross and their link rates, so a fabric has a handful, and a route costs 4 bytes, not
/// 24 (16.7 M routes in a 4,096-GPU all-to-all).
#[derive(Default)]
pub struct RouteInfos {
    of: Vec<u32>,
    distinct: Vec<RouteInfo>,
    index: BTreeMap<(u64, u64, u32, u32), u32>,
}

impl RouteInfos {
    pub fn with_capacity(routes: usize) -> RouteInfos {
        RouteInfos {
            of: Vec::with_capacity(routes),
            ..RouteInfos::default()
        }
    }

    /// Appends the next route's info.
    pub fn push(&mut self, e: RouteInfo) {
        let last = self.of.last().map(|&i| self.distinct[i as usize]);
        let i = if last == Some(e) {
            self.of[self.of.len() - 1]
        } else {
            let next = self.distinct.len() as u32;
            let key = (e.cap, e.line, e.lat_ps, e.hops.to_bits());
            let i = *self.index.entry(key).or_insert(next);
            if i == next {
                self.distinct.push(e);
            }
            i
        };
        self.of.push(i);
    }

    #[inline]
    pub fn get(&self, r: u32) -> RouteInfo {
        self.distinct[self.of[r as usize] as usize]
    }

    /// Prefetches where route `r`'s info is (a hint: no effect on results).
    #[inline]
    pub fn prefetch(&self, r: u32) {
        if let Some(i) = self.of.get(r as usize) {
            fabricsim_core::prefetch::prefetch(i);
        }
    }

    /// Route `r`'s info, `None` past the last route.
    pub fn checked(&self, r: u32) -> Option<RouteInfo> {
        self.of.get(r as usize).map(|&i| self.distinct[i as usize])
    }
}
