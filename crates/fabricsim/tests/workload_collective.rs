//! Collective DAGs: bytes on the wire against the nccl-tests volumes, the
//! step structure of the dependencies, and where messages travel (NVLink vs rails).

use fabricsim::message::{MessageDag, Path};
use fabricsim::units::BitRate;
use fabricsim::workload::busbw;
use fabricsim::workload::collective::{Algo, CollectiveSpec, Comm, Op, compile};
use fabricsim::workload::placement::Placement;

const NVLINK: BitRate = BitRate::gbps(3600);

fn build(op: Op, algo: Algo, servers: u32, gpn: u32, bytes: u64, channels: u32) -> MessageDag {
    let place = Placement::dense(servers, gpn);
    let spec = CollectiveSpec {
        op,
        algo,
        bytes,
        root: 0,
        channels,
        chunk_bytes: 128 << 10,
        route: None,
    };
    compile(&spec, &Comm::world(&place), NVLINK).unwrap()
}

fn sent_by(dag: &MessageDag, host: u32) -> u64 {
    dag.messages
        .iter()
        .filter(|m| m.src.0 == host)
        .map(|m| m.bytes)
        .sum()
}

/// All ranks together send n * factor * S, and each rank exactly factor * S (S divisible by
/// everything involved). A ring's hop between servers leaves through its channel's NIC
/// (proxied, as NCCL does), so for rings spanning multi-GPU servers the per-rank check counts
/// the NVLink bytes per GPU and the fabric bytes per server.
fn assert_per_rank(op: Op, algo: Algo, servers: u32, gpn: u32, channels: u32) {
    let n = servers * gpn;
    let s: u64 = (3 * 5 * 7 * 64) << 14;
    let dag = build(op, algo, servers, gpn, s, channels);
    let want = busbw::bytes_per_rank(op, n, s);
    assert_eq!(
        dag.total_bytes() as f64,
        want * n as f64,
        "{op} {algo:?} n={n}: total"
    );
    let proxied = algo == Algo::Ring && servers > 1 && gpn > 1;
    for h in 0..n {
        if !proxied {
            assert_eq!(
                sent_by(&dag, h) as f64,
                want,
                "{op} {algo:?} n={n} rank {h}: sent vs nccl-tests factor * S"
            );
        }
    }
    if proxied {
        // Per ring and step one of a server's k GPUs sends over the fabric: 1/k of the
        // per-rank volume per GPU, k of them per server.
        for srv in 0..servers {
            let net: u64 = dag
                .messages
                .iter()
                .filter(|m| m.path == Path::Net && m.src.0 / gpn == srv)
                .map(|m| m.bytes)
                .sum();
            assert_eq!(net as f64, want, "{op} n={n} server {srv}: fabric egress");
        }
    }
    // Messages inside a server ride NVLink, across servers the fabric.
    for m in &dag.messages {
        let same = m.src.0 / gpn == m.dst.0 / gpn;
        assert_eq!(m.path == Path::NvLink, same, "{m:?}");
    }
}

#[test]
fn all_gather_reduce_scatter_all_to_all_bytes_equal_their_formulas() {
    for (servers, gpn) in [(1, 8), (4, 1), (2, 4), (3, 8), (16, 8)] {
        for ch in [1, 4] {
            assert_per_rank(Op::AllGather, Algo::Ring, servers, gpn, ch);
            assert_per_rank(Op::ReduceScatter, Algo::Ring, servers, gpn, ch);
            assert_per_rank(Op::AllToAll, Algo::Direct, servers, gpn, ch);
        }
    }
    for (servers, gpn) in [(1, 8), (4, 2), (8, 8)] {
        assert_per_rank(Op::AllGather, Algo::HalvingDoubling, servers, gpn, 2);
        assert_per_rank(Op::ReduceScatter, Algo::HalvingDoubling, servers, gpn, 2);
    }
    for (servers, gpn) in [(1, 8), (4, 1), (3, 8), (16, 4)] {
        assert_per_rank(Op::AllGather, Algo::Hierarchical, servers, gpn, 2);
        assert_per_rank(Op::ReduceScatter, Algo::Hierarchical, servers, gpn, 2);
        assert_per_rank(Op::AllReduce, Algo::Hierarchical, servers, gpn, 2);
    }
}

#[test]
fn ring_and_halving_doubling_all_reduce_carry_2_n_minus_1_over_n_s_per_rank() {
    for (servers, gpn) in [(1, 2), (1, 8), (5, 1), (4, 8)] {
        for ch in [1, 2, 8] {
            assert_per_rank(Op::AllReduce, Algo::Ring, servers, gpn, ch);
        }
    }
    assert_per_rank(Op::AllReduce, Algo::HalvingDoubling, 4, 8, 1);
}

#[test]
fn uneven_sizes_still_move_exactly_the_total() {
    // S not divisible by n: per step the segments still sum to S, so all ranks together send
    // 2(n-1) * S for the ring all-reduce and (n-1) * S for all-gather.
    let s = 1_000_003;
    for (op, k) in [
        (Op::AllReduce, 2),
        (Op::AllGather, 1),
        (Op::ReduceScatter, 1),
    ] {
        let dag = build(op, Algo::Ring, 3, 4, s, 3);
        assert_eq!(dag.total_bytes(), k * 11 * s, "{op}");
    }
}

#[test]
fn ring_steps_wait_for_the_neighbours_previous_step() {
    let dag = build(Op::AllReduce, Algo::Ring, 2, 4, 1 << 20, 2);
    let n = 8;
    let steps = 2 * (n - 1);
    assert!(dag.messages.iter().all(|m| m.tag < steps));
    for (i, m) in dag.messages.iter().enumerate() {
        let deps = dag.deps_of(i as u32);
        if m.tag == 0 {
            assert!(deps.is_empty());
        } else {
            assert_eq!(deps.len(), 1, "{m:?}");
            let d = &dag.messages[deps[0] as usize];
            assert_eq!(d.tag, m.tag - 1);
            if m.path == Path::NvLink {
                assert_eq!(d.dst, m.src, "a step forwards what the rank just received");
            } else {
                // Leaving the server through the channel's NIC, same server as the receiver.
                assert_eq!(d.dst.0 / 4, m.src.0 / 4);
            }
            assert_eq!(d.qp, m.qp, "within one channel");
            assert!(d.bytes.abs_diff(m.bytes) <= 1);
        }
    }
}

#[test]
fn ring_channels_leave_each_server_through_different_nics() {
    let dag = build(Op::AllReduce, Algo::Ring, 4, 8, 1 << 24, 8);
    for server in 0..4u32 {
        let mut nics: Vec<u32> = dag
            .messages
            .iter()
            .filter(|m| m.path == Path::Net && m.src.0 / 8 == server)
            .map(|m| m.src.0)
            .collect();
        nics.sort_unstable();
        nics.dedup();
        assert_eq!(
            nics.len(),
            8,
            "8 channels use all 8 NICs of server {server}"
        );
    }
}

#[test]
fn hierarchical_all_reduce_keeps_fabric_traffic_on_rails() {
    // k = 8 GPUs on N = 4 servers: the fabric carries 2(N-1)/N * S/k per NIC, rail-aligned;
    // NVLink carries the reduce-scatter and all-gather, 2(k-1)/k * S per GPU.
    let (n_srv, k, s) = (4u64, 8u64, 8u64 * 4 * 1024 * 1024);
    let dag = build(
        Op::AllReduce,
        Algo::Hierarchical,
        n_srv as u32,
        k as u32,
        s,
        1,
    );
    for h in 0..(n_srv * k) as u32 {
        let net: u64 = dag
            .messages
            .iter()
            .filter(|m| m.src.0 == h && m.path == Path::Net)
            .inspect(|m| assert_eq!(m.src.0 % 8, m.dst.0 % 8, "rail-aligned"))
            .map(|m| m.bytes)
            .sum();
        assert_eq!(net, 2 * (n_srv - 1) * s / (n_srv * k));
        let nvl: u64 = sent_by(&dag, h) - net;
        assert_eq!(nvl, 2 * (k - 1) * s / k);
    }
}

#[test]
fn tree_and_chain_volumes() {
    // Double binary tree: in each tree every non-root sends its half up once and receives it
    // down once, so 2(n-1) * S/2 per tree. Chain broadcast and reduce: (n-1) * S.
    let s = 1 << 22;
    for n in [2u32, 3, 8, 13] {
        let tree = build(Op::AllReduce, Algo::Tree, n, 1, s, 1);
        assert_eq!(tree.total_bytes(), 2 * (n as u64 - 1) * s);
        for op in [Op::Broadcast, Op::Reduce] {
            assert_eq!(
                build(op, Algo::Chain, n, 1, s, 2).total_bytes(),
                (n as u64 - 1) * s
            );
        }
        let sr = build(Op::SendRecv, Algo::Direct, n, 1, s, 1);
        assert_eq!(sr.total_bytes(), n as u64 * s);
    }
}

#[test]
fn dependencies_point_backwards_and_nvlink_rate_is_recorded() {
    for (op, algo) in [
        (Op::AllReduce, Algo::Ring),
        (Op::AllReduce, Algo::Tree),
        (Op::AllReduce, Algo::HalvingDoubling),
        (Op::AllReduce, Algo::Hierarchical),
        (Op::AllGather, Algo::Hierarchical),
        (Op::ReduceScatter, Algo::Hierarchical),
        (Op::Broadcast, Algo::Chain),
    ] {
        let dag = build(op, algo, 4, 4, 1 << 20, 2);
        for i in 0..dag.messages.len() as u32 {
            assert!(dag.deps_of(i).iter().all(|&d| d < i), "{op} {algo:?}");
        }
        assert_eq!(dag.nvlink_rate, Some(NVLINK));
    }
}

#[test]
fn invalid_requests_are_input_errors() {
    let place = Placement::dense(3, 1);
    let comm = Comm::world(&place);
    let mut spec = CollectiveSpec {
        op: Op::AllReduce,
        algo: Algo::HalvingDoubling,
        bytes: 1024,
        root: 0,
        channels: 1,
        chunk_bytes: 0,
        route: None,
    };
    let e = compile(&spec, &comm, NVLINK).unwrap_err();
    assert_eq!(e.key, "--algo");
    assert!(e.problem.contains("power-of-two"), "{e}");
    spec.algo = Algo::Chain;
    assert_eq!(compile(&spec, &comm, NVLINK).unwrap_err().key, "--algo");
    spec.algo = Algo::Ring;
    spec.channels = 0;
    assert_eq!(compile(&spec, &comm, NVLINK).unwrap_err().key, "--channels");
    spec.op = Op::Broadcast;
    spec.algo = Algo::Chain;
    spec.channels = 1;
    spec.root = 3;
    assert_eq!(compile(&spec, &comm, NVLINK).unwrap_err().key, "--root");
}

#[test]
fn placement_maps_ranks_through_the_topology_host_table() {
    // A topology that numbers hosts rail-major (host = local * servers + server): the DAG
    // addresses the same GPUs through that table, so the hierarchical rail phase still pairs
    // GPU i of each server (hosts i*servers ..) and NVLink stays inside a server.
    let (servers, gpn) = (4u32, 8u32);
    let place = Placement::new(servers, gpn, |s, l| {
        fabricsim::topology::HostId(l * servers + s)
    });
    let spec = CollectiveSpec {
        op: Op::AllReduce,
        algo: Algo::Hierarchical,
        bytes: 1 << 20,
        root: 0,
        channels: 1,
        chunk_bytes: 0,
        route: None,
    };
    let dag = compile(&spec, &Comm::world(&place), NVLINK).unwrap();
    let server = |h: u32| h % servers;
    let local = |h: u32| h / servers;
    for m in &dag.messages {
        match m.path {
            Path::Net => assert_eq!(local(m.src.0), local(m.dst.0), "rail-aligned"),
            Path::NvLink => assert_eq!(server(m.src.0), server(m.dst.0)),
        }
    }
    assert_eq!(place.host(9), fabricsim::topology::HostId(4 + 1));
}
