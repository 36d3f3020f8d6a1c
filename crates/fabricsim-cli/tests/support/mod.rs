//! What every CLI test needs: run the built `fabricsim` from the repository root, scratch
//! files, and the check that bad input exits 2 naming what was wrong.
#![allow(dead_code)] // each test binary uses its own subset

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The repository root (examples/ and data/ live there).
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

pub fn examples() -> PathBuf {
    root().join("examples")
}

/// Runs `fabricsim ARGS` from the repository root.
pub fn fabricsim(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_fabricsim"))
        .current_dir(root())
        .args(args)
        .output()
        .expect("the fabricsim binary runs")
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Runs `fabricsim ARGS`, asserts it succeeded and returns its standard output.
pub fn stdout_ok(args: &[&str]) -> String {
    let o = fabricsim(args);
    assert!(o.status.success(), "{args:?}: {}", stderr(&o));
    String::from_utf8(o.stdout).expect("stdout is UTF-8")
}

/// Runs `fabricsim ARGS`, asserts it succeeded and parses its standard output as JSON.
pub fn json_ok(args: &[&str]) -> serde_json::Value {
    serde_json::from_str(&stdout_ok(args)).expect("stdout is JSON")
}

/// Reads a JSON file.
pub fn json_file(path: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// A scratch path, private to this test binary's process.
pub fn tmp(name: &str) -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("cli-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d.join(name)
}

/// Writes `text` to the scratch file `name` and returns its path as a string.
pub fn write(name: &str, text: &str) -> String {
    let p = tmp(name);
    std::fs::write(&p, text).unwrap();
    p.display().to_string()
}

/// Runs `fabricsim ARGS`, asserts it exited 2 (bad input) and that standard error says each of
/// `wants`; returns standard error.
pub fn exits_2_saying(args: &[&str], wants: &[&str]) -> String {
    let o = fabricsim(args);
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{args:?}: {e}");
    for want in wants {
        assert!(e.contains(want), "{args:?}: missing `{want}` in: {e}");
    }
    e
}
