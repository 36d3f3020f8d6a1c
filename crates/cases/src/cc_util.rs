//! Topologies, traffic and measurements shared by the congestion-control and routing tests.

pub mod fluid;

use fabricsim::message::MessageDag;
use fabricsim::rng::Rng;
use fabricsim::sim::{self, Faults, RunOptions, RunResult, SimParams};
use fabricsim::topology::{GraphBuilder, HostId, Medium, NodeId, Shape, Topology};
use fabricsim::units::{BitRate, Time};

/// A 2-tier fat-tree: `leaves` leaf switches with `hosts` hosts each, each leaf linked once to
/// each of `spines` spines; hosts are numbered leaf by leaf. Non-blocking when hosts == spines.
pub fn fat_tree(leaves: u32, hosts: u32, spines: u32, rate: BitRate, delay: Time) -> Topology {
    fat_tree_parallel(leaves, hosts, spines, 1, rate, delay)
}

/// [`fat_tree`] with `parallel` links between each leaf and each spine (as large-radix fabrics
/// are cabled); non-blocking when hosts == spines x parallel.
pub fn fat_tree_parallel(
    leaves: u32,
    hosts: u32,
    spines: u32,
    parallel: u32,
    rate: BitRate,
    delay: Time,
) -> Topology {
    let mut b = GraphBuilder::new();
    let nics: Vec<NodeId> = (0..leaves * hosts).map(|i| b.add_nic(i, 0)).collect();
    let leaf: Vec<NodeId> = (0..leaves)
        .map(|l| b.add_switch(1, 0, l, hosts + spines * parallel))
        .collect();
    let spine: Vec<NodeId> = (0..spines)
        .map(|s| b.add_switch(2, 0, s, leaves * parallel))
        .collect();
    for (i, &n) in nics.iter().enumerate() {
        b.connect(
            n,
            leaf[i / hosts as usize],
            rate,
            2.0,
            delay,
            Medium::Unspecified,
        );
    }
    for &l in &leaf {
        for &s in &spine {
            for _ in 0..parallel {
                b.connect(l, s, rate, 10.0, delay, Medium::Unspecified);
            }
        }
    }
    let t = b.finish(Shape::Imported, 2, leaves * hosts);
    t.check().unwrap();
    t
}

/// `n` hosts on one switch at `rate`.
pub fn star(n: u32, rate: BitRate, delay: Time) -> Topology {
    let mut b = GraphBuilder::new();
    let hosts: Vec<NodeId> = (0..n).map(|i| b.add_nic(i, 0)).collect();
    let sw = b.add_switch(1, 0, 0, n);
    for h in hosts {
        b.connect(h, sw, rate, 2.0, delay, Medium::Unspecified);
    }
    b.finish(Shape::Imported, 1, n)
}

pub fn run(t: &Topology, p: &SimParams, dag: &MessageDag) -> RunResult {
    let r = sim::run(t, p, dag, &Faults::default(), RunOptions::default()).unwrap();
    r.check_conservation().unwrap();
    r
}

/// A uniformly random permutation of `n` hosts without fixed points (Sattolo's algorithm:
/// one cycle).
pub fn derangement(n: u32, seed: u64) -> Vec<u32> {
    let mut rng = Rng::new(seed);
    let mut v: Vec<u32> = (0..n).collect();
    for i in (1..n as usize).rev() {
        let j = (rng.next_u64() % i as u64) as usize;
        v.swap(i, j);
    }
    v
}

/// One message of `bytes` from every host i to `perm[i]`, all at time 0.
pub fn permutation(perm: &[u32], bytes: u64) -> MessageDag {
    let mut d = MessageDag::default();
    for (s, &t) in perm.iter().enumerate() {
        d.push(HostId(s as u32), HostId(t), bytes, Time::ZERO, &[]);
    }
    d
}

/// Aggregate goodput of a permutation as a fraction of the hosts' line rate x payload
/// efficiency: delivered bytes over the time to the last completion, per host.
pub fn permutation_efficiency(r: &RunResult, p: &SimParams, hosts: u32, rate: BitRate) -> f64 {
    let last = r
        .messages
        .iter()
        .map(|m| m.recv_ps.expect("received"))
        .max()
        .unwrap();
    let bytes: u64 = r.messages.iter().map(|m| m.bytes).sum();
    let per_host_bps = bytes as f64 * 8.0 / (last as f64 / 1e12) / hosts as f64;
    per_host_bps / (rate.bps() as f64 * p.payload_efficiency())
}

/// The mean over a run's messages of each one's rate (bytes over its completion time) as a
/// fraction of `rate` x payload efficiency.
pub fn mean_flow_efficiency(r: &RunResult, p: &SimParams, rate: BitRate) -> f64 {
    let line = rate.bps() as f64 * p.payload_efficiency();
    r.messages
        .iter()
        .map(|m| m.bytes as f64 * 8.0 / (m.fct_ps.unwrap() as f64 / 1e12) / line)
        .sum::<f64>()
        / r.messages.len() as f64
}

/// Bytes port `port` sent per sample interval, as a rate in Gb/s.
pub fn port_gbps(r: &RunResult, port: usize) -> Vec<f64> {
    let s = r.series.as_ref().expect("series");
    s.ports[port]
        .tx_bytes
        .iter()
        .map(|&b| b as f64 * 8.0 / s.interval_ps as f64 * 1e3)
        .collect()
}
