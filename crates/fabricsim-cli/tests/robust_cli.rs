//! Issue 21, the command line: output paths are checked before any work, a signal stops a run
//! with its partial results written (exit 130 / 143), an interrupted sweep resumes to the same
//! bytes, an empty scenario file is refused, and the same scenario and seed give the same bytes.

mod support;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use support::{
    examples, exited, exits_2_saying, fabricsim, json_file, signal, spawn, stderr, tmp,
    wait_bounded, wait_for,
};

/// A scratch directory of this test binary.
fn scratch_dir(name: &str) -> PathBuf {
    let d = tmp(name);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Every command's output flags into a missing directory exit 2 at once, naming the flag, the
/// path and why, and nothing is run or written.
#[test]
fn an_output_into_a_missing_directory_is_refused_before_the_run() {
    let missing = tmp("nodir").join("x.out");
    let m = missing.to_str().unwrap();
    let perm = examples().join("sim-permutation.toml");
    let p = perm.to_str().unwrap();
    let cases: Vec<Vec<&str>> = vec![
        vec!["plan", "--out", m],
        vec!["plan", "--export-dot", m],
        vec!["plan", "--export-ns3", m],
        vec!["sim", p, "--out", m],
        vec!["sim", p, "--fct", m],
        vec!["train", "--out", m],
        vec!["collective", "--out", m],
        vec!["compare", "--out", m],
        vec!["compare", "--html", m],
        vec!["sweep", "--csv", m],
        vec!["sweep", "--json", m],
        vec!["sweep", "--svg", m],
    ];
    for args in cases {
        let flag = args[args.len() - 2];
        let t0 = Instant::now();
        let o = fabricsim(&args);
        let e = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {e}");
        for want in [
            flag,
            m,
            "does not exist",
            "allowed: a file path in an existing directory",
        ] {
            assert!(e.contains(want), "{args:?}: missing `{want}` in: {e}");
        }
        // Nothing ran: no report on stdout, no engine summary; the default compare and sweep
        // take tens of seconds, a check of paths well under one.
        assert!(o.stdout.is_empty(), "{args:?} printed a report");
        assert!(
            !e.contains("[sim] packet engine"),
            "{args:?} ran the engine: {e}"
        );
        assert!(
            t0.elapsed() < Duration::from_secs(10),
            "{args:?}: {:?}",
            t0.elapsed()
        );
    }
}

/// `compare --out ok.txt --html somedir`: neither is written, exit 2 saying it is a directory.
#[test]
fn an_output_that_is_a_directory_is_refused_and_nothing_is_written() {
    let dir = scratch_dir("somedir");
    let ok = tmp("ok.txt");
    let _ = std::fs::remove_file(&ok);
    exits_2_saying(
        &[
            "compare",
            "--out",
            ok.to_str().unwrap(),
            "--html",
            dir.to_str().unwrap(),
        ],
        &["--html", dir.to_str().unwrap(), "is a directory"],
    );
    assert!(!ok.exists(), "the text report was written");
    exits_2_saying(
        &["plan", "--export-dot", dir.to_str().unwrap()],
        &["--export-dot", "is a directory"],
    );
}

/// A directory this user cannot write: exit 2, "permission denied". As root every mode is
/// writable, so the test then uses /sys, which no user can create files in.
#[test]
fn an_unwritable_output_directory_is_refused_before_the_run() {
    use std::os::unix::fs::PermissionsExt;
    let ro = scratch_dir("readonly");
    std::fs::set_permissions(&ro, std::fs::Permissions::from_mode(0o555)).unwrap();
    let writable = std::fs::File::create(ro.join("probe")).is_ok();
    let _ = std::fs::remove_file(ro.join("probe"));
    let dir = match writable {
        false => ro.clone(),
        true if Path::new("/sys/kernel").is_dir() => PathBuf::from("/sys/kernel"),
        true => {
            eprintln!("skipped: running as root with no /sys to test an unwritable directory");
            return;
        }
    };
    let out = dir.join("x.json");
    let perm = examples().join("sim-permutation.toml");
    let e = exits_2_saying(
        &[
            "sim",
            perm.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ],
        &["--out", out.to_str().unwrap(), "permission denied"],
    );
    assert!(!e.contains("[sim] packet engine"), "the engine ran: {e}");
    std::fs::set_permissions(&ro, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// A result that cannot be written whole (a 1 KiB file-size limit, as a full disk) leaves the
/// previous file as it was and no temporary file: written to a temporary file and renamed,
/// never truncated first and left half written.
#[test]
fn a_write_that_fails_midway_leaves_the_previous_file_whole() {
    let dir = scratch_dir("fsize");
    let out = dir.join("r.json");
    std::fs::write(&out, "previous\n").unwrap();
    let perm = examples().join("sim-permutation.toml");
    // `ulimit -f 1`: files of at most 1 KiB; SIGXFSZ ignored, so a longer write fails (EFBIG).
    let script = "trap '' XFSZ; ulimit -f 1; exec \"$0\" sim \"$1\" --out \"$2\"";
    let o = std::process::Command::new("bash")
        .args(["-c", script, env!("CARGO_BIN_EXE_fabricsim")])
        .arg(&perm)
        .arg(&out)
        .output()
        .unwrap();
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{e}");
    assert!(e.contains("cannot write") && e.contains("r.json"), "{e}");
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "previous\n");
    let names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|d| d.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, ["r.json"], "a temporary file was left");
}

/// A packet-engine run of tens of seconds (16 hosts, 4 GB each); `engine = "auto"` makes sim
/// say "[sim] engine auto" on stderr just before the run starts: the started marker.
fn long_sim(name: &str) -> String {
    let topo = examples().join("sim-ft4.topo.txt");
    support::write(
        name,
        &format!(
            "engine = \"auto\"\n[sim]\ntopology_file = \"{}\"\nfabric = \"roce\"\n\
             [traffic]\nkind = \"permutation\"\nbytes = \"4GB\"\n",
            topo.display()
        ),
    )
}

/// SIGTERM (and SIGINT) to `sim`: the partial results are written, marked interrupted, and the
/// exit status is 128 + the signal.
#[test]
fn a_signal_to_sim_leaves_the_partial_results() {
    let sc = long_sim("long.toml");
    for (sig, code) in [("-TERM", 143), ("-INT", 130)] {
        let (out, fct, err) = (tmp("long.json"), tmp("long.fct"), tmp("long.err"));
        let _ = std::fs::remove_file(&out);
        let mut child = spawn(
            &[
                "sim",
                &sc,
                "--out",
                out.to_str().unwrap(),
                "--fct",
                fct.to_str().unwrap(),
            ],
            &err,
        );
        wait_for("started marker", Duration::from_secs(120), || {
            std::fs::read_to_string(&err).is_ok_and(|e| e.contains("[sim] engine auto"))
        });
        signal(&child, sig);
        let status = wait_bounded(&mut child, Duration::from_secs(120));
        let e = std::fs::read_to_string(&err).unwrap();
        assert_eq!(status.code(), Some(code), "{sig}: {e}");
        assert!(e.contains("interrupted by SIG"), "{e}");
        let v = json_file(&out);
        assert_eq!(v["sim"]["status"], "interrupted", "{sig}");
        assert_eq!(v["sim"]["partial"], true);
        let s = &v["summary"];
        assert!(
            s["messages_completed"].as_u64() < s["messages_total"].as_u64(),
            "{sig}: the run finished before the signal: {s}"
        );
        assert!(fct.exists());
    }
}

/// The sweep of the resume tests: 8 points, one thread, so a signal after the first point
/// finds the others unfinished; its outputs in `formats` (csv, json, svg) under `tag`.
fn sweep_args(tag: &str, formats: &[&str]) -> Vec<String> {
    let mut args: Vec<String> = [
        "sweep",
        "--param",
        "loss_rate=0,0.0001,0.0003,0.0006,0.001,0.002,0.003,0.005",
        "--seeds",
        "2",
        "--threads",
        "1",
    ]
    .map(String::from)
    .into();
    for f in formats {
        args.push(format!("--{f}"));
        args.push(tmp(&format!("sweep-{tag}.{f}")).display().to_string());
    }
    args
}

/// A sweep stopped by SIGTERM after its first point and run again with `--resume` writes the
/// same bytes in every requested format (and the same table) as an uninterrupted run, with
/// or without a --json file to hold the record of the points done.
#[test]
fn an_interrupted_sweep_resumed_gives_the_same_bytes() {
    let run = |args: &[String]| {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let o = fabricsim(&args);
        assert!(o.status.success(), "{args:?}: {}", stderr(&o));
        o.stdout
    };
    let whole = run(&sweep_args("whole", &["csv", "json", "svg"]));
    for formats in [&["csv", "json", "svg"][..], &["csv", "svg"]] {
        let tag = formats.join("-");
        let resumed = format!("resumed-{tag}");
        let args = sweep_args(&resumed, formats);
        for f in formats {
            let _ = std::fs::remove_file(tmp(&format!("sweep-{resumed}.{f}")));
        }
        let err = tmp("sweep.err");
        let argv: Vec<&str> = args.iter().map(String::as_str).collect();
        let mut child = spawn(&argv, &err);
        wait_for("first point", Duration::from_secs(600), || {
            std::fs::read_to_string(&err).is_ok_and(|e| e.contains(" 1/8 points")) || exited(&child)
        });
        signal(&child, "-TERM");
        let status = wait_bounded(&mut child, Duration::from_secs(300));
        let e = std::fs::read_to_string(&err).unwrap();
        assert_eq!(status.code(), Some(143), "{tag}: {e}");
        let csv = std::fs::read_to_string(tmp(&format!("sweep-{resumed}.csv"))).unwrap();
        let k = (1..8)
            .find(|k| csv.contains(&format!("# interrupted: {k} of 8 points")))
            .unwrap_or_else(|| panic!("{tag}: no partial mark in {csv}"));
        if formats.contains(&"json") {
            let partial = json_file(&tmp(&format!("sweep-{resumed}.json")));
            assert_eq!(partial["status"], "interrupted");
            assert_eq!(partial["points"].as_array().unwrap().len(), k);
        }
        let mut again = args.clone();
        again.push("--resume".into());
        let table = run(&again);
        assert!(table == whole, "{tag}: the resumed table differs");
        for f in formats {
            let (a, b) = (
                tmp(&format!("sweep-whole.{f}")),
                tmp(&format!("sweep-{resumed}.{f}")),
            );
            assert!(
                std::fs::read(&a).unwrap() == std::fs::read(&b).unwrap(),
                "{tag}: {} differs from the uninterrupted {}",
                b.display(),
                a.display()
            );
        }
        // The record kept beside the outputs is gone once every point is done.
        let left: Vec<_> = std::fs::read_dir(tmp("x").parent().unwrap())
            .unwrap()
            .filter_map(|d| d.ok())
            .filter(|d| {
                d.file_name()
                    .to_string_lossy()
                    .ends_with(".sweep-record.json")
            })
            .collect();
        assert!(left.is_empty(), "{tag}: {left:?} left behind");
    }
}

/// `--resume` against the record of another sweep is refused.
#[test]
fn resume_refuses_the_record_of_another_sweep() {
    let j = support::write(
        "other.json",
        "{\"fabric\": \"ib-ndr\", \"engine\": \"packet\", \"seed\": 1, \"axes\": [], \"points\": []}\n",
    );
    exits_2_saying(
        &["sweep", "--param", "loss_rate=0", "--json", &j, "--resume"],
        &["--resume", "other.json", "its fabric is \"ib-ndr\""],
    );
    // The record of the built-in scenario does not finish a sweep of an edited one.
    let j = tmp("one.json");
    let j = j.to_str().unwrap();
    let o = fabricsim(&["sweep", "--param", "loss_rate=0", "--json", j]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = std::fs::read_to_string(examples().join("compare-default.toml")).unwrap();
    let edited = support::write("edited.toml", &(text + "# edited\n"));
    exits_2_saying(
        &[
            "sweep",
            &edited,
            "--param",
            "loss_rate=0",
            "--json",
            j,
            "--resume",
        ],
        &["--resume", "its scenario_fnv1a64 is"],
    );
}

/// An empty scenario file (or one of comments only) exits 2 naming it; no file keeps the
/// built-in defaults.
#[test]
fn an_empty_scenario_file_is_refused() {
    for text in ["", "# only a comment\n\n"] {
        let f = support::write("empty.toml", text);
        for cmd in ["plan", "sim", "train", "compare", "sweep", "collective"] {
            exits_2_saying(&[cmd, &f], &["empty.toml", "empty scenario"]);
        }
    }
    assert!(fabricsim(&["plan"]).status.success());
}

/// The same scenario and seed give the same bytes in every format of the commands that run
/// engines (the timing figures only with `sim --timing`).
#[test]
fn identical_runs_give_identical_bytes() {
    let perm = examples().join("sim-permutation.toml");
    let p = perm.to_str().unwrap();
    let runs: Vec<Vec<&str>> = vec![
        vec!["sim", p],
        vec![
            "collective",
            "--gpus",
            "16",
            "--max-bytes",
            "4M",
            "--format",
            "json",
        ],
        vec!["collective", "--gpus", "16", "--max-bytes", "4M"],
    ];
    for args in runs {
        let a = fabricsim(&args);
        let b = fabricsim(&args);
        assert!(a.status.success(), "{args:?}: {}", stderr(&a));
        assert!(a.stdout == b.stdout, "{args:?}: two runs differ");
    }
    let t = fabricsim(&["sim", p, "--timing"]);
    let v: serde_json::Value = serde_json::from_slice(&t.stdout).unwrap();
    assert!(v["sim"]["wall_s"].is_number(), "--timing writes wall_s");
}
