//! Isolation by traffic class on every fabric family, both engines (issue 28, item 4): the
//! examples `examples/isolation-{roce,ib,uec}.toml` put a latency-sensitive job (40 x 64 KB from
//! host 8 to host 0, class 1) beside a bulk job (4 x 16 MB into host 0, class 2). Its p99 FCT is
//! compared in three runs: alone (the bulk job's flows left out), isolated (the example as
//! shipped: class 1 served before class 2, by strict priority on Ethernet and the high VL
//! arbitration table on InfiniBand) and shared (its messages moved into class 2).
//!
//! Tolerances. Isolated: within 10% of alone. Strict priority is not preemptive: a class-1
//! packet waits for at most the bulk frame in service at each hop (4 KB at 400 Gb/s: 84 ns, two
//! switch egresses and the sender's NIC), under 0.3 us against a 3.5-4.4 us FCT; the flow
//! engine's fluid has no frames and gives the alone value. Shared: at least twice alone. Sharing
//! host 0's link with the four bulk flows gives a small message a fifth of it by max-min (the flow
//! engine), and a packet queues behind the bulk job's backlog at that egress (the packet
//! engine); either is several times its serialization, which is most of its alone FCT.

use std::path::Path;

use fabricsim::engine_choice::{self, EngineKind};
use fabricsim::scenario::Scenario;
use fabricsim::scenario::sim::build;

/// The example's text, and its two variants: alone (no class-2 flows) and shared (the small
/// messages in class 2).
fn variants(family: &str) -> [(&'static str, String); 3] {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples")
        .join(format!("isolation-{family}.toml"));
    let text = std::fs::read_to_string(&path).expect("the example");
    let alone: String = text
        .lines()
        .filter(|l| !l.contains("class = 2 }"))
        .map(|l| format!("{l}\n"))
        .collect();
    let shared = text.replace("class = 1 }", "class = 2 }");
    assert_ne!(alone, text);
    assert_ne!(shared, text);
    [("alone", alone), ("isolated", text), ("shared", shared)]
}

/// The p99 FCT (nearest rank) of the 64 KB messages, in ps.
fn small_p99(text: &str, kind: EngineKind) -> u64 {
    let sc = Scenario::parse("isolation.toml", text).expect("valid");
    let s = build(&sc, Path::new("."), None).expect("builds");
    let r = engine_choice::run(
        kind,
        &s.net.topo,
        &s.params,
        &s.dag,
        &s.faults,
        Default::default(),
    )
    .expect("runs");
    assert_eq!(r.summary.messages_completed, r.summary.messages_total);
    r.check_conservation().expect("conserved");
    let mut f: Vec<u64> = r
        .messages
        .iter()
        .filter(|m| m.bytes == 64_000)
        .map(|m| m.fct_ps.expect("completed"))
        .collect();
    assert_eq!(f.len(), 40);
    f.sort_unstable();
    f[(0.99 * f.len() as f64).ceil() as usize - 1]
}

fn isolation_holds(family: &str) {
    for kind in [EngineKind::Packet, EngineKind::Flow] {
        let [alone, isolated, shared] = variants(family).map(|(_, t)| small_p99(&t, kind) as f64);
        eprintln!(
            "{family} {kind:?}: p99 alone {:.3} us, isolated {:.3} us, shared {:.3} us",
            alone / 1e6,
            isolated / 1e6,
            shared / 1e6
        );
        assert!(
            isolated <= 1.10 * alone,
            "{family} {kind:?}: isolated {isolated} alone {alone}"
        );
        assert!(
            shared >= 2.0 * alone,
            "{family} {kind:?}: shared {shared} alone {alone}"
        );
    }
}

#[test]
fn roce_priorities_isolate_a_small_message_job_from_a_bulk_one() {
    isolation_holds("roce");
}

#[test]
fn ib_vl_arbitration_isolates_a_small_message_job_from_a_bulk_one() {
    isolation_holds("ib");
}

#[test]
fn uec_traffic_classes_isolate_a_small_message_job_from_a_bulk_one() {
    isolation_holds("uec");
}
