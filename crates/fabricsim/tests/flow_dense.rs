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
    let d = classes(hosts, bytes, &fp).unwrap();
    (per_flow, d.end_ps, d)
}

/// The all-to-all of `bytes` per pair over `hosts` hosts (a server each) as flow classes.
fn classes(hosts: u32, bytes: u64, fp: &FlowParams) -> Result<dense::DenseRun, PerFlow> {
    let topo = fat_tree(hosts, 8);
    let ids: Vec<HostId> = (0..hosts).map(HostId).collect();
    let servers: Vec<u32> = (0..hosts).collect();
    let a = AllToAll {
        hosts: &ids,
        servers: &servers,
        bytes,
        channels: 1,
        nvlink: BitRate::gbps(3600),
    };
    dense::all_to_all(&topo, &SimParams::roce(), fp, &a).unwrap()
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
        assert!(
            diff <= byte_ps,
            "{per_flow} vs {classes}: {diff} ps > {byte_ps} ps"
        );
    }
}

#[test]
fn hashed_ecmp_with_few_flows_per_link_stays_per_flow() {
    // 32 hosts: 31 flows per NIC, some 30 per link between switches: hashing them leaves
    // links well above the mean (the spread sqrt(2 ln L / F) is far past
    // `calibration::HASH_SPREAD_MAX`), which the even split of the classes leaves out.
    let fp = FlowParams {
        lossless_max_active: 0,
        ..FlowParams::default()
    };
    assert_eq!(classes(32, 1 << 20, &fp).err(), Some(PerFlow::Collisions));
}

#[test]
fn small_or_lossy_runs_stay_per_flow() {
    let run = |fp: &FlowParams| classes(16, 4096, fp).err();
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

/// 256 GPUs (32 servers) on `fabric`, run on the flow engine.
fn cluster(fabric: &str) -> fabricsim::workload::run_engine::Cluster {
    cluster_with(&[("--gpus", "256"), ("--fabric", fabric)])
}

/// The defaults with `flags`, run on the flow engine.
fn cluster_with(flags: &[(&str, &str)]) -> fabricsim::workload::run_engine::Cluster {
    let mut s = fabricsim::scenario::Scenario::defaults();
    let pairs: Vec<_> = flags
        .iter()
        .map(|(f, v)| (f.to_string(), v.to_string()))
        .collect();
    s.apply_flags(&pairs).unwrap();
    let (design, topo) = s.design_and_topology().unwrap();
    let engine = fabricsim::engine_choice::EngineChoice::Flow;
    fabricsim::workload::run_engine::Cluster::of(design, topo, engine).unwrap()
}

/// The collective's all-to-all as the driver runs it (`Cluster::run_dense`) carries what its
/// compiled DAG carries, NVLink inside the servers included, and ends within the flow engine's
/// collective-time tolerance (5%) of the same DAG run per message, on ib-ndr (adaptive
/// routing: load-aware subflows per message, `PathModel::Adaptive`); on roce-400g (hashed
/// ECMP) so few GPUs run per message.
#[test]
fn the_driver_s_dense_all_to_all_carries_the_compiled_dag() {
    use fabricsim::message::Path;
    use fabricsim::workload::collective::{CollectiveSpec, Comm, Op, compile};

    let ib = cluster("ib-ndr");
    let comm = Comm::world(&ib.place);
    // 2 channels x 256 ranks x 2 KB: 126,976 fabric flows, above the lossless models' limit,
    // between 8 leaves on ib-ndr, 4 on roce-400g.
    let spec = CollectiveSpec::with_defaults(Op::AllToAll, 1 << 20, 2);
    let d = ib.run_dense(&spec, &comm).unwrap().unwrap();
    let dag = compile(&spec, &comm, ib.nvlink()).unwrap();
    let on = |path| -> Vec<u64> {
        let m = dag.messages.iter().filter(|m| m.path == path);
        m.map(|m| m.bytes).collect()
    };
    let (net, nv) = (on(Path::Net), on(Path::NvLink));
    assert_eq!(d.flows, net.len() as u64);
    assert_eq!(d.fabric_bytes, net.iter().sum::<u64>());
    assert_eq!(d.nvlink_bytes, nv.iter().sum::<u64>());
    let per_message = ib.run(&dag, None).unwrap().time.ps();
    eprintln!(
        "per message {per_message} ps, as classes {} ps, {d:?}",
        d.end_ps
    );
    assert!(per_message.abs_diff(d.end_ps) as f64 <= 0.05 * per_message as f64);
    let roce = cluster("roce-400g");
    let comm = Comm::world(&roce.place);
    let why = roce.run_dense(&spec, &comm).unwrap().err();
    assert_eq!(why, Some(Some(PerFlow::Collisions)));
    assert!(d.classes > 1);
}

/// On a fabric of parallel planes (rail-only) the dense all-to-all crosses planes, which only
/// the per-message run relays over NVLink (PXN): the classes decline and say why.
#[test]
fn a_fabric_of_planes_runs_the_dense_all_to_all_per_message() {
    use fabricsim::workload::collective::{CollectiveSpec, Comm, Op};
    let c = cluster_with(&[
        ("--gpus", "256"),
        ("--fabric", "ib-ndr"),
        ("--topology", "rail-only"),
    ]);
    assert!(c.topology.planes > 1);
    let comm = Comm::world(&c.place);
    let spec = CollectiveSpec::with_defaults(Op::AllToAll, 1 << 20, 2);
    assert!(c.dense_candidate(&spec, &comm));
    let why = c.run_dense(&spec, &comm).unwrap().err();
    assert_eq!(why, Some(Some(PerFlow::Planes)));
    assert!(PerFlow::Planes.said().is_some());
}
