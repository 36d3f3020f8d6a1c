//! Issue 21's input failures, each refused with exit 2 naming the file, line and key (or the
//! flag) instead of hanging, wrapping or running with a meaningless value; and an idle span
//! that no longer costs an event per deadlock-check period.

mod support;

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
use support::{examples, exits_2_saying, json_ok, tmp, write};

/// `fabricsim ARGS` must end within `limit` (a FIFO read blocked forever before); its exit code
/// and standard error.
fn ends_within(args: &[&str], limit: Duration) -> (Option<i32>, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_fabricsim"))
        .current_dir(support::root())
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let t0 = Instant::now();
    loop {
        if let Some(st) = child.try_wait().unwrap() {
            let out = child.wait_with_output().unwrap();
            return (st.code(), String::from_utf8_lossy(&out.stderr).into_owned());
        }
        if t0.elapsed() > limit {
            child.kill().unwrap();
            child.wait().unwrap();
            panic!("{args:?} still running after {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn mkfifo(name: &str) -> String {
    let p = tmp(name);
    let _ = std::fs::remove_file(&p);
    assert!(Command::new("mkfifo").arg(&p).status().unwrap().success());
    p.display().to_string()
}

#[test]
fn a_fifo_or_a_directory_where_a_file_is_expected_exits_2_at_once() {
    let fifo = mkfifo("scenario-fifo.toml");
    let limit = Duration::from_secs(20);
    for cmd in ["plan", "sim", "train", "compare"] {
        let (code, e) = ends_within(&[cmd, &fifo], limit);
        assert_eq!(code, Some(2), "{cmd}: {e}");
        assert!(e.contains("FIFO") && e.contains("`scenario`"), "{cmd}: {e}");
    }
    let dir = tmp("").display().to_string();
    let (code, e) = ends_within(&["plan", &dir], limit);
    assert_eq!(code, Some(2), "{e}");
    assert!(e.contains("a directory"), "{e}");
    // A topology file named in the scenario: the error is at its key's line.
    let topo = mkfifo("topo-fifo.txt");
    let flows = examples().join("sim-ft4.flow.txt").display().to_string();
    let s = write(
        "fifo-topo.toml",
        &format!(
            "[sim]\ntopology_file = \"{topo}\"\nfabric = \"ib\"\n[traffic]\nkind = \"ns3\"\n\
             flow_file = \"{flows}\"\n"
        ),
    );
    let (code, e) = ends_within(&["sim", &s], limit);
    assert_eq!(code, Some(2), "{e}");
    assert!(
        e.contains(":2: `sim.topology_file`") && e.contains("FIFO"),
        "{e}"
    );
}

/// A scenario on examples/sim-ft4.topo.txt with the flow file `flows` and `extra` [sim] keys.
fn on_ft4(name: &str, flows: &str, extra: &str) -> String {
    let topo = examples().join("sim-ft4.topo.txt").display().to_string();
    let f = write(&format!("{name}.flow.txt"), flows);
    write(
        &format!("{name}.toml"),
        &format!(
            "[sim]\ntopology_file = \"{topo}\"\nfabric = \"ib\"\n{extra}[traffic]\nkind = \"ns3\"\n\
             flow_file = \"{f}\"\n"
        ),
    )
}

#[test]
fn start_times_sizes_and_until_past_their_bounds_exit_2() {
    let s = on_ft4("far", "2\n0 5 3 100 1000 2.0\n3 12 3 100 1000 1e7\n", "");
    exits_2_saying(
        &["sim", &s],
        &["far.flow.txt:3:", "`start_time_seconds`", "86400"],
    );
    let s = on_ft4("huge", "1\n0 5 3 100 18446744073709551615 2.0\n", "");
    exits_2_saying(
        &["sim", &s, "--engine", "flow"],
        &["huge.flow.txt:2:", "`size_bytes`", "2^50"],
    );
    let s = on_ft4("until", "1\n0 5 3 100 1000 2.0\n", "until = \"1e30s\"\n");
    exits_2_saying(&["sim", &s], &["until.toml:4:", "`sim.until`", "24 hours"]);
    let s = on_ft4("until-flag", "1\n0 5 3 100 1000 2.0\n", "");
    exits_2_saying(&["sim", &s, "--until", "1e30s"], &["--until", "24 hours"]);
}

#[test]
fn an_idle_span_costs_no_event_per_deadlock_check() {
    // Two flows 100 s apart on IB credits (a deadlock check every 100 us): 10^6 checks before.
    let s = on_ft4(
        "idle",
        "2\n0 5 3 100 500000 2.0\n3 12 3 100 100000 102.0\n",
        "",
    );
    let j = json_ok(&["sim", &s]);
    let events = j["sim"]["events"].as_u64().expect("an events count");
    assert!(events < 20_000, "{events} events");
    assert_eq!(j["messages"][1]["fct_ps"], j["messages"][1]["ideal_fct_ps"]);
}

#[test]
fn zero_buffers_zero_threads_and_bad_weights_exit_2_at_their_key() {
    let s = on_ft4("sb0", "1\n0 5 3 100 1000 2.0\n", "switch_buffer = \"0B\"\n");
    exits_2_saying(&["sim", &s], &["sb0.toml:4:", "`sim.switch_buffer`"]);
    exits_2_saying(
        &["sweep", "--param", "loss_rate=0,0.001", "--threads", "0"],
        &["--threads"],
    );
    for (w, key) in [
        ("performance = nan", "compare.weights.performance"),
        ("cost = -1.0", "compare.weights.cost"),
        ("performance = 0.0\ncost = 0.0", "compare.weights"),
    ] {
        let s = write("weights.toml", &format!("[compare.weights]\n{w}\n"));
        let e = exits_2_saying(&["compare", &s], &[&format!("`{key}`")]);
        assert!(
            e.contains("weights.toml:2:") || e.contains("weights.toml:1:"),
            "{e}"
        );
    }
}

#[test]
fn a_profile_with_an_infinite_alpha_exits_2_at_its_line() {
    let text =
        std::fs::read_to_string(support::root().join("data/profiles/roce-400g.toml")).unwrap();
    let bad = text.replace("xoff_alpha = 0.125", "xoff_alpha = inf");
    assert_ne!(bad, text);
    let line = bad
        .lines()
        .position(|l| l.starts_with("xoff_alpha"))
        .unwrap()
        + 1;
    let prof = write("inf-alpha.toml", &bad);
    let s = write(
        "uses-inf.toml",
        &format!("[fabric]\nprofile = \"{prof}\"\n"),
    );
    exits_2_saying(
        &["plan", &s],
        &[
            &format!("inf-alpha.toml:{line}:"),
            "`flow_control.xoff_alpha`",
            "inf",
        ],
    );
}

#[test]
fn a_run_too_large_for_the_memory_is_refused_before_it_starts() {
    // 4,096 GPUs all-to-all on the flow engine at a size that does not divide evenly over the
    // channels and ranks (so it runs per message, not as flow classes: `flow::dense`): with
    // NCCL's one channel per peer at this group size, 16.8 M messages, about 6.5 GB estimated,
    // over a 4 GB bound. Such a run grew to 24 GB and was killed after 4 minutes before, and
    // was refused only once its DAG was built (25 s, 8.5 GB). From the collective's shape it
    // is refused before any DAG exists.
    let t0 = Instant::now();
    let e = exits_2_saying(
        &[
            "collective",
            "--op",
            "all_to_all",
            "--gpus",
            "4096",
            "--fabric",
            "roce-400g",
            "--engine",
            "flow",
            "--min-bytes",
            "1000000",
            "--max-bytes",
            "1000000",
            "--max-memory",
            "4GB",
        ],
        &[
            "--max-memory",
            "16773120 messages at 390 B",
            "estimated 6.55GB",
            "at most 10234901 messages within 4.00GB",
            "3192 GPUs (399 servers)",
        ],
    );
    assert!(
        t0.elapsed() < Duration::from_secs(10),
        "{:?}: {e}",
        t0.elapsed()
    );
    // `sim` counts generated traffic before building it; `train --step-model flow_dag` its
    // step's DAG (Llama 3 70B on 1,024 GPUs: 233,472 messages in the first pass).
    let a2a = write(
        "a2a.toml",
        "[cluster]\ngpus = 4096\n[fabric]\nprofile = \"roce-400g\"\n\
         [traffic]\nkind = \"all_to_all\"\nbytes = \"64KB\"\n",
    );
    exits_2_saying(
        &["sim", &a2a, "--max-memory", "1GB"],
        &["`--max-memory`", "16773120 messages", "fewer hosts"],
    );
    exits_2_saying(
        &[
            "train",
            "examples/train-llama3-70b.toml",
            "--step-model",
            "flow_dag",
            "--max-memory",
            "50MB",
        ],
        &["`--max-memory`", "233472 messages", "micro-batches"],
    );
    assert!(
        t0.elapsed() < Duration::from_secs(30),
        "{:?}: {e}",
        t0.elapsed()
    );
    // The scenario key and the flag bound a sim run the same way.
    let s = on_ft4("mem", "2\n0 5 3 100 1000 2.0\n3 12 3 100 1000 2.0\n", "");
    exits_2_saying(
        &["sim", &s, "--max-memory", "1MB"],
        &["`--max-memory`", "2 messages"],
    );
    let text = std::fs::read_to_string(&s).unwrap();
    let s = write("mem-key.toml", &format!("max_memory = \"1MB\"\n{text}"));
    exits_2_saying(&["sim", &s], &["mem-key.toml:1: `max_memory`"]);
}
