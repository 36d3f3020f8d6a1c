//! Small topologies and helpers shared by the packet-engine tests.

use std::path::Path;

use fabricsim::message::MessageDag;
use fabricsim::scenario::Scenario;
use fabricsim::scenario::sim::{SimSetup, build};
use fabricsim::sim::{self, Faults, RunOptions, RunResult, SimParams};
use fabricsim::topology::{GraphBuilder, Medium, NodeId, Shape, Topology};
use fabricsim::units::{BitRate, Time};

/// Two hosts joined through `tiers` levels of switches: host A up to a top switch and down to
/// host B, 2 x tiers links (hops). `delays[i]` is the delay of link i counted from A.
pub fn pair(tiers: u8, rate: BitRate, delays: &[Time]) -> Topology {
    assert_eq!(delays.len(), 2 * tiers as usize);
    let mut b = GraphBuilder::new();
    let a = b.add_nic(0, 0);
    let z = b.add_nic(1, 0);
    let mut left: Vec<NodeId> = Vec::new();
    let mut right: Vec<NodeId> = Vec::new();
    for t in 1..tiers {
        left.push(b.add_switch(t, 0, 0, 8));
        right.push(b.add_switch(t, 1, 0, 8));
    }
    let top = b.add_switch(tiers, 0, 0, 8);
    let h = tiers as usize;
    // Left side: A -> l1 -> ... -> top, links 0..h.
    let mut lower = a;
    for (i, &n) in left.iter().chain(std::iter::once(&top)).enumerate() {
        b.connect(lower, n, rate, 1.0, delays[i], Medium::Unspecified);
        lower = n;
    }
    // Right side: top -> ... -> B, links h..2h (connected lower -> upper).
    let mut chain = vec![z];
    chain.extend(right.iter().copied());
    chain.push(top);
    for i in 0..h {
        let (lo, hi) = (chain[h - 1 - i], chain[h - i]);
        b.connect(lo, hi, rate, 1.0, delays[h + i], Medium::Unspecified);
    }
    let t = b.finish(Shape::Imported, tiers, 2);
    t.check().unwrap();
    t
}

/// `n` hosts on one switch; host i's link runs at `rates[i]`.
pub fn star(rates: &[BitRate], delay: Time) -> Topology {
    let mut b = GraphBuilder::new();
    let hosts: Vec<NodeId> = (0..rates.len()).map(|i| b.add_nic(i as u32, 0)).collect();
    let sw = b.add_switch(1, 0, 0, rates.len() as u32);
    for (h, r) in hosts.iter().zip(rates) {
        b.connect(*h, sw, *r, 1.0, delay, Medium::Unspecified);
    }
    b.finish(Shape::Imported, 1, rates.len() as u32)
}

pub fn run(t: &Topology, p: &SimParams, dag: &MessageDag, f: &Faults) -> RunResult {
    let r = sim::run(t, p, dag, f, RunOptions::default()).unwrap();
    r.check_conservation().unwrap();
    r
}

/// The packet-engine run of scenario `text` (as `fabricsim sim` builds it, paths relative to
/// the working directory).
pub fn setup(text: &str) -> SimSetup {
    build(
        &Scenario::parse("t.toml", text).unwrap(),
        Path::new("."),
        None,
    )
    .unwrap()
}

/// `run` of a built scenario.
pub fn run_setup(s: &SimSetup) -> RunResult {
    run(&s.net.topo, &s.params, &s.dag, &s.faults)
}

/// Wire bytes of a data packet carrying `payload`.
pub fn wire(p: &SimParams, payload: u32) -> u64 {
    (p.data_frame_bytes(payload) + p.wire_overhead_bytes) as u64
}

/// Where the ns-3 peer scenarios are: $FABRICSIM_PEER_DIR, or `shared/peer-scenarios` next to
/// the repository (CI) or next to its parent (a worktree).
pub fn peer_dir() -> std::path::PathBuf {
    if let Ok(d) = std::env::var("FABRICSIM_PEER_DIR") {
        return d.into();
    }
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    for up in ["..", "../.."] {
        let d = root.join(up).join("shared/peer-scenarios");
        if d.is_dir() {
            return d;
        }
    }
    panic!(
        "peer scenarios not found: set FABRICSIM_PEER_DIR (they live in ../shared/peer-scenarios)"
    );
}
