//! Calibration and cross-validation of the flow engine against the packet engine (issue 7).
//!
//! - `-- loss`: fits the go-back-N constant of `flow::loss` (`FITTED.c_gbn`): single 4 MB
//!   flows across a 128-GPU roce-400g fabric at several per-link loss rates and seeds on the
//!   packet engine; runs that hit a retransmission timeout are left out (the timeout is its own
//!   term of the model); the goodput of each is its wire bytes at line rate over its drain
//!   time, fitted to `(1 - p_h) / (1 + c p_h W)`. Prints the points and the constant.
//! - `-- credits`: a flow across long leaf-spine links (0-10 km) on ib-ndr, packet vs flow,
//!   with the credit cap of `flow::credits` (no constant: the closed form is checked).
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

/// A single 4 MB flow between leaves of a 128-GPU ib-ndr fabric whose leaf-spine links are
/// `km` long (5 ns/m): packet and flow FCT and the `flow::credits` closed form of the cap.
fn credits() {
    println!(
        "{:>6} {:>14} {:>14} {:>8} {:>12}",
        "km", "packet us", "flow us", "err", "cap Gb/s"
    );
    for km in [0.0, 1.0, 2.0, 5.0, 10.0] {
        let (mut topo, p) = flow_cases::fabric(128, "ib-ndr");
        for l in topo.links.iter_mut().filter(|l| l.tier >= 1) {
            l.delay = Time::from_ps(l.delay.ps() + (km * 1000.0 * 5_000.0) as u64);
        }
        let mut dag = MessageDag::default();
        dag.push(HostId(0), HostId(100), 4 << 20, Time::ZERO, &[]);
        let pr = sim::run(&topo, &p, &dag, &Faults::default(), RunOptions::default()).unwrap();
        let fp = fabricsim::engine_choice::flow_params(&topo, &p);
        let (fr, _) = fabricsim::flow::run(&topo, &p, &dag, &fp).unwrap();
        let caps = fabricsim::flow::credits::limit(&topo, &p, paths::capacities(&topo));
        let cap = caps.iter().min().copied().unwrap_or(0);
        let (a, b) = (
            pr.messages[0].fct_ps.unwrap() as f64,
            fr.messages[0].fct_ps.unwrap() as f64,
        );
        println!(
            "{km:>6} {:>14.2} {:>14.2} {:>+7.1}% {:>12.2}",
            a / 1e6,
            b / 1e6,
            100.0 * (b - a) / a,
            cap as f64 / 1e9
        );
    }
}

fn cases(only: Option<&str>) {
    println!("{}", flow_cases::HEADER);
    for c in flow_cases::cases() {
        if only.is_some_and(|o| !c.name.contains(o)) {
            continue;
        }
        let t = Instant::now();
        let p = flow_cases::pooled(&c, EngineKind::Packet);
        let tp = t.elapsed().as_secs_f64();
        let t = Instant::now();
        let f = flow_cases::pooled(&c, EngineKind::Flow);
        let tf = t.elapsed().as_secs_f64();
        let (se_mean, se_last) = p.rel_se();
        println!(
            "{}  [{tp:.1} s / {tf:.2} s; packet s.e. mean {:.1}%, collective {:.1}%]",
            flow_cases::row(&c, &p, &f),
            100.0 * se_mean,
            100.0 * se_last
        );
    }
}

/// Per lossy case, the share of messages that waited for one ACK timeout and for two or more,
/// on each engine over the case's seeds: a message whose FCT exceeds its FCT in the same run
/// without loss by more than half an RTO (1.5 RTO for two) timed out (an RTO is 65.5 us here,
/// longer than any of these messages takes).
fn timeouts(only: Option<&str>) {
    println!(
        "{:<24} {:<10} {:>8} {:>25} {:>25}",
        "case", "fabric", "messages", "1+ timeouts pkt / flow", "2+ timeouts pkt / flow"
    );
    for c in flow_cases::cases().into_iter().filter(|c| c.loss > 0.0) {
        if only.is_some_and(|o| !c.name.contains(o)) {
            continue;
        }
        let rto = Time(4_096_000u64 << c.timeout_exp).ps();
        let mut counts = [[0u64; 2]; 2];
        let mut total = 0;
        // The packet engine's timer firings and resent packets per message.
        let (mut fired, mut resent) = (0u64, 0u64);
        for seed in 1..=c.seeds {
            let clean = flow_cases::Case {
                loss: 0.0,
                ..c.clone()
            };
            for (e, kind) in [EngineKind::Packet, EngineKind::Flow]
                .into_iter()
                .enumerate()
            {
                let base = flow_cases::run(&clean, kind, seed);
                let lossy = flow_cases::run(&c, kind, seed);
                if e == 0 {
                    fired += lossy.counters.timeouts;
                    resent += lossy.counters.retransmitted_packets;
                }
                for (a, b) in base.messages.iter().zip(&lossy.messages) {
                    let extra = b.fct_ps.unwrap_or(0).saturating_sub(a.fct_ps.unwrap_or(0));
                    counts[e][0] += (extra > rto / 2) as u64;
                    counts[e][1] += (extra > 3 * rto / 2) as u64;
                }
                total += (e == 0) as u64 * base.messages.len() as u64;
            }
        }
        let pct = |n: u64| 100.0 * n as f64 / total as f64;
        println!(
            "{:<24} {:<10} {:>8} {:>10.2}% / {:>6.2}% {:>10.3}% / {:>6.3}%  [packet: {:.3} timer firings, {:.2} resent packets per message]",
            c.name,
            c.fabric,
            total,
            pct(counts[0][0]),
            pct(counts[1][0]),
            pct(counts[0][1]),
            pct(counts[1][1]),
            fired as f64 / total as f64,
            resent as f64 / total as f64,
        );
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("loss") => fit_loss(),
        Some("credits") => credits(),
        Some("timeouts") => timeouts(args.get(1).map(String::as_str)),
        _ => cases(args.get(1).map(String::as_str)),
    }
}
