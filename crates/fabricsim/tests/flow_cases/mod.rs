//! The shared cases of the flow/packet cross-validation (issue 7): permutation, incast, ring
//! all-reduce and all-to-all on 128 to 1,024 hosts, on a fabric profile's parameters, with and
//! without random loss. Used by `tests/flow_xval.rs` and `examples/flow_calibrate.rs`.

#![allow(dead_code)]

use fabricsim::engine_choice::{self, EngineKind};
use fabricsim::message::MessageDag;
use fabricsim::rng::Rng;
use fabricsim::scenario::Scenario;
use fabricsim::sim::{Faults, RunOptions, RunResult, SimParams, params_from_design};
use fabricsim::topology::{HostId, Topology};
use fabricsim::units::Time;

/// A fabric of `gpus` GPUs (8 per server, one NIC each, the scenario's default topology) on
/// `fabric`'s profile, and the packet engine's parameters for it.
pub fn fabric(gpus: u32, fabric: &str) -> (Topology, SimParams) {
    let mut s = Scenario::defaults();
    let flags = [
        ("--gpus", gpus.to_string()),
        ("--fabric", fabric.to_string()),
    ];
    let pairs: Vec<_> = flags
        .iter()
        .map(|(f, v)| (f.to_string(), v.clone()))
        .collect();
    s.apply_flags(&pairs).expect("valid flags");
    let (design, topo) = s.design_and_topology().expect("valid design");
    let p = params_from_design(&design, true).expect("profile parameters");
    (topo, p)
}

/// Every host sends `bytes` to another, a random permutation without fixed points.
pub fn permutation(hosts: u32, bytes: u64, seed: u64) -> MessageDag {
    let mut perm: Vec<u32> = (0..hosts).collect();
    Rng::stream(seed, 5, 0).shuffle(&mut perm);
    let mut dag = MessageDag::default();
    for s in 0..hosts {
        let d = perm[s as usize];
        let d = if d == s { (s + 1) % hosts } else { d };
        dag.push(HostId(s), HostId(d), bytes, Time::ZERO, &[]);
    }
    dag
}

/// `senders` hosts spread over the fabric each send `bytes` to host 0 at once.
pub fn incast(hosts: u32, senders: u32, bytes: u64) -> MessageDag {
    let mut dag = MessageDag::default();
    for i in 1..=senders {
        dag.push(
            HostId(i * (hosts - 1) / senders),
            HostId(0),
            bytes,
            Time::ZERO,
            &[],
        );
    }
    dag
}

/// A ring all-reduce over the first host of every server (`hosts / 8` ranks, every hop across
/// the fabric), `chunk` bytes per step.
pub fn ring_of_servers(hosts: u32, chunk: u64) -> MessageDag {
    let ranks: Vec<u32> = (0..hosts).step_by(8).collect();
    ring(&ranks, chunk)
}

/// A ring all-reduce of `chunk` bytes per step over `ranks`: 2(n-1) steps, the step-k send of
/// rank i waiting for rank i-1's step k-1 send.
pub fn ring(ranks: &[u32], chunk: u64) -> MessageDag {
    let n = ranks.len();
    let mut dag = MessageDag::default();
    let mut prev: Vec<u32> = Vec::new();
    for step in 0..2 * (n - 1) {
        let cur: Vec<u32> = (0..n)
            .map(|i| {
                let deps: Vec<u32> = if step == 0 {
                    vec![]
                } else {
                    vec![prev[(i + n - 1) % n]]
                };
                let (s, d) = (ranks[i], ranks[(i + 1) % n]);
                dag.push(HostId(s), HostId(d), chunk, Time::ZERO, &deps)
            })
            .collect();
        prev = cur;
    }
    dag
}

/// Every host sends `bytes` to every other at once.
pub fn all_to_all(hosts: u32, bytes: u64) -> MessageDag {
    let mut dag = MessageDag::default();
    for s in 0..hosts {
        for k in 1..hosts {
            dag.push(HostId(s), HostId((s + k) % hosts), bytes, Time::ZERO, &[]);
        }
    }
    dag
}

/// One shared case.
pub struct Case {
    pub name: String,
    pub fabric: &'static str,
    pub hosts: u32,
    pub loss: f64,
    /// The local ACK timeout exponent (4.096 us x 2^exp).
    pub timeout_exp: u8,
    pub dag: MessageDag,
    /// A collective (its time is compared) rather than independent flows.
    pub collective: bool,
}

/// The ACK timeout of the lossy cases: 4.096 us x 2^4 = 65.5 us. With the profiles' NCCL
/// default (2^20: 4.29 s) a case's mean FCT is set by how many of its ~100 messages lose their
/// tail (a Poisson count near 1), which no model and no second packet run reproduces; with a
/// timeout a few FCTs long the goodput penalty is what the mean measures.
pub const LOSS_TIMEOUT_EXP: u8 = 4;

/// The cross-validation cases: each traffic pattern on ib-ndr and roce-400g, without loss
/// and with 0.1% loss per packet per link.
pub fn cases() -> Vec<Case> {
    let mut v = Vec::new();
    for fabric in ["ib-ndr", "roce-400g"] {
        for loss in [0.0, 0.001] {
            let mut add = |name: &str, hosts: u32, dag: MessageDag, collective: bool| {
                v.push(Case {
                    name: name.to_string(),
                    fabric,
                    hosts,
                    loss,
                    timeout_exp: if loss > 0.0 { LOSS_TIMEOUT_EXP } else { 20 },
                    dag,
                    collective,
                })
            };
            add("permutation 1 MB", 128, permutation(128, 1 << 20, 1), false);
            add(
                "permutation 256 KB",
                1024,
                permutation(1024, 256 << 10, 2),
                false,
            );
            add("incast 32:1 1 MB", 128, incast(128, 32, 1 << 20), false);
            add(
                "ring all-reduce 64 KB",
                128,
                ring_of_servers(128, 64 << 10),
                true,
            );
            add("all-to-all 16 KB", 128, all_to_all(128, 16 << 10), true);
        }
    }
    v
}

/// Mean FCT, p99 FCT and last completion (ps) of a run.
pub fn stats(r: &RunResult) -> (f64, u64, u64) {
    let f: Vec<u64> = r.messages.iter().filter_map(|m| m.fct_ps).collect();
    let mean = f.iter().sum::<u64>() as f64 / f.len().max(1) as f64;
    let last = r
        .messages
        .iter()
        .filter_map(|m| m.finish_ps)
        .max()
        .unwrap_or(0);
    (mean, r.summary.fct_p99_ps.unwrap_or(0), last)
}

/// Relative error of `flow` against `packet`.
pub fn err(packet: f64, flow: f64) -> f64 {
    (flow - packet) / packet
}

/// One line of the comparison table: mean FCT, p99 FCT and last completion, packet / flow.
pub fn row(c: &Case, p: &RunResult, f: &RunResult) -> String {
    let ((pm, p99, pl), (fm, f99, fl)) = (stats(p), stats(f));
    let us = |x: f64| x / 1e6;
    format!(
        "| {:<22} | {:<9} | {:>5.1}% | {:>9.2} / {:>9.2} ({:+6.1}%) | {:>9.2} / {:>9.2} ({:+6.1}%) | {:>9.2} / {:>9.2} ({:+6.1}%) |",
        c.name,
        c.fabric,
        100.0 * c.loss,
        us(pm),
        us(fm),
        100.0 * err(pm, fm),
        us(p99 as f64),
        us(f99 as f64),
        100.0 * err(p99 as f64, f99 as f64),
        us(pl as f64),
        us(fl as f64),
        100.0 * err(pl as f64, fl as f64),
    )
}

/// Runs `c` on `kind`.
pub fn run(c: &Case, kind: EngineKind) -> RunResult {
    let (topo, mut p) = fabric(c.hosts, c.fabric);
    p.loss_rate = c.loss;
    p.timeout_exp = c.timeout_exp;
    let r = engine_choice::run(
        kind,
        &topo,
        &p,
        &c.dag,
        &Faults::default(),
        RunOptions::default(),
    )
    .unwrap_or_else(|e| panic!("{} on {}: {e}", c.name, c.fabric));
    r
}
