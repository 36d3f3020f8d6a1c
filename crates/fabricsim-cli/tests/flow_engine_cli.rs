//! `--engine` on `collective`: the flow engine agrees with the packet engine on a small ring
//! all-reduce sweep (issue 7: collective time within 5%), the engine that ran is reported, and
//! a bad value exits 2 naming the flag.

mod support;

use support::{exits_2_saying, fabricsim};

/// The (size, time) rows and the engine of a `collective --format json` run.
fn sweep(fabric: &str, engine: &str) -> (Vec<(u64, f64)>, String) {
    let v = support::json_ok(&[
        "collective",
        "--seeds",
        "1",
        "--gpus",
        "16",
        "--fabric",
        fabric,
        "--min-bytes",
        "1M",
        "--max-bytes",
        "16M",
        "--engine",
        engine,
        "--format",
        "json",
    ]);
    let rows = v["table"]["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["size_bytes"].as_u64().unwrap(),
                r["time_us"]["mean"].as_f64().unwrap(),
            )
        })
        .collect();
    (rows, v["engine"].as_str().unwrap().to_string())
}

#[test]
fn flow_and_packet_engines_agree_on_a_small_all_reduce() {
    for fabric in ["ib-ndr", "roce-400g"] {
        let (packet, pe) = sweep(fabric, "packet");
        let (flow, fe) = sweep(fabric, "flow");
        assert_eq!((pe.as_str(), fe.as_str()), ("packet", "flow"));
        assert_eq!(packet.len(), flow.len());
        for (p, f) in packet.iter().zip(&flow) {
            assert_eq!(p.0, f.0);
            let err = (f.1 - p.1).abs() / p.1;
            assert!(
                err < 0.05,
                "{fabric} {} B: packet {} us, flow {} us",
                p.0,
                p.1,
                f.1
            );
        }
    }
}

#[test]
fn auto_says_which_engine_it_chose_and_why() {
    let o = fabricsim(&["collective", "--gpus", "16", "--max-bytes", "1M"]);
    assert!(o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("engine auto: packet (") && err.contains("<= 20000000)"),
        "{err}"
    );
}

#[test]
fn a_bad_engine_exits_2_naming_the_flag() {
    for cmd in [
        &["collective", "--gpus", "16"][..],
        &["train", "--gpus", "16", "--model", "llama3-8b"],
    ] {
        exits_2_saying(
            &[cmd, &["--engine", "fluid"]].concat(),
            &["--engine", "fluid", "packet, flow, auto"],
        );
    }
}
