//! `fabricsim sim --trace FILE`: trace-event JSON (report/trace.rs) that parses, holds the
//! run's message spans and port queue counters sorted by time, and is the same bytes twice;
//! the flow-control counters (PFC pause, ECN marks, CNPs on a RoCE incast; credit stalls on
//! IB) are there and bounded by their interval; a path that cannot be written is refused
//! before the run.

mod support;

use support::{examples, json_file, tmp};

fn traced(name: &str) -> std::path::PathBuf {
    traced_example("sim-permutation.toml", name, &[])
}

/// `sim --trace` of an example with `extra` flags; the trace's path.
fn traced_example(example: &str, name: &str, extra: &[&str]) -> std::path::PathBuf {
    let (out, o) = trace_run(example, name, extra);
    assert!(o.status.success(), "{}", support::stderr(&o));
    out
}

/// The trace's path and the run's output (seed 3, results to a file beside the trace).
fn trace_run(
    example: &str,
    name: &str,
    extra: &[&str],
) -> (std::path::PathBuf, std::process::Output) {
    let ex = examples().join(example);
    let out = tmp(name);
    let results = tmp(&format!("{name}.results.json"));
    let mut args = vec![
        "sim",
        ex.to_str().unwrap(),
        "--seed",
        "3",
        "--out",
        results.to_str().unwrap(),
        "--trace",
        out.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    let o = support::fabricsim(&args);
    (out, o)
}

/// The counter events of the trace at `path` whose track name starts with `track`, and the
/// largest value of their argument `arg`.
fn counters(path: &std::path::Path, track: &str, arg: &str) -> (usize, u64) {
    let v = json_file(path);
    let events = v["traceEvents"].as_array().expect("traceEvents array");
    let mine: Vec<_> = events
        .iter()
        .filter(|e| e["ph"] == "C" && e["name"].as_str().unwrap().starts_with(track))
        .collect();
    let max = mine
        .iter()
        .map(|e| e["args"][arg].as_u64().expect("an integer count"))
        .max()
        .unwrap_or(0);
    (mine.len(), max)
}

#[test]
fn a_pfc_incast_has_pause_ecn_and_cnp_tracks_and_ib_credit_stalls() {
    // The RoCE 7-to-1 incast with PFC, ECN and DCQCN, sampled every 10 us.
    let roce = traced_example("roce-incast-dcqcn.toml", "trace-roce.json", &[]);
    let iv = 10_000_000;
    let (n, paused) = counters(&roce, "pfc pause", "paused_ps");
    assert!(
        n > 0 && paused > 0,
        "{n} pause counters, most paused {paused} ps"
    );
    // Paused time per interval: at most the interval on each of the 8 classes.
    assert!(paused <= 8 * iv, "{paused}");
    assert!(counters(&roce, "pfc pause", "pause_frames").1 > 0);
    assert!(counters(&roce, "ecn marks", "marks").1 > 0);
    assert!(counters(&roce, "cnps", "cnps").1 > 0);
    assert_eq!(
        counters(&roce, "credit stall", "stalled_ps").0,
        0,
        "no credits on RoCE"
    );
    // IB credits: the hotspot incast of the congestion-spreading example, 400 us of it,
    // sampled every 100 us.
    let ib = traced_example(
        "ib-congestion-spreading.toml",
        "trace-ib.json",
        &["--until", "400us"],
    );
    let (n, stalled) = counters(&ib, "credit stall", "stalled_ps");
    assert!(
        n > 0 && stalled > 0,
        "{n} stall counters, most stalled {stalled} ps"
    );
    assert!(stalled <= 8 * 100_000_000, "{stalled}");
    assert_eq!(counters(&ib, "pfc pause", "paused_ps").0, 0, "no PFC on IB");
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

#[test]
fn a_capped_trace_keeps_its_earliest_events_and_says_where_it_was_cut() {
    let whole = json_file(&traced("trace-whole.json"));
    let all: Vec<_> = whole["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["ph"] != "M")
        .cloned()
        .collect();
    let max = (all.len() / 2).to_string();
    let extra = ["--trace-max-events", max.as_str()];
    let (out, o) = trace_run("sim-permutation.toml", "trace-capped.json", &extra);
    assert!(o.status.success(), "{}", support::stderr(&o));
    let err = support::stderr(&o);
    assert!(err.contains("trace capped at"), "{err}");
    let v = json_file(&out);
    let note = v["otherData"]["note"]
        .as_str()
        .expect("a note in otherData");
    assert!(note.contains(&format!("of {} events", all.len())), "{note}");
    let events = v["traceEvents"].as_array().unwrap();
    let marker: Vec<_> = events.iter().filter(|e| e["ph"] == "i").collect();
    assert_eq!(marker.len(), 1, "one instant at the cut");
    let kept: Vec<_> = events
        .iter()
        .filter(|e| e["ph"] != "M" && e["ph"] != "i")
        .collect();
    // The kept events are the whole trace's first ones, none after the cut.
    assert_eq!(kept.len(), all.len() / 2);
    assert!(kept.iter().zip(&all).all(|(k, a)| *k == a));
    let at = marker[0]["ts"].as_f64().unwrap();
    assert!(kept.iter().all(|e| e["ts"].as_f64().unwrap() <= at));
    assert_eq!(all[kept.len()]["ts"].as_f64().unwrap(), at);
    // Without --trace the flag is refused.
    let ex = examples().join("sim-permutation.toml");
    let o = support::fabricsim(&["sim", ex.to_str().unwrap(), "--trace-max-events", "20"]);
    assert_eq!(o.status.code(), Some(2), "{}", support::stderr(&o));
}
