//! `fabricsim_mech::route::RouteTable` against `Routing::next_hops_up` on an ns-3 fat tree, a
//! planned rail-optimized fabric and an irregular one (fixtures from the input layer, so the
//! test lives above it).

use fabricsim_core::topology::{HostId, NodeId};
use fabricsim_mech::params::RoutePolicy;
use fabricsim_mech::route::{RouteTable, choose, switch_salt};

#[test]
fn route_table_gives_the_routing_candidates_in_order() {
    // Reference: `Routing::next_hops_up` (binary search over the down ranges) at every node
    // for every destination, on uniform fat-tree and rail-optimized fabrics (fast path) and
    // on two leaves of 3 hosts (the spine's blocks are 3 wide: it falls back).
    let ft4 = fabricsim_input::io::ns3::read_topology(&fabricsim_core::error::Source::new(
        "sim-ft4.topo.txt",
        include_str!("../../../examples/sim-ft4.topo.txt"),
    ))
    .unwrap()
    .topo;
    let rail = fabricsim_input::test_util::scenario(&[
        ("--gpus", "256"),
        ("--topology", "rail-optimized"),
    ])
    .design_and_topology()
    .unwrap()
    .1;
    let odd = fabricsim_mech::lossless_scenarios::two_leaves(
        3,
        fabricsim_core::units::BitRate::gbps(100),
        fabricsim_core::units::Time::from_ns(1),
    );
    for (t, want_fast) in [(&ft4, true), (&rail, true), (&odd, false)] {
        let table = RouteTable::new(t, RoutePolicy::EcmpFlowHash, true);
        let off = RouteTable::new(t, RoutePolicy::EcmpFlowHash, false);
        let mut fast = 0;
        for n in 0..t.nodes.len() as u32 {
            if !t.nodes[n as usize].is_switch() {
                continue;
            }
            fast += table.is_fast(n) as usize;
            for d in 0..t.num_hosts() as u32 {
                let (c, up, salt) = table.next_hops_up(t, n, d);
                let (rc, rup) = t.routing.next_hops_up(NodeId(n), HostId(d));
                assert_eq!((c, up), (rc, rup), "node {n} dst {d}");
                assert_eq!(salt, switch_salt(n));
                // The hop's inline choice: `choose` among the reference candidates at a
                // node with uniform blocks, none elsewhere or in a table built without it.
                for hash in [0, 0x9e37_79b9, u32::MAX] {
                    let k = choose(RoutePolicy::EcmpFlowHash, rc.len(), hash, d, salt, rup);
                    let want = (table.is_fast(n) && !rc.is_empty()).then(|| rc[k]);
                    // SAFETY: `n` is one of `t`'s nodes.
                    assert_eq!(unsafe { table.static_choice(n, d, hash) }, want);
                    assert_eq!(unsafe { off.static_choice(n, d, hash) }, None);
                }
            }
        }
        let switches = t.nodes.iter().filter(|x| x.is_switch()).count();
        assert_eq!(
            fast == switches,
            want_fast,
            "{fast} of {switches} switches fast"
        );
    }
}
