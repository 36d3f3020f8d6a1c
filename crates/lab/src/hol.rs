//! `hol`: PFC / credit head-of-line blocking of victim flows behind an incast (`flow::hol`).

use crate::util::{both, last_mean};
use fabricsim::message::MessageDag;
use fabricsim::sim;
use fabricsim::units::Time;
use fabricsim_cases::flow_cases;

/// PFC / credit head-of-line blocking of victim flows behind an incast (`flow::hol`), packet vs
/// flow, on ib-ndr and roce-400g.
///
/// The victims' FCT by size (32 KB to 8 MB), the cross-validation case `incast 32:1 + victims`
/// (each victim alone and with the incast, with the egresses the packet engine held and for
/// how long), and the hotspot-and-victim pattern of Gran et al. (IPDPS 2010). The defaults are
/// the asserted case.
#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    pub case: crate::util::Incast128,
    /// Victim flows
    #[arg(default_value_t = 8)]
    pub victims: u32,
    /// Size of each victim, KB
    #[arg(default_value_t = 1024)]
    pub kb: u64,
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
pub fn run(gpus: u32, senders: u32, victims: u32, victim_bytes: u64) {
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
