//! MoE expert-parallel dispatch and combine (`workload::moe`, `collective::moe`): uniform
//! routing is the all-to-all byte for byte, a Zipf skew's loads add up to every routed token,
//! the combine is the dispatch's transpose, and on a fabric run the slowest rank (the end of
//! the exchange) grows with the Zipf exponent.

use fabricsim::message::MessageDag;
use fabricsim::moe_skew::Skew;
use fabricsim::scenario::Scenario;
use fabricsim::units::BitRate;
use fabricsim::workload::collective::count::{Shape, messages};
use fabricsim::workload::collective::{CollectiveSpec, Comm, Op, compile};
use fabricsim::workload::moe::{Route, expert_shares};
use fabricsim::workload::placement::Placement;
use fabricsim::workload::run_engine::Cluster;

const NVLINK: BitRate = BitRate::gbps(3600);

fn dag(op: Op, route: Option<&Route>, comm: &Comm, bytes: u64, channels: u32) -> MessageDag {
    let spec = CollectiveSpec {
        route,
        ..CollectiveSpec::with_defaults(op, bytes, channels)
    };
    compile(&spec, comm, NVLINK).unwrap()
}

/// Every message (endpoints, bytes, times, dependencies, queue pair, path, tag) and the
/// dependency list.
fn key(d: &MessageDag) -> (Vec<fabricsim::message::Message>, Vec<u32>) {
    (d.messages.clone(), d.deps.clone())
}

#[test]
fn uniform_routing_reproduces_the_all_to_all_message_for_message() {
    for (servers, per) in [(1, 8), (2, 4), (3, 1), (4, 8)] {
        let place = Placement::dense(servers, per);
        let comm = Comm::world(&place);
        let n = comm.len();
        let uniform = Route::new(&Skew::Uniform, 4 * n as u64, 2, n, None).unwrap();
        for channels in [1, 3] {
            for bytes in [0, 5, 4096, 3 << 20] {
                let a2a = key(&dag(Op::AllToAll, None, &comm, bytes, channels));
                // The combine sends back each rank's own block (the transpose): the same
                // messages when the blocks are equal, one byte apart otherwise.
                let even = bytes % (n as u64 * channels as u64) == 0;
                for route in [None, Some(&uniform)] {
                    assert_eq!(
                        key(&dag(Op::MoeDispatch, route, &comm, bytes, channels)),
                        a2a
                    );
                    let combine = key(&dag(Op::MoeCombine, route, &comm, bytes, channels));
                    assert_eq!(combine == a2a, even, "{bytes} B on {n} ranks");
                }
            }
        }
    }
}

#[test]
fn zipf_dispatch_carries_every_routed_token_and_combine_is_its_transpose() {
    // 4 servers of 8 GPUs, 64 experts (2 per rank), top-2, 512 tokens of hidden 1024 in bf16.
    let place = Placement::dense(4, 8);
    let comm = Comm::world(&place);
    let n = comm.len();
    let (experts, top_k, tokens, hidden) = (64u64, 2u64, 512u64, 1024u64);
    let route = Route::new(&Skew::Zipf(1.0), experts, top_k, n, None).unwrap();
    let bytes = tokens * top_k * hidden * 2;
    // The expected slots per expert add up to tokens x top-k.
    let shares = expert_shares(&Skew::Zipf(1.0), experts, top_k).unwrap();
    let slots: f64 = shares.iter().map(|s| s * (tokens * top_k) as f64).sum();
    assert!((slots - (tokens * top_k) as f64).abs() < 1e-9);
    let row = route.row(bytes);
    assert_eq!(row.iter().sum::<u64>(), bytes);
    // The hottest rank holds experts 0 and 1: (1 + 1/2) / H(64) of the slots (none over 1/2).
    let h64: f64 = (1..=64).map(|i| 1.0 / i as f64).sum();
    assert!((row[0] as f64 / bytes as f64 - 1.5 / h64).abs() < 1e-6);
    let host = |g: usize| place.host(comm.gpus[g]);
    let d = dag(Op::MoeDispatch, Some(&route), &comm, bytes, 1);
    let c = dag(Op::MoeCombine, Some(&route), &comm, bytes, 1);
    assert_eq!(
        d.messages.len() as u64,
        messages(
            &CollectiveSpec {
                route: Some(&route),
                ..CollectiveSpec::with_defaults(Op::MoeDispatch, bytes, 1)
            },
            Shape::of(&comm)
        )
    );
    let sent = |x: &MessageDag, from: usize, to: usize| {
        x.messages
            .iter()
            .filter(|m| m.src == host(from) && m.dst == host(to))
            .map(|m| m.bytes)
            .sum::<u64>()
    };
    for p in 0..n {
        for q in (0..n).filter(|&q| q != p) {
            assert_eq!(sent(&d, p, q), row[q], "dispatch {p} -> {q}");
            assert_eq!(sent(&c, p, q), sent(&d, q, p), "combine {p} -> {q}");
        }
    }
}

#[test]
fn the_slowest_rank_grows_with_the_zipf_exponent_on_the_flow_engine() {
    // 32 GPUs (4 servers) on the flow engine; 64 experts top-2, 64 MiB routed per rank.
    let mut s = Scenario::defaults();
    let flags = [("--gpus", "32"), ("--engine", "flow")];
    let pairs: Vec<_> = flags
        .iter()
        .map(|(f, v)| (f.to_string(), v.to_string()))
        .collect();
    s.apply_flags(&pairs).unwrap();
    let c = Cluster::new(&s).unwrap();
    let comm = Comm::world(&c.place);
    let n = comm.len();
    let servers: Vec<u32> = comm.gpus.iter().map(|&g| c.place.server(g)).collect();
    for op in [Op::MoeDispatch, Op::MoeCombine] {
        let mut last = 0;
        let mut uniform = 0;
        for skew in [
            Skew::Uniform,
            Skew::Zipf(0.25),
            Skew::Zipf(0.5),
            Skew::Zipf(1.0),
            Skew::Zipf(1.5),
        ] {
            let route = Route::new(&skew, 64, 2, n, None).unwrap();
            let d = dag(op, Some(&route), &comm, 64 << 20, 4);
            let t = c.run(&d, None).unwrap().time.0;
            assert!(t > last, "{op} {skew:?}: {t} ps after {last} ps");
            last = t;
            // The engine's end over the uniform one is the closed form's slowest rank (the hot
            // rank's NIC binds), up to the latency term.
            uniform = if uniform == 0 { t } else { uniform };
            let want = route.slowest(&servers).over_uniform;
            let got = t as f64 / uniform as f64;
            assert!(
                (got / want - 1.0).abs() < 0.02,
                "{op} {skew:?}: {got} against {want}"
            );
        }
    }
}
