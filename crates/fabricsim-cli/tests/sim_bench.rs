//! `fabricsim bench` runs a peer scenario to completion and reports it; bad flags exit 2.

mod support;

use std::process::Command;
use support::peer_dir;

fn bench(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_fabricsim"))
        .arg("bench")
        .arg("--dir")
        .arg(peer_dir())
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn bench_runs_the_k8_permutation_to_completion() {
    let o = bench(&["--only", "ft8_perm128"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let out = String::from_utf8_lossy(&o.stdout);
    let row = out
        .lines()
        .find(|l| l.starts_with("ft8_perm128"))
        .expect("a row");
    assert!(row.trim_end().ends_with("128/128"), "{row}");
}

#[test]
fn bench_runs_the_incast_lossless_in_milliseconds_and_names_its_mechanisms() {
    let o = bench(&["--only", "ft8_incast128"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("flow control: PFC"), "{out}");
    let row = out
        .lines()
        .find(|l| l.starts_with("ft8_incast128"))
        .expect("a row");
    assert!(row.trim_end().ends_with("127/127"), "{row}");
    // 127 x 2 MB through one 100 Gb/s NIC port at 4096/4178 payload efficiency takes
    // 254 MB x 8 / 98.04 Gb/s = 20.7 ms; lossless, no timeouts add to it.
    let end_us: f64 = row.split_whitespace().nth(8).unwrap().parse().unwrap();
    assert!((20_700.0..22_000.0).contains(&end_us), "{row}");
}

#[test]
fn bench_rejects_unknown_cases_and_fabrics() {
    for args in [
        &["--only", "ft99"][..],
        &["--fabric", "token-ring"][..],
        &["--repeat", "0"][..],
        &["--mode", "lossier"][..],
    ] {
        let o = bench(args);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
    }
}
