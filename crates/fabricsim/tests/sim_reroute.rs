//! Link-failure recovery (`sim::reroute`): an edge-aggregation link of a k = 4 fat tree fails
//! mid-run under cross-pod traffic. Local repair (SHIELD-like / ECMP next-hop removal) only
//! steers the link's two ends; the global reroute (subnet manager / BGP convergence) steers every
//! switch away from what it can no longer reach.

use fabricsim::error::Source;
use fabricsim::io::ns3::read_topology;
use fabricsim::message::MessageDag;
use fabricsim::sim::reroute::RerouteDelays;
use fabricsim::sim::{self, Fault, Faults, RunOptions, RunResult, SimParams, Status};
use fabricsim::topology::{HostId, LinkId, Topology};
use fabricsim::units::Time;

const FAIL_AT: Time = Time::from_us(30);
const GLOBAL: Time = Time::from_us(60);

fn ft4() -> Topology {
    let text = include_str!("../../../examples/sim-ft4.topo.txt");
    read_topology(&Source::new("sim-ft4.topo.txt", text))
        .unwrap()
        .topo
}

/// Each host sends 1 MB to the three hosts 4, 8 and 12 further on (all in other pods), at
/// 100G: about 250 us of traffic, so the failure at 30 us and both recoveries fall inside it.
fn cross_pod() -> MessageDag {
    let mut dag = MessageDag::default();
    for src in 0..16u32 {
        for k in 1..=3 {
            dag.push(
                HostId(src),
                HostId((src + 4 * k) % 16),
                1_000_000,
                Time::ZERO,
                &[],
            );
        }
    }
    dag
}

/// Packets a QP may have outstanding.
const WINDOW: u32 = 8;

/// The longest a packet can wait in a core's queue towards aggregation 24: the 12 QPs into pod
/// 0 (3 per host) with `WINDOW` frames of 4158 B each outstanding, 400 KB, drain in 32 us at
/// 100G; the few ACKs queued with them add well under 8 us.
const DRAIN: Time = Time::from_us(40);

fn params() -> SimParams {
    SimParams {
        timeout_exp: 4, // 65.5 us: lost tails are resent within the run
        window_packets: WINDOW,
        ..SimParams::roce()
    }
}

/// Link 16 (edge 16, hosts 0-1, to aggregation 24) fails for good at 30 us.
fn run(reroute: RerouteDelays, until: Option<Time>) -> RunResult {
    let f = Faults {
        faults: vec![Fault::Down {
            link: LinkId(16),
            at: FAIL_AT,
        }],
        reroute,
    };
    let r = sim::run(
        &ft4(),
        &params(),
        &cross_pod(),
        &f,
        RunOptions {
            until,
            ..RunOptions::default()
        },
    )
    .unwrap();
    r.check_conservation().unwrap();
    r
}

fn delays(local_us: Option<u64>, global: Option<Time>) -> RerouteDelays {
    RerouteDelays {
        local_repair: local_us.map(Time::from_us),
        global,
    }
}

fn lost(r: &RunResult) -> u64 {
    r.counters.drops.link_down + r.counters.drops.no_route
}

#[test]
fn global_reroute_alone_loses_more_than_with_local_repair_and_both_complete() {
    let both = run(delays(Some(2), Some(GLOBAL)), None);
    let global_only = run(delays(None, Some(GLOBAL)), None);
    for (name, r) in [("local+global", &both), ("global only", &global_only)] {
        eprintln!(
            "{name}: link_down {} no_route {} retransmitted {} max fct {:?} us",
            r.counters.drops.link_down,
            r.counters.drops.no_route,
            r.counters.retransmitted_packets,
            r.summary.max_fct_ps.map(|f| f / 1_000_000),
        );
        assert_eq!(r.sim.status, Status::Complete, "{name}");
        assert!(lost(r) > 0, "{name}: the failure must cost packets");
    }
    // Without local repair, hosts 0 and 1 keep hashing flows onto the dead link for the
    // whole 60 us; with it, for 2 us. Traffic towards them via aggregation 24 is lost until
    // the global reroute either way.
    assert!(
        lost(&global_only) > lost(&both),
        "global only {} vs both {}",
        lost(&global_only),
        lost(&both)
    );
    assert!(global_only.counters.retransmitted_packets > both.counters.retransmitted_packets);
}

#[test]
fn after_the_global_reroute_no_packet_is_lost() {
    // Packets queued towards the dead end before the reroute still leave for it (a reroute
    // changes tables, not queues); none is routed there after. Stopped once those queues have
    // drained (plus a hop) and run to the end: the same losses, so none after that.
    let settled = FAIL_AT + GLOBAL + DRAIN;
    for d in [delays(Some(2), Some(GLOBAL)), delays(None, Some(GLOBAL))] {
        let part = run(d, Some(settled));
        let full = run(d, None);
        assert_eq!(part.sim.status, Status::StoppedAtUntil);
        assert_eq!(
            (full.counters.drops.no_route, full.counters.drops.link_down),
            (part.counters.drops.no_route, part.counters.drops.link_down),
            "{d:?}"
        );
    }
}

#[test]
fn without_a_global_reroute_flows_through_the_dead_end_never_complete() {
    // Local repair only: the cores keep sending traffic for hosts 0 and 1 (data to them, ACKs
    // of their own flows) to aggregation 24, which has no way down; those QPs exhaust their
    // retries.
    let r = run(delays(Some(2), None), None);
    assert_eq!(r.sim.status, Status::Unfinished);
    assert!(r.summary.messages_failed > 0);
    assert!(r.counters.drops.no_route > 0);
    assert!(
        r.messages
            .iter()
            .filter(|m| m.finish_ps.is_none())
            .all(|m| m.src < 2 || m.dst < 2),
        "only flows of hosts 0 and 1 (below the failed link) fail"
    );
}
