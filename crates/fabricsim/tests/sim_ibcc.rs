//! InfiniBand congestion control (IBA annex A10) against congestion spreading: the hotspot and
//! victim pattern of Gran et al., "First experiences with congestion control in InfiniBand
//! hardware" (IPDPS 2010), on IB credits (`lossless_scenarios`).

mod cc_util;

use cc_util::run;
use fabricsim::message::MessageDag;
use fabricsim::sim::ibcc::IbCcParams;
use fabricsim::sim::lossless_scenarios::{hotspot_victim, two_leaves};
use fabricsim::sim::{CreditParams, FlowControl, SimParams};
use fabricsim::topology::HostId;
use fabricsim::units::{BitRate, Time};

const RATE: BitRate = BitRate::gbps(400);

/// IB credits, with IB CC when `ccti_timer` is given: FECN above 64 KB (16 MTU packets) at the
/// root of congestion [E], one CCTI step per BECN, the linear CCT of `sim::ibcc`.
fn ib(ccti_timer: Option<Time>) -> SimParams {
    let mut p = SimParams::ib();
    p.flow_control = FlowControl::Credits(CreditParams::default_ib());
    if let Some(ccti_timer) = ccti_timer {
        p.cc.ibcc = Some(IbCcParams {
            threshold_bytes: 64_000,
            marking_rate: 0,
            victim_mask: false,
            ccti_increase: 1, // [ib.cc] ccti_increase
            ccti_limit: 127,  // [ib.cc] ccti_limit
            ccti_min: 0,
            ccti_timer,
            cct_denominator: 8,
        });
    }
    p
}

/// The victim's throughput (bytes over its completion time) in Gb/s, and the run's BECNs.
fn victim_gbps(p: &SimParams, bytes: u64) -> (f64, u64, u64) {
    let t = two_leaves(8, RATE, Time::from_ns(100));
    let (dag, v) = hotspot_victim(8, 3, bytes);
    let r = run(&t, p, &dag);
    assert_eq!(r.counters.drops.total(), 0);
    let m = &r.messages[v as usize];
    let bps = m.bytes as f64 * 8.0 / ((m.recv_ps.unwrap() - m.start_ps.unwrap()) as f64 / 1e12);
    (bps / 1e9, r.counters.cnps, r.counters.ecn_marks)
}

/// Without CC the hotspot's backlog fills leaf B's credits from the spine and the victim is
/// blocked behind it (head-of-line blocking); with IB CC the hotspot's senders are throttled
/// by their CCT and the victim gets more of the spine link (Gran et al. 2010, Fig. 6). With a
/// 5 us CCTI timer the index falls fast enough after the initial burst (which also congests
/// the victim's own uplink, so the victim is throttled too); with the 50 us placeholder of
/// defaults.toml `[ib.cc]` it does not, and the victim ends up slower than without CC.
#[test]
fn ib_cc_lets_the_victim_recover() {
    let bytes = 8_000_000;
    let (off, _, _) = victim_gbps(&ib(None), bytes);
    let (on, becns, fecns) = victim_gbps(&ib(Some(Time::from_us(5))), bytes);
    let (slow, _, _) = victim_gbps(&ib(Some(Time::from_us(50))), bytes);
    let fair = RATE.as_gbps_f64() * SimParams::ib().payload_efficiency() * 2.0 / 3.0;
    let t = two_leaves(8, RATE, Time::from_ns(100));
    let mut alone = MessageDag::default();
    alone.push(HostId(0), HostId(15), bytes, Time::ZERO, &[]);
    let ra = run(&t, &ib(None), &alone);
    let m = &ra.messages[0];
    let alone_gbps =
        m.bytes as f64 * 8.0 / ((m.recv_ps.unwrap() - m.start_ps.unwrap()) as f64 / 1e3);
    eprintln!(
        "victim: IB CC off {off:.1} Gb/s, on (ccti_timer 5 us) {on:.1} Gb/s ({fecns} FECN, \
         {becns} BECN), on (ccti_timer 50 us) {slow:.1} Gb/s; alone {alone_gbps:.1} Gb/s, \
         max-min share {fair:.1} Gb/s"
    );
    assert!(
        off < 0.5 * fair,
        "without CC the victim should be blocked: {off:.1}"
    );
    assert!(on > 1.5 * off, "with CC: {on:.1} vs off {off:.1}");
}
