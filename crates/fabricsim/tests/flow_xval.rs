//! Cross-validation of the flow engine against the packet engine (issue 7, "Must show"): on
//! permutation, incast, ring all-reduce and all-to-all cases of 128 to 1,024 hosts, on ib-ndr
//! and roce-400g without loss: mean FCT within 10%, p99 within 20% for independent flows,
//! collective time (last completion) within 5%.
//! `cargo test -p fabricsim --test flow_xval -- --nocapture` prints the table.
//!
//! The 0.1%-loss cases are not asserted yet: their p99 and collective times are set by which
//! few messages hit an ACK timeout (a Poisson count near 1 per case, drawn independently by
//! each engine), and the packet engine's selective repeat waits for the timeout after any loss
//! (see `flow::loss::FITTED`). `cargo run --release -p fabricsim --example flow_calibrate --
//! cases` prints them beside these.

mod flow_cases;

use fabricsim::engine_choice::EngineKind;
use flow_cases::{err, stats};

#[test]
fn flow_engine_matches_the_packet_engine_on_the_shared_cases() {
    println!(
        "| case | fabric | loss | mean FCT us packet / flow | p99 FCT us packet / flow | last us packet / flow |"
    );
    println!("|---|---|---|---|---|---|");
    let mut failures = Vec::new();
    for c in flow_cases::cases().into_iter().filter(|c| c.loss == 0.0) {
        let p = flow_cases::run(&c, EngineKind::Packet);
        let f = flow_cases::run(&c, EngineKind::Flow);
        assert_eq!((p.sim.engine, f.sim.engine), ("packet", "flow"));
        println!("{}", flow_cases::row(&c, &p, &f));
        let ((pm, p99, pl), (fm, f99, fl)) = (stats(&p), stats(&f));
        let mut check = |what: &str, a: f64, b: f64, tol: f64| {
            if err(a, b).abs() > tol {
                failures.push(format!(
                    "{} on {} at {}% loss: {what} packet {a:.0} ps, flow {b:.0} ps",
                    c.name,
                    c.fabric,
                    100.0 * c.loss
                ));
            }
        };
        if c.collective {
            check("collective time", pl as f64, fl as f64, 0.05);
        } else {
            check("mean FCT", pm, fm, 0.10);
            check("p99 FCT", p99 as f64, f99 as f64, 0.20);
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}
