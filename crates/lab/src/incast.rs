//! `incast`: the sharing of a congested egress (DCQCN/ECN fan-in, per-input-port service, HOL).

use crate::util::{both, last_mean, message_links, route_links};
use fabricsim::flow::paths;
use fabricsim::message::MessageDag;
use fabricsim::sim;
use fabricsim::topology::HostId;
use fabricsim::units::Time;
use fabricsim_cases::flow_cases;

/// The sharing of a congested egress on roce-400g, packet vs flow (`flow::rate_model` has the
/// model and the figures).
///
/// 1. DCQCN/ECN cost: N:1 incasts of 1 MB (N = 2..32, 128 GPUs) with the profile's DCQCN and
///    without it (PFC alone), with the packet engine's ECN marks, CNPs and PAUSE frames and the
///    `flow::dcqcn_incast` mean-field model; 2. per-input-port service: the mixed incast of
///    `flow_cases` on 1,024 GPUs and the FCTs if the leaf shared the egress per input port;
///    3. PFC head-of-line blocking and the NIC's per-QP service: the 32:1 incast plus four other
///    flows at the catalog buffer and at 16 MB, with and without DCQCN. No arguments.
#[derive(clap::Args)]
pub struct Args {}

/// The incast checks of the fluid model's sharing of a congested egress (per flow, max-min) on
/// roce-400g, 128 GPUs, 1 MB per sender, packet vs flow:
/// 1. DCQCN/ECN cost: N:1 incast (N = 2..32) with the profile's DCQCN and without it (PFC
///    alone), at the catalog switch's buffer: collective time (the bottleneck's throughput) and
///    mean FCT, with the packet engine's ECN marks, CNPs and PAUSE frames.
/// 2. Per-input-port service: the mixed incast of `flow_cases` on 1,024 GPUs (2 tiers; 3
///    senders on the receiver's leaf, one per input port; 96 on other leaves, entering over the
///    leaf's up ports, several per port): the FCTs on both engines, the largest per-flow error,
///    and the FCTs if the leaf shared the egress per input port then per flow (the candidate).
/// 3. PFC head-of-line blocking and the NIC's per-QP service, outside the model: the 32:1
///    incast plus four 1 MB flows to other hosts, one from an incast sender's NIC, at the
///    catalog buffer and at 16 MB (so PFC pauses), with and without DCQCN.
pub fn run() {
    let (topo, p0) = flow_cases::fabric(128, "roce-400g");
    println!(
        "1. N:1 incast, roce-400g, {} MB switch buffer",
        p0.switch_buffer_bytes >> 20
    );
    println!(
        "{:>4} {:>6} {:>11} {:>11} {:>7} {:>11} {:>11} {:>7} {:>7} {:>6} {:>6}  model",
        "N",
        "dcqcn",
        "pkt last",
        "flow last",
        "err",
        "pkt mean",
        "flow mean",
        "err",
        "marks",
        "cnps",
        "pauses"
    );
    for n in [2u32, 4, 8, 16, 32] {
        for dcqcn in [true, false] {
            let mut p = p0.clone();
            if !dcqcn {
                p.cc.algo = fabricsim::sim::congestion::CcAlgo::None;
            }
            let (pr, fr) = both(&topo, &p, &flow_cases::incast(128, n, 1 << 20));
            let ((pl, pm), (fl, fm)) = (last_mean(&pr), last_mean(&fr));
            let c = &pr.counters;
            println!(
                "{n:>4} {dcqcn:>6} {pl:>11.2} {fl:>11.2} {:>+6.1}% {pm:>11.2} {fm:>11.2} {:>+6.1}% {:>7} {:>6} {:>6}  {}",
                100.0 * (fl - pl) / pl,
                100.0 * (fm - pm) / pm,
                c.ecn_marks,
                c.cnps,
                c.pause_frames,
                dcqcn_model(&topo, &p, n, 1 << 20)
            );
        }
    }
    let mixed = flow_cases::mixed_incast(1024, 256 << 10);
    println!(
        "2. mixed incast on 1,024 GPUs, 256 KB per sender (3 on the receiver's leaf + 96 on others): FCT us, packet / flow"
    );
    for fabric in ["roce-400g", "ib-ndr"] {
        let (topo, p) = flow_cases::fabric(1024, fabric);
        let (pr, fr) = both(&topo, &p, &mixed);
        let errs: Vec<f64> = pr
            .messages
            .iter()
            .zip(&fr.messages)
            .map(|(a, b)| {
                let (a, b) = (a.fct_ps.unwrap() as f64, b.fct_ps.unwrap() as f64);
                (b - a) / a
            })
            .collect();
        let worst = errs
            .iter()
            .fold(0.0f64, |w, e| if e.abs() > w.abs() { *e } else { w });
        let ((pl, pm), (fl, fm)) = (last_mean(&pr), last_mean(&fr));
        println!(
            "  {fabric:<10} local {:.2} / {:.2}, remote min {:.2} max {:.2} / {:.2}; last {pl:.2} / {fl:.2}, mean {pm:.2} / {fm:.2}; worst per-flow error {:+.1}%",
            pr.messages[0].fct_ps.unwrap() as f64 / 1e6,
            fr.messages[0].fct_ps.unwrap() as f64 / 1e6,
            pr.messages[3..]
                .iter()
                .filter_map(|m| m.fct_ps)
                .min()
                .unwrap() as f64
                / 1e6,
            pr.messages[3..]
                .iter()
                .filter_map(|m| m.fct_ps)
                .max()
                .unwrap() as f64
                / 1e6,
            fr.messages[3].fct_ps.unwrap() as f64 / 1e6,
            100.0 * worst
        );
    }
    let (big, pb) = flow_cases::fabric(1024, "roce-400g");
    let (pr, fr) = both(&big, &pb, &mixed);
    let last_flow = fr.messages.iter().filter_map(|m| m.fct_ps).max().unwrap() as f64 / 1e6;
    let egress = big.links[big.ports[big.host_port(HostId(0)).idx()].link.idx()]
        .rate
        .bps() as f64;
    let all = paths::wire_bytes(&pb, 256 << 10) as f64 * mixed.messages.len() as f64;
    let port = per_port_fcts(&big, &pb, &mixed, last_flow - all * 8e6 / egress);
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
    let us = |r: &sim::RunResult| -> Vec<f64> {
        r.messages
            .iter()
            .map(|m| m.fct_ps.unwrap() as f64 / 1e6)
            .collect()
    };
    println!(
        "  roce-400g per-port candidate: local {:.2} us, remote {:.2}-{:.2} us, mean {:.2} us (packet {:.2}, per-flow {:.2})",
        port[0],
        port[3..].iter().cloned().fold(f64::MAX, f64::min),
        port[3..].iter().cloned().fold(0.0, f64::max),
        mean(&port),
        mean(&us(&pr)),
        mean(&us(&fr))
    );
    println!(
        "3. 32:1 incast of 1 MB + 4 other 1 MB flows (3 -> 100 from an incast sender's NIC; 1, 2, 5 -> 101..103), roce-400g, 128 GPUs"
    );
    let mut dag = flow_cases::incast(128, 32, 1 << 20);
    for (s, d) in [(1, 101), (2, 102), (5, 103), (3, 100)] {
        dag.push(HostId(s), HostId(d), 1 << 20, Time::ZERO, &[]);
    }
    let n = dag.messages.len();
    for buffer in [p0.switch_buffer_bytes, 16_000_000] {
        for dcqcn in [true, false] {
            let mut p = p0.clone();
            p.switch_buffer_bytes = buffer;
            if !dcqcn {
                p.cc.algo = fabricsim::sim::congestion::CcAlgo::None;
            }
            let (pr, fr) = both(&topo, &p, &dag);
            let us = |r: &sim::RunResult, i: usize| r.messages[i].fct_ps.unwrap() as f64 / 1e6;
            let incast_last = |r: &sim::RunResult| {
                r.messages[..n - 4]
                    .iter()
                    .filter_map(|m| m.finish_ps)
                    .max()
                    .unwrap() as f64
                    / 1e6
            };
            println!(
                "  buffer {:>3} MB dcqcn {dcqcn:>5}: incast last {:.2} / {:.2}; others {:.2} / {:.2}, from the sender's NIC {:.2} / {:.2}  [pauses {}, cnps {}]",
                buffer >> 20,
                incast_last(&pr),
                incast_last(&fr),
                us(&pr, n - 4),
                us(&fr, n - 4),
                us(&pr, n - 1),
                us(&fr, n - 1),
                pr.counters.pause_frames,
                pr.counters.cnps
            );
        }
    }
}

/// FCTs (us) of an incast of equal messages to one host if its leaf served the congested egress
/// per input port, then per flow within a port (the candidate model): each port's flows
/// arrive over the link the packet engine's ECMP hash gives them; `offset_us` is the fixed
/// latency of a message.
fn per_port_fcts(
    topo: &fabricsim::topology::Topology,
    p: &sim::SimParams,
    dag: &MessageDag,
    offset_us: f64,
) -> Vec<f64> {
    let router = paths::Router::new(topo, p.routing);
    let (msg_qp, _) = sim::route::number_qps(&dag.messages, 1);
    let mut links = Vec::new();
    let ports: Vec<u32> = dag
        .messages
        .iter()
        .zip(&msg_qp)
        .map(|(m, &q)| {
            message_links(topo, &router, p, m, q, &mut links);
            links[links.len() - 2]
        })
        .collect();
    let egress = topo.links[topo.ports[topo.host_port(dag.messages[0].dst).idx()]
        .link
        .idx()]
    .rate
    .bps() as f64;
    let drain = paths::wire_bytes(p, dag.messages[0].bytes) as f64 * 8.0 / egress * 1e6;
    // Per port: its flows and their remaining drain (us at the full egress rate).
    let mut left: std::collections::BTreeMap<u32, (usize, f64)> = Default::default();
    for &pt in &ports {
        left.entry(pt).or_insert((0, drain)).0 += 1;
    }
    let (mut now, mut done) = (0.0, std::collections::BTreeMap::new());
    while !left.is_empty() {
        let k = left.len() as f64;
        // A port's flows each drain at 1 / (k n) of the egress.
        let (&first, &(n, r)) = left
            .iter()
            .min_by(|a, b| (a.1.0 as f64 * a.1.1).total_cmp(&(b.1.0 as f64 * b.1.1)))
            .unwrap();
        let dt = r * k * n as f64;
        now += dt;
        for (_, (n2, r2)) in left.iter_mut() {
            *r2 -= dt / (k * *n2 as f64);
        }
        left.remove(&first);
        done.insert(first, now);
    }
    println!(
        "  per-port candidate: {} flows over {} input ports of the receiver's leaf",
        ports.len(),
        done.len()
    );
    ports.iter().map(|pt| done[pt] + offset_us).collect()
}

/// The `flow::dcqcn_incast` mean-field model of an N:1 incast of `bytes` per sender on `p`'s
/// fabric (feedback loop: the flow engine's round trip of a sender's path): drain time, its
/// ideal, one sender's cuts and CNPs, and the peak queue.
fn dcqcn_model(
    topo: &fabricsim::topology::Topology,
    p: &sim::SimParams,
    n: u32,
    bytes: u64,
) -> String {
    let (Some(d), Some(ecn)) = (p.cc.algo.dcqcn(), &p.cc.ecn) else {
        return "off".into();
    };
    let dag = flow_cases::incast(128, 1, bytes);
    let links = route_links(topo, p, &dag);
    let one_way = paths::one_way_ps(topo, p, &links);
    let line = topo.links[topo.ports[topo.host_port(HostId(0)).idx()].link.idx()].rate;
    let inc = fabricsim::flow::mean_field::Incast {
        senders: n,
        bytes: paths::wire_bytes(p, bytes),
        offered_bps: line.bps(),
        nic_line: line,
        egress_bps: line.bps(),
        loop_ps: 2 * one_way,
        frame_bytes: p.mtu_frame_wire_bytes(),
    };
    let o = fabricsim::flow::mean_field::drain(&inc, d, ecn);
    format!(
        "drain {:.2} us (ideal {:.2}), {} cuts, {} CNPs, peak queue {:.2} MB, mean wait {:.2} us",
        o.drain_ps as f64 / 1e6,
        o.ideal_ps as f64 / 1e6,
        o.cuts,
        o.cnps,
        o.peak_queue_bytes as f64 / 1e6,
        o.mean_wait_ps as f64 / 1e6
    )
}
