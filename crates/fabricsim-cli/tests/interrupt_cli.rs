//! Issue 21, SIGINT and SIGTERM in every long command besides `sim` and `sweep` (robust_cli.rs):
//! `collective`, `compare`, `train --step-model flow_dag` and `bench` stop cleanly once some of
//! their work is done, write the requested file with what finished, marked `"status":
//! "interrupted"`, and exit 128 + the signal. Each waits for a progress marker (or CPU time
//! used), never a fixed sleep, so a loaded machine only makes it slower.

mod support;

use std::path::Path;
use std::time::Duration;

use support::{
    cpu_seconds, exited, json_file, peer_dir, signal, spawn, spawn_to, tmp, wait_bounded, wait_for,
};

const SIGNALS: [(&str, i32); 2] = [("-INT", 130), ("-TERM", 143)];

/// The bound on every wait: far above what each step takes, so only a hang trips it.
const LIMIT: Duration = Duration::from_secs(120);

fn text(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap_or_default()
}

/// Waits for `child` to exit, asserts the exit status `code` and that it said so on stderr,
/// then returns the JSON it wrote to `out`.
fn stopped(
    child: &mut std::process::Child,
    code: i32,
    err: &Path,
    out: &Path,
) -> serde_json::Value {
    let status = wait_bounded(child, LIMIT);
    let e = text(err);
    assert_eq!(status.code(), Some(code), "{e}");
    assert!(e.contains("interrupted by SIG"), "{e}");
    let v = json_file(out);
    assert_eq!(v["status"], "interrupted", "{v}");
    v
}

/// A size sweep 64 KiB .. 1 GiB (15 sizes, the last minutes long) stopped after its second
/// size: the sizes that finished are the table's rows, the others listed as unfinished.
#[test]
fn a_signal_to_collective_leaves_the_sizes_done() {
    for (sig, code) in SIGNALS {
        let (out, err) = (tmp("coll.json"), tmp("coll.err"));
        let _ = std::fs::remove_file(&out);
        let o = out.to_str().unwrap();
        let mut child = spawn(
            &[
                "collective",
                "--gpus",
                "16",
                "--engine",
                "packet",
                "--min-bytes",
                "64K",
                "--max-bytes",
                "1G",
                "--format",
                "json",
                "--out",
                o,
            ],
            &err,
        );
        // "size 3/15" is shown as the third size starts: two are done.
        wait_for("third size", LIMIT, || {
            text(&err).contains("size 3/15") || exited(&child)
        });
        signal(&child, sig);
        let v = stopped(&mut child, code, &err, &out);
        let rows = v["table"]["rows"].as_array().unwrap();
        let left = v["unfinished_sizes_bytes"].as_array().unwrap();
        assert!(rows.len() >= 2, "{sig}: {} rows", rows.len());
        assert_eq!(rows.len() + left.len(), 15, "{sig}: {v}");
        assert_eq!(rows[0]["size_bytes"], 64 << 10);
        assert_eq!(left.last().unwrap(), &serde_json::json!(1u64 << 30));
    }
}

/// A comparison stopped once a fabric has finished (10 of its 12 fabric stages done: with 4
/// stages per fabric, 3 x 3 is the most without one finished): the fabrics that finished are
/// written, the rest named in the notes.
#[test]
fn a_signal_to_compare_leaves_the_fabrics_finished() {
    for (sig, code) in SIGNALS {
        let (out, err) = (tmp("cmp.json"), tmp("cmp.err"));
        let _ = std::fs::remove_file(&out);
        let o = out.to_str().unwrap();
        let mut child = spawn(
            &[
                "compare", "--gpus", "64", "--seeds", "2", "--claims", "off", "--format", "json",
                "--out", o,
            ],
            &err,
        );
        // The (fabric, seed) jobs finish in order, so past half the stages a fabric is done.
        wait_for("a finished fabric", LIMIT, || {
            last_stages(&text(&err)).is_some_and(|(k, n)| 2 * k >= n) || exited(&child)
        });
        signal(&child, sig);
        let v = stopped(&mut child, code, &err, &out);
        let fabrics = v["fabrics"].as_array().unwrap().len();
        let points = v["loss_sweep"]["points"].as_array().map_or(0, Vec::len);
        assert!(fabrics >= 1, "{sig}: no fabric written");
        assert!(
            fabrics < 3 || points < 8,
            "{sig}: the comparison finished: {v}"
        );
        let notes = v["notes"].to_string();
        assert!(
            notes.contains("Interrupted: a partial comparison"),
            "{notes}"
        );
    }
}

/// The last "k/n stages" a progress display shows.
fn last_stages(e: &str) -> Option<(u32, u32)> {
    let before = e.rsplit(" stages").nth(1)?;
    let count = before
        .rsplit(|c: char| !(c.is_ascii_digit() || c == '/'))
        .next()?;
    let (k, n) = count.split_once('/')?;
    Some((k.parse().ok()?, n.parse().ok()?))
}

/// The whole-step simulation of Llama 3 70B on 1,024 GPUs with 512 micro-batches (1.8 M
/// messages, about 1.7 s of CPU in a release build) stopped after 0.3 s of CPU: wherever the
/// signal lands before the flow step ends, the analytic step is written, marked, without it.
#[test]
fn a_signal_to_train_flow_dag_leaves_the_analytic_step() {
    for (sig, code) in SIGNALS {
        let (out, err) = (tmp("train.json"), tmp("train.err"));
        let _ = std::fs::remove_file(&out);
        let mut child = spawn(
            &[
                "train",
                "examples/train-llama3-70b.toml",
                "--global-batch",
                "16384",
                "--step-model",
                "flow_dag",
                "--format",
                "json",
                "--out",
                out.to_str().unwrap(),
            ],
            &err,
        );
        wait_for("0.3 s of CPU", LIMIT, || {
            cpu_seconds(&child) >= 0.3 || exited(&child)
        });
        signal(&child, sig);
        let v = stopped(&mut child, code, &err, &out);
        assert!(v["step_time_s"].as_f64().is_some_and(|t| t > 0.0), "{v}");
        assert!(
            v.get("flow_step").is_none(),
            "{sig}: the flow step finished"
        );
    }
}

/// The three peer cases stopped once the first has printed its row: the cases done are in
/// the --json file, the others listed as unfinished.
#[test]
fn a_signal_to_bench_leaves_the_cases_done() {
    let dir = peer_dir();
    for (sig, code) in SIGNALS {
        let (out, stdout, err) = (tmp("bench.json"), tmp("bench.out"), tmp("bench.err"));
        let _ = std::fs::remove_file(&out);
        let mut child = spawn_to(
            &[
                "bench",
                "--dir",
                dir.to_str().unwrap(),
                "--json",
                out.to_str().unwrap(),
            ],
            Some(&stdout),
            &err,
        );
        wait_for("the first case", LIMIT, || {
            text(&stdout).lines().any(|l| l.starts_with("ft8_perm128 ")) || exited(&child)
        });
        signal(&child, sig);
        let v = stopped(&mut child, code, &err, &out);
        let cases = v["cases"].as_array().unwrap();
        let left = v["unfinished"].as_array().unwrap();
        assert_eq!(cases[0]["case"], "ft8_perm128");
        assert_eq!(cases[0]["completed"], 128);
        assert!(!left.is_empty(), "{sig}: every case finished");
        assert_eq!(cases.len() + left.len(), 3, "{v}");
        assert!(text(&stdout).contains("# interrupted"));
    }
}
