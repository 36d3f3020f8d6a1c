//! Link-level flow control on the packet engine: IB credits per VL (IBA Vol. 1 7.9) and PFC
//! (IEEE 802.1Qbb) with SONiC headroom. Each test names the closed form it checks.

use fabricsim::message::MessageDag;
use fabricsim::rng::{Rng, Stream};
use fabricsim::sim::lossless_scenarios::{hotspot_victim, two_leaves};
use fabricsim::sim::{
    CreditParams, Faults, FlowControl, Headroom, PfcParams, PfcThreshold, RunResult, SimParams,
};
use fabricsim::topology::{HostId, Topology};
use fabricsim::units::{BitRate, Time};
use fabricsim_cases::sim_util::{pair, run, star};

fn ib() -> SimParams {
    let mut p = SimParams::ib();
    p.sample_interval = Some(Time::from_us(10));
    p.flow_control = FlowControl::Credits(CreditParams::default_ib());
    p
}

fn roce_pfc() -> SimParams {
    let mut p = SimParams::roce();
    p.sample_interval = Some(Time::from_us(10));
    let frame = p.mtu_frame_wire_bytes();
    p.flow_control = FlowControl::Pfc(PfcParams::tuned(p.data_tc, frame));
    p
}

/// N senders on one switch to host 0, `bytes` each.
fn incast(n: u32, bytes: u64) -> (Topology, MessageDag) {
    let t = star(
        &vec![BitRate::gbps(400); n as usize + 1],
        Time::from_ns(100),
    );
    let mut dag = MessageDag::default();
    for s in 1..=n {
        dag.push(HostId(s), HostId(0), bytes, Time::ZERO, &[]);
    }
    (t, dag)
}

/// Each sender's bytes on the wire while all are backlogged (from the 3rd sample to the first
/// completion), over the mean (1 = its fair share); and the receiver link's payload
/// utilization from the first post to the last byte.
fn shares(t: &Topology, r: &RunResult, p: &SimParams, line: BitRate) -> (Vec<f64>, f64) {
    let series = r.series.as_ref().expect("run with a sample interval");
    let first_done = r.messages.iter().map(|m| m.recv_ps.unwrap()).min().unwrap();
    let last_sample = (first_done / series.interval_ps) as usize;
    let sent: Vec<f64> = r
        .messages
        .iter()
        .map(|m| {
            let port = t.host_port(HostId(m.src)).idx();
            series.ports[port].tx_bytes[2..last_sample]
                .iter()
                .sum::<u64>() as f64
        })
        .collect();
    let mean = sent.iter().sum::<f64>() / sent.len() as f64;
    let payload_bps = line.bps() as f64 * p.payload_efficiency();
    let first = r
        .messages
        .iter()
        .map(|m| m.start_ps.unwrap())
        .min()
        .unwrap();
    let last = r.messages.iter().map(|m| m.recv_ps.unwrap()).max().unwrap();
    let total: u64 = r.messages.iter().map(|m| m.bytes).sum();
    let util = total as f64 * 8.0 / ((last - first) as f64 / 1e12) / payload_bps;
    (sent.iter().map(|x| x / mean).collect(), util)
}

#[test]
fn ib_incast_loses_nothing_and_shares_the_bottleneck_fairly() {
    // Issue 4: N -> 1 of long flows, zero drops, each sender within 2% of 1/N, the receiver's
    // link at >= 97% of payload line rate.
    let p = ib();
    for n in [8u32, 32, 127] {
        let (t, dag) = incast(n, 1_000_000);
        let r = run(&t, &p, &dag, &Faults::default());
        assert_eq!(r.counters.drops.total(), 0, "N={n}");
        let (s, util) = shares(&t, &r, &p, BitRate::gbps(400));
        let (lo, hi) = s
            .iter()
            .fold((f64::MAX, 0f64), |(a, b), &x| (a.min(x), b.max(x)));
        eprintln!("IB incast N={n}: share/fair min {lo:.4} max {hi:.4}, receiver link {util:.4}");
        assert!(lo > 0.98 && hi < 1.02, "N={n}: shares {lo:.4}..{hi:.4}");
        assert!(util >= 0.97, "N={n}: receiver link at {util:.4}");
        let fc = r.flow_control.as_ref().unwrap();
        assert!(
            fc.credit_stalls > 0,
            "the senders must have waited for credits"
        );
    }
}

/// Payload rate of one long flow A -> switch -> B (first link `d1`), as a fraction of line rate:
/// extra bytes over extra time between two sizes, cancelling the start-up.
fn one_flow_fraction(p: &SimParams, d1: Time) -> f64 {
    let t = pair(1, BitRate::gbps(400), &[d1, Time::from_ns(100)]);
    let time = |bytes: u64| {
        let mut dag = MessageDag::default();
        dag.push(HostId(0), HostId(1), bytes, Time::ZERO, &[]);
        let r = run(&t, p, &dag, &Faults::default());
        assert_eq!(r.counters.drops.total(), 0);
        r.messages[0].recv_ps.unwrap() as f64
    };
    let (b1, b2) = (2_000_000u64, 6_000_000u64);
    (b2 - b1) as f64 * 8.0 / ((time(b2) - time(b1)) / 1e12) / 400e9
}

#[test]
fn credits_limit_a_long_link_to_buffer_over_credit_round_trip() {
    // IBA Vol. 1 7.9 credits of 64 B: rate <= min(line, credits x 64 B / RTT). Here the credit
    // round trip is the
    // 2 km link both ways plus the switch's pipeline (the buffer frees when the packet leaves),
    // and credits count in whole packets of 65 blocks: window = floor(1600 / 65) = 24 packets.
    let mut p = ib();
    let d = Time::from_us(10); // 2 km at 5 ns/m
    let buf = 100 * 1024u64; // 1600 blocks
    p.flow_control = FlowControl::Credits(CreditParams {
        switch_vl_buffer_bytes: buf,
        nic_vl_buffer_bytes: 1 << 20,
        deadlock_check: None,
        update_bytes: 0,
    });
    let frame = p.data_frame_bytes(p.mtu_bytes) as u64;
    let per_pkt = frame.div_ceil(64);
    let window_pkts = (buf / 64) / per_pkt;
    let rtt = (d * 2 + p.switch_latency).0 as f64 / 1e12;
    let expect = (window_pkts * p.mtu_bytes as u64) as f64 * 8.0 / rtt / 400e9;
    let got = one_flow_fraction(&p, d);
    eprintln!("credit-limited 2 km 400G 100 KB: {got:.4} of line rate, closed form {expect:.4}");
    assert!((got / expect - 1.0).abs() < 0.02, "{got:.4} vs {expect:.4}");
    // With a buffer above BW x RTT + MTU (1.05 MB for 2 km): full payload rate.
    p.flow_control = FlowControl::Credits(CreditParams {
        switch_vl_buffer_bytes: 2 << 20,
        nic_vl_buffer_bytes: 1 << 20,
        deadlock_check: None,
        update_bytes: 0,
    });
    let full = one_flow_fraction(&p, d);
    eprintln!(
        "2 MB per VL: {full:.4} of line rate (payload efficiency {:.4})",
        p.payload_efficiency()
    );
    assert!(
        (full / p.payload_efficiency() - 1.0).abs() < 0.005,
        "{full:.4}"
    );
}

#[test]
fn credits_spread_congestion_to_a_victim_flow() {
    // Head-of-line blocking (Gran et al. IPDPS 2010): the victim shares the spine -> leaf B link
    // with 3 remote hotspot senders; at max-min fairness they get 1/9 of the hotspot port each
    // (9 senders) and the victim the remaining 2/3 of the link. With credits and no congestion
    // control, leaf B's ingress from the spine fills with hotspot packets and the victim gets
    // far less.
    let p = ib();
    let rate = BitRate::gbps(400);
    let t = two_leaves(8, rate, Time::from_ns(100));
    let (dag, v) = hotspot_victim(8, 3, 2_000_000);
    let r = run(&t, &p, &dag, &Faults::default());
    assert_eq!(r.counters.drops.total(), 0);
    let m = &r.messages[v as usize];
    let victim_bps =
        m.bytes as f64 * 8.0 / ((m.recv_ps.unwrap() - m.start_ps.unwrap()) as f64 / 1e12);
    let fair = rate.bps() as f64 * p.payload_efficiency() * 2.0 / 3.0;
    let mut alone = MessageDag::default();
    alone.push(HostId(0), HostId(15), 2_000_000, Time::ZERO, &[]);
    let ra = run(&t, &p, &alone, &Faults::default());
    let ma = &ra.messages[0];
    let alone_bps =
        ma.bytes as f64 * 8.0 / ((ma.recv_ps.unwrap() - ma.start_ps.unwrap()) as f64 / 1e12);
    eprintln!(
        "victim: {:.1} Gb/s with the hotspot, {:.1} Gb/s alone, max-min fair share {:.1} Gb/s",
        victim_bps / 1e9,
        alone_bps / 1e9,
        fair / 1e9
    );
    assert!(
        victim_bps < 0.5 * fair,
        "the victim must be slowed by HOL blocking"
    );
}

/// A 16 -> 1 incast under PFC with a static XOFF at 20 KB (so every ingress pauses early and
/// then absorbs a full response loop at line rate: the worst case for headroom), 100 m cables.
fn pfc_worst_incast(scale: f64) -> RunResult {
    let mut p = roce_pfc();
    if let FlowControl::Pfc(pp) = &mut p.flow_control {
        pp.xoff = PfcThreshold::Static(20_000);
        pp.headroom = Headroom::Formula { scale };
    }
    let t = star(&vec![BitRate::gbps(400); 17], Time(505_000)); // 100 m at 5.05 ns/m
    let mut dag = MessageDag::default();
    for s in 1..=16 {
        dag.push(HostId(s), HostId(0), 1_000_000, Time::ZERO, &[]);
    }
    run(&t, &p, &dag, &Faults::default())
}

#[test]
fn pfc_headroom_at_the_formula_is_lossless_and_below_it_drops() {
    // SONiC buffer_headroom_mellanox.lua: headroom >= formula loses nothing;
    // well below it the frames still in flight after XOFF overflow it.
    let ok = pfc_worst_incast(1.0);
    let fc = ok.flow_control.as_ref().unwrap();
    eprintln!(
        "headroom {} B: drops {:?}, pauses {}",
        fc.headroom_bytes_max, ok.counters.drops, ok.counters.pause_frames
    );
    assert_eq!(ok.counters.drops.total(), 0);
    assert!(ok.counters.pause_frames > 0);
    let low = pfc_worst_incast(0.5);
    eprintln!("headroom x 0.5: drops {:?}", low.counters.drops);
    assert!(low.counters.drops.headroom > 0);
}

#[test]
fn pfc_incast_is_lossless_and_fair() {
    // Issue 5: PFC-only N -> 1: zero drops, pauses counted, every sender within 5% of its share.
    // An 8 MB buffer (a smaller switch) so the incast reaches XOFF.
    let mut p = roce_pfc();
    p.switch_buffer_bytes = 8 << 20;
    for n in [8u32, 32] {
        // Long enough for many XOFF/XON cycles per sender in the measuring window.
        let (t, dag) = incast(n, 4_000_000);
        let r = run(&t, &p, &dag, &Faults::default());
        assert_eq!(r.counters.drops.total(), 0, "N={n}");
        assert!(r.counters.pause_frames > 0, "N={n}");
        let (s, util) = shares(&t, &r, &p, BitRate::gbps(400));
        let (lo, hi) = s
            .iter()
            .fold((f64::MAX, 0f64), |(a, b), &x| (a.min(x), b.max(x)));
        let fc = r.flow_control.as_ref().unwrap();
        eprintln!(
            "PFC incast N={n}: share/fair {lo:.4}..{hi:.4}, receiver {util:.4}, {} pauses, {} XOFF, paused {} us",
            r.counters.pause_frames,
            fc.xoff_events,
            fc.pause_time_ps_total / 1_000_000
        );
        assert!(lo > 0.95 && hi < 1.05, "N={n}: shares {lo:.4}..{hi:.4}");
    }
}

#[test]
fn lossless_fabrics_never_drop_on_random_small_topologies() {
    // Property (issues 4 and 5): without injected faults, credits never drop, nor does PFC with
    // the formula headroom, over random two-leaf fabrics and random traffic.
    for seed in 1..=6u64 {
        let mut rng = Rng::stream(seed, Stream::Test(9), 0);
        let per_leaf = 3 + rng.below(4) as u32;
        let t = two_leaves(
            per_leaf,
            BitRate::gbps(400),
            Time::from_ns(50 + rng.below(500)),
        );
        let hosts = 2 * per_leaf as u64;
        let mut dag = MessageDag::default();
        for _ in 0..(4 + rng.below(12)) {
            let s = rng.below(hosts);
            let d = (s + 1 + rng.below(hosts - 1)) % hosts;
            let bytes = 1000 + rng.below(400_000);
            dag.push(
                HostId(s as u32),
                HostId(d as u32),
                bytes,
                Time(rng.below(5_000_000)),
                &[],
            );
        }
        for (name, p) in [("credits", ib()), ("pfc", roce_pfc())] {
            let mut p = p;
            p.seed = seed;
            let r = run(&t, &p, &dag, &Faults::default());
            assert_eq!(
                r.counters.drops.total(),
                0,
                "{name} seed {seed}: {:?}",
                r.counters.drops
            );
            assert_eq!(
                r.summary.messages_completed,
                dag.messages.len() as u64,
                "{name} seed {seed}"
            );
        }
    }
}

#[test]
fn a_cyclic_buffer_dependency_deadlocks_and_is_reported_with_its_cycle() {
    // Hu et al. HotNets 2016: bounced reroutes after two link failures make the queues
    // L2->S1, S1->L3, L3->S2, S2->L2 wait on each other; the wait-for graph finds that ring.
    use fabricsim::sim::Status;
    use fabricsim::sim::lossless_scenarios::bounce_deadlock;
    let (t, faults, dag) = bounce_deadlock(2, BitRate::gbps(400), 20_000_000);
    for (name, p) in [("pfc", roce_pfc()), ("credits", ib())] {
        let mut p = p;
        p.switch_buffer_bytes = 4 << 20;
        let r = run(&t, &p, &dag, &faults);
        let fc = r.flow_control.as_ref().unwrap();
        let d = fc
            .deadlock
            .as_ref()
            .unwrap_or_else(|| panic!("{name}: no deadlock found"));
        assert_eq!(r.sim.status, Status::Deadlock, "{name}");
        let nodes: Vec<u32> = d.cycle.iter().map(|h| h.node).collect();
        eprintln!(
            "{name}: deadlock at {} us, cycle through nodes {nodes:?}",
            d.detected_at_ps / 1_000_000
        );
        // Leaves are nodes 8..12, spines 12, 13: the ring has two leaves and two spines,
        // each hop leading to the next.
        assert_eq!(d.cycle.len(), 4, "{name}");
        for (i, h) in d.cycle.iter().enumerate() {
            assert_eq!(h.peer_node, d.cycle[(i + 1) % 4].node, "{name}: not a ring");
        }
        let mut sorted = nodes.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, vec![9, 10, 12, 13], "{name}");
    }
}

/// Host 4 (leaf B) stops receiving at 5 us while host 1 sends to it; the victim, host 0 -> host
/// 5, shares the leaf A -> spine -> leaf B path. Runs to 1 ms.
fn pause_storm(watchdog: Option<Time>) -> RunResult {
    use fabricsim::sim::{Fault, RunOptions};
    let mut p = roce_pfc();
    p.switch_buffer_bytes = 8 << 20; // fills in tens of microseconds
    if let FlowControl::Pfc(pp) = &mut p.flow_control {
        pp.watchdog = watchdog;
    }
    let t = two_leaves(4, BitRate::gbps(400), Time::from_ns(100));
    let mut dag = MessageDag::default();
    dag.push(HostId(1), HostId(4), 20_000_000, Time::ZERO, &[]);
    dag.push(HostId(0), HostId(5), 4_000_000, Time::from_us(10), &[]);
    let faults = Faults {
        faults: vec![Fault::RxStall {
            host: HostId(4),
            at: Time::from_us(5),
            until: None,
        }],
        ..Faults::default()
    };
    let opts = RunOptions {
        until: Some(Time::from_ms(1)),
        ..RunOptions::default()
    };
    let r = fabricsim::sim::run(&t, &p, &dag, &faults, opts).unwrap();
    r.check_conservation().unwrap();
    r
}

#[test]
fn a_pause_storm_stops_a_victim_until_the_watchdog_drops_instead() {
    // Guo et al. SIGCOMM 2016 4.3: a NIC that stops receiving pauses its switch port forever;
    // the pause spreads up the tree and stops flows that never go to it. The PFC watchdog
    // (SONiC, action drop) turns PFC off on the stormed queue and the victim finishes.
    let storm = pause_storm(None);
    let fc = storm.flow_control.as_ref().unwrap();
    eprintln!(
        "no watchdog: victim finished {:?}, {} pauses, paused {} us in all",
        storm.messages[1].finish_ps,
        storm.counters.pause_frames,
        fc.pause_time_ps_total / 1_000_000
    );
    assert_eq!(
        storm.messages[1].finish_ps, None,
        "the victim is stuck behind the storm"
    );
    assert_eq!(
        storm.counters.drops.total() - storm.counters.drops.rx_stalled,
        0
    );
    let wd = pause_storm(Some(Time::from_us(50)));
    let fc = wd.flow_control.as_ref().unwrap();
    let v = &wd.messages[1];
    eprintln!(
        "watchdog 50 us: {} trips, victim fct {:?} us, {} watchdog drops",
        fc.watchdog_trips,
        v.fct_ps.map(|f| f / 1_000_000),
        wd.counters.drops.watchdog
    );
    assert!(fc.watchdog_trips >= 1);
    assert!(
        v.finish_ps.is_some(),
        "the victim completes once the watchdog acts"
    );
    assert!(wd.counters.drops.watchdog > 0);
}

#[test]
fn the_example_scenarios_show_their_pathologies_and_bad_knobs_are_located() {
    use fabricsim::scenario::{Scenario, sim::build};
    use fabricsim::sim::{RunOptions, Status};
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples");
    let go = |name: &str| {
        let path = dir.join(name);
        let sc = Scenario::load(path.to_str().unwrap()).unwrap();
        let s = build(&sc, &dir, None).unwrap();
        let opts = RunOptions {
            until: s.until,
            ..RunOptions::default()
        };
        fabricsim::sim::run(&s.net.topo, &s.params, &s.dag, &s.faults, opts).unwrap()
    };
    let d = go("roce-deadlock.toml");
    assert_eq!(d.sim.status, Status::Deadlock);
    assert_eq!(d.flow_control.unwrap().deadlock.unwrap().cycle.len(), 4);
    let storm = go("roce-pause-storm.toml");
    assert_eq!(storm.flow_control.unwrap().watchdog_trips, 1);
    assert!(storm.messages[1].finish_ps.is_some());
    let spread = go("roce-congestion-spreading.toml");
    assert_eq!(spread.counters.drops.total(), 0);
    // The victim (message 5, host 0 -> 7) finishes with the hotspot senders, not at its 2/3
    // link share (8 MB in 241 us).
    assert!(spread.messages[5].fct_ps.unwrap() > 600_000_000);

    let bad = "[sim]\ntopology_file = \"x\"\nflow_control = \"credit\"\n";
    let sc = Scenario::parse("bad.toml", bad).unwrap();
    let e = build(&sc, &dir, None).unwrap_err();
    assert_eq!(e.key, "sim.flow_control");
    assert!(e.allowed.contains("pfc"), "{e}");
    let bad = "[sim]\ntopology_file = \"x\"\nfabric = \"ib\"\n[sim.pfc]\nwatchdog = \"1ms\"\n";
    let e = build(&Scenario::parse("bad.toml", bad).unwrap(), &dir, None).unwrap_err();
    assert_eq!(e.key, "sim.pfc");
}
