//! `victim-pause`: the PFC pauses of the spine downlinks into the receiver's leaf (`flow::pfc_pause`).

use crate::util::both;
use fabricsim::flow::paths;
use fabricsim::sim;
use fabricsim::topology::HostId;
use fabricsim::units::Time;
use fabricsim_cases::flow_cases;

/// The PFC pauses of the spine downlinks into the receiver's leaf in the `victim-cnp` case
/// (`flow::pfc_pause`).
///
/// Per downlink with incast flows: its incast QPs, victims, pause time, PAUSE frames and XOFFs
/// at the leaf; per 10 us the XOFF threshold (`flow::pfc_pause::Ingress` on the root's depth)
/// against the ingress count of the downlinks of 4 or more incast QPs; per 5 us the root
/// egress, the leaf's buffer and each downlink's queue and sending rate.
#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    pub case: crate::util::Incast1024,
}

/// Why the victim behind a PFC-paused spine downlink is cut longer (`victim-pause`): the
/// roce-400g `hol` case (1,024 GPUs, 99:1) with 1 us port samples; the receiver's leaf, its
/// buffer and PFC thresholds, then per 5 us: the leaf's egress to the receiver and its whole
/// buffer, and for each spine downlink into the leaf that carries incast flows (its incast QPs
/// and victims), its queue and what it sent (a downlink with a queue that sends below its line
/// was paused for the rest of the interval).
pub fn run(gpus: u32, senders: u32) {
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
