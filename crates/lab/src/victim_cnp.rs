//! `victim-cnp`: where DCQCN cuts the victims into the receiver's leaf (`flow::dcqcn_victim`).

use crate::util::both;
use fabricsim::flow::paths;
use fabricsim::message::MessageDag;
use fabricsim::sim::{self, Faults, RunOptions};
use fabricsim::topology::HostId;
use fabricsim::units::Time;
use fabricsim_cases::flow_cases;

/// Where DCQCN cuts the victims into the receiver's leaf in the roce-400g `hol` case
/// (`flow::dcqcn_victim`).
///
/// Per victim, each egress on its path (the packet engine's ECMP route, as the flow engine
/// places it) with the incast QPs that share it and when its queue stood above Kmin, the
/// victim's sending rate per 10 us, the CNPs its QP received and its FCT, packet / flow; then
/// the victim alone with the incast.
#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    pub case: crate::util::Incast1024,
}

/// Where DCQCN cuts the victims into the receiver's leaf (`victim-cnp`): the roce-400g `hol`
/// case with 1 us port samples; per victim (even `k`), each egress on its path with the incast
/// QPs sharing it and when its queue stood above Kmin (the RED rule marks a packet leaving a
/// queue above Kmin, `sim::ecn`), the victim's rate per 10 us from its NIC's transmitted bytes,
/// and its FCT packet / flow.
pub fn run(gpus: u32, senders: u32) {
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
