//! Random loss p on a long flow: go-back-N goodput within 10% of (1-p)/(1+pW), W the packets
//! in flight over one round trip (W = BDP/MTU; docs/validation.md); selective repeat near 1-p.
//! And a message whose last packet is lost completes only after the retransmission timeout.

use fabricsim::message::MessageDag;
use fabricsim::sim::{Dir, Fault, Faults, LinkLoss, SimParams, Transport};
use fabricsim::topology::{HostId, LinkId};
use fabricsim::units::{BitRate, Time};
use fabricsim_cases::sim_util::{pair, run};

const RATE: BitRate = BitRate::gbps(100);

/// The completion time of one full packet alone: the round trip.
fn round_trip(t: &fabricsim::topology::Topology, p: &SimParams) -> u64 {
    let mut gbn = p.clone();
    gbn.transport = Transport::GoBackN;
    let mut probe = MessageDag::default();
    probe.push(HostId(0), HostId(1), p.mtu_bytes as u64, Time::ZERO, &[]);
    run(t, &gbn, &probe, &Faults::default()).messages[0]
        .fct_ps
        .unwrap()
}

/// Goodput as a fraction of the lossless rate, and W.
fn efficiency(kind: Transport, p_loss: f64) -> (f64, f64) {
    let (eff, w, _) = efficiency_in(kind, p_loss, 2);
    (eff, w)
}

/// Goodput as a fraction of the lossless rate, W, and the lossy run's (retransmitted packets,
/// packets dropped), with a window of `rtts` round trips.
fn efficiency_in(kind: Transport, p_loss: f64, rtts: u32) -> (f64, f64, (u64, u64)) {
    // Long links make W large enough for go-back-N's waste to show (RTT about 45 us).
    let t = pair(1, RATE, &[Time::from_us(10), Time::from_us(10)]);
    let mut p = SimParams::roce();
    p.transport = kind;
    p.timeout_exp = 4; // 65.5 us, above the round trip
    let rtt = Time(round_trip(&t, &p));
    let w = p.bdp_packets(RATE, rtt);
    // A window of two round trips keeps the pipe full while selective repeat fills a hole.
    p.window_packets = rtts * w;
    let bytes = 100_000 * p.mtu_bytes as u64;
    let mut dag = MessageDag::default();
    dag.push(HostId(0), HostId(1), bytes, Time::ZERO, &[]);
    let f = Faults {
        faults: vec![Fault::Loss {
            link: LinkId(0),
            dir: Dir::Up,
            loss: LinkLoss::Rate(p_loss),
        }],
        ..Faults::default()
    };
    let lossy = run(&t, &p, &dag, &f);
    let clean = run(&t, &p, &dag, &Faults::default());
    assert_eq!(lossy.summary.messages_completed, 1);
    assert!(lossy.counters.drops.corruption > 0);
    let eff = clean.messages[0].fct_ps.unwrap() as f64 / lossy.messages[0].fct_ps.unwrap() as f64;
    let c = &lossy.counters;
    (eff, w as f64, (c.retransmitted_packets, c.drops.total()))
}

#[test]
fn go_back_n_goodput_matches_the_closed_form() {
    for p in [1e-4, 1e-3, 1e-2] {
        let (eff, w) = efficiency(Transport::GoBackN, p);
        let model = (1.0 - p) / (1.0 + p * w);
        eprintln!("GBN p={p}: goodput {eff:.4}, (1-p)/(1+pW) = {model:.4} (W = {w})");
        assert!(
            (eff / model - 1.0).abs() < 0.10,
            "p={p}: {eff:.4} vs {model:.4}"
        );
    }
}

#[test]
fn selective_repeat_goodput_is_near_one_minus_p() {
    for p in [1e-4, 1e-3, 1e-2] {
        let (eff, _) = efficiency(Transport::SelectiveRepeat, p);
        eprintln!("SR p={p}: goodput {eff:.4}, 1-p = {:.4}", 1.0 - p);
        assert!((eff / (1.0 - p) - 1.0).abs() < 0.02, "p={p}: {eff:.4}");
    }
}

/// RUD (UEC 1.0 3.5.7): the SACKs tell the sender what arrived, so the timeout resends only
/// the lost packets (every resend is a drop's, never a packet that arrived) and goodput stays
/// near 1-p, where go-back-N follows (1-p)/(1+pW) above. Its window covers a hole whose resend
/// is lost again: each packet's timer backs off (UEC PDS: `RTO_INIT_TIME x 2^retry_count`), so
/// 65.5 us + 131 us + a 45 us round trip, 6 round trips; so the pipe stays full while a hole
/// waits for its timers. (With 4 round trips, enough before the per-packet timers, p = 0.01
/// measured 0.9687.)
#[test]
fn rud_goodput_is_near_one_minus_p_and_resends_only_the_lost() {
    for p in [1e-4, 1e-3, 1e-2] {
        let (eff, w, (resent, dropped)) = efficiency_in(Transport::Rud, p, 6);
        let gbn = (1.0 - p) / (1.0 + p * w);
        eprintln!(
            "RUD p={p}: goodput {eff:.4}, 1-p = {:.4}, go-back-N's (1-p)/(1+pW) = {gbn:.4}; \
             {resent} resent for {dropped} dropped",
            1.0 - p
        );
        assert!((eff / (1.0 - p) - 1.0).abs() < 0.02, "p={p}: {eff:.4}");
        assert_eq!(resent, dropped, "p={p}: only what was lost is resent");
    }
}

#[test]
fn a_lost_last_packet_is_recovered_only_by_the_timeout() {
    let t = pair(1, RATE, &[Time::from_ns(500); 2]);
    let mut p = SimParams::roce();
    p.timeout_exp = 8; // 4.096 us x 2^8 = 1.05 ms
    let mut dag = MessageDag::default();
    dag.push(
        HostId(0),
        HostId(1),
        10 * p.mtu_bytes as u64,
        Time::ZERO,
        &[],
    );
    let clean = run(&t, &p, &dag, &Faults::default());
    // The 10th packet on the sender's uplink is the message's last.
    let f = Faults {
        faults: vec![Fault::DropNth {
            link: LinkId(0),
            dir: Dir::Up,
            nth: 10,
        }],
        ..Faults::default()
    };
    let lost = run(&t, &p, &dag, &f);
    let (c, l) = (
        clean.messages[0].fct_ps.unwrap(),
        lost.messages[0].fct_ps.unwrap(),
    );
    let rto = p.ack_timeout().ps();
    let rtt = round_trip(&t, &p);
    assert_eq!(lost.counters.timeouts, 1);
    assert_eq!(lost.counters.retransmitted_packets, 1);
    assert_eq!(
        lost.counters.naks, 0,
        "nothing follows the last packet, so no NAK"
    );
    // The timer restarts with each ACK, so the resend leaves one timeout after the last ACK
    // (at most the clean completion time) and takes one round trip.
    assert!(
        l > rto + rtt && l <= c + rto + rtt,
        "fct {l} ps, clean {c} ps, timeout {rto} ps, round trip {rtt} ps"
    );
}

/// One message of `packets` full packets from host 0 to host 1 under `kind`, every `every`-th
/// packet on host 0's uplink dropped, stopped at `until` if given.
fn periodic(
    kind: Transport,
    packets: u64,
    every: u64,
    until: Option<Time>,
) -> fabricsim::sim::RunResult {
    let drop = Fault::DropEvery {
        link: LinkId(0),
        dir: Dir::Up,
        every,
    };
    one_message(kind, packets, drop, until)
}

/// One message of `packets` full packets from host 0 to host 1 under `kind` with `fault`.
fn one_message(
    kind: Transport,
    packets: u64,
    fault: Fault,
    until: Option<Time>,
) -> fabricsim::sim::RunResult {
    let t = pair(1, RATE, &[Time::from_ns(500); 2]);
    let mut p = SimParams::roce();
    p.transport = kind;
    p.timeout_exp = 8;
    if kind.places_out_of_order() {
        p.window_packets = 64;
    }
    let mut dag = MessageDag::default();
    dag.push(
        HostId(0),
        HostId(1),
        packets * p.mtu_bytes as u64,
        Time::ZERO,
        &[],
    );
    let f = Faults {
        faults: vec![fault],
        ..Faults::default()
    };
    let opts = fabricsim::sim::RunOptions {
        until,
        ..Default::default()
    };
    let r = fabricsim::sim::run(&t, &p, &dag, &f, opts).unwrap();
    r.check_conservation().unwrap();
    r
}

/// A periodic drop corrupts exactly every n-th packet its link carries: of the data packets
/// host 0 puts on its uplink (the message's and the resends), floor(sent / n).
#[test]
fn a_periodic_drop_drops_every_nth_packet_of_its_link() {
    for (kind, every) in [
        (Transport::GoBackN, 37),
        (Transport::SelectiveRepeat, 37),
        (Transport::SelectiveRepeat, 5),
    ] {
        let r = periodic(kind, 1000, every, None);
        assert_eq!(r.summary.messages_completed, 1, "{kind:?}");
        let sent = 1000 + r.counters.retransmitted_packets;
        assert_eq!(
            r.counters.drops.corruption,
            sent / every,
            "{kind:?} every {every}"
        );
        assert!(r.counters.drops.corruption > 0);
        assert_eq!(
            r.counters.bytes_delivered,
            1000 * SimParams::roce().mtu_bytes as u64
        );
    }
}

/// Guo et al., SIGCOMM 2016, 4.1: under a deterministic drop of one packet in 256, go-back-0
/// never completes a message of more than 256 packets (every attempt meets a drop before its
/// end), where go-back-N completes it; a shorter message gets through go-back-0 too.
#[test]
fn go_back_0_livelocks_under_a_periodic_drop_that_go_back_n_survives() {
    let gbn = periodic(Transport::GoBackN, 1024, 256, None);
    assert_eq!(gbn.summary.messages_completed, 1);
    let fct = gbn.messages[0].fct_ps.unwrap();
    let gb0 = periodic(Transport::GoBack0, 1024, 256, Some(Time(50 * fct)));
    assert_eq!(gb0.summary.messages_completed, 0);
    assert_eq!(gb0.sim.status, fabricsim::sim::Status::StoppedAtUntil);
    assert!(
        gb0.counters.retransmitted_packets > 10 * 1024,
        "{:?}",
        gb0.counters
    );
    let short = periodic(Transport::GoBack0, 200, 256, None);
    assert_eq!(short.summary.messages_completed, 1);
    assert_eq!(
        short.counters.bytes_delivered,
        200 * SimParams::roce().mtu_bytes as u64
    );
    // The same loss costs go-back-0 more than go-back-N: the restart resends what arrived
    // (packet 150 of 200 dropped).
    let nth = Fault::DropNth {
        link: LinkId(0),
        dir: Dir::Up,
        nth: 150,
    };
    let short_gbn = one_message(Transport::GoBackN, 200, nth.clone(), None);
    let short_gb0 = one_message(Transport::GoBack0, 200, nth, None);
    assert!(short_gb0.counters.retransmitted_packets >= 150);
    assert_eq!(
        short_gb0.counters.bytes_delivered,
        200 * SimParams::roce().mtu_bytes as u64
    );
    assert!(
        short_gb0.counters.retransmitted_packets > short_gbn.counters.retransmitted_packets,
        "{:?} {:?}",
        short_gb0.counters,
        short_gbn.counters
    );
}
