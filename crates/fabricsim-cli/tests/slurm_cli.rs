//! `sweep --backend slurm`: the job scripts, shards run by hand and merged (no Slurm needed),
//! and, on a real Slurm (`scripts/slurm-single-node.sh`, started by `.ci/run`), a sweep run as a
//! job array whose merge is byte-identical to the local run, with one array task killed midway
//! and the set finished by submitting again.

mod support;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use support::fabricsim;

/// A small sweep: 8 points.
const SMALL: [&str; 6] = [
    "--param",
    "loss_rate=0,0.0001,0.001,0.01",
    "--param",
    "transport=go-back-n,selective-repeat",
    "--seeds",
    "2",
];

fn dir(name: &str) -> PathBuf {
    let d =
        Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("slurm-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// `fabricsim sweep SWEEP EXTRA`, which must succeed; returns its stdout.
fn sweep(sweep: &[&str], extra: &[&str]) -> String {
    let args = [&["sweep"], sweep, extra].concat();
    let o = fabricsim(&args);
    assert!(o.status.success(), "{args:?}: {}", support::stderr(&o));
    String::from_utf8(o.stdout).unwrap()
}

/// The outputs of a sweep written to `d` with prefix `p`: (csv, json, svg) bytes.
fn outputs(d: &Path, p: &str) -> (Vec<u8>, Vec<u8>, Vec<u8>) {
    let read = |ext: &str| std::fs::read(d.join(format!("{p}.{ext}"))).unwrap();
    (read("csv"), read("json"), read("svg"))
}

fn out_flags(d: &Path, p: &str) -> Vec<String> {
    ["csv", "json", "svg"]
        .iter()
        .flat_map(|e| {
            [
                format!("--{e}"),
                d.join(format!("{p}.{e}")).display().to_string(),
            ]
        })
        .collect()
}

/// A local sweep's stdout and outputs.
fn local(d: &Path, sw: &[&str]) -> (String, (Vec<u8>, Vec<u8>, Vec<u8>)) {
    let flags = out_flags(d, "local");
    let f: Vec<&str> = flags.iter().map(String::as_str).collect();
    let text = sweep(sw, &[&["--threads", "2"], &f[..]].concat());
    (text, outputs(d, "local"))
}

#[test]
fn shards_run_by_hand_merge_to_the_local_bytes_and_a_partial_merge_names_what_is_missing() {
    let d = dir("hand");
    let (text, want) = local(&d, &SMALL);
    let wd = d.join("work");
    let wds = wd.display().to_string();
    let dry = sweep(
        &SMALL,
        &[
            "--backend",
            "slurm",
            "--work-dir",
            &wds,
            "--tasks",
            "2",
            "--dry-run",
        ],
    );
    assert!(
        dry.contains("sbatch --parsable") && dry.contains("afterany"),
        "{dry}"
    );
    let script = std::fs::read_to_string(wd.join("sweep.sbatch")).unwrap();
    assert!(
        script.contains("#SBATCH --array=0-1")
            && script.contains("--shard \"$SLURM_ARRAY_TASK_ID/2\""),
        "{script}"
    );
    // Only shard 0: the merge lists the odd points as missing, exits 1, marks the CSV.
    sweep(&SMALL, &["--work-dir", &wds, "--shard", "0/2"]);
    let flags = out_flags(&d, "merged");
    let f: Vec<&str> = flags.iter().map(String::as_str).collect();
    let o = fabricsim(&[&["sweep"], &SMALL[..], &["--merge", &wds], &f[..]].concat());
    assert_eq!(o.status.code(), Some(1), "{}", support::stderr(&o));
    assert!(
        support::stderr(&o).contains("missing points 1, 3, 5, 7"),
        "{}",
        support::stderr(&o)
    );
    let csv = std::fs::read_to_string(d.join("merged.csv")).unwrap();
    assert!(csv.contains("# incomplete: 4 of 8 points"), "{csv}");
    // Shard 1, then shard 0 again (it skips its finished points): the merge is the local bytes.
    sweep(&SMALL, &["--work-dir", &wds, "--shard", "1/2"]);
    let again = sweep(&SMALL, &["--work-dir", &wds, "--shard", "0/2"]);
    assert!(
        again.contains("4 points, 4 finished before, 0 run now"),
        "{again}"
    );
    let merged = sweep(&SMALL, &[&["--merge", &wds][..], &f[..]].concat());
    assert_eq!(merged, text);
    assert!(
        outputs(&d, "merged") == want,
        "merged outputs differ from the local run's"
    );
    // A work directory of another sweep is refused, naming what differs.
    support::exits_2_saying(
        &[
            "sweep",
            "--param",
            "loss_rate=0,0.001",
            "--work-dir",
            &wds,
            "--shard",
            "0/2",
        ],
        &["--work-dir", "holds another sweep"],
    );
    support::exits_2_saying(
        &["sweep", "--shard", "2/2", "--work-dir", &wds],
        &["--shard", "0 <= I < N"],
    );
    support::exits_2_saying(
        &["sweep", "--backend", "slurm"],
        &["--work-dir", "shared work directory"],
    );
    support::exits_2_saying(&["sweep", "--dry-run"], &["--dry-run", "--backend slurm"]);
}

fn slurm_up() -> bool {
    Command::new("sinfo")
        .arg("-h")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// Waits until `job` is no longer in the queue.
fn wait_gone(job: &str, limit: Duration) {
    let t = Instant::now();
    loop {
        let o = Command::new("squeue")
            .args(["-h", "-j", job])
            .output()
            .unwrap();
        if String::from_utf8_lossy(&o.stdout).trim().is_empty() {
            return;
        }
        assert!(
            t.elapsed() < limit,
            "job {job} still queued after {limit:?}"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// The job ids in `sweep --backend slurm`'s line: (array, merge).
fn job_ids(out: &str) -> (String, String) {
    let after = |w: &str| {
        out.split(w)
            .nth(1)
            .unwrap()
            .split_whitespace()
            .next()
            .unwrap()
            .to_string()
    };
    (after("array job "), after("merge job "))
}

#[test]
fn a_sweep_on_slurm_merges_to_the_local_bytes_and_a_killed_task_is_finished_by_resubmitting() {
    if !slurm_up() {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI: no Slurm answers (`sinfo`); .ci/run starts one with scripts/slurm-single-node.sh"
        );
        eprintln!(
            "skipped: no Slurm here (`sinfo` does not answer); scripts/slurm-single-node.sh starts one"
        );
        return;
    }
    // 60 points (ECN thresholds on roce-400g), so the killed task is still running when killed.
    let kmin: Vec<String> = (1..=20).map(|i| format!("{}K", 10 * i)).collect();
    let axis = format!("ecn_kmin={}", kmin.join(","));
    let sw = [
        "--param",
        &axis,
        "--param",
        "ecn_kmax=400K,800K,1600K",
        "--seeds",
        "1",
    ];
    let d = dir("real");
    let (text, want) = local(&d, &sw);
    let wd = d.join("work");
    let wds = wd.display().to_string();
    let flags = out_flags(&d, "slurm");
    let f: Vec<&str> = flags.iter().map(String::as_str).collect();
    let submit = [
        &sw[..],
        &["--backend", "slurm", "--work-dir", &wds, "--tasks", "2"],
        &f[..],
    ]
    .concat();
    let first = sweep(&submit, &[]);
    let (array, merge) = job_ids(&first);
    // Kill task 1 (the odd points) once it has written its first point.
    let odd_written = || {
        std::fs::read_dir(wd.join("points"))
            .map(|r| {
                r.flatten()
                    .filter(|e| {
                        e.file_name()
                            .to_string_lossy()
                            .trim_end_matches(".json")
                            .parse::<usize>()
                            .is_ok_and(|i| i % 2 == 1)
                    })
                    .count()
            })
            .unwrap_or(0)
    };
    support::wait_for("task 1's first point", Duration::from_secs(120), || {
        odd_written() > 0
    });
    let kill = Command::new("scancel")
        .arg(format!("{array}_1"))
        .status()
        .unwrap();
    assert!(kill.success());
    wait_gone(&array, Duration::from_secs(120));
    wait_gone(&merge, Duration::from_secs(120));
    let killed_at = odd_written();
    assert!(
        killed_at < 60,
        "task 1 finished before it was killed ({killed_at} points)"
    );
    let log = std::fs::read_to_string(wd.join("logs/merge.out")).unwrap();
    assert!(
        log.contains("incomplete") && log.contains("missing points"),
        "{log}"
    );
    // Submitted again: task 1 runs only what it had not finished; the merge is the local bytes.
    let second = sweep(&submit, &["--wait"]);
    assert!(second.contains("finished"), "{second}");
    let task1 = std::fs::read_to_string(wd.join("logs/task-1.out")).unwrap();
    assert!(
        task1.contains(&format!(
            "30 points, {killed_at} finished before, {} run now",
            30 - killed_at
        )),
        "{task1}"
    );
    assert_eq!(
        std::fs::read_to_string(wd.join("logs/merge.out")).unwrap(),
        text
    );
    assert!(
        outputs(&d, "slurm") == want,
        "the Slurm sweep's outputs differ from the local run's"
    );
}
