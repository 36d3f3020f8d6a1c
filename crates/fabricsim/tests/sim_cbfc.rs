//! UEC CBFC, credit-based flow control per virtual channel (UEC 1.0 5.2): the IB credit
//! machinery with credit-freed updates spaced 6,400 B (`crate::credits` in the packet engine).
//! An incast that tail-drops on lossy UEC without trimming completes with no drop under CBFC,
//! the senders' NICs waiting for credits instead.
//! `cargo test -p fabricsim --test sim_cbfc -- --nocapture` prints the figures.

use fabricsim::message::MessageDag;
use fabricsim::sim::congestion::CcAlgo;
use fabricsim::sim::{CreditParams, FlowControl, RunResult, SimParams};
use fabricsim::topology::{HostId, Topology};
use fabricsim::units::{BitRate, Time};
use fabricsim_cases::cc_util::{run, star};
use fabricsim_cases::flow_cases;

const RATE: BitRate = BitRate::gbps(400);
const SENDERS: u32 = 8;
const BYTES: u64 = 4 << 20;

/// uec-400g's parameters without trimming and without congestion control (so the incast meets
/// the buffer), a 1 MB shared switch buffer, flow control `fc`.
fn uec400(fc: FlowControl) -> SimParams {
    let (_, mut p) = flow_cases::fabric(128, "uec-400g");
    p.cc.algo = CcAlgo::None;
    p.cc.trim_bytes = 0;
    p.switch_buffer_bytes = 1 << 20;
    p.flow_control = fc;
    p
}

fn incast(p: &SimParams) -> (Topology, RunResult) {
    let t = star(SENDERS + 1, RATE, Time::from_ns(500));
    let mut d = MessageDag::default();
    for s in 0..SENDERS {
        d.push(HostId(s), HostId(SENDERS), BYTES, Time::ZERO, &[]);
    }
    let r = run(&t, p, &d);
    (t, r)
}

/// 8 -> 1 x 4 MB on a 400G star. Lossy: the shared buffer tail-drops and RUD waits for its
/// timeouts. CBFC (256 KB per channel and port, updates every 6,400 B): nothing dropped, every
/// message complete, near line rate, each sender's NIC stalled waiting for credits (the switch
/// ingress fills as the one egress drains at an eighth of what arrives).
#[test]
fn cbfc_completes_a_lossy_incast_without_a_drop_and_stalls_the_senders() {
    let (_, lossy) = incast(&uec400(FlowControl::None));
    let c = &lossy.counters;
    println!(
        "lossy: drops {} packets ({} B), timeouts {}, resent {}, last {:.1} us",
        c.drops.buffer,
        c.bytes_dropped,
        c.timeouts,
        c.retransmitted_packets,
        lossy.summary.max_fct_ps.unwrap_or(0) as f64 / 1e6
    );
    assert!(
        c.drops.buffer > 0 && c.timeouts > 0,
        "the lossy incast drops"
    );

    let cbfc = CreditParams::cbfc();
    assert_eq!(cbfc.update_bytes, 6400);
    let p = uec400(FlowControl::Credits(cbfc));
    let (t, r) = incast(&p);
    let c = &r.counters;
    let fc = r.flow_control.as_ref().unwrap();
    let last = r.summary.max_fct_ps.unwrap() as f64;
    let line = RATE.bps() as f64 * p.payload_efficiency();
    let eff = (SENDERS as u64 * BYTES) as f64 * 8.0 / (last * 1e-12) / line;
    // The senders' NIC egress ports.
    let nic_stall: Vec<u64> = (0..SENDERS)
        .map(|h| {
            let port = t.host_port(HostId(h)).0;
            fc.ports
                .iter()
                .find(|x| x.port == port)
                .map_or(0, |x| x.credit_stall_ps)
        })
        .collect();
    println!(
        "CBFC: drops {} B, timeouts {}, resent {}, credit stalls {} ({:.1} us in all), senders' \
         NIC stalls {:?} us, last {:.1} us, {eff:.3} of line",
        c.bytes_dropped,
        c.timeouts,
        c.retransmitted_packets,
        fc.credit_stalls,
        fc.credit_stall_ps_total as f64 / 1e6,
        nic_stall.iter().map(|s| s / 1_000_000).collect::<Vec<_>>(),
        last / 1e6
    );
    assert_eq!(r.summary.messages_completed, SENDERS as u64);
    assert_eq!(
        (c.bytes_dropped, c.timeouts, c.retransmitted_packets),
        (0, 0, 0)
    );
    assert!(
        nic_stall.iter().all(|&s| s > 0),
        "every sender waits for credits"
    );
    assert!(eff > 0.95, "{eff:.3} of line");
}

/// The spacing matters: with updates every 1 MB (the largest allowed) a 256 KB channel buffer
/// cannot hold a frame and the unreported credit, refused at setup; IB's per-frame updates on
/// the same buffer run.
#[test]
fn a_spacing_beyond_the_buffer_is_refused() {
    let wide = CreditParams {
        update_bytes: 1 << 20,
        ..CreditParams::cbfc()
    };
    let t = star(2, RATE, Time::from_ns(500));
    let mut d = MessageDag::default();
    d.push(HostId(0), HostId(1), 1 << 16, Time::ZERO, &[]);
    let p = uec400(FlowControl::Credits(wide));
    let e = fabricsim::sim::run(&t, &p, &d, &Default::default(), Default::default()).unwrap_err();
    assert!(
        e.to_string()
            .contains("credit update's spacing of 1048576 B"),
        "{e}"
    );
    run(
        &t,
        &uec400(FlowControl::Credits(CreditParams::default_ib())),
        &d,
    );
}
