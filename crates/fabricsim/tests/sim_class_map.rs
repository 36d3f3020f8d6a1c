//! `[classes] priority_to_tc` / `sl_to_vl` (`mech::class_map`): a message's class label (an
//! 802.1Q priority, IEEE 802.1Q 8.6.6; an InfiniBand SL, IBA Vol. 1 7.6.6) reaches the engine
//! class the table gives, in both engines; labels mapped to one class share it, a table is
//! transparent (the same run as the engine classes given directly), and bad tables exit 2
//! naming their key.

use fabricsim::message::MessageDag;
use fabricsim::scenario::Scenario;
use fabricsim::scenario::sim::build;
use fabricsim::sim::class_map::ClassMap;
use fabricsim::sim::{Faults, RunResult, SimParams};
use fabricsim::topology::{HostId, Topology};
use fabricsim::units::{BitRate, Time};
use fabricsim_cases::sim_util::{run, setup, star};
use std::path::Path;

/// Bulk (4 MB from host 1) on label `bulk` and, 50 us later, a 1 MB probe from host 2 on label
/// `probe`, both to host 0: one egress between them.
fn bulk_and_probe(bulk: u8, probe: u8) -> MessageDag {
    let mut dag = MessageDag::default();
    for (src, bytes, at, label) in [(1, 4_000_000, 0, bulk), (2, 1_000_000, 50, probe)] {
        let m = dag.push(HostId(src), HostId(0), bytes, Time::from_us(at), &[]);
        dag.messages[m as usize].class = Some(label);
    }
    dag
}

/// RoCEv2 with three classes under strict priority (class 1 before class 2).
fn roce3() -> SimParams {
    let mut p = SimParams::roce();
    p.traffic_classes = 3;
    p
}

fn topo() -> Topology {
    star(&[BitRate::gbps(100); 3], Time::from_ns(100))
}

/// The probe's time over its ideal, ps.
fn probe_late(r: &RunResult) -> f64 {
    let m = &r.messages[1];
    m.fct_ps.unwrap() as f64 - m.ideal_fct_ps as f64
}

fn flow(p: &SimParams, dag: &MessageDag) -> RunResult {
    let t = topo();
    let fp = fabricsim::engine_choice::flow_params(&t, p);
    fabricsim::flow::run(&t, p, dag, &fp).unwrap().0
}

fn without_wall(mut r: RunResult) -> RunResult {
    r.sim.wall_s = 0.0;
    r.sim.events_per_s = 0.0;
    r.sim.packets_per_s = 0.0;
    r
}

#[test]
fn priorities_reach_the_traffic_class_the_table_gives_in_both_engines() {
    // Priority 3 (the probe) to class 1, every other priority to class 2 (the bulk's 0).
    let mut mapped = roce3();
    mapped.class_map = Some(ClassMap::new(&[2, 2, 2, 1, 2, 2, 2, 2]));
    mapped.validate().unwrap();
    let apart = run(&topo(), &mapped, &bulk_and_probe(0, 3), &Faults::default());
    // The same engine classes given directly: the table is transparent.
    let direct = run(&topo(), &roce3(), &bulk_and_probe(2, 1), &Faults::default());
    assert_eq!(without_wall(apart.clone()), without_wall(direct.clone()));
    assert_eq!(
        (apart.messages[0].class, apart.messages[1].class),
        (Some(2), Some(1)),
        "results name the engine class"
    );
    // Both priorities on class 2: the probe queues behind the bulk.
    let mut shared = roce3();
    shared.class_map = Some(ClassMap::new(&[2, 2, 2, 2, 2, 2, 2, 2]));
    let together = run(&topo(), &shared, &bulk_and_probe(0, 3), &Faults::default());
    let packet_ps = 4_200.0 * 8.0 / 100e9 * 1e12;
    assert!(probe_late(&apart) <= packet_ps, "{}", probe_late(&apart));
    assert!(
        probe_late(&together) > 10.0 * packet_ps,
        "{}",
        probe_late(&together)
    );
    // The flow engine reads the same table.
    let (fa, fd) = (
        flow(&mapped, &bulk_and_probe(0, 3)),
        flow(&roce3(), &bulk_and_probe(2, 1)),
    );
    assert_eq!(
        fa.messages.iter().map(|m| m.fct_ps).collect::<Vec<_>>(),
        fd.messages.iter().map(|m| m.fct_ps).collect::<Vec<_>>()
    );
    let ft = flow(&shared, &bulk_and_probe(0, 3));
    assert!(probe_late(&ft) > 10.0 * probe_late(&fa).max(packet_ps));
}

#[test]
fn a_label_past_the_table_and_a_table_past_the_classes_are_refused() {
    let mut p = roce3();
    p.class_map = Some(ClassMap::new(&[2, 2, 2, 1, 2, 2, 2, 2]));
    let e = fabricsim_packet::run(
        &topo(),
        &p,
        &bulk_and_probe(0, 8),
        &Faults::default(),
        Default::default(),
    )
    .unwrap_err();
    assert!(e.to_string().contains("class label 8"), "{e}");
    p.class_map = Some(ClassMap::new(&[2, 2, 2, 3, 2, 2, 2, 2]));
    let e = p.validate().unwrap_err();
    assert_eq!(e.field, "class_map", "{e:?}");
}

const SCENARIO: &str =
    "[cluster]\ngpus = 16\n[traffic]\nkind = \"permutation\"\nbytes = \"64KB\"\n";

#[test]
fn the_tables_are_scenario_keys_of_their_family() {
    let s = setup(&format!(
        "{SCENARIO}class = 5\n[classes]\ncount = 3\npriority_to_tc = [1, 1, 1, 2, 1, 2, 1, 1]\n"
    ));
    let m = s.params.class_map.expect("a priority map");
    assert_eq!(m.entries(), &[1, 1, 1, 2, 1, 2, 1, 1]);
    assert!(s.dag.messages.iter().all(|m| m.class == Some(5)));
    assert!(
        run(&s.net.topo, &s.params, &s.dag, &s.faults)
            .messages
            .iter()
            .all(|m| m.class == Some(2))
    );
    let ib = setup(&format!(
        "{SCENARIO}class = 12\n[fabric]\nprofile = \"ib-ndr\"\n[classes]\n\
         sl_to_vl = [1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2]\n"
    ));
    assert_eq!(ib.params.class_map.unwrap().labels(), 16);
    let bad = |extra: &str| {
        let text = format!("{SCENARIO}{extra}");
        build(
            &Scenario::parse("t.toml", &text).unwrap(),
            Path::new("."),
            None,
        )
        .unwrap_err()
    };
    let e = bad("[classes]\npriority_to_tc = [1, 1, 1]\n");
    assert_eq!(e.key, "classes.priority_to_tc", "{e}");
    assert!(e.allowed.contains("8 entries"), "{e}");
    let e = bad("[classes]\npriority_to_tc = [1, 1, 1, 2, 1, 1, 1, 1]\n");
    assert!(e.problem.contains("beyond"), "{e}");
    let e = bad("[classes]\nsl_to_vl = [1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1]\n");
    assert_eq!(e.key, "classes.sl_to_vl", "{e}");
    let e = bad("class = 9\n[classes]\ncount = 3\npriority_to_tc = [1, 1, 1, 2, 1, 1, 1, 1]\n");
    assert_eq!(e.key, "traffic.class", "{e}");
}
