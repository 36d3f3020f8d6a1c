//! Conservation (bytes offered = delivered + dropped + in flight, and every message byte
//! delivered exactly once) under buffer drops, corruption and a link failure; determinism (two
//! runs of a scenario and seed give identical bytes; another seed gives different ones).

use fabricsim::io::fct::write_fct;
use fabricsim::message::MessageDag;
use fabricsim::sim::{self, Dir, Fault, Faults, LinkLoss, RunOptions, SimParams, Status};
use fabricsim::topology::{HostId, LinkId};
use fabricsim::traffic::{Traffic, generate};
use fabricsim::units::{BitRate, Time};
use fabricsim_cases::sim_util::{run, star};

fn incast_setup() -> (fabricsim::topology::Topology, SimParams, MessageDag, Faults) {
    let t = star(&[BitRate::gbps(100); 17], Time::from_ns(300));
    let mut p = SimParams::roce();
    // A small buffer so the 16-to-1 incast overflows it.
    p.switch_buffer_bytes = 200_000;
    p.timeout_exp = 6;
    let dag = generate(
        &Traffic::Incast {
            senders: 16,
            dst: 16,
            bytes: 300_000,
        },
        17,
        BitRate::gbps(100),
        5,
    )
    .unwrap();
    let f = Faults {
        faults: vec![Fault::Loss {
            // The receiver's link, switch to host: all the data crosses it.
            link: LinkId(16),
            dir: Dir::Down,
            loss: LinkLoss::Rate(1e-2),
        }],
        ..Faults::default()
    };
    (t, p, dag, f)
}

#[test]
fn bytes_are_conserved_through_drops_and_retransmissions() {
    let (t, p, dag, f) = incast_setup();
    let r = run(&t, &p, &dag, &f); // `run` checks offered = delivered + dropped + in flight
    assert_eq!(r.sim.status, Status::Complete);
    assert!(
        r.counters.drops.buffer > 0,
        "the test must exercise buffer drops"
    );
    assert!(r.counters.drops.corruption > 0, "and corruption");
    assert!(r.counters.retransmitted_packets > 0);
    assert_eq!(r.counters.bytes_in_flight, 0);
    // Each message byte is delivered once, no more: duplicates count as dropped.
    assert_eq!(r.counters.bytes_delivered, dag.total_bytes());
}

#[test]
fn a_run_stopped_midway_accounts_for_bytes_in_flight() {
    let (t, p, dag, f) = incast_setup();
    let opts = RunOptions {
        until: Some(Time::from_us(60)),
        ..RunOptions::default()
    };
    let r = sim::run(&t, &p, &dag, &f, opts).unwrap();
    assert_eq!(r.sim.status, Status::StoppedAtUntil);
    assert!(r.sim.partial);
    assert!(r.counters.bytes_in_flight > 0);
    r.check_conservation().unwrap();
}

#[test]
fn a_failed_link_drops_packets_and_exhausted_retries_leave_messages_unfinished() {
    // Host 0's only link goes down for good: its QP times out, retries and gives up.
    let t = star(&[BitRate::gbps(100); 3], Time::from_ns(300));
    let mut p = SimParams::roce();
    p.timeout_exp = 3;
    p.retry_count = 2;
    let mut dag = MessageDag::default();
    dag.push(HostId(0), HostId(1), 1_000_000, Time::ZERO, &[]);
    dag.push(HostId(2), HostId(1), 1_000_000, Time::ZERO, &[]);
    let f = Faults {
        faults: vec![Fault::Down {
            link: LinkId(0),
            at: Time::from_us(20),
        }],
        reroute: fabricsim::sim::reroute::RerouteDelays {
            local_repair: Some(Time::from_us(5)),
            global: None,
        },
    };
    let r = run(&t, &p, &dag, &f);
    assert_eq!(r.sim.status, Status::Unfinished);
    assert_eq!(r.summary.messages_completed, 1);
    assert_eq!(r.summary.messages_failed, 1);
    assert_eq!(r.counters.qp_errors, 1);
    assert_eq!(r.counters.timeouts, 2);
    assert!(r.counters.drops.link_down > 0);
}

#[test]
fn same_seed_same_bytes_other_seed_other_bytes() {
    let (t, p, _, f) = incast_setup();
    let dag = generate(
        &Traffic::Permutation { bytes: 200_000 },
        17,
        BitRate::gbps(100),
        p.seed,
    )
    .unwrap();
    let once = |p: &SimParams| {
        let r = run(&t, p, &dag, &f);
        (r.to_json(false), write_fct(&r, p.udp_dport))
    };
    let a = once(&p);
    let b = once(&p);
    assert_eq!(a, b);
    let mut q = p.clone();
    q.seed += 1;
    assert_ne!(a.0, once(&q).0, "the seed must reach the loss draws");
}
