//! What every CLI test needs: run the built `fabricsim` from the repository root, scratch
//! files, and the check that bad input exits 2 naming what was wrong.
#![allow(dead_code)] // each test binary uses its own subset

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

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

/// Starts `fabricsim ARGS` from the repository root, standard output to `stdout_to` (else
/// nowhere) and standard error to `stderr_to`, with `FABRICSIM_PROGRESS=1` so its progress
/// lands in the file as on a terminal (the markers the signal tests wait for).
pub fn spawn_to(args: &[&str], stdout_to: Option<&Path>, stderr_to: &Path) -> Child {
    let stdout = match stdout_to {
        Some(p) => Stdio::from(std::fs::File::create(p).unwrap()),
        None => Stdio::null(),
    };
    Command::new(env!("CARGO_BIN_EXE_fabricsim"))
        .current_dir(root())
        .args(args)
        .env("FABRICSIM_PROGRESS", "1")
        .stdout(stdout)
        .stderr(std::fs::File::create(stderr_to).unwrap())
        .spawn()
        .unwrap()
}

/// [`spawn_to`] with standard output discarded.
pub fn spawn(args: &[&str], stderr_to: &Path) -> Child {
    spawn_to(args, None, stderr_to)
}

/// Waits (bounded) for `child` to exit; kills it and fails when it does not.
pub fn wait_bounded(child: &mut Child, limit: Duration) -> std::process::ExitStatus {
    let t0 = Instant::now();
    loop {
        if let Some(s) = child.try_wait().unwrap() {
            return s;
        }
        if t0.elapsed() > limit {
            let _ = child.kill();
            panic!("no exit within {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Polls `ready` every 20 ms until it holds (bounded).
pub fn wait_for(what: &str, limit: Duration, mut ready: impl FnMut() -> bool) {
    let t0 = Instant::now();
    while !ready() {
        assert!(t0.elapsed() < limit, "no {what} within {limit:?}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Sends `sig` (`-TERM`, `-INT`) to `child`.
pub fn signal(child: &Child, sig: &str) {
    let ok = Command::new("kill")
        .args([sig, &child.id().to_string()])
        .status()
        .unwrap();
    assert!(ok.success());
}

/// CPU seconds `child` has used (user + system, /proc/PID/stat fields 14 and 15 in clock
/// ticks of 1/100 s, Linux's USER_HZ): how far a run is, whatever the machine's load.
pub fn cpu_seconds(child: &Child) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{}/stat", child.id())).unwrap_or_default();
    // The command name (field 2) may hold spaces: count fields after its closing parenthesis.
    let rest = stat.rsplit_once(')').map_or("", |(_, r)| r);
    let f: Vec<u64> = rest
        .split_whitespace()
        .skip(11)
        .take(2)
        .map(|x| x.parse().unwrap_or(0))
        .collect();
    f.iter().sum::<u64>() as f64 / 100.0
}

/// Whether `child` has ended (a zombie not yet reaped, or gone): a wait for a marker stops
/// there, and the exit status then says what happened.
pub fn exited(child: &Child) -> bool {
    let stat = std::fs::read_to_string(format!("/proc/{}/stat", child.id())).unwrap_or_default();
    stat.rsplit_once(')')
        .is_none_or(|(_, r)| r.trim_start().starts_with(['Z', 'X']))
}

/// The peer scenarios of `fabricsim bench` (`FABRICSIM_PEER_DIR`, else ../shared/peer-scenarios
/// above the repository).
pub fn peer_dir() -> PathBuf {
    if let Ok(d) = std::env::var("FABRICSIM_PEER_DIR") {
        return d.into();
    }
    ["..", "../.."]
        .iter()
        .map(|up| root().join(up).join("shared/peer-scenarios"))
        .find(|d| d.is_dir())
        .expect("peer scenarios: set FABRICSIM_PEER_DIR (they live in ../shared/peer-scenarios)")
}

/// A page rendered in headless Chromium (Debian's `chromium`): its screenshot's size and its
/// DOM after load; panics on any console message in the browser log (the reports have no
/// script, so a console line, a CSP or parse error or a failed load, is a defect). `None`
/// without chromium, except in CI (CI=true), where .ci/run installs it and its absence fails.
pub fn chromium(html: &Path, name: &str) -> Option<(u64, String)> {
    let chromium = Path::new("/usr/bin/chromium");
    if !chromium.exists() {
        let ci = std::env::var("CI").map(|v| v == "true").unwrap_or(false);
        assert!(
            !ci,
            "CI=true but /usr/bin/chromium is missing (.ci/run installs it)"
        );
        eprintln!("skipped: /usr/bin/chromium not installed");
        return None;
    }
    let profile = tmp(&format!("chromium-profile-{name}"));
    let shot = tmp(&format!("{name}.png"));
    let _ = std::fs::remove_file(&shot);
    let url = format!("file://{}", html.display());
    let run = |extra: &[&str]| {
        Command::new(chromium)
            .args([
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-quic",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--enable-logging=stderr",
                "--v=0",
                &format!("--user-data-dir={}", profile.display()),
                "--window-size=1366,900",
            ])
            .args(extra)
            .arg(&url)
            .output()
            .expect("chromium runs")
    };
    let s = run(&[&format!("--screenshot={}", shot.display())]);
    assert!(s.status.success(), "{}", String::from_utf8_lossy(&s.stderr));
    let d = run(&["--dump-dom"]);
    assert!(d.status.success());
    // Console messages are logged as CONSOLE(line)] "..." by --enable-logging.
    for log in [&s.stderr, &d.stderr] {
        let log = String::from_utf8_lossy(log);
        let console: Vec<&str> = log.lines().filter(|l| l.contains("CONSOLE")).collect();
        assert!(console.is_empty(), "console messages: {console:#?}");
    }
    let size = std::fs::metadata(&shot).map(|m| m.len()).unwrap_or(0);
    Some((size, String::from_utf8_lossy(&d.stdout).into_owned()))
}
