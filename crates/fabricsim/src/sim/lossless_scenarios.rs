//! Small topologies and traffic that show lossless-fabric pathologies; shared by the
//! flow-control tests and reusable by congestion-control tests (IB CC, DCQCN fixing them).

use crate::message::MessageDag;
use crate::topology::{GraphBuilder, HostId, Medium, NodeId, Shape, Topology};
use crate::units::{BitRate, Time};

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
