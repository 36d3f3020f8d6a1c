//! End-to-end: `fabricsim compare` (text, JSON, HTML, errors) and the HTML report rendered in
//! headless Chromium.

mod support;

use std::process::Command;
use support::{exits_2_saying, fabricsim, tmp};

#[test]
fn default_compare_prints_the_side_by_side_and_a_recommendation() {
    let o = fabricsim(&["compare", "--seeds", "2"]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    for want in [
        "ib-ndr",
        "roce-400g tuned",
        "roce-400g untuned",
        "network CAPEX (USD)",
        "MFU",
        "USD per million tokens",
        "of ib-ndr's step throughput for",
        "recommendation:",
        "Tuned and untuned are the profile's two parameter sets",
        "under stress (packet engine)",
        "background FCT p99.9 (us)",
        "[simulation] end-to-end latency through 5 switches (ns)",
        "alltoall 8 MiB (direct)",
        " ± ",
        "measured with 2 seed(s)",
        "robustness of the verdict",
        "switch prices +20%",
        "loss rate x10 (roce-400g untuned at 0.001)",
        "Where fabrics part: roce-400g tuned against ib-ndr",
        "step timed by flow engine: whole step DAG",
    ] {
        assert!(out.contains(want), "missing {want:?} in\n{out}");
    }
}

#[test]
fn json_and_file_outputs_are_identical_across_runs() {
    let a = tmp("compare-a.json");
    let b = tmp("compare-b.json");
    for p in [&a, &b] {
        let o = fabricsim(&["compare", "--format", "json", "--out", p.to_str().unwrap()]);
        assert!(o.status.success());
    }
    let (ja, jb) = (std::fs::read(&a).unwrap(), std::fs::read(&b).unwrap());
    assert_eq!(ja, jb);
    let v: serde_json::Value = serde_json::from_slice(&ja).unwrap();
    assert_eq!(v["fabrics"].as_array().unwrap().len(), 4);
    assert!(
        v["fabrics"][2]["delivered"]["mfu"]["mean"]
            .as_f64()
            .unwrap()
            > 0.0
    );
    let f2 = &v["fabrics"][2];
    assert_eq!(f2["busbw_GBps"].as_array().unwrap().len(), 2);
    // The default seeds: every simulated figure with its interval over 5 seeds.
    let interval = |e: &serde_json::Value| {
        let (lo, mean, hi) = (e["lo"].as_f64(), e["mean"].as_f64(), e["hi"].as_f64());
        assert!(lo <= mean && mean <= hi && lo.is_some(), "{e}");
        assert_eq!(e["n"], 5, "{e}");
    };
    for f in v["fabrics"].as_array().unwrap() {
        assert_eq!(f["seeds"].as_array().unwrap().len(), 5);
        for key in [
            "step_time_s",
            "tokens_per_s",
            "mfu",
            "usd_per_million_tokens",
        ] {
            interval(&f["delivered"][key]);
        }
        for curve in f["busbw_GBps"].as_array().unwrap() {
            for p in curve["points"].as_array().unwrap() {
                interval(&p["busbw_GBps"]);
            }
        }
        interval(&f["stress_over_seeds"]["figures"]["bg_fct_p99_us"]);
        // With the plan's interruptions: less MFU, a dearer token, by the ETTR.
        let w = &f["with_interruptions"];
        let ettr = w["ettr"].as_f64().unwrap();
        assert!(ettr > 0.0 && ettr < 1.0, "{w}");
        assert_eq!(w["ettr"], f["plan"]["reliability"]["ettr"]);
        interval(&w["usd_per_million_tokens"]);
        let usd = |x: &serde_json::Value| x["usd_per_million_tokens"]["mean"].as_f64().unwrap();
        assert!(usd(w) > usd(&f["delivered"]), "{w}");
        interval(&f["probes"]["ping_pong"][0]["latency_ns"]);
    }
    // Where fabrics part: the job and one point per regime, each fabric naming what timed it,
    // and per regime whether and where they part.
    let points = v["regimes"]["points"].as_array().unwrap();
    assert_eq!(points.len(), 5, "{}", v["regimes"]);
    for p in points {
        for f in ["infiniband", "roce"] {
            assert!(!p[f]["ran_on"].as_str().unwrap().is_empty(), "{p}");
        }
        let r = p["roce_vs_ib"].as_f64().unwrap();
        assert_eq!(p["parted"], (r - 1.0).abs() > 0.01, "{p}");
    }
    assert_eq!(v["regimes"]["first_parted"].as_array().unwrap().len(), 4);
    // The failed link ran on the whole step DAG, which routes around it.
    let failed = points
        .iter()
        .find(|p| p["regime"] == "failed link")
        .unwrap();
    for f in ["infiniband", "roce"] {
        assert!(failed[f]["error"].is_null(), "{failed}");
        let on = failed[f]["ran_on"].as_str().unwrap();
        assert!(on.contains("whole step DAG"), "{on}");
    }
    interval(&v["recommendation"]["scores"][0]["score"]);
    assert!(v["recommendation"]["separation"]["advice"].is_string());
    assert_eq!(
        v["recommendation"]["robustness"]["cases"]
            .as_array()
            .unwrap()
            .len(),
        14,
        "6 price classes x 2 changes and the untuned fabric's loss rate x0.1 and x10"
    );
    for key in ["fct_p50_ps", "fct_p99_ps", "fct_p999_ps"] {
        assert!(
            f2["stress"]["background"][key].as_u64().unwrap() > 0,
            "{key}"
        );
    }
    assert!(f2["stress"]["retransmitted_packets"].as_u64().unwrap() > 0);
    assert_eq!(f2["probes"]["ping_pong"].as_array().unwrap().len(), 3);
    assert!(
        v["fabrics"][0]["delivered"]["tokens_per_s"]["mean"]
            .as_f64()
            .unwrap()
            > 0.0
    );
}

#[test]
fn bad_scenario_values_exit_2_with_the_key() {
    let f = support::write(
        "bad-compare.toml",
        "[compare]\nfabrics = [ { profile = \"ib-ndr\", transport = \"gbn\" } ]\n",
    );
    exits_2_saying(
        &["compare", &f],
        &["compare.fabrics[0].transport", "selective-repeat"],
    );
    let f = support::write(
        "bad-compare-ber.toml",
        "[compare]\nfabrics = [ { profile = \"roce-400g\", ber = 0.5 } ]\n",
    );
    exits_2_saying(
        &["compare", &f],
        &[
            &format!("{f}:2:"),
            "compare.fabrics[0].ber",
            "0.5",
            "from 0 to 0.005",
        ],
    );
}

/// Renders the report in headless Chromium (Debian's `chromium`): a screenshot kept under
/// target/tmp, the DOM after load checked for every chart, and the browser log checked for
/// console errors. Without chromium the test is skipped, except in CI (CI=true), where
/// .ci/run installs it and its absence is a failure.
#[test]
fn html_report_renders_in_headless_chromium() {
    let html = tmp("compare-report.html");
    let o = fabricsim(&["compare", "--seeds", "3", "--html", html.to_str().unwrap()]);
    assert!(o.status.success());
    let Some((shot, dom)) = support::chromium(&html, "compare-report") else {
        return;
    };
    assert!(shot > 10_000, "no screenshot");
    for class in ["chart line-chart", "chart stacked-bars", "chart tiers"] {
        assert!(dom.contains(class), "no {class} in the rendered DOM");
    }
    // Seven charts and one stress chart per fabric of the default (four).
    assert!(dom.matches("<svg").count() == 11, "all charts rendered");
    assert!(dom.contains("completion times under stress") && dom.contains("Under stress"));
    assert!(dom.contains("Metrics table"));
    // Error bars over the seeds on the busbw and MFU charts; the verdict's robustness.
    assert!(dom.contains("class=\"error-bar\""), "no error bars");
    assert!(dom.contains("Robustness of the verdict"));
    assert!(dom.contains("Where fabrics part"), "no regimes section");
    assert!(
        dom.contains("MFU lost to the network"),
        "no ideal-network baseline"
    );
}

/// `--engine flow` runs every DAG of the comparison on the flow engine and the JSON says so;
/// an unknown engine exits 2 naming the flag.
#[test]
fn the_engine_flag_picks_the_engine_and_the_json_names_it() {
    let out = tmp("compare-flow.json");
    let o = fabricsim(&[
        "compare",
        "--engine",
        "flow",
        "--seeds",
        "2",
        "--format",
        "json",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v = support::json_file(&out);
    assert_eq!(v["engine"], "flow");
    for f in v["fabrics"].as_array().unwrap() {
        assert_eq!(f["engine_runs"]["packet_runs"], 0);
        assert!(f["engine_runs"]["flow_runs"].as_u64().unwrap() > 0);
        assert_eq!(f["stress"]["engine"], "flow");
        assert_eq!(f["busbw_GBps"][0]["engine"], "flow");
    }
    exits_2_saying(&["compare", "--engine", "fluid"], &["--engine"]);
}

/// Issue 21: `compare` draws its progress (fabric, stage, stages done) where a terminal would
/// see it (`FABRICSIM_PROGRESS=1` asks for the terminal's display) and is quiet otherwise.
#[test]
fn compare_shows_progress_on_a_terminal_and_is_quiet_otherwise() {
    let run = |progress: bool| {
        let mut c = Command::new(env!("CARGO_BIN_EXE_fabricsim"));
        c.current_dir(support::root())
            .args(["compare", "--gpus", "32", "--seeds", "2"]);
        if progress {
            c.env("FABRICSIM_PROGRESS", "1");
        }
        let o = c.output().unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        (o.stdout, String::from_utf8_lossy(&o.stderr).into_owned())
    };
    let (quiet_out, quiet) = run(false);
    assert!(
        !quiet.contains("stages"),
        "progress off a terminal: {quiet}"
    );
    let (out, shown) = run(true);
    for want in [
        "ib-ndr: training step",
        "roce-400g tuned: stress run",
        "roce-400g untuned: latency probes",
        "loss sweep",
    ] {
        assert!(shown.contains(want), "missing {want}: {shown}");
    }
    // The last count of stages is complete: "n/n stages".
    let last = shown.rsplit(" stages").nth(1).unwrap_or("");
    let count = last
        .rsplit(|c: char| !(c.is_ascii_digit() || c == '/'))
        .next();
    let (done, all) = count.and_then(|c| c.split_once('/')).unwrap_or(("", "-"));
    assert!(
        !done.is_empty() && done == all,
        "last stage count {count:?}: {shown}"
    );
    assert!(
        out == quiet_out,
        "the report depends on the progress display"
    );
}

/// `--seeds` and `[compare] seeds` take 1 to 100; anything else exits 2 naming the flag, or
/// the file, line and key.
#[test]
fn bad_seed_counts_exit_2_naming_the_flag_or_key() {
    for bad in ["0", "101", "-3", "many"] {
        exits_2_saying(&["compare", "--seeds", bad], &["--seeds"]);
    }
    let f = support::write("seeds-0.toml", "name = \"x\"\n[compare]\nseeds = 0\n");
    exits_2_saying(
        &["compare", &f],
        &["seeds-0.toml", ":3", "compare.seeds", "1 to 100"],
    );
    let f = support::write("seeds-text.toml", "[compare]\nseeds = \"five\"\n");
    exits_2_saying(&["compare", &f], &["seeds-text.toml", ":2", "seeds"]);
}

/// The same scenario and seed with three seeds: the same bytes in text and JSON, run twice.
#[test]
fn three_seeds_give_the_same_bytes_twice() {
    let f = support::write(
        "compare-small.toml",
        "[cluster]\ngpus = 16\ngpus_per_node = 8\nnics_per_node = 8\ngpu = \"h100\"\n\
         [train]\nmodel = \"llama3-8b\"\ntp = 8\npp = 1\n[compare]\nseed = 9\n\
         fabrics = [ { name = \"ib\", profile = \"ib-ndr\" }, \
         { name = \"lossy\", profile = \"roce-400g\", loss_rate = 1e-3 } ]\n",
    );
    for format in ["text", "json"] {
        let run = || {
            let o = fabricsim(&["compare", &f, "--seeds", "3", "--format", format]);
            assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
            o.stdout
        };
        let (a, b) = (run(), run());
        assert_eq!(a, b, "{format}");
        if format == "json" {
            let v: serde_json::Value = serde_json::from_slice(&a).unwrap();
            assert_eq!(v["fabrics"][1]["seeds"][0], 9);
            assert_eq!(v["fabrics"][1]["delivered"]["step_time_s"]["n"], 3);
        }
    }
}

/// Issue 24: `compare` takes the scenario flags the other commands take (`--fabric` the list of
/// fabrics compared), titles the report with what ran, splits NVLink time from the fabric's
/// exposed communication and reports each fabric against the ideal-network baseline.
#[test]
fn compare_takes_the_scenario_flags_and_titles_what_ran() {
    let out = tmp("compare-flags.json");
    let o = fabricsim(&[
        "compare",
        "--gpus",
        "32",
        "--fabric",
        "ib-ndr,roce-400g:untuned",
        "--topology",
        "rail-optimized",
        "--model",
        "llama3-8b",
        "--pp",
        "2",
        "--seeds",
        "2",
        "--claims",
        "off",
        "--format",
        "json",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v = support::json_file(&out);
    assert_eq!(v["name"], "32 x H100, llama3-8b step");
    let fabrics = v["fabrics"].as_array().unwrap();
    let names: Vec<&str> = fabrics
        .iter()
        .map(|f| f["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["ib-ndr", "roce-400g:untuned"]);
    assert!(fabrics[1]["means"].as_str().unwrap().contains("untuned"));
    for f in fabrics {
        assert_eq!(
            f["plan"]["topology"]["kind"], "rail-optimized",
            "{}",
            f["plan"]
        );
        let d = &f["delivered"];
        let (nv, fab, all) = (
            d["exposed_nvlink_s"]["mean"].as_f64().unwrap(),
            d["exposed_fabric_s"]["mean"].as_f64().unwrap(),
            d["exposed_comm_s"]["mean"].as_f64().unwrap(),
        );
        assert!(
            nv > 0.0 && fab > 0.0,
            "TP on NVLink and DP/PP across servers: {d}"
        );
        assert!((nv + fab - all).abs() <= 1e-9 * all, "{d}");
        let b = &d["ideal_network"];
        let mfu = d["mfu"]["mean"].as_f64().unwrap();
        assert!(b["ideal_mfu"]["mean"].as_f64().unwrap() >= mfu, "{b}");
        assert!(b["mfu_lost"]["mean"].as_f64().unwrap() >= 0.0, "{b}");
    }
    let text = fabricsim(&[
        "compare",
        "--gpus",
        "32",
        "--model",
        "llama3-8b",
        "--pp",
        "2",
        "--seeds",
        "1",
        "--claims",
        "off",
        "--fabric",
        "ib-ndr",
    ]);
    let t = String::from_utf8_lossy(&text.stdout);
    for want in [
        "fabricsim compare: 32 x H100, llama3-8b step",
        "MFU on an ideal network",
        "MFU lost to the network",
        "lost to DP across servers",
        "exposed fabric comm. (s)",
    ] {
        assert!(t.contains(want), "missing {want:?} in\n{t}");
    }
    exits_2_saying(
        &["compare", "--fabric", "ib-ndr,nonesuch"],
        &[
            "command line",
            "compare.fabrics[1].profile",
            "nonesuch",
            "roce-400g",
        ],
    );
    exits_2_saying(
        &["compare", "--fabric", "roce-400g:fast"],
        &["--fabric", "untuned"],
    );
    exits_2_saying(&["compare", "--fabric", "ib-ndr,"], &["--fabric"]);
}

#[test]
fn the_reliability_heading_names_the_checkpoint_interval_the_scenario_sets() {
    let run = |extra: &[&str]| {
        let mut args = vec![
            "compare",
            "--gpus",
            "32",
            "--fabric",
            "ib-ndr",
            "--model",
            "llama3-8b",
            "--seeds",
            "1",
            "--claims",
            "off",
        ];
        args.extend(extra);
        let o = fabricsim(&args);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        String::from_utf8(o.stdout).unwrap()
    };
    let heading = |t: &str| {
        t.lines()
            .find(|l| l.starts_with("reliability (plan"))
            .expect("a reliability section")
            .to_string()
    };
    assert!(heading(&run(&[])).contains("Daly's checkpoint interval"));
    let set = heading(&run(&["--checkpoint-interval-s", "600"]));
    assert!(
        set.contains("checkpoint every 600 s ([reliability] checkpoint_interval_s)"),
        "{set}"
    );
}
