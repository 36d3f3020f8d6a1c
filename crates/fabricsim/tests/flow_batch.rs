//! Batched re-solves (`FlowParams::batch_tol`, `flow::BATCH_TOL`) against the exact solve
//! (tolerance 0) on 256-GPU cases of the scale benchmark's two shapes: ring all-reduces whose
//! steps finish nearly together, and an all-to-all. Every message's completion time stays
//! within 0.1% of the exact one (and the batching does move some: the check is not vacuous).

use fabricsim::flow::{self, BATCH_TOL, FlowParams, FlowStats};
use fabricsim::message::MessageDag;
use fabricsim::sim::{RunResult, SimParams};
use fabricsim::topology::{Kind, Tiers, Topology, TopologySpec, build};
use fabricsim::units::BitRate;
use fabricsim::workload::collective::{self, CollectiveSpec, Comm, Op};
use fabricsim::workload::placement::Placement;

/// 256 GPUs in 32 servers, rail-optimized in 3 tiers of 16-port 400G switches (as the
/// 131,072-GPU case, scaled down): rings and the all-to-all cross spines and cores.
fn fabric() -> Topology {
    build(&TopologySpec {
        gpus: 256,
        gpus_per_node: 8,
        nics_per_node: 8,
        kind: Kind::RailOptimized,
        tiers: Tiers::Fixed(3),
        oversubscription: (1, 1),
        switch_radix: 16,
        port_rate: BitRate::gbps(400),
        planes: 1,
    })
    .unwrap()
}

fn dag(topo: &Topology, op: Op, bytes: u64, channels: u32) -> MessageDag {
    let place = Placement::on_topology(topo, 8);
    let spec = CollectiveSpec::with_defaults(op, bytes, channels);
    // H100 NVLink 4, 450 GB/s one way (NVIDIA H100 datasheet).
    collective::compile(&spec, &Comm::world(&place), BitRate::gbps(3_600)).unwrap()
}

fn run(topo: &Topology, dag: &MessageDag, tol: f64) -> (RunResult, FlowStats) {
    let fp = FlowParams {
        batch_tol: tol,
        ..FlowParams::default()
    };
    flow::run(topo, &SimParams::roce(), dag, &fp).unwrap()
}

/// Largest relative difference of the messages' completion times (finish_ps) and of the end.
fn worst_error(exact: &RunResult, batched: &RunResult) -> f64 {
    let rel = |a: u64, b: u64| (a as f64 - b as f64).abs() / a as f64;
    let mut worst = rel(exact.sim.end_ps, batched.sim.end_ps);
    for (e, b) in exact.messages.iter().zip(&batched.messages) {
        worst = worst.max(rel(e.finish_ps.unwrap(), b.finish_ps.unwrap()));
    }
    worst
}

fn check(op: Op, bytes: u64, channels: u32) {
    let topo = fabric();
    let d = dag(&topo, op, bytes, channels);
    let (exact, se) = run(&topo, &d, 0.0);
    let (batched, sb) = run(&topo, &d, BATCH_TOL);
    let err = worst_error(&exact, &batched);
    println!(
        "{}: {} messages; exact {} solves ({} flows), batched {} solves ({} flows); worst \
         completion error {:.2e}",
        op.name(),
        d.messages.len(),
        se.solve.resolves,
        se.solve.flows_solved,
        sb.solve.resolves,
        sb.solve.flows_solved,
        err
    );
    assert!(
        err <= 1e-3,
        "{}: worst completion error {err:.2e}",
        op.name()
    );
    assert!(
        err > 0.0,
        "{}: the batched run moved no completion",
        op.name()
    );
}

#[test]
fn ring_all_reduce_batched_within_a_tenth_of_a_percent() {
    check(Op::AllReduce, 256 << 20, 1);
}

#[test]
fn all_to_all_batched_within_a_tenth_of_a_percent() {
    check(Op::AllToAll, 16 << 20, 1);
}
