//! `hol-trace`: where the packet engine's victims into the receiver's leaf wait.

use crate::util::both;
use fabricsim::flow::paths;
use fabricsim::message::MessageDag;
use fabricsim::sim;
use fabricsim::topology::HostId;
use fabricsim::units::Time;
use fabricsim_cases::flow_cases;

/// Where the packet engine's victims into the receiver's leaf wait in the `hol` case.
///
/// On ib-ndr the spine downlinks into that leaf that waited for credits, and one victim with
/// the incast alone and beside a second flow; each fabric without its routing or
/// congestion-control choice (D-mod-K, no DCQCN); the flow engine beside each.
#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    pub case: crate::util::Incast1024,
}

/// Where the victims into the receiver's leaf wait (`hol-trace`): per fabric, the `hol` case's
/// victims (packet / flow) with the profile as it is and without its routing (D-mod-K instead
/// of adaptive) or congestion-control (DCQCN) choice; on the profile, the victim `k + 1 -> 1`
/// (`k` = the last host) with the incast alone, beside a flow from an incast sender's NIC, and
/// beside a second flow from its own NIC, with the spine downlinks into the receiver's leaf
/// that waited for credits or were paused and for how long.
pub fn run(gpus: u32, senders: u32) {
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

/// The `hol` case's first victim (message `n` of `dag`) with the incast alone, beside a 1 MB
/// flow from an incast sender's NIC, and beside a second 1 MB flow from its own NIC (both to
/// host `gpus / 2 - 1`): (name, DAG).
pub fn victim_variants(dag: &MessageDag, n: usize, gpus: u32) -> Vec<(&'static str, MessageDag)> {
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
