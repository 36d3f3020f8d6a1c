//! `nicsend-trace`: the send stage of an incast sender's NIC (`flow::nic_send`), traced on the packet engine.

use crate::util::{both, message_links};
use fabricsim::flow::paths;
use fabricsim::sim;
use fabricsim::units::Time;
use fabricsim_cases::flow_cases;

/// The send stage of an incast sender's NIC with a victim beside it (`flow::nic_send`), traced
/// on the packet engine (ib-ndr).
///
/// Per 5 us, the NIC's sending rate and the egress queues along its incast flow's path; the
/// victim and that incast flow, packet / flow. `nicsend-trace cases`: per cross-validation case
/// (flow engine, up to 8 seeds), the caps the send stage set or lifted (0: the case's results
/// are the engine's without it).
#[derive(clap::Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct Args {
    #[command(subcommand)]
    pub cases: Option<Cases>,
    #[command(flatten)]
    pub case: crate::util::Incast128,
    /// The switches' input buffer per VL, KB
    #[arg(default_value_t = 256)]
    pub kb: u64,
    /// D-mod-K routing instead of the profile's
    #[arg(long)]
    pub dmodk: bool,
}

#[derive(clap::Subcommand)]
pub enum Cases {
    /// The caps `flow::nic_send` set or lifted per cross-validation case.
    ///
    /// Flow engine, seeds 1 to 8 at most, with the case's mean FCT (0 caps: the case's results
    /// are the engine's without the send stage).
    Cases,
}

/// `nicsend-trace`: an incast of `senders` x 1 MB to host 0 on `gpus` GPUs (ib-ndr, `kb` KB per
/// VL in the switches) plus `flow_cases::incast_victims`' victim 1 (1 MB from an incast sender's
/// NIC), traced every 5 us on the packet engine: the NIC's sending rate, the queues of the
/// egresses its incast flow crosses after the NIC (sender leaf up, spine down, the root into
/// host 0), and the NIC's credit stall so far; then the FCTs, packet / flow.
pub fn run(gpus: u32, senders: u32, kb: u64, dmodk: bool) {
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
pub fn cases() {
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
