//! A degraded link (`[[faults.link]] rate_gbps`, `scenario::link_phy`): lanes lost, the link
//! trained down but up. Its rate is the topology's, so both engines run it; the ring all-reduce
//! through it slows to the degraded link's pace (Patarasuk and Yuan 2009: a ring runs at its
//! slowest link), on the packet engine and the flow engine alike.

use fabricsim::scenario::Scenario;
use fabricsim::workload::collective::{CollectiveSpec, Comm, Op, compile};
use fabricsim::workload::run_engine::Cluster;
use fabricsim_input::scenario::link_phy;

/// GPU 0 of each of 8 servers of a 64-GPU rail-optimized fabric; `engine`, and the NIC link of
/// GPU 0 at `rate_gbps` when given.
fn all_reduce_s(fabric: &str, engine: &str, rate_gbps: Option<u32>) -> f64 {
    let cluster = |faults: &str| {
        let mut s = Scenario::parse("t.toml", &format!("[cluster]\ngpus = 64\n{faults}")).unwrap();
        let flags = [
            ("--topology", "rail-optimized"),
            ("--fabric", fabric),
            ("--engine", engine),
        ];
        s.apply_flags(&flags.map(|(f, v)| (f.to_string(), v.to_string())))
            .unwrap();
        let mut c = Cluster::new(&s).unwrap();
        if let Some(f) = &s.file.faults {
            link_phy::apply(&s.source, f, &mut c.topology).unwrap();
        }
        c
    };
    let c0 = cluster("");
    let link = c0
        .topology
        .port(c0.topology.host_port(c0.place.host(0)))
        .link
        .0;
    let c = match rate_gbps {
        None => c0,
        Some(g) => cluster(&format!(
            "[[faults.link]]\nlink = {link}\nrate_gbps = {g}\n"
        )),
    };
    let g = c.place.gpus_per_node();
    let comm = Comm {
        place: &c.place,
        gpus: (0..8 * g).filter(|x| x % g == 0).collect(),
    };
    let spec = CollectiveSpec::with_defaults(Op::AllReduce, 32 << 20, 1);
    let dag = compile(&spec, &comm, c.nvlink()).unwrap();
    c.run(&dag, None).unwrap().time.as_secs_f64()
}

#[test]
fn a_ring_through_a_quarter_rate_link_runs_at_that_links_pace_on_both_engines() {
    // 400G -> 100G on one ring hop: the ring's bandwidth term takes 4x as long; its latency
    // term does not grow, so a little under 4x on credits (ib-ndr). On roce-400g the leaf's
    // queue to the 100G port fills from a 400G sender: ECN marks cut the sender below the
    // 100G it could keep (DCQCN), and the ring loses more than the rate alone.
    let mut slow = Vec::new();
    for fabric in ["ib-ndr", "roce-400g"] {
        for engine in ["packet", "flow"] {
            let full = all_reduce_s(fabric, engine, None);
            let degraded = all_reduce_s(fabric, engine, Some(100));
            let ratio = degraded / full;
            eprintln!("{fabric} {engine}: {full:e} s -> {degraded:e} s at 100G ({ratio:.2}x)");
            assert!(ratio > 3.3, "{fabric} {engine}: {ratio}");
            slow.push((fabric, engine, ratio));
        }
    }
    let (ib_packet, ib_flow) = (slow[0].2, slow[1].2);
    assert!(ib_packet < 4.1 && ib_flow < 4.1, "{slow:?}");
    assert!((ib_packet - ib_flow).abs() / ib_packet < 0.05, "{slow:?}");
    // DCQCN's loss on top of the rate, on the packet engine.
    assert!(slow[2].2 > ib_packet * 1.05, "{slow:?}");
}

#[test]
fn a_degraded_rate_must_be_below_the_links_and_lane_bers_match_its_lanes() {
    let s = |faults: &str| {
        Scenario::parse(
            "t.toml",
            &format!("[cluster]\ngpus = 64\n[fabric]\nprofile = \"roce-400g\"\n{faults}"),
        )
        .unwrap()
    };
    let err = |faults: &str| {
        let sc = s(faults);
        let mut c = Cluster::new(&sc).unwrap();
        link_phy::apply(
            &sc.source,
            sc.file.faults.as_ref().unwrap(),
            &mut c.topology,
        )
        .unwrap_err()
        .to_string()
    };
    let e = err("[[faults.link]]\nlink = 0\nrate_gbps = 400\n");
    assert!(
        e.contains("t.toml") && e.contains("rate_gbps") && e.contains("1 to 399"),
        "{e}"
    );
    let e = err("[[faults.link]]\nlink = 0\nlane_ber = [1e-8, 1e-8, 1e-8]\n");
    assert!(
        e.contains("t.toml") && e.contains("lane_ber") && e.contains("4 or 2 BERs"),
        "{e}"
    );
    // A lane BER out of range, through `sim`'s build: file, key, value and what is allowed.
    let sc = s(
        "[traffic]\nkind = \"permutation\"\nbytes = \"1MB\"\n[[faults.link]]\nlink = 0\nlane_ber = [1e-8, 0.7]\n",
    );
    let e = match fabricsim::scenario::sim::build(&sc, std::path::Path::new("."), None) {
        Err(e) => e.to_string(),
        Ok(_) => panic!("a lane BER of 0.7 was accepted"),
    };
    assert!(
        e.contains("t.toml")
            && e.contains("lane_ber")
            && e.contains("0.7")
            && e.contains("0 <= BER < 0.5"),
        "{e}"
    );
}
