//! HPCC on the packet engine and the flow engine (Li et al., "HPCC: High Precision Congestion
//! Control", SIGCOMM 2019): two long flows on one bottleneck converge to fair shares; the
//! bottleneck's queue stays near zero at η = 0.95 (DCQCN's sits near its Kmin); an N→1
//! incast's start-up queue drains within a few base RTTs; and the flow engine's η·C max-min
//! shares match the packet engine's FCTs on a permutation and an incast.
//! `cargo test -p fabricsim --test sim_hpcc -- --nocapture` prints the figures.

use fabricsim::message::MessageDag;
use fabricsim::sim::congestion::{CcAlgo, HpccParams};
use fabricsim::sim::dcqcn::{DcqcnParams, DcqcnSet};
use fabricsim::sim::ecn::EcnMarking;
use fabricsim::sim::{RunResult, SimParams};
use fabricsim::topology::{HostId, Topology};
use fabricsim::units::{BitRate, Time};
use fabricsim_cases::cc_util::{port_gbps, run, star};
use fabricsim_cases::flow_cases;

const RATE: BitRate = BitRate::gbps(100);
/// Sampling interval, us.
const SAMPLE_US: u64 = 10;

/// RoCE with HPCC (the paper's η, maxStage and the ns-3 W_AI), no ECN, sampled every 10 us.
fn hpcc() -> SimParams {
    let mut p = SimParams::roce();
    p.cc.ecn = None;
    p.cc.algo = CcAlgo::Hpcc(HpccParams::default());
    p.sample_interval = Some(Time::from_us(SAMPLE_US));
    p
}

/// RoCE with DCQCN's HPCC-model set and its RED thresholds at 100G (Kmin 400 KB, Kmax 1.6 MB,
/// Pmax 0.2, the HPCC ns-3 scaling rule).
fn dcqcn() -> SimParams {
    let mut p = SimParams::roce();
    p.cc.ecn = Some(EcnMarking::Red {
        kmin_bytes: 400_000,
        kmax_bytes: 1_600_000,
        pmax: 0.2,
    });
    p.cc.algo = CcAlgo::Dcqcn(DcqcnParams::set(DcqcnSet::HpccMlx, RATE));
    p.sample_interval = Some(Time::from_us(SAMPLE_US));
    p
}

/// The egress port of the switch towards host `h`.
fn egress_to(t: &Topology, h: u32) -> usize {
    t.ports
        .iter()
        .position(|x| x.peer == t.host_port(HostId(h)))
        .unwrap()
}

/// Two flows into host 2 of a star, A from 0 and B joining at `join`; each `bytes`.
fn two_flows(p: &SimParams, bytes: u64, join: Time) -> (Topology, RunResult) {
    let t = star(3, RATE, Time::from_ns(500));
    let mut d = MessageDag::default();
    d.push(HostId(0), HostId(2), bytes, Time::ZERO, &[]);
    d.push(HostId(1), HostId(2), bytes, join, &[]);
    let r = run(&t, p, &d);
    (t, r)
}

/// Samples from `from` to the first completion.
fn overlap_end(r: &RunResult) -> usize {
    let end = r
        .messages
        .iter()
        .map(|m| m.finish_ps.unwrap())
        .min()
        .unwrap();
    (end / (SAMPLE_US * 1_000_000)) as usize
}

#[test]
fn two_flows_converge_to_fair_shares() {
    let join = Time::from_us(500);
    let (t, r) = two_flows(&hpcc(), 60 << 20, join);
    let (a, b) = (
        port_gbps(&r, t.host_port(HostId(0)).idx()),
        port_gbps(&r, t.host_port(HostId(1)).idx()),
    );
    let (start, end) = ((join.0 / (SAMPLE_US * 1_000_000)) as usize, overlap_end(&r));
    // The first 100 us window (10 samples) after B's start from which every window's rates stay
    // within 10% of each other until the first flow ends.
    let w = 10;
    let avg = |v: &[f64], i: usize| v[i..i + w].iter().sum::<f64>() / w as f64;
    let mut since = None;
    let mut i = start;
    while i + w <= end {
        let (x, y) = (avg(&a, i), avg(&b, i));
        match ((x - y).abs() <= 0.1 * x.max(y), since) {
            (true, None) => since = Some(i),
            (false, _) => since = None,
            _ => {}
        }
        i += w;
    }
    let n = (end - start) as f64;
    let (ma, mb) = (
        a[start..end].iter().sum::<f64>() / n,
        b[start..end].iter().sum::<f64>() / n,
    );
    let conv_us = since.map(|s| (s - start) as u64 * SAMPLE_US);
    println!(
        "HPCC two flows: converged within 10% {conv_us:?} us after B joined; overlap {} us, \
         mean rates {ma:.1} / {mb:.1} Gb/s",
        (end - start) as u64 * SAMPLE_US
    );
    let c = conv_us.expect("the two rates converge");
    assert!(c <= 1_000, "converged only after {c} us");
    // Together they hold the link near η (the paper's target), neither starved.
    let sum = ma + mb;
    assert!(sum > 0.85 * RATE.bps() as f64 / 1e9, "sum {sum:.1} Gb/s");
}

/// Mean queue at the bottleneck over the second half of two long flows' overlap, bytes.
fn steady_queue(p: &SimParams) -> f64 {
    let (t, r) = two_flows(p, 30 << 20, Time::ZERO);
    let end = overlap_end(&r);
    let q = &r.series.as_ref().unwrap().ports[egress_to(&t, 2)].queue_bytes[end / 2..end];
    q.iter().sum::<u64>() as f64 / q.len() as f64
}

#[test]
fn bottleneck_queue_stays_near_zero_at_eta() {
    let (h, d) = (steady_queue(&hpcc()), steady_queue(&dcqcn()));
    let mtu = hpcc().mtu_frame_wire_bytes() as f64;
    println!(
        "steady bottleneck queue: HPCC {h:.0} B ({:.2} packets), DCQCN {d:.0} B (Kmin 400 KB)",
        h / mtu
    );
    assert!(h < 4.0 * mtu, "HPCC's queue {h:.0} B");
    // DCQCN needs a queue in the marking range to hold its rate: of the order of its Kmin.
    assert!(
        d > 100_000.0 && d > 50.0 * h.max(mtu),
        "DCQCN's queue {d:.0} B"
    );
}

#[test]
fn incast_queue_drains_within_a_few_rtts() {
    let n = 8;
    let t = star(n + 1, RATE, Time::from_ns(500));
    let mut d = MessageDag::default();
    for s in 0..n {
        d.push(HostId(s), HostId(n), 8 << 20, Time::ZERO, &[]);
    }
    let mut p = hpcc();
    p.sample_interval = Some(Time::from_us(1));
    let r = run(&t, &p, &d);
    let q = &r.series.as_ref().unwrap().ports[egress_to(&t, n)].queue_bytes;
    let (peak_at, &peak) = q.iter().enumerate().max_by_key(|&(_, &b)| b).unwrap();
    let mtu = p.mtu_frame_wire_bytes();
    // Base RTT: a full frame out over two links and an ACK back, with the latencies.
    let one =
        |bytes: u64| 2 * (RATE.serialize(bytes).0 + 500_000) + p.switch_latency.0 + p.nic_latency.0;
    let rtt_us = (one(mtu) + one(p.ack_frame_bytes() as u64)) as f64 / 1e6;
    let drained = q[peak_at..]
        .iter()
        .position(|&b| b <= 2 * mtu)
        .expect("drains");
    let last_us = r
        .messages
        .iter()
        .map(|m| m.finish_ps.unwrap())
        .max()
        .unwrap() as f64
        / 1e6;
    println!(
        "HPCC {n}:1 incast: peak queue {peak} B at {peak_at} us, below 2 packets {drained} us \
         later ({:.1} base RTTs of {rtt_us:.2} us); last completion {last_us:.0} us",
        drained as f64 / rtt_us
    );
    // The start-up burst is about (N-1) BDPs (W_init = B·T each), the drain within a few RTTs.
    assert!(peak as f64 <= (n as f64) * RATE.bps() as f64 / 8.0 * rtt_us * 1e-6 * 1.5);
    assert!(
        (drained as f64) <= 2.0 * n as f64 * rtt_us,
        "drained after {drained} us"
    );
    // And the link stays busy: the incast ends within 10% of its bytes at η·C.
    let ideal_us = (n as f64 * (8 << 20) as f64 * 8.0) / (0.95 * RATE.bps() as f64) * 1e6;
    assert!(
        last_us < 1.1 * ideal_us,
        "last {last_us:.0} us, η·C {ideal_us:.0} us"
    );
}

#[test]
fn flow_engine_matches_the_packet_engine_under_hpcc() {
    let hosts = 128;
    let cases = [
        (
            "permutation 1 MB",
            flow_cases::permutation(hosts, 1 << 20, 1),
        ),
        ("incast 16:1 x 1 MB", flow_cases::incast(hosts, 16, 1 << 20)),
    ];
    println!(
        "| case (roce-400g, {hosts} GPUs, HPCC) | packet mean / p99 us | flow mean / p99 us | error |"
    );
    for (name, dag) in cases {
        let (topo, mut p) = flow_cases::fabric(hosts, "roce-400g");
        p.cc.ecn = None;
        p.cc.algo = CcAlgo::Hpcc(HpccParams::default());
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

/// `[sim.congestion.hpcc]` selects HPCC in a `fabricsim sim` scenario: the example runs with
/// INT-driven rates (no marks, no CNPs) and a far smaller bottleneck queue than DCQCN's example
/// on the same incast; a bad value is an error naming the file and line.
#[test]
fn sim_congestion_hpcc_table_reaches_the_engine() {
    use fabricsim::scenario::{Scenario, sim::build};
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples");
    let go = |name: &str, text: &str| {
        let sc = Scenario::parse(name, text)?;
        let s = build(&sc, &dir, None)?;
        let r = fabricsim::sim::run(
            &s.net.topo,
            &s.params,
            &s.dag,
            &s.faults,
            Default::default(),
        )
        .unwrap();
        r.check_conservation().unwrap();
        Ok::<_, fabricsim::error::InputError>((s.params, r))
    };
    let text = std::fs::read_to_string(dir.join("roce-incast-hpcc.toml")).unwrap();
    let (p, h) = go("roce-incast-hpcc.toml", &text).unwrap();
    assert_eq!(p.cc.algo, CcAlgo::Hpcc(HpccParams::default()));
    let dtext = std::fs::read_to_string(dir.join("roce-incast-dcqcn.toml")).unwrap();
    let (_, d) = go("roce-incast-dcqcn.toml", &dtext).unwrap();
    let peak = |r: &RunResult| {
        let s = r.series.as_ref().unwrap();
        s.ports
            .iter()
            .flat_map(|x| x.queue_bytes.iter())
            .max()
            .copied()
            .unwrap()
    };
    println!(
        "example incast: HPCC peak queue {} B, {} CNPs; DCQCN peak queue {} B, {} CNPs",
        peak(&h),
        h.counters.cnps,
        peak(&d),
        d.counters.cnps
    );
    assert_eq!(h.counters.cnps, 0);
    assert!(peak(&h) < peak(&d));
    let bad = text.replace("eta = 0.95", "eta = 1.5");
    let e = go("bad.toml", &bad).unwrap_err().to_string();
    assert!(e.starts_with("bad.toml:") && e.contains("eta"), "{e}");
    let both = text.replace("dcqcn = \"off\"", "dcqcn = \"connectx_fw\"\necn = \"red\"");
    let e = go("both.toml", &both.replace("ecn = \"off\"\n", ""))
        .unwrap_err()
        .to_string();
    assert!(e.contains("both DCQCN and HPCC"), "{e}");
}
