//! UEC RCCC in the packet engine (UEC 1.0 3.6.14): on an N->1 incast the receiver's credit
//! window bounds what its senders have in flight together, so its last-hop queue stays within
//! the window plus the senders' unscheduled allowances, with no trim and no drop, near line
//! rate; without congestion control (or with NSCC alone, which learns of the incast only after
//! a round trip) the same incast trims. The flow engine runs RCCC as fair max-min shares of the
//! receiver's link; its mean FCT is checked against the packet engine's.
//! `cargo test -p fabricsim --test sim_rccc -- --nocapture` prints the figures.

use fabricsim::message::MessageDag;
use fabricsim::sim::congestion::{CcAlgo, NsccParams, RcccParams};
use fabricsim::sim::{RunResult, SimParams};
use fabricsim::topology::{HostId, Topology};
use fabricsim::units::{BitRate, Time};
use fabricsim_cases::cc_util::{run, star};
use fabricsim_cases::flow_cases;

const RATE: BitRate = BitRate::gbps(400);
const DELAY: Time = Time::from_ns(500);
const SAMPLE_NS: u64 = 100;
const SENDERS: u32 = 16;
const BYTES: u64 = 1 << 20;
/// Past the first round trips: the unscheduled packets have drained.
const STEADY_US: u64 = 20;

/// uec-400g's parameters (RUD, spraying, ECN 0.2-0.8 BDP, trimming at 1 BDP, its 65.5 us
/// timeout) with congestion control `cc`, the queues sampled every 100 ns.
fn uec400(cc: CcAlgo) -> SimParams {
    let (_, mut p) = flow_cases::fabric(128, "uec-400g");
    p.cc.algo = cc;
    p.sample_interval = Some(Time::from_ns(SAMPLE_NS));
    p
}

/// The star's unloaded round trip, store and forward at every hop: a full frame over two links
/// and an ACK back with the switch and NIC latencies. The engine cuts through, so this is an
/// upper bound of the round trip RCCC sizes its window by.
fn rtt_upper_ps(p: &SimParams) -> u64 {
    let one =
        |bytes: u64| 2 * (RATE.serialize(bytes).0 + DELAY.0) + p.switch_latency.0 + p.nic_latency.0;
    one(p.mtu_frame_wire_bytes()) + one((p.ack_frame_bytes() + p.wire_overhead_bytes) as u64)
}

struct Incast {
    /// Largest sampled queue of the receiver's last hop, bytes: over the run, and from the
    /// second round trip (`STEADY_US`) to the first completion.
    peak_q: u64,
    steady_q: u64,
    /// Aggregate goodput to the last completion over line rate x payload efficiency.
    efficiency: f64,
    r: RunResult,
}

fn egress_to(t: &Topology, h: u32) -> usize {
    t.ports
        .iter()
        .position(|x| x.peer == t.host_port(HostId(h)))
        .unwrap()
}

/// `SENDERS` hosts of a 400G star send `BYTES` each to one, all at time 0.
fn incast(p: &SimParams) -> Incast {
    let t = star(SENDERS + 1, RATE, DELAY);
    let mut d = MessageDag::default();
    for s in 0..SENDERS {
        d.push(HostId(s), HostId(SENDERS), BYTES, Time::ZERO, &[]);
    }
    let r = run(&t, p, &d);
    let q = &r.series.as_ref().unwrap().ports[egress_to(&t, SENDERS)].queue_bytes;
    let last = r.messages.iter().map(|m| m.fct_ps.unwrap()).max().unwrap();
    let first = r.messages.iter().map(|m| m.fct_ps.unwrap()).min().unwrap();
    let from = (STEADY_US * 1000 / SAMPLE_NS) as usize;
    let to = (first / 1000 / SAMPLE_NS) as usize;
    let line = RATE.bps() as f64 * p.payload_efficiency();
    Incast {
        peak_q: *q.iter().max().unwrap(),
        steady_q: *q[from..to.min(q.len())].iter().max().unwrap(),
        efficiency: (SENDERS as u64 * BYTES) as f64 * 8.0 / (last as f64 * 1e-12) / line,
        r,
    }
}

/// 16->1 x 1 MB on a 400G star with uec-400g's switches. The bound: a receiver's senders hold
/// at most its credit window C (credit_bdp x 400 Gb/s x their unloaded round trip, here bounded
/// above by the store-and-forward round trip) plus, before their first credit, each its
/// unscheduled allowance of U full frames: the queue, what is in flight less what the links
/// hold, stays under C + N x U frames. Without CC and with NSCC alone the senders start with
/// their full windows and the last hop trims; with RCCC (alone or with NSCC) nothing is trimmed
/// or dropped and the incast runs near line rate.
#[test]
fn rccc_bounds_the_last_hop_queue_of_an_incast_by_its_credit_window() {
    let r = RcccParams::default();
    let cases = [
        ("no CC", CcAlgo::None),
        ("NSCC", CcAlgo::Nscc(NsccParams::default())),
        ("RCCC", CcAlgo::Rccc(r)),
        ("NSCC+RCCC", CcAlgo::NsccRccc(NsccParams::default(), r)),
    ];
    let p = uec400(CcAlgo::None);
    let window = r.window_bytes(RATE.bps(), rtt_upper_ps(&p));
    let frame = p.mtu_frame_wire_bytes();
    let rounding = SENDERS as u64 * frame;
    let unscheduled = SENDERS as u64 * r.unscheduled_packets as u64 * frame;
    let (steady, bound) = (window + rounding, window + rounding + unscheduled);
    println!(
        "credit window <= {window} B; + {SENDERS} frames of rounding = {steady} B; + {SENDERS} x \
         {} unscheduled frames = {bound} B",
        r.unscheduled_packets
    );
    println!(
        "| CC | peak last-hop queue B | trimmed | drops | timeouts | goodput / line | last us |"
    );
    for (name, cc) in cases {
        let p = uec400(cc);
        let i = incast(&p);
        let c = &i.r.counters;
        let last = i.r.summary.max_fct_ps.unwrap() as f64 / 1e6;
        println!(
            "| {name} | {} / {} | {} | {} | {} | {:.3} | {last:.1} |",
            i.peak_q, i.steady_q, c.trimmed, c.bytes_dropped, c.timeouts, i.efficiency
        );
        let tail = c.drops.buffer + c.timeouts;
        if name.contains("RCCC") {
            assert!(i.peak_q <= bound, "{name}: peak {} over {bound}", i.peak_q);
            assert!(i.steady_q <= steady, "{name}: {} over {steady}", i.steady_q);
            // Only packets beyond credit can meet a full queue: the unscheduled ones.
            assert!(
                c.trimmed <= (SENDERS * r.unscheduled_packets) as u64,
                "{name}"
            );
            assert_eq!(tail, 0, "{name}: tail drops and timeouts");
            assert!(
                i.efficiency > 0.95,
                "{name}: {:.3} of line rate",
                i.efficiency
            );
        } else {
            assert!(
                i.steady_q > steady,
                "{name}: {} within {steady}",
                i.steady_q
            );
            assert!(
                c.trimmed > 10 * (SENDERS * r.unscheduled_packets) as u64,
                "{name}"
            );
        }
    }
}

/// The flow engine (RCCC as fair max-min shares of the receiver's link, as NSCC) against the
/// packet engine on uec-400g's 128-GPU fat-tree, 16:1 x 1 MB: mean FCT within 10%.
#[test]
fn flow_engine_matches_the_packet_engine_on_an_rccc_incast() {
    for cc in [
        CcAlgo::Rccc(RcccParams::default()),
        CcAlgo::NsccRccc(NsccParams::default(), RcccParams::default()),
    ] {
        let (topo, mut p) = flow_cases::fabric(128, "uec-400g");
        p.cc.algo = cc.clone();
        let dag = flow_cases::incast(128, SENDERS, BYTES);
        let packet = run(&topo, &p, &dag);
        let fp = fabricsim::engine_choice::flow_params(&topo, &p);
        let (flow, _) = fabricsim::flow::run(&topo, &p, &dag, &fp).unwrap();
        let (pm, pp) = flow_cases::fct_mean_p99_us(&packet);
        let (fm, fq) = flow_cases::fct_mean_p99_us(&flow);
        let em = (fm - pm) / pm * 100.0;
        println!(
            "{}: packet mean / p99 {pm:.2} / {pp:.2} us, flow {fm:.2} / {fq:.2} us, mean {em:+.1}%; \
             trimmed {}, drops {}",
            cc.name(),
            packet.counters.trimmed,
            packet.counters.bytes_dropped
        );
        assert_eq!(packet.counters.bytes_dropped, 0);
        assert!(em.abs() <= 10.0, "{}: mean {em:+.1}%", cc.name());
    }
}
