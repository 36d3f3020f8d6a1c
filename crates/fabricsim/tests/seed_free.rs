//! `SimInfo::drew_random`: a packet run that drew nothing from its seed's random streams gives
//! the same result under another seed, and one that drew (link loss, RED marking between its
//! thresholds) says so. `compare` reuses the first seed's busbw curves on that ground
//! (`workload::seeds::FirstSeed`).

use fabricsim_core::message::MessageDag;
use fabricsim_core::topology::HostId;
use fabricsim_core::units::{BitRate, Time};
use fabricsim_mech::ecn::EcnMarking;
use fabricsim_mech::lossless_scenarios::clos2;
use fabricsim_mech::{RunResult, SimParams};

fn run(p: &SimParams, dag: &MessageDag) -> RunResult {
    let (topo, _, _) = clos2(2, 2, 4, BitRate::gbps(400), Time::from_ns(100));
    fabricsim_packet::run(&topo, p, dag, &Default::default(), Default::default()).unwrap()
}

/// 4 hosts of one leaf each send 1 MB to a host of the other leaf, over the 2 spines.
fn crossing() -> MessageDag {
    let mut dag = MessageDag::default();
    for s in 0..4 {
        dag.push(HostId(s), HostId(4 + s), 1 << 20, Time::ZERO, &[]);
    }
    dag
}

/// 4 hosts send 1 MB each to one host: its last-hop queue crosses the ECN thresholds.
fn incast() -> MessageDag {
    let mut dag = MessageDag::default();
    for s in 1..5 {
        dag.push(HostId(s), HostId(0), 1 << 20, Time::ZERO, &[]);
    }
    dag
}

fn without_seed(mut r: RunResult) -> RunResult {
    r.sim.seed = 0;
    r.sim.wall_s = 0.0;
    r.sim.events_per_s = 0.0;
    r.sim.packets_per_s = 0.0;
    r
}

#[test]
fn a_run_that_draws_nothing_is_the_same_under_every_seed() {
    let mut p = SimParams::roce();
    p.cc.ecn = None;
    let a = run(&p, &crossing());
    assert!(!a.sim.drew_random);
    p.seed = 12345;
    let b = run(&p, &crossing());
    assert!(!b.sim.drew_random);
    assert_eq!(without_seed(a), without_seed(b));
}

#[test]
fn link_loss_and_red_marking_draw() {
    let mut p = SimParams::roce();
    p.cc.ecn = None;
    p.loss_rate = 0.01;
    assert!(
        run(&p, &crossing()).sim.drew_random,
        "link loss draws per packet"
    );
    let mut p = SimParams::roce();
    p.cc.ecn = Some(EcnMarking::Red {
        kmin_bytes: 5_000,
        kmax_bytes: 200_000,
        pmax: 0.2,
    });
    let r = run(&p, &incast());
    assert!(r.counters.ecn_marks > 0, "the incast's queue passes Kmin");
    assert!(r.sim.drew_random, "RED draws between Kmin and Kmax");
    // A step threshold marks without drawing.
    p.cc.ecn = Some(EcnMarking::Step { k_bytes: 5_000 });
    let r = run(&p, &incast());
    assert!(r.counters.ecn_marks > 0);
    assert!(!r.sim.drew_random);
}
