//! `tune --backend slurm`: each round's measurements as a job array on a real Slurm
//! (`scripts/slurm-single-node.sh`, started by `.ci/run`), the report byte-identical to the
//! local search's; measurements lost from the work directory are run again by the next
//! submission; an array task run by hand (`--jobs FILE --shard I/N`) skips what is done.

mod support;

use std::path::{Path, PathBuf};
use std::process::Command;

use support::stdout_ok;

const POOR: &str = "examples/tune-roce-poor-ecn.toml";

fn dir(name: &str) -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("tune-slurm-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn slurm_up() -> bool {
    Command::new("sinfo")
        .arg("-h")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// (stdout, json) of `tune POOR EXTRA --json D/NAME.json`.
fn tune(d: &Path, name: &str, extra: &[&str]) -> (String, Vec<u8>) {
    let j = d.join(format!("{name}.json")).display().to_string();
    let out = stdout_ok(&[&["tune", POOR, "--json", &j][..], extra].concat());
    (out, std::fs::read(&j).unwrap())
}

#[test]
fn an_array_task_by_hand_runs_its_share_and_skips_what_is_done() {
    let d = dir("hand");
    let w = d.join("work").display().to_string();
    let local = tune(&d, "local", &["--work-dir", &w]);
    // A round's list, as the Slurm backend writes it: run again by hand, nothing is left to do.
    let list = d.join("jobs.json");
    let jobs = r#"[{"candidate":0,"seed_index":0},{"candidate":1,"seed_index":0},{"candidate":null,"seed_index":0}]"#;
    std::fs::write(&list, jobs).unwrap();
    let l = list.display().to_string();
    let out = stdout_ok(&[
        "tune",
        POOR,
        "--work-dir",
        &w,
        "--jobs",
        &l,
        "--shard",
        "0/2",
    ]);
    assert!(
        out.contains("shard 0/2: 2 measurements, 2 finished before, 0 run now"),
        "{out}"
    );
    assert_eq!(tune(&d, "again", &["--work-dir", &w]), local);
    support::exits_2_saying(
        &["tune", POOR, "--backend", "slurm"],
        &["--work-dir", "shared work directory"],
    );
}

#[test]
fn tune_on_slurm_reports_the_local_bytes_and_a_resubmission_finishes_lost_measurements() {
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
    let d = dir("real");
    let local = tune(&d, "local", &[]);
    let wd = d.join("work");
    let w = wd.display().to_string();
    let slurm = [
        "--backend",
        "slurm",
        "--work-dir",
        &w,
        "--tasks",
        "2",
        "--threads",
        "1",
    ];
    let first = tune(&d, "slurm", &slurm);
    assert_eq!(
        first, local,
        "the Slurm search's report differs from the local one's"
    );
    let log = std::fs::read_to_string(wd.join("logs/task-1.out")).unwrap();
    assert!(log.contains("shard 1/2"), "{log}");
    // Lose a third of the measurements: the next submission runs exactly those again.
    let mut files: Vec<_> = std::fs::read_dir(wd.join("samples"))
        .unwrap()
        .flatten()
        .collect();
    files.sort_by_key(|e| e.file_name());
    let lost = files.iter().step_by(3).count();
    for f in files.iter().step_by(3) {
        std::fs::remove_file(f.path()).unwrap();
    }
    let o = support::fabricsim(&[&["tune", POOR][..], &slurm].concat());
    assert!(o.status.success(), "{}", support::stderr(&o));
    let e = support::stderr(&o);
    assert!(e.contains("already done"), "{e}");
    assert_eq!(String::from_utf8(o.stdout).unwrap(), local.0);
    assert_eq!(
        std::fs::read_dir(wd.join("samples")).unwrap().count(),
        files.len()
    );
    assert!(lost > 0);
}
