//! `fabricsim_mech::reroute::Reach` (which ports still reach which hosts after link failures)
//! against a path search, on the ns-3 fat tree of examples/ and a planned 3-tier fabric
//! (fixtures from the input layer, so the test lives above it).

use fabricsim_core::error::Source;
use fabricsim_core::rng::{Rng, Stream};
use fabricsim_core::topology::{HostId, NodeId, PortId, Topology};
use fabricsim_mech::reroute::Reach;

/// The k = 4 fat tree of examples/sim-ft4.topo.txt: hosts 0-15, edges 16-23, aggregations
/// 24-31, cores 32-35 (ns-3 ids); links 0-15 host-edge, 16-31 edge-agg, 32-47 agg-core.
fn ft4() -> Topology {
    let text = include_str!("../../../examples/sim-ft4.topo.txt");
    fabricsim_input::io::ns3::read_topology(&Source::new("sim-ft4.topo.txt", text))
        .unwrap()
        .topo
}

/// Independent reference: whether a packet at `node` for `dst` can get there by up/down
/// routing over live links (a search over every candidate, no ranges).
fn can_reach(t: &Topology, up: &[bool], node: NodeId, dst: u32) -> bool {
    if t.nics[dst as usize] == node {
        return true;
    }
    if !t.nodes[node.idx()].is_switch() {
        // A NIC sends through its one port.
        let p = PortId(t.nodes[node.idx()].ports().start);
        return up[t.ports[p.idx()].link.idx()] && can_reach(t, up, t.peer_node(p), dst);
    }
    t.routing
        .next_hops(node, HostId(dst))
        .iter()
        .any(|&p| up[t.ports[p.idx()].link.idx()] && can_reach(t, up, t.peer_node(p), dst))
}

/// Every (switch port, destination routed through it): the table agrees with the search.
fn check_against_search(t: &Topology, up: &[bool]) -> usize {
    let r = Reach::compute(t, up);
    let mut blocked = 0;
    for (ni, node) in t.nodes.iter().enumerate() {
        if !node.is_switch() {
            continue;
        }
        for dst in 0..t.num_hosts() as u32 {
            for &p in t.routing.next_hops(NodeId(ni as u32), HostId(dst)) {
                let want = up[t.ports[p.idx()].link.idx()] && can_reach(t, up, t.peer_node(p), dst);
                assert_eq!(r.reaches(p.idx(), dst), want, "port {} dst {dst}", p.0);
                blocked += usize::from(!want);
            }
        }
    }
    blocked
}

#[test]
fn a_healthy_fabric_blocks_nothing() {
    let t = ft4();
    let r = Reach::compute(&t, &vec![true; t.links.len()]);
    assert_eq!(r, Reach::healthy(t.ports.len()));
}

#[test]
fn an_edge_aggregation_failure_is_avoided_fabric_wide() {
    let t = ft4();
    let mut up = vec![true; t.links.len()];
    // Link 16: edge 16 (hosts 0, 1) to aggregation 24.
    up[16] = false;
    let r = Reach::compute(&t, &up);
    let port_to = |from: u32, to: u32| {
        t.nodes[from as usize]
            .ports()
            .find(|&p| t.peer_node(PortId(p)).0 == to)
            .unwrap() as usize
    };
    // The edge's dead up-port carries nothing any more; its other one everything.
    assert!(
        (0..16)
            .filter(|&d| d >= 2)
            .all(|d| !r.reaches(port_to(16, 24), d))
    );
    assert!((2..16).all(|d| r.reaches(port_to(16, 25), d)));
    // Aggregation 24 has no way down to hosts 0 and 1: the cores avoid it for them (and
    // only for them), and so does the other edge of the pod.
    for core in 32..34 {
        let p = port_to(core, 24);
        assert!(
            !r.reaches(p, 0) && !r.reaches(p, 1) && r.reaches(p, 2),
            "core {core}"
        );
    }
    assert!(!r.reaches(port_to(17, 24), 0) && r.reaches(port_to(17, 24), 5));
    // Other pods' aggregations: their up-ports to cores 32 and 33 (which connect to 24)
    // no longer reach hosts 0 and 1; those to cores 34 and 35 do.
    assert!(!r.reaches(port_to(26, 32), 0) && r.reaches(port_to(27, 34), 0));
    // Aggregation 26 reaches pod 0 only through cores 32 and 33: the edges of its pod
    // avoid it for hosts 0 and 1 (and use it for the rest).
    assert!(!r.reaches(port_to(18, 26), 0) && r.reaches(port_to(18, 27), 0));
    assert!(r.reaches(port_to(18, 26), 2));
    // Blocked (port, destination) pairs: edge 16 up 14, agg 24 down 2, cores 32-33 down
    // 2 x 2, edge 17 up 2, aggs 26/28/30 up to 32-33 3 x 2 x 2, edges of pods 1-3 up to
    // those aggs 6 x 2 = 46.
    assert_eq!(check_against_search(&t, &up), 46);
}

#[test]
fn random_failures_agree_with_a_path_search() {
    // ft4 and a built 3-tier fabric with single links between switches (k = 8 switch).
    let built = fabricsim_input::test_util::scenario(&[
        ("--gpus", "128"),
        ("--fabric", "ib-ndr"),
        ("--tiers", "3"),
    ])
    .design_and_topology()
    .unwrap()
    .1;
    for t in [ft4(), built] {
        for seed in 0..20u64 {
            let mut rng = Rng::stream(seed, Stream::Test(0x5e_4007e), 0);
            let fail = 1 + rng.below(6) as usize;
            let mut up = vec![true; t.links.len()];
            for _ in 0..fail {
                up[rng.below(t.links.len() as u64) as usize] = false;
            }
            check_against_search(&t, &up);
        }
    }
}
