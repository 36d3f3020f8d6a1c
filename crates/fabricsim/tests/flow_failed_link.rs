//! A link down from the start of a run, on both engines: the flow engine routes around it as
//! the converged fabric does (`reroute::Converged`, local repair and the global reroute done at
//! time 0); the packet engine runs the same failure with short repair delays. Leaf 0 of a
//! 16-host fat tree keeps one of its 4 up-links, so its 4 senders to the next leaf share it:
//! both engines agree on each family, and without DCQCN's cuts the run's end is the shared
//! link's closed form, 4 x bytes / rate.
//! `cargo test -p fabricsim --test flow_failed_link -- --nocapture` prints the figures.

use fabricsim::engine_choice::{self, EngineKind};
use fabricsim::message::MessageDag;
use fabricsim::sim::reroute::RerouteDelays;
use fabricsim::sim::{Fault, Faults, RunOptions, RunResult, SimParams};
use fabricsim::topology::{HostId, LinkId, NodeId, Topology};
use fabricsim::units::Time;
use fabricsim_cases::flow_cases;

const HOSTS: u32 = 16;
const BYTES: u64 = 4 << 20;

/// `fabric`'s profile parameters (roce-400g: ECMP with DCQCN; ib-ndr: adaptive routing over
/// credits; uec-400g: spraying).
fn params(fabric: &str) -> SimParams {
    flow_cases::fabric(128, fabric).1
}

/// The leaf above host `h`.
fn leaf_of(t: &Topology, h: u32) -> NodeId {
    t.peer_node(t.host_port(HostId(h)))
}

/// The links of leaf 0's up-ports.
fn leaf0_uplinks(t: &Topology) -> Vec<LinkId> {
    let leaf = &t.nodes[leaf_of(t, 0).idx()];
    leaf.up_ports().map(|p| t.ports[p as usize].link).collect()
}

/// Each host of leaf 0 sends `BYTES` to the host 4 places on (on the next leaf); nothing
/// else runs, so leaf 0's up-links carry all of it.
fn leaf0_out(t: &Topology) -> MessageDag {
    let mut d = MessageDag::default();
    for s in 0..HOSTS {
        if leaf_of(t, s) == leaf_of(t, 0) {
            d.push(HostId(s), HostId((s + 4) % HOSTS), BYTES, Time::ZERO, &[]);
        }
    }
    d
}

fn down_from_start(links: &[LinkId], global: Option<Time>) -> Faults {
    Faults {
        faults: links
            .iter()
            .map(|&link| Fault::Down {
                link,
                at: Time::ZERO,
            })
            .collect(),
        reroute: RerouteDelays {
            local_repair: Some(Time::from_ns(100)),
            global,
        },
    }
}

fn run(kind: EngineKind, t: &Topology, p: &SimParams, d: &MessageDag, f: &Faults) -> RunResult {
    engine_choice::run(kind, t, p, d, f, RunOptions::default()).expect("the run")
}

fn end_us(r: &RunResult) -> f64 {
    r.sim.end_ps as f64 / 1e6
}

#[test]
fn a_leaf_left_with_one_uplink_shares_it_on_both_engines() {
    let t = flow_cases::fat_tree(HOSTS, 8);
    let d = leaf0_out(&t);
    let ups = leaf0_uplinks(&t);
    assert_eq!(ups.len(), 4, "leaf 0 has 4 up-links");
    assert_eq!(d.messages.len(), 4);
    let faults = down_from_start(&ups[1..], Some(Time::from_ns(200)));
    // 4 senders' bytes through the one 400G up-link left: the closed form of the shared link.
    let shared_us = 4.0 * BYTES as f64 * 8.0 / 400e9 * 1e6;
    for fabric in ["roce-400g", "ib-ndr", "uec-400g"] {
        let p = params(fabric);
        let [(flow_ok, flow), (packet_ok, packet)] =
            [EngineKind::Flow, EngineKind::Packet].map(|k| {
                (
                    run(k, &t, &p, &d, &Faults::default()),
                    run(k, &t, &p, &d, &faults),
                )
            });
        println!(
            "{fabric}: healthy flow {:.1} / packet {:.1} us; 3 of 4 up-links down flow {:.1} / packet {:.1} us (the shared link's closed form {shared_us:.1} us)",
            end_us(&flow_ok),
            end_us(&packet_ok),
            end_us(&flow),
            end_us(&packet)
        );
        for (name, ok, r) in [("flow", &flow_ok, &flow), ("packet", &packet_ok, &packet)] {
            assert_eq!(
                r.summary.messages_completed, 4,
                "{fabric} {name}: every message lands"
            );
            assert_eq!(r.counters.drops.no_route + r.counters.drops.link_down, 0);
            assert!(
                end_us(r) > 1.5 * end_us(ok),
                "{fabric} {name}: the failure slows the run"
            );
        }
        let apart = end_us(&flow) / end_us(&packet) - 1.0;
        assert!(
            apart.abs() < 0.03,
            "{fabric}: flow and packet {:.1}% apart",
            100.0 * apart
        );
        // Without ECN marking's rate cuts (roce-400g's DCQCN cuts the 4 colliding flows)
        // the shared link runs full.
        if fabric != "roce-400g" {
            let rel = end_us(&flow) / shared_us;
            assert!(
                (1.0..1.05).contains(&rel),
                "{fabric}: {rel} of the closed form"
            );
        }
        let warned = flow
            .sim
            .warnings
            .iter()
            .any(|w| w.contains("down from the start"));
        assert!(
            warned,
            "the flow run says how it took the failure: {:?}",
            flow.sim.warnings
        );
    }
}

#[test]
fn the_flow_engine_refuses_what_it_cannot_route_or_time() {
    let t = flow_cases::fat_tree(HOSTS, 8);
    let d = leaf0_out(&t);
    let ups = leaf0_uplinks(&t);
    let err = |f: &Faults| {
        engine_choice::run(
            EngineKind::Flow,
            &t,
            &params("roce-400g"),
            &d,
            f,
            RunOptions::default(),
        )
        .unwrap_err()
        .to_string()
    };
    // Every up-link of leaf 0 down: its hosts reach no other leaf.
    let e = err(&down_from_start(&ups, Some(Time::from_ns(200))));
    assert!(e.contains("cannot be reached") && e.contains("down"), "{e}");
    // Host 0's own link: nothing routes around it.
    let nic = t.ports[t.host_port(HostId(0)).idx()].link;
    let e = err(&down_from_start(&[nic], Some(Time::from_ns(200))));
    assert!(e.contains("NIC's own link"), "{e}");
    // Without a global reroute the fabric never converges around the failure.
    let e = err(&down_from_start(&ups[..1], None));
    assert!(e.contains("global_reroute_delay"), "{e}");
    // A failure during the run is a transient the flow engine does not model.
    let mut late = down_from_start(&ups[..1], Some(Time::from_ns(200)));
    late.faults[0] = Fault::Down {
        link: ups[0],
        at: Time::from_us(5),
    };
    let e = err(&late);
    assert!(
        e.contains("during the run") && e.contains("--engine packet"),
        "{e}"
    );
}
