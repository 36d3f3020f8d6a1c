//! End-to-end: `fabricsim sweep` writes its table, CSV, JSON and chart; bad parameters exit 2.

use std::path::Path;
use std::process::Command;

fn fabricsim(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_fabricsim"))
        .args(args)
        .current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
        .output()
        .expect("runs")
}

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
    let o = fabricsim(&["sweep", "--param", "ecn=1,2"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--param"));
}
