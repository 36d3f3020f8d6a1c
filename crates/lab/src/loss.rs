//! `loss`: the go-back-N constant of `flow::loss`, fitted on the packet engine.

use crate::util::route_links;
use fabricsim::flow::loss;
use fabricsim::flow::paths;
use fabricsim::message::MessageDag;
use fabricsim::sim::{self, Faults, RunOptions};
use fabricsim::topology::HostId;
use fabricsim::units::Time;
use fabricsim_cases::flow_cases;

/// Fits the go-back-N constant of `flow::loss` (`FITTED.c_gbn`) on the packet engine.
///
/// Single 4 MB flows across a 128-GPU roce-400g fabric (one switch: 2 links, counted from the
/// route) at per-link loss rates 0.05, 0.1, 0.2 and 0.5% and seeds 1-12 on the packet engine;
/// runs that hit a retransmission timeout are left out (the timeout is its own term of the
/// model); the goodput of each is its wire bytes at line rate over its drain time, fitted to
/// `(1 - p_h) / (1 + c p_h W)`. Prints the points, the constant, and the mean FCT of the same
/// runs on the flow engine with the model's constant (its per-message draws of NAKed losses,
/// `LossModel::draw_naks`) beside the packet engine's. No arguments.
#[derive(clap::Args)]
pub struct Args {}

pub fn run() {
    let (topo, p0) = flow_cases::fabric(128, "roce-400g");
    let (src, dst) = (0u32, 100u32);
    let bytes: u64 = 4 << 20;
    // The alone time without loss: the fixed part (latencies) is that minus the drain.
    let mut dag = MessageDag::default();
    dag.push(HostId(src), HostId(dst), bytes, Time::ZERO, &[]);
    let clean = sim::run(&topo, &p0, &dag, &Faults::default(), RunOptions::default()).unwrap();
    let line = topo.links[topo.ports[topo.host_port(HostId(src)).idx()].link.idx()]
        .rate
        .bps();
    let drain_ps = paths::wire_bytes(&p0, bytes) as f64 * 8.0 / line as f64 * 1e12;
    let fixed_ps = clean.messages[0].fct_ps.unwrap() as f64 - drain_ps;
    // Hops and round trip of the path as the flow engine sees them (a flow run's ideal FCT
    // minus its drain is NIC + one way + ACK; the RTT is one way + ACK).
    let (fr, _) = fabricsim::flow::run(
        &topo,
        &p0,
        &dag,
        &fabricsim::engine_choice::flow_params(&topo, &p0),
    )
    .unwrap();
    let rtt_ps = fr.messages[0].fct_ps.unwrap() as f64 - drain_ps - p0.nic_latency.ps() as f64;
    let frame = p0.mtu_frame_wire_bytes() as u32;
    let w = loss::window_packets(rtt_ps as u64, line, frame);
    let hops = route_links(&topo, &p0, &dag).len();
    println!("go-back-N on roce-400g, {bytes} B, window W = {w:.2} packets, {hops} links");
    println!(
        "{:>8} {:>6} {:>10} {:>10}",
        "p/link", "seed", "p_h", "goodput"
    );
    let mut pts = Vec::new();
    // Per loss rate: the mean FCT (us) of the runs without a timeout on each engine (the flow
    // engine draws the same message's NAKed losses per seed, `LossModel::draw_naks`).
    let mut means = Vec::new();
    let fp = fabricsim::engine_choice::flow_params(&topo, &p0);
    for &pl in &[0.0005, 0.001, 0.002, 0.005] {
        let (mut pkt, mut flow) = (Vec::new(), Vec::new());
        for seed in 1..=12u64 {
            let mut p = p0.clone();
            p.loss_rate = pl;
            p.seed = seed;
            let r = sim::run(&topo, &p, &dag, &Faults::default(), RunOptions::default()).unwrap();
            let fct = r.messages[0].fct_ps.unwrap() as f64;
            let rto = p.ack_timeout().ps() as f64;
            let fp = fabricsim::flow::FlowParams {
                loss: fabricsim::flow::LossModel::of(&p),
                ..fp.clone()
            };
            let f = fabricsim::flow::run(&topo, &p, &dag, &fp).unwrap().0;
            let ffct = f.messages[0].fct_ps.unwrap() as f64;
            if ffct < rto {
                flow.push(ffct);
            }
            if fct >= rto {
                println!("{pl:>8} {seed:>6} (timeout: left out)");
                continue;
            }
            pkt.push(fct);
            let g = drain_ps / (fct - fixed_ps);
            let ph = loss::path_loss(pl, hops);
            println!("{pl:>8} {seed:>6} {ph:>10.5} {g:>10.4}");
            pts.push((ph, w, g));
        }
        means.push((pl, pkt, flow));
    }
    let c = loss::fit_gbn(&pts);
    println!("fitted c_gbn = {c:.3}");
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len().max(1) as f64 / 1e6;
    println!(
        "mean FCT without timeouts (us), packet / flow (c_gbn {} in the model):",
        loss::FITTED.c_gbn
    );
    for (pl, pkt, flow) in &means {
        println!(
            "{pl:>8} {:>10.2} ({} runs) / {:>10.2} ({} runs) {:>+6.1}%",
            mean(pkt),
            pkt.len(),
            mean(flow),
            flow.len(),
            100.0 * (mean(flow) - mean(pkt)) / mean(pkt)
        );
    }
}
