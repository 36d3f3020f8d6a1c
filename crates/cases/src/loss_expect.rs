//! The step's loss expectation (`fabricsim::workload::train::loss_cost`) against seed-averaged
//! packet-engine runs: one ring all-reduce over 16 single-GPU servers of a fabric profile, its
//! completion time and retransmissions at a per-link loss rate, expected (the lossless run plus
//! the expected loss cost of its DAG) and measured (the mean over seeds with its Student-t 95%
//! interval, `fabricsim_core::estimate::Estimate`). `fabricsim-lab loss-expect` writes the table
//! of `docs/loss-expectation.md`; `tests/loss_expectation.rs` checks two points of it.

use fabricsim::compare::engine::{Span, makespan, params};
use fabricsim::compare::variant::{Tune, Variant};
use fabricsim::engine_choice::EngineChoice;
use fabricsim::estimate::Estimate;
use fabricsim::message::MessageDag;
use fabricsim::scenario::Scenario;
use fabricsim::sim::Transport;
use fabricsim::topology::Topology;
use fabricsim::units::BitRate;
use fabricsim::workload::collective::{Algo, CollectiveSpec, Comm, Op, compile};
use fabricsim::workload::placement::Placement;
use fabricsim::workload::train::loss_cost::{CallLoss, LossSetup, dag_loss};

/// Servers (8 GPUs and 8 NICs each) of the case's cluster; the ring has one GPU of each.
pub const SERVERS: u32 = 16;
/// The all-reduce's size: 4 MiB, 16 KiB per rank and channel per ring step.
pub const BYTES: u64 = 4 << 20;
/// The loss rates of the table.
pub const RATES: [f64; 4] = [1e-5, 1e-4, 1e-3, 1e-2];

/// A fabric of the table: its profile and recovery.
#[derive(Clone, Copy, Debug)]
pub struct Fabric {
    pub profile: &'static str,
    pub recovery: Transport,
}

/// The two fabrics of the table: InfiniBand with selective repeat, RoCE with go-back-N.
pub const FABRICS: [Fabric; 2] = [
    Fabric {
        profile: "ib-ndr",
        recovery: Transport::SelectiveRepeat,
    },
    Fabric {
        profile: "roce-400g",
        recovery: Transport::GoBackN,
    },
];

/// One point: expected against measured.
#[derive(Clone, Debug)]
pub struct Point {
    pub fabric: Fabric,
    pub loss: f64,
    /// The local ACK timeout of the runs.
    pub rto_s: f64,
    pub lossless_s: f64,
    pub expected: CallLoss,
    /// Completion time (s), retransmitted packets and timeouts over the seeds.
    pub time: Estimate,
    pub retransmitted: Estimate,
    pub timeouts: Estimate,
}

impl Point {
    pub fn expected_s(&self) -> f64 {
        self.lossless_s + self.expected.stall_s
    }
}

fn cluster(profile: &str) -> Scenario {
    let toml = format!(
        "[cluster]\ngpus = {}\ngpus_per_node = 8\nnics_per_node = 8\ngpu = \"h100\"\n\
         [fabric]\nprofile = \"{profile}\"\n[topology]\nkind = \"fat-tree\"\n",
        8 * SERVERS
    );
    Scenario::parse("loss-expectation.toml", &toml).expect("the case's scenario parses")
}

fn all_reduce(topo: &Topology) -> MessageDag {
    let place = Placement::on_topology(topo, 8);
    let spec = CollectiveSpec {
        algo: Algo::Ring,
        ..CollectiveSpec::with_defaults(Op::AllReduce, BYTES, 2)
    };
    let comm = Comm {
        place: &place,
        gpus: (0..SERVERS).map(|s| 8 * s).collect(),
    };
    compile(&spec, &comm, BitRate::gbps(7200)).expect("the ring compiles")
}

/// The point of `fabric` at per-link `loss` over `seeds` seeds (1..=seeds), with the ACK
/// timeout 4.096 us x 2^`timeout_exp` (the profile's when `None`).
pub fn point(fabric: Fabric, loss: f64, seeds: u64, timeout_exp: Option<u8>) -> Point {
    let s = cluster(fabric.profile);
    let (design, topo, _) = fabricsim::plan::run(&s).expect("the case's cluster plans");
    let v = Variant {
        name: fabric.profile.into(),
        profile: fabric.profile.into(),
        recovery: fabric.recovery,
        loss_rate: loss,
        ber: 0.0,
        loss_interval: None,
        tuned: true,
        tune: Tune::default(),
        engine: EngineChoice::Packet,
        failed_uplinks: 0,
        phy: Default::default(),
    };
    let dag = all_reduce(&topo);
    let mut p = params(&v, &design, 1).expect("the profile's parameters");
    if let Some(e) = timeout_exp {
        p.timeout_exp = e;
    }
    let rate = BitRate::gbps(design.profile.ports.rate_gbps as u64);
    let setup = LossSetup::of(&p, &topo, rate).expect("a lossy point");
    let mut clean = p.clone();
    clean.loss_rate = 0.0;
    let lossless_s = makespan(&topo, &clean, &dag, EngineChoice::Packet)
        .expect("the lossless run")
        .time
        .as_secs_f64();
    let expected = dag_loss(&dag, &topo, &setup, lossless_s);
    let (mut t, mut r, mut to) = (Vec::new(), Vec::new(), Vec::new());
    for seed in 1..=seeds {
        p.seed = seed;
        let Span {
            time, counters: c, ..
        } = makespan(&topo, &p, &dag, EngineChoice::Packet).expect("a lossy run");
        t.push(time.as_secs_f64());
        r.push(c.retransmitted_packets as f64);
        to.push(c.timeouts as f64);
    }
    let est = |x: &[f64]| Estimate::of(x).expect("two or more seeds");
    Point {
        fabric,
        loss,
        rto_s: p.ack_timeout().as_secs_f64(),
        lossless_s,
        expected,
        time: est(&t),
        retransmitted: est(&r),
        timeouts: est(&to),
    }
}
