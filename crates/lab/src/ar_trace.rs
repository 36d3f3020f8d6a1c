//! `ar-trace`: why each victim of the ib-ndr `hol-trace` case waits or not under adaptive routing.

/// Why each victim of the ib-ndr `hol-trace` case waits or not under adaptive routing
/// (build with `--features trace`: it reads `fabricsim_packet::trace`).
///
/// From the packet engine's routing choices and credit waits: when each spine downlink into
/// the receiver's leaf was held, through which spines each victim's packets went and how long
/// they waited there, and what its leaf's AR choice saw (queued bytes and credits per uplink),
/// under the profile's AR by normalized credits and by least queued bytes. Findings in
/// `flow::hol`.
#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    pub case: crate::util::Incast1024,
}

/// Without the `trace` feature: an error naming the build that has it (exit 2).
#[cfg(not(feature = "trace"))]
pub fn run(_gpus: u32, _senders: u32) {
    eprintln!("ar-trace reads the packet engine's trace: build with --features trace");
    std::process::exit(2)
}

#[cfg(feature = "trace")]
pub use traced::run;

#[cfg(feature = "trace")]
mod traced {

    use fabricsim::message::MessageDag;
    use fabricsim::sim::{self, Faults, RunOptions};
    use fabricsim::topology::HostId;

    use fabricsim_cases::flow_cases;

    use crate::hol_trace::victim_variants;

    /// Why each victim into the receiver's leaf waits or not under adaptive routing (`ar-trace`,
    /// needs `--features trace`: `fabricsim_packet::trace` records the packet engine's routing choices with the
    /// credits of every candidate, and its waits for credits): the `hol-trace` case on ib-ndr, the
    /// full case and victim 0 with the incast alone and beside a second flow. Per spine downlink
    /// into the receiver's leaf: when it first waited for credits and for how long in all; per
    /// victim: through which spines its packets went, how many entered a spine while its downlink
    /// was held and how long they waited there, and what its leaf's AR choice saw (the credits of
    /// the chosen uplink and of the most-credited one, and how many uplinks tied).
    pub fn run(gpus: u32, senders: u32) {
        use fabricsim_packet::trace;
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
            let (msg_qp, _) = sim::route::connection_qps(&d.messages, &p.cc);
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
}
