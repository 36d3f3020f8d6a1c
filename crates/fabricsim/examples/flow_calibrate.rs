//! Calibration and cross-validation of the flow engine against the packet engine (issue 7).
//!
//! - `-- loss`: fits the go-back-N constant of `flow::loss` (`FITTED.c_gbn`): single 4 MB
//!   flows across a 128-GPU roce-400g fabric (one switch: 2 links, counted from the route) at
//!   several per-link loss rates and seeds on the packet engine; runs that hit a retransmission timeout are left out (the timeout is its own
//!   term of the model); the goodput of each is its wire bytes at line rate over its drain
//!   time, fitted to `(1 - p_h) / (1 + c p_h W)`. Prints the points, the constant, and the
//!   mean FCT of the same runs on the flow engine with the model's constant (its per-message
//!   draws of NAKed losses, `LossModel::draw_naks`) beside the packet engine's.
//! - `-- credits`: a flow across long leaf-spine links (0-10 km) on ib-ndr, packet vs flow,
//!   with the credit cap of `flow::credits` (no constant: the closed form is checked).
//! - `-- timeouts [name]`: per lossy cross-validation case, the share of messages that waited
//!   for one ACK timeout and for two or more on each engine over the case's seeds, and the
//!   packet engine's timer firings and resent packets (checks `flow::loss`'s timeout draws).
//! - `-- excess [case [seeds]]`: per lossy case and engine, each message's FCT beyond its
//!   lossless FCT (histogram), the messages that waited one and two ACK timeouts per path
//!   length, and the collective time with its standard error (checks `flow::loss`'s second
//!   timeout and go-back-N resends; `excess "all-to-all" 160` for the lossy all-to-all).
//! - `-- incast`: the sharing of a congested egress (DCQCN/ECN fan-in sweep, per-input-port
//!   service, PFC head-of-line blocking); see `flow::rate_model` for the model and the figures.
//! - `-- hol [gpus [senders [victims [KB]]]]`: PFC / credit head-of-line blocking of victim
//!   flows behind an incast (`flow::hol`): victims' FCT by size and the cross-validation case
//!   `incast 32:1 + victims`, with the egresses the packet engine held and for how long.
//! - `-- hol-trace [gpus [senders]]`: where the packet engine's victims into the receiver's
//!   leaf wait in the `hol` case (1,024 GPUs, 99:1 by default): on ib-ndr the spine downlinks
//!   into that leaf that waited for credits, and one victim with the incast alone and beside a
//!   second flow; each fabric without its routing or congestion-control choice (D-mod-K, no
//!   DCQCN); the flow engine beside each.
//! - `-- ports [gpus]`: the cost of per-input-port service at scale (all-to-all and ring,
//!   roce-400g with PFC vs lossy): engine time, solves, flows re-solved, extra fills.
//!   `-- ports xval [case]`: the fills per solve on the cross-validation cases (flow engine)
//!   with their mean FCT, last completion and a digest of every FCT; the case filter matches
//!   "name fabric loss".
//! - `-- rr [gpus [KB]]`: the NIC's per-QP round robin at message end (`flow::nic_rr`): the
//!   all-to-all's mean FCT by post order on the NIC, packet vs flow.
//! - `-- nicshare`: the NIC's per-QP round robin while the switch buffers absorb an incast
//!   (a victim from an incast sender's NIC by size and buffer; `flow::nic_send` models it).
//! - `-- nicsend-trace [gpus [senders [KB per VL [D-mod-K]]]]`: the send stage of an incast
//!   sender's NIC with a victim beside it (`flow::nic_send`), traced on the packet engine: per
//!   interval, the NIC's sending rate, the egress queues along its incast flow's path, and
//!   whether the NIC waited for credits; the victim and that incast flow, packet / flow.
//!   `-- nicsend-trace cases`: per cross-validation case (flow engine, up to 8 seeds), the caps
//!   the send stage set or lifted (0: the case's results are the engine's without it).
//! - `-- cases [name]`: the cross-validation cases of `tests/flow_xval.rs`, packet vs flow,
//!   pooled over each case's seeds (the table of the issue-7 note).
//! - `-- victim-cnp [gpus [senders]]`: where DCQCN cuts the victims into the receiver's leaf
//!   in the roce-400g `hol` case (1,024 GPUs, 99:1 by default; `flow::dcqcn_victim`): per
//!   victim, each egress on its path (the packet engine's ECMP route, as the flow engine places
//!   it) with the incast QPs that share it and when its queue stood above Kmin, the victim's
//!   sending rate over time (its NIC's transmitted bytes, 1 us samples: it sends nothing else),
//!   the CNPs its QP received (its receiver NIC's extra bytes) and its FCT, packet / flow; then
//!   the victim alone with the incast.
//! - `-- roce-nic-trace [gpus [senders]]`: DCQCN and the per-QP round robin of an incast
//!   sender's NIC on roce-400g (`incast 32:1 + victims` at 128 GPUs by default; `1024 99` the
//!   `hol-trace` case): per 1 us, from the packet engine's port samples, each victim from an
//!   incast sender's NIC and that NIC's incast QP, and an incast QP alone on its NIC; the FCTs
//!   packet / flow; the mean-field reaction point's cuts (`flow::dcqcn_incast::Onsets`).
//! - `-- victim-pause [gpus [senders]]`: the PFC pauses of the spine downlinks into the
//!   receiver's leaf in the `victim-cnp` case: per downlink with incast flows, its incast QPs,
//!   victims, pause time, PAUSE frames and XOFFs at the leaf; per 5 us the root egress, the
//!   leaf's buffer and each downlink's queue and sending rate; per 10 us the XOFF threshold
//!   (`flow::pfc_pause::Ingress` on the root's depth) against the ingress count of the
//!   downlinks of 4 or more incast QPs (what they sent, leaving the root one FIFO wait later).
//! - `-- ar-trace [gpus [senders]]` (build with `--features trace`): why each victim of the
//!   ib-ndr `hol-trace` case waits or not under adaptive routing, from the packet engine's
//!   routing choices and credit waits (`sim::trace`): when each spine downlink into the
//!   receiver's leaf was held, through which spines each victim's packets went and how long
//!   they waited there, and what its leaf's AR choice saw (queued bytes and credits per
//!   uplink), under the profile's AR by normalized credits and by least queued bytes.
//!   Findings in `flow::hol`.
//! - `-- dense [gpus [KB [forced [fabric]]]]`: the lossless all-to-all beyond 128 hosts, packet
//!   vs flow (mean, within and across leaves, p99, collective time, seconds), the flow
//!   engine's lossless models as run and
//!   (`forced`) without their limits and off from the start.
//!
//! Run: `cargo run --release -p fabricsim --example flow_calibrate -- loss` (or `-- cases`,
//! ...; the dev profile is optimized too and needs no fat-LTO build).

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
/// without loss by more than half an RTO (1.5 RTO for two) timed out (each case's RTO is above
/// its lossless run's largest FCT, `flow_cases::timeout_exp`).
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

/// One run of `dag` on both engines: (packet, flow).
fn both(
    topo: &fabricsim::topology::Topology,
    p: &sim::SimParams,
    dag: &MessageDag,
) -> (sim::RunResult, sim::RunResult) {
    let pr = sim::run(topo, p, dag, &Faults::default(), RunOptions::default()).unwrap();
    let fp = fabricsim::engine_choice::flow_params(topo, p);
    (pr, fabricsim::flow::run(topo, p, dag, &fp).unwrap().0)
}

/// Last completion and mean FCT (us).
fn last_mean(r: &sim::RunResult) -> (f64, f64) {
    let f: Vec<u64> = r.messages.iter().filter_map(|m| m.fct_ps).collect();
    let last = r
        .messages
        .iter()
        .filter_map(|m| m.finish_ps)
        .max()
        .unwrap_or(0);
    (
        last as f64 / 1e6,
        f.iter().sum::<u64>() as f64 / f.len().max(1) as f64 / 1e6,
    )
}

/// The directed links of the first message of `dag` as both engines route it.
fn route_links(
    topo: &fabricsim::topology::Topology,
    p: &sim::SimParams,
    dag: &MessageDag,
) -> Vec<u32> {
    let router = paths::Router::new(topo, p.routing);
    let (msg_qp, _) = sim::route::number_qps(&dag.messages, 1);
    let mut links = Vec::new();
    message_links(topo, &router, p, &dag.messages[0], msg_qp[0], &mut links);
    links
}

/// The links message `m` on QP `qp` crosses, as the packet engine's ECMP hash places it.
fn message_links(
    topo: &fabricsim::topology::Topology,
    router: &paths::Router,
    p: &sim::SimParams,
    m: &fabricsim::message::Message,
    qp: u32,
    links: &mut Vec<u32>,
) {
    let (h, _) = paths::qp_hashes(p, qp, m.src.0, m.dst.0);
    links.clear();
    let model = fabricsim::flow::PathModel::Hash;
    paths::subflow_links(topo, router, model, m.src.0, m.dst.0, h, 0, |_| 0, links);
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
fn incast() {
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

/// The `flow::mean_field` model of an N:1 incast of `bytes` per sender on `p`'s
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

/// The cost of per-input-port service (`flow::maxmin`) at scale: an all-to-all of 16 KB and
/// a ring all-reduce of 64 KB steps over the servers' first GPUs, on `gpus` GPUs of
/// roce-400g (PFC: ports served per input port at the egresses to NICs) and the same with
/// lossy Ethernet (per flow): engine seconds, solves, flows re-solved and fills beyond the
/// first (rounds of the port levels' fixed point).
fn port_cost(gpus: u32) {
    let (topo, p) = flow_cases::fabric(gpus, "roce-400g");
    let dags = [
        ("all-to-all 16 KB", flow_cases::all_to_all(gpus, 16 << 10)),
        (
            "ring all-reduce 64 KB",
            flow_cases::ring_of_servers(gpus, 64 << 10),
        ),
    ];
    for (name, dag) in &dags {
        for (fc, label) in [
            (p.flow_control, "per port (PFC)"),
            (sim::FlowControl::None, "per flow (lossy)"),
        ] {
            let q = sim::SimParams {
                flow_control: fc,
                ..p.clone()
            };
            let t = Instant::now();
            let (r, st) =
                fabricsim::flow::run(&topo, &q, dag, &fabricsim::flow::FlowParams::default())
                    .expect("valid case");
            let (last, mean) = last_mean(&r);
            println!(
                "{name:<22} {gpus} GPUs {label:<17} {:>7.2} s: {} solves, {} flows re-solved, {} extra fills; last {last:.2} us, mean FCT {mean:.2} us{}",
                t.elapsed().as_secs_f64(),
                st.solve.resolves,
                st.solve.flows_solved,
                st.solve.port_rounds,
                st.lossless_models_end_ps.map_or(String::new(), |t| format!(
                    "; lossless models ended at {:.3} us ({} flows active at once)",
                    t as f64 / 1e6,
                    st.peak_active
                )),
            );
        }
    }
}

/// The solver's work on the cross-validation cases (flow engine, every seed): solves, those
/// that reached a link shared per input port, their fills (1 + the port levels' rounds) and
/// the most of one solve, engine seconds, and a digest of every message's FCT (FNV-1a) to
/// check that a change of the solver leaves the results as they were.
fn port_fills(only: Option<&str>) {
    let mut all = fabricsim::flow::SolveStats::default();
    let mut digest = 0xcbf2_9ce4_8422_2325u64;
    let total = Instant::now();
    for c in flow_cases::cases() {
        if only.is_some_and(|o| !format!("{} {} {:.3}", c.name, c.fabric, c.loss).contains(o)) {
            continue;
        }
        let (topo, mut p) = flow_cases::fabric(c.hosts, c.fabric);
        p.loss_rate = c.loss;
        p.timeout_exp = c.timeout_exp;
        let mut st = fabricsim::flow::SolveStats::default();
        let (mut sum_ps, mut count, mut last_ps) = (0u128, 0u64, 0u64);
        let t = Instant::now();
        for seed in 1..=c.seeds {
            p.seed = seed;
            let fp = fabricsim::engine_choice::flow_params(&topo, &p);
            let (r, fs) = fabricsim::flow::run(&topo, &p, &c.dag, &fp).expect("valid case");
            st.merge(&fs.solve);
            for m in &r.messages {
                sum_ps += u128::from(m.fct_ps.unwrap_or(0));
                count += 1;
                last_ps = last_ps.max(m.finish_ps.unwrap_or(0));
                for b in m.fct_ps.unwrap_or(u64::MAX).to_le_bytes() {
                    digest = (digest ^ b as u64).wrapping_mul(0x100_0000_01b3);
                }
            }
        }
        println!(
            "{:<26} {:<9} loss {:<5} x{:<3} {:>7.2} s: {:>7} solves, {:>6} per port, {:.2} fills each, at most {}; mean FCT {:.4} us, last {:.4} us",
            c.name,
            c.fabric,
            c.loss,
            c.seeds,
            t.elapsed().as_secs_f64(),
            st.resolves,
            st.port_solves,
            (st.port_solves + st.port_rounds) as f64 / st.port_solves.max(1) as f64,
            st.max_fills,
            sum_ps as f64 / count.max(1) as f64 / 1e6,
            last_ps as f64 / 1e6
        );
        all.merge(&st);
    }
    println!(
        "all {:.2} s: {} solves, {} per port, {:.2} fills each, at most {}; FCT digest {digest:016x}",
        total.elapsed().as_secs_f64(),
        all.resolves,
        all.port_solves,
        (all.port_solves + all.port_rounds) as f64 / all.port_solves.max(1) as f64,
        all.max_fills
    );
}

/// Per lossy case and engine, the distribution of each message's FCT beyond its FCT in the same
/// seed's lossless run (us bins), the messages that waited one ACK timeout or more and two or
/// more, per path length, and each run's last completion: where the lossy collective time (the
/// maximum of a run) comes from. `excess [case [seeds]]`; the case filter matches "name fabric".
fn excess(only: Option<&str>, seeds: Option<u64>) {
    const BINS: [f64; 16] = [
        0.5, 2.0, 5.0, 10.0, 20.0, 40.0, 60.0, 80.0, 90.0, 100.0, 110.0, 120.0, 130.0, 140.0,
        150.0, 200.0,
    ];
    for c in flow_cases::cases().into_iter().filter(|c| c.loss > 0.0) {
        if only.is_some_and(|o| !format!("{} {}", c.name, c.fabric).contains(o)) {
            continue;
        }
        println!(
            "{} on {} (RTO {:.1} us), excess bins (us) <{:?}..:",
            c.name,
            c.fabric,
            Time(4_096_000u64 << c.timeout_exp).ps() as f64 / 1e6,
            BINS
        );
        let c = flow_cases::Case {
            seeds: seeds.unwrap_or(c.seeds),
            ..c
        };
        let clean = flow_cases::Case {
            loss: 0.0,
            ..c.clone()
        };
        let (topo, p) = flow_cases::fabric(c.hosts, c.fabric);
        let router = paths::Router::new(&topo, p.routing);
        let mut links = Vec::new();
        let hops: Vec<usize> = c
            .dag
            .messages
            .iter()
            .map(|m| {
                message_links(&topo, &router, &p, m, 0, &mut links);
                links.len()
            })
            .collect();
        let rto = Time(4_096_000u64 << c.timeout_exp).ps() as f64 / 1e6;
        for kind in [EngineKind::Packet, EngineKind::Flow] {
            // Per hop count: messages, those with one timeout or more, with two or more.
            let mut by_hops = std::collections::BTreeMap::<usize, [u64; 3]>::new();
            // Excess (us) summed over the messages that waited one timeout and over those that
            // waited two or more.
            let mut excess_sum = [0.0f64; 2];
            let mut lasts = Vec::new();
            let mut hist = [0u64; BINS.len() + 1];
            let mut tops = Vec::new();
            for seed in 1..=c.seeds {
                let base = flow_cases::run(&clean, kind, seed);
                let lossy = flow_cases::run(&c, kind, seed);
                let mut top = (0.0f64, 0u32);
                for (a, b) in base.messages.iter().zip(&lossy.messages) {
                    let x = (b.fct_ps.unwrap_or(0) as f64 - a.fct_ps.unwrap_or(0) as f64) / 1e6;
                    hist[BINS.iter().take_while(|&&e| x >= e).count()] += 1;
                    let h = by_hops.entry(hops[b.id as usize]).or_default();
                    h[0] += 1;
                    h[1] += (x > rto / 3.0) as u64;
                    h[2] += (x > 1.4 * rto) as u64;
                    if x > rto / 3.0 {
                        excess_sum[(x > 1.4 * rto) as usize] += x;
                    }
                    if x > top.0 {
                        top = (x, b.id);
                    }
                }
                let (last, _) = last_mean(&lossy);
                let (base_last, _) = last_mean(&base);
                lasts.push(last);
                tops.push(format!(
                    "{:.1}/{:.1} (msg {} +{:.1})",
                    base_last, last, top.1, top.0
                ));
            }
            let n = lasts.len() as f64;
            let mean = lasts.iter().sum::<f64>() / n;
            let sd = (lasts.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0)).sqrt();
            println!(
                "  {:<7} {:?}; collective {mean:.2} us, s.e. {:.2} us over {n} runs",
                kind.name(),
                hist,
                sd / n.sqrt()
            );
            let (ones, twos) = by_hops
                .values()
                .fold((0, 0), |(a, b), h| (a + h[1], b + h[2]));
            println!(
                "          mean excess: {:.2} us over one timeout, {:.2} us over two or more",
                excess_sum[0] / (ones - twos).max(1) as f64,
                excess_sum[1] / twos.max(1) as f64
            );
            for (h, [n, one, two]) in &by_hops {
                println!(
                    "          {h} links: {n} messages, {one} timed out ({:.3}%), {two} twice ({:.3}% of those)",
                    100.0 * *one as f64 / *n as f64,
                    100.0 * *two as f64 / (*one).max(1) as f64
                );
            }
            if tops.len() <= 8 {
                println!("          runs clean/lossy last us: {}", tops.join(", "));
            }
        }
    }
}

/// Where a run's lossless back-pressure held egresses: per kind of egress (NIC, leaf up, leaf
/// down, spine down), the ports that were paused or waited for credits, and their summed and
/// largest hold time (us).
fn holds(topo: &fabricsim::topology::Topology, r: &sim::RunResult) -> String {
    let Some(fc) = &r.flow_control else {
        return "no flow control".into();
    };
    let mut by: std::collections::BTreeMap<&str, (u32, u64, u64)> = Default::default();
    for pf in &fc.ports {
        let held = pf.paused_ps + pf.credit_stall_ps;
        if held == 0 {
            continue;
        }
        let node = &topo.nodes[pf.node as usize];
        let kind = match (node.tier(), node.up_ports().contains(&pf.port)) {
            (0, _) => "nic",
            (1, true) => "leaf up",
            (1, false) => "leaf down",
            _ => "spine down",
        };
        let e = by.entry(kind).or_default();
        e.0 += 1;
        e.1 += held;
        e.2 = e.2.max(held);
    }
    let parts: Vec<String> = by
        .iter()
        .map(|(k, (n, sum, max))| {
            format!(
                "{k}: {n} ports, {:.1} us summed, {:.1} max",
                *sum as f64 / 1e6,
                *max as f64 / 1e6
            )
        })
        .collect();
    format!(
        "pauses {}, credit stalls {} [{}]",
        r.counters.pause_frames,
        fc.credit_stalls,
        parts.join("; ")
    )
}

/// PFC / credit head-of-line blocking of victim flows under an incast (`flow::hol`), per
/// fabric, packet / flow:
/// 1. the victims' FCT by size: `flow_cases::incast_victims` with one victim into the
///    receiver's leaf and one from an incast sender's NIC, 32 KB to 8 MB;
/// 2. the case of `tests/flow_xval.rs` (`victims` victims of `victim_bytes`): each victim
///    alone and with the incast, the means of both kinds of victim, the incast's mean and
///    last, and which egresses the packet engine held (PFC pauses, credit stalls) and how long;
/// 3. the hotspot-and-victim pattern of Gran et al. (IPDPS 2010) on two leaves.
///
/// `hol [gpus [senders [victims [victim KB]]]]` (128 32 8 1024: the asserted case).
fn hol(gpus: u32, senders: u32, victims: u32, victim_bytes: u64) {
    let bytes = 1 << 20;
    let n = senders as usize;
    let us = |r: &sim::RunResult, i: usize| r.messages[i].fct_ps.unwrap() as f64 / 1e6;
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len().max(1) as f64;
    for fabric in ["ib-ndr", "roce-400g"] {
        let (topo, p) = flow_cases::fabric(gpus, fabric);
        println!(
            "{fabric}, {gpus} GPUs, {senders}:1 incast of 1 MB: FCT us, packet / flow\n1. one victim of each kind by size"
        );
        for kb in [32u64, 64, 128, 256, 512, 1024, 2048, 4096, 8192] {
            let dag = flow_cases::incast_victims(gpus, senders, bytes, 2, kb << 10);
            let (pr, fr) = both(&topo, &p, &dag);
            println!(
                "  {kb:>6} KB: into the leaf {:>8.2} / {:>8.2}, from a sender's NIC {:>8.2} / {:>8.2}",
                us(&pr, n),
                us(&fr, n),
                us(&pr, n + 1),
                us(&fr, n + 1),
            );
        }
        let dag = flow_cases::incast_victims(gpus, senders, bytes, victims, victim_bytes);
        let mut alone = MessageDag::default();
        for m in &dag.messages[n..] {
            alone.push(m.src, m.dst, m.bytes, m.start, &[]);
        }
        println!(
            "2. {victims} victims of {} KB (into the leaf: even, from a sender's NIC: odd)",
            victim_bytes >> 10
        );
        let (pa, fa) = both(&topo, &p, &alone);
        let (pb, fb) = both(&topo, &p, &dag);
        let mut kinds = [[Vec::new(), Vec::new()], [Vec::new(), Vec::new()]];
        for k in 0..victims as usize {
            let m = &dag.messages[n + k];
            println!(
                "  victim {k} {:>4} -> {:<4}: alone {:>8.2} / {:>8.2}, with the incast {:>8.2} / {:>8.2}",
                m.src.0,
                m.dst.0,
                us(&pa, k),
                us(&fa, k),
                us(&pb, n + k),
                us(&fb, n + k)
            );
            kinds[k % 2][0].push(us(&pb, n + k));
            kinds[k % 2][1].push(us(&fb, n + k));
        }
        for (kind, [pk, fk]) in ["into the leaf", "from a sender's NIC"].iter().zip(&kinds) {
            let (a, b) = (mean(pk), mean(fk));
            println!(
                "  victims {kind}: mean {a:.2} / {b:.2} ({:+.1}%)",
                100.0 * (b - a) / a
            );
        }
        let incast = |r: &sim::RunResult| {
            let f: Vec<f64> = (0..n).map(|i| us(r, i)).collect();
            (mean(&f), f.iter().cloned().fold(0.0, f64::max))
        };
        let ((pm, pl), (fm, fl)) = (incast(&pb), incast(&fb));
        println!("  incast mean {pm:.2} / {fm:.2}, last {pl:.2} / {fl:.2}");
        println!("  packet, held egresses: {}", holds(&topo, &pb));
        println!("  packet, victims alone: {}", holds(&topo, &pa));
    }
    hotspot_victim();
}

/// The `hol` case's first victim (message `n` of `dag`) with the incast alone, beside a 1 MB
/// flow from an incast sender's NIC, and beside a second 1 MB flow from its own NIC (both to
/// host `gpus / 2 - 1`): (name, DAG).
fn victim_variants(dag: &MessageDag, n: usize, gpus: u32) -> Vec<(&'static str, MessageDag)> {
    let v = &dag.messages[n];
    let sender = dag.messages[n - 1].src.0;
    let far = gpus / 2 - 1;
    [
        ("alone", None),
        ("beside a flow from an incast sender's NIC", Some(sender)),
        ("beside a second flow from its own NIC", Some(v.src.0)),
    ]
    .into_iter()
    .map(|(name, other)| {
        let mut d = MessageDag::default();
        for m in &dag.messages[..n] {
            d.push(m.src, m.dst, m.bytes, m.start, &[]);
        }
        d.push(v.src, v.dst, v.bytes, v.start, &[]);
        if let Some(s) = other {
            d.push(HostId(s), HostId(far), 1 << 20, Time::ZERO, &[]);
        }
        (name, d)
    })
    .collect()
}

/// Where the victims into the receiver's leaf wait (`hol-trace`): per fabric, the `hol` case's
/// victims (packet / flow) with the profile as it is and without its routing (D-mod-K instead
/// of adaptive) or congestion-control (DCQCN) choice; on the profile, the victim `k + 1 -> 1`
/// (`k` = the last host) with the incast alone, beside a flow from an incast sender's NIC, and
/// beside a second flow from its own NIC, with the spine downlinks into the receiver's leaf
/// that waited for credits or were paused and for how long.
fn hol_trace(gpus: u32, senders: u32) {
    let n = senders as usize;
    let us = |r: &sim::RunResult, i: usize| r.messages[i].fct_ps.unwrap() as f64 / 1e6;
    let mb = 1u64 << 20;
    for fabric in ["ib-ndr", "roce-400g"] {
        let (topo, p) = flow_cases::fabric(gpus, fabric);
        let dag = flow_cases::incast_victims(gpus, senders, mb, 8, mb);
        let mut plain = p.clone();
        let change = if p.routing == sim::RoutePolicy::Adaptive {
            plain.routing = sim::RoutePolicy::DModK;
            "D-mod-K routing"
        } else {
            plain.cc.algo = fabricsim::sim::congestion::CcAlgo::None;
            "no DCQCN"
        };
        println!(
            "{fabric}, {gpus} GPUs, {senders}:1 incast of 1 MB + 8 victims of 1 MB, packet / flow us"
        );
        for (name, q) in [("profile", &p), (change, &plain)] {
            let (pr, fr) = both(&topo, q, &dag);
            let v: Vec<String> = (n..n + 8)
                .map(|i| format!("{:.1} / {:.1}", us(&pr, i), us(&fr, i)))
                .collect();
            println!("  {name}: victims {}", v.join(", "));
        }
        // Victim 0 of the case with the incast alone and beside a second flow.
        let v = &dag.messages[n];
        let (src, dst) = (v.src.0, v.dst.0);
        for (name, d) in victim_variants(&dag, n, gpus) {
            let (pr, fr) = both(&topo, &p, &d);
            let held: Vec<String> = pr
                .flow_control
                .iter()
                .flat_map(|fc| &fc.ports)
                .filter(|pf| {
                    let node = &topo.nodes[pf.node as usize];
                    node.tier() == 2 && pf.paused_ps + pf.credit_stall_ps > 0
                })
                .map(|pf| {
                    let l = paths::directed_link(&topo, fabricsim::topology::PortId(pf.port));
                    format!(
                        "{l}: {:.0}",
                        (pf.paused_ps + pf.credit_stall_ps) as f64 / 1e6
                    )
                })
                .collect();
            println!(
                "  {src} -> {dst} {name}: {:.1} / {:.1}; held spine egresses (directed link: us) {}",
                us(&pr, n),
                us(&fr, n),
                held.join(", ")
            );
        }
    }
}

/// The hotspot-and-victim pattern of congestion spreading (Gran et al., IPDPS 2010;
/// `sim::lossless_scenarios::hotspot_victim`): two leaves of 8 hosts under one spine, 400G,
/// 3 remote and 6 local senders of 2 MB into one host, the victim across the spine to another
/// host of that leaf; IB credits (`SimParams::ib`), packet / flow.
fn hotspot_victim() {
    use fabricsim::sim::lossless_scenarios as ls;
    let mut p = sim::SimParams::ib();
    p.flow_control = sim::FlowControl::Credits(sim::CreditParams::default_ib());
    let topo = ls::two_leaves(8, fabricsim::units::BitRate::gbps(400), Time::from_ns(100));
    let (dag, v) = ls::hotspot_victim(8, 3, 2_000_000);
    let (pr, fr) = both(&topo, &p, &dag);
    let mut alone = MessageDag::default();
    let m = &dag.messages[v as usize];
    alone.push(m.src, m.dst, m.bytes, m.start, &[]);
    let (pa, fa) = both(&topo, &p, &alone);
    let us = |r: &sim::RunResult, i: usize| r.messages[i].fct_ps.unwrap() as f64 / 1e6;
    let last = |r: &sim::RunResult| last_mean(r).0;
    println!(
        "3. hotspot and victim (Gran et al. 2010), 2 leaves x 8 hosts, 9 senders + 1 victim of 2 MB, IB credits: victim alone {:.2} / {:.2}, with the hotspot {:.2} / {:.2} us; hotspot last {:.2} / {:.2} us",
        us(&pa, 0),
        us(&fa, 0),
        us(&pr, v as usize),
        us(&fr, v as usize),
        last(&pr),
        last(&fr)
    );
    println!("  packet, held egresses: {}", holds(&topo, &pr));
}

/// The NIC's per-QP round robin at message end (`flow::nic_rr`): the all-to-all of `kb` KB
/// among `gpus` GPUs (every host posts its messages to hosts `s + 1, s + 2, ...` in that order),
/// per fabric: the mean FCT by a message's post order on its NIC (k-th posted), packet / flow,
/// the mean over all messages and the collective time. `rr [gpus [KB]]` (128 16: the case of
/// `tests/flow_xval.rs`).
fn round_robin(gpus: u32, kb: u64) {
    let dag = flow_cases::all_to_all(gpus, kb << 10);
    let per = (gpus - 1) as usize;
    for fabric in ["ib-ndr", "roce-400g"] {
        let (topo, p) = flow_cases::fabric(gpus, fabric);
        let (pr, fr) = both(&topo, &p, &dag);
        // Mean FCT (us) of the k-th posted message of every host.
        let by_k = |r: &sim::RunResult| -> Vec<f64> {
            (0..per)
                .map(|k| {
                    let sum: u64 = (0..gpus as usize)
                        .map(|s| r.messages[s * per + k].fct_ps.unwrap())
                        .sum();
                    sum as f64 / gpus as f64 / 1e6
                })
                .collect()
        };
        let (pk, fk) = (by_k(&pr), by_k(&fr));
        println!(
            "{fabric}, {gpus} GPUs, all-to-all of {kb} KB: mean FCT us by post order k, packet / flow"
        );
        let picks = [1, 2, 3, 4, 8, 16, 32, 64, 96, per / 2, per - 1, per];
        let mut ks: Vec<usize> = picks.into_iter().filter(|&k| k >= 1 && k <= per).collect();
        ks.sort_unstable();
        ks.dedup();
        for k in ks {
            println!("  k = {k:>4}: {:>8.2} / {:>8.2}", pk[k - 1], fk[k - 1]);
        }
        let ((pl, pm), (fl, fm)) = (last_mean(&pr), last_mean(&fr));
        println!(
            "  mean {pm:.2} / {fm:.2} ({:+.1}%), collective {pl:.2} / {fl:.2} ({:+.1}%)",
            100.0 * (fm - pm) / pm,
            100.0 * (fl - pl) / pl
        );
    }
}

/// The NIC's per-QP round robin while the switch buffers absorb an incast (not modeled): a
/// 32:1 incast of 1 MB per sender on 128 GPUs plus a victim of `KB` from an incast sender's NIC
/// (`flow_cases::incast_victims`' victim 1), per fabric and switch buffer (ib-ndr: the per-VL
/// input buffer; roce-400g: the shared buffer): the victim's FCT packet / flow, alone, the FCT at
/// half the NIC's line (the round robin's share beside the incast flow), the incast flow of the
/// same NIC, and how long the packet engine held that NIC's egress (credit stalls or PFC pauses).
fn nic_share() {
    let n = 32;
    for fabric in ["ib-ndr", "roce-400g"] {
        let (topo, p0) = flow_cases::fabric(128, fabric);
        let buffers: Vec<(String, sim::SimParams)> = match p0.flow_control {
            sim::FlowControl::Credits(c) => [64u64, 256, 1024]
                .iter()
                .map(|&kb| {
                    let mut p = p0.clone();
                    let mut c = c.clone();
                    c.switch_vl_buffer_bytes = kb << 10;
                    p.flow_control = sim::FlowControl::Credits(c);
                    (format!("{kb} KB per VL"), p)
                })
                .collect(),
            _ => [16u64, 32, p0.switch_buffer_bytes >> 20]
                .iter()
                .map(|&mb| {
                    let mut p = p0.clone();
                    p.switch_buffer_bytes = mb << 20;
                    (format!("{mb} MB shared"), p)
                })
                .collect(),
        };
        for (what, p) in &buffers {
            println!("{fabric}, buffer {what}: victim from an incast sender's NIC, FCT us");
            for kb in [64u64, 256, 1024, 4096] {
                let dag = flow_cases::incast_victims(128, n, 1 << 20, 2, kb << 10);
                let v = &dag.messages[n as usize + 1];
                let mut alone = MessageDag::default();
                alone.push(v.src, v.dst, v.bytes, v.start, &[]);
                let (pr, fr) = both(&topo, p, &dag);
                let (pa, _) = both(&topo, p, &alone);
                let fct = |r: &sim::RunResult, i: usize| r.messages[i].fct_ps.unwrap() as f64 / 1e6;
                let sibling = (0..n as usize)
                    .find(|&i| dag.messages[i].src == v.src)
                    .expect("an incast sender");
                // The round robin's share: the victim's wire bytes at half the line, plus the
                // rest of its lone FCT.
                let wire = paths::wire_bytes(p, v.bytes) as f64 * 8.0 / 400e9 * 1e6;
                let held = pr.flow_control.as_ref().map_or(0, |fc| {
                    fc.ports
                        .iter()
                        .filter(|pf| pf.node == topo.nics[v.src.idx()].0)
                        .map(|pf| pf.paused_ps + pf.credit_stall_ps)
                        .sum::<u64>()
                });
                println!(
                    "  {kb:>5} KB: packet {:>8.2}, flow {:>8.2}, alone {:>7.2}, at half the line {:>8.2}; its NIC's incast flow {:>8.2} / {:>8.2}; NIC held {:>7.2}",
                    fct(&pr, n as usize + 1),
                    fct(&fr, n as usize + 1),
                    fct(&pa, 0),
                    fct(&pa, 0) + wire,
                    fct(&pr, sibling),
                    fct(&fr, sibling),
                    held as f64 / 1e6,
                );
            }
        }
    }
}

/// Where DCQCN cuts the victims into the receiver's leaf (`victim-cnp`): the roce-400g `hol`
/// case with 1 us port samples; per victim (even `k`), each egress on its path with the incast
/// QPs sharing it and when its queue stood above Kmin (the RED rule marks a packet leaving a
/// queue above Kmin, `sim::ecn`), the victim's rate per 10 us from its NIC's transmitted bytes,
/// and its FCT packet / flow.
fn victim_cnp(gpus: u32, senders: u32) {
    let (topo, mut p) = flow_cases::fabric(gpus, "roce-400g");
    let Some(sim::ecn::EcnMarking::Red { kmin_bytes, .. }) = p.cc.ecn else {
        println!("roce-400g without RED marking");
        return;
    };
    let n = senders as usize;
    let mb = 1u64 << 20;
    let iv = Time::from_us(1);
    p.sample_interval = Some(iv);
    let dag = flow_cases::incast_victims(gpus, senders, mb, 8, mb);
    let mut port_of = vec![0u32; 2 * topo.links.len()];
    for i in 0..topo.ports.len() {
        port_of[paths::directed_link(&topo, fabricsim::topology::PortId(i as u32)) as usize] =
            i as u32;
    }
    let all_links: Vec<Vec<u32>> = (0..dag.messages.len())
        .map(|m| flow_cases::qp_links(&topo, &p, &dag, m))
        .collect();
    let incast_links = &all_links[..n];
    let (pr, fr) = both(&topo, &p, &dag);
    let series = pr.series.as_ref().expect("sampled");
    let us = |r: &sim::RunResult, i: usize| r.messages[i].fct_ps.unwrap() as f64 / 1e6;
    println!(
        "roce-400g, {gpus} GPUs, {senders}:1 x 1 MB incast + 8 victims of 1 MB; Kmin {} KB; 1 us samples",
        kmin_bytes >> 10
    );
    let kind = |l: u32| {
        let port = &topo.ports[port_of[l as usize] as usize];
        match (topo.nodes[port.node.idx()].tier(), l % 2 == 0) {
            (0, _) => "nic",
            (1, true) => "leaf up",
            (1, false) => "leaf down",
            _ => "spine down",
        }
    };
    // The CNPs a victim's QP received: what its receiver's NIC sent beyond what it sends with
    // the incast alone and with the victim alone (its ACKs: one per packet, `ack_every` 1,
    // the same in every run of a lossless fabric), in CNP frames (`sim::engine::cc`).
    let sent_by = |r: &sim::RunResult, h: HostId| -> u64 {
        let s = r.series.as_ref().expect("sampled");
        s.ports[topo.host_port(h).idx()].tx_bytes.iter().sum()
    };
    let run =
        |d: &MessageDag| sim::run(&topo, &p, d, &Faults::default(), RunOptions::default()).unwrap();
    let mut incast = MessageDag::default();
    for m in &dag.messages[..n] {
        incast.push(m.src, m.dst, m.bytes, m.start, &[]);
    }
    let incast_alone = run(&incast);
    let cnp_frame = ((p.header_bytes + 16).max(p.min_frame_bytes) + p.wire_overhead_bytes) as f64;
    for k in (0..8).step_by(2) {
        let m = n + k;
        let v = &dag.messages[m];
        let mut one = MessageDag::default();
        one.push(v.src, v.dst, v.bytes, v.start, &[]);
        let extra = sent_by(&pr, v.dst) as f64
            - sent_by(&incast_alone, v.dst) as f64
            - sent_by(&run(&one), v.dst) as f64;
        println!(
            "victim {k} {} -> {}: FCT {:.1} / {:.1} us; CNPs received {:.1}",
            v.src.0,
            v.dst.0,
            us(&pr, m),
            us(&fr, m),
            extra / cnp_frame
        );
        for &l in &flow_cases::qp_links(&topo, &p, &dag, m) {
            let sharing = incast_links.iter().filter(|r| r.contains(&l)).count();
            let others: Vec<String> = (n..dag.messages.len())
                .filter(|&o| o != m && all_links[o].contains(&l))
                .map(|o| (o - n).to_string())
                .collect();
            let q = &series.ports[port_of[l as usize] as usize].queue_bytes;
            let above: Vec<usize> = (0..q.len()).filter(|&i| q[i] > kmin_bytes).collect();
            let peak = q.iter().max().copied().unwrap_or(0);
            let span = match (above.first(), above.last()) {
                (Some(a), Some(b)) => format!("above Kmin {} us of {a}..{b} us", above.len()),
                _ => "never above Kmin".into(),
            };
            println!(
                "  {:<10} link {l:>5}: {sharing:>2} incast QPs, victims [{}], peak {:>6} KB, {span}",
                kind(l),
                others.join(" "),
                peak >> 10
            );
        }
        // Its NIC sends only the victim's data (its ACKs go out of the receiver's NIC).
        let tx = &series.ports[topo.host_port(v.src).idx()].tx_bytes;
        let end = (us(&pr, m) / 10.0).ceil() as usize;
        let rates: Vec<String> = (0..end)
            .map(|b| {
                let bytes: u64 = tx.iter().skip(10 * b).take(10).sum();
                format!("{:.0}", bytes as f64 * 8.0 / 10e-6 / 1e9)
            })
            .collect();
        println!("  rate per 10 us (Gb/s): {}", rates.join(" "));
    }
    let mut alone = MessageDag::default();
    for m in &dag.messages[..=n] {
        alone.push(m.src, m.dst, m.bytes, m.start, &[]);
    }
    let (pa, fa) = both(&topo, &p, &alone);
    println!(
        "victim 0 alone with the incast: {:.1} / {:.1} us",
        us(&pa, n),
        us(&fa, n)
    );
}

/// Why the victim behind a PFC-paused spine downlink is cut longer (`victim-pause`): the
/// roce-400g `hol` case (1,024 GPUs, 99:1) with 1 us port samples; the receiver's leaf, its
/// buffer and PFC thresholds, then per 5 us: the leaf's egress to the receiver and its whole
/// buffer, and for each spine downlink into the leaf that carries incast flows (its incast QPs
/// and victims), its queue and what it sent (a downlink with a queue that sends below its line
/// was paused for the rest of the interval).
fn victim_pause(gpus: u32, senders: u32) {
    let (topo, mut p) = flow_cases::fabric(gpus, "roce-400g");
    let sim::FlowControl::Pfc(pfc) = p.flow_control else {
        println!("roce-400g without PFC");
        return;
    };
    let n = senders as usize;
    let step = 5usize;
    p.sample_interval = Some(Time::from_us(1));
    let dag = flow_cases::incast_victims(gpus, senders, 1 << 20, 8, 1 << 20);
    let links: Vec<Vec<u32>> = (0..dag.messages.len())
        .map(|m| flow_cases::qp_links(&topo, &p, &dag, m))
        .collect();
    let (pr, fr) = both(&topo, &p, &dag);
    let series = pr.series.as_ref().expect("sampled");
    let root = topo.ports[topo.host_port(HostId(0)).idx()].peer;
    let leaf = &topo.nodes[topo.ports[root.idx()].node.idx()];
    let dl = |port: u32| paths::directed_link(&topo, fabricsim::topology::PortId(port));
    println!(
        "roce-400g, {gpus} GPUs, {senders}:1: buffer {} KB, PFC {:?}, XON offset {} B; leaf {} ports ({} up); Kmin {:?}",
        p.switch_buffer_bytes >> 10,
        pfc.xoff,
        pfc.xon_offset_bytes,
        leaf.num_ports,
        leaf.first_port + leaf.num_ports - leaf.first_up,
        p.cc.ecn
    );
    // The spine downlinks into the leaf that carry incast flows: (spine port, incast, victims).
    let mut downs = Vec::new();
    for u in leaf.first_up..leaf.first_port + leaf.num_ports {
        let s = topo.ports[u as usize].peer.0;
        let l = dl(s);
        let inc = links[..n].iter().filter(|r| r.contains(&l)).count();
        let vic: Vec<String> = (n..dag.messages.len())
            .filter(|&o| links[o].contains(&l))
            .map(|o| (o - n).to_string())
            .collect();
        if inc > 0 {
            let paused_us = (series.ports[s as usize].queue_bytes.iter())
                .zip(&series.ports[s as usize].tx_bytes)
                .filter(|&(&q, &tx)| q > 0 && tx == 0)
                .count();
            let fc = |port: u32| {
                let f = pr.flow_control.as_ref().expect("pfc");
                f.ports.iter().find(|x| x.port == port).cloned()
            };
            let (paused, frames) = fc(s).map_or((0, 0), |x| (x.paused_ps, x.pause_frames_received));
            let xoffs = fc(u).map_or(0, |x| x.xoff_events);
            println!(
                "  downlink port {s} (link {l}): {inc} incast QPs, victims [{}]; {paused_us} us with a queue and nothing sent; paused {:.1} us, {frames} PAUSE frames, {xoffs} XOFF at the leaf",
                vic.join(" "),
                paused as f64 / 1e6
            );
            downs.push(s as usize);
        }
    }
    let us = |i: usize| pr.messages[i].fct_ps.unwrap() as f64 / 1e6;
    let fus = |i: usize| fr.messages[i].fct_ps.unwrap() as f64 / 1e6;
    let v: Vec<String> = (n..dag.messages.len())
        .step_by(2)
        .map(|m| format!("{} {:.1}/{:.1}", m - n, us(m), fus(m)))
        .collect();
    println!("  victims packet/flow us: {}", v.join(", "));
    // The leaf's ingress from each downlink of 4 or more incast QPs, as `flow::pfc_pause`
    // counts it on the packet engine's samples: what the downlink sent, leaving the root
    // egress one FIFO wait (its depth then over its rate) later; against the XOFF threshold on
    // the root's depth (the leaf's buffer use).
    let node = topo.ports[root.idx()].node;
    let ing = fabricsim::flow::pfc_pause::Ingress::of(&topo, &p, node).expect("a PFC switch");
    let c = topo.links[topo.ports[root.idx()].link.idx()].rate.bps() as f64 / 8e6;
    let heavy: Vec<usize> = downs
        .iter()
        .copied()
        .filter(|&s| {
            links[..n]
                .iter()
                .filter(|r| r.contains(&dl(s as u32)))
                .count()
                >= 4
        })
        .collect();
    println!(
        "  leaf shared pool {} KB; per 10 us: threshold KB | ingress KB per heavy downlink {heavy:?}",
        ing.shared_bytes >> 10
    );
    let root_q = &series.ports[root.idx()].queue_bytes;
    let held: Vec<Vec<f64>> = heavy
        .iter()
        .map(|&s| {
            let tx = &series.ports[s].tx_bytes;
            let mut h = vec![0.0; tx.len()];
            for (i, &b) in tx.iter().enumerate() {
                let leave = i + 1 + (root_q[i] as f64 / c).ceil() as usize;
                for x in h.iter_mut().take(leave.min(tx.len())).skip(i) {
                    *x += b as f64;
                }
            }
            h
        })
        .collect();
    for b in (0..root_q.len()).step_by(10) {
        let thr = ing.threshold(root_q[b] as f64);
        let h: Vec<String> = held
            .iter()
            .map(|h| format!("{:>6.0}", h[b] / 1024.0))
            .collect();
        println!("  {:>4} us: {:>6.0} | {}", b + 1, thr / 1024.0, h.join(" "));
        if b > 600 {
            break;
        }
    }
    println!("  t us | root q KB | leaf KB | per downlink: q KB / Gb/s sent");
    let rows = series.ports[root.idx()].queue_bytes.len();
    for b in (0..rows).step_by(step) {
        let at = |port: usize| series.ports[port].queue_bytes[(b + step - 1).min(rows - 1)];
        let sent = |port: usize| -> f64 {
            let tx = &series.ports[port].tx_bytes;
            tx.iter().skip(b).take(step).sum::<u64>() as f64 * 8.0 / (step as f64 * 1e3)
        };
        let leaf_kb: u64 = leaf.ports().map(|q| at(q as usize)).sum::<u64>() >> 10;
        let d: Vec<String> = downs
            .iter()
            .map(|&s| format!("{:>5}/{:>3.0}", at(s) >> 10, sent(s)))
            .collect();
        println!(
            "  {:>4} | {:>6} | {:>6} | {}",
            b + step,
            at(root.idx()) >> 10,
            leaf_kb,
            d.join(" ")
        );
        if b > 900 {
            break;
        }
    }
}

/// `nicsend-trace`: an incast of `senders` x 1 MB to host 0 on `gpus` GPUs (ib-ndr, `kb` KB per
/// VL in the switches) plus `flow_cases::incast_victims`' victim 1 (1 MB from an incast sender's
/// NIC), traced every 5 us on the packet engine: the NIC's sending rate, the queues of the
/// egresses its incast flow crosses after the NIC (sender leaf up, spine down, the root into
/// host 0), and the NIC's credit stall so far; then the FCTs, packet / flow.
fn nic_send_trace(gpus: u32, senders: u32, kb: u64, dmodk: bool) {
    let (topo, mut p) = flow_cases::fabric(gpus, "ib-ndr");
    if let sim::FlowControl::Credits(c) = &mut p.flow_control {
        c.switch_vl_buffer_bytes = kb << 10;
    }
    if dmodk {
        p.routing = sim::RoutePolicy::DModK;
    }
    let step = Time::from_ns(5_000);
    p.sample_interval = Some(step);
    let n = senders as usize;
    let dag = flow_cases::incast_victims(gpus, senders, 1 << 20, 2, 1 << 20);
    let v = n + 1;
    let src = dag.messages[v].src;
    let sib = (0..n)
        .find(|&i| dag.messages[i].src == src)
        .expect("an incast sender");
    let router = paths::Router::new(&topo, p.routing);
    let (msg_qp, _) = sim::route::number_qps(&dag.messages, 1);
    let mut links = Vec::new();
    message_links(
        &topo,
        &router,
        &p,
        &dag.messages[sib],
        msg_qp[sib],
        &mut links,
    );
    let (pr, fr) = both(&topo, &p, &dag);
    let series = pr.series.as_ref().expect("sampled");
    let of = |l: u32| {
        series
            .ports
            .iter()
            .find(|s| paths::directed_link(&topo, fabricsim::topology::PortId(s.port)) == l)
    };
    let us = |r: &sim::RunResult, i: usize| r.messages[i].fct_ps.unwrap() as f64 / 1e6;
    println!(
        "ib-ndr{}, {gpus} GPUs, {senders}:1 x 1 MB, {kb} KB per VL: victim {} -> {} beside incast flow {sib} (links {links:?}); victim {:.1} / {:.1} us, incast flow {:.1} / {:.1} us",
        if dmodk { " D-mod-K" } else { "" },
        src.0,
        dag.messages[v].dst.0,
        us(&pr, v),
        us(&fr, v),
        us(&pr, sib),
        us(&fr, sib)
    );
    println!("  t us: NIC Gb/s | queue KB at each egress of the path after the NIC");
    let nic = of(links[0]).expect("the NIC's port");
    let rows = nic.tx_bytes.len();
    for i in 0..rows {
        let gbps = nic.tx_bytes[i] as f64 * 8.0 / step.ps() as f64 * 1e3;
        let q: Vec<String> = links[1..]
            .iter()
            .map(|&l| {
                of(l).map_or("-".into(), |s| {
                    format!("{:.0}", s.queue_bytes[i] as f64 / 1024.0)
                })
            })
            .collect();
        println!(
            "  {:>6.0}: {gbps:>6.1} | {}",
            (i as u64 + 1) as f64 * 5.0,
            q.join(" ")
        );
    }
}

/// `nicsend-trace cases`: the caps `flow::nic_send` set or lifted per cross-validation case
/// (flow engine, seeds 1 to 8 at most), with the case's mean FCT.
fn nic_send_cases() {
    for c in flow_cases::cases() {
        let (topo, mut p) = flow_cases::fabric(c.hosts, c.fabric);
        p.loss_rate = c.loss;
        p.timeout_exp = c.timeout_exp;
        let (mut caps, mut sum_ps, mut count) = (0u64, 0u128, 0u64);
        for seed in 1..=c.seeds.min(8) {
            p.seed = seed;
            let fp = fabricsim::engine_choice::flow_params(&topo, &p);
            let (r, fs) = fabricsim::flow::run(&topo, &p, &c.dag, &fp).expect("valid case");
            caps += fs.nic_caps;
            for m in &r.messages {
                sum_ps += u128::from(m.fct_ps.unwrap_or(0));
                count += 1;
            }
        }
        println!(
            "{:<26} {:<9} loss {:<5}: {caps:>6} caps set or lifted; mean FCT {:.4} us",
            c.name,
            c.fabric,
            c.loss,
            sum_ps as f64 / count.max(1) as f64 / 1e6
        );
    }
}

/// The lossless all-to-all beyond 128 hosts (`dense [gpus [KB [forced [fabric]]]]`): packet vs
/// flow mean FCT, p99 FCT and collective time (last completion), with each engine's seconds;
/// the flow engine with the lossless models as the engine runs them (they end above
/// `calibration::LOSSLESS_MODELS_MAX_ACTIVE` flows at once), and with `forced` with no limit and with
/// none (the models off from the start).
fn dense(gpus: u32, kb: u64, forced: bool, only: Option<&str>) {
    let dag = flow_cases::all_to_all(gpus, kb << 10);
    for fabric in ["ib-ndr", "roce-400g"] {
        if only.is_some_and(|o| o != fabric) {
            continue;
        }
        let (topo, p) = flow_cases::fabric(gpus, fabric);
        // Mean FCT of the messages within a leaf and across leaves (us).
        let leaf = |h: u32| topo.peer_node(topo.host_port(HostId(h)));
        let by_leaf = |r: &sim::RunResult| {
            let mut sum = [(0u64, 0u64); 2];
            for (m, res) in dag.messages.iter().zip(&r.messages) {
                let s = &mut sum[(leaf(m.src.0) != leaf(m.dst.0)) as usize];
                *s = (s.0 + res.fct_ps.unwrap_or(0), s.1 + 1);
            }
            sum.map(|(t, n)| t as f64 / n.max(1) as f64 / 1e6)
        };
        let line = |what: &str, r: &sim::RunResult, secs: f64| {
            let (last, mean) = last_mean(r);
            let p99 = r.summary.fct_p99_ps.unwrap_or(0) as f64 / 1e6;
            let [within, across] = by_leaf(r);
            println!(
                "{fabric:<9} {gpus} GPUs {kb} KB {what:<14} {secs:>8.2} s: mean {mean:.2} us (within a leaf {within:.2}, across {across:.2}), p99 {p99:.2} us, collective {last:.2} us"
            );
            (mean, p99, last)
        };
        let t = Instant::now();
        let pr = sim::run(&topo, &p, &dag, &Faults::default(), RunOptions::default()).unwrap();
        let pk = line("packet", &pr, t.elapsed().as_secs_f64());
        let c = &pr.counters;
        println!(
            "    packet: {} ECN marks, {} CNPs, {} PAUSE frames",
            c.ecn_marks, c.cnps, c.pause_frames
        );
        let base = fabricsim::engine_choice::flow_params(&topo, &p);
        let free = fabricsim::flow::FlowParams {
            lossless_max_active: u64::MAX,
            lossless_max_port_work: u64::MAX,
            ..base.clone()
        };
        let off = fabricsim::flow::FlowParams {
            lossless_max_active: 0,
            ..base.clone()
        };
        let runs = [
            ("flow", base),
            ("flow forced on", free),
            ("flow models off", off),
        ];
        for (what, fp) in runs.iter().take(1 + 2 * forced as usize) {
            let t = Instant::now();
            let (fr, st) = fabricsim::flow::run(&topo, &p, &dag, fp).unwrap();
            let fl = line(what, &fr, t.elapsed().as_secs_f64());
            let e = |a: f64, b: f64| 100.0 * (b - a) / a;
            println!(
                "    {:+.1}% mean, {:+.1}% p99, {:+.1}% collective; {} solves, {} per port, {} fills, port work {}, nic caps {}{}",
                e(pk.0, fl.0),
                e(pk.1, fl.1),
                e(pk.2, fl.2),
                st.solve.resolves,
                st.solve.port_solves,
                st.solve.port_solves + st.solve.port_rounds,
                st.solve.port_work,
                st.nic_caps,
                st.lossless_models_end_ps.map_or(String::new(), |t| format!(
                    "; lossless models ended at {:.3} us ({} flows at once)",
                    t as f64 / 1e6,
                    st.peak_active
                )),
            );
        }
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("loss") => fit_loss(),
        Some("credits") => credits(),
        Some("incast") => incast(),
        Some("timeouts") => timeouts(args.get(1).map(String::as_str)),
        Some("excess") => excess(
            args.get(1).map(String::as_str),
            args.get(2).and_then(|a| a.parse().ok()),
        ),
        Some("hol") => {
            let arg = |i: usize, d: u64| args.get(i).and_then(|a| a.parse().ok()).unwrap_or(d);
            hol(
                arg(1, 128) as u32,
                arg(2, 32) as u32,
                arg(3, 8) as u32,
                arg(4, 1024) << 10,
            )
        }
        Some("hol-trace") => {
            let arg = |i: usize, d: u32| args.get(i).and_then(|a| a.parse().ok()).unwrap_or(d);
            hol_trace(arg(1, 1024), arg(2, 99))
        }
        Some("ports") if args.get(1).is_some_and(|a| a == "xval") => {
            port_fills(args.get(2).map(String::as_str))
        }
        Some("rr") => {
            let arg = |i: usize, d: u64| args.get(i).and_then(|a| a.parse().ok()).unwrap_or(d);
            round_robin(arg(1, 128) as u32, arg(2, 16))
        }
        Some("nicshare") => nic_share(),
        Some("ports") => port_cost(args.get(1).and_then(|a| a.parse().ok()).unwrap_or(1024)),
        Some("victim-cnp") => {
            let arg = |i: usize, d: u32| args.get(i).and_then(|a| a.parse().ok()).unwrap_or(d);
            victim_cnp(arg(1, 1024), arg(2, 99))
        }
        Some("victim-pause") => {
            let arg = |i: usize, d: u32| args.get(i).and_then(|a| a.parse().ok()).unwrap_or(d);
            victim_pause(arg(1, 1024), arg(2, 99))
        }
        #[cfg(feature = "trace")]
        Some("ar-trace") => {
            let arg = |i: usize, d: u32| args.get(i).and_then(|a| a.parse().ok()).unwrap_or(d);
            ar_trace(arg(1, 1024), arg(2, 99))
        }
        #[cfg(not(feature = "trace"))]
        Some("ar-trace") => {
            eprintln!("ar-trace reads the packet engine's trace: build with --features trace");
            std::process::exit(2)
        }
        Some("roce-nic-trace") => {
            let arg = |i: usize, d: u32| args.get(i).and_then(|a| a.parse().ok()).unwrap_or(d);
            roce_nic_trace(arg(1, 128), arg(2, 32))
        }
        Some("nicsend-trace") if args.get(1).is_some_and(|a| a == "cases") => nic_send_cases(),
        Some("nicsend-trace") => {
            let arg = |i: usize, d: u64| args.get(i).and_then(|a| a.parse().ok()).unwrap_or(d);
            let dmodk = args.get(4).is_some_and(|a| a == "dmodk");
            nic_send_trace(arg(1, 128) as u32, arg(2, 32) as u32, arg(3, 256), dmodk)
        }
        Some("dense") => {
            let arg = |i: usize, d: u64| args.get(i).and_then(|a| a.parse().ok()).unwrap_or(d);
            let forced = args.get(3).is_some_and(|a| a == "forced");
            dense(
                arg(1, 256) as u32,
                arg(2, 16),
                forced,
                args.get(4).map(String::as_str),
            )
        }
        _ => cases(args.get(1).map(String::as_str)),
    }
}

/// Why each victim into the receiver's leaf waits or not under adaptive routing (`ar-trace`,
/// needs `--features trace`: `sim::trace` records the packet engine's routing choices with the
/// credits of every candidate, and its waits for credits): the `hol-trace` case on ib-ndr, the
/// full case and victim 0 with the incast alone and beside a second flow. Per spine downlink
/// into the receiver's leaf: when it first waited for credits and for how long in all; per
/// victim: through which spines its packets went, how many entered a spine while its downlink
/// was held and how long they waited there, and what its leaf's AR choice saw (the credits of
/// the chosen uplink and of the most-credited one, and how many uplinks tied).
#[cfg(feature = "trace")]
fn ar_trace(gpus: u32, senders: u32) {
    use fabricsim::sim::trace;
    let n = senders as usize;
    let mb = 1u64 << 20;
    let (topo, p) = flow_cases::fabric(gpus, "ib-ndr");
    let dag = flow_cases::incast_victims(gpus, senders, mb, 8, mb);
    let node_of = |port: u32| topo.ports[port as usize].node.0;
    let leaf_of = |h: u32| node_of(topo.ports[topo.host_port(HostId(h)).idx()].peer.0);
    let recv_leaf = leaf_of(0);
    // Spine downlinks into the receiver's leaf.
    let downs: Vec<u32> = (0..topo.ports.len() as u32)
        .filter(|&pt| {
            topo.nodes[node_of(pt) as usize].tier() == 2
                && node_of(topo.ports[pt as usize].peer.0) == recv_leaf
        })
        .collect();
    let mut queue = p.clone();
    queue.cc.ar_select = sim::cc::ArSelect::Queue;
    let mut cases: Vec<(&str, &sim::SimParams, MessageDag, Vec<usize>)> = vec![
        ("full case", &p, dag.clone(), vec![0, 2, 4, 6]),
        (
            "full case, AR by fewest queued bytes",
            &queue,
            dag.clone(),
            vec![0, 2, 4, 6],
        ),
    ];
    for (name, d) in victim_variants(&dag, n, gpus) {
        cases.push((name, &p, d, vec![0]));
    }
    let us = |ps: u64| ps as f64 / 1e6;
    for (name, q, d, victims) in cases {
        trace::start();
        let r = sim::run(&topo, q, &d, &Faults::default(), RunOptions::default()).unwrap();
        let fr = fabricsim::flow::run(
            &topo,
            q,
            &d,
            &fabricsim::engine_choice::flow_params(&topo, q),
        )
        .unwrap()
        .0;
        let log = trace::take();
        let (msg_qp, _) = sim::route::number_qps(&d.messages, p.cc.qps_per_connection);
        // Held intervals per downlink: its waits for credits, merged across gaps under 1 us.
        let held: Vec<Vec<(u64, u64)>> = downs
            .iter()
            .map(|&pt| {
                let mut ev: Vec<(u64, bool)> = log
                    .stalls
                    .iter()
                    .filter(|s| s.1 == pt)
                    .map(|s| (s.0, true))
                    .chain(
                        log.stall_ends
                            .iter()
                            .filter(|s| s.1 == pt)
                            .map(|s| (s.0, false)),
                    )
                    .collect();
                ev.sort();
                let mut iv: Vec<(u64, u64)> = Vec::new();
                let mut open = None;
                for (t, start) in ev {
                    match (start, open) {
                        (true, None) => open = Some(t),
                        (false, Some(s)) => {
                            match iv.last_mut() {
                                Some(l) if s < l.1 + 1_000_000 => l.1 = t,
                                _ => iv.push((s, t)),
                            }
                            open = None;
                        }
                        _ => {}
                    }
                }
                iv
            })
            .collect();
        println!("ib-ndr {gpus} GPUs {senders}:1, {name}");
        let hs: Vec<String> = downs
            .iter()
            .zip(&held)
            .filter(|(_, iv)| !iv.is_empty())
            .map(|(pt, iv)| {
                let total: u64 = iv.iter().map(|i| i.1 - i.0).sum();
                format!(
                    "{}/{pt}: {:.1}-{:.1} ({} spans, {:.0} held)",
                    node_of(*pt),
                    us(iv[0].0),
                    us(iv.last().unwrap().1),
                    iv.len(),
                    us(total)
                )
            })
            .collect();
        println!(
            "  held downlinks (spine/port: first-last us, spans, us held): {}",
            hs.join(", ")
        );
        let held_at = |pt: u32, t: u64| {
            downs
                .iter()
                .position(|&x| x == pt)
                .is_some_and(|i| held[i].iter().any(|iv| iv.0 <= t && t < iv.1))
        };
        for &k in &victims {
            let m = n + k;
            let qp = msg_qp[m];
            let src_leaf = leaf_of(d.messages[m].src.0);
            let mut recs: Vec<&trace::RouteChoice> =
                log.routes.iter().filter(|c| c.qp == qp).collect();
            recs.sort_by_key(|c| (c.psn, c.t_ps));
            // Per packet: its leaf's choice (up), the spine's choice (down into the leaf), and
            // the receiver leaf's.
            let mut by_spine: std::collections::BTreeMap<u32, (u32, u32, u64, u64)> =
                Default::default();
            let (mut ties, mut into_held, mut first_held) = (0u32, 0u32, None);
            // Packets that waited over 10 us at their spine: count, first and last entry (ps).
            let mut waited = (0u32, u64::MAX, 0u64);
            let mut views = Vec::new();
            for c in recs.iter().filter(|c| c.node == src_leaf) {
                let spine = node_of(topo.ports[c.out as usize].peer.0);
                let at_spine = recs.iter().find(|x| x.psn == c.psn && x.node == spine);
                let at_leaf = recs.iter().find(|x| x.psn == c.psn && x.node == recv_leaf);
                let (Some(s), Some(l)) = (at_spine, at_leaf) else {
                    continue;
                };
                let h = held_at(s.out, s.t_ps);
                let wait = l.t_ps - s.t_ps;
                let e = by_spine.entry(spine).or_default();
                e.0 += 1;
                e.1 += h as u32;
                e.2 += wait;
                e.3 = e.3.max(wait);
                let max = c.credits.iter().copied().max().unwrap_or(0);
                let chosen = c.cands.iter().position(|&x| x == c.out).unwrap();
                let tied = c.credits.iter().filter(|&&x| x == max).count();
                ties += (tied > 1) as u32;
                if h {
                    into_held += 1;
                    first_held.get_or_insert(c.t_ps);
                }
                if wait > 10_000_000 {
                    waited.0 += 1;
                    waited.1 = waited.1.min(s.t_ps);
                    waited.2 = waited.2.max(s.t_ps);
                    if views.len() < 3 {
                        // What AR saw: per candidate in scan order from the static one, queued
                        // bytes / credits, the chosen one marked.
                        let nc = c.cands.len();
                        let seen: Vec<String> = (0..nc)
                            .map(|j| (c.static_idx as usize + j) % nc)
                            .take_while(|&i| i != chosen)
                            .chain([chosen])
                            .map(|i| {
                                format!(
                                    "{}{i}:{}B/{}cr",
                                    if i == chosen { "*" } else { "" },
                                    c.queued[i],
                                    c.credits.get(i).copied().unwrap_or(0)
                                )
                            })
                            .collect();
                        views.push(format!(
                            "psn {} left its leaf at {:.2} us into spine {spine} (held: {h}), waited {:.1} us; AR scan from static {}: {}",
                            c.psn,
                            us(c.t_ps),
                            us(wait),
                            c.static_idx,
                            seen.join(" ")
                        ));
                    }
                }
            }
            let sp: Vec<String> = by_spine
                .iter()
                .map(|(s, (np, nh, sum, max))| {
                    format!(
                        "{s}: {np} pkts, {nh} into held, wait mean {:.1} max {:.1}",
                        us(sum / *np as u64),
                        us(*max)
                    )
                })
                .collect();
            println!(
                "  victim {k} {} -> {}: FCT {:.1} us (flow {:.1}); {} packets entered a spine while its downlink was held (first at {:?} us), {} waited over 10 us there (entered {:.2}-{:.2} us); {} choices with tied credits; by spine: {}",
                d.messages[m].src.0,
                d.messages[m].dst.0,
                us(r.messages[m].fct_ps.unwrap()),
                us(fr.messages[m].fct_ps.unwrap()),
                into_held,
                first_held.map(us),
                waited.0,
                us(waited.1.min(waited.2)),
                us(waited.2),
                ties,
                sp.join("; ")
            );
            for v in views {
                println!("    {v}");
            }
        }
    }
}

/// `roce-nic-trace [gpus [senders]]`: DCQCN and the per-QP round robin of an incast sender's
/// NIC on roce-400g, in the `incast 32:1 + victims` case (`flow_cases::incast_victims`, 8
/// victims), from the packet engine's 1 us port samples: per 1 us, the sending rate of each
/// victim from an incast sender's NIC (what its receiver's leaf sends it: it receives nothing
/// else, shifted back by its path's latency) and of that NIC's incast QP (the NIC's sending
/// rate less the victim's), and of an incast QP alone on its NIC (its first cut shows as its
/// rate leaving the line); when the receiver's egress queue passed Kmin; the FCTs packet / flow;
/// then the flow engine's mean-field reaction point (`flow::dcqcn_incast::Ramp`).
fn roce_nic_trace(gpus: u32, senders: u32) {
    let n = senders as usize;
    let mb = 1u64 << 20;
    let (topo, mut p) = flow_cases::fabric(gpus, "roce-400g");
    let Some(sim::ecn::EcnMarking::Red { kmin_bytes, .. }) = p.cc.ecn else {
        println!("roce-400g without RED marking");
        return;
    };
    p.sample_interval = Some(Time::from_us(1));
    let dag = flow_cases::incast_victims(gpus, senders, mb, 8, mb);
    let (pr, fr) = both(&topo, &p, &dag);
    let us = |r: &sim::RunResult, i: usize| r.messages[i].fct_ps.unwrap() as f64 / 1e6;
    let series = pr.series.as_ref().expect("sampled");
    let gbps = |port: usize| -> Vec<f64> {
        let s = series
            .ports
            .iter()
            .find(|s| s.port as usize == port)
            .expect("sampled port");
        s.tx_bytes
            .iter()
            .map(|&b| b as f64 * 8.0 / 1e-6 / 1e9)
            .collect()
    };
    let nic = |h: HostId| topo.host_port(h).idx();
    let into = |h: HostId| topo.ports[topo.host_port(h).idx()].peer.idx();
    let q = &series
        .ports
        .iter()
        .find(|s| s.port as usize == into(HostId(0)))
        .expect("sampled port")
        .queue_bytes;
    let above = q.iter().position(|&b| b > kmin_bytes);
    println!(
        "roce-400g, {gpus} GPUs, {senders}:1 x 1 MB + 8 victims; receiver's egress above Kmin ({} KB) from the sample ending {:?} us, peak {} KB",
        kmin_bytes >> 10,
        above.map(|i| i + 1),
        q.iter().max().copied().unwrap_or(0) >> 10
    );
    let bins = 50;
    let show = |what: String, v: &[f64]| {
        let s: Vec<String> = v.iter().take(bins).map(|r| format!("{r:.0}")).collect();
        println!("  {what:<30} {}", s.join(" "));
    };
    let lone = (0..n)
        .find(|&i| {
            !dag.messages[n..]
                .iter()
                .any(|v| v.src == dag.messages[i].src)
        })
        .expect("an incast sender without a victim");
    show(
        format!("incast QP {lone} alone on its NIC"),
        &gbps(nic(dag.messages[lone].src)),
    );
    for k in (1..8).step_by(2) {
        let v = n + k;
        let (src, dst) = (dag.messages[v].src, dag.messages[v].dst);
        let sib = (0..n)
            .find(|&i| dag.messages[i].src == src)
            .expect("an incast sender");
        println!(
            "victim {k} {} -> {}: {:.1} / {:.1} us; its NIC's incast QP {sib}: {:.1} / {:.1} us; Gb/s per us:",
            src.0,
            dst.0,
            us(&pr, v),
            us(&fr, v),
            us(&pr, sib),
            us(&fr, sib)
        );
        // The victim's bytes reach its receiver's leaf egress one path latency (whole us) later.
        let links = flow_cases::qp_links(&topo, &p, &dag, v);
        let lat = paths::one_way_ps(&topo, &p, &links[..links.len() - 1]);
        let shift = (lat as f64 / 1e6).round() as usize;
        let victim: Vec<f64> = gbps(into(dst)).into_iter().skip(shift).collect();
        let total = gbps(nic(src));
        let incast: Vec<f64> = total
            .iter()
            .enumerate()
            .map(|(i, &t)| (t - victim.get(i).copied().unwrap_or(0.0)).max(0.0))
            .collect();
        show(format!("NIC {}", src.0), &total);
        show(format!("victim {k} (shifted {shift} us)"), &victim);
        show(format!("incast QP {sib}"), &incast);
    }
    // The mean-field model of the group as `dcqcn_incast::synchronized_caps` builds it: the
    // senders sharing a NIC with a victim offer half the line, and the group offers its least.
    let (Some(d), Some(ecn)) = (p.cc.algo.dcqcn(), &p.cc.ecn) else {
        return;
    };
    let links = flow_cases::qp_links(&topo, &p, &dag, 0);
    let line = topo.links[topo.ports[topo.host_port(HostId(0)).idx()].link.idx()].rate;
    let inc = fabricsim::flow::mean_field::Incast {
        senders,
        bytes: paths::wire_bytes(&p, mb),
        offered_bps: line.bps() / 2,
        nic_line: line,
        egress_bps: line.bps(),
        loop_ps: 2 * paths::one_way_ps(&topo, &p, &links),
        frame_bytes: p.mtu_frame_wire_bytes(),
    };
    let (out, rates) = fabricsim::flow::mean_field::rates(&inc, d, ecn);
    let r: Vec<String> = rates
        .iter()
        .take(12)
        .map(|&(t, b)| format!("{:.1} us {:.0}", t as f64 / 1e6, b as f64 / 1e9))
        .collect();
    println!(
        "mean field (offered {} Gb/s): drain {:.1} us; reaction point's rate from (Gb/s): {}",
        inc.offered_bps / 1_000_000_000,
        out.drain_ps as f64 / 1e6,
        r.join(", ")
    );
}
