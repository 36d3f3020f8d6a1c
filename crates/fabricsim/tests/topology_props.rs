//! Property tests of the topology builders over many random specs (GPU counts 8..5000, every
//! kind, 1, 2 or 4 planes, tiers auto/2/3, oversubscription 1:1 to 3:1, radices 8..64), and
//! bisection bandwidth by max-flow. Specs are drawn from `fabricsim::rng::Rng` streams, so every run checks the
//! same cases.

use fabricsim::rng::{Rng, Stream};
use fabricsim::topology::{
    HostId, Kind, NodeId, NodeKind, Plane, Pod, Tiers, Topology, TopologySpec, build, max_gpus,
};
use fabricsim::units::BitRate;

const RATE: BitRate = BitRate::gbps(400);

fn spec(
    gpus: u32,
    gpn: u32,
    nics: u32,
    kind: Kind,
    tiers: Tiers,
    oversub: (u32, u32),
    radix: u32,
) -> TopologySpec {
    TopologySpec {
        gpus,
        gpus_per_node: gpn,
        nics_per_node: nics,
        kind,
        tiers,
        oversubscription: oversub,
        switch_radix: radix,
        port_rate: RATE,
        planes: 1,
    }
}

fn random_spec(rng: &mut Rng) -> TopologySpec {
    let gpn: u32 = [1, 4, 8][rng.below(3) as usize];
    // NICs per node: one per GPU, or fewer (e.g. 4 NICs for 8 GPUs), or one.
    let nics = [gpn, gpn.div_ceil(2), 1][rng.below(3) as usize];
    let kind = match Kind::ALL[rng.below(Kind::ALL.len() as u64) as usize] {
        // Pods of 1 to 3 SUs or the most that fit, over a core at 1:1 to 15:1.
        Kind::Pods(_) => Kind::Pods(Pod {
            sus: rng.below(4) as u32,
            core_oversubscription: [(1, 1), (2, 1), (3, 1), (15, 1)][rng.below(4) as usize],
        }),
        k => k,
    };
    let tiers = [Tiers::Auto, Tiers::Fixed(2), Tiers::Fixed(3)][rng.below(3) as usize];
    let oversub = [(1, 1), (2, 1), (3, 1), (5, 3)][rng.below(4) as usize];
    let radix = 8 + rng.below(57) as u32;
    let gpus = 8 + rng.below(4993) as u32;
    let mut s = spec(gpus, gpn, nics, kind, tiers, oversub, radix);
    // Multi-plane: 2 or 4 planes where they divide the ports (rail-only is a plane per rail).
    let planes = [1, 2, 4][rng.below(3) as usize];
    if kind != Kind::RailOnly && nics.is_multiple_of(planes) {
        s.planes = planes;
    }
    s
}

/// The plane of a host: its rail modulo the planes.
fn plane_of(t: &Topology, s: &TopologySpec, h: HostId) -> u32 {
    let planes = Plane::of(s.kind, s.nics_per_node, s.planes).planes;
    match t.node(t.host_node(h)).kind {
        NodeKind::Nic { rail, .. } => rail as u32 % planes,
        NodeKind::Switch { .. } => unreachable!("a host is a NIC"),
    }
}

/// The switch a host's NIC is wired to.
fn leaf_of(t: &Topology, h: HostId) -> NodeId {
    t.peer_node(t.host_port(h))
}

/// Walks from `src` to `dst` taking, at every switch, a random port among
/// `Routing::next_hops`; returns the number of switches crossed (None if it does not arrive
/// within `2·tiers` switches).
fn walk(t: &Topology, src: HostId, dst: HostId, rng: &mut Rng) -> Option<u32> {
    let target = t.host_node(dst);
    let mut node = leaf_of(t, src);
    for switches in 1..=2 * t.tiers as u32 {
        let hops = t.routing.next_hops(node, dst);
        if hops.is_empty() {
            return None;
        }
        let p = hops[rng.below(hops.len() as u64) as usize];
        // The chosen port must belong to the switch we are at.
        assert_eq!(t.port(p).node, node);
        node = t.peer_node(p);
        if node == target {
            return Some(switches);
        }
        if !t.node(node).is_switch() {
            return None;
        }
    }
    None
}

/// The fewest switches between two hosts in a folded Clos: 1 on the same leaf, 3 when they
/// share a spine-level subtree (a pod, or the whole 2-tier fabric), else 5.
fn min_switches(t: &Topology, a: HostId, b: HostId) -> u32 {
    let (la, lb) = (leaf_of(t, a), leaf_of(t, b));
    if la == lb {
        return 1;
    }
    // Leaves in the same pod share a spine.
    let spines = |l: NodeId| -> Vec<NodeId> {
        let mut s: Vec<NodeId> = t
            .node(l)
            .up_ports()
            .map(|p| t.peer_node(fabricsim::topology::PortId(p)))
            .collect();
        s.sort();
        s.dedup();
        s
    };
    let (sa, sb) = (spines(la), spines(lb));
    if sa.iter().any(|s| sb.contains(s)) {
        3
    } else {
        5
    }
}

/// Shortest up/down paths from host `a` to host `b` counted on the graph alone (port by port,
/// so parallel links count separately), without the routing tables: on the same leaf 1; else up
/// from a's leaf to each spine, and down at once if that spine is above b's leaf (same pod);
/// otherwise up to each core and down through the spines above b's leaf.
fn count_updown_paths(t: &Topology, a: HostId, b: HostId) -> u64 {
    use fabricsim::topology::PortId;
    let (la, lb) = (leaf_of(t, a), leaf_of(t, b));
    if la == lb {
        return 1;
    }
    let ups = |n: NodeId| t.node(n).up_ports().map(move |p| t.peer_node(PortId(p)));
    // Parallel links from `upper` down to `lower`.
    let links_down = |upper: NodeId, lower: NodeId| -> u64 {
        t.node(upper)
            .down_ports()
            .filter(|&p| t.peer_node(PortId(p)) == lower)
            .count() as u64
    };
    let above_b: Vec<NodeId> = ups(lb).collect();
    if ups(la).any(|s| above_b.contains(&s)) {
        // Same pod (or 2 tiers): turn at a spine above both leaves.
        return ups(la).map(|s| links_down(s, lb)).sum();
    }
    ups(la)
        .flat_map(ups)
        .map(|core| {
            t.node(core)
                .down_ports()
                .map(|p| t.peer_node(PortId(p)))
                .map(|spine| links_down(spine, lb))
                .sum::<u64>()
        })
        .sum()
}

#[test]
fn random_specs_build_valid_fabrics() {
    let mut built = 0;
    let mut by_tiers = [0u32; 4];
    let mut by_kind = [0u32; Kind::ALL.len()];
    let mut multi_plane = 0;
    for case in 0..500u64 {
        let mut rng = Rng::stream(2, Stream::Test(0x7090), case);
        let s = random_spec(&mut rng);
        let t = match build(&s) {
            Ok(t) => t,
            Err(e) => {
                // An error only when the spec cannot be built: too large for the allowed
                // tiers, or a fat-tree server's NICs exceed a leaf's host ports.
                let allowed: Vec<u8> = match s.tiers {
                    Tiers::Auto => vec![1, 2, 3],
                    Tiers::Fixed(n) => vec![n],
                };
                let fits = allowed.iter().any(|&n| max_gpus(&s, n) >= s.gpus as u64);
                // A pod larger than its spine takes is refused by name.
                let pod_too_large = e.field == "pod_sus" && s.kind.pod().is_some();
                assert!(
                    !fits || e.field == "nics_per_node" || e.field == "planes" || pod_too_large,
                    "case {case}: {s:?} fits but failed: {e:?}"
                );
                continue;
            }
        };
        built += 1;
        by_tiers[t.tiers as usize] += 1;
        by_kind[Kind::ALL
            .iter()
            .position(|k| k.name() == s.kind.name())
            .unwrap()] += 1;
        multi_plane += (s.planes > 1) as u32;
        check_fabric(&s, &t, &mut rng).unwrap_or_else(|e| panic!("case {case}: {s:?}: {e}"));
    }
    // The generator must exercise every shape, or this test shows little (a pods fabric builds
    // in 3 tiers only, so fewer of its specs build).
    assert!(built >= 300, "only {built} of 500 specs built");
    assert!(by_tiers[2] >= 50 && by_tiers[3] >= 50, "tiers {by_tiers:?}");
    assert!(by_kind.iter().all(|&n| n >= 20), "kinds {by_kind:?}");
    assert!(multi_plane >= 50, "{multi_plane} multi-plane fabrics");
}

fn check_fabric(s: &TopologySpec, t: &Topology, rng: &mut Rng) -> Result<(), String> {
    t.check().map_err(|e| e.to_string())?;
    if s.kind.pod().is_some() && t.tiers != 3 {
        return Err(format!("a pods fabric of {} tiers", t.tiers));
    }
    // Servers = ceil(gpus / gpus_per_node); NIC ports = servers * nics_per_node.
    let servers = s.gpus.div_ceil(s.gpus_per_node);
    if t.servers != servers || t.num_hosts() as u32 != servers * s.nics_per_node {
        return Err(format!(
            "{} servers, {} hosts; want {servers}, {}",
            t.servers,
            t.num_hosts(),
            servers * s.nics_per_node
        ));
    }
    // Every NIC port wired exactly once: one link end per NIC, each on a switch.
    let mut wired = vec![0u32; t.num_hosts()];
    for l in &t.links {
        for e in l.ends {
            if let NodeKind::Nic { host, .. } = t.node(t.port(e).node).kind {
                wired[host.idx()] += 1;
                if !t.node(t.peer_node(e)).is_switch() {
                    return Err(format!("host {} wired to a NIC", host.0));
                }
            }
        }
    }
    if let Some(h) = wired.iter().position(|&n| n != 1) {
        return Err(format!("host {h} wired {} times", wired[h]));
    }
    // (server, rail) -> host and back.
    for server in 0..servers {
        for rail in 0..s.nics_per_node as u16 {
            let h = t.host_of(server, rail).ok_or("missing host_of")?;
            match t.node(t.host_node(h)).kind {
                NodeKind::Nic {
                    server: sv,
                    rail: r,
                    ..
                } if sv == server && r == rail => {}
                k => return Err(format!("host_of({server},{rail}) is {k:?}")),
            }
        }
    }
    // No switch uses more ports than its radix.
    for (id, n) in t.switches() {
        if n.radix != s.switch_radix || n.num_ports > n.radix {
            return Err(format!(
                "switch {} uses {} of {}",
                id.0, n.num_ports, n.radix
            ));
        }
    }
    // Kind: a fat-tree server's NICs (of one plane) share one leaf; a dual-ToR leaf holds half
    // of them; rail r of the servers of one leaf group goes to one leaf whose hosts all have
    // rail r; every leaf's hosts are of one plane.
    let plane = Plane::of(s.kind, s.nics_per_node, s.planes);
    let leaf_hosts = |leaf: NodeId| {
        t.node(leaf)
            .down_ports()
            .map(
                |p| match t.node(t.peer_node(fabricsim::topology::PortId(p))).kind {
                    NodeKind::Nic { server, rail, .. } => (server, rail),
                    _ => (u32::MAX, u16::MAX),
                },
            )
            .collect::<Vec<_>>()
    };
    let leaves: Vec<NodeId> = t
        .switches()
        .filter(|(_, n)| n.tier() == 1)
        .map(|(id, _)| id)
        .collect();
    for &leaf in &leaves {
        let hs = leaf_hosts(leaf);
        if hs
            .iter()
            .any(|h| h.1 as u32 % plane.planes != hs[0].1 as u32 % plane.planes)
        {
            return Err("a leaf holds NICs of different planes".into());
        }
        match plane.kind {
            Kind::FatTree | Kind::RailOnly | Kind::DualTor => {
                let want = match plane.kind {
                    Kind::DualTor => plane.nics / 2,
                    _ => plane.nics,
                };
                for &(server, _) in &hs {
                    let n = hs.iter().filter(|h| h.0 == server).count() as u32;
                    if n != want {
                        return Err(format!("server {server} has {n} NICs on one leaf"));
                    }
                }
            }
            Kind::RailOptimized | Kind::Pods(_) => {
                if hs.iter().any(|h| h.1 != hs[0].1) {
                    return Err("a rail leaf holds NICs of different rails".into());
                }
            }
        }
    }
    // Leaf ports (documented rule in topology::sizing): a leaf keeps k − ⌈k·u/(d+u)⌉ host
    // ports (whole servers for a fat-tree) and every leaf has U = ⌈H·u/d⌉ uplinks for the H
    // hosts of a full leaf. So a full leaf has H·u ≤ U·d and, at 1:1, uplink capacity equal to
    // downlink capacity.
    if t.tiers >= 2 {
        let (d, u) = (s.oversubscription.0 as u64, s.oversubscription.1 as u64);
        let k = s.switch_radix as u64;
        let host_ports = k - (k * u).div_ceil(d + u);
        let per_leaf = match plane.kind {
            Kind::DualTor => plane.nics as u64 / 2,
            Kind::RailOptimized | Kind::Pods(_) => 1,
            Kind::FatTree | Kind::RailOnly => plane.nics as u64,
        };
        let full = host_ports / per_leaf * per_leaf;
        let up_want = (full * u).div_ceil(d);
        let cap = |ports: std::ops::Range<u32>| -> u64 {
            ports
                .map(|p| {
                    t.link(t.port(fabricsim::topology::PortId(p)).link)
                        .rate
                        .bps()
                })
                .sum()
        };
        for &l in &leaves {
            let n = t.node(l);
            let (down, up) = (n.down_ports().len() as u64, n.up_ports().len() as u64);
            if down > full || up != up_want || full * u > up * d {
                return Err(format!(
                    "leaf {}: {down} down, {up} up; want ≤ {full} down, {up_want} up at {d}:{u}",
                    l.0
                ));
            }
            if (d, u) == (1, 1) && down == full && cap(n.down_ports()) != cap(n.up_ports()) {
                return Err(format!("1:1 leaf {} up capacity != down capacity", l.0));
            }
        }
    }
    // Every pair of hosts of one plane has a shortest up/down path along Routing::next_hops:
    // all pairs on small fabrics, 300 random pairs on larger ones (the pair order is shuffled
    // so the ECMP count below samples across the fabric); hosts of different planes have none
    // (no switch joins two planes).
    let n = t.num_hosts() as u32;
    let pairs: Vec<(u32, u32)> = if n <= 48 {
        let mut all: Vec<(u32, u32)> = (0..n).flat_map(|a| (0..n).map(move |b| (a, b))).collect();
        rng.shuffle(&mut all);
        all
    } else {
        (0..300)
            .map(|_| (rng.below(n as u64) as u32, rng.below(n as u64) as u32))
            .collect()
    };
    for (i, (a, b)) in pairs.into_iter().enumerate() {
        if a == b {
            continue;
        }
        let (a, b) = (HostId(a), HostId(b));
        if plane_of(t, s, a) != plane_of(t, s, b) {
            if walk(t, a, b, rng).is_some() {
                return Err(format!("{} -> {} cross planes", a.0, b.0));
            }
            continue;
        }
        let got = walk(t, a, b, rng).ok_or(format!("no path {} -> {}", a.0, b.0))?;
        let want = min_switches(t, a, b);
        if got != want {
            return Err(format!(
                "{} -> {}: {got} switches, shortest {want}",
                a.0, b.0
            ));
        }
        // ECMP path counts against the graph, on the first 40 pairs (the count is costly).
        if i >= 40 {
            continue;
        }
        let (got, want) = (t.routing.path_count(t, a, b), count_updown_paths(t, a, b));
        if got != want || got == 0 {
            return Err(format!(
                "{} -> {}: path_count {got}, graph has {want}",
                a.0, b.0
            ));
        }
    }
    Ok(())
}

// ---- Bisection bandwidth by max-flow ----

/// Dinic's max-flow (Dinic 1970) on an undirected capacity graph.
struct Flow {
    head: Vec<usize>,
    next: Vec<usize>,
    to: Vec<usize>,
    cap: Vec<u64>,
}

impl Flow {
    fn new(n: usize) -> Flow {
        Flow {
            head: vec![usize::MAX; n],
            next: Vec::new(),
            to: Vec::new(),
            cap: Vec::new(),
        }
    }
    /// An edge usable in both directions up to `c` each (arc pair with capacity c both ways).
    fn undirected(&mut self, a: usize, b: usize, c: u64) {
        self.arc(a, b, c, c);
    }
    fn directed(&mut self, a: usize, b: usize, c: u64) {
        self.arc(a, b, c, 0);
    }
    fn arc(&mut self, a: usize, b: usize, ab: u64, ba: u64) {
        for (u, v, c) in [(a, b, ab), (b, a, ba)] {
            self.next.push(self.head[u]);
            self.head[u] = self.to.len();
            self.to.push(v);
            self.cap.push(c);
        }
    }
    fn max_flow(&mut self, s: usize, t: usize) -> u64 {
        let n = self.head.len();
        let mut total = 0;
        loop {
            let mut level = vec![usize::MAX; n];
            level[s] = 0;
            let mut queue = std::collections::VecDeque::from([s]);
            while let Some(u) = queue.pop_front() {
                let mut e = self.head[u];
                while e != usize::MAX {
                    if self.cap[e] > 0 && level[self.to[e]] == usize::MAX {
                        level[self.to[e]] = level[u] + 1;
                        queue.push_back(self.to[e]);
                    }
                    e = self.next[e];
                }
            }
            if level[t] == usize::MAX {
                return total;
            }
            let mut it = self.head.clone();
            loop {
                let f = self.push(s, t, u64::MAX, &level, &mut it);
                if f == 0 {
                    break;
                }
                total += f;
            }
        }
    }
    fn push(&mut self, u: usize, t: usize, f: u64, level: &[usize], it: &mut [usize]) -> u64 {
        if u == t {
            return f;
        }
        while it[u] != usize::MAX {
            let e = it[u];
            let v = self.to[e];
            if self.cap[e] > 0 && level[v] == level[u] + 1 {
                let got = self.push(v, t, f.min(self.cap[e]), level, it);
                if got > 0 {
                    self.cap[e] -= got;
                    self.cap[e ^ 1] += got;
                    return got;
                }
            }
            it[u] = self.next[e];
        }
        0
    }
}

/// Max flow from the hosts in `side_a` to all other hosts, each host sourcing or sinking at
/// most its NIC rate: the capacity of the cut between the two halves.
fn bisection_bps(t: &Topology, side_a: &[bool]) -> u64 {
    let (s, sink) = (t.nodes.len(), t.nodes.len() + 1);
    let mut f = Flow::new(t.nodes.len() + 2);
    for l in &t.links {
        let (a, b) = (t.port(l.ends[0]).node.idx(), t.port(l.ends[1]).node.idx());
        f.undirected(a, b, l.rate.bps());
    }
    for (h, &in_a) in side_a.iter().enumerate() {
        let h = HostId(h as u32);
        let nic = t.host_node(h).idx();
        let rate = t.link(t.port(t.host_port(h)).link).rate.bps();
        if in_a {
            f.directed(s, nic, rate);
        } else {
            f.directed(nic, sink, rate);
        }
    }
    f.max_flow(s, sink)
}

/// Three balanced splits: first half / second half of the host numbering (leaf- and
/// pod-aligned), even / odd hosts, and a random half.
fn splits(n: usize, seed: u64) -> Vec<(&'static str, Vec<bool>)> {
    let mut random: Vec<bool> = (0..n).map(|h| h < n / 2).collect();
    Rng::stream(seed, Stream::Test(0xB15), n as u64).shuffle(&mut random);
    vec![
        ("halves", (0..n).map(|h| h < n / 2).collect()),
        ("interleaved", (0..n).map(|h| h % 2 == 0).collect()),
        ("random", random),
    ]
}

/// A non-blocking (1:1) full fabric has bisection bandwidth N × rate / 2 for every balanced
/// split (Leiserson 1985; Al-Fares et al. 2008: full bisection bandwidth).
#[test]
fn non_blocking_bisection_is_n_rate_over_2() {
    let cases = [
        // 2-tier k=8: k²/2 = 32 hosts.
        spec(32, 1, 1, Kind::FatTree, Tiers::Auto, (1, 1), 8),
        // 3-tier k=8: k³/4 = 128 hosts.
        spec(128, 1, 1, Kind::FatTree, Tiers::Auto, (1, 1), 8),
        // Rail-optimized 2-tier, k=8, 4 NICs per server: 2 SUs of 4 servers, 32 hosts.
        spec(32, 4, 4, Kind::RailOptimized, Tiers::Auto, (1, 1), 8),
        // Rail-optimized 3-tier, k=8, 2 NICs: pods of 2 SUs of 4 servers, 8 pods, 128 hosts.
        spec(128, 2, 2, Kind::RailOptimized, Tiers::Fixed(3), (1, 1), 8),
        // Partial 3-tier (50 hosts on k=8): the partial rules keep full bisection.
        spec(50, 1, 1, Kind::FatTree, Tiers::Auto, (1, 1), 8),
    ];
    for s in cases {
        let t = build(&s).unwrap();
        let n = t.num_hosts() as u64;
        for (name, side) in splits(t.num_hosts(), 1) {
            assert_eq!(
                bisection_bps(&t, &side),
                n / 2 * RATE.bps(),
                "{s:?}, split {name}"
            );
        }
    }
}

/// With leaf oversubscription d:u, the leaf-aligned split of a full fabric is limited by the
/// leaves' uplinks: N × rate / 2 × u/d; other splits are no smaller.
#[test]
fn oversubscribed_bisection_is_reduced_by_the_ratio() {
    // (spec, d:u, the same hosts on a non-blocking fabric of a radix that reaches them).
    let cases = [
        // k=12 at 2:1: 8 host ports, 4 uplinks per leaf; 12 leaves, 96 hosts.
        (
            spec(96, 1, 1, Kind::FatTree, Tiers::Auto, (2, 1), 12),
            (2, 1),
            12,
        ),
        // k=8 at 3:1: 6 host ports, 2 uplinks; 8 leaves, 48 hosts.
        (
            spec(48, 1, 1, Kind::FatTree, Tiers::Auto, (3, 1), 8),
            (3, 1),
            8,
        ),
        // 3-tier k=8 at 3:1: 8 pods of 4 leaves of 6 hosts = 192 hosts.
        (
            spec(192, 1, 1, Kind::FatTree, Tiers::Auto, (3, 1), 8),
            (3, 1),
            12,
        ),
    ];
    for (s, (d, u), radix_1to1) in cases {
        let t = build(&s).unwrap();
        let n = t.num_hosts() as u64;
        let full = n / 2 * RATE.bps();
        let want = full * u / d;
        for (name, side) in splits(t.num_hosts(), 2) {
            let got = bisection_bps(&t, &side);
            if name == "halves" {
                assert_eq!(got, want, "{s:?}");
            } else {
                assert!(got >= want && got <= full, "{s:?} split {name}: {got}");
            }
        }
        // The same hosts at 1:1 get the full N·rate/2.
        let mut nb = s.clone();
        nb.oversubscription = (1, 1);
        nb.switch_radix = radix_1to1;
        let t1 = build(&nb).unwrap();
        assert_eq!(bisection_bps(&t1, &splits(t1.num_hosts(), 2)[0].1), full);
    }
}

/// A fabric of parallel planes (rail-only, multi-plane) has bisection bandwidth N × rate / 2
/// for every split that halves the servers, since such a split halves every plane; dual-ToR
/// the same as the fat-tree.
#[test]
fn planes_keep_full_bisection_for_server_splits() {
    let mut multi = spec(64, 4, 4, Kind::RailOptimized, Tiers::Auto, (1, 1), 8);
    multi.planes = 2;
    let cases = [
        // 4 rails, each a 2-tier k=8 fat-tree of 32 servers (k²/2).
        spec(128, 4, 4, Kind::RailOnly, Tiers::Auto, (1, 1), 8),
        // 2 rails, 3 tiers: each a partial 3-tier of 40 servers.
        spec(80, 2, 2, Kind::RailOnly, Tiers::Fixed(3), (1, 1), 8),
        multi,
        spec(64, 4, 4, Kind::DualTor, Tiers::Auto, (1, 1), 8),
    ];
    for s in cases {
        let t = build(&s).unwrap();
        let n = t.num_hosts() as u64;
        let server = |h: usize| match t.node(t.host_node(HostId(h as u32))).kind {
            NodeKind::Nic { server, .. } => server,
            NodeKind::Switch { .. } => unreachable!(),
        };
        let half = t.servers / 2;
        let mut random: Vec<bool> = (0..t.servers).map(|sv| sv < half).collect();
        Rng::stream(3, Stream::Test(0xB16), n).shuffle(&mut random);
        let by_server: [(&str, Box<dyn Fn(u32) -> bool>); 3] = [
            ("halves", Box::new(|sv| sv < half)),
            ("interleaved", Box::new(|sv| sv % 2 == 0)),
            ("random", Box::new(|sv| random[sv as usize])),
        ];
        for (name, side) in by_server {
            let split: Vec<bool> = (0..t.num_hosts()).map(|h| side(server(h))).collect();
            assert_eq!(
                bisection_bps(&t, &split),
                n / 2 * RATE.bps(),
                "{s:?}, split {name}"
            );
        }
        // Split by plane instead (hosts are numbered plane by plane): no switch joins two
        // planes, so a rail-only or multi-plane fabric carries nothing across.
        if Plane::of(s.kind, s.nics_per_node, s.planes).planes > 1 {
            assert_eq!(
                bisection_bps(&t, &splits(t.num_hosts(), 3)[0].1),
                0,
                "{s:?}"
            );
        }
    }
}

/// Pods (`topology::pods`): a full fabric at 1:1 has full bisection; at core oversubscription
/// d:u the pod-aligned split is limited by the pods' spine uplinks, N × rate / 2 × u/d, and
/// other splits are no smaller (the traffic within a pod does not cross the core).
#[test]
fn pod_bisection_is_the_core_ratio_across_pods() {
    let pods = |sus, d, u| {
        Kind::Pods(Pod {
            sus,
            core_oversubscription: (d, u),
        })
    };
    // k = 8, 2 rails, leaves 4 down + 4 up: 1:1 pods of 2 SUs (4 + 4 ports), 8 pods, 64
    // servers; 3:1 pods of 3 SUs (6 leaves, 6 + 2 ports), 2 pods of 12 servers.
    let full = spec(128, 2, 2, pods(0, 1, 1), Tiers::Auto, (1, 1), 8);
    let t = build(&full).unwrap();
    let n = t.num_hosts() as u64;
    for (name, side) in splits(t.num_hosts(), 4) {
        assert_eq!(bisection_bps(&t, &side), n / 2 * RATE.bps(), "split {name}");
    }
    let thin = spec(48, 2, 2, pods(0, 3, 1), Tiers::Auto, (1, 1), 8);
    let t = build(&thin).unwrap();
    let n = t.num_hosts() as u64;
    let (whole, want) = (n / 2 * RATE.bps(), n / 2 * RATE.bps() / 3);
    for (name, side) in splits(t.num_hosts(), 4) {
        let got = bisection_bps(&t, &side);
        if name == "halves" {
            // Hosts are numbered SU by SU, so the first half is pod 0.
            assert_eq!(got, want, "split {name}");
        } else {
            assert!(got >= want && got <= whole, "split {name}: {got}");
        }
    }
}
