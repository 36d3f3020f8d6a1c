//! Traffic classes end to end on the packet engine: messages on different classes (RoCEv2
//! priorities, InfiniBand VLs) through one egress. Each test names the mechanism and the closed
//! form it checks.

use fabricsim_cases::sim_util;

use fabricsim::message::MessageDag;
use fabricsim::profile::Profile;
use fabricsim::sim::cc_profile::VlArbitration;
use fabricsim::sim::{Faults, FlowControl, PfcParams, PfcThreshold, RunResult, SimParams};
use fabricsim::topology::HostId;
use fabricsim::units::{BitRate, Time};
use fabricsim_cases::sim_util::{run, star};

/// Posts `bytes` from `src` to `dst` on `class` at `start`.
fn push(dag: &mut MessageDag, src: u32, dst: u32, bytes: u64, start: Time, class: u8) {
    let m = dag.push(HostId(src), HostId(dst), bytes, start, &[]);
    dag.messages[m as usize].class = Some(class);
}

/// Receive-side throughput of message `i` over its life (post to last byte), in bits/s.
fn rate_bps(r: &RunResult, i: usize) -> f64 {
    let m = &r.messages[i];
    let t = m.recv_ps.unwrap() - m.start_ps.unwrap();
    m.bytes as f64 * 8.0 / (t as f64 * 1e-12)
}

/// RoCEv2 with three classes: 0 (ACKs, strict priority first), 1 and 2 both lossless under
/// PFC with the tuned SONiC headroom, XOFF at a static 100 KB per (port, priority) so a few MB
/// of incast pause (the dynamic default, 1/8 of a free 128 MB, would not).
fn roce_two_lossless() -> SimParams {
    let mut p = SimParams::roce();
    p.traffic_classes = 3;
    let frame = p.mtu_frame_wire_bytes();
    let mut pfc = PfcParams::tuned(p.data_tc, frame);
    pfc.lossless = 0b110;
    pfc.xoff = PfcThreshold::Static(100_000);
    p.flow_control = FlowControl::Pfc(pfc);
    p
}

/// IEEE 802.1Qbb: PAUSE is per priority. Hosts 1, 2 and 3 send 4 MB each on class 1 to host 0
/// (a 3 -> 1 incast: the switch pauses class 1 of their NICs); host 1 also sends 1 MB to the
/// idle host 4. On its own class that flow keeps the rest of host 1's link, line rate minus
/// host 1's fair third of host 0's link: 2/3 x R (x payload efficiency); on the congested class
/// it is paused with it (head-of-line blocking) and gets about host 1's share of the incast,
/// R/3.
#[test]
fn pfc_pauses_only_the_congested_priority() {
    let line = BitRate::gbps(100);
    let t = star(&[line; 5], Time::from_ns(100));
    let victim_rate = |class: u8| {
        let p = roce_two_lossless();
        let mut dag = MessageDag::default();
        for s in 1..=3 {
            push(&mut dag, s, 0, 4_000_000, Time::ZERO, 1);
        }
        push(&mut dag, 1, 4, 1_000_000, Time::ZERO, class);
        let r = run(&t, &p, &dag, &Faults::default());
        assert_eq!(r.summary.messages_completed, 4);
        assert_eq!(r.counters.drops.total(), 0, "lossless classes never drop");
        assert!(r.counters.pause_frames > 0, "the incast must pause class 1");
        rate_bps(&r, 3) / (line.bps() as f64 * p.payload_efficiency())
    };
    let own = victim_rate(2);
    let shared = victim_rate(1);
    eprintln!("victim throughput / line: own class {own:.3}, congested class {shared:.3}");
    assert!(
        (own / (2.0 / 3.0) - 1.0).abs() < 0.10,
        "own class: {own:.3} of line, want 2/3 within 10%"
    );
    assert!(
        (shared / (1.0 / 3.0) - 1.0).abs() < 0.15,
        "same class: {shared:.3} of line, want head-of-line blocking at 1/3 within 15%"
    );
}

/// The ib-ndr profile with its `[vl_arbitration]` table replaced by `arb`.
fn ib_ndr_with(arb: VlArbitration) -> SimParams {
    let mut pr = Profile::builtin("ib-ndr").unwrap();
    pr.vl_arbitration = Some(arb);
    fabricsim::sim::profile_fc::from_profile(&pr, true).unwrap()
}

/// Two `bytes` messages from hosts 1 and 2 to host 0 at once, on classes `a` and `b`: the
/// egress to host 0 is their one bottleneck. Returns the run.
fn two_on_one_egress(p: &SimParams, bytes: u64, a: u8, b: u8) -> RunResult {
    let t = star(&[BitRate::gbps(400); 3], Time::from_ns(100));
    let mut dag = MessageDag::default();
    push(&mut dag, 1, 0, bytes, Time::ZERO, a);
    push(&mut dag, 2, 0, bytes, Time::ZERO, b);
    let r = run(&t, p, &dag, &Faults::default());
    assert_eq!(r.summary.messages_completed, 2);
    r
}

/// The serialization time of `bytes` of payload in full packets at `line` (ps).
fn ser_ps(p: &SimParams, bytes: u64, line: BitRate) -> f64 {
    bytes as f64 * 8.0 / (line.bps() as f64 * p.payload_efficiency()) * 1e12
}

/// IBA Vol. 1 7.6.9, low-priority table: backlogged VLs share the link in the ratio of their
/// weights. VL1 weight 12 and VL2 weight 4 (x 64 B): while both send, VL1 gets 3/4 of the
/// link, so its message of S bytes finishes S/(3/4 R) after the start, S/(3 R) later than
/// alone (its ideal); VL2's finishes when all 2S bytes have crossed, S/R after its ideal.
#[test]
fn vl_arbitration_shares_a_bottleneck_by_the_profile_weights() {
    let bytes = 8_000_000;
    for (w1, w2) in [(12u32, 4u32), (4, 4)] {
        let p = ib_ndr_with(VlArbitration {
            high_weights_64b: vec![4, 0, 0, 0],
            low_weights_64b: vec![0, w1, w2, 4],
            high_limit_4kb: 0,
        });
        let r = two_on_one_egress(&p, bytes, 1, 2);
        let s = ser_ps(&p, bytes, BitRate::gbps(400));
        let share1 = w1 as f64 / (w1 + w2) as f64;
        let want1 = r.messages[0].ideal_fct_ps as f64 + s / share1 - s;
        let want2 = r.messages[1].ideal_fct_ps as f64 + s;
        let got1 = r.messages[0].fct_ps.unwrap() as f64;
        let got2 = r.messages[1].fct_ps.unwrap() as f64;
        eprintln!(
            "weights {w1}:{w2}: VL1 {got1:.0} ps (want {want1:.0}), VL2 {got2:.0} (want {want2:.0})"
        );
        assert!((got1 / want1 - 1.0).abs() < 0.02, "VL1 {got1} vs {want1}");
        assert!((got2 / want2 - 1.0).abs() < 0.02, "VL2 {got2} vs {want2}");
    }
}

/// IBA Vol. 1 7.6.9, Limit_of_High_Priority: the high-priority table (VL0) may send more than
/// `limit` x 4 KB before a waiting low-priority packet goes. With full packets of F bytes
/// that is k = floor(limit x 4096 / F) + 1 high packets per low one, so VL0's message of S
/// bytes gets k/(k+1) of the link and finishes S/(k R) after its ideal; 255 (unlimited) lets
/// it run at line rate (its ideal).
#[test]
fn vl_arbitration_high_limit_bounds_the_high_priority_table() {
    let bytes = 8_000_000;
    for limit in [0u8, 4, 255] {
        let p = ib_ndr_with(VlArbitration {
            high_weights_64b: vec![4, 0, 0, 0],
            low_weights_64b: vec![0, 4, 4, 4],
            high_limit_4kb: limit,
        });
        let r = two_on_one_egress(&p, bytes, 0, 1);
        let s = ser_ps(&p, bytes, BitRate::gbps(400));
        let frame = p.data_frame_bytes(p.mtu_bytes) as u64;
        let extra = if limit == 255 {
            0.0
        } else {
            let k = limit as u64 * 4096 / frame + 1;
            s / k as f64
        };
        let want = r.messages[0].ideal_fct_ps as f64 + extra;
        let got = r.messages[0].fct_ps.unwrap() as f64;
        eprintln!("limit {limit}: VL0 {got:.0} ps (want {want:.0})");
        assert!(
            (got / want - 1.0).abs() < 0.02,
            "limit {limit}: {got} vs {want}"
        );
        // The low VL gets the rest: it ends when all 2S bytes have crossed.
        let low = r.messages[1].fct_ps.unwrap() as f64;
        let want_low = r.messages[1].ideal_fct_ps as f64 + s;
        assert!(
            (low / want_low - 1.0).abs() < 0.02,
            "limit {limit}: low {low} vs {want_low}"
        );
    }
}

/// Strict priority (IEEE 802.1Q 8.6.8.1): a class-0 message posted while a class-1 message
/// holds the egress crosses it as if the fabric were idle, its completion time within one
/// low-priority packet of its ideal; the class-1 message is delayed by exactly the high one's
/// serialization. On the same class the two would share the egress first come, first served.
#[test]
fn strict_priority_lets_a_high_class_preempt_a_low_one() {
    let line = BitRate::gbps(100);
    let p = SimParams::roce();
    let t = star(&[line; 3], Time::from_ns(100));
    let (low, high) = (4_000_000u64, 1_000_000u64);
    let run_with = |high_class: u8| {
        let mut dag = MessageDag::default();
        push(&mut dag, 1, 0, low, Time::ZERO, 1);
        push(&mut dag, 2, 0, high, Time::from_us(50), high_class);
        run(&t, &p, &dag, &Faults::default())
    };
    let r = run_with(0);
    let packet_ps = line.serialize(sim_util::wire(&p, p.mtu_bytes)).0 as f64;
    let (h, l) = (&r.messages[1], &r.messages[0]);
    assert_eq!(
        (h.class, l.class),
        (Some(0), Some(1)),
        "results name each message's class"
    );
    let late = h.fct_ps.unwrap() as f64 - h.ideal_fct_ps as f64;
    eprintln!("high class: {late:.0} ps over its ideal (one packet {packet_ps:.0} ps)");
    assert!(
        late >= 0.0 && late <= packet_ps,
        "high class late by {late} ps"
    );
    let want_low = l.ideal_fct_ps as f64 + ser_ps(&p, high, line);
    let got_low = l.fct_ps.unwrap() as f64;
    assert!(
        (got_low / want_low - 1.0).abs() < 0.01,
        "low {got_low} vs {want_low}"
    );
    // Same class: the second message waits behind the first one's queue.
    let same = run_with(1);
    let late_same = same.messages[1].fct_ps.unwrap() as f64 - same.messages[1].ideal_fct_ps as f64;
    assert!(
        late_same > 10.0 * packet_ps,
        "same class late by only {late_same} ps"
    );
}
