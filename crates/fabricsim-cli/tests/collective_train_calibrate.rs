//! `fabricsim train --calibrate`: the step's collectives fitted to packet-engine runs, the step
//! recomputed, and each collective's time labelled fit or closed form.

mod support;

/// `fabricsim train ARGS`'s JSON output; it must succeed.
fn json(args: &[&str]) -> serde_json::Value {
    support::json_ok(&[&["train"], args].concat())
}

const JOB: [&str; 11] = [
    "--model",
    "llama3-8b",
    "--gpus",
    "16",
    "--tp",
    "8",
    "--pp",
    "1",
    "--fabric",
    "roce-400g",
    "--format",
];

#[test]
fn calibrated_step_labels_every_collective_and_fits_follow_the_closed_forms() {
    let mut args = JOB.to_vec();
    args.push("json");
    let closed = json(&args);
    args.push("--calibrate");
    let cal = json(&args);
    assert!(closed.get("calibration").is_none());
    let rows = cal["calibration"].as_array().unwrap();
    let names: Vec<&str> = cal["collectives"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        rows.iter()
            .map(|r| r["name"].as_str().unwrap())
            .collect::<Vec<_>>(),
        names
    );
    for r in rows {
        assert_eq!(r["source"], "fit", "{r}");
        assert!(r["fit_max_rel_err"].as_f64().unwrap() < 0.05, "{r}");
    }
    // TP all-reduce on the 8 GPUs of a server rides NVLink: the fitted bandwidth is the ring's
    // S / (2(n-1)/n S / B_nvlink) = 450 GB/s x 8/14 = 257 GB/s (H100, 450 GB/s one way).
    let tp = rows.iter().find(|r| r["name"] == "tp_all_reduce").unwrap();
    let bw = tp["bandwidth_GBps"].as_f64().unwrap();
    assert!((bw - 450.0 * 8.0 / 14.0).abs() < 0.02 * bw, "{bw}");
    // The calibrated step keeps the same compute and still takes at least that long.
    assert_eq!(cal["compute_s"], closed["compute_s"]);
    assert!(cal["step_time_s"].as_f64().unwrap() >= cal["compute_s"].as_f64().unwrap());
    assert!(cal["comm_source"].as_str().unwrap().contains("3 fitted"));
}

#[test]
fn text_report_says_where_each_time_came_from() {
    let mut args = JOB.to_vec();
    args.extend(["text", "--calibrate"]);
    let out = support::stdout_ok(&[&["train"], &args[..]].concat());
    assert!(out.contains("communication times by collective:"), "{out}");
    assert!(
        out.contains(
            "tp_all_reduce              fitted to packet runs (all_reduce on 8 GPUs in 1 server)"
        ),
        "{out}"
    );
}

#[test]
fn collectives_too_large_to_simulate_keep_the_closed_form() {
    // 1024 GPUs, dp 128, on the packet engine: the data-parallel reduce-scatter of 2 GB per
    // rank over 128 servers is far beyond the packet budget; TP on NVLink is still fitted.
    let v = json(&[
        "--model",
        "llama3-8b",
        "--gpus",
        "1024",
        "--tp",
        "8",
        "--pp",
        "1",
        "--format",
        "json",
        "--calibrate",
        "--engine",
        "packet",
    ]);
    let rows = v["calibration"].as_array().unwrap();
    let dp = rows
        .iter()
        .find(|r| r["name"] == "dp_grad_reduce_scatter")
        .unwrap();
    assert_eq!(dp["source"], "closed_form");
    assert!(dp["reason"].as_str().unwrap().contains("too large"), "{dp}");
    let tp = rows.iter().find(|r| r["name"] == "tp_all_reduce").unwrap();
    assert_eq!(tp["source"], "fit");
}

#[test]
fn a_calibrated_step_is_measured_over_the_engine_seeds() {
    // `--seeds 3`: each seed's runs fitted and the step recomputed, the spread as mean and 95%
    // interval; the report itself is the first seed's, which `--seeds 1` gives alone.
    let mut args = JOB.to_vec();
    args.extend(["json", "--calibrate", "--seeds", "3"]);
    let three = json(&args);
    let o = &three["over_seeds"];
    let seeds: Vec<u64> = o["seeds"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_u64().unwrap())
        .collect();
    assert_eq!(seeds.len(), 3);
    assert!(seeds[0] != seeds[1] && seeds[1] != seeds[2] && seeds[0] != seeds[2]);
    for k in ["step_time_s", "mfu", "tokens_per_s"] {
        let (lo, mean, hi) = (
            o[k]["lo"].as_f64().unwrap(),
            o[k]["mean"].as_f64().unwrap(),
            o[k]["hi"].as_f64().unwrap(),
        );
        assert!(lo <= mean && mean <= hi && o[k]["n"] == 3, "{k}: {}", o[k]);
    }
    *args.last_mut().unwrap() = "1";
    let one = json(&args);
    assert!(one.get("over_seeds").is_none());
    assert_eq!(one["step_time_s"], three["step_time_s"]);
}
