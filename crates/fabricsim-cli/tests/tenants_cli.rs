//! `fabricsim tenants`: several jobs on one fabric, on both engines. The fabric is a small
//! two-tier fat-tree of 4-port switches (a user catalog): 4 leaves of 2 one-GPU servers,
//! 2 uplinks per leaf at 1:1 and 1 at 2:1, so which links two jobs share is known exactly.

mod support;

/// A 4-port 400G InfiniBand switch and a one-GPU server, for fabrics small enough to reason
/// about link by link (test parts, not products: prices are placeholders).
const CATALOG: &str = r#"
[[switch]]
id = "tiny"
name = "a 4-port InfiniBand switch for tests"
family = "infiniband"
cages = 4
modes = [{ port_gbps = 400, ports = 4 }]
latency_ns = 130
buffer_mb = 16
power_w = 100
rack_units = 1
price_usd = 1000

[[server]]
id = "h100-1"
name = "one H100 with one NIC, for tests"
gpu = "h100"
gpus = 1
power_w = 1300
price_usd = 40000
includes_nics = true
pcie_gen = 5
pcie_lanes_per_nic = 16
nic_slots = 1
"#;

/// The cluster: 8 one-GPU servers on `oversubscription` leaves.
fn cluster(oversubscription: &str) -> String {
    // Written once: the tests run in parallel and read it.
    static WRITTEN: std::sync::Once = std::sync::Once::new();
    WRITTEN.call_once(|| {
        support::write("tiny.toml", CATALOG);
    });
    format!(
        "catalog = \"tiny.toml\"\nseeds = 1\n[cluster]\ngpus = 8\ngpus_per_node = 1\n\
         nics_per_node = 1\n[fabric]\nprofile = \"ib-ndr\"\n[topology]\nkind = \"fat-tree\"\n\
         switch = \"tiny\"\noversubscription = \"{oversubscription}\"\n"
    )
}

/// Two identical all-reduce loops of `gpus` GPUs each, placed by `placement`.
fn two_loops(oversubscription: &str, gpus: u32, placement: &str, bytes: &str) -> String {
    let mut s = cluster(oversubscription);
    for name in ["a", "b"] {
        s += &format!(
            "\n[[jobs]]\nname = \"{name}\"\ngpus = {gpus}\nplacement = \"{placement}\"\n\
             [jobs.collective]\nop = \"all_reduce\"\nbytes = \"{bytes}\"\niterations = 2\n"
        );
    }
    s
}

fn run_json(file: &str, engine: &str) -> serde_json::Value {
    support::json_ok(&["tenants", file, "--engine", engine, "--format", "json"])
}

fn slowdowns(v: &serde_json::Value) -> Vec<f64> {
    v["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| j["slowdown"]["mean"].as_f64().unwrap())
        .collect()
}

/// Packed, each job takes two whole leaves (servers 0-3 and 4-7) and its ring crosses the
/// spines; the leaves' uplinks and the spines' downlinks to them are each one job's, so no link
/// carries both jobs: on both engines (deterministic, nothing shared) the time together is the
/// time alone. The tolerance, 1e-9, only absorbs float printing: any shared queue, credit or
/// pause would change the time by whole packet times (~10 ns in ~270 us, 4e-5).
#[test]
fn identical_jobs_on_disjoint_halves_of_a_non_blocking_fabric_do_not_slow_each_other() {
    let f = support::write("disjoint.toml", &two_loops("1:1", 4, "packed", "4MB"));
    for engine in ["packet", "flow"] {
        let v = run_json(&f, engine);
        assert_eq!(v["engine"], engine);
        let jobs = v["jobs"].as_array().unwrap();
        assert_eq!(jobs[0]["leaves"], serde_json::json!([0, 1]), "{engine}");
        assert_eq!(jobs[1]["leaves"], serde_json::json!([2, 3]), "{engine}");
        for s in slowdowns(&v) {
            assert!((s - 1.0).abs() < 1e-9, "{engine}: slowdown {s}");
        }
        assert!(jobs[0]["alone_s"]["mean"].as_f64().unwrap() > 1e-4);
    }
}

/// Spread, job a takes servers 0 and 2, job b 1 and 3: leaf 0 holds one server of each and
/// has one uplink at 2:1, as does leaf 1. Each 2-rank ring all-reduce sends 8 MB each way per
/// step (2 steps per all-reduce, reduce-scatter and all-gather, 16 MB each), over that uplink
/// and the spine's downlink to the other leaf. Alone a job has the 400G link to itself;
/// together both jobs cross the same links at once and the max-min share gives each half
/// (credit round-robin per VL on the packet engine, progressive filling on the flow
/// engine), so the network time doubles: T_together = L + 2 S/R against T_alone = L + S/R,
/// a ratio of 2 - L/T_alone. L (per-message latency, 4 messages per loop, a few us on 3 hops)
/// is under 1.5% of T_alone (~650 us), so the ratio lies in [1.97, 2.01] (2.01: the packet
/// engine's arbitration may leave one job a packet behind at the end).
#[test]
fn two_jobs_on_a_shared_2_to_1_leaf_each_get_half_the_uplink() {
    let f = support::write("shared.toml", &two_loops("2:1", 2, "spread", "16MB"));
    for engine in ["packet", "flow"] {
        let v = run_json(&f, engine);
        let jobs = v["jobs"].as_array().unwrap();
        assert_eq!(jobs[0]["servers"], serde_json::json!([0, 2]), "{engine}");
        assert_eq!(jobs[1]["servers"], serde_json::json!([1, 3]), "{engine}");
        for s in slowdowns(&v) {
            assert!((1.97..=2.01).contains(&s), "{engine}: slowdown {s}");
        }
        // The matrix of two jobs is the together run.
        let m = v["matrix"][0][1]["mean"].as_f64().unwrap();
        assert_eq!(m, jobs[0]["slowdown"]["mean"].as_f64().unwrap());
        assert!(v["matrix"][0][0].is_null());
    }
    // Packed on the same 2:1 fabric, each job sits on its own leaf: nothing shared.
    let p = support::write("packed21.toml", &two_loops("2:1", 2, "packed", "16MB"));
    for s in slowdowns(&run_json(&p, "flow")) {
        assert!((s - 1.0).abs() < 1e-9, "packed: {s}");
    }
}

/// A training job and a collective loop with random placements over 2 seeds, and the
/// training job's data loading and checkpoint to a storage server: the same bytes in every
/// format on every run, and the storage figures from the model's state.
#[test]
fn a_training_job_beside_a_loop_with_storage_is_deterministic_in_every_format() {
    let mut s = cluster("2:1").replace("seeds = 1", "seeds = 2");
    s += "\n[storage]\nservers = 1\n\n[[jobs]]\nname = \"llm\"\ngpus = 4\nplacement = \"random\"\n\
          [jobs.train]\nlayers = 4\nhidden = 1024\nffn = 4096\nheads = 8\nvocab = 32000\n\
          seq = 1024\nglobal_batch = 16\npp = 2\n[jobs.storage]\ndata_per_gpu = \"16MB\"\n\
          checkpoint_every = 50\n\n[[jobs]]\nname = \"bulk\"\ngpus = 3\nplacement = \"random\"\n\
          [jobs.collective]\nop = \"all_reduce\"\nbytes = \"8MB\"\n";
    let f = support::write("mixed.toml", &s);
    for format in ["text", "json", "csv"] {
        let args = [
            "tenants",
            f.as_str(),
            "--engine",
            "flow",
            "--format",
            format,
        ];
        assert_eq!(
            support::stdout_ok(&args),
            support::stdout_ok(&args),
            "{format}"
        );
    }
    let v = run_json(&f, "flow");
    assert_eq!(v["seeds"].as_array().unwrap().len(), 2);
    let st = &v["storage"][0];
    assert_eq!(st["job"], "llm");
    assert_eq!(st["data_bytes_per_step"], 4 * 16_000_000);
    // 14 B of state per parameter, the model written once: within 1% of 14 x its parameters
    // (the layer norms are the rest)
    // (the embedding and output tables are held by the first and last stage).
    let params =
        4.0 * (4.0 * 1024.0 * 1024.0 + 2.0 * 1024.0 * 4096.0 * 1.5) + 2.0 * 32000.0 * 1024.0;
    let ckpt = st["checkpoint_bytes"].as_f64().unwrap();
    assert!(
        (ckpt / (14.0 * params) - 1.0).abs() < 0.01,
        "{ckpt} vs {params} parameters"
    );
    // The checkpoint leaves through the storage server's one 400G port: at least bytes/rate.
    let write = st["checkpoint_write_s"]["mean"].as_f64().unwrap();
    assert!(write >= ckpt / 50e9, "{write}");
    assert!(
        st["checkpoint_step_s"]["mean"].as_f64().unwrap() >= st["step_s"]["mean"].as_f64().unwrap()
    );
    // On a separate storage network nothing of it is on the fabric: the step is unchanged.
    let sep = support::write(
        "separate.toml",
        &s.replace("servers = 1\n", "servers = 1\nfabric = \"separate\"\n"),
    );
    let v = run_json(&sep, "flow");
    let st = &v["storage"][0];
    assert_eq!(st["fabric"], "separate");
    assert_eq!(st["step_s"], st["checkpoint_step_s"]);
    assert_eq!(st["amortized_slowdown"]["mean"], 1.0);
    let csv = support::stdout_ok(&["tenants", f.as_str(), "--engine", "flow", "--format", "csv"]);
    assert!(csv.starts_with("job,kind,gpus,placement"), "{csv}");
    assert_eq!(csv.lines().count(), 1 + 2 + 2);
}

#[test]
fn bad_jobs_exit_2_naming_the_file_line_and_key() {
    let base = two_loops("1:1", 4, "packed", "4MB");
    let cases = [
        (
            base.replacen("\"packed\"", "\"scattered\"", 1),
            "jobs[0].placement",
            "packed, spread, random",
        ),
        (
            base.replacen("gpus = 4", "gpus = 6", 2),
            "jobs[1].gpus",
            "left free",
        ),
        (
            base.replacen("\"all_reduce\"", "\"all_sum\"", 1),
            "jobs[0].collective.op",
            "all_reduce",
        ),
        (
            base.replace("[cluster]", "[storage]\nservers = 9\n[cluster]"),
            "storage.servers",
            "1 to 7",
        ),
        (cluster("1:1"), "jobs", "[[jobs]]"),
        // roce-400g's two classes, no [classes] table: label 5 has no class.
        (
            base.replacen("[[jobs]]\n", "[[jobs]]\nclass = 5\n", 1),
            "jobs[0].class",
            "sl_to_vl or priority_to_tc",
        ),
    ];
    for (i, (text, key, allowed)) in cases.iter().enumerate() {
        let f = support::write(&format!("bad{i}.toml"), text);
        let o = support::fabricsim(&["tenants", &f]);
        let err = support::stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{key}: {err}");
        assert!(
            err.contains(&format!("bad{i}.toml")) && err.contains(key),
            "{err}"
        );
        assert!(err.contains(allowed), "{err}");
    }
    // A training job's [train] keys are checked as [train]'s are, against its own entry.
    let t = cluster("1:1")
        + "\n[[jobs]]\ngpus = 4\n[jobs.train]\nlayers = 4\nhidden = 1024\n\
                             ffn = 4096\nheads = 8\nvocab = 32000\nseq = 1024\nglobal_batch = 16\nrecompute = \"partial\"\n";
    let f = support::write("badtrain.toml", &t);
    let o = support::fabricsim(&["tenants", &f]);
    let err = support::stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("badtrain.toml:") && err.contains("jobs[0].train.recompute"),
        "{err}"
    );
}

/// Three jobs: a and b spread over leaves 0 and 1 (sharing their 2:1 uplinks, as above), c
/// packed on leaf 2. The pair runs fill the matrix: a with b is the halved share (~2), a with
/// c and c with either is exactly 1 (no link in common).
#[test]
fn the_slowdown_matrix_of_three_jobs_comes_from_the_pair_runs() {
    let mut s = two_loops("2:1", 2, "spread", "16MB");
    s += "\n[[jobs]]\nname = \"c\"\ngpus = 2\nplacement = \"packed\"\n[jobs.collective]\n\
          op = \"all_reduce\"\nbytes = \"16MB\"\niterations = 2\n";
    let f = support::write("three.toml", &s);
    let v = run_json(&f, "flow");
    assert_eq!(v["jobs"][2]["servers"], serde_json::json!([4, 5]));
    let m = |i: usize, j: usize| v["matrix"][i][j]["mean"].as_f64().unwrap();
    assert!((1.97..=2.01).contains(&m(0, 1)) && (1.97..=2.01).contains(&m(1, 0)));
    for (i, j) in [(0, 2), (1, 2), (2, 0), (2, 1)] {
        assert!((m(i, j) - 1.0).abs() < 1e-9, "{i} with {j}: {}", m(i, j));
    }
    assert_eq!(v["jobs"][0]["slowdown"]["mean"].as_f64().unwrap(), m(0, 1));
}

/// `compare` on a scenario with `[[jobs]]` adds the per-job slowdown section to its text, JSON
/// and HTML reports, with the figures `tenants` gives on the same fabric.
#[test]
fn compare_reports_each_jobs_slowdown_per_fabric() {
    let s = two_loops("2:1", 2, "spread", "16MB").replacen(
        "\n[[jobs]]",
        "\n[train]\nlayers = 4\nhidden = 1024\nffn = 4096\nheads = 8\nvocab = 32000\nseq = 1024\n\
         global_batch = 16\n[compare]\nfabric_runs = false\nclaims = \"off\"\nseeds = 1\n\
         fabrics = [ { profile = \"ib-ndr\" } ]\n\n[[jobs]]",
        1,
    );
    let f = support::write("compare-tenants.toml", &s);
    let html = support::tmp("compare-tenants.html").display().to_string();
    let v = support::json_ok(&["compare", &f, "--format", "json", "--html", &html]);
    let t = &v["tenants"][0];
    assert_eq!(t["fabric"], "ib-ndr");
    let alone = run_json(&f, "auto");
    assert_eq!(t["jobs"], alone["jobs"]);
    let s0 = t["jobs"][0]["slowdown"]["mean"].as_f64().unwrap();
    assert!((1.97..=2.01).contains(&s0), "{s0}");
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(
        page.contains("<section id=\"tenants\">"),
        "no tenants section"
    );
    let text = support::stdout_ok(&["compare", &f]);
    assert!(text.contains("Tenants ([[jobs]] on each fabric"), "{text}");
}

/// The shared 2:1 leaf of the test above with the jobs in different traffic classes (`[classes]`
/// on IB: VL 1 in VL arbitration's high table, VL 2 in the low one, no high-priority limit):
/// job `a` keeps its time alone, within 1% (a VL 2 packet already on the wire delays a VL 1
/// one by at most one MTU per hop, ~10 ns against ~650 us), while job `b` waits on `a` and ends
/// when both jobs end in one shared class (~1.99, the test above): the link stays busy, so
/// isolation reorders the bytes and adds no capacity. Both engines.
#[test]
fn jobs_in_separate_traffic_classes_keep_the_high_one_at_its_time_alone() {
    let mut s = two_loops("2:1", 2, "spread", "16MB");
    s = s.replacen(
        "[[jobs]]\nname = \"a\"\n",
        "[[jobs]]\nname = \"a\"\nclass = 1\n",
        1,
    );
    s = s.replacen(
        "[[jobs]]\nname = \"b\"\n",
        "[[jobs]]\nname = \"b\"\nclass = 2\n",
        1,
    );
    s += "\n[classes]\ncount = 3\nscheduling = \"vl_arbitration\"\nhigh_weights_64b = [4, 4, 0]\n\
          low_weights_64b = [0, 0, 4]\nhigh_limit_4kb = 255\n";
    let f = support::write("classes.toml", &s);
    for engine in ["packet", "flow"] {
        let v = run_json(&f, engine);
        let d = slowdowns(&v);
        assert!(d[0] < 1.01, "{engine}: the high class slowed by {}", d[0]);
        assert!(
            (1.97..=2.01).contains(&d[1]),
            "{engine}: the low class slowed by {}",
            d[1]
        );
    }
}

/// A serving deployment (Llama 3 8B, one prefill and one decode GPU) beside a small training
/// job, requests arriving through the training step. Spread on 2:1 leaves, each job has a
/// server on leaf 0 and one on leaf 1, so the KV-cache transfers and the training job's
/// gradient all-reduce cross the same single uplink: both are slowed (the engine's max-min
/// share while they overlap). Packed on 1:1 leaves each job sits on its own leaf and nothing
/// is shared: alone and together are the same to float printing, TTFT and TPOT included.
#[test]
fn a_serving_job_and_a_training_job_slow_each_other_only_on_a_shared_leaf() {
    let trace: String = (0..12)
        .map(|i| format!("{:.3},512,4\n", i as f64 * 0.006))
        .collect();
    let t = support::write("tenants-serve-trace.csv", &trace);
    let scenario = |over: &str, placement: &str| {
        let mut s = cluster(over);
        s += &format!(
            "\n[[jobs]]\nname = \"chat\"\ngpus = 2\nplacement = \"{placement}\"\n[jobs.serve]\n\
             model = \"llama3-8b\"\nprefill_tp = 1\ndecode_tp = 1\ntrace = \"{t}\"\n\n\
             [[jobs]]\nname = \"llm\"\ngpus = 2\nplacement = \"{placement}\"\n[jobs.train]\n\
             layers = 4\nhidden = 1024\nffn = 4096\nheads = 8\nvocab = 32000\nseq = 1024\n\
             global_batch = 64\n"
        );
        s
    };
    let figures = |v: &serde_json::Value| -> Vec<(f64, f64)> {
        v["serving"][0]["figures"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| {
                let m = |k: &str| f[k]["mean"].as_f64().unwrap();
                (m("alone_s"), m("together_s"))
            })
            .collect()
    };
    let shared = run_json(
        &support::write("serve-shared.toml", &scenario("2:1", "spread")),
        "flow",
    );
    let jobs = shared["jobs"].as_array().unwrap();
    assert_eq!(jobs[0]["kind"], "serve");
    assert_eq!(jobs[0]["servers"], serde_json::json!([0, 2]));
    assert_eq!(jobs[1]["servers"], serde_json::json!([1, 3]));
    let train = jobs[1]["slowdown"]["mean"].as_f64().unwrap();
    assert!(
        train > 1.005,
        "the training step is slowed by the KV transfers: {train}"
    );
    let f = figures(&shared);
    let names: Vec<&str> = shared["serving"][0]["figures"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["name"].as_str().unwrap())
        .collect();
    let kv = f[names.iter().position(|&n| n == "kv_transfer_p99").unwrap()];
    assert!(kv.1 > 1.2 * kv.0, "the KV transfers are slowed: {kv:?}");
    let isolated = run_json(
        &support::write("serve-iso.toml", &scenario("1:1", "packed")),
        "flow",
    );
    let jobs = isolated["jobs"].as_array().unwrap();
    assert_eq!(jobs[0]["leaves"], serde_json::json!([0]));
    assert_eq!(jobs[1]["leaves"], serde_json::json!([1]));
    for j in jobs {
        let s = j["slowdown"]["mean"].as_f64().unwrap();
        assert!((s - 1.0).abs() < 1e-9, "isolated: slowdown {s}");
    }
    for (alone, together) in figures(&isolated) {
        assert!(
            (together / alone - 1.0).abs() < 1e-9,
            "isolated: {alone} {together}"
        );
    }
}

/// A `[jobs.serve]` key is checked as `[serve]`'s, named by the job's key.
#[test]
fn a_serving_job_s_bad_key_names_the_job() {
    let mut s = cluster("1:1");
    s += "\n[[jobs]]\ngpus = 2\n[jobs.serve]\nprefill_tp = 1\ndecode_tp = 4\n";
    let f = support::write("serve-bad.toml", &s);
    let o = support::fabricsim(&["tenants", &f]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("`jobs[0].serve."), "{err}");
    assert!(err.contains("jobs[0].gpus"), "{err}");
}

/// The compare report's Tenants section for a serving job, a training job and a collective
/// loop, rendered in headless Chromium (`support::chromium`: skipped without chromium but in
/// CI): the section and a row per job with its kind are in the DOM after load, and the browser
/// logs no console message.
#[test]
fn the_tenants_html_report_renders_in_headless_chromium() {
    let t = support::write("tenants-html-trace.csv", "0,512,4\n0.01,512,4\n");
    let s = two_loops("2:1", 2, "spread", "16MB")
        .replacen(
            "\n[[jobs]]",
            "\n[train]\nlayers = 4\nhidden = 1024\nffn = 4096\nheads = 8\nvocab = 32000\n\
             seq = 1024\nglobal_batch = 16\n[compare]\nfabric_runs = false\nclaims = \"off\"\n\
             seeds = 1\nfabrics = [ { profile = \"ib-ndr\" } ]\n\n[[jobs]]",
            1,
        )
        .replacen(
            "[jobs.collective]\nop = \"all_reduce\"\nbytes = \"16MB\"\niterations = 2\n",
            &format!(
                "[jobs.serve]\nmodel = \"llama3-8b\"\nprefill_tp = 1\ndecode_tp = 1\n\
                 trace = \"{t}\"\n"
            ),
            1,
        );
    let f = support::write("tenants-html.toml", &s);
    let html = support::tmp("tenants-report.html");
    let o = support::fabricsim(&["compare", &f, "--html", html.to_str().unwrap()]);
    assert!(o.status.success(), "{}", support::stderr(&o));
    let Some((shot, dom)) = support::chromium(&html, "tenants-report") else {
        return;
    };
    assert!(shot > 10_000, "no screenshot");
    let start = dom
        .find("<section id=\"tenants\">")
        .expect("a tenants section");
    let end = start + dom[start..].find("</section>").expect("the section ends");
    let section = &dom[start..end];
    assert!(section.contains("Tenants: each job alone and together on each fabric"));
    // The header and a row per job: the serving job "a" and the loop "b" (the 4-port test
    // switch is InfiniBand's only).
    assert_eq!(section.matches("<tr").count(), 1 + 2, "{section}");
    for cell in [">ib-ndr<", ">serve<", ">collective<", ">spread<"] {
        assert!(
            section.contains(cell),
            "no {cell} in the tenants section: {section}"
        );
    }
}

#[test]
fn a_job_name_with_a_comma_is_quoted_in_the_csv() {
    let s =
        two_loops("1:1", 4, "packed", "1MB").replace("name = \"a\"", "name = \"a, \\\"big\\\"\"");
    let f = support::write("tenants-comma.toml", &s);
    let csv = support::stdout_ok(&["tenants", f.as_str(), "--engine", "flow", "--format", "csv"]);
    // RFC 4180: the cell is quoted and its quotes doubled, wherever the name is a cell.
    let rows: Vec<&str> = csv.lines().skip(1).collect();
    assert_eq!(rows.len(), 2 + 2, "{csv}");
    assert!(rows[0].starts_with("\"a, \"\"big\"\"\","), "{csv}");
    assert!(
        rows.iter().any(|r| r.ends_with(",\"a, \"\"big\"\"\"")),
        "{csv}"
    );
    // Each row has the header's 16 fields once the quoted one is read as one.
    let unquoted = csv.replace("\"a, \"\"big\"\"\"", "a");
    assert!(
        unquoted.lines().all(|l| l.split(',').count() == 16),
        "{csv}"
    );
}

/// Front-end prompts (`[frontend]`) of a colocated serving job (no KV transfers: its only
/// fabric traffic is its prompts) beside a training job spread on the 2:1 leaves. The front-end
/// server (the last, on leaf 3) sends each prompt to the serving GPU (server 1, leaf 0) over
/// the spine's one link down to leaf 0, which the training ring's traffic from server 2 to
/// server 0 also takes: on the shared fabric the two meet, on a separate front-end network
/// nothing of the serving job is on the fabric and the training step is its time alone.
#[test]
fn front_end_prompts_slow_a_training_job_only_on_the_shared_fabric() {
    let trace: String = (0..12)
        .map(|i| format!("{:.3},4096,2\n", i as f64 * 0.006))
        .collect();
    let t = support::write("tenants-fe-trace.csv", &trace);
    let scenario = |fabric: &str| {
        let mut s = cluster("2:1");
        s += &format!(
            "\n[frontend]\nservers = 1\nfabric = \"{fabric}\"\nprompt_bytes_per_token = 16384\n\
             \n[[jobs]]\nname = \"llm\"\ngpus = 2\nplacement = \"spread\"\n[jobs.train]\n\
             layers = 4\nhidden = 1024\nffn = 4096\nheads = 8\nvocab = 32000\nseq = 1024\n\
             global_batch = 64\n\n[[jobs]]\nname = \"chat\"\ngpus = 1\nplacement = \"packed\"\n\
             [jobs.serve]\nmodel = \"llama3-8b\"\nmode = \"colocated\"\ndecode_instances = 1\n\
             decode_tp = 1\ntrace = \"{t}\"\n"
        );
        s
    };
    let frontend_p99 = |v: &serde_json::Value| -> (f64, f64) {
        let f = v["serving"][0]["figures"].as_array().unwrap();
        let f = f.iter().find(|f| f["name"] == "frontend_p99").unwrap();
        let m = |k: &str| f[k]["mean"].as_f64().unwrap();
        (m("alone_s"), m("together_s"))
    };
    let shared = run_json(
        &support::write("fe-shared.toml", &scenario("shared")),
        "flow",
    );
    let jobs = shared["jobs"].as_array().unwrap();
    assert_eq!(jobs[0]["servers"], serde_json::json!([0, 2]));
    assert_eq!(jobs[1]["servers"], serde_json::json!([1]));
    let train = jobs[0]["slowdown"]["mean"].as_f64().unwrap();
    let (alone, together) = frontend_p99(&shared);
    // Measured: 69.627 -> 70.975 ms (1.019) and 1.353 -> 2.704 ms: the prompts in flight during
    // the ring's transfers get half of the link.
    assert!(
        train > 1.005 && together > 1.5 * alone,
        "the prompts and the ring meet on the spine's link to leaf 0: slowdown {train}, \
         front-end p99 {alone} -> {together}"
    );
    let separate = run_json(
        &support::write("fe-separate.toml", &scenario("separate")),
        "flow",
    );
    let jobs = separate["jobs"].as_array().unwrap();
    let train = jobs[0]["slowdown"]["mean"].as_f64().unwrap();
    assert!((train - 1.0).abs() < 1e-9, "separate: slowdown {train}");
    let (alone, together) = frontend_p99(&separate);
    assert!(alone > 0.0 && alone == together, "{alone} {together}");
}
