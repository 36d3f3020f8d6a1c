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
        "--seeds",
        "2",
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
    assert!(c.starts_with(
        "point,loss_rate,transport,seeds,step_time_s,step_time_s_lo,step_time_s_hi,tokens_per_s,"
    ));
    assert!(
        c.lines().skip(1).all(|l| l.split(',').nth(3) == Some("2")),
        "{c}"
    );
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
    // The physical-layer and reliability axes name the value and what they take.
    for (arg, allowed) in [
        ("ber=0.1", "pre-FEC bit error ratios from 0 to 0.005"),
        ("ber=-1e-5", "pre-FEC bit error ratios"),
        ("mtbf_scale=0", "factors from 0.01 to 100"),
        ("optics=cpo", "dsp, lpo, lro"),
        ("checkpoint_interval=0s", "times from 1 s to 2592000 s"),
        ("checkpoint_interval=30min", "such as 600s, 1800s"),
    ] {
        let value = arg.split_once('=').unwrap().1;
        support::exits_2_saying(&["sweep", "--param", arg], &["--param", value, allowed]);
    }
    // A BER the FEC cannot hold loses half the frames: refused before running.
    support::exits_2_saying(
        &["sweep", "--param", "ber=4e-3"],
        &["--param", "RS(544,514)"],
    );
}

#[test]
fn an_ecn_sweep_charts_the_stress_tail_against_kmin() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"));
    let (csv, svg) = (dir.join("ecn.csv"), dir.join("ecn.svg"));
    let o = fabricsim(&[
        "sweep",
        "--param",
        "ecn_kmin=20K,1M",
        "--seeds",
        "2",
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
    let marks: Vec<f64> = rows.iter().map(|r| r[col].parse().unwrap()).collect();
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
        "--seeds",
        "2",
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

/// The same scenario, seed and seeds give the same CSV bytes; the seeds are in the JSON record.
#[test]
fn three_seeds_give_the_same_csv_bytes_twice() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"));
    let scenario = support::write(
        "sweep-small.toml",
        "[cluster]\ngpus = 16\ngpus_per_node = 8\nnics_per_node = 8\ngpu = \"h100\"\n\
         [train]\nmodel = \"llama3-8b\"\ntp = 8\npp = 1\n",
    );
    let csv = |name: &str, threads: &str| {
        let (c, j) = (
            dir.join(format!("{name}.csv")),
            dir.join(format!("{name}.json")),
        );
        let o = fabricsim(&[
            "sweep",
            &scenario,
            "--param",
            "loss_rate=0,0.003",
            "--seeds",
            "3",
            "--threads",
            threads,
            "--csv",
            c.to_str().unwrap(),
            "--json",
            j.to_str().unwrap(),
        ]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        (std::fs::read(&c).unwrap(), support::json_file(&j))
    };
    let (a, ja) = csv("seeds-a", "1");
    let (b, _) = csv("seeds-b", "2");
    assert_eq!(a, b);
    assert_eq!(ja["seeds"].as_array().unwrap().len(), 3);
    assert_eq!(ja["points"][1]["mfu"]["n"], 3);
    support::exits_2_saying(&["sweep", "--seeds", "0"], &["--seeds", "1 to 100"]);
}

/// An MTBF sweep's CSV keeps the columns before and appends the plan's power, interruptions,
/// ETTR and the cost per token trained between interruptions; its chart is MFU x ETTR.
#[test]
fn an_mtbf_sweep_appends_ettr_and_the_cost_per_good_token() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"));
    let scenario = support::write(
        "sweep-mtbf.toml",
        "[cluster]\ngpus = 16\ngpus_per_node = 8\nnics_per_node = 8\ngpu = \"h100\"\n\
         [train]\nmodel = \"llama3-8b\"\ntp = 8\npp = 1\n",
    );
    let (csv, svg) = (dir.join("mtbf.csv"), dir.join("mtbf.svg"));
    let o = fabricsim(&[
        "sweep",
        &scenario,
        "--param",
        "mtbf_scale=2,0.5",
        "--seeds",
        "2",
        "--csv",
        csv.to_str().unwrap(),
        "--svg",
        svg.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let c = std::fs::read_to_string(&csv).unwrap();
    let head: Vec<&str> = c.lines().next().unwrap().split(',').collect();
    let at = |name: &str| head.iter().position(|h| *h == name).unwrap();
    assert!(at("error") < at("network_power_kw"), "{c}");
    assert_eq!(
        head[at("error") + 1..],
        [
            "network_power_kw",
            "interruptions_per_day",
            "ettr",
            "usd_per_million_good_tokens",
            "usd_per_million_good_tokens_lo",
            "usd_per_million_good_tokens_hi"
        ]
    );
    let rows: Vec<Vec<f64>> = c
        .lines()
        .skip(1)
        .map(|l| {
            l.split(',')
                .map(|x| x.parse().unwrap_or(f64::NAN))
                .collect()
        })
        .collect();
    let col = |r: usize, name: &str| rows[r][at(name)];
    assert!(col(1, "ettr") < col(0, "ettr"));
    assert!(col(1, "usd_per_million_good_tokens") > col(0, "usd_per_million_good_tokens"));
    assert_eq!(col(1, "step_time_s"), col(0, "step_time_s"));
    let s = std::fs::read_to_string(&svg).unwrap();
    assert!(s.contains("MFU x ETTR") && s.contains("MTBF scale"));
}

/// A request-rate sweep of the serving example writes the serving columns; the workload axes'
/// bad values and axes that do not apply exit 2 naming the axis.
#[test]
fn a_rate_sweep_writes_the_serving_columns_and_bad_workload_axes_exit_2() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"));
    let csv = dir.join("rate.csv");
    let o = fabricsim(&[
        "sweep",
        "examples/serve-llama3-70b-disagg.toml",
        "--fabric",
        "ib-ndr",
        "--param",
        "rate=5,30",
        "--seeds",
        "1",
        "--csv",
        csv.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("TTFT_p99_s") && out.lines().count() == 3,
        "{out}"
    );
    let c = std::fs::read_to_string(&csv).unwrap();
    let head: Vec<&str> = c.lines().next().unwrap().split(',').collect();
    for col in [
        "rate",
        "serve_ttft_p99_s",
        "serve_tpot_p99_s",
        "serve_goodput",
        "serve_usd_per_million_good_tokens",
    ] {
        assert!(head.contains(&col), "{col}: {head:?}");
    }
    let at = |row: usize, col: &str| -> f64 {
        let k = head.iter().position(|h| *h == col).unwrap();
        c.lines()
            .nth(row)
            .unwrap()
            .split(',')
            .nth(k)
            .unwrap()
            .parse()
            .unwrap()
    };
    assert!(at(2, "serve_ttft_p99_s") > at(1, "serve_ttft_p99_s"), "{c}");
    let serve = "examples/serve-llama3-70b-disagg.toml";
    let jobs = "examples/tenants-two-trainings.toml";
    for (args, says) in [
        (&["sweep", serve, "--param", "rate=0"][..], "rate"),
        (&["sweep", serve, "--param", "rate=fast"], "rate"),
        (&["sweep", serve, "--param", "moe_skew=zipf:9"], "moe_skew"),
        (&["sweep", serve, "--param", "tenants=1"], "tenants"),
        (&["sweep", jobs, "--param", "tenants=3"], "tenants=3"),
        (
            &["sweep", jobs, "--param", "placement=diagonal"],
            "placement",
        ),
        (&["sweep", "--param", "rate=5"], "rate=5"),
    ] {
        support::exits_2_saying(args, &["--param", says]);
    }
}
