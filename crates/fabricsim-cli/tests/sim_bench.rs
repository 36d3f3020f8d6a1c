//! `fabricsim bench` runs a peer scenario to completion and reports it; bad flags exit 2.

use std::path::PathBuf;
use std::process::Command;

fn peer_dir() -> PathBuf {
    if let Ok(d) = std::env::var("FABRICSIM_PEER_DIR") {
        return d.into();
    }
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    ["..", "../.."]
        .iter()
        .map(|up| root.join(up).join("shared/peer-scenarios"))
        .find(|d| d.is_dir())
        .expect("peer scenarios: set FABRICSIM_PEER_DIR (they live in ../shared/peer-scenarios)")
}

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
fn bench_rejects_unknown_cases_and_fabrics() {
    for args in [
        &["--only", "ft99"][..],
        &["--fabric", "token-ring"][..],
        &["--repeat", "0"][..],
    ] {
        let o = bench(args);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
    }
}
