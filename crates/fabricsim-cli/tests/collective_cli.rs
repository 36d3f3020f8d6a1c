//! `fabricsim collective`: nccl-tests' table from packet runs (golden on a small deterministic
//! run, the layout of nccl-tests src/common.cu checked row by row), every op, the fit report,
//! JSON keys with units, and bad flags exiting 2.

mod support;

/// `fabricsim collective ARGS`'s standard output; it must succeed.
fn ok(args: &[&str]) -> String {
    support::stdout_ok(&[&["collective"], args].concat())
}

/// One seed: nccl-tests' own table.
const SMALL: [&str; 10] = [
    "--seeds",
    "1",
    "--gpus",
    "16",
    "--fabric",
    "ib-ndr",
    "--min-bytes",
    "64K",
    "--max-bytes",
    "4M",
];

#[test]
fn table_is_golden_and_laid_out_as_nccl_tests() {
    let got = ok(&SMALL);
    // Same input, same bytes.
    assert_eq!(ok(&SMALL), got);
    let golden = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden/collective-all-reduce-16-ib-ndr.txt");
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        std::fs::write(&golden, &got).unwrap();
    }
    let want = std::fs::read_to_string(&golden)
        .unwrap_or_else(|e| panic!("{}: {e} (UPDATE_GOLDEN=1 creates it)", golden.display()));
    assert_eq!(
        got, want,
        "regenerate with UPDATE_GOLDEN=1 and read the diff"
    );
    // nccl-tests common.cu: the header lines, then rows "%12li  %12li  %8s  %6s  %6i  %7s
    // %6.2f  %6.2f  %5s", then "# Out of bounds values" and "# Avg bus bandwidth".
    let lines: Vec<&str> = got.lines().collect();
    assert!(lines[0].starts_with(
        "# fabricsim collective: all_reduce (ring, 16 channels) on 16 GPUs in 2 servers, ib-ndr"
    ));
    assert_eq!(
        lines[3],
        "#       size         count      type   redop    root    time   algbw   busbw  #wrong"
    );
    let rows: Vec<&str> = lines[5..]
        .iter()
        .take_while(|l| !l.starts_with('#'))
        .copied()
        .collect();
    assert_eq!(rows.len(), 7, "64K .. 4M doubling");
    let mut busbw_sum = 0.0;
    for (i, r) in rows.iter().enumerate() {
        assert_eq!(
            r.len(),
            12 + 2 + 12 + 2 + 8 + 2 + 6 + 2 + 6 + 2 + 7 + 2 + 6 + 2 + 6 + 2 + 5,
            "{r}"
        );
        let f: Vec<&str> = r.split_whitespace().collect();
        assert_eq!(f.len(), 9, "{r}");
        let size: u64 = f[0].parse().unwrap();
        assert_eq!(size, (64 << 10) << i);
        assert_eq!(f[1].parse::<u64>().unwrap(), size / 4);
        assert_eq!(&f[2..5], &["float", "sum", "-1"]);
        let (us, algbw, busbw): (f64, f64, f64) = (
            f[5].parse().unwrap(),
            f[6].parse().unwrap(),
            f[7].parse().unwrap(),
        );
        // algbw = size / time; busbw = algbw x 2(n-1)/n (nccl-tests), both in GB/s.
        assert!(
            (algbw - size as f64 / us / 1e3).abs() < 0.01 + 1e-3 * algbw,
            "{r}"
        );
        assert!(
            (busbw - algbw * 30.0 / 16.0).abs() < 0.01 + 1e-3 * busbw,
            "{r}"
        );
        assert_eq!(f[8], "N/A");
        busbw_sum += busbw;
    }
    let avg: f64 = lines[5 + rows.len() + 1]
        .strip_prefix("# Avg bus bandwidth    : ")
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert!((avg - busbw_sum / 7.0).abs() < 0.01, "{avg}");
}

#[test]
fn every_op_runs_and_busbw_stays_below_the_nics_bound() {
    // 2 servers x 8 NICs of 400 Gb/s: with NVLink inside the servers, busbw per rank can reach
    // 8 x 50 GB/s x payload efficiency (each rank's share of the 8 rails), never more.
    for op in [
        "all_reduce",
        "all_gather",
        "reduce_scatter",
        "all_to_all",
        "broadcast",
        "reduce",
        "sendrecv",
    ] {
        let out = ok(&[
            "--seeds",
            "1",
            "--gpus",
            "16",
            "--op",
            op,
            "--min-bytes",
            "1M",
            "--max-bytes",
            "2M",
            "--format",
            "json",
        ]);
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        let rows = v["table"]["rows"].as_array().unwrap();
        assert_eq!(rows.len(), 2, "{op}");
        for r in rows {
            let busbw = r["busbw_GBps"]["mean"].as_f64().unwrap();
            assert!(busbw > 0.0 && busbw < 8.0 * 50.0, "{op}: {busbw}");
            assert!(r["time_us"]["mean"].as_f64().unwrap() > 0.0);
        }
        assert_eq!(v["engine"], "packet");
    }
}

#[test]
fn fit_reports_its_error_at_held_out_sizes() {
    let out = ok(&[
        "--gpus",
        "16",
        "--fabric",
        "roce-400g",
        "--min-bytes",
        "1M",
        "--max-bytes",
        "16M",
        "--fit",
        "--format",
        "json",
    ]);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let fit = &v["fit"];
    // 1, 2, 4, 8, 16 MiB: fitted at 1, 4, 16; checked at 2 and 8.
    assert_eq!(fit["fitted_sizes_bytes"].as_array().unwrap().len(), 3);
    let held = fit["held_out"].as_array().unwrap();
    assert_eq!(held.len(), 2);
    let rows = v["table"]["rows"].as_array().unwrap();
    for h in held {
        let size = h["size_bytes"].as_u64().unwrap();
        let row = rows.iter().find(|r| r["size_bytes"] == size).unwrap();
        // The check compares with the simulated time of the table's row (its mean over the
        // seeds).
        assert!(
            (h["measured_s"].as_f64().unwrap() * 1e6 - row["time_us"]["mean"].as_f64().unwrap())
                .abs()
                < 1e-6
        );
    }
    assert!(fit["alpha_us"].as_f64().unwrap() > 0.0);
    assert!(fit["bandwidth_GBps"].as_f64().unwrap() > 0.0);
    let text = ok(&[
        "--gpus",
        "16",
        "--min-bytes",
        "1M",
        "--max-bytes",
        "4M",
        "--fit",
    ]);
    assert!(text.contains("# max |error| at held-out sizes: "), "{text}");
}

#[test]
fn bad_flags_exit_2_naming_the_flag() {
    for (args, want) in [
        (vec!["--op", "allreduce"], "--op"),
        (vec!["--min-bytes", "1X"], "--min-bytes"),
        (vec!["--algo", "tree", "--op", "all_gather"], "--algo"),
        (
            vec!["--min-bytes", "1M", "--max-bytes", "2M", "--fit"],
            "--fit",
        ),
        (vec!["--channels", "0"], "--channels"),
    ] {
        let mut a = vec!["collective", "--gpus", "16"];
        a.extend(args);
        support::exits_2_saying(&a, &[want]);
    }
}

/// By default each figure is measured over 3 seeds, derived from the engine's seed: the JSON
/// names them, every figure is `{mean, lo, hi, n}` with n = 3, the text shows `mean ± half`,
/// and the same input gives the same bytes. `--seeds` and the `seeds` key take 1 to 100.
#[test]
fn figures_are_estimates_over_the_seeds() {
    let args = [
        "--gpus",
        "16",
        "--fabric",
        "roce-400g",
        "--op",
        "all_to_all",
        "--min-bytes",
        "1M",
        "--max-bytes",
        "2M",
    ];
    let json = ok(&[&args[..], &["--format", "json"]].concat());
    assert_eq!(json, ok(&[&args[..], &["--format", "json"]].concat()));
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    let seeds = v["seeds"].as_array().unwrap();
    assert_eq!(seeds.len(), 3);
    assert_eq!(seeds[0], 1, "the first seed is the engine's");
    for r in v["table"]["rows"].as_array().unwrap() {
        for k in ["time_us", "algbw_GBps", "busbw_GBps"] {
            let e = &r[k];
            assert_eq!(e["n"], 3, "{k}");
            let (lo, m, hi) = (e["lo"].as_f64(), e["mean"].as_f64(), e["hi"].as_f64());
            assert!(lo <= m && m <= hi && lo >= Some(0.0), "{k}: {e}");
        }
    }
    assert_eq!(v["table"]["avg_busbw_GBps"]["n"], 3);
    let text = ok(&args);
    assert!(text.contains("# 3 seeds per size"), "{text}");
    assert!(
        text.contains("# Avg bus bandwidth    : ") && text.contains(" ± "),
        "{text}"
    );
    for bad in ["0", "101"] {
        support::exits_2_saying(&["collective", "--seeds", bad], &["--seeds", "1 to 100"]);
    }
    let f = support::write("collective-seeds-0.toml", "name = \"x\"\nseeds = 0\n");
    support::exits_2_saying(
        &["collective", &f],
        &["collective-seeds-0.toml", ":2", "seeds", "1 to 100"],
    );
}

/// A pods fabric in both engines: 512 GPUs (64 servers of 8 NDR ports) in 2 pods of one SU on
/// 64-port QM9700s. An all-to-all of 4 MiB per rank sends half of each rank's bytes to the other
/// pod; over a 4:1 core a pod's 256 NIC ports reach the other pod through 32 spines × 2
/// uplinks, so no engine can finish before 256 · 2 MiB / (64 × 50 GB/s) = 167.8 us (the cut
/// bound). At 1:1 the core is no limit and both finish near the NICs' own bound, under it.
#[test]
fn all_to_all_between_two_pods_is_held_to_the_core_in_both_engines() {
    let time_us = |core: &str, engine: &str| -> f64 {
        let out = ok(&[
            "--gpus",
            "512",
            "--fabric",
            "ib-ndr",
            "--topology",
            "pods",
            "--pod-sus",
            "1",
            "--core-oversubscription",
            core,
            "--engine",
            engine,
            "--seeds",
            "1",
            "--op",
            "all_to_all",
            "--min-bytes",
            "4M",
            "--max-bytes",
            "4M",
        ]);
        let row = out
            .lines()
            .find(|l| l.trim_start().starts_with("4194304 "))
            .unwrap_or_else(|| panic!("no 4 MiB row in {out}"));
        row.split_whitespace().nth(5).unwrap().parse().unwrap()
    };
    let bound = 256.0 * (4_194_304.0 / 2.0) / (64.0 * 50e9) * 1e6;
    let mut thin = Vec::new();
    for engine in ["packet", "flow"] {
        let (full, t) = (time_us("1:1", engine), time_us("4:1", engine));
        assert!(
            t >= bound,
            "{engine}: {t} us under the cut bound {bound:.1}"
        );
        assert!(full < bound, "{engine}: {full} us at 1:1");
        thin.push(t);
    }
    assert!((thin[0] / thin[1] - 1.0).abs() < 0.1, "{thin:?}");
}
