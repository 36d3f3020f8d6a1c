//! End-to-end: `fabricsim train` with flags, with scenario files, and with bad input.

mod support;

use std::process::Output;
use support::{exits_2_saying, fabricsim};

fn text(o: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

const LLAMA: [&str; 10] = [
    "train",
    "--model",
    "llama3-70b",
    "--gpus",
    "1024",
    "--tp",
    "8",
    "--pp",
    "4",
    "--dp",
];

#[test]
fn the_issue_command_prints_the_step_split_and_mfu() {
    let mut args = LLAMA.to_vec();
    args.push("32");
    let o = fabricsim(&args);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    for want in [
        "step time",
        "compute",
        "tp_all_reduce",
        "pipeline bubble",
        "tokens/s",
        "MFU",
    ] {
        assert!(out.contains(want), "missing {want}:\n{out}");
    }
    // Same input, same bytes.
    assert_eq!(fabricsim(&args).stdout, o.stdout);
}

#[test]
fn json_output_has_units_in_its_keys() {
    let mut args = LLAMA.to_vec();
    args.extend(["32", "--fabric", "roce-800g", "--format", "json"]);
    let o = fabricsim(&args);
    assert!(o.status.success(), "{}", text(&o).1);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let step = v["step_time_s"].as_f64().unwrap();
    let compute = v["compute_s"].as_f64().unwrap();
    assert!(step >= compute && compute > 0.0);
    assert!(v["mfu"].as_f64().unwrap() > 0.0 && v["mfu"].as_f64().unwrap() < 1.0);
    assert!(v["memory"]["total_GB"].as_f64().unwrap() < 141.0);
    assert!(
        v["collectives"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c["name"] == "tp_all_reduce")
    );
    assert!(v["comm_source"].as_str().unwrap().contains("roce-800g"));
}

#[test]
fn invalid_parallelism_exits_2_naming_the_flag() {
    let mut args = LLAMA.to_vec();
    args.push("16");
    exits_2_saying(&args, &["`--dp` = 16", "1024 GPUs"]);
}

#[test]
fn out_of_memory_exits_2() {
    exits_2_saying(
        &[
            "train",
            "--model",
            "llama3-405b",
            "--gpus",
            "64",
            "--tp",
            "8",
            "--gpu",
            "h200",
            "--zero",
            "0",
        ],
        &["GB per GPU", "`--gpu` = h200"],
    );
}

#[test]
fn example_scenarios_run_and_flags_override_them() {
    // Every `examples/train-*.toml` (the published layouts among them) runs as shipped.
    let mut examples: Vec<String> = std::fs::read_dir(support::examples())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.starts_with("train-") && n.ends_with(".toml"))
        .map(|n| format!("examples/{n}"))
        .collect();
    examples.sort();
    assert!(examples.len() >= 8, "{examples:?}");
    for f in &examples {
        let o = fabricsim(&["train", f]);
        assert!(o.status.success(), "{f}: {}", text(&o).1);
    }
    let o = fabricsim(&[
        "train",
        "examples/train-llama3-70b.toml",
        "--pp",
        "8",
        "--dp",
        "16",
        "--format",
        "json",
    ]);
    assert!(o.status.success(), "{}", text(&o).1);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!((v["pp"].as_u64(), v["dp"].as_u64()), (Some(8), Some(16)));
}

#[test]
fn scenario_errors_name_file_line_and_key() {
    for (text, want) in [
        (
            "[cluster]\ngpus = 1024\n[train]\nmodel = \"llama3-70b\"\ntp = 8\npp = 4\nzero = 5\n",
            "bad.toml:7: `train.zero` = 5",
        ),
        (
            "[train]\nmodel = \"llama3-70b\"\n[cluster]\ngpus = \"many\"\n",
            "bad.toml:4",
        ),
        // A per-stage layer list that does not add up to the model's layers.
        (
            "[cluster]\ngpus = 1024\n[train]\nmodel = \"llama3-70b\"\ntp = 8\npp = 4\nstage_layers = [20, 20, 20, 21]\n",
            "bad.toml:7: `train.stage_layers` = [20, 20, 20, 21]: the stages hold 81 layers but the model has 80; allowed: 4 positive layer counts (one per stage) summing to 80",
        ),
        // The cluster is described once, in [cluster]: [train] has no GPU count.
        (
            "[train]\nmodel = \"llama3-70b\"\ngpus = 64\n",
            "bad.toml:3: `train.gpus`",
        ),
    ] {
        exits_2_saying(&["train", &support::write("bad.toml", text)], &[want]);
    }
}

#[test]
fn plan_and_train_read_the_same_cluster_and_flags() {
    // One scenario file: plan prices the cluster that train runs on.
    let f = "examples/train-llama3-70b.toml";
    let plan = fabricsim(&["plan", f, "--format", "json"]);
    assert!(plan.status.success(), "{}", text(&plan).1);
    let p: serde_json::Value = serde_json::from_slice(&plan.stdout).unwrap();
    let train = fabricsim(&["train", f, "--format", "json"]);
    assert!(train.status.success(), "{}", text(&train).1);
    let t: serde_json::Value = serde_json::from_slice(&train.stdout).unwrap();
    assert_eq!(t["gpus"].as_u64(), Some(1024));
    assert_eq!(t["gpu"], "h200");
    assert!(
        p.to_string().contains("\"h200\"") && p.to_string().contains("1024"),
        "{p}"
    );
    assert!(t["comm_source"].as_str().unwrap().contains("roce-400g"));
    // --out as in plan: the same bytes in the file, nothing on standard output.
    let out = std::env::temp_dir().join(format!("fabricsim-train-{}.json", std::process::id()));
    let o = fabricsim(&[
        "train",
        f,
        "--format",
        "json",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success() && o.stdout.is_empty(), "{}", text(&o).1);
    assert_eq!(std::fs::read(&out).unwrap(), train.stdout);
    std::fs::remove_file(&out).unwrap();
    // A shared flag is the same flag in both: same override, same error.
    for bad in [["--gpus", "lots"], ["--fabric", "fddi"], ["--gpus", "-8"]] {
        let e_plan = text(&fabricsim(&["plan", f, bad[0], bad[1]])).1;
        let e_train = text(&fabricsim(&["train", f, bad[0], bad[1]])).1;
        assert!(e_plan.contains(&format!("`{}`", bad[0])), "{e_plan}");
        assert_eq!(e_plan, e_train);
    }
    let t8: serde_json::Value = serde_json::from_slice(
        &fabricsim(&[
            "train", f, "--gpus", "2048", "--dp", "64", "--format", "json",
        ])
        .stdout,
    )
    .unwrap();
    assert_eq!(t8["gpus"].as_u64(), Some(2048));
}

#[test]
fn llama3_405b_on_16_stages_runs_with_uneven_stages() {
    // 126 layers on 16 stages: 7 + 14 x 8 + 7 (Llama 3 paper §3.3.2), no longer refused.
    let o = fabricsim(&[
        "train",
        "--model",
        "llama3-405b",
        "--gpu",
        "h200",
        "--gpus",
        "2048",
        "--tp",
        "8",
        "--pp",
        "16",
    ]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    let stages = format!("7 + {}7", "8 + ".repeat(14));
    assert!(
        out.contains(&format!("pipeline stages of unequal layers: {stages}")),
        "{out}"
    );
}

#[test]
fn csv_splits_each_collective_and_kind_into_exposed_and_hidden() {
    let mut args = LLAMA.to_vec();
    args.extend(["32", "--tp-overlap", "true", "--format", "csv"]);
    let o = fabricsim(&args);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    let mut lines = out.lines();
    assert_eq!(
        lines.next(),
        Some(
            "scope,name,op,ranks,servers,bytes_per_call,calls_per_step,total_s,exposed_s,hidden_s"
        )
    );
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    let num = |r: &[&str], i: usize| r[i].parse::<f64>().unwrap();
    for r in &rows {
        assert_eq!(r.len(), 10, "{r:?}");
        let (total, exposed, hidden) = (num(r, 7), num(r, 8), num(r, 9));
        assert!(
            (total - exposed - hidden).abs() <= 1e-9 * total.max(1e-12),
            "{r:?}"
        );
    }
    let kind = |k: &str| rows.iter().find(|r| r[0] == "kind" && r[1] == k).unwrap();
    // TP overlap on: most of the TP time hidden; 1F1B: the pipeline sends all exposed.
    assert!(num(kind("TP"), 9) > num(kind("TP"), 8));
    assert_eq!(num(kind("PP"), 9), 0.0);
    assert!(
        rows.iter()
            .any(|r| r[0] == "collective" && r[1] == "tp_all_reduce")
    );
}

#[test]
fn overlap_keys_are_checked_against_the_file_line() {
    let f = support::write(
        "train-overlap.toml",
        "[cluster]\ngpus = 1024\ngpu = \"h200\"\n[train]\nmodel = \"llama3-70b\"\ntp = 8\npp = 4\npp_overlap = true\n",
    );
    exits_2_saying(
        &["train", &f],
        &["train-overlap.toml:8", "train.pp_overlap", "interleaved"],
    );
    let mut args = LLAMA.to_vec();
    args.extend(["32", "--tp-overlap", "true", "--sequence-parallel", "false"]);
    exits_2_saying(&args, &["--tp-overlap", "sequence_parallel = true"]);
}

#[test]
fn gpus_per_domain_outside_the_server_is_refused_naming_the_key() {
    exits_2_saying(
        &[
            "train",
            "--server",
            "gb200-nvl72",
            "--gpus",
            "144",
            "--fabric",
            "ib-xdr",
            "--model",
            "llama3-70b",
            "--tp",
            "8",
            "--pp",
            "4",
            "--gpus-per-domain",
            "80",
        ],
        &["--gpus-per-domain", "80", "1 to 72"],
    );
}
