//! Golden outputs of `fabricsim plan` for every scenario in examples/: the text report and the
//! JSON report are compared byte for byte with tests/golden/<name>.{txt,json}. Regenerate with
//! `UPDATE_GOLDEN=1 cargo test -p fabricsim-cli --test plan_golden` and read the diff.

mod support;

use std::path::{Path, PathBuf};
use support::root;

fn plan(args: &[&str]) -> String {
    support::stdout_ok(&[&["plan"], args].concat())
}

fn compare(golden: &Path, got: &str) {
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        std::fs::write(golden, got).unwrap();
        return;
    }
    let want = std::fs::read_to_string(golden).unwrap_or_else(|e| {
        panic!(
            "{}: {e} (run with UPDATE_GOLDEN=1 to create it)",
            golden.display()
        )
    });
    if want != got {
        let line = want
            .lines()
            .zip(got.lines())
            .position(|(a, b)| a != b)
            .unwrap_or(want.lines().count().min(got.lines().count()));
        panic!(
            "{} differs from the output at line {}:\n  want: {:?}\n  got:  {:?}",
            golden.display(),
            line + 1,
            want.lines().nth(line),
            got.lines().nth(line)
        );
    }
}

#[test]
fn example_scenarios_match_their_golden_outputs() {
    let mut examples: Vec<PathBuf> = std::fs::read_dir(root().join("examples"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        // Every example that describes a cluster is planned; workload-only examples are not.
        .filter(|p| std::fs::read_to_string(p).unwrap().contains("[cluster]"))
        .collect();
    examples.sort();
    assert!(examples.len() >= 4);
    let golden = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden");
    for ex in &examples {
        let stem = ex.file_stem().unwrap().to_str().unwrap();
        let rel = format!("examples/{stem}.toml");
        compare(&golden.join(format!("{stem}.txt")), &plan(&[&rel]));
        compare(
            &golden.join(format!("{stem}.json")),
            &plan(&[&rel, "--format", "json"]),
        );
    }
}

#[test]
fn the_no_file_default_matches_its_golden_output() {
    let golden = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden");
    compare(
        &golden.join("gpus-1024-roce-400g.txt"),
        &plan(&["--gpus", "1024", "--fabric", "roce-400g"]),
    );
}
