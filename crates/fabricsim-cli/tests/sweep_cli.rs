//! End-to-end: `fabricsim sweep` writes its table, CSV, JSON and chart; bad parameters exit 2.

mod support;

use std::path::Path;
use support::fabricsim;

#[test]
fn a_small_loss_sweep_writes_csv_json_and_svg() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"));
    let (csv, json, svg) = (dir.join("s.csv"), dir.join("s.json"), dir.join("s.svg"));
    let o = fabricsim(&[
        "sweep",
        "--param",
        "loss_rate=0,0.001",
        "--param",
        "transport=go-back-n,selective-repeat",
        "--threads",
        "2",
        "--csv",
        csv.to_str().unwrap(),
        "--json",
        json.to_str().unwrap(),
        "--svg",
        svg.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    // Not a terminal: no progress bar on stderr.
    assert!(
        o.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(out.lines().count(), 5, "{out}");
    let c = std::fs::read_to_string(&csv).unwrap();
    assert!(c.starts_with("point,loss_rate,transport,step_time_s,tokens_per_s,mfu,"));
    assert_eq!(c.lines().count(), 5);
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(v["points"].as_array().unwrap().len(), 4);
    let s = std::fs::read_to_string(&svg).unwrap();
    assert!(s.contains("data-name=\"go-back-n\"") && s.contains("data-name=\"selective-repeat\""));
}

#[test]
fn bad_sweep_parameters_exit_2() {
    for args in [
        &["sweep", "--param", "ecn=1,2"][..],
        &["sweep", "--param", "ecn_kmin=0"],
        &["sweep", "--param", "dcqcn_timer=soon"],
        // Kmin above the profile's Kmax (1.5 MB), and ECN on InfiniBand: refused before running.
        &["sweep", "--param", "ecn_kmin=2M"],
        &["sweep", "--fabric", "ib-ndr", "--param", "ecn_kmax=1M"],
    ] {
        support::exits_2_saying(args, &["--param"]);
    }
}

#[test]
fn an_ecn_sweep_charts_the_stress_tail_against_kmin() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"));
    let (csv, svg) = (dir.join("ecn.csv"), dir.join("ecn.svg"));
    let o = fabricsim(&[
        "sweep",
        "--param",
        "ecn_kmin=20K,1M",
        "--threads",
        "2",
        "--csv",
        csv.to_str().unwrap(),
        "--svg",
        svg.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let c = std::fs::read_to_string(&csv).unwrap();
    assert!(c.lines().next().unwrap().contains("stress_ecn_marks"));
    let rows: Vec<Vec<&str>> = c.lines().skip(1).map(|l| l.split(',').collect()).collect();
    let col = c
        .lines()
        .next()
        .unwrap()
        .split(',')
        .position(|h| h == "stress_ecn_marks")
        .unwrap();
    let marks: Vec<u64> = rows.iter().map(|r| r[col].parse().unwrap()).collect();
    assert!(marks[0] > marks[1], "{marks:?}");
    let s = std::fs::read_to_string(&svg).unwrap();
    assert!(s.contains("ECN Kmin (bytes)") && s.contains("stress p99 FCT"));
}

#[test]
fn the_engine_flag_reaches_the_sweep_json() {
    let json = Path::new(env!("CARGO_TARGET_TMPDIR")).join("flow-sweep.json");
    let o = fabricsim(&[
        "sweep",
        "--engine",
        "flow",
        "--param",
        "gpus=64,128",
        "--json",
        json.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(v["engine"], "flow");
    for p in v["points"].as_array().unwrap() {
        assert_eq!(p["engine"]["packet_runs"], 0, "{p}");
        assert_eq!(p["stress"]["engine"], "flow");
    }
}
