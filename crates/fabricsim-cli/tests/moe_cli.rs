//! End-to-end: MoE routing skew in `fabricsim collective --op moe_dispatch|moe_combine` and in
//! `fabricsim train` (`[train] moe_skew`), and bad skews refused with exit 2.

mod support;

use support::{examples, exits_2_saying, json_ok, stdout_ok, write};

const DEEPSEEK: &str = "examples/train-deepseek-v3-ep64.toml";

fn ep_row(v: &serde_json::Value) -> serde_json::Value {
    v["collectives"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["name"] == "ep_all_to_all")
        .unwrap()
        .clone()
}

#[test]
fn train_times_the_ep_all_to_all_at_its_slowest_rank() {
    let uniform = stdout_ok(&["train", DEEPSEEK]);
    // Spelled out, uniform routing is the default's report byte for byte.
    assert_eq!(
        stdout_ok(&["train", DEEPSEEK, "--moe-skew", "uniform"]),
        uniform
    );
    assert!(!uniform.contains("routing skew"));
    let mut last = json_ok(&["train", DEEPSEEK, "--format", "json"]);
    assert!(ep_row(&last).get("skew").is_none());
    for skew in ["zipf:0.5", "zipf:1.0", "zipf:1.5"] {
        let v = json_ok(&["train", DEEPSEEK, "--moe-skew", skew, "--format", "json"]);
        let (row, was) = (ep_row(&v), ep_row(&last));
        let ratio = row["skew"]["slowest_over_mean"].as_f64().unwrap();
        assert!(ratio > 1.0, "{skew}: {ratio}");
        assert!(
            row["time_per_call_s"].as_f64() > was["time_per_call_s"].as_f64(),
            "{skew}"
        );
        assert!(
            v["step_time_s"].as_f64() > last["step_time_s"].as_f64(),
            "{skew}"
        );
        // The bytes per call stay the mean rank's; the skew shows in the time.
        assert_eq!(row["bytes_per_call"], was["bytes_per_call"]);
        last = v;
    }
    let hist = examples()
        .join("moe-expert-load-256.txt")
        .display()
        .to_string();
    let t = stdout_ok(&[
        "train",
        DEEPSEEK,
        "--moe-skew",
        &format!("histogram:{hist}"),
    ]);
    assert!(t.contains("routing skew: the slowest EP rank moves"), "{t}");
}

#[test]
fn collective_moe_ops_report_the_routing_and_uniform_is_the_all_to_all() {
    let base = [
        "collective",
        "--gpus",
        "32",
        "--engine",
        "flow",
        "--min-bytes",
        "4M",
    ];
    let run = |extra: &[&str]| {
        let mut a = base.to_vec();
        a.extend_from_slice(&["--max-bytes", "4M", "--seeds", "1", "--format", "json"]);
        a.extend_from_slice(extra);
        json_ok(&a)
    };
    let a2a = run(&["--op", "all_to_all"]);
    let uni = run(&["--op", "moe_dispatch", "--experts", "64", "--top-k", "2"]);
    assert_eq!(uni["table"]["rows"], a2a["table"]["rows"]);
    let z = run(&[
        "--op",
        "moe_combine",
        "--experts",
        "64",
        "--top-k",
        "2",
        "--skew",
        "zipf:1.0",
    ]);
    assert!(z["routing"]["slowest_over_mean"].as_f64().unwrap() > 1.0);
    let t = |v: &serde_json::Value| v["table"]["rows"][0]["time_us"]["mean"].as_f64().unwrap();
    assert!(t(&z) > t(&uni), "{z}");
}

#[test]
fn bad_skews_and_histogram_lines_exit_2_naming_file_line_key_and_value() {
    exits_2_saying(
        &["train", DEEPSEEK, "--moe-skew", "zipf:x"],
        &["--moe-skew", "zipf:x", "zipf:S"],
    );
    exits_2_saying(
        &["train", DEEPSEEK, "--moe-skew", "pareto"],
        &["--moe-skew", "pareto"],
    );
    // A dense model has nothing to route.
    exits_2_saying(
        &[
            "train",
            "examples/train-llama3-70b.toml",
            "--moe-skew",
            "zipf:1",
        ],
        &["--moe-skew", "dense model"],
    );
    let bad = write("moe-bad-hist.txt", "3\n2\nlots\n");
    let s = write(
        "moe-bad-hist.toml",
        &format!(
            "[cluster]\ngpus = 2048\ngpu = \"h100\"\n[train]\nmodel = \"deepseek-v3\"\ntp = 1\npp = 16\nep = 64\nzero = 1\nrecompute = \"full\"\nmoe_skew = \"histogram:{bad}\"\n"
        ),
    );
    exits_2_saying(
        &["train", &s],
        &["moe-bad-hist.txt:3", "`expert 2`", "lots"],
    );
    // Two loads for 256 experts: named at the scenario key.
    let short = write("moe-short-hist.txt", "3\n2\n");
    let s = write(
        "moe-short-hist.toml",
        &format!(
            "[cluster]\ngpus = 2048\ngpu = \"h100\"\n[train]\nmodel = \"deepseek-v3\"\ntp = 1\npp = 16\nep = 64\nzero = 1\nrecompute = \"full\"\nmoe_skew = \"histogram:{short}\"\n"
        ),
    );
    exits_2_saying(
        &["train", &s],
        &[
            "moe-short-hist.toml",
            "train.moe_skew",
            "2 loads for 256 experts",
        ],
    );
    exits_2_saying(
        &[
            "collective",
            "--gpus",
            "16",
            "--op",
            "moe_dispatch",
            "--skew",
            "zipf:0",
        ],
        &["--skew", "zipf:0", "out of range"],
    );
    exits_2_saying(
        &[
            "collective",
            "--gpus",
            "16",
            "--op",
            "moe_dispatch",
            "--experts",
            "24",
        ],
        &["--experts", "24", "multiple of 16"],
    );
    exits_2_saying(
        &["train", DEEPSEEK, "--capacity-factor", "0"],
        &["--capacity-factor", "0"],
    );
}
