//! Small topologies and traffic that show lossless-fabric pathologies; shared by the
//! flow-control tests and reusable by congestion-control tests (IB CC, DCQCN fixing them).

use super::faults::{Fault, Faults};
use fabricsim_core::message::MessageDag;
use fabricsim_core::topology::{GraphBuilder, HostId, Medium, NodeId, PortId, Shape, Topology};
use fabricsim_core::units::{BitRate, Time};

/// Two leaves under one spine, `per_leaf` hosts each (hosts 0.. on leaf A, `per_leaf`.. on
/// leaf B), every link at `rate` with `delay`.
pub fn two_leaves(per_leaf: u32, rate: BitRate, delay: Time) -> Topology {
    let mut b = GraphBuilder::new();
    let hosts: Vec<NodeId> = (0..2 * per_leaf).map(|i| b.add_nic(i, 0)).collect();
    let leaves = [
        b.add_switch(1, 0, 0, per_leaf + 1),
        b.add_switch(1, 1, 0, per_leaf + 1),
    ];
    let spine = b.add_switch(2, 0, 0, 2);
    for (i, h) in hosts.iter().enumerate() {
        b.connect(
            *h,
            leaves[i / per_leaf as usize],
            rate,
            1.0,
            delay,
            Medium::Unspecified,
        );
    }
    for l in leaves {
        b.connect(l, spine, rate, 1.0, delay, Medium::Unspecified);
    }
    b.finish(Shape::Imported, 2, 2 * per_leaf)
}

/// The hotspot-and-victim pattern of congestion spreading (Gran et al., "First experiences
/// with congestion control in InfiniBand hardware", IPDPS 2010): on `two_leaves(per_leaf)`,
/// hosts 1..=`remote` of leaf A and every other host of leaf B except the last send `bytes` to
/// the hotspot (the first host of leaf B); host 0 sends `bytes` to the last host of leaf B, the
/// victim, sharing the A -> spine -> B links with the hotspot's remote senders but not its
/// destination. Returns the DAG and the victim message's index.
pub fn hotspot_victim(per_leaf: u32, remote: u32, bytes: u64) -> (MessageDag, u32) {
    assert!(remote < per_leaf && per_leaf >= 3);
    let hot = HostId(per_leaf);
    let mut dag = MessageDag::default();
    for s in 1..=remote {
        dag.push(HostId(s), hot, bytes, Time::ZERO, &[]);
    }
    for s in per_leaf + 1..2 * per_leaf - 1 {
        dag.push(HostId(s), hot, bytes, Time::ZERO, &[]);
    }
    let victim = dag.messages.len() as u32;
    dag.push(HostId(0), HostId(2 * per_leaf - 1), bytes, Time::ZERO, &[]);
    (dag, victim)
}

/// A two-tier Clos: `leaves` leaves with `per_leaf` hosts each (hosts numbered leaf by leaf)
/// under `spines` spines, every link at `rate` with `delay`. Returns the topology, the leaf
/// and the spine node ids.
pub fn clos2(
    leaves: u32,
    spines: u32,
    per_leaf: u32,
    rate: BitRate,
    delay: Time,
) -> (Topology, Vec<NodeId>, Vec<NodeId>) {
    let mut b = GraphBuilder::new();
    let hosts: Vec<NodeId> = (0..leaves * per_leaf).map(|i| b.add_nic(i, 0)).collect();
    let ls: Vec<NodeId> = (0..leaves)
        .map(|l| b.add_switch(1, l, 0, per_leaf + spines))
        .collect();
    let ss: Vec<NodeId> = (0..spines).map(|s| b.add_switch(2, 0, s, leaves)).collect();
    for (i, h) in hosts.iter().enumerate() {
        b.connect(
            *h,
            ls[i / per_leaf as usize],
            rate,
            1.0,
            delay,
            Medium::Unspecified,
        );
    }
    for &l in &ls {
        for &s in &ss {
            b.connect(l, s, rate, 1.0, delay, Medium::Unspecified);
        }
    }
    (b.finish(Shape::Imported, 2, leaves * per_leaf), ls, ss)
}

/// The port of `from` whose link leads to `to`.
pub fn port_towards(t: &Topology, from: NodeId, to: NodeId) -> PortId {
    t.nodes[from.idx()]
        .ports()
        .map(PortId)
        .find(|&p| t.peer_node(p) == to)
        .expect("adjacent nodes")
}

/// The cyclic buffer dependency of Hu et al. (HotNets 2016, figure 2) on a 4-leaf, 2-spine Clos
/// with `per_leaf` hosts per leaf: links S1-L4 and S2-L1 fail and traffic is rerouted by
/// bouncing (S1 sends L4's traffic down to L3, which sends it up to S2; S2 sends L1's traffic
/// down to L2, which sends it up to S1). L2's hosts send to L4's and L3's hosts to L1's, so
/// the queues L2->S1, S1->L3, L3->S2, S2->L2 wait on each other in a ring.
pub fn bounce_deadlock(per_leaf: u32, rate: BitRate, bytes: u64) -> (Topology, Faults, MessageDag) {
    let (t, l, s) = clos2(4, 2, per_leaf, rate, Time::from_ns(100));
    let host = |leaf: u32, i: u32| HostId(leaf * per_leaf + i);
    let mut faults = Faults::default();
    for (a, b) in [(l[3], s[0]), (l[0], s[1])] {
        let link = t.ports[port_towards(&t, a, b).idx()].link;
        faults.faults.push(Fault::Down {
            link,
            at: Time::ZERO,
        });
    }
    let mut force = |node: NodeId, to: NodeId, dst_leaf: u32| {
        for i in 0..per_leaf {
            faults.faults.push(Fault::Misroute {
                node,
                dst: host(dst_leaf, i),
                port: port_towards(&t, node, to),
            });
        }
    };
    // Towards L4 (leaf 3): L2 -> S1 -> L3 -> S2 -> L4.
    force(l[1], s[0], 3);
    force(s[0], l[2], 3);
    force(l[2], s[1], 3);
    // Towards L1 (leaf 0): L3 -> S2 -> L2 -> S1 -> L1.
    force(l[2], s[1], 0);
    force(s[1], l[1], 0);
    force(l[1], s[0], 0);
    let mut dag = MessageDag::default();
    for i in 0..per_leaf {
        for j in 0..per_leaf {
            dag.push(host(1, i), host(3, j), bytes, Time::ZERO, &[]);
            dag.push(host(2, i), host(0, j), bytes, Time::ZERO, &[]);
        }
    }
    (t, faults, dag)
}
