//! M/D/1: Poisson arrivals of fixed-size packets into one port give a mean wait of
//! rho / (2 mu (1 - rho)) (Pollaczek-Khinchine with deterministic service), within 3%.
//!
//! 64 senders on 400G links feed one 100G port; each sender's share is small, so the merged
//! arrivals at the switch are the Poisson process the senders post (shifted by a constant).

use fabricsim::message::MessageDag;
use fabricsim::rng::Rng;
use fabricsim::sim::{Faults, SimParams};
use fabricsim::topology::HostId;
use fabricsim::units::{BitRate, Time};
use fabricsim_cases::sim_util::{run, star, wire};

fn mean_wait_vs_md1(rho: f64, packets: usize) -> (f64, f64) {
    let senders = 64u32;
    let mut rates = vec![BitRate::gbps(400); senders as usize];
    rates.push(BitRate::gbps(100));
    let t = star(&rates, Time::from_ns(100));
    let mut p = SimParams::roce();
    p.ack_every = 1;
    let payload = 1000u32;
    let service = BitRate::gbps(100).serialize(wire(&p, payload)).ps() as f64;
    let mut rng = Rng::new(11);
    let mut dag = MessageDag::default();
    let mut now = 0.0;
    for _ in 0..packets {
        now += rng.exp(service / rho);
        let s = rng.below(senders as u64) as u32;
        dag.push(
            HostId(s),
            HostId(senders),
            payload as u64,
            Time(now as u64),
            &[],
        );
    }
    let r = run(&t, &p, &dag, &Faults::default());
    // The unloaded latency: the smallest observed (a packet that found the port idle).
    let lat: Vec<u64> = r
        .messages
        .iter()
        .map(|m| m.recv_ps.unwrap() - m.start_ps.unwrap())
        .collect();
    let base = *lat.iter().min().unwrap() as f64;
    // Skip the first 1% (warm-up from an empty queue).
    let tail = &lat[packets / 100..];
    let mean_wait = tail.iter().map(|&l| l as f64 - base).sum::<f64>() / tail.len() as f64;
    let md1 = rho / (2.0 * (1.0 / service) * (1.0 - rho));
    eprintln!("rho {rho}: mean wait {mean_wait:.0} ps, M/D/1 {md1:.0} ps");
    (mean_wait, md1)
}

#[test]
fn md1_mean_wait_at_load_half() {
    let (w, md1) = mean_wait_vs_md1(0.5, 200_000);
    assert!(
        (w / md1 - 1.0).abs() < 0.03,
        "mean wait {w:.0} ps, M/D/1 {md1:.0} ps"
    );
}

#[test]
fn md1_mean_wait_at_load_0_8() {
    let (w, md1) = mean_wait_vs_md1(0.8, 400_000);
    assert!(
        (w / md1 - 1.0).abs() < 0.03,
        "mean wait {w:.0} ps, M/D/1 {md1:.0} ps"
    );
}
