//! The fluid engine on message DAGs: closed-form completion times, the packet engine's ECMP
//! placement, a ring all-reduce against 2(n-1) x (alpha + S/(nB)), and repeated flow sets
//! answered from the rate cache.

use std::collections::BTreeSet;

use fabricsim_cases::flow_cases::{fat_tree, ring};

use fabricsim::flow::{self, FlowParams, PathModel, paths};
use fabricsim::message::MessageDag;
use fabricsim::sim::{self, Faults, RoutePolicy, RunOptions, SimParams};
use fabricsim::topology::HostId;
use fabricsim::units::{BitRate, Time};

/// Wire bytes of 1 MB with RoCEv2 framing: 244 full 4096-byte packets and a 576-byte one,
/// each with 62 B of headers and 20 B of preamble and inter-frame gap:
/// 244 x 4178 + 658 = 1,020,090 B, which take 20 ps each at 400 Gb/s: 20,401,800 ps.
const MB_DRAIN_PS: u64 = 20_401_800;
const NS: u64 = 1_000;
/// A full 4,178-byte frame at 400 Gb/s: the step of the NIC's per-QP round robin at message
/// end (`flow::nic_rr`).
const FRAME_PS: u64 = 83_560;

#[test]
fn one_message_alone_takes_nic_plus_drain_plus_path_plus_ack() {
    let topo = fat_tree(32, 8);
    let p = SimParams::roce();
    let mut dag = MessageDag::default();
    dag.push(HostId(0), HostId(31), 1_000_000, Time::ZERO, &[]);
    let (r, _) = flow::run(&topo, &p, &dag, &FlowParams::default()).unwrap();
    let m = &r.messages[0];
    // Hosts 0 and 31 are on different leaves: NIC -> leaf -> spine -> leaf -> NIC, each hop
    // entering a 600 ns switch or NIC pipeline (links have no length): 2,400 ns each way.
    assert_eq!(paths::wire_bytes(&p, 1_000_000), 1_020_090);
    assert_eq!(m.recv_ps, Some(600 * NS + MB_DRAIN_PS + 2_400 * NS));
    assert_eq!(m.fct_ps, Some(600 * NS + MB_DRAIN_PS + 2 * 2_400 * NS));
    assert_eq!(m.fct_ps, Some(m.ideal_fct_ps));
}

#[test]
fn two_messages_from_one_nic_share_it_evenly() {
    let topo = fat_tree(32, 8);
    let p = SimParams::roce();
    let mut dag = MessageDag::default();
    // Hosts 0, 1, 2 share a leaf: two 1 MB messages from host 0 get 200 Gb/s each and drain in
    // 2 x 20,401,800 ps; the path is NIC -> leaf -> NIC (1,200 ns each way). The NIC's round
    // robin (`flow::nic_rr`) ends the first posted, one packet ahead of the second (it was
    // served at once), a round of 2 frames before the second's last frame.
    dag.push(HostId(0), HostId(1), 1_000_000, Time::ZERO, &[]);
    dag.push(HostId(0), HostId(2), 1_000_000, Time::ZERO, &[]);
    let (r, _) = flow::run(&topo, &p, &dag, &FlowParams::default()).unwrap();
    for (m, early) in r.messages.iter().zip([2 * FRAME_PS, 0]) {
        assert_eq!(
            m.fct_ps,
            Some(600 * NS + 2 * MB_DRAIN_PS - early + 2 * 1_200 * NS)
        );
    }
    // A third message of 2 MB joining: the link's rate in whole bit/s is split three ways,
    // floor(400e9 / 3) = 133,333,333,333 each, so a 1 MB message (1,020,090 wire bytes =
    // 8.16072e18 bit-ps/s of work) drains in ceil(8.16072e18 / 133,333,333,333) = 61,205,401 ps
    // (the exact 3 x 20,401,800 = 61,205,400, plus 1 ps from the integer rate). In the ring
    // [0, 1, 2] of 3 QPs, message 1 ends 1 frame before that, message 0 (the lead) a round
    // earlier still: 1 + 3 = 4 frames (`flow::nic_rr`).
    dag.push(HostId(0), HostId(3), 2_000_000, Time::ZERO, &[]);
    let (r, _) = flow::run(&topo, &p, &dag, &FlowParams::default()).unwrap();
    for (i, early) in [4 * FRAME_PS, FRAME_PS].into_iter().enumerate() {
        assert_eq!(
            r.messages[i].fct_ps,
            Some(600 * NS + 61_205_401 - early + 2 * 1_200 * NS)
        );
    }
    // 2 MB of payload is 488 full packets and a 1,152-byte one: 488 x 4178 + 1,234 =
    // 2,040,098 wire bytes. After 61,205,401 ps at 133,333,333,333 bit/s it has
    // 2,040,098 x 8e12 - 133,333,333,333 x 61,205,401 = 8,160,063,866,687,068,467 bit-ps/s
    // left (1,020,007.98 bytes), drained alone at 400 Gb/s in ceil(that / 4e11) = 20,400,160 ps.
    assert_eq!(paths::wire_bytes(&p, 2_000_000), 2_040_098);
    assert_eq!(
        r.messages[2].fct_ps,
        Some(600 * NS + 61_205_401 + 20_400_160 + 2 * 1_200 * NS)
    );
}

#[test]
fn messages_of_one_qp_drain_in_order() {
    // Two 1 MB messages on the same QP (host 0 -> 1, qp 0) posted together: an RC send queue
    // sends them in order (IBA 9.5), so the first drains alone in 20,401,800 ps and the second
    // right after it, 2 x 20,401,800 ps after the NIC pipeline; both then take the 1,200 ns
    // path and the 1,200 ns ACK path. On two QPs they would share the NIC and both end at 2x.
    let topo = fat_tree(32, 8);
    let p = SimParams::roce();
    let mut dag = MessageDag::default();
    dag.push(HostId(0), HostId(1), 1_000_000, Time::ZERO, &[]);
    dag.push(HostId(0), HostId(1), 1_000_000, Time::ZERO, &[]);
    let (r, _) = flow::run(&topo, &p, &dag, &FlowParams::default()).unwrap();
    let fct = |i: usize| r.messages[i].fct_ps.unwrap();
    assert_eq!(fct(0), 600 * NS + MB_DRAIN_PS + 2 * 1_200 * NS);
    assert_eq!(fct(1), 600 * NS + 2 * MB_DRAIN_PS + 2 * 1_200 * NS);
    // The packet engine agrees within a packet's serialization and its pipeline details.
    let pr = sim::run(&topo, &p, &dag, &Faults::default(), RunOptions::default()).unwrap();
    for i in 0..2 {
        let pf = pr.messages[i].fct_ps.unwrap() as f64;
        assert!(
            (fct(i) as f64 - pf).abs() < 0.02 * pf,
            "{i}: {} vs {pf}",
            fct(i)
        );
    }
}

#[test]
fn flows_take_the_packet_engines_paths() {
    // 24 connections across leaves of a 2-tier fat-tree with 4 up ports per leaf: every egress
    // port the packet engine's data and ACK packets used is on a path the flow engine placed,
    // and back; for ECMP (with 1 and 4 QPs per connection, the destination QP hashed or not)
    // and for D-mod-K (Zahavi 2010: up port d mod 4 at a leaf).
    let topo = fat_tree(32, 8);
    let cases = [
        (RoutePolicy::EcmpFlowHash, 1, false),
        (RoutePolicy::EcmpFlowHash, 4, true),
        (RoutePolicy::DModK, 1, false),
    ];
    for (policy, qpc, dest_qp) in cases {
        let mut p = SimParams::roce();
        p.routing = policy;
        p.cc.qps_per_connection = qpc;
        p.cc.hash_dest_qp = dest_qp;
        p.sample_interval = Some(Time::from_ns(100));
        let mut dag = MessageDag::default();
        for i in 0..24u32 {
            let (s, d) = (i % 16, 16 + (i * 7) % 16);
            let m = dag.push(HostId(s), HostId(d), 65_536, Time::ZERO, &[]);
            dag.messages[m as usize].qp = (i / 16) as u16;
        }
        let pr = sim::run(&topo, &p, &dag, &Faults::default(), RunOptions::default()).unwrap();
        let series = pr.series.as_ref().unwrap();
        let used: BTreeSet<u32> = series
            .ports
            .iter()
            .filter(|s| s.tx_bytes.iter().sum::<u64>() > 0)
            .map(|s| paths::directed_link(&topo, fabricsim::topology::PortId(s.port)))
            .collect();
        let (msg_qp, ends) = sim::route::number_qps(&dag.messages, qpc);
        assert_eq!(msg_qp.len(), 24);
        assert_eq!(ends.len(), 24 * qpc as usize);
        let router = paths::Router::new(&topo, policy);
        let mut placed = BTreeSet::new();
        for (q, &(s, d)) in ends.iter().enumerate() {
            let (fwd, rev) = paths::qp_hashes(&p, q as u32, s, d);
            let mut links = Vec::new();
            let h = PathModel::Hash;
            paths::subflow_links(&topo, &router, h, s, d, fwd, 0, |_| 0, &mut links);
            paths::subflow_links(&topo, &router, h, d, s, rev, 0, |_| 0, &mut links);
            placed.extend(links);
        }
        assert_eq!(used, placed, "{policy:?}, {qpc} QPs per connection");
        // And the fluid run reports the same QP numbers as the packet run.
        let (fr, _) = flow::run(&topo, &p, &dag, &FlowParams::default()).unwrap();
        let qps = |r: &sim::RunResult| r.messages.iter().map(|m| m.qp).collect::<Vec<_>>();
        assert_eq!(qps(&fr), qps(&pr));
    }
}

#[test]
fn ring_all_reduce_under_one_leaf_matches_the_closed_form() {
    // Eight hosts under one 16-port leaf: every ring edge has its own up and down links, so
    // each step takes alpha + S/(nB): 600 ns (NIC) + 20,401,800 ps (1 MB) + 1,200 ns (path)
    // + 1,200 ns (ACK) = 23,401,800 ps, and the all-reduce 2(n-1) = 14 of them.
    let topo = fat_tree(64, 16);
    let ranks: Vec<u32> = (0..8).collect();
    let dag = ring(&ranks, 1_000_000);
    let (r, _) = flow::run(&topo, &SimParams::roce(), &dag, &FlowParams::default()).unwrap();
    let end = r.messages.iter().filter_map(|m| m.finish_ps).max().unwrap();
    assert_eq!(end, 14 * 23_401_800);
    assert_eq!(r.summary.messages_completed, 8 * 14);
}

#[test]
fn repeated_flow_sets_are_not_solved_again() {
    // Four rounds of an all-to-all among 8 hosts spread over 2 leaves; every message of round
    // r+1 waits for all of round r. Each round starts the same 56 routes: rounds 2-4 are cache
    // hits, and every round lasts exactly as long as the first.
    let topo = fat_tree(32, 8);
    let hosts: Vec<u32> = vec![0, 1, 2, 3, 4, 5, 6, 7];
    let mut dag = MessageDag::default();
    let mut prev: Vec<u32> = Vec::new();
    for _round in 0..4 {
        let mut cur = Vec::new();
        for &s in &hosts {
            for &d in &hosts {
                if s != d {
                    cur.push(dag.push(HostId(s), HostId(d), 100_000, Time::ZERO, &prev));
                }
            }
        }
        prev = cur;
    }
    let (r, st) = flow::run(&topo, &SimParams::roce(), &dag, &FlowParams::default()).unwrap();
    let round_end = |k: usize| {
        r.messages[k * 56..(k + 1) * 56]
            .iter()
            .map(|m| m.finish_ps.unwrap())
            .max()
            .unwrap()
    };
    let round_start = |k: usize| r.messages[k * 56].start_ps.unwrap();
    let d0 = round_end(0) - round_start(0);
    for k in 1..4 {
        assert_eq!(round_end(k) - round_start(k), d0, "round {k}");
    }
    assert!(st.solve.cache_hits >= 3, "{:?}", st.solve);
    // Without the cache: the same results.
    let fp = FlowParams {
        cache_entries: 0,
        ..FlowParams::default()
    };
    let (r2, st2) = flow::run(&topo, &SimParams::roce(), &dag, &fp).unwrap();
    assert_eq!(st2.solve.cache_hits, 0);
    assert_eq!(r2.messages, r.messages);
}

#[test]
fn spraying_splits_a_message_evenly_over_paths() {
    // Host 0 to host 31 across a 2-tier fat-tree (4 up ports per leaf): sprayed over 4 paths
    // (one per spine), each subflow carries a quarter of the wire bytes at a quarter of the
    // NIC link.
    let topo = fat_tree(32, 8);
    let p = SimParams::roce();
    let mut dag = MessageDag::default();
    dag.push(HostId(0), HostId(31), 1_000_000, Time::ZERO, &[]);
    let fp = FlowParams {
        paths: PathModel::Spray { paths: 4 },
        ..FlowParams::default()
    };
    let (r, st) = flow::run(&topo, &p, &dag, &fp).unwrap();
    assert_eq!(st.flows, 4);
    // 1,020,090 wire bytes in quarters of 255,023, 255,023, 255,022, 255,022 B at 100 Gb/s
    // (80 ps/B): the small quarters drain at 20,401,760 ps, the big ones have 1 B left, sent
    // at 200 Gb/s in 40 ps: the NIC link stays full, so the message drains in 20,401,800 ps,
    // as unsplit, and each spine carried a quarter.
    assert_eq!(
        r.messages[0].fct_ps,
        Some(600 * NS + MB_DRAIN_PS + 2 * 2_400 * NS)
    );
}

#[test]
fn adaptive_routing_avoids_an_ecmp_collision() {
    // Two 1 MB flows from hosts 0 and 1 (leaf 0) to hosts 28 and 29 (leaf 7). Pick the second
    // flow's QP index so that its hash takes the same leaf uplink as the first: under ECMP they
    // share it (200 Gb/s each, twice the drain time); the least-loaded choice moves the second
    // flow to an idle uplink and both run at line rate.
    let topo = fat_tree(32, 8);
    let p = SimParams::roce();
    // The leaf uplink a flow of QP number `q` from `s` to `d` hashes to.
    let uplink = |q: u32, s: u32, d: u32| {
        let (fwd, _) = paths::qp_hashes(&p, q, s, d);
        let mut links = Vec::new();
        paths::subflow_links(
            &topo,
            &paths::Router::new(&topo, p.routing),
            PathModel::Hash,
            s,
            d,
            fwd,
            0,
            |_| 0,
            &mut links,
        );
        links[1]
    };
    // QP numbers follow first use: `extra` one-byte messages between hosts 8 and 12 (leaves 2
    // and 3, no link in common with the two flows) come first, so the flows get QPs `extra`
    // and `extra + 1`; take the first `extra` for which they collide.
    let extra = (0..64u32)
        .find(|&e| uplink(e, 0, 28) == uplink(e + 1, 1, 29))
        .expect("a colliding pair among 64 QP numbers");
    let mut dag = MessageDag::default();
    for q in 0..extra {
        let m = dag.push(HostId(8), HostId(12), 1, Time::ZERO, &[]);
        dag.messages[m as usize].qp = q as u16;
    }
    dag.push(HostId(0), HostId(28), 1_000_000, Time::ZERO, &[]);
    dag.push(HostId(1), HostId(29), 1_000_000, Time::ZERO, &[]);
    let run = |paths: PathModel| {
        flow::run(
            &topo,
            &p,
            &dag,
            &FlowParams {
                paths,
                ..FlowParams::default()
            },
        )
        .unwrap()
        .0
    };
    let hashed = run(PathModel::Hash);
    let adaptive = run(PathModel::Adaptive { paths: 1 });
    let (a, b) = (extra as usize, extra as usize + 1);
    for i in [a, b] {
        assert_eq!(
            hashed.messages[i].fct_ps,
            Some(600 * NS + 2 * MB_DRAIN_PS + 2 * 2_400 * NS)
        );
        assert_eq!(
            adaptive.messages[i].fct_ps,
            Some(600 * NS + MB_DRAIN_PS + 2 * 2_400 * NS)
        );
    }
}

#[test]
fn same_input_same_bytes() {
    let topo = fat_tree(32, 8);
    let ranks: Vec<u32> = (0..16).map(|i| i * 2).collect();
    let dag = ring(&ranks, 300_000);
    let run = || {
        let (r, _) = flow::run(&topo, &SimParams::roce(), &dag, &FlowParams::default()).unwrap();
        r.to_json(false)
    };
    assert_eq!(run(), run());
}

#[test]
fn bad_dags_are_refused() {
    let topo = fat_tree(32, 8);
    let mut dag = MessageDag::default();
    dag.push(HostId(0), HostId(99), 10, Time::ZERO, &[]);
    let e = flow::run(&topo, &SimParams::roce(), &dag, &FlowParams::default()).unwrap_err();
    assert!(
        matches!(&e, flow::FlowError::Traffic(s) if s.contains("32 hosts")),
        "{e}"
    );
}

#[test]
fn qps_are_numbered_in_order_of_first_use() {
    // The naive definition: scan messages in order, a new (src, dst, qp) key gets the next
    // number. Random keys with repeats, and NVLink messages without a QP.
    let mut rng = fabricsim::rng::Rng::stream(3, fabricsim::rng::Stream::Test(9), 0);
    let mut dag = MessageDag::default();
    for _ in 0..2_000 {
        let (s, d) = (rng.below(12) as u32, rng.below(12) as u32);
        let m = dag.push(HostId(s), HostId(d), 1, Time::ZERO, &[]);
        dag.messages[m as usize].qp = rng.below(3) as u16;
        if rng.below(10) == 0 {
            dag.messages[m as usize].path = fabricsim::message::Path::NvLink;
        }
    }
    let mut keys: Vec<(u32, u32, u16)> = Vec::new();
    let mut want = Vec::new();
    for m in &dag.messages {
        if m.path != fabricsim::message::Path::Net {
            want.push(u32::MAX);
            continue;
        }
        let k = (m.src.0, m.dst.0, m.qp);
        let id = keys.iter().position(|&x| x == k).unwrap_or_else(|| {
            keys.push(k);
            keys.len() - 1
        });
        want.push(id as u32);
    }
    let (got, ends) = sim::route::number_qps(&dag.messages, 1);
    assert_eq!(got, want);
    assert_eq!(ends, keys.iter().map(|k| (k.0, k.1)).collect::<Vec<_>>());
}

#[test]
fn nvlink_and_fabric_messages_start_together() {
    // An NVLink message between GPUs of one server takes bytes / rate: 1 MB at 3.6 Tb/s =
    // 8e6 bits / 3.6e12 bit/s = 2,222,223 ps (rounded up); a fabric message posted at the same
    // time, listed before and after NVLink ones, keeps its closed-form time (NIC, drain, path,
    // ACK: 600 ns + 20,401,800 ps + 2 x 2,400 ns on different leaves).
    let topo = fat_tree(32, 8);
    let mut dag = MessageDag::default();
    dag.nvlink_rate = Some(BitRate::gbps(3_600));
    let nv = |dag: &mut MessageDag, s: u32, d: u32| {
        let m = dag.push(HostId(s), HostId(d), 1_000_000, Time::ZERO, &[]);
        dag.messages[m as usize].path = fabricsim::message::Path::NvLink;
    };
    nv(&mut dag, 4, 5);
    dag.push(HostId(0), HostId(31), 1_000_000, Time::ZERO, &[]);
    nv(&mut dag, 6, 7);
    let (r, st) = flow::run(&topo, &SimParams::roce(), &dag, &FlowParams::default()).unwrap();
    // Three event times, in order: both NVLink starts (0), the fabric start (600 ns), its
    // drain; NVLink completions without dependants need no event.
    assert_eq!(st.batches, 3);
    assert_eq!(r.messages[0].fct_ps, Some(2_222_223));
    assert_eq!(r.messages[2].fct_ps, Some(2_222_223));
    assert_eq!(
        r.messages[1].fct_ps,
        Some(600 * NS + MB_DRAIN_PS + 2 * 2_400 * NS)
    );
}

/// One GPU's NVLink transfers share its one-way NVLink rate one after another, in both engines:
/// two 1 MB transfers posted together from GPU 0 at 3.6 Tb/s finish at 1 x and 2 x 1e6 x 8 /
/// 3.6e12 s = 2,222,223 ps (rounded up per transfer), and both engines agree exactly.
#[test]
fn nvlink_transfers_of_one_gpu_share_its_rate_in_both_engines() {
    let topo = fat_tree(32, 8);
    let p = SimParams::roce();
    let mut dag = MessageDag::default();
    for dst in [1, 2] {
        let m = dag.push(HostId(0), HostId(dst), 1_000_000, Time::ZERO, &[]);
        dag.messages[m as usize].path = fabricsim::message::Path::NvLink;
    }
    let rate = BitRate::gbps(3600);
    dag.nvlink_rate = Some(rate);
    let one = rate.serialize(1_000_000).ps();
    assert_eq!(one, 2_222_223);
    let (fl, _) = flow::run(&topo, &p, &dag, &FlowParams::default()).unwrap();
    let pk = sim::run(&topo, &p, &dag, &Faults::default(), RunOptions::default()).unwrap();
    for r in [&fl, &pk] {
        let mut ends: Vec<u64> = r.messages.iter().map(|m| m.fct_ps.unwrap()).collect();
        ends.sort_unstable();
        assert_eq!(ends, vec![one, 2 * one]);
    }
}

/// A long run reports where it is every few thousand batches (`flow::run_observed`, the CLI's
/// progress line), and a false answer stops it with partial results.
#[test]
fn a_long_run_reports_its_progress_and_stops_when_told() {
    let topo = fat_tree(32, 8);
    let p = SimParams::roce();
    // A chain of 10,000 messages, one after another: a batch or more each.
    let mut dag = MessageDag::default();
    let mut last: Option<u32> = None;
    for i in 0..10_000u32 {
        let deps: Vec<u32> = last.into_iter().collect();
        last = Some(dag.push(
            HostId(i % 32),
            HostId((i + 1) % 32),
            1000,
            Time::ZERO,
            &deps,
        ));
    }
    let mut seen = Vec::new();
    let mut keep = |f: &flow::Progress| {
        seen.push((f.now_ps, f.sent, f.total));
        true
    };
    let (r, _) =
        flow::run_observed(&topo, &p, &dag, &FlowParams::default(), Some(&mut keep)).unwrap();
    assert_eq!(r.sim.status, fabricsim::sim::Status::Complete);
    assert!(seen.len() >= 2, "{seen:?}");
    assert!(
        seen.windows(2)
            .all(|w| w[0].0 < w[1].0 && w[0].1 < w[1].1 && w[1].2 == 10_000)
    );
    let mut stop = |_: &flow::Progress| false;
    let (r, _) =
        flow::run_observed(&topo, &p, &dag, &FlowParams::default(), Some(&mut stop)).unwrap();
    assert_eq!(r.sim.status, fabricsim::sim::Status::Interrupted);
    assert!(r.summary.messages_completed < 10_000);
}
