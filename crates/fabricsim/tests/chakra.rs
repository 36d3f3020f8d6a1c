//! Chakra execution traces as `sim` traffic (`io::chakra`, `workload::chakra`) on both engines:
//! compute before a collective delays it by exactly the compute (then it takes what it takes
//! alone), a receive gates its send, compute after a transfer gaps the next one; bad traces are
//! refused naming file and node; the example's trace files are what `example_trace` writes.

use std::path::{Path, PathBuf};

use fabricsim::io::chakra::{GlobalMetadata, Node, encode, int_attr, node_type};
use fabricsim::scenario::Scenario;
use fabricsim::workload::collective::{self, Algo, CollectiveSpec, Comm, Op};
use fabricsim::workload::placement::Placement;
use fabricsim::workload::sim_job::SimJob;
use fabricsim_mech::RunResult;

fn meta() -> GlobalMetadata {
    GlobalMetadata {
        version: "0.0.4".into(),
        attr: Vec::new(),
    }
}

fn comp(id: u64, us: u64, deps: &[u64]) -> Node {
    Node {
        id,
        name: format!("compute {id}"),
        r#type: node_type::COMP,
        data_deps: deps.to_vec(),
        duration_micros: us,
        ..Default::default()
    }
}

fn coll(id: u64, comm_type: i64, bytes: i64, deps: &[u64]) -> Node {
    Node {
        id,
        name: format!("collective {id}"),
        r#type: node_type::COMM_COLL,
        ctrl_deps: deps.to_vec(),
        attr: vec![
            int_attr("comm_type", comm_type),
            int_attr("comm_size", bytes),
        ],
        ..Default::default()
    }
}

fn p2p(id: u64, send: bool, peer: i64, bytes: i64, deps: &[u64]) -> Node {
    let (t, key) = if send {
        (node_type::COMM_SEND, "comm_dst")
    } else {
        (node_type::COMM_RECV, "comm_src")
    };
    Node {
        id,
        name: format!("p2p {id}"),
        r#type: t,
        data_deps: deps.to_vec(),
        attr: vec![int_attr(key, peer), int_attr("comm_size", bytes)],
        ..Default::default()
    }
}

/// A fresh directory with `ranks`' traces as `t.<rank>.et` and the scenario running them on
/// two 8-GPU servers (ranks 0-7 on the first, 8-15 on the second).
fn dir_with(name: &str, engine: &str, ranks: &[Vec<Node>]) -> (PathBuf, Scenario) {
    let dir = std::env::temp_dir().join(format!("fabricsim-chakra-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for (r, nodes) in ranks.iter().enumerate() {
        std::fs::write(dir.join(format!("t.{r}.et")), encode(&meta(), nodes)).unwrap();
    }
    let text = format!(
        "engine = \"{engine}\"\n[cluster]\ngpus = 16\n\
         [fabric]\nprofile = \"roce-400g\"\n[topology]\nkind = \"fat-tree\"\ntiers = 2\n\
         [traffic]\nkind = \"chakra\"\ntrace_files = \"t.{{rank}}.et\"\n"
    );
    (dir, Scenario::parse("chakra.toml", &text).unwrap())
}

fn run(dir: &Path, sc: &Scenario) -> (SimJob, RunResult) {
    let job = SimJob::new(sc, dir, None, None).unwrap();
    let r = job.run(sc, None).unwrap();
    r.check_conservation().unwrap();
    (job, r)
}

fn end(r: &RunResult) -> u64 {
    r.messages
        .iter()
        .map(|m| m.finish_ps.unwrap())
        .max()
        .unwrap()
}

const US: u64 = 1_000_000;

#[test]
fn compute_then_all_reduce_takes_the_compute_plus_the_all_reduce_alone() {
    let bytes = 4 << 20;
    for engine in ["packet", "flow"] {
        // 16 ranks on two servers, 25 us of compute each, then a 4 MB all-reduce.
        let ranks: Vec<Vec<Node>> = (0..16)
            .map(|_| vec![comp(1, 25, &[]), coll(2, 0, bytes, &[1])])
            .collect();
        let (dir, sc) = dir_with(&format!("ar-{engine}"), engine, &ranks);
        let (job, r) = run(&dir, &sc);
        assert_eq!(r.sim.engine, engine);
        // The all-reduce alone on the same GPUs and engine, every rank starting at zero.
        let d = sc.design().unwrap();
        let place = Placement::on_topology(&job.setup.net.topo, 8);
        let channels = collective::nccl_channels(&d.nccl, 8, Algo::Ring, 16);
        let spec = CollectiveSpec::with_defaults(Op::AllReduce, bytes as u64, channels);
        let alone = collective::compile(&spec, &Comm::world(&place), d.gpu.nvlink_rate()).unwrap();
        assert_eq!(alone.messages.len(), job.setup.dag.messages.len());
        let a = fabricsim::engine_choice::run(
            job.kind,
            &job.setup.net.topo,
            &job.setup.params,
            &alone,
            &job.setup.faults,
            Default::default(),
        )
        .unwrap();
        // The first step's messages post at the compute's end, exactly.
        let first = r
            .messages
            .iter()
            .map(|m| m.start_ps.unwrap())
            .min()
            .unwrap();
        assert_eq!(first, 25 * US, "{engine}");
        // Shifted by the compute, the run is the collective's, to the picosecond (measured:
        // packet 48,564,150 ps, flow 48,177,150 ps).
        let (want, got) = (25 * US + end(&a), end(&r));
        assert_eq!(got, want, "{engine}");
    }
}

#[test]
fn a_receive_gates_its_send_and_compute_gaps_the_next_transfer() {
    for engine in ["packet", "flow"] {
        // Rank 0 computes 10 us then sends 1 MB to rank 8 (the other server), which is ready
        // to receive at 30 us; rank 8 then computes 15 us and sends 64 KB back. Ranks 1-7
        // only compute.
        let r0 = vec![
            comp(1, 10, &[]),
            p2p(2, true, 8, 1 << 20, &[1]),
            p2p(3, false, 8, 65536, &[2]),
        ];
        let r8 = vec![
            comp(1, 30, &[]),
            p2p(2, false, 0, 1 << 20, &[1]),
            comp(3, 15, &[2]),
            p2p(4, true, 0, 65536, &[3]),
        ];
        let mut ranks = vec![vec![comp(1, 1, &[])]; 9];
        (ranks[0], ranks[8]) = (r0, r8);
        let (dir, sc) = dir_with(&format!("p2p-{engine}"), engine, &ranks);
        let (_, r) = run(&dir, &sc);
        let m = &r.messages;
        assert_eq!(m.len(), 2);
        assert_eq!(m[0].bytes, 1 << 20);
        assert_eq!(
            m[0].start_ps,
            Some(30 * US),
            "{engine}: the receive is posted at 30 us"
        );
        assert_eq!(
            m[1].start_ps,
            Some(m[0].finish_ps.unwrap() + 15 * US),
            "{engine}"
        );
        assert_eq!((m[1].src, m[1].dst), (m[0].dst, m[0].src));
    }
}

#[test]
fn a_process_group_is_the_ranks_that_name_it() {
    // Ranks 0 and 8 all-gather in group "dp" while the others compute: the collective's
    // messages run between GPUs 0 and 8 only.
    let mut pg = coll(2, 2, 1 << 20, &[1]);
    pg.attr.push(fabricsim::io::chakra::Attribute {
        name: "pg_name".into(),
        value: Some(fabricsim::io::chakra::Value::Str("dp".into())),
    });
    let with = vec![comp(1, 5, &[]), pg];
    let without = vec![comp(1, 5, &[])];
    let mut ranks = vec![without; 16];
    (ranks[0], ranks[8]) = (with.clone(), with);
    let (dir, sc) = dir_with("pg", "flow", &ranks);
    let (job, r) = run(&dir, &sc);
    let hosts: Vec<u32> = [0u32, 8]
        .iter()
        .map(|&g| Placement::on_topology(&job.setup.net.topo, 8).host(g).0)
        .collect();
    assert!(!r.messages.is_empty());
    assert!(
        r.messages
            .iter()
            .all(|m| hosts.contains(&m.src) && hosts.contains(&m.dst))
    );
}

#[test]
fn bad_traces_are_refused_naming_file_and_node() {
    let ar = |id, deps: &[u64]| coll(id, 0, 1 << 20, deps);
    for (name, ranks, want) in [
        (
            "count",
            vec![vec![ar(1, &[]), ar(2, &[1])], vec![ar(1, &[])]],
            "t.0.et: `node 2 comm` = ",
        ),
        (
            "size",
            vec![vec![ar(1, &[])], vec![coll(1, 0, 2 << 20, &[])]],
            "t.1.et: `node 1 comm_type/comm_size`",
        ),
        (
            "unmatched",
            vec![vec![p2p(1, true, 1, 100, &[])], vec![comp(1, 1, &[])]],
            "has no 1st receive from rank 0 to rank 1",
        ),
        (
            "deadlock",
            vec![
                vec![p2p(1, false, 1, 100, &[]), p2p(2, true, 1, 100, &[1])],
                vec![p2p(1, false, 0, 100, &[]), p2p(2, true, 0, 100, &[1])],
            ],
            "never starts",
        ),
        (
            "barrier",
            vec![vec![coll(1, 9, 8, &[])], vec![coll(1, 9, 8, &[])]],
            "BARRIER",
        ),
        ("ranks", vec![vec![ar(1, &[])]], "1 rank files"),
    ] {
        let (dir, sc) = dir_with(name, "flow", &ranks);
        let e = SimJob::new(&sc, &dir, None, None)
            .err()
            .expect(name)
            .to_string();
        assert!(e.contains(want), "{name}: {e}");
        assert!(!e.contains("panicked"), "{name}: {e}");
    }
}

/// Rank `r` of the example (`examples/chakra-allreduce.toml`, 16 ranks on two servers):
/// forward compute of 30 + 2r us, an 8 MB all-reduce, 10 us of compute, then ranks 0-7 send
/// 2 MB each to rank r + 8 on the other server, whose receives are followed by 20 us of compute,
/// and a 4 MB all-gather of all.
pub fn example_trace(r: u32) -> Vec<u8> {
    let mut nodes = vec![
        comp(1, 30 + 2 * r as u64, &[]),
        coll(2, 0, 8 << 20, &[1]),
        comp(3, 10, &[2]),
    ];
    let peer = (r ^ 8) as i64;
    if r < 8 {
        nodes.push(p2p(4, true, peer, 2 << 20, &[3]));
        nodes.push(coll(5, 2, 4 << 20, &[4]));
    } else {
        nodes.push(p2p(4, false, peer, 2 << 20, &[3]));
        nodes.push(comp(5, 20, &[4]));
        nodes.push(coll(6, 2, 4 << 20, &[5]));
    }
    encode(&meta(), &nodes)
}

/// The committed fixtures are `example_trace`'s bytes; `FABRICSIM_WRITE_FIXTURES=1` rewrites
/// them.
#[test]
fn example_traces_are_the_helpers_and_run() {
    let ex = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples");
    for r in 0..16 {
        let path = ex.join(format!("chakra/step.{r}.et"));
        if std::env::var_os("FABRICSIM_WRITE_FIXTURES").is_some() {
            std::fs::write(&path, example_trace(r)).unwrap();
        }
        assert_eq!(
            std::fs::read(&path).unwrap(),
            example_trace(r),
            "{}",
            path.display()
        );
    }
    let path = ex.join("chakra-allreduce.toml");
    let name = path.display().to_string();
    let sc = Scenario::parse(&name, &std::fs::read_to_string(&path).unwrap()).unwrap();
    let (job, r) = run(&ex, &sc);
    // The all-reduce, the all-gather and the eight sends.
    assert!(job.setup.dag.messages.len() > 8);
    assert_eq!(r.summary.messages_completed, r.summary.messages_total);
    // Nothing posts before the fastest rank's forward compute (30 us).
    assert!(r.messages.iter().all(|m| m.start_ps.unwrap() >= 30 * US));
}
