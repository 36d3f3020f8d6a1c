//! Closed-form switch counts and ECMP path counts of the topology builders (full k-ary
//! fat-trees after Al-Fares et al., SIGCOMM 2008, and the partial-fabric rules documented in
//! `topology::sizing`), rail-optimized placement, tier choice, build errors and DOT export.

use fabricsim::topology::{
    HostId, Kind, NodeId, NodeKind, PortId, Tiers, Topology, TopologySpec, build, dot, max_hosts,
};
use fabricsim::units::BitRate;

fn spec(gpus: u32, gpn: u32, nics: u32, kind: Kind, tiers: Tiers, radix: u32) -> TopologySpec {
    TopologySpec {
        gpus,
        gpus_per_node: gpn,
        nics_per_node: nics,
        kind,
        tiers,
        oversubscription: (1, 1),
        switch_radix: radix,
        port_rate: BitRate::gbps(400),
        planes: 1,
    }
}

/// Switches per tier: [leaves, spines, cores].
fn per_tier(t: &Topology) -> [usize; 3] {
    let mut c = [0; 3];
    for (_, n) in t.switches() {
        c[n.tier() as usize - 1] += 1;
    }
    c
}

fn leaf_of(t: &Topology, h: HostId) -> NodeId {
    t.peer_node(t.host_port(h))
}

#[test]
fn full_two_tier_has_k_leaves_k_over_2_spines_k2_over_2_hosts() {
    for k in [8u32, 16, 32, 64] {
        let t = build(&spec(k * k / 2, 1, 1, Kind::FatTree, Tiers::Auto, k)).unwrap();
        assert_eq!(t.tiers, 2);
        assert_eq!(per_tier(&t), [k as usize, k as usize / 2, 0], "k={k}");
        assert_eq!(t.num_hosts() as u32, k * k / 2);
        // Every switch port used: k leaves·k ports + k/2 spines·k ports.
        assert!(t.switches().all(|(_, n)| n.num_ports == k));
        // ECMP: k/2 spine paths between hosts on different leaves, 1 on the same leaf.
        let (a, b, c) = (HostId(0), HostId(1), HostId(k * k / 2 - 1));
        assert_eq!(leaf_of(&t, a), leaf_of(&t, b));
        assert_eq!(t.routing.path_count(&t, a, b), 1);
        assert_eq!(t.routing.path_count(&t, a, c), k as u64 / 2);
    }
}

#[test]
fn full_three_tier_has_5k2_over_4_switches_for_k3_over_4_hosts() {
    for k in [8u32, 16, 32] {
        let hosts = k * k * k / 4;
        let t = build(&spec(hosts, 1, 1, Kind::FatTree, Tiers::Auto, k)).unwrap();
        assert_eq!(t.tiers, 3);
        let [l, s, c] = per_tier(&t);
        // k pods × k/2 leaves, k pods × k/2 spines, (k/2)² cores: 5k²/4 in all.
        assert_eq!(
            (l, s, c),
            (
                k as usize * k as usize / 2,
                k as usize * k as usize / 2,
                k as usize * k as usize / 4
            )
        );
        assert_eq!(l + s + c, 5 * k as usize * k as usize / 4);
        assert!(t.switches().all(|(_, n)| n.num_ports == k));
        // ECMP: same leaf 1; same pod (leaves 0 and 1 of pod 0) k/2; other pod (k/2)².
        let per_leaf = k / 2;
        let same_pod = HostId(per_leaf);
        let other_pod = HostId(hosts - 1);
        assert_eq!(t.routing.path_count(&t, HostId(0), HostId(1)), 1);
        assert_eq!(t.routing.path_count(&t, HostId(0), same_pod), k as u64 / 2);
        assert_eq!(
            t.routing.path_count(&t, HostId(0), other_pod),
            (k as u64 / 2).pow(2)
        );
    }
}

#[test]
fn max_hosts_closed_forms() {
    for k in [8u32, 16, 64, 128] {
        let k64 = k as u64;
        // One switch: k hosts; 2 tiers: k²/2; 3 tiers: k³/4 (1:1, one NIC per server).
        assert_eq!(max_hosts(Kind::FatTree, k, 1, (1, 1), 1), k64);
        assert_eq!(max_hosts(Kind::FatTree, k, 2, (1, 1), 1), k64 * k64 / 2);
        assert_eq!(
            max_hosts(Kind::FatTree, k, 3, (1, 1), 1),
            k64 * k64 * k64 / 4
        );
        assert_eq!(
            max_hosts(Kind::RailOptimized, k, 3, (1, 1), 1),
            k64 * k64 * k64 / 4
        );
    }
    // 3:1 on 64 ports: 48 host ports per leaf; 64·48 = 3072 in 2 tiers, 64·32·48 = 98,304 in 3.
    assert_eq!(max_hosts(Kind::FatTree, 64, 2, (3, 1), 1), 3072);
    assert_eq!(max_hosts(Kind::FatTree, 64, 3, (3, 1), 1), 98_304);
    // 2:1 on 64 ports: 64 − ⌈64/3⌉ = 42 host ports; 8-NIC servers fit 5 per leaf (40 hosts).
    assert_eq!(max_hosts(Kind::FatTree, 64, 2, (2, 1), 8), 64 * 40);
    assert_eq!(max_hosts(Kind::RailOptimized, 64, 2, (2, 1), 8), 8 * 42 * 8);
    // Rail, 8 rails on 64 ports at 1:1: 2 tiers hold 64/8 = 8 SUs of 32 servers.
    assert_eq!(max_hosts(Kind::RailOptimized, 64, 2, (1, 1), 8), 8 * 32 * 8);
    // 1 tier cannot join 8 rails.
    assert_eq!(max_hosts(Kind::RailOptimized, 64, 1, (1, 1), 8), 0);
}

#[test]
fn partial_two_tier_uses_fewest_spines_dividing_the_uplinks() {
    // 64 ports, 8 NICs per server: 4 servers (32 hosts) and 32 uplinks per leaf.
    // 1,000 GPUs = 125 servers → ⌈125/4⌉ = 32 leaves (the last with 1 server);
    // spines: smallest divisor S of 32 with 64·S ≥ 32·32 = 1024 → S = 16.
    let t = build(&spec(1000, 8, 8, Kind::FatTree, Tiers::Auto, 64)).unwrap();
    assert_eq!(per_tier(&t), [32, 16, 0]);
    assert_eq!(t.num_hosts(), 125 * 8);
    let tier2_links = t.links.iter().filter(|l| l.tier == 2).count();
    assert_eq!(tier2_links, 32 * 32);
    // 136 GPUs = 17 servers → 5 leaves; S: 64·S ≥ 5·32 = 160 → S ≥ 3 → divisor 4; 8 parallel
    // links per leaf-spine pair, so 32 uplinks × 8 down ports = 256 port paths between leaves.
    let t = build(&spec(136, 8, 8, Kind::FatTree, Tiers::Auto, 64)).unwrap();
    assert_eq!(per_tier(&t), [5, 4, 0]);
    let last = HostId(t.num_hosts() as u32 - 1);
    assert_eq!(t.routing.path_count(&t, HostId(0), last), 32 * 8);
}

#[test]
fn partial_three_tier_counts() {
    // k=8, 1:1, one NIC: 4 hosts per leaf, pods of 4 leaves; 2 tiers reach 32 hosts.
    // 50 hosts → 13 leaves in pods [4, 4, 4, 1].
    // Cores per plane C: smallest c ≤ 4 with Σ max(Lp, c) ≤ 8c: c=1: 13 > 8; c=2: 14 ≤ 16.
    // → 4 planes × 2 = 8 cores. Pod spines: full pods (4/Sp)(4+4) ≤ 8 → 4; last pod
    // (4/Sp)(1+2) ≤ 8 → Sp = 2. Spines 4+4+4+2 = 14. Switches 13 + 14 + 8 = 35.
    let t = build(&spec(50, 1, 1, Kind::FatTree, Tiers::Auto, 8)).unwrap();
    assert_eq!(t.tiers, 3);
    assert_eq!(per_tier(&t), [13, 14, 8]);

    // k=64, 8 NICs, 40,000 GPUs: 5,000 servers, 4 per leaf → 1,250 leaves = 39 full pods of
    // 32 + 2. C: 39·32 + max(2, c) ≤ 64c → c = 20 (1268 ≤ 1280; c=19: 1267 > 1216).
    // Cores 32 planes × 20 = 640. Spines: 39·32 + last pod (32/Sp)(2+20) ≤ 64 → Sp ≥ 11 → 16.
    let t = build(&spec(40_000, 8, 8, Kind::FatTree, Tiers::Auto, 64)).unwrap();
    assert_eq!(per_tier(&t), [1250, 39 * 32 + 16, 640]);
    assert!(t.switches().all(|(_, n)| n.num_ports <= 64));
}

#[test]
fn gpus_131072_on_128_port_switches() {
    // 128 ports, 8 NICs: 8 servers (64 hosts) per leaf → 2,048 leaves in 32 pods of 64.
    // C: 32·64 ≤ 128c → 16 cores per plane, 64 planes → 1,024 cores; 32 × 64 spines.
    let t = build(&spec(131_072, 8, 8, Kind::FatTree, Tiers::Auto, 128)).unwrap();
    t.check().unwrap();
    assert_eq!(t.tiers, 3);
    assert_eq!(per_tier(&t), [2048, 2048, 1024]);
    assert_eq!(t.num_hosts(), 131_072);
    // Every switch has a few down ranges (one per host on a leaf, one per leaf or pod above).
    for (id, n) in t.switches() {
        assert!(t.routing.down_ranges(id).len() <= 64, "tier {}", n.tier());
    }
}

#[test]
fn auto_picks_the_fewest_tiers() {
    let tiers = |gpus, nics, kind| {
        build(&spec(gpus, nics, nics, kind, Tiers::Auto, 64))
            .unwrap()
            .tiers
    };
    // One 64-port switch: 64 hosts; 2 tiers: 64²/2 = 2,048; then 3 tiers.
    assert_eq!(tiers(64, 1, Kind::FatTree), 1);
    assert_eq!(tiers(65, 1, Kind::FatTree), 2);
    assert_eq!(tiers(2048, 1, Kind::FatTree), 2);
    assert_eq!(tiers(2049, 1, Kind::FatTree), 3);
    // 8 servers of 8 NICs fill one switch; rails need a spine tier to meet.
    assert_eq!(tiers(64, 8, Kind::FatTree), 1);
    assert_eq!(tiers(64, 8, Kind::RailOptimized), 2);
}

#[test]
fn rail_optimized_lands_nic_i_on_the_rail_i_leaf_of_its_su() {
    // 64 ports, 1:1, 8 rails: SU = 32 servers, 8 leaves. 1,016 GPUs = 127 servers → 4 SUs
    // (the last with 31 servers), 32 leaves; spines: 64·S ≥ 32·32 → 16.
    let t = build(&spec(1016, 8, 8, Kind::RailOptimized, Tiers::Auto, 64)).unwrap();
    assert_eq!(t.tiers, 2);
    assert_eq!(per_tier(&t), [32, 16, 0]);
    for server in 0..127u32 {
        for rail in 0..8u16 {
            let h = t.host_of(server, rail).unwrap();
            match t.node(leaf_of(&t, h)).kind {
                NodeKind::Switch {
                    tier: 1,
                    group,
                    index,
                } => {
                    assert_eq!((group, index), (server / 32, rail as u32));
                }
                k => panic!("{k:?}"),
            }
        }
    }
    let h = |s, r| t.host_of(s, r).unwrap();
    // Same rail, same SU: one leaf, one path.
    assert_eq!(leaf_of(&t, h(0, 3)), leaf_of(&t, h(31, 3)));
    assert_eq!(t.routing.path_count(&t, h(0, 3), h(31, 3)), 1);
    // Same rail in different SUs, or another rail of the same server: leaf-spine-leaf, over
    // 32 uplinks × 2 parallel spine-to-leaf links (32 uplinks / 16 spines) = 64 paths.
    for (a, b) in [(h(0, 3), h(100, 3)), (h(0, 3), h(0, 4))] {
        assert_ne!(leaf_of(&t, a), leaf_of(&t, b));
        assert_eq!(t.routing.path_count(&t, a, b), 64);
    }
}

#[test]
fn rail_optimized_three_tier_pods_hold_whole_sus() {
    // 64 ports, 8 rails: 2 tiers reach 8 SUs = 2,048 GPUs. 16,384 GPUs = 2,048 servers = 64
    // SUs; a pod holds ⌊32/8⌋ = 4 SUs (32 leaves) → 16 pods. C: 16·32 ≤ 64c → 8 cores per
    // plane, 32 planes → 256 cores; 16 × 32 spines.
    let t = build(&spec(16_384, 8, 8, Kind::RailOptimized, Tiers::Auto, 64)).unwrap();
    assert_eq!(t.tiers, 3);
    assert_eq!(per_tier(&t), [512, 512, 256]);
    let h = |s, r| t.host_of(s, r).unwrap();
    // Other pod: 32 leaf uplinks × 32 spine uplinks × 4 parallel core-to-spine links
    // (each spine deals 32 links over 8 cores) × 1 spine-to-leaf link.
    assert_eq!(t.routing.path_count(&t, h(0, 0), h(2047, 0)), 32 * 32 * 4);
    // Same pod (SU 0 and SU 3), same rail: 32 spines.
    assert_eq!(t.routing.path_count(&t, h(0, 0), h(127, 0)), 32);
}

fn error(s: TopologySpec) -> fabricsim::topology::BuildError {
    build(&s).expect_err("must not build")
}

#[test]
fn build_errors_name_the_field() {
    let ok = spec(64, 8, 8, Kind::FatTree, Tiers::Auto, 64);
    assert_eq!(
        error(TopologySpec {
            gpus: 0,
            ..ok.clone()
        })
        .field,
        "gpus"
    );
    assert_eq!(
        error(TopologySpec {
            nics_per_node: 0,
            ..ok.clone()
        })
        .field,
        "nics_per_node"
    );
    assert_eq!(
        error(TopologySpec {
            gpus_per_node: 0,
            ..ok.clone()
        })
        .field,
        "gpus_per_node"
    );
    for o in [(0, 1), (1, 0), (0, 0), (1, 2)] {
        let e = error(TopologySpec {
            oversubscription: o,
            ..ok.clone()
        });
        assert_eq!(e.field, "oversubscription", "{o:?}");
    }
    for t in [0, 4] {
        assert_eq!(
            error(TopologySpec {
                tiers: Tiers::Fixed(t),
                ..ok.clone()
            })
            .field,
            "tiers"
        );
    }
    assert_eq!(
        error(TopologySpec {
            switch_radix: 1,
            ..ok.clone()
        })
        .field,
        "switch_radix"
    );
    // A fat-tree leaf of 8 ports at 1:1 has 4 host ports: an 8-NIC server does not fit.
    let e = error(TopologySpec {
        switch_radix: 8,
        ..ok.clone()
    });
    assert_eq!(e.field, "nics_per_node");
    assert!(e.problem.contains("4 host ports"), "{}", e.problem);
    // 8 rails cannot meet on one switch.
    let rail1 = spec(64, 8, 8, Kind::RailOptimized, Tiers::Fixed(1), 64);
    assert_eq!(error(rail1).field, "tiers");
}

#[test]
fn radix_too_small_for_the_tiers_reports_the_reach() {
    // k=8, one NIC: 2 tiers reach 32 hosts, 3 tiers 128.
    let e = error(spec(100, 1, 1, Kind::FatTree, Tiers::Fixed(2), 8));
    assert_eq!(e.field, "tiers");
    assert!(e.problem.contains("32 GPUs in 2 tiers"), "{}", e.problem);
    assert!(e.allowed.contains("tiers = 3"), "{}", e.allowed);
    for tiers in [Tiers::Auto, Tiers::Fixed(3)] {
        let e = error(spec(200, 1, 1, Kind::FatTree, tiers, 8));
        assert_eq!(e.field, "switch_radix");
        assert!(e.problem.contains("128 GPUs in 3 tiers"), "{}", e.problem);
        assert!(e.allowed.contains("at most 128 GPUs"), "{}", e.allowed);
    }
    // 64-port switches with 8-NIC servers: 65,536 GPUs in 3 tiers, not 131,072.
    let e = error(spec(131_072, 8, 8, Kind::FatTree, Tiers::Auto, 64));
    assert!(e.allowed.contains("at most 65536 GPUs"), "{}", e.allowed);
}

#[test]
fn nics_fewer_than_gpus() {
    // 4 NICs for 8 GPUs: 1,001 GPUs → ⌈1001/8⌉ = 126 servers, 504 NIC ports.
    let t = build(&spec(1001, 8, 4, Kind::FatTree, Tiers::Auto, 64)).unwrap();
    assert_eq!((t.servers, t.num_hosts()), (126, 504));
    assert_eq!(t.rails_per_server(), 4);
    assert_eq!(t.host_of(125, 3), Some(HostId(503)));
    assert_eq!(t.host_of(125, 4), None);
    assert_eq!(t.host_of(126, 0), None);
}

#[test]
fn dot_export_names_nodes_and_is_deterministic() {
    // k=4, one NIC: 2 host ports per leaf; 8 hosts → 4 leaves, 2 spines.
    let s = spec(8, 1, 1, Kind::FatTree, Tiers::Auto, 4);
    let t = build(&s).unwrap();
    let mut out = Vec::new();
    dot::write(&t, &mut out).unwrap();
    let text = String::from_utf8(out.clone()).unwrap();
    assert!(text.starts_with("graph fabric {"));
    assert!(
        text.contains("\"nic_s7_r0\" -- \"leaf_p0_3\" [label=\"400Gbps\"];"),
        "{text}"
    );
    assert!(text.contains("\"leaf_p0_0\" -- \"spine_p0_1\""));
    assert_eq!(text.matches(" -- ").count(), t.links.len());
    assert_eq!(t.links.len(), 8 + 4 * 2);
    let mut again = Vec::new();
    dot::write(&build(&s).unwrap(), &mut again).unwrap();
    assert_eq!(out, again);
    let r = build(&spec(16, 4, 4, Kind::RailOptimized, Tiers::Fixed(3), 8)).unwrap();
    let mut out = Vec::new();
    dot::write(&r, &mut out).unwrap();
    let text = String::from_utf8(out).unwrap();
    assert!(text.contains("\"nic_s1_r2\" -- \"leaf_su0_r2\""), "{text}");
    assert!(text.contains("core_pl"));
}

/// Rail-only and multi-plane are `P` copies of one plane's fabric (`topology::sizing`): a
/// rail-only fabric of 8-port servers is 8 fat-trees of 1-port servers, so 16,384 GPUs of
/// 8-NIC servers on 64-port switches fit 2 tiers: per rail a full k²/2 = 2,048-server 2-tier
/// fat-tree (k = 64 leaves, k/2 = 32 spines), 8 × 96 = 768 switches, where rail-optimized
/// needs 3 tiers and 1,280.
#[test]
fn rail_only_and_multi_plane_16k_gpus_fit_two_tiers_in_768_switches() {
    let rail_only = build(&spec(16_384, 8, 8, Kind::RailOnly, Tiers::Auto, 64)).unwrap();
    assert_eq!((rail_only.tiers, per_tier(&rail_only)), (2, [512, 256, 0]));
    let mut mp = spec(16_384, 8, 8, Kind::FatTree, Tiers::Auto, 64);
    mp.planes = 8;
    let multi = build(&mp).unwrap();
    assert_eq!((multi.tiers, per_tier(&multi)), (2, [512, 256, 0]));
    let rail_opt = build(&spec(16_384, 8, 8, Kind::RailOptimized, Tiers::Auto, 64)).unwrap();
    assert_eq!(
        (rail_opt.tiers, per_tier(&rail_opt).iter().sum::<usize>()),
        (3, 1280)
    );
    let h = |s, r| rail_only.host_of(s, r).unwrap();
    // Same rail, other leaf: up to any of the rail's 32 spines and down.
    assert_eq!(
        rail_only
            .routing
            .path_count(&rail_only, h(0, 3), h(2047, 3)),
        32
    );
    assert_eq!(
        rail_only.routing.path_count(&rail_only, h(0, 3), h(31, 3)),
        1
    );
    // Another rail: no switch path at all (the traffic crosses NVLink first, PXN).
    let leaf = leaf_of(&rail_only, h(0, 3));
    let top = rail_only.peer_node(PortId(rail_only.node(leaf).up_ports().start));
    assert!(rail_only.routing.next_hops(top, h(5, 4)).is_empty());
    assert!(!rail_only.routing.is_below(top, h(5, 4)));
}

#[test]
fn rail_only_counts_are_the_rails_times_one_plane_at_full_and_partial_sizes() {
    // k = 8, 3 tiers: a rail is a full k³/4 = 128-server fat-tree of 5k²/4 = 80 switches.
    let full3 = build(&spec(1024, 8, 8, Kind::RailOnly, Tiers::Fixed(3), 8)).unwrap();
    assert_eq!(per_tier(&full3), [8 * 32, 8 * 32, 8 * 16]);
    // Partial: 125 servers on 64 ports: per rail ⌈125/32⌉ = 4 leaves and the smallest divisor
    // S of 32 with 64·S ≥ 4·32, 2 spines: 8 × 6 = 48 switches; a fat-tree of 125 1-port
    // servers has the same 6.
    let part = build(&spec(1000, 8, 8, Kind::RailOnly, Tiers::Auto, 64)).unwrap();
    assert_eq!(per_tier(&part), [32, 16, 0]);
    let one = build(&spec(125, 1, 1, Kind::FatTree, Tiers::Auto, 64)).unwrap();
    assert_eq!(per_tier(&one).map(|n| n * 8), per_tier(&part));
    // max_hosts: 8 rails × k²/2 servers in 2 tiers, × k³/4 in 3.
    assert_eq!(max_hosts(Kind::RailOnly, 64, 2, (1, 1), 8), 8 * 2048);
    assert_eq!(max_hosts(Kind::RailOnly, 64, 3, (1, 1), 8), 8 * 65_536);
    // Multi-plane, 2 planes of a rail-optimized fabric of 8-port servers: each plane a
    // rail-optimized fabric of 4-port servers (SU of 32 servers, 4 leaves). 256 servers =
    // 8 SUs = 32 leaves per plane, 2 tiers (64/4 = 16 SUs fit), spines 64·S ≥ 32·32 → 16.
    let mut mp = spec(2048, 8, 8, Kind::RailOptimized, Tiers::Auto, 64);
    mp.planes = 2;
    let t = build(&mp).unwrap();
    assert_eq!((t.tiers, per_tier(&t)), (2, [64, 32, 0]));
    // Every host's leaf holds hosts of its plane (rail mod 2) only.
    for server in [0u32, 100, 255] {
        for rail in 0..8u16 {
            let leaf = leaf_of(&t, t.host_of(server, rail).unwrap());
            for p in t.node(leaf).down_ports() {
                match t.node(t.peer_node(PortId(p))).kind {
                    NodeKind::Nic { rail: r, .. } => assert_eq!(r % 2, rail % 2),
                    k => panic!("{k:?}"),
                }
            }
        }
    }
}

#[test]
fn dual_tor_splits_each_server_over_a_leaf_pair() {
    // 64 ports at 1:1, 8 ports per server: a pair of leaves takes 32 / 4 = 8 servers, the first
    // 4 ports of each on side 0, the last 4 on side 1. 128 servers = 16 pairs = 32 leaves;
    // spines 64·S ≥ 32·32 → 16 (the fat-tree of 4 servers per leaf has the same counts).
    let t = build(&spec(1024, 8, 8, Kind::DualTor, Tiers::Auto, 64)).unwrap();
    let ft = build(&spec(1024, 8, 8, Kind::FatTree, Tiers::Auto, 64)).unwrap();
    assert_eq!(per_tier(&t), [32, 16, 0]);
    assert_eq!(per_tier(&t), per_tier(&ft));
    for server in 0..128u32 {
        for rail in 0..8u16 {
            match t.node(leaf_of(&t, t.host_of(server, rail).unwrap())).kind {
                NodeKind::Switch {
                    tier: 1,
                    group,
                    index,
                } => assert_eq!((group, index), (server / 8, rail as u32 / 4)),
                k => panic!("{k:?}"),
            }
        }
    }
    // The two halves of one server meet at a spine: 32 uplinks × 2 parallel links down.
    let h = |s, r| t.host_of(s, r).unwrap();
    assert_eq!(t.routing.path_count(&t, h(0, 0), h(0, 7)), 64);
    assert_eq!(max_hosts(Kind::DualTor, 64, 2, (1, 1), 8), 64 / 2 * 8 * 8);
    // An odd port count cannot split: the error names nics_per_node.
    assert_eq!(
        build(&spec(64, 8, 7, Kind::DualTor, Tiers::Auto, 64))
            .unwrap_err()
            .field,
        "nics_per_node"
    );
    // Planes must divide the ports, and rail-only takes no planes.
    let mut bad = spec(64, 8, 8, Kind::FatTree, Tiers::Auto, 64);
    bad.planes = 3;
    assert_eq!(build(&bad).unwrap_err().field, "planes");
    bad.kind = Kind::RailOnly;
    bad.planes = 2;
    assert_eq!(build(&bad).unwrap_err().field, "planes");
}

/// A `pods` fabric of `sus` scalable units per pod at core oversubscription `d:u`.
fn pods(sus: u32, d: u32, u: u32) -> Kind {
    Kind::Pods(fabricsim::topology::Pod {
        sus,
        core_oversubscription: (d, u),
    })
}

/// Pods (`topology::pods`, `topology::sizing`): a full fabric has `k` pods of `Lp` leaves, `U`
/// spines per pod and `U·⌈Lp·u/d⌉` cores; a partial one follows the 3-tier rules with the
/// spine's uplinks at the core ratio. Paths: `U` within a pod (one per spine), `U·C` across.
#[test]
fn pods_counts_at_full_and_partial_sizes() {
    // k = 16, 2 rails, leaves 8 down + 8 up: a pod at 3:1 holds 6 SUs (12 + ⌈12/3⌉ = 16
    // ports); 16 pods × 6 SUs × 8 servers = 768 servers: 192 leaves, 128 spines, 8 × 4 cores.
    let full = build(&spec(1536, 2, 2, pods(0, 3, 1), Tiers::Auto, 16)).unwrap();
    assert_eq!((full.tiers, per_tier(&full)), (3, [192, 128, 32]));
    assert_eq!(max_hosts(pods(0, 3, 1), 16, 3, (1, 1), 2), 1536);
    assert_eq!(max_hosts(pods(0, 3, 1), 16, 2, (1, 1), 2), 0);
    // At 1:1 a pod is the 3-tier fat-tree's k/2 leaves: 5k²/4 switches like rail-optimized.
    let nb = build(&spec(1024, 2, 2, pods(0, 1, 1), Tiers::Auto, 16)).unwrap();
    let ro = build(&spec(1024, 2, 2, Kind::RailOptimized, Tiers::Fixed(3), 16)).unwrap();
    assert_eq!(per_tier(&nb), [128, 128, 64]);
    assert_eq!(per_tier(&nb), per_tier(&ro));
    let h = |t: &Topology, s, r| t.host_of(s, r).unwrap();
    // Rail 1 of server 0 to rail 1 of server 40 (SU 5, same pod), then server 48 (pod 1).
    assert_eq!(
        full.routing
            .path_count(&full, h(&full, 0, 1), h(&full, 40, 1)),
        8
    );
    assert_eq!(
        full.routing
            .path_count(&full, h(&full, 0, 1), h(&full, 48, 1)),
        8 * 4
    );
    // 16,384 GPUs of 8-NIC servers on 64 ports, 7 SUs per pod at 15:1: 64 SUs in 9 full pods
    // (32 spines of 56 down + 4 up each) and a pod of 1 SU (8 leaves, 1 up per plane: the
    // smallest divisor Sp of 32 with (32/Sp)·(8 + 1) ≤ 64 is 8); C = 1 core per plane (9·4 + 1
    // ≤ 64): 512 + 296 + 32 = 840 switches, where rail-optimized needs 1,280, rail-only 768.
    let part = build(&spec(16_384, 8, 8, pods(7, 15, 1), Tiers::Auto, 64)).unwrap();
    assert_eq!((part.tiers, per_tier(&part)), (3, [512, 9 * 32 + 8, 32]));
    // Partial at 1:1 with the largest pods is the 3-tier rail-optimized fabric, switch for switch.
    let p1 = build(&spec(16_384, 8, 8, pods(0, 1, 1), Tiers::Auto, 64)).unwrap();
    let r1 = build(&spec(16_384, 8, 8, Kind::RailOptimized, Tiers::Auto, 64)).unwrap();
    assert_eq!(per_tier(&p1), per_tier(&r1));
    // Errors: 2 tiers, a pod larger than a spine takes, a ratio below 1.
    let bad = |k: Kind, t: Tiers| build(&spec(768, 2, 2, k, t, 16)).unwrap_err().field;
    assert_eq!(bad(pods(0, 1, 1), Tiers::Fixed(2)), "tiers");
    assert_eq!(bad(pods(5, 1, 1), Tiers::Auto), "pod_sus");
    assert_eq!(bad(pods(0, 1, 2), Tiers::Auto), "core_oversubscription");
}
