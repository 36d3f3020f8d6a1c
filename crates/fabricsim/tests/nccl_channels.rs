//! NCCL's connection structure in the collectives: each channel is its own connection per peer
//! with NCCL_IB_QPS_PER_CONNECTION QPs (NCCL src/graph/connect.cc, transport/net_ib), counted
//! in closed form; more channels at one QP each spread a ring over more ECMP paths; each
//! message split across the QPs or sent whole on the next QP in turn
//! (NCCL_IB_SPLIT_DATA_ON_QPS); and the `[nccl]` keys' errors.

use std::collections::{BTreeMap, BTreeSet};

use fabricsim::flow::{PathModel, paths};
use fabricsim::message::{MessageDag, Path};
use fabricsim::sim::{RoutePolicy, SimParams, route};
use fabricsim::topology::Topology;
use fabricsim::units::{BitRate, Time};
use fabricsim::workload::collective::{Algo, CollectiveSpec, Comm, Op, compile};
use fabricsim::workload::placement::Placement;
use fabricsim_cases::cc_util::fat_tree;
use fabricsim_input::scenario::Scenario;
use fabricsim_input::test_util::scenario;

const NVLINK: BitRate = BitRate::gbps(3600);
const CHUNK: u64 = 512 << 10;

/// A ring all-reduce of `bytes` over `servers` x 8 GPUs on `channels` channels.
fn ring(servers: u32, bytes: u64, channels: u32) -> MessageDag {
    let place = Placement::dense(servers, 8);
    let spec = CollectiveSpec::with_defaults(Op::AllReduce, bytes, channels);
    assert_eq!(spec.algo, Algo::Ring);
    compile(&spec, &Comm::world(&place), NVLINK).unwrap()
}

fn roce(qpc: u16, split: bool) -> SimParams {
    let mut p = SimParams::roce();
    p.cc.qps_per_connection = qpc;
    p.cc.split_data_on_qps = split;
    p
}

/// A ring over n ranks crosses each of its servers' boundaries once per step: per channel,
/// `servers` fabric messages per step and pipeline chunk over 2(n-1) steps, on `servers`
/// connections (one per server to the next), each with `qpc` QPs; channels never share a QP.
#[test]
fn messages_and_qps_per_channel_in_closed_form() {
    let (servers, n) = (4u32, 32u64);
    for channels in [1u32, 8, 16] {
        // Each channel's segment is 4 chunks, so each step sends 4 pipelined messages.
        let bytes = 4 * CHUNK * n * channels as u64;
        let dag = ring(servers, bytes, channels);
        let chunks = 4u64;
        let mut per_channel: BTreeMap<u16, u64> = BTreeMap::new();
        for m in dag.messages.iter().filter(|m| m.path == Path::Net) {
            *per_channel.entry(m.qp).or_default() += 1;
        }
        assert_eq!(per_channel.len(), channels as usize);
        for (&c, &count) in &per_channel {
            assert_eq!(
                count,
                servers as u64 * 2 * (n - 1) * chunks,
                "channel {c} of {channels}"
            );
        }
        for qpc in [1u16, 4, 8] {
            let p = roce(qpc, false);
            let (msg_qp, ends) = route::connection_qps(&dag.messages, &p.cc);
            assert_eq!(
                ends.len() as u64,
                channels as u64 * servers as u64 * qpc as u64,
                "{channels} channels, {qpc} QPs per connection"
            );
            // A QP belongs to one channel.
            let mut channel_of: BTreeMap<u32, u16> = BTreeMap::new();
            let mut per_qp: BTreeMap<u32, u64> = BTreeMap::new();
            for (m, &q) in dag.messages.iter().zip(&msg_qp) {
                if m.path == Path::Net {
                    assert_eq!(*channel_of.entry(q).or_insert(m.qp), m.qp);
                    *per_qp.entry(q).or_default() += 1;
                }
            }
            // Not split: a connection's messages take its QPs in turn, so each QP carries
            // 1/qpc of them (2(n-1) x chunks is a multiple of 4 and 8 here).
            assert_eq!(per_qp.len(), ends.len());
            for &c in per_qp.values() {
                assert_eq!(c, 2 * (n - 1) * chunks / qpc as u64);
            }
        }
    }
}

/// Split (NCCL_IB_SPLIT_DATA_ON_QPS=1): every message starts at its connection's first QP and
/// is cut over all of them (`entropy::parts`); not split (0, NCCL's default since 2.20.3): one
/// QP per message, the next in turn.
#[test]
fn split_data_on_qps_cuts_messages_or_rotates_them() {
    let dag = ring(2, 16 * CHUNK * 16, 1);
    let split = roce(4, true);
    let whole = roce(4, false);
    assert_eq!(
        (split.cc.qps_per_message(), whole.cc.qps_per_message()),
        (4, 1)
    );
    let (a, ends) = route::connection_qps(&dag.messages, &split.cc);
    let (b, _) = route::connection_qps(&dag.messages, &whole.cc);
    let mut turn: BTreeMap<u32, u32> = BTreeMap::new();
    for (i, m) in dag.messages.iter().enumerate() {
        if m.path != Path::Net {
            continue;
        }
        assert_eq!(a[i] % 4, 0, "split: the connection's first QP");
        let t = turn.entry(a[i]).or_default();
        assert_eq!(b[i], a[i] + *t % 4, "not split: QP {} then the next", a[i]);
        *t += 1;
        assert_eq!(ends[b[i] as usize], ends[a[i] as usize], "same connection");
    }
}

/// The links QP `q` of `ends` uses up and back (the paths both engines take: `flow::paths`,
/// the packet engine's hash).
fn links_of(topo: &Topology, p: &SimParams, ends: &[(u32, u32)]) -> BTreeMap<u32, u32> {
    let router = paths::Router::new(topo, RoutePolicy::EcmpFlowHash);
    let mut load: BTreeMap<u32, u32> = BTreeMap::new();
    for (q, &(s, d)) in ends.iter().enumerate() {
        let (fwd, _) = paths::qp_hashes(p, q as u32, s, d);
        let mut links = Vec::new();
        paths::subflow_links(
            topo,
            &router,
            PathModel::Hash,
            s,
            d,
            fwd,
            0,
            |_| 0,
            &mut links,
        );
        for l in links {
            *load.entry(l).or_default() += 1;
        }
    }
    load
}

/// 8 servers of 8 GPUs, a server per leaf of a 2-tier fat tree with 8 spines: every ring hop
/// between servers climbs to a spine by its QP's hash. One connection per NIC pair (8
/// channels, 1 QP) lands on fewer distinct leaf-spine links than NCCL's 16 channels (2
/// connections per NIC pair), and 8 QPs per connection on more still.
#[test]
fn more_channels_at_one_qp_spread_a_ring_over_more_paths() {
    let topo = fat_tree(8, 8, 8, BitRate::gbps(400), Time::from_ns(100));
    let spread = |channels: u32, qpc: u16| {
        let dag = ring(8, 64 << 20, channels);
        let p = roce(qpc, false);
        let (_, ends) = route::connection_qps(&dag.messages, &p.cc);
        let load = links_of(&topo, &p, &ends);
        let links: BTreeSet<u32> = load.keys().copied().collect();
        (links.len(), ends.len())
    };
    let (l8, q8) = spread(8, 1);
    let (l16, q16) = spread(16, 1);
    let (l64, q64) = spread(8, 8);
    eprintln!(
        "distinct links: 8 channels x 1 QP {l8} ({q8} QPs), 16 x 1 {l16} ({q16}), 8 x 8 {l64} ({q64})"
    );
    assert_eq!((q8, q16, q64), (64, 128, 512));
    assert!(l16 > l8, "16 channels {l16} links vs 8 channels {l8}");
    assert!(l64 > l16, "8 QPs {l64} links vs 16 channels {l16}");
}

/// NCCL's default: ring channels 2 per NIC; NCCL_MAX/MIN_NCHANNELS bound it; all-to-all's
/// channels per network peer halve while they times the ranks pass 4 x the p2p channels
/// (paths.cc `ncclTopoGetNchannels`); the QPs per connection come from `[nccl]` over the
/// profile's, into the one `cc` field both engines read.
#[test]
fn nccl_keys_set_channels_and_qps() {
    use fabricsim::setup::params_from_design::params_from_design;
    use fabricsim::workload::collective::nccl_channels;
    let d = scenario(&[("--fabric", "roce-400g")]).design().unwrap();
    assert_eq!(nccl_channels(&d.nccl, 8, Algo::Ring, 256), 16);
    assert_eq!(nccl_channels(&d.nccl, 8, Algo::Tree, 256), 16);
    // 16 p2p channels: 8 per peer up to 8 ranks (8 x 8 = 64 = 4 x 16), 4 at 16, 1 at 256.
    let direct = [8, 16, 32, 256].map(|r| nccl_channels(&d.nccl, 8, Algo::Direct, r));
    assert_eq!(direct, [8, 4, 2, 1]);
    let p = params_from_design(&d, true).unwrap();
    assert_eq!(
        (p.cc.qps_per_connection, p.cc.split_data_on_qps),
        (1, false)
    );
    let d = scenario(&[
        ("--fabric", "roce-400g"),
        ("--nccl-max-nchannels", "4"),
        ("--nccl-ib-qps-per-connection", "8"),
        ("--nccl-ib-split-data-on-qps", "1"),
    ])
    .design()
    .unwrap();
    assert_eq!(nccl_channels(&d.nccl, 8, Algo::Ring, 256), 4);
    let p = params_from_design(&d, true).unwrap();
    assert_eq!((p.cc.qps_per_connection, p.cc.split_data_on_qps), (8, true));
    let d = scenario(&[("--nccl-min-nchannels", "32")])
        .design()
        .unwrap();
    assert_eq!(nccl_channels(&d.nccl, 8, Algo::Ring, 256), 32);
    // NCCL_NCHANNELS_PER_NET_PEER sets the direct algorithms' channels, not the ring's; the
    // step's collectives (`Channels`, compare and train) take both from the scenario.
    let d = scenario(&[("--nccl-nchannels-per-net-peer", "2")])
        .design()
        .unwrap();
    assert_eq!(nccl_channels(&d.nccl, 8, Algo::Direct, 256), 2);
    assert_eq!(nccl_channels(&d.nccl, 8, Algo::Ring, 256), 16);
    let ch = fabricsim::workload::collective::Channels::of_design(&d);
    assert_eq!(
        (
            ch.of(Algo::Direct, 256),
            ch.of(Algo::Hierarchical, 256),
            ch.most(256)
        ),
        (2, 16, 16)
    );
}

#[test]
fn nccl_key_errors_name_the_key_and_the_bounds() {
    for (flag, v, allowed) in [
        ("--nccl-min-nchannels", "65", "0 to 64"),
        ("--nccl-max-nchannels", "0", "1 to 64"),
        ("--nccl-ib-qps-per-connection", "0", "1 to 64"),
        ("--nccl-ib-qps-per-connection", "65", "1 to 64"),
        ("--nccl-ib-split-data-on-qps", "2", "0 (each message whole"),
    ] {
        let e = scenario(&[(flag, v)]).design().unwrap_err().to_string();
        assert!(
            e.contains(flag) && e.contains(v) && e.contains(allowed),
            "{flag} {v}: {e}"
        );
    }
    // In a file: file, line and key.
    let text = "[cluster]\ngpus = 16\n\n[nccl]\nmin_nchannels = 2\nib_split_data_on_qps = 3\n";
    let s = Scenario::parse("s.toml", text).unwrap();
    let e = s.design().unwrap_err().to_string();
    assert!(
        e.contains("s.toml:6") && e.contains("nccl.ib_split_data_on_qps"),
        "{e}"
    );
    let typo = "[nccl]\nmax_nchanels = 2\n";
    let e = Scenario::parse("t.toml", typo).unwrap_err().to_string();
    assert!(e.contains("t.toml:2") && e.contains("max_nchanels"), "{e}");
}
