//! A dense all-to-all as flow classes (`flow::dense`) against the same all-to-all run per
//! flow: with ECMP as an even split (`PathModel::Spray` over a leaf's every up port, the
//! per-flow form of the classes' split) the last completion agrees within the integer
//! rounding of the two solvers' rates.

use fabricsim_cases::flow_cases::{all_to_all, fat_tree};

use fabricsim::flow::dense::{self, AllToAll, PerFlow};
use fabricsim::flow::{self, FlowParams, PathModel};
use fabricsim::sim::SimParams;
use fabricsim::topology::HostId;
use fabricsim::units::BitRate;

/// Per-flow and dense end times of an all-to-all of `bytes` per pair over `hosts` hosts (a
/// leaf of 4 hosts and 4 up ports).
fn both(hosts: u32, bytes: u64, paths: PathModel) -> (u64, u64, dense::DenseRun) {
    let topo = fat_tree(hosts, 8);
    let p = SimParams::roce();
    // Above `lossless_max_active` flows the per-flow engine ends its lossless models at its
    // first solve, as every run the classes take does (they need more flows than that).
    let fp = FlowParams {
        paths,
        lossless_max_active: 0,
        ..FlowParams::default()
    };
    let dag = all_to_all(hosts, bytes);
    let (r, _) = flow::run(&topo, &p, &dag, &fp).unwrap();
    let per_flow = r.messages.iter().filter_map(|m| m.finish_ps).max().unwrap();
    let ids: Vec<HostId> = (0..hosts).map(HostId).collect();
    let servers: Vec<u32> = (0..hosts).collect();
    let a = AllToAll {
        hosts: &ids,
        servers: &servers,
        bytes,
        channels: 1,
        nvlink: BitRate::gbps(3600),
    };
    let d = dense::all_to_all(&topo, &p, &fp, &a).unwrap().unwrap();
    (per_flow, d.end_ps, d)
}

#[test]
fn classes_end_with_the_per_flow_even_split() {
    for (hosts, bytes) in [(16, 64 << 10), (32, 1 << 20), (32, 4096)] {
        let (per_flow, classes, d) = both(hosts, bytes, PathModel::Spray { paths: 4 });
        eprintln!("{hosts} hosts {bytes} B: per flow {per_flow} ps, classes {classes} ps, {d:?}");
        assert_eq!(d.flows, (hosts * (hosts - 1)) as u64);
        assert_eq!(d.fabric_bytes, d.flows * bytes);
        // The bound: the per-flow split cuts a message's wire bytes into 4 subflows that
        // differ by a byte, a byte's time at a subflow's share of its NIC (400 Gb/s over
        // (hosts - 1) x 4 subflows); both solvers floor their rates to the bit/s.
        let byte_ps = 8 * 1_000_000_000_000 * (hosts as u64 - 1) * 4 / 400_000_000_000;
        let diff = per_flow.abs_diff(classes);
        assert!(diff <= byte_ps, "{per_flow} vs {classes}: {diff} ps > {byte_ps} ps");
    }
}

#[test]
fn hashed_ecmp_differs_by_its_collisions_only() {
    // Hashing puts some links over the mean: the per-flow run ends later, not earlier, and
    // within the flow engine's collective-time tolerance of the packet engine (5%) here.
    let (per_flow, classes, _) = both(32, 1 << 20, PathModel::Hash);
    eprintln!("hash: per flow {per_flow} ps, classes {classes} ps");
    assert!(classes <= per_flow + per_flow / 1_000_000);
}

#[test]
fn small_lossy_or_uneven_runs_stay_per_flow() {
    let topo = fat_tree(16, 8);
    let p = SimParams::roce();
    let ids: Vec<HostId> = (0..16).map(HostId).collect();
    let servers: Vec<u32> = (0..16).collect();
    let a = AllToAll {
        hosts: &ids,
        servers: &servers,
        bytes: 4096,
        channels: 1,
        nvlink: BitRate::gbps(3600),
    };
    let run = |fp: &FlowParams| dense::all_to_all(&topo, &p, fp, &a).unwrap().err();
    assert_eq!(run(&FlowParams::default()), Some(PerFlow::Few));
    let lossy = FlowParams {
        loss: flow::LossModel::of(&SimParams {
            loss_rate: 1e-4,
            ..SimParams::roce()
        }),
        lossless_max_active: 0,
        ..FlowParams::default()
    };
    assert!(lossy.loss.is_some());
    assert_eq!(run(&lossy), Some(PerFlow::Loss));
}
