//! A single packet over h hops arrives exactly at the sum of its serialization, propagation and
//! switch latencies (to the picosecond), store-and-forward and cut-through; and an unloaded
//! flow completes exactly at its closed-form ideal FCT.

use fabricsim::message::MessageDag;
use fabricsim::sim::{Faults, SimParams};
use fabricsim::topology::HostId;
use fabricsim::units::{BitRate, Time};
use fabricsim_cases::sim_util::{pair, run, wire};

fn one_packet(tiers: u8, cut_through: bool) {
    let rate = BitRate::gbps(400);
    let delays: Vec<Time> = (0..2 * tiers as u64)
        .map(|i| Time::from_ns(100 + 37 * i))
        .collect();
    let t = pair(tiers, rate, &delays);
    let mut p = SimParams::roce();
    p.cut_through = cut_through;
    let payload = 1000;
    let mut dag = MessageDag::default();
    dag.push(HostId(0), HostId(1), payload as u64, Time::from_ns(5), &[]);
    let r = run(&t, &p, &dag, &Faults::default());
    let hops = 2 * tiers as u64;
    let ser = rate.serialize(wire(&p, payload));
    let prop: Time = delays.iter().copied().fold(Time::ZERO, |a, b| a + b);
    // Store-and-forward serializes on every hop; cut-through only once (equal-rate ports).
    let sers = if cut_through { ser } else { ser * hops };
    let expect = Time::from_ns(5)
        + p.nic_latency
        + sers
        + prop
        + p.switch_latency * (hops - 1)
        + p.nic_latency;
    assert_eq!(
        r.messages[0].recv_ps,
        Some(expect.ps()),
        "tiers {tiers}, cut-through {cut_through}"
    );
}

#[test]
fn single_packet_arrives_at_the_sum_of_latencies_store_and_forward() {
    for tiers in 1..=3 {
        one_packet(tiers, false);
    }
}

#[test]
fn single_packet_arrives_at_the_sum_of_latencies_cut_through() {
    for tiers in 1..=3 {
        one_packet(tiers, true);
    }
}

#[test]
fn an_unloaded_flow_completes_at_its_ideal_fct() {
    // Closed form: the first packet's latency, the rest streamed at the bottleneck, the ACK of
    // the last packet back (one flow alone: the engine must match it exactly).
    for cut_through in [false, true] {
        for bytes in [1u64, 4096, 4097, 100_000, 1_000_000] {
            let t = pair(2, BitRate::gbps(100), &[Time::from_ns(500); 4]);
            let mut p = SimParams::roce();
            p.cut_through = cut_through;
            let mut dag = MessageDag::default();
            dag.push(HostId(0), HostId(1), bytes, Time::ZERO, &[]);
            let r = run(&t, &p, &dag, &Faults::default());
            let m = &r.messages[0];
            assert_eq!(
                m.fct_ps,
                Some(m.ideal_fct_ps),
                "{bytes} B, cut-through {cut_through}"
            );
        }
    }
}
