//! The input bounds on sizes and times (`units::MAX_BYTES`, `MAX_TIME`) at each bound: the
//! largest size runs to a completion no shorter than its serialization on both engines' checks,
//! one byte more is refused; a 2^64-1-byte message, which wrapped to a 6 us completion on the
//! flow engine, is refused by both engines.

use fabricsim_cases::flow_cases;

use fabricsim::flow::{self, FlowParams, paths};
use fabricsim::message::MessageDag;
use fabricsim::sim::{self, Faults, SimParams};
use fabricsim::topology::HostId;
use fabricsim::units::{MAX_BYTES, MAX_TIME, Time, parse_bytes, parse_time};

fn one(bytes: u64, start: Time) -> MessageDag {
    let mut dag = MessageDag::default();
    dag.push(HostId(0), HostId(31), bytes, start, &[]);
    dag
}

#[test]
fn the_largest_size_completes_no_sooner_than_its_serialization() {
    let topo = flow_cases::fat_tree(32, 8);
    let p = SimParams::roce();
    let (r, _) = flow::run(&topo, &p, &one(MAX_BYTES, MAX_TIME), &FlowParams::default()).unwrap();
    let m = &r.messages[0];
    // 400 Gb/s: 20 ps per wire byte.
    let drain = paths::wire_bytes(&p, MAX_BYTES) * 20;
    assert!(paths::wire_bytes(&p, MAX_BYTES) > MAX_BYTES);
    assert!(m.fct_ps.unwrap() >= drain, "{:?} < {drain}", m.fct_ps);
}

#[test]
fn sizes_and_times_past_the_bounds_are_refused_by_both_engines() {
    let topo = flow_cases::fat_tree(32, 8);
    let p = SimParams::roce();
    for dag in [
        one(u64::MAX, Time::ZERO),
        one(MAX_BYTES + 1, Time::ZERO),
        one(1000, Time(MAX_TIME.0 + 1)),
    ] {
        let e = flow::run(&topo, &p, &dag, &FlowParams::default()).unwrap_err();
        assert!(
            matches!(&e, flow::FlowError::Traffic(s) if s.contains("at most 2^50 B")),
            "{e}"
        );
        let e = sim::Engine::new(&topo, &p, &dag, &Faults::default())
            .err()
            .unwrap();
        assert!(
            matches!(&e, sim::SimError::Traffic(s) if s.contains("at most 2^50 B")),
            "{e}"
        );
    }
    assert_eq!(paths::wire_bytes(&p, u64::MAX), u64::MAX);
}

#[test]
fn parsed_sizes_and_times_stop_at_the_bounds() {
    assert_eq!(parse_bytes("1125899906842624"), Ok(MAX_BYTES));
    assert!(parse_bytes("1125899906842625").is_err());
    assert!(
        parse_bytes("2000TB")
            .unwrap_err()
            .to_string()
            .contains("2^50")
    );
    assert_eq!(parse_time("86400s"), Ok(MAX_TIME));
    assert!(parse_time("86401s").is_err());
    assert!(
        parse_time("1e30s")
            .unwrap_err()
            .to_string()
            .contains("24 hours")
    );
}
