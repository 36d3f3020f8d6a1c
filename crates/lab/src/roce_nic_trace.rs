//! `roce-nic-trace`: DCQCN and the per-QP round robin of an incast sender's NIC on roce-400g.

use crate::util::both;
use fabricsim::flow::paths;
use fabricsim::sim;
use fabricsim::topology::HostId;
use fabricsim::units::Time;
use fabricsim_cases::flow_cases;

/// DCQCN and the per-QP round robin of an incast sender's NIC on roce-400g
/// (`flow::dcqcn_incast`).
///
/// In `incast N:1 + victims` (`1024 99`: the `hol-trace` case), per 1 us from the packet
/// engine's port samples: each victim from an incast sender's NIC and that NIC's incast QP, and
/// an incast QP alone on its NIC; the FCTs packet / flow; the mean-field reaction point's rates.
#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    pub case: crate::util::Incast128,
}

/// `roce-nic-trace [gpus [senders]]`: DCQCN and the per-QP round robin of an incast sender's
/// NIC on roce-400g, in the `incast 32:1 + victims` case (`flow_cases::incast_victims`, 8
/// victims), from the packet engine's 1 us port samples: per 1 us, the sending rate of each
/// victim from an incast sender's NIC (what its receiver's leaf sends it: it receives nothing
/// else, shifted back by its path's latency) and of that NIC's incast QP (the NIC's sending
/// rate less the victim's), and of an incast QP alone on its NIC (its first cut shows as its
/// rate leaving the line); when the receiver's egress queue passed Kmin; the FCTs packet / flow;
/// then the flow engine's mean-field reaction point (`flow::dcqcn_incast::Ramp`).
pub fn run(gpus: u32, senders: u32) {
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
