//! End-to-end: `fabricsim train --loss-rate P --recovery R` costs random loss in expectation on
//! the step (`workload::train::loss_cost`): MFU falls with the rate under every recovery,
//! selective repeat is never below go-back-N, the JSON says what the loss costs, and the keys
//! are refused where nothing reads them.

mod support;

use support::{exits_2_saying, json_ok, write};

const EXAMPLE: &str = "examples/train-llama3-70b.toml";

fn mfu(rate: f64, recovery: &str) -> (f64, serde_json::Value) {
    let (p, r) = (rate.to_string(), recovery.to_string());
    let mut args = vec!["train", EXAMPLE, "--format", "json"];
    if rate > 0.0 {
        args.extend(["--loss-rate", &p, "--recovery", &r]);
    }
    let v = json_ok(&args);
    (v["mfu"].as_f64().expect("mfu"), v)
}

#[test]
fn mfu_falls_with_the_loss_rate_and_selective_repeat_is_never_below_go_back_n() {
    let (clean, _) = mfu(0.0, "");
    let rates = [1e-6, 1e-5, 1e-4, 1e-3];
    let mut by: Vec<(&str, Vec<f64>)> = Vec::new();
    for r in ["go-back-0", "go-back-n", "selective-repeat"] {
        let mut last = clean;
        let mut row = Vec::new();
        for &p in &rates {
            let (m, v) = mfu(p, r);
            assert!(
                m <= last,
                "{r} at {p}: MFU {m} above {last} at the lower rate"
            );
            let loss = &v["loss"];
            assert_eq!(loss["recovery"], r);
            assert!(
                loss["retransmitted_per_step"].as_f64().unwrap() > 0.0,
                "{r} {p}"
            );
            assert!(loss["step_s_added"].as_f64().unwrap() > 0.0, "{r} {p}");
            last = m;
            row.push(m);
        }
        // The loss costs something that matters at 0.1% on this 4.29 s timeout.
        assert!(last < 0.5 * clean, "{r}: {last} against {clean}");
        by.push((r, row));
    }
    for (i, &p) in rates.iter().enumerate() {
        let (gbn, sr, gb0) = (by[1].1[i], by[2].1[i], by[0].1[i]);
        assert!(
            sr >= gbn,
            "{p}: selective repeat {sr} below go-back-N {gbn}"
        );
        assert!(gbn >= gb0, "{p}: go-back-N {gbn} below go-back-0 {gb0}");
    }
}

#[test]
fn without_loss_the_report_has_no_loss_and_the_text_names_it_with() {
    let (_, v) = mfu(0.0, "");
    assert!(v.get("loss").is_none());
    let t = support::stdout_ok(&["train", EXAMPLE, "--loss-rate", "1e-5"]);
    assert!(
        t.contains("random loss 1.000e-5 per link with go-back-n costed in expectation"),
        "{t}"
    );
}

#[test]
fn bad_loss_keys_exit_2_naming_them() {
    exits_2_saying(
        &["train", EXAMPLE, "--loss-rate", "0.5"],
        &["--loss-rate", "0.5", "0 <= loss_rate < 0.5"],
    );
    exits_2_saying(
        &["train", EXAMPLE, "--loss-rate", "1e-4", "--recovery", "gbn"],
        &["--recovery", "gbn", "go-back-n, go-back-0"],
    );
    exits_2_saying(
        &["train", EXAMPLE, "--recovery", "go-back-n"],
        &["--recovery", "without random loss"],
    );
    exits_2_saying(
        &[
            "train",
            EXAMPLE,
            "--loss-rate",
            "1e-4",
            "--step-model",
            "flow_dag",
        ],
        &["--loss-rate", "analytic"],
    );
    let f = write(
        "compare-train-loss.toml",
        "[cluster]\ngpus = 64\n[train]\nmodel = \"llama3-8b\"\ntp = 8\nloss_rate = 1e-4\n",
    );
    exits_2_saying(
        &["compare", &f],
        &[
            "compare-train-loss.toml",
            "train.loss_rate",
            "[[compare.fabrics]]",
        ],
    );
}
