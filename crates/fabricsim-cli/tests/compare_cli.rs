//! End-to-end: `fabricsim compare` (text, JSON, HTML, errors) and the HTML report rendered in
//! headless Chromium.

mod support;

use std::path::Path;
use std::process::Command;
use support::{exits_2_saying, fabricsim, tmp};

#[test]
fn default_compare_prints_the_side_by_side_and_a_recommendation() {
    let o = fabricsim(&["compare"]);
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
    assert_eq!(v["fabrics"].as_array().unwrap().len(), 3);
    assert!(v["fabrics"][2]["delivered"]["mfu"].as_f64().unwrap() > 0.0);
    let f2 = &v["fabrics"][2];
    assert_eq!(f2["busbw_GBps"].as_array().unwrap().len(), 2);
    for key in ["fct_p50_ps", "fct_p99_ps", "fct_p999_ps"] {
        assert!(
            f2["stress"]["background"][key].as_u64().unwrap() > 0,
            "{key}"
        );
    }
    assert!(f2["stress"]["retransmitted_packets"].as_u64().unwrap() > 0);
    assert_eq!(f2["probes"]["ping_pong"].as_array().unwrap().len(), 3);
    assert!(
        v["fabrics"][0]["delivered"]["tokens_per_s"]
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
}

/// Renders the report in headless Chromium (Debian's `chromium`): a screenshot kept under
/// target/tmp, the DOM after load checked for every chart, and the browser log checked for
/// console errors. Without chromium the test is skipped, except in CI (CI=true), where
/// .ci/run installs it and its absence is a failure.
#[test]
fn html_report_renders_in_headless_chromium() {
    let html = tmp("compare-report.html");
    let o = fabricsim(&["compare", "--html", html.to_str().unwrap()]);
    assert!(o.status.success());
    let chromium = Path::new("/usr/bin/chromium");
    if !chromium.exists() {
        let ci = std::env::var("CI").map(|v| v == "true").unwrap_or(false);
        assert!(
            !ci,
            "CI=true but /usr/bin/chromium is missing (.ci/run installs it)"
        );
        eprintln!("skipped: /usr/bin/chromium not installed");
        return;
    }
    let profile = tmp("chromium-profile");
    let shot = tmp("compare-report.png");
    let _ = std::fs::remove_file(&shot);
    let url = format!("file://{}", html.display());
    let run = |extra: &[&str]| {
        Command::new(chromium)
            .args([
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-quic",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--enable-logging=stderr",
                "--v=0",
                &format!("--user-data-dir={}", profile.display()),
                "--window-size=1366,900",
            ])
            .args(extra)
            .arg(&url)
            .output()
            .expect("chromium runs")
    };
    let s = run(&[&format!("--screenshot={}", shot.display())]);
    assert!(s.status.success(), "{}", String::from_utf8_lossy(&s.stderr));
    assert!(
        std::fs::metadata(&shot)
            .map(|m| m.len() > 10_000)
            .unwrap_or(false),
        "no screenshot"
    );
    let d = run(&["--dump-dom"]);
    assert!(d.status.success());
    let dom = String::from_utf8_lossy(&d.stdout);
    for class in ["chart line-chart", "chart stacked-bars", "chart tiers"] {
        assert!(dom.contains(class), "no {class} in the rendered DOM");
    }
    assert!(dom.matches("<svg").count() == 10, "all charts rendered");
    assert!(dom.contains("completion times under stress") && dom.contains("Under stress"));
    assert!(dom.contains("Metrics table"));
    // Console messages are logged as CONSOLE(line)] "..." by --enable-logging; the page has
    // no script, so any console line (a CSP or parse error, a failed load) is a defect.
    for log in [&s.stderr, &d.stderr] {
        let log = String::from_utf8_lossy(log);
        let console: Vec<&str> = log.lines().filter(|l| l.contains("CONSOLE")).collect();
        assert!(console.is_empty(), "console messages: {console:#?}");
    }
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
            .args(["compare", "--gpus", "32"]);
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
        "12/12 stages",
        "loss sweep",
    ] {
        assert!(shown.contains(want), "missing {want}: {shown}");
    }
    assert!(
        out == quiet_out,
        "the report depends on the progress display"
    );
}
