//! End-to-end: the built-in profile `roce-400g-hpcc` (RoCEv2 400G with HPCC instead of ECN and
//! DCQCN, data/profiles/roce-400g-hpcc.toml) in `compare`, `sweep` and `plan`.

mod support;

use support::{fabricsim, json_ok, stderr, tmp};

/// A `[compare]` entry with the HPCC profile runs beside DCQCN's, and the report's
/// congestion-control line names HPCC with the profile's η and maxStage for it (and DCQCN for
/// roce-400g).
#[test]
fn compare_runs_a_fabric_on_the_hpcc_profile_and_names_hpcc() {
    let scenario = tmp("compare-hpcc.toml");
    std::fs::write(
        &scenario,
        r#"[cluster]
gpus = 64
gpus_per_node = 8
nics_per_node = 8
gpu = "h100"
[topology]
kind = "fat-tree"
[train]
model = "llama3-70b"
tp = 8
pp = 4
[compare]
fabric_runs = false
fabrics = [
  { name = "roce-400g dcqcn", profile = "roce-400g" },
  { name = "roce-400g hpcc", profile = "roce-400g-hpcc" },
]
"#,
    )
    .unwrap();
    let path = scenario.to_str().unwrap();
    let v = json_ok(&["compare", path, "--engine", "flow", "--format", "json"]);
    let names: Vec<&str> = v["fabrics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["roce-400g dcqcn", "roce-400g hpcc"], "{v}");
    let o = fabricsim(&["compare", path, "--engine", "flow"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = String::from_utf8_lossy(&o.stdout);
    // "[profile] congestion control:", then a line per fabric.
    let cc: Vec<&str> = text
        .lines()
        .skip_while(|l| !l.ends_with("congestion control:"))
        .skip(1)
        .take(2)
        .collect();
    assert!(
        cc.len() == 2 && cc[0].starts_with("  roce-400g dcqcn: DCQCN"),
        "{cc:?} in\n{text}"
    );
    assert_eq!(
        cc[1], "  roce-400g hpcc: HPCC (INT per hop, target utilization 0.95, max stage 5)",
        "{text}"
    );
}

/// A sweep over the profile axis takes the HPCC profile as one of its values.
#[test]
fn a_profile_sweep_runs_the_hpcc_profile() {
    let json = tmp("sweep-hpcc.json");
    let o = fabricsim(&[
        "sweep",
        "--param",
        "profile=roce-400g,roce-400g-hpcc",
        "--seeds",
        "2",
        "--engine",
        "flow",
        "--threads",
        "1",
        "--json",
        json.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v = support::json_file(&json);
    let points = v["points"].as_array().unwrap();
    assert_eq!(points.len(), 2, "{v}");
    for p in points {
        assert!(p["error"].is_null(), "{p}");
        assert!(p["mfu"]["mean"].as_f64().unwrap() > 0.0, "{p}");
    }
}

/// `plan --fabric roce-400g-hpcc` plans the cluster on the profile's ports, switch and NIC
/// (roce-400g's: 400G SN5600 and ConnectX-7).
#[test]
fn plan_takes_the_hpcc_profile() {
    let v = json_ok(&[
        "plan",
        "--gpus",
        "256",
        "--fabric",
        "roce-400g-hpcc",
        "--format",
        "json",
    ]);
    let base = json_ok(&[
        "plan",
        "--gpus",
        "256",
        "--fabric",
        "roce-400g",
        "--format",
        "json",
    ]);
    assert_eq!(v["fabric"]["profile"], "roce-400g-hpcc", "{v}");
    for key in ["bill_of_materials", "switch_tiers", "cost"] {
        assert_eq!(v[key], base[key], "{key}");
    }
}
