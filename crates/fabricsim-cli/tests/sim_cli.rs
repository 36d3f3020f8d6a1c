//! `fabricsim sim` end to end: an example runs and writes the documented JSON keys and an ns-3
//! fct.txt; two runs give identical bytes (wall-clock fields aside); bad input exits 2 naming
//! file, line, key, value and what is allowed; unfinished runs exit 1 unless `--until` is given.

mod support;

use std::process::Output;
use support::{examples, exits_2_saying, json_file as json, tmp};

fn sim(args: &[&str]) -> Output {
    support::fabricsim(&[&["sim"], args].concat())
}

/// A scenario file in the scratch directory whose `[sim] topology_file` is the k=4 example
/// topology; `rest` follows the `topology_file` line.
fn on_ft4(name: &str, rest: &str) -> String {
    let topo = examples().join("sim-ft4.topo.txt");
    support::write(
        name,
        &format!("[sim]\ntopology_file = \"{}\"\n{rest}", topo.display()),
    )
}

#[test]
fn example_runs_and_writes_the_documented_keys() {
    let ex = examples().join("sim-permutation.toml");
    let out = tmp("perm.json");
    let fct = tmp("perm.fct.txt");
    let o = sim(&[
        ex.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--fct",
        fct.to_str().unwrap(),
        "--timing",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v = json(&out);
    for k in ["events", "wall_s", "events_per_s"] {
        assert!(v["sim"][k].is_number(), "sim.{k}");
    }
    for k in [
        "bytes_offered",
        "bytes_delivered",
        "retransmitted_packets",
        "timeouts",
        "naks",
        "ecn_marks",
        "pause_frames",
        "cnps",
    ] {
        assert!(v["counters"][k].is_u64(), "counters.{k}");
    }
    assert!(v["counters"]["drops"].is_object());
    for k in [
        "fct_p50_ps",
        "fct_p99_ps",
        "fct_p999_ps",
        "max_fct_ps",
        "messages_completed",
        "messages_total",
    ] {
        assert!(v["summary"][k].is_u64(), "summary.{k}");
    }
    let m = &v["messages"][0];
    for k in [
        "src",
        "dst",
        "bytes",
        "start_ps",
        "finish_ps",
        "fct_ps",
        "ideal_fct_ps",
    ] {
        assert!(m[k].is_u64(), "messages[0].{k}");
    }
    assert!(v["series"]["ports"][0]["queue_bytes"].is_array());
    // fct.txt: one line per flow, 8 fields, hex addresses as in ns-3 (11.X.Y.1).
    let text = std::fs::read_to_string(&fct).unwrap();
    assert_eq!(text.lines().count(), 16);
    for l in text.lines() {
        let f: Vec<&str> = l.split(' ').collect();
        assert_eq!(f.len(), 8, "{l}");
        assert!(f[0].starts_with("0b") && f[0].len() == 8, "{l}");
    }
}

#[test]
fn two_runs_give_identical_bytes() {
    let ex = examples().join("sim-incast-lossy.toml");
    let mut outs = Vec::new();
    for i in 0..2 {
        let (out, fct) = (tmp(&format!("det{i}.json")), tmp(&format!("det{i}.fct")));
        let o = sim(&[
            ex.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
            "--fct",
            fct.to_str().unwrap(),
        ]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        // Byte for byte: no wall-clock figure without --timing.
        outs.push((std::fs::read(&out).unwrap(), std::fs::read(&fct).unwrap()));
    }
    assert_eq!(outs[0], outs[1]);
}

#[test]
fn bad_scenario_input_exits_2_and_says_where_and_what() {
    let bad = on_ft4(
        "bad.toml",
        "\n[traffic]\nkind = \"permutaton\"\nbytes = \"1MB\"\n",
    );
    exits_2_saying(
        &["sim", &bad],
        &[
            "bad.toml:5",
            "traffic.kind",
            "permutaton",
            "permutation, incast, all_to_all, uniform, list, ns3",
        ],
    );
    // A malformed line in the ns-3 topology file names that file and line.
    let topo = support::write(
        "bad.topo.txt",
        "3 1 2\n2\n0 2 100Gbps 1000ns 0\n1 2 100Gbps fast 0\n",
    );
    let sc = support::write(
        "bad2.toml",
        &format!(
            "[sim]\ntopology_file = \"{topo}\"\n[traffic]\nkind = \"permutation\"\nbytes = 1000\n"
        ),
    );
    exits_2_saying(
        &["sim", &sc],
        &["bad.topo.txt:4", "link_delay", "fast", "1000ns"],
    );
    // A bad flag value.
    let ex = examples().join("sim-permutation.toml");
    exits_2_saying(
        &["sim", ex.to_str().unwrap(), "--until", "soon"],
        &["--until"],
    );
}

#[test]
fn unfinished_runs_fail_unless_stopped_on_request() {
    // Host 0's link dies for good: its QP exhausts its retries.
    let sc = on_ft4(
        "dead.toml",
        "timeout_exp = 2\nretry_count = 1\n[traffic]\nkind = \"permutation\"\nbytes = \"100KB\"\n[faults]\n[[faults.link]]\nlink = 0\ndown_at = \"1us\"\n",
    );
    let out = tmp("dead.json");
    let o = sim(&[&sc, "--out", out.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("did not complete"));
    assert_eq!(json(&out)["sim"]["status"], "unfinished");
    // Stopping at a time is not a failure; the results say they are partial.
    let o = sim(&[&sc, "--out", out.to_str().unwrap(), "--until", "3us"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(json(&out)["sim"]["partial"], true);
}

#[test]
fn a_scenario_without_a_topology_file_runs_on_its_designed_fabric() {
    let ex = examples().join("sim-ib-ndr-fat-tree.toml");
    let out = tmp("design.json");
    let o = sim(&[ex.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v = json(&out);
    // One permutation message per host of the 128-GPU fabric, all complete.
    assert_eq!(v["summary"]["messages_total"], 128);
    assert_eq!(v["summary"]["messages_completed"], 128);
    // The ib-ndr profile reached the engine: credit flow control, hence no drop.
    assert_eq!(v["flow_control"]["kind"], "credits");
    assert_eq!(v["counters"]["bytes_dropped"], 0);
    // Scenario flags reshape the network: a 64-GPU RoCE fabric, PFC from roce-400g.
    let o = sim(&[
        ex.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--gpus",
        "64",
        "--fabric",
        "roce-400g",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v = json(&out);
    assert_eq!(v["summary"]["messages_total"], 64);
    assert_eq!(v["flow_control"]["kind"], "pfc");
}

#[test]
fn a_topology_file_with_design_sections_or_an_unknown_routing_exits_2() {
    let sc = on_ft4(
        "conflict.toml",
        "[fabric]\nprofile = \"ib-ndr\"\n[traffic]\nkind = \"permutation\"\nbytes = 1000\n",
    );
    exits_2_saying(
        &["sim", &sc],
        &[
            "conflict.toml:3",
            "`fabric`",
            "[fabric]",
            "sim.topology_file",
            "[cluster]",
        ],
    );
    // The same conflict made by a flag names the flag.
    let ex = examples().join("sim-permutation.toml");
    exits_2_saying(&["sim", ex.to_str().unwrap(), "--gpus", "16"], &["--gpus"]);
    let sc = support::write(
        "routing.toml",
        "[cluster]\ngpus = 16\n[sim]\nrouting = \"valiant\"\n[traffic]\nkind = \"permutation\"\nbytes = 1000\n",
    );
    exits_2_saying(
        &["sim", &sc],
        &[
            "routing.toml:4",
            "sim.routing",
            "valiant",
            "ecmp, ecmp_dest_qp, dmodk, adaptive, spray",
        ],
    );
}

#[test]
fn the_global_reroute_ends_the_losses_of_a_link_failure() {
    // examples/sim-link-failure.toml: local repair after 20 us, global reroute after 60 us.
    let ex = examples().join("sim-link-failure.toml");
    let text = std::fs::read_to_string(&ex).unwrap().replace(
        "sim-ft4.topo.txt",
        examples().join("sim-ft4.topo.txt").to_str().unwrap(),
    );
    let off = support::write(
        "sim-link-failure-local-only.toml",
        &text.replace(
            "global_reroute_delay = \"60us\"",
            "global_reroute_delay = \"off\"",
        ),
    );
    let no_route = |scenario: &str, name: &str| {
        let out = tmp(name);
        let o = sim(&[scenario, "--out", out.to_str().unwrap()]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let v = json(&out);
        assert_eq!(v["sim"]["status"], "complete");
        v["counters"]["drops"]["no_route"].as_u64().unwrap()
    };
    // Until the link comes back (at 150 us, local repair at 170 us), switches away from it keep
    // sending into the aggregation switch that lost its way down; the global reroute stops
    // that at 110 us.
    let with_global = no_route(ex.to_str().unwrap(), "lf-global.json");
    let local_only = no_route(&off, "lf-local.json");
    assert!(
        with_global < local_only,
        "global {with_global} vs local only {local_only}"
    );
    // A bad recovery delay names its key, and the old single key is refused.
    for (line, want) in [
        ("local_repair_delay = \"fast\"", "faults.local_repair_delay"),
        ("reroute_delay = \"20us\"", "reroute_delay"),
    ] {
        let bad = support::write(
            "bad-reroute.toml",
            &text.replace("local_repair_delay = \"20us\"", line),
        );
        exits_2_saying(&["sim", &bad], &["bad-reroute.toml:21", want]);
    }
}

#[test]
fn engine_flow_runs_a_small_case_and_refuses_what_it_cannot_model() {
    let ex = examples().join("sim-ib-ndr-fat-tree.toml");
    let out = tmp("engine.json");
    let go = |extra: &[&str]| {
        let mut args = vec![ex.to_str().unwrap(), "--out", out.to_str().unwrap()];
        args.extend_from_slice(extra);
        let o = sim(&args);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        json(&out)
    };
    // auto: 64 x 1 MB is far below the flow threshold, so the packet engine runs.
    let auto = go(&["--gpus", "64"]);
    assert_eq!(auto["sim"]["engine"], "packet");
    let flow = go(&["--gpus", "64", "--engine", "flow"]);
    assert_eq!(flow["sim"]["engine"], "flow");
    assert_eq!(flow["sim"]["status"], "complete");
    assert_eq!(flow["summary"]["messages_completed"], 64);
    // Both engines deliver every byte; the fluid FCTs are not longer than the packet ones'
    // worst (no packet-level queueing or credit stalls in max-min rates).
    assert_eq!(
        flow["counters"]["bytes_delivered"],
        auto["counters"]["bytes_delivered"]
    );
    assert!(
        flow["summary"]["max_fct_ps"].as_u64().unwrap()
            <= auto["summary"]["max_fct_ps"].as_u64().unwrap()
    );
    // A link failing during the run is a packet-level transient: --engine flow is refused,
    // exit 2 (a link down from the start is routed around: `tests/flow_failed_link.rs`).
    let lf = examples().join("sim-link-failure.toml");
    exits_2_saying(
        &["sim", lf.to_str().unwrap(), "--engine", "flow"],
        &[
            "--engine",
            "flow",
            "link 16 going down during the run",
            "packet",
        ],
    );
}

/// Runs `examples/EXAMPLE` with `extra` flags, its results to the scratch file `NAME.json`;
/// it must succeed; returns the results.
fn run_example(example: &str, name: &str, extra: &[&str]) -> serde_json::Value {
    let ex = examples().join(example);
    let out = tmp(&format!("{name}.json"));
    let o = sim(&[
        &[ex.to_str().unwrap(), "--out", out.to_str().unwrap()],
        extra,
    ]
    .concat());
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    json(&out)
}

#[test]
fn an_ibnetdiscover_dump_is_a_topology_file() {
    // 4 hosts, each 1 MB to another at 4xNDR: every message completes, none faster than its
    // bytes at 400 Gb/s.
    let v = run_example("sim-ibnetdiscover.toml", "ibnet", &[]);
    assert_eq!(v["sim"]["status"], "complete");
    assert_eq!(v["counters"]["bytes_delivered"], 4_000_000);
    let p99 = v["summary"]["fct_p99_ps"].as_f64().unwrap();
    assert!(p99 > 20e6 && p99 < 30e6, "{p99} ps");
    // A dump whose link has no speed is refused naming its line.
    let bad = support::write(
        "ibnet-bad.toml",
        &format!(
            "[sim]\ntopology_file = \"{}\"\nfabric = \"ib\"\n[traffic]\nkind = \"permutation\"\nbytes = 1000\n",
            support::write(
                "bad.ibnet.txt",
                "Switch 8 \"S-x\"\n[1] \"H-y\"[1] # lid 3\n\nCa 1 \"H-y\"\n[1] \"S-x\"[1] # lid 3\n"
            )
        ),
    );
    exits_2_saying(&["sim", &bad], &["bad.ibnet.txt:2", "speed", "4xNDR"]);
}

#[test]
fn an_htsim_connection_matrix_is_traffic_with_its_triggers() {
    // Three ring hops over 8 hosts, each hop started by the receipt of the one before it, and
    // a 1000-byte connection behind a barrier on all eight third hops.
    let fct = tmp("htsim.fct.txt");
    let v = run_example(
        "sim-htsim-ring.toml",
        "htsim",
        &["--fct", fct.to_str().unwrap()],
    );
    assert_eq!(v["summary"]["messages_completed"], 25);
    // fct.txt: sip dip sport dport size start_ns fct_ns standalone_fct_ns.
    let rows: Vec<Vec<u64>> = std::fs::read_to_string(&fct)
        .unwrap()
        .lines()
        .map(|l| {
            l.split_whitespace()
                .skip(4)
                .map(|x| x.parse().unwrap())
                .collect()
        })
        .collect();
    let (barrier, hops): (Vec<_>, Vec<_>) = rows.iter().partition(|r| r[0] == 1000);
    let last_hop_end = hops.iter().map(|r| r[1] + r[2]).max().unwrap();
    assert!(
        barrier[0][1] >= last_hop_end,
        "{} < {last_hop_end}",
        barrier[0][1]
    );
    // The unit is the scenario's to say: without it the run is refused.
    let topo = examples().join("sim-ft4.topo.txt");
    let cm = examples().join("sim-htsim-ring.cm");
    let bad = support::write(
        "htsim-nounit.toml",
        &format!(
            "[sim]\ntopology_file = \"{}\"\n[traffic]\nkind = \"htsim\"\nflow_file = \"{}\"\n",
            topo.display(),
            cm.display()
        ),
    );
    exits_2_saying(&["sim", &bad], &["start_unit", "uet-htsim"]);
}

/// The Chakra example runs on both engines with the same messages; a truncated trace file is
/// refused with exit 2, naming the file and where it breaks.
#[test]
fn chakra_traces_run_on_both_engines_and_a_truncated_one_exits_2() {
    let ex = examples().join("chakra-allreduce.toml");
    let mut counts = Vec::new();
    for engine in ["packet", "flow"] {
        let out = support::stdout_ok(&["sim", ex.to_str().unwrap(), "--engine", engine]);
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert_eq!(v["sim"]["status"], "complete", "{engine}");
        counts.push(v["summary"]["messages_completed"].as_u64().unwrap());
    }
    assert_eq!(counts[0], counts[1]);
    // The same scenario and seed, the same bytes.
    let twice: Vec<String> = (0..2)
        .map(|_| support::stdout_ok(&["sim", ex.to_str().unwrap(), "--engine", "packet"]))
        .collect();
    assert_eq!(twice[0], twice[1]);
    let dir = support::tmp("chakra-bad");
    std::fs::create_dir_all(dir.join("chakra")).unwrap();
    std::fs::copy(&ex, dir.join("s.toml")).unwrap();
    for r in 0..16 {
        let name = format!("chakra/step.{r}.et");
        let mut b = std::fs::read(examples().join(&name)).unwrap();
        if r == 3 {
            b.truncate(100);
        }
        std::fs::write(dir.join(&name), b).unwrap();
    }
    let s = dir.join("s.toml");
    exits_2_saying(&["sim", s.to_str().unwrap()], &["step.3.et", "truncated"]);
}
