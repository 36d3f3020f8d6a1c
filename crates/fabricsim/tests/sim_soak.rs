//! Soak test of the lossless fabrics: random small topologies (two leaves under a spine, or a
//! two-tier Clos), IB credits or RoCE PFC with the SONiC headroom each port's link needs
//! (`Headroom::Formula`, `sim::headroom`) and a random shared buffer above it, random traffic
//! (permutation, incast, all-to-all, Poisson arrivals), sizes, routing and seeds; some runs
//! stopped mid-flight. Every run: zero drops, bytes conserved (offered = delivered + dropped +
//! in flight), and, run to the end, every message complete and each data packet sent once
//! (packets sent = the messages' packets, none retransmitted, none left in flight).
//! A few hundred in CI; `cargo test --release -p fabricsim --test sim_soak -- --ignored` runs
//! 10^4.

use fabricsim::message::MessageDag;
use fabricsim::rng::Rng;
use fabricsim::sim::lossless_scenarios::{clos2, two_leaves};
use fabricsim::sim::{
    Engine, FlowControl, Headroom, PfcParams, RoutePolicy, RunOptions, SimParams, Status, Transport,
};
use fabricsim::topology::Topology;
use fabricsim::traffic::{SizeDist, Traffic, generate};
use fabricsim::units::{BitRate, Time};

/// Scenario `seed`: its topology, parameters, traffic and stop time (`None`: to the end).
fn scenario(seed: u64) -> (Topology, SimParams, MessageDag, Option<Time>, String) {
    let mut rng = Rng::new(seed);
    let rate = BitRate::gbps([100, 200, 400][rng.below(3) as usize]);
    let delay = Time::from_ns(50 + rng.below(1000));
    let topo = if rng.below(2) == 0 {
        two_leaves(2 + rng.below(5) as u32, rate, delay)
    } else {
        let (t, _, _) = clos2(
            2 + rng.below(3) as u32,
            1 + rng.below(3) as u32,
            2 + rng.below(3) as u32,
            rate,
            delay,
        );
        t
    };
    let ib = rng.below(2) == 0;
    let mut p = if ib {
        SimParams::ib()
    } else {
        SimParams::roce()
    };
    if !ib {
        let mut pp = PfcParams::tuned(p.data_tc, p.mtu_frame_wire_bytes());
        pp.headroom = Headroom::Formula { scale: 1.0 };
        p.flow_control = FlowControl::Pfc(pp);
        // 2 to 34 MB shared: above any of these switches' reserved headroom.
        p.switch_buffer_bytes = (2 + rng.below(33)) << 20;
    }
    p.routing = [
        RoutePolicy::EcmpFlowHash,
        RoutePolicy::DModK,
        RoutePolicy::Adaptive,
    ][rng.below(3) as usize];
    if p.routing == RoutePolicy::Adaptive {
        // Adaptive routing reorders packets: the NIC takes them out of order.
        p.transport = Transport::SelectiveRepeat;
        p.window_packets = 64;
    }
    p.seed = rng.next_u64();
    let hosts = topo.num_hosts() as u32;
    let bytes = 1 + rng.below(256 << 10);
    let traffic = match rng.below(4) {
        0 => Traffic::Permutation { bytes },
        1 => Traffic::Incast {
            senders: 1 + rng.below(hosts as u64 - 1) as u32,
            dst: rng.below(hosts as u64) as u32,
            bytes,
        },
        2 => Traffic::AllToAll {
            bytes: 1 + bytes / 16,
        },
        _ => Traffic::Uniform {
            load: 0.2 + 0.7 * rng.next_f64(),
            sizes: SizeDist::Uniform {
                min: 1,
                max: 1 + rng.below(128 << 10),
            },
            duration: Time::from_us(5 + rng.below(50)),
        },
    };
    let dag = generate(&traffic, hosts, rate, rng.next_u64()).expect("traffic fits");
    let until = (rng.below(3) == 0).then(|| Time::from_ns(500 + rng.below(50_000)));
    let what = format!(
        "seed {seed}: {} hosts at {rate:?}, {}, {traffic:?}, {:?}, until {until:?}",
        hosts,
        if ib { "IB credits" } else { "RoCE PFC" },
        p.routing
    );
    (topo, p, dag, until, what)
}

#[derive(Debug, Default)]
struct Figures {
    runs: u64,
    stopped: u64,
    messages: u64,
    bytes: u64,
    packets: u64,
    drops: u64,
}

fn soak(seeds: std::ops::Range<u64>) -> Figures {
    let mut f = Figures::default();
    for seed in seeds {
        let (topo, p, dag, until, what) = scenario(seed);
        let r = Engine::new(&topo, &p, &dag, &Default::default())
            .unwrap_or_else(|e| panic!("{what}: {e}"))
            .run(RunOptions {
                until,
                progress: None,
            });
        let c = &r.counters;
        let d = &c.drops;
        let drops = d.buffer
            + d.corruption
            + d.link_down
            + d.no_route
            + d.out_of_sequence
            + d.duplicate
            + d.headroom
            + d.watchdog
            + d.rx_stalled;
        assert_eq!(drops, 0, "{what}: {d:?}");
        assert_eq!(c.bytes_dropped, 0, "{what}");
        r.check_conservation()
            .unwrap_or_else(|e| panic!("{what}: {e}"));
        f.runs += 1;
        f.drops += drops;
        f.bytes += c.bytes_offered;
        f.packets += c.data_packets;
        if r.sim.status == Status::StoppedAtUntil {
            f.stopped += 1;
            continue;
        }
        assert_eq!(r.sim.status, Status::Complete, "{what}");
        assert_eq!(
            r.summary.messages_completed,
            dag.messages.len() as u64,
            "{what}"
        );
        assert_eq!(c.bytes_in_flight, 0, "{what}");
        let total: u64 = dag.messages.iter().map(|m| m.bytes).sum();
        assert_eq!(c.bytes_delivered, total, "{what}");
        let mtu = p.mtu_bytes as u64;
        let packets: u64 = dag
            .messages
            .iter()
            .map(|m| m.bytes.div_ceil(mtu).max(1))
            .sum();
        assert_eq!(c.retransmitted_packets, 0, "{what}");
        assert_eq!(c.data_packets, packets, "{what}");
        f.messages += dag.messages.len() as u64;
    }
    eprintln!("soak: {f:?}");
    f
}

#[test]
fn lossless_soak_a_few_hundred_runs() {
    let f = soak(0..300);
    assert!(f.stopped > 30 && f.runs - f.stopped > 150, "{f:?}");
}

#[test]
#[ignore]
fn lossless_soak_10k_runs() {
    let f = soak(300..10_300);
    assert_eq!(f.runs, 10_000);
}
