//! `fabricsim sim --trace FILE`: trace-event JSON (report/trace.rs) that parses, holds the
//! run's message spans and port queue counters sorted by time, and is the same bytes twice;
//! a path that cannot be written is refused before the run.

mod support;

use support::{examples, json_file, tmp};

fn traced(name: &str) -> std::path::PathBuf {
    let ex = examples().join("sim-permutation.toml");
    let out = tmp(name);
    let o = support::fabricsim(&[
        "sim",
        ex.to_str().unwrap(),
        "--seed",
        "3",
        "--out",
        tmp(&format!("{name}.results.json")).to_str().unwrap(),
        "--trace",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", support::stderr(&o));
    out
}

#[test]
fn trace_has_sorted_spans_and_counters_and_repeats() {
    let a = traced("trace-a.json");
    let v = json_file(&a);
    let events = v["traceEvents"].as_array().expect("traceEvents array");
    let spans: Vec<_> = events.iter().filter(|e| e["ph"] == "X").collect();
    let counters: Vec<_> = events.iter().filter(|e| e["ph"] == "C").collect();
    // The example's 16 messages, each a span with a positive duration on its sender's track.
    assert_eq!(spans.len(), 16);
    assert!(
        spans
            .iter()
            .all(|e| e["dur"].as_f64().unwrap() > 0.0 && e["pid"].is_u64())
    );
    // Its ports sampled every 20 us: counters of queued bytes.
    assert!(!counters.is_empty());
    assert!(counters.iter().all(|e| e["args"]["bytes"].is_u64()));
    let ts: Vec<f64> = events
        .iter()
        .filter(|e| e["ph"] != "M")
        .map(|e| e["ts"].as_f64().unwrap())
        .collect();
    assert!(ts.windows(2).all(|w| w[0] <= w[1]), "events sorted by time");
    let b = traced("trace-b.json");
    assert_eq!(std::fs::read(&a).unwrap(), std::fs::read(&b).unwrap());
}

#[test]
fn an_unwritable_trace_path_is_refused_before_the_run() {
    let ex = examples().join("sim-permutation.toml");
    let o = support::fabricsim(&[
        "sim",
        ex.to_str().unwrap(),
        "--trace",
        "/no-such-dir/trace.json",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", support::stderr(&o));
    let err = support::stderr(&o);
    assert!(err.contains("--trace"), "{err}");
    assert!(
        !err.contains("[sim] packet engine"),
        "ran before refusing: {err}"
    );
}
