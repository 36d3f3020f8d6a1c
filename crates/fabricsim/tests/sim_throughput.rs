//! One long flow reaches line rate x payload / (payload + per-packet overhead) within 0.5%
//! (the overhead being the fabric's headers plus, on Ethernet, preamble and inter-frame gap);
//! a QP under the NIC's rate limiter runs at the limit x the same efficiency.

use fabricsim::message::MessageDag;
use fabricsim::sim::{Faults, SimParams};
use fabricsim::topology::HostId;
use fabricsim::units::{BitRate, Time};
use fabricsim_cases::sim_util::{pair, run};

/// Time for `bytes` to arrive in full.
fn transfer_ps(p: &SimParams, rate: BitRate, bytes: u64) -> u64 {
    let t = pair(2, rate, &[Time::from_ns(200); 4]);
    let mut dag = MessageDag::default();
    dag.push(HostId(0), HostId(1), bytes, Time::ZERO, &[]);
    let r = run(&t, p, &dag, &Faults::default());
    let m = &r.messages[0];
    m.recv_ps.unwrap() - m.start_ps.unwrap()
}

/// The sustained rate: extra bytes over extra time between a 10 MB and a 40 MB flow, which
/// cancels the fixed start-up latency, as a fraction of the line rate.
fn goodput_fraction(p: &SimParams, rate: BitRate) -> f64 {
    let (b1, b2) = (10_000_000u64, 40_000_000u64);
    let dt = (transfer_ps(p, rate, b2) - transfer_ps(p, rate, b1)) as f64 / 1e12;
    (b2 - b1) as f64 * 8.0 / dt / rate.bps() as f64
}

#[test]
fn long_flow_runs_at_line_rate_times_payload_efficiency() {
    for (name, p, rate) in [
        ("roce 100G", SimParams::roce(), BitRate::gbps(100)),
        ("roce 400G", SimParams::roce(), BitRate::gbps(400)),
        ("ib 400G", SimParams::ib(), BitRate::gbps(400)),
    ] {
        let expect = p.payload_efficiency();
        let got = goodput_fraction(&p, rate);
        eprintln!("{name}: goodput {got:.5} of line rate, closed form {expect:.5}");
        assert!(
            (got / expect - 1.0).abs() < 0.005,
            "{name}: goodput {got:.5} of line rate, closed form {expect:.5}"
        );
    }
}

#[test]
fn rate_limited_qp_runs_at_its_limit() {
    let mut p = SimParams::roce();
    p.qp_rate_limit = Some(BitRate::gbps(25));
    let expect = 0.25 * p.payload_efficiency();
    let got = goodput_fraction(&p, BitRate::gbps(100));
    eprintln!("25G limit on 100G: goodput {got:.5} of line rate, closed form {expect:.5}");
    assert!(
        (got / expect - 1.0).abs() < 0.005,
        "{got:.5} vs {expect:.5}"
    );
}
