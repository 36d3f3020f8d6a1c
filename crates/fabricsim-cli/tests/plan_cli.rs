//! End-to-end runs of the `fabricsim plan` binary: formats, output files, DOT export, flags
//! over files, and the largest size.

mod support;

/// Exit code, standard output and standard error of `fabricsim ARGS`.
fn fabricsim(args: &[&str]) -> (i32, String, String) {
    let o = support::fabricsim(args);
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    (o.status.code().unwrap_or(-1), out, support::stderr(&o))
}

fn tmp(name: &str) -> String {
    support::tmp(name).display().to_string()
}

#[test]
fn plan_works_without_a_file() {
    let (code, out, err) = fabricsim(&["plan", "--gpus", "1024", "--fabric", "roce-400g"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("1024 x h100 GPUs in 128 servers"));
    assert!(out.contains("CAPEX total"));
    assert!(out.contains(" kW"));
}

#[test]
fn json_keys_carry_units_and_numbers_add_up() {
    let (code, out, err) = fabricsim(&[
        "plan", "--gpus", "2048", "--fabric", "ib-ndr", "--format", "json",
    ]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let capex = &v["cost"]["capex_usd"];
    let sum: f64 = [
        "switches",
        "nics",
        "optics",
        "cables",
        "installation",
        "spares",
        "oob_management",
    ]
    .iter()
    .map(|k| capex[k].as_f64().unwrap())
    .sum();
    assert!((sum - capex["total"].as_f64().unwrap()).abs() < 0.05);
    assert!(v["power_kW"]["total"].as_f64().unwrap() > 0.0);
    assert_eq!(v["cluster"]["gpus"], 2048);
    // 2,048 GPUs on 64-port switches: 2 tiers, 64 leaves and 32 spines (k^2/2 = 2048).
    assert_eq!(v["switch_tiers"][0]["switches"], 64);
    assert_eq!(v["switch_tiers"][1]["switches"], 32);
}

#[test]
fn csv_out_file_and_dot_export() {
    let out_path = tmp("plan.csv");
    let dot_path = tmp("fabric.dot");
    let (code, stdout, err) = fabricsim(&[
        "plan",
        "examples/ib-ndr-1024-fat-tree.toml",
        "--format",
        "csv",
        "--out",
        &out_path,
        "--export-dot",
        &dot_path,
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(stdout.is_empty());
    let csv = std::fs::read_to_string(&out_path).unwrap();
    assert!(csv.starts_with("key,value\n"));
    assert!(csv.contains("\ncost.capex_usd.total,"));
    assert!(csv.contains("\npower_kW.total,"));
    let dot = std::fs::read_to_string(&dot_path).unwrap();
    assert!(dot.contains("graph") && dot.contains("--"));
}

#[test]
fn flags_override_the_file() {
    let (_, file_only, _) = fabricsim(&[
        "plan",
        "examples/ib-ndr-1024-fat-tree.toml",
        "--format",
        "json",
    ]);
    let (code, flagged, err) = fabricsim(&[
        "plan",
        "examples/ib-ndr-1024-fat-tree.toml",
        "--gpus",
        "512",
        "--years",
        "3",
        "--format",
        "json",
    ]);
    assert_eq!(code, 0, "{err}");
    let a: serde_json::Value = serde_json::from_str(&file_only).unwrap();
    let b: serde_json::Value = serde_json::from_str(&flagged).unwrap();
    assert_eq!(a["cluster"]["gpus"], 1024);
    assert_eq!(b["cluster"]["gpus"], 512);
    assert_eq!(b["cost"]["years"], 3);
    assert_eq!(b["fabric"]["profile"], "ib-ndr");
}

#[test]
fn same_input_gives_the_same_bytes() {
    let args = [
        "plan",
        "--gpus",
        "4096",
        "--fabric",
        "roce-800g",
        "--format",
        "json",
    ];
    assert_eq!(fabricsim(&args).1, fabricsim(&args).1);
}

/// 131,072 GPUs: a radix-64 switch reaches k^3/4 = 65,536 hosts in 3 tiers (Al-Fares et al.
/// 2008), too few, so the plan needs a 128- or 144-port switch: Tomahawk 6 in 128 x 800G mode,
/// or Quantum-X800 (144 x 800G), both in 3 tiers (k^2/2 = 8,192 or 10,368 in 2 tiers).
#[test]
fn the_largest_size_plans() {
    let (code, out, err) = fabricsim(&[
        "plan",
        "--gpus",
        "131072",
        "--fabric",
        "roce-800g",
        "--switch",
        "q3400",
        "--format",
        "json",
    ]);
    // q3400 is InfiniBand: the flag is rejected by name.
    assert_eq!(code, 2, "{out}");
    assert!(err.contains("`--switch` = q3400"), "{err}");
    let (code, _, err) = fabricsim(&["plan", "--gpus", "131072", "--fabric", "roce-800g"]);
    assert_eq!(code, 2);
    assert!(
        err.contains("`topology.switch` = sn5600 (64 ports)"),
        "{err}"
    );
    for args in [
        ["--fabric", "ib-xdr", "--switch", "q3400"],
        ["--fabric", "roce-800g", "--switch", "th6-64x1600"],
    ] {
        let mut all = vec!["plan", "--gpus", "131072", "--format", "json"];
        all.extend(args);
        let (code, out, err) = fabricsim(&all);
        assert_eq!(code, 0, "{err}");
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert_eq!(v["cluster"]["gpus"], 131072);
        assert_eq!(v["topology"]["tiers"], 3);
    }
}

/// A user catalog replaces an entry by id: QM9700 at the FS.com price ($36k in the Aug-2024 H100
/// cluster model, Google Sheet 1Ft3RbeZ-w43kYSiLfYc1vxO41mK5lmJpcPC9GOYHAWc)
/// instead of $50k lowers switch CAPEX by $14k per switch.
#[test]
fn a_user_catalog_replaces_entries_by_id() {
    let cat = tmp("my-catalog.toml");
    std::fs::write(
        &cat,
        "[[switch]]\nid = \"qm9700\"\nname = \"QM9700 (FS.com)\"\nfamily = \"infiniband\"\ncages = 32\nmodes = [{ port_gbps = 400, ports = 64 }]\nlatency_ns = 130\nbuffer_mb = 0\npower_w = 1000\nrack_units = 1\nprice_usd = 36000\n",
    )
    .unwrap();
    let args = [
        "plan", "--gpus", "1024", "--fabric", "ib-ndr", "--format", "json",
    ];
    let (_, base, _) = fabricsim(&args);
    let mut with = args.to_vec();
    with.extend(["--catalog", &cat]);
    let (code, out, err) = fabricsim(&with);
    assert_eq!(code, 0, "{err}");
    let a: serde_json::Value = serde_json::from_str(&base).unwrap();
    let b: serde_json::Value = serde_json::from_str(&out).unwrap();
    let switches = 48.0; // 32 leaves + 16 spines for 1,024 GPUs on 64-port switches
    let drop = a["cost"]["capex_usd"]["switches"].as_f64().unwrap()
        - b["cost"]["capex_usd"]["switches"].as_f64().unwrap();
    assert_eq!(drop, 14_000.0 * switches);
    // A broken catalog file is an input error naming the file.
    std::fs::write(&cat, "[[switch]]\nid = 3\n").unwrap();
    let (code, _, err) = fabricsim(&with);
    assert_eq!(code, 2);
    assert!(err.contains("my-catalog.toml:2"), "{err}");
}

/// The ns-3 HPCC topology export (HPCC ns-3 `mix/topology.txt`) reads back as the same fabric:
/// node, switch
/// and link counts, and the layout's link delays (5 ns/m class media, never zero).
#[test]
fn ns3_export_reads_back() {
    let path = tmp("plan.ns3.txt");
    let (code, _, err) = fabricsim(&[
        "plan",
        "--gpus",
        "256",
        "--fabric",
        "ib-ndr",
        "--export-ns3",
        &path,
    ]);
    assert_eq!(code, 0, "{err}");
    let text = std::fs::read_to_string(&path).unwrap();
    let src = fabricsim::Source::new(path.as_str(), text.as_str());
    let read = fabricsim::io::ns3::read_topology(&src).expect("the export parses");
    let (_, json, _) = fabricsim(&[
        "plan", "--gpus", "256", "--fabric", "ib-ndr", "--format", "json",
    ]);
    let plan: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(read.topo.num_hosts(), 256);
    let header: Vec<usize> = text
        .lines()
        .next()
        .unwrap()
        .split(' ')
        .map(|x| x.parse().unwrap())
        .collect();
    assert_eq!(header[0], 256 + header[1]);
    assert_eq!(read.topo.links.len(), header[2]);
    let switches: u64 = plan["bill_of_materials"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|i| i["category"] == "switch")
        .map(|i| i["count"].as_u64().unwrap())
        .sum();
    assert_eq!(
        header[1] as u64, switches,
        "the export has the plan's switches"
    );
    assert!(
        read.topo
            .links
            .iter()
            .all(|l| l.delay.0 > 0 && l.rate.as_gbps_f64() == 400.0)
    );
}

/// `plan --max` tabulates each design's reach, and a rail-only plan of 16,384 GPUs on the
/// QM9700's 64 ports counts 768 switches in 2 tiers where the rail-optimized plan counts 1,280
/// in 3.
#[test]
fn max_table_and_rail_only_at_16k_gpus() {
    let (code, out, err) = fabricsim(&["plan", "--max", "--fabric", "ib-ndr"]);
    assert_eq!(code, 0, "{err}");
    let line = |name: &str| {
        out.lines()
            .find(|l| l.trim_start().starts_with(&format!("{name} ")))
            .unwrap_or_else(|| panic!("no {name} row in {out}"))
            .split_whitespace()
            .skip(1)
            .map(str::to_string)
            .collect::<Vec<_>>()
    };
    assert_eq!(line("rail-only"), ["512", "16,384", "524,288"], "{out}");
    assert_eq!(line("rail-optimized"), ["0", "2,048", "65,536"], "{out}");
    let count = |kind: &str| {
        let (code, out, err) = fabricsim(&[
            "plan",
            "--fabric",
            "ib-ndr",
            "--gpus",
            "16384",
            "--topology",
            kind,
            "--format",
            "json",
        ]);
        assert_eq!(code, 0, "{err}");
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        let tiers = v["topology"]["tiers"].as_u64().unwrap();
        let switches: u64 = v["switch_tiers"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["switches"].as_u64().unwrap())
            .sum();
        (tiers, switches)
    };
    assert_eq!(count("rail-only"), (2, 768));
    assert_eq!(count("rail-optimized"), (3, 1280));
}

/// With pod keys, `--topology auto` weighs that pod shape: at 32,768 GPUs no kind fits 2 tiers,
/// and pods of 7 SUs over a 15:1 core (1,680 switches) undercut every 3-tier kind; the choice
/// says what traffic between pods gets.
#[test]
fn topology_auto_weighs_the_scenarios_pods_and_names_the_core_ratio() {
    let (code, out, err) = fabricsim(&[
        "plan",
        "--fabric",
        "ib-ndr",
        "--gpus",
        "32768",
        "--topology",
        "auto",
        "--pod-sus",
        "7",
        "--core-oversubscription",
        "15:1",
        "--format",
        "json",
    ]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["topology"]["kind"], "pods");
    let why = v["topology"]["auto_choice"].as_str().unwrap();
    assert!(
        why.contains("1680 switches") && why.contains("15:1"),
        "{why}"
    );
    // The pod keys with another kind: exit 2, naming the flag.
    let (code, _, err) = fabricsim(&["plan", "--topology", "fat-tree", "--pod-sus", "2"]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("--pod-sus") && err.contains("kind pods"),
        "{err}"
    );
}

/// `--topology auto` plans every kind and keeps the lowest network CAPEX, saying why: at 16,384
/// GPUs on 64-port QM9700s the 2-tier rail-only fabric undercuts the 3-tier ones.
#[test]
fn topology_auto_picks_the_cheapest_kind_and_says_why() {
    let (code, out, err) = fabricsim(&[
        "plan",
        "--fabric",
        "ib-ndr",
        "--gpus",
        "16384",
        "--topology",
        "auto",
        "--format",
        "json",
    ]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["topology"]["kind"], "rail-only");
    let why = v["topology"]["auto_choice"].as_str().unwrap();
    assert!(
        why.contains("lowest network CAPEX") && why.contains("fat-tree"),
        "{why}"
    );
    assert!(why.contains("NVLink"), "{why}");
    // A named kind carries no choice.
    let (_, out, _) = fabricsim(&["plan", "--fabric", "ib-ndr", "--format", "json"]);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert!(v["topology"].get("auto_choice").is_none());
}
