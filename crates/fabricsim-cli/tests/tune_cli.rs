//! `fabricsim tune`: it finds, by simulation, settings better than a deliberately poor
//! profile's; the best is re-measured over all the seeds; the same seed gives the same bytes
//! whatever the threads; the written profile runs under `--fabric FILE` to the figure tune
//! measured; a work directory resumes; bad `[tune]` input exits 2 naming file, line and key.

mod support;

use support::{examples, fabricsim, stdout_ok};

const POOR: &str = "examples/tune-roce-poor-ecn.toml";

/// Runs `tune POOR` with `extra` writing JSON, CSV and the profile under `name`; returns
/// (stdout, json, csv, profile) bytes.
fn tune(name: &str, extra: &[&str]) -> (String, Vec<u8>, Vec<u8>, Vec<u8>) {
    let p = |ext: &str| support::tmp(&format!("{name}.{ext}")).display().to_string();
    let (j, c, t) = (p("json"), p("csv"), p("profile.toml"));
    let args = [
        &["tune", POOR, "--json", &j, "--csv", &c, "--profile-out", &t][..],
        extra,
    ]
    .concat();
    let out = stdout_ok(&args);
    let read = |f: &str| std::fs::read(f).unwrap();
    (out, read(&j), read(&c), read(&t))
}

#[test]
fn tune_beats_a_poor_profile_by_simulation_and_remeasures_the_best_over_all_seeds() {
    let (text, json, _, profile) = tune("poor", &["--threads", "2"]);
    let r: serde_json::Value = serde_json::from_slice(&json).unwrap();
    assert_eq!(r["status"], "complete");
    let imp = &r["improvement"];
    assert_eq!(imp["intervals_overlap"], false, "{text}");
    assert!(imp["difference"]["lo"].as_f64().unwrap() > 0.0, "{text}");
    // The best is not the profile's own 5 KB / 10 KB.
    let s = &r["settings"];
    assert_ne!(s[0]["best"], s[0]["default"], "{text}");
    // Re-measured over every seed, as the default.
    let seeds = r["seeds"].as_u64().unwrap() as usize;
    assert!(seeds >= 2);
    assert_eq!(r["best"]["samples"].as_array().unwrap().len(), seeds);
    assert_eq!(r["default"]["samples"].as_array().unwrap().len(), seeds);
    // The earlier rounds ran fewer seeds (successive halving).
    assert_eq!(r["rounds"][0]["seeds"], 1);
    let profile = String::from_utf8(profile).unwrap();
    assert!(profile.contains("extends = \"roce-400g\"") && profile.contains("[congestion]"));
    assert!(text.contains("green_min_threshold"), "{text}");
}

#[test]
fn the_same_seed_gives_the_same_bytes_and_the_profile_runs_to_the_measured_figure() {
    let a = tune("det-a", &["--threads", "1"]);
    let b = tune("det-b", &["--threads", "2"]);
    assert!(a == b, "tune output differs between runs of the same seed");
    // The written profile under `sim --fabric FILE` with the first seed: the best's first sample.
    let file = support::tmp("det-a.profile.toml").display().to_string();
    let r: serde_json::Value = serde_json::from_slice(&a.1).unwrap();
    let want = r["best"]["samples"][0]["objective"].as_f64().unwrap();
    let sim = support::json_ok(&["sim", POOR, "--fabric", &file, "--seed", "1"]);
    let got = sim["summary"]["max_fct_ps"].as_f64().unwrap() / 1e6;
    assert_eq!(got, want, "the profile file does not run to tune's figure");
}

#[test]
fn a_work_directory_keeps_the_measurements_and_a_rerun_gives_the_same_report() {
    let d = support::tmp("work");
    let _ = std::fs::remove_dir_all(&d);
    let w = d.display().to_string();
    let first = tune("work-a", &["--work-dir", &w]);
    let samples = std::fs::read_dir(d.join("samples")).unwrap().count();
    assert!(samples > 0);
    // Half the measurements lost: the re-run makes them again, to the same bytes.
    let mut files: Vec<_> = std::fs::read_dir(d.join("samples"))
        .unwrap()
        .flatten()
        .collect();
    files.sort_by_key(|e| e.file_name());
    for f in files.iter().step_by(2) {
        std::fs::remove_file(f.path()).unwrap();
    }
    let second = tune("work-b", &["--work-dir", &w]);
    assert!(first == second);
    assert_eq!(
        std::fs::read_dir(d.join("samples")).unwrap().count(),
        samples
    );
    // Another search's directory is refused.
    support::exits_2_saying(
        &["tune", POOR, "--work-dir", &w, "--seed", "2"],
        &["--work-dir", "holds another search"],
    );
}

#[test]
fn bad_tune_input_exits_2_naming_file_line_key_and_value() {
    let base = std::fs::read_to_string(examples().join("tune-roce-poor-ecn.toml")).unwrap();
    let cases = [
        (
            "objective = \"fct_max\"",
            "objective = \"fastest\"",
            "tune.objective",
            "fastest",
        ),
        (
            "ecn_kmin_bytes = [5000,",
            "ecn_kmin_bytes = [0.5,",
            "tune.knobs.ecn_kmin_bytes",
            "0.5",
        ),
        (
            "ecn_kmin_bytes = [5000,",
            "ccti_timer_us = [5]\necn_kmin_bytes = [5000,",
            "tune.knobs.ccti_timer_us",
            "ccti_timer_us",
        ),
    ];
    for (i, (from, to, key, value)) in cases.into_iter().enumerate() {
        let text = base.replace(from, to).replace(
            "tune-roce-poor-ecn.profile.toml",
            &examples()
                .join("tune-roce-poor-ecn.profile.toml")
                .display()
                .to_string(),
        );
        assert_ne!(text, base);
        let line = text
            .lines()
            .position(|l| l.starts_with(to.lines().next().unwrap()))
            .unwrap()
            + 1;
        let f = support::write(&format!("bad-tune-{i}.toml"), &text);
        support::exits_2_saying(&["tune", &f], &[&format!("{f}:{line}"), key, value]);
    }
    // A network from a topology file has no profile to tune.
    let o = fabricsim(&["tune", "examples/roce-incast-dcqcn.toml"]);
    assert_eq!(o.status.code(), Some(2), "{}", support::stderr(&o));
    assert!(support::stderr(&o).contains("sim.topology_file"));
}

/// A search whose run would not fit `--max-memory` is refused before its first round (exit
/// 2), as `sim` refuses the run, not measured candidate after candidate.
#[test]
fn a_search_too_large_for_the_memory_is_refused_before_it_starts() {
    let o = fabricsim(&["tune", POOR, "--max-memory", "1KB"]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("max_memory") || err.contains("max-memory"),
        "{err}"
    );
    assert!(!String::from_utf8_lossy(&o.stdout).contains("round 1"));
}

/// The Slurm flags are checked as `sweep` checks them: `--tasks 0` is no array at all, and
/// `--tasks` or `--sbatch-arg` without `--backend slurm` would be ignored; each exits 2.
#[test]
fn slurm_flags_that_cannot_apply_exit_2() {
    for args in [
        &["--backend", "slurm", "--tasks", "0"][..],
        &["--tasks", "2"][..],
        &["--sbatch-arg", "--partition=cpu"][..],
    ] {
        let o = fabricsim(&[&["tune", POOR][..], args].concat());
        assert_eq!(o.status.code(), Some(2), "{args:?}");
    }
}

/// `[tune.collective]`: a search on an NCCL all-to-all, not a `[traffic]` run. The poor
/// profile's 5-10 KB ECN thresholds over-mark the all-to-all's queues; the search finds the
/// collective faster with the shipped thresholds, and its default's figure is the one
/// `fabricsim collective` gives the same size on the same seed.
#[test]
fn a_collective_is_tuned_and_measured_as_the_collective_command_measures_it() {
    let profile = examples().join("tune-roce-poor-ecn.profile.toml");
    let text = format!(
        "[cluster]\ngpus = 64\n[fabric]\nprofile = \"{}\"\n[topology]\nkind = \"fat-tree\"\n\
         tiers = 2\n[tune]\nmethod = \"grid\"\nseeds = 3\n[tune.collective]\nop = \"all_to_all\"\n\
         bytes = \"2M\"\n[tune.knobs]\necn_kmin_bytes = [5000, 150000]\n\
         ecn_kmax_bytes = [10000, 1500000]\n",
        profile.display()
    );
    let f = support::write("tune-collective.toml", &text);
    let j = support::tmp("tune-collective.json").display().to_string();
    let out = stdout_ok(&["tune", &f, "--json", &j]);
    let r = support::json_file(std::path::Path::new(&j));
    assert_eq!(r["objective"], "collective_time", "{out}");
    assert_eq!(r["improvement"]["intervals_overlap"], false, "{out}");
    assert!(
        r["improvement"]["difference"]["lo"].as_f64().unwrap() > 0.0,
        "{out}"
    );
    let best: Vec<_> = r["settings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["best"].as_f64().unwrap())
        .collect();
    assert_eq!(best, [150000.0, 1500000.0], "{out}");
    // The default's first sample against the collective command on the same cluster and seed.
    let c = support::json_ok(&[
        "collective",
        &f,
        "--op",
        "all_to_all",
        "--min-bytes",
        "2M",
        "--max-bytes",
        "2M",
        "--seeds",
        "1",
        "--format",
        "json",
    ]);
    let want = c["table"]["rows"][0]["time_us"]["mean"].as_f64().unwrap();
    let got = r["default"]["samples"][0]["objective"].as_f64().unwrap();
    assert!(
        (got - want).abs() < 1e-3,
        "tune {got} us, collective {want} us"
    );
    // An op the section cannot route is refused at its key.
    let bad = support::write(
        "tune-collective-bad.toml",
        &text.replace(
            "op = \"all_to_all\"",
            "op = \"all_reduce\"\nalgo = \"direct\"",
        ),
    );
    support::exits_2_saying(&["tune", &bad], &["tune.collective.algo", "direct", "ring"]);
}
