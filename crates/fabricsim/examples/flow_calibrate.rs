//! Calibration and cross-validation of the flow engine against the packet engine (issue 7).
//!
//! - `-- loss`: fits the go-back-N constant of `flow::loss` (`FITTED.c_gbn`): single 4 MB
//!   flows across a 128-GPU roce-400g fabric at several per-link loss rates and seeds on the
//!   packet engine; runs that hit a retransmission timeout are left out (the timeout is its own
//!   term of the model); the goodput of each is its wire bytes at line rate over its drain
//!   time, fitted to `(1 - p_h) / (1 + c p_h W)`. Prints the points and the constant.
//! - `-- cases [name]`: the cross-validation cases of `tests/flow_xval.rs`, packet vs flow.
//!
//! Run: `cargo run --release -p fabricsim --example flow_calibrate -- loss` (or `-- cases`).

#[path = "../tests/flow_cases/mod.rs"]
mod flow_cases;

use fabricsim::engine_choice::EngineKind;
use fabricsim::flow::loss;
use fabricsim::flow::paths;
use fabricsim::message::MessageDag;
use fabricsim::sim::{self, Faults, RunOptions};
use fabricsim::topology::HostId;
use fabricsim::units::Time;
use std::time::Instant;

fn fit_loss() {
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
    let frame = p0.data_frame_bytes(p0.mtu_bytes) + p0.wire_overhead_bytes;
    let w = loss::window_packets(rtt_ps as u64, line, frame);
    let hops = 4; // NIC -> leaf -> spine -> leaf -> NIC on this 2-tier fabric (hosts 0, 100)
    println!("go-back-N on roce-400g, {bytes} B, window W = {w:.2} packets, {hops} links");
    println!(
        "{:>8} {:>6} {:>10} {:>10}",
        "p/link", "seed", "p_h", "goodput"
    );
    let mut pts = Vec::new();
    for &pl in &[0.0005, 0.001, 0.002, 0.005] {
        for seed in 1..=12u64 {
            let mut p = p0.clone();
            p.loss_rate = pl;
            p.seed = seed;
            let r = sim::run(&topo, &p, &dag, &Faults::default(), RunOptions::default()).unwrap();
            let fct = r.messages[0].fct_ps.unwrap() as f64;
            if fct >= p.ack_timeout().ps() as f64 {
                println!("{pl:>8} {seed:>6} (timeout: left out)");
                continue;
            }
            let g = drain_ps / (fct - fixed_ps);
            let ph = loss::path_loss(pl, hops);
            println!("{pl:>8} {seed:>6} {ph:>10.5} {g:>10.4}");
            pts.push((ph, w, g));
        }
    }
    let c = loss::fit_gbn(&pts);
    println!("fitted c_gbn = {c:.3}");
}

fn cases(only: Option<&str>) {
    for c in flow_cases::cases() {
        if only.is_some_and(|o| !c.name.contains(o)) {
            continue;
        }
        let t = Instant::now();
        let p = flow_cases::run(&c, EngineKind::Packet);
        let tp = t.elapsed().as_secs_f64();
        let t = Instant::now();
        let f = flow_cases::run(&c, EngineKind::Flow);
        let tf = t.elapsed().as_secs_f64();
        println!("{}  [{tp:.1} s / {tf:.2} s]", flow_cases::row(&c, &p, &f));
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("loss") => fit_loss(),
        _ => cases(args.get(1).map(String::as_str)),
    }
}
