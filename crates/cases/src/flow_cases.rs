//! The shared cases of the flow/packet cross-validation (issue 7): permutation, incast, ring
//! all-reduce and all-to-all on 128 to 1,024 hosts, on a fabric profile's parameters, with and
//! without random loss. Used by `crates/fabricsim/tests/flow_xval.rs` and the lab (`fabricsim-lab`).

use fabricsim::engine_choice::{self, EngineKind};
use fabricsim::message::MessageDag;
use fabricsim::rng::{Rng, Stream};
use fabricsim::scenario::Scenario;
use fabricsim::sim::results::percentile;
use fabricsim::sim::{Faults, RunOptions, RunResult, SimParams, params_from_design};
use fabricsim::topology::{HostId, Kind, Tiers, Topology, TopologySpec, build};
use fabricsim::units::{BitRate, Time};

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

/// A 2-tier fat tree of `hosts` hosts (one NIC each) and `radix`-port 400G switches: `radix/2`
/// hosts per leaf.
pub fn fat_tree(hosts: u32, radix: u32) -> Topology {
    build(&TopologySpec {
        gpus: hosts,
        gpus_per_node: 1,
        nics_per_node: 1,
        kind: Kind::FatTree,
        tiers: Tiers::Fixed(2),
        oversubscription: (1, 1),
        switch_radix: radix,
        port_rate: BitRate::gbps(400),
        planes: 1,
    })
    .unwrap()
}

/// Every host sends `bytes` to another, a random permutation without fixed points.
pub fn permutation(hosts: u32, bytes: u64, seed: u64) -> MessageDag {
    let mut perm: Vec<u32> = (0..hosts).collect();
    Rng::stream(seed, Stream::Test(5), 0).shuffle(&mut perm);
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

/// An incast to host 0 with several flows per input port of its leaf: hosts 1-3 (on host 0's
/// leaf: one flow per input port) and 96 hosts spread over the last seven eighths of the
/// fabric (on other leaves of a 2-tier fabric, whose flows enter host 0's leaf over its up
/// ports, several per port), each sending `bytes`.
pub fn mixed_incast(hosts: u32, bytes: u64) -> MessageDag {
    let mut dag = MessageDag::default();
    let far = hosts / 8;
    for s in (1..=3).chain((0..96).map(|i| far + i * (hosts - far) / 96)) {
        dag.push(HostId(s), HostId(0), bytes, Time::ZERO, &[]);
    }
    dag
}

/// The incast of [`incast`] (`senders` hosts to host 0, `bytes` each) plus `victims` flows of
/// `victim_bytes` that share the incast's queues but not its receiver (the victim flows of PFC and
/// credit back-pressure: Zhu et al., DCQCN, SIGCOMM 2015, 2; Pfister & Norton, "Hot spot
/// contention and combining", 1985): victim `k` goes from a host of the fabric's second half
/// that is not a sender to host `k + 1` when `k` is even (another host of the receiver's leaf:
/// through the downlinks into that leaf that the incast fills), and from the NIC of an incast
/// sender of the second half to a non-sending host of the first half's upper quarter when `k`
/// is odd (sharing the sender's NIC and uplinks with its incast flow). Victims follow the
/// incast's messages in the DAG.
pub fn incast_victims(
    hosts: u32,
    senders: u32,
    bytes: u64,
    victims: u32,
    victim_bytes: u64,
) -> MessageDag {
    let mut dag = incast(hosts, senders, bytes);
    let sending: Vec<u32> = dag.messages.iter().map(|m| m.src.0).collect();
    let mut idle = (hosts / 2..hosts).rev().filter(|h| !sending.contains(h));
    let mut busy = (hosts / 2..hosts).rev().filter(|h| sending.contains(h));
    let mut far = (hosts / 4..hosts / 2)
        .rev()
        .filter(|h| !sending.contains(h));
    for k in 0..victims {
        let (s, d) = if k % 2 == 0 {
            (idle.next(), Some(k + 1))
        } else {
            (busy.next(), far.next())
        };
        let (s, d) = (s.expect("enough hosts"), d.expect("enough hosts"));
        dag.push(HostId(s), HostId(d), victim_bytes, Time::ZERO, &[]);
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
#[derive(Clone)]
pub struct Case {
    pub name: String,
    pub fabric: &'static str,
    pub hosts: u32,
    pub loss: f64,
    /// The local ACK timeout exponent (4.096 us x 2^exp): the profiles' 20 without loss,
    /// [`timeout_exp`] with.
    pub timeout_exp: u8,
    pub dag: MessageDag,
    /// A collective (its time is compared) rather than independent flows.
    pub collective: bool,
    /// Seeds pooled (see `LOSS_SEEDS`).
    pub seeds: u64,
}

/// The shortest ACK timeout of the lossy cases: 4.096 us x 2^4 = 65.5 us. With the profiles'
/// NCCL default (2^20: 4.29 s) a case's mean FCT is set by how many of its ~100 messages lose
/// their tail (a Poisson count near 1), which no model and no second packet run reproduces;
/// with a timeout a few FCTs long the goodput penalty is what the mean measures.
pub const LOSS_TIMEOUT_EXP: u8 = 4;

/// The ACK timeout exponent of lossy case `c`, one rule for every case: the smallest `e >=
/// LOSS_TIMEOUT_EXP` whose timeout (4.096 us x 2^e) exceeds the largest FCT of the case's
/// lossless run on the flow engine. A message's FCT bounds the round trip of its packets with
/// their queueing, and a deployment keeps its RTO above that round trip; below it (a 65.5 us
/// RTO in a 0.7 ms incast) each resend waits in the queue past the timer and times out again,
/// a regime the flow engine does not model and warns about (`flow::LossModel::rto_warning`).
pub fn timeout_exp(c: &Case) -> u8 {
    let clean = Case {
        loss: 0.0,
        seeds: 1,
        ..c.clone()
    };
    let worst = run(&clean, EngineKind::Flow, 1)
        .summary
        .max_fct_ps
        .unwrap_or(0);
    (LOSS_TIMEOUT_EXP..=31)
        .find(|&e| Time(4_096_000u64 << e).ps() > worst)
        .expect("an FCT below the longest ACK timeout (4.096 us x 2^31)")
}

/// The cross-validation cases: each traffic pattern on ib-ndr and roce-400g, without loss
/// and with 0.1% loss per packet per link.
pub fn cases() -> Vec<Case> {
    let mut v = Vec::new();
    for fabric in ["ib-ndr", "roce-400g"] {
        for loss in [0.0, 0.001] {
            // Seeds of each engine pooled per lossy case, [ib-ndr, roce-400g] (by the packet
            // engine's cost of a run and the sampling error of its p99: a 32-message incast run
            // costs ~25 ms, a 1 MB permutation ~25 ms on roce-400g and ~120 ms on ib-ndr's
            // adaptive routing): `tests/flow_xval.rs` asserts a quantity only where its sampling
            // error over these is a small part of the tolerance.
            let at = if fabric == "ib-ndr" { 0 } else { 1 };
            let mut add =
                |name: &str, hosts: u32, dag: MessageDag, collective: bool, seeds: [u64; 2]| {
                    v.push(Case {
                        name: name.to_string(),
                        fabric,
                        hosts,
                        loss,
                        timeout_exp: 20,
                        dag,
                        collective,
                        seeds: if loss > 0.0 { seeds[at] } else { 1 },
                    })
                };
            add(
                "permutation 1 MB",
                128,
                permutation(128, 1 << 20, 1),
                false,
                [8, 64],
            );
            add(
                "permutation 256 KB",
                1024,
                permutation(1024, 256 << 10, 2),
                false,
                [4, 4],
            );
            add(
                "incast 32:1 1 MB",
                128,
                incast(128, 32, 1 << 20),
                false,
                [64, 288],
            );
            add(
                "incast 99:1 mixed ports",
                1024,
                mixed_incast(1024, 256 << 10),
                false,
                [8, 64],
            );
            add(
                "ring all-reduce 64 KB",
                128,
                ring_of_servers(128, 64 << 10),
                true,
                [160, 160],
            );
            add(
                "all-to-all 16 KB",
                128,
                all_to_all(128, 16 << 10),
                true,
                [4, 4],
            );
            if loss == 0.0 {
                // Beyond 128 hosts (`fabricsim-lab dense`; 256 KB x256 is left to it: 20 s
                // of test time): more flows at once than `calibration::LOSSLESS_MODELS_MAX_ACTIVE`,
                // so the lossless models are off.
                for hosts in [256, 512] {
                    let name = format!("all-to-all 16 KB x{hosts}");
                    add(&name, hosts, all_to_all(hosts, 16 << 10), true, [1, 1]);
                }
            }
            if loss == 0.0 {
                let dag = incast_victims(128, 32, 1 << 20, 8, 1 << 20);
                add("incast 32:1 + victims", 128, dag, false, [1, 1]);
            }
        }
    }
    for c in v.iter_mut().filter(|c| c.loss > 0.0) {
        c.timeout_exp = timeout_exp(c);
    }
    v
}

/// A case's results over its seeds: every message's FCT pooled, and each run's last
/// completion and p99.
pub struct Pooled {
    /// Sorted.
    pub fcts: Vec<u64>,
    pub lasts: Vec<u64>,
    /// Each run's nearest-rank p99 FCT (its results' `fct_p99_ps`).
    pub run_p99s: Vec<u64>,
}

fn mean_sd(v: &[u64]) -> (f64, f64) {
    let n = v.len().max(1) as f64;
    let mean = v.iter().sum::<u64>() as f64 / n;
    let var = v.iter().map(|&x| (x as f64 - mean).powi(2)).sum::<f64>() / (n - 1.0).max(1.0);
    (mean, var.sqrt())
}

impl Pooled {
    pub fn mean(&self) -> f64 {
        mean_sd(&self.fcts).0
    }
    /// Nearest-rank p99 of the pooled FCTs (the results' `fct_p99_ps` of one run).
    pub fn p99(&self) -> f64 {
        percentile(&self.fcts, 0.99).unwrap_or(0) as f64
    }
    /// Mean over the seeds of the last completion (the collective time).
    pub fn last(&self) -> f64 {
        mean_sd(&self.lasts).0
    }
    /// Mean over the seeds of each run's p99 FCT: the p99 a run reports (`fct_p99_ps`), in
    /// expectation. A run's p99 is one of its largest FCTs (the 2nd largest of 99 messages, the
    /// largest of 32), so its mean moves smoothly with the share of messages that time out,
    /// where the pooled p99 jumps by an RTO when that share crosses 1%; its sampling error is
    /// a standard error of a mean ([`Self::rel_se_run_p99`]).
    pub fn run_p99(&self) -> f64 {
        mean_sd(&self.run_p99s).0
    }
    /// The distribution-free 95% interval of the pooled p99 (order statistics at ranks
    /// `N q -+ 2 sqrt(N q (1 - q))`, the normal approximation of the binomial count below the
    /// quantile), relative to the p99: wide when the p99 falls on a cliff of the distribution
    /// (the share of messages that hit a timeout near 1%). Not conservative beyond need: the
    /// exact binomial ranks (the largest `u` with `P(Bin(N, 0.01) <= N - u) <= 2.5%`, the
    /// smallest `l` with `P(Bin(N, 0.01) >= N - l + 1) <= 2.5%`) give the same order
    /// statistics within one rank on the lossy cases for N = 512 to 51,200, and no upper bound
    /// below the maximum under N = 512.
    pub fn p99_rel_interval(&self) -> f64 {
        let n = self.fcts.len() as f64;
        let half = 2.0 * (n * 0.99 * 0.01).sqrt() / n;
        let lo = percentile(&self.fcts, 0.99 - half).unwrap_or(0) as f64;
        let hi = percentile(&self.fcts, (0.99 + half).min(1.0)).unwrap_or(0) as f64;
        (hi - lo) / self.p99().max(1.0)
    }
    /// Standard error of the mean FCT and of the mean last completion, relative to each.
    pub fn rel_se(&self) -> (f64, f64) {
        (rel_se(&self.fcts), rel_se(&self.lasts))
    }
    /// Standard error of [`Self::run_p99`], relative to it.
    pub fn rel_se_run_p99(&self) -> f64 {
        rel_se(&self.run_p99s)
    }
}

/// Standard error of the mean of `v`, relative to the mean (0 under two samples).
fn rel_se(v: &[u64]) -> f64 {
    let (m, sd) = mean_sd(v);
    if v.len() < 2 {
        0.0
    } else {
        sd / (v.len() as f64).sqrt() / m
    }
}

/// Mean and p99 (nearest rank, `results::percentile`) FCT of a run's messages, us.
pub fn fct_mean_p99_us(r: &RunResult) -> (f64, f64) {
    let mut f: Vec<u64> = r.messages.iter().filter_map(|m| m.fct_ps).collect();
    f.sort_unstable();
    let mean = f.iter().sum::<u64>() as f64 / f.len() as f64 / 1e6;
    (mean, percentile(&f, 0.99).unwrap_or(0) as f64 / 1e6)
}

/// Relative error of `flow` against `packet`.
pub fn err(packet: f64, flow: f64) -> f64 {
    (flow - packet) / packet
}

/// One line of the comparison table: mean FCT, pooled p99 FCT, the mean of each run's p99 FCT
/// and collective time, packet / flow, and the seeds pooled.
pub fn row(c: &Case, p: &Pooled, f: &Pooled) -> String {
    let us = |x: f64| x / 1e6;
    let cell = |a: f64, b: f64| {
        format!(
            "{:>9.2} / {:>9.2} ({:+6.1}%)",
            us(a),
            us(b),
            100.0 * err(a, b)
        )
    };
    format!(
        "| {:<22} | {:<9} | {:>4.1}% | {:>5} | {} | {} | {} | {} |",
        c.name,
        c.fabric,
        100.0 * c.loss,
        c.seeds,
        cell(p.mean(), f.mean()),
        cell(p.p99(), f.p99()),
        cell(p.run_p99(), f.run_p99()),
        cell(p.last(), f.last()),
    )
}

/// The table's heading.
pub const HEADER: &str = "| case | fabric | loss | seeds | mean FCT us packet / flow | p99 FCT us packet / flow | run p99 FCT us packet / flow | collective us packet / flow |\n|---|---|---|---|---|---|---|---|";

/// Runs `c` on `kind` over its seeds (`seed` 1, 2, ... of both engines' random streams).
pub fn pooled(c: &Case, kind: EngineKind) -> Pooled {
    let (mut fcts, mut lasts, mut run_p99s) = (Vec::new(), Vec::new(), Vec::new());
    for seed in 1..=c.seeds {
        let r = run(c, kind, seed);
        assert_eq!(r.sim.engine, kind.name());
        fcts.extend(r.messages.iter().filter_map(|m| m.fct_ps));
        run_p99s.push(r.summary.fct_p99_ps.unwrap_or(0));
        lasts.push(
            r.messages
                .iter()
                .filter_map(|m| m.finish_ps)
                .max()
                .unwrap_or(0),
        );
    }
    fcts.sort_unstable();
    Pooled {
        fcts,
        lasts,
        run_p99s,
    }
}

/// Runs `c` on `kind` with random streams from `seed`.
pub fn run(c: &Case, kind: EngineKind, seed: u64) -> RunResult {
    let (topo, mut p) = fabric(c.hosts, c.fabric);
    p.seed = seed;
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

/// The 1,024-GPU 99:1 x 1 MB incast with eight 1 MB victims (`incast_victims`;
/// `fabricsim-lab hol-trace`) on `fabric`, run by both engines.
pub struct VictimRuns {
    pub topo: Topology,
    pub p: SimParams,
    pub dag: MessageDag,
    /// Incast senders: victim `k` is message `senders + k`.
    pub senders: usize,
    pub packet: RunResult,
    pub flow: RunResult,
}

pub fn victim_runs(fabric_name: &str) -> VictimRuns {
    let senders = 99;
    let (topo, p) = fabric(1024, fabric_name);
    let dag = incast_victims(1024, senders as u32, 1 << 20, 8, 1 << 20);
    let packet =
        fabricsim::sim::run(&topo, &p, &dag, &Faults::default(), RunOptions::default()).unwrap();
    let fp = engine_choice::flow_params(&topo, &p);
    let (flow, _) = fabricsim::flow::run(&topo, &p, &dag, &fp).unwrap();
    VictimRuns {
        topo,
        p,
        dag,
        senders,
        packet,
        flow,
    }
}

/// Message `i`'s FCT in `r`, us.
pub fn fct_us(r: &RunResult, i: usize) -> f64 {
    r.messages[i].fct_ps.expect("completed") as f64 / 1e6
}

/// The directed links of message `m`'s first QP, as the packet engine routes it (static ECMP
/// hash or D-mod-K; the flow engine places it there too).
pub fn qp_links(topo: &Topology, p: &SimParams, dag: &MessageDag, m: usize) -> Vec<u32> {
    use fabricsim::flow::paths;
    let (msg_qp, ends) = fabricsim::sim::route::connection_qps(&dag.messages, &p.cc);
    let q = msg_qp[m];
    let (s, d) = ends[q as usize];
    let (fwd, _) = paths::qp_hashes(p, q, s, d);
    let router = paths::Router::new(topo, p.routing);
    let mut links = Vec::new();
    let hash = paths::PathModel::Hash;
    paths::subflow_links(topo, &router, hash, s, d, fwd, 0, |_| 0, &mut links);
    links
}
