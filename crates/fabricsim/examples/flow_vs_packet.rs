//! Compares the flow engine with the packet engine on small shared cases (mean and p99 FCT,
//! last completion): a first look before the calibration of issue 7.
//! Run: `cargo run --release -p fabricsim --example flow_vs_packet`.

use fabricsim::flow::{self, FlowParams};
use fabricsim::message::MessageDag;
use fabricsim::rng::Rng;
use fabricsim::sim::{self, Faults, RunOptions, RunResult, SimParams};
use fabricsim::topology::{HostId, Kind, Tiers, Topology, TopologySpec, build};
use fabricsim::units::{BitRate, Time};

fn topo(hosts: u32) -> Topology {
    build(&TopologySpec {
        gpus: hosts,
        gpus_per_node: 8,
        nics_per_node: 8,
        kind: Kind::RailOptimized,
        tiers: Tiers::Fixed(2),
        oversubscription: (1, 1),
        switch_radix: 32,
        port_rate: BitRate::gbps(400),
    })
    .expect("fabric")
}

fn stats(r: &RunResult) -> (f64, u64, u64) {
    let f: Vec<u64> = r.messages.iter().filter_map(|m| m.fct_ps).collect();
    let mean = f.iter().sum::<u64>() as f64 / f.len() as f64;
    let last = r
        .messages
        .iter()
        .filter_map(|m| m.finish_ps)
        .max()
        .unwrap_or(0);
    (mean, r.summary.fct_p99_ps.unwrap_or(0), last)
}

fn main() {
    let t = topo(128);
    let n = t.num_hosts() as u32;
    let mut cases: Vec<(&str, MessageDag)> = Vec::new();
    let mut rng = Rng::stream(1, 5, 0);
    let mut perm: Vec<u32> = (0..n).collect();
    rng.shuffle(&mut perm);
    let mut dag = MessageDag::default();
    for s in 0..n {
        let d = if perm[s as usize] == s {
            (s + 1) % n
        } else {
            perm[s as usize]
        };
        dag.push(HostId(s), HostId(d), 1_000_000, Time::ZERO, &[]);
    }
    cases.push(("permutation 1MB", dag));
    let mut dag = MessageDag::default();
    for s in 1..17 {
        dag.push(HostId(s * 7 % n), HostId(0), 1_000_000, Time::ZERO, &[]);
    }
    cases.push(("incast 16:1 1MB", dag));
    let mut dag = MessageDag::default();
    let ranks: Vec<u32> = (0..16).map(|i| i * 8).collect();
    let mut prev: Vec<u32> = Vec::new();
    for step in 0..30 {
        let cur: Vec<u32> = (0..16)
            .map(|i| {
                let deps: Vec<u32> = if step == 0 {
                    vec![]
                } else {
                    vec![prev[(i + 15) % 16]]
                };
                dag.push(
                    HostId(ranks[i]),
                    HostId(ranks[(i + 1) % 16]),
                    250_000,
                    Time::ZERO,
                    &deps,
                )
            })
            .collect();
        prev = cur;
    }
    cases.push(("ring 16 ranks, 30 steps of 250KB", dag));
    let mut dag = MessageDag::default();
    for s in 0..32u32 {
        for k in 1..32u32 {
            dag.push(
                HostId(s * 4),
                HostId(((s + k) % 32) * 4),
                64_000,
                Time::ZERO,
                &[],
            );
        }
    }
    cases.push(("all-to-all 32 hosts 64KB", dag));
    for (name, params) in [("roce", SimParams::roce()), ("ib", SimParams::ib())] {
        for (case, dag) in &cases {
            let pr = sim::run(&t, &params, dag, &Faults::default(), RunOptions::default()).unwrap();
            let (fr, _) = flow::run(&t, &params, dag, &FlowParams::default()).unwrap();
            let (pm, pp, pl) = stats(&pr);
            let (fm, fp, fl) = stats(&fr);
            println!(
                "{name:5} {case:34} mean {:9.3} / {:9.3} us ({:+5.1}%)  p99 {:9.3} / {:9.3} us ({:+5.1}%)  last {:9.3} / {:9.3} us ({:+5.1}%)",
                pm / 1e6,
                fm / 1e6,
                (fm / pm - 1.0) * 100.0,
                pp as f64 / 1e6,
                fp as f64 / 1e6,
                (fp as f64 / pp as f64 - 1.0) * 100.0,
                pl as f64 / 1e6,
                fl as f64 / 1e6,
                (fl as f64 / pl as f64 - 1.0) * 100.0,
            );
        }
    }
}
