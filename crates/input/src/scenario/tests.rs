use super::*;

fn design(text: &str) -> Result<Design, InputError> {
    Scenario::parse("s.toml", text)?.design()
}

#[test]
fn defaults_resolve_from_the_profile() {
    let d = Scenario::defaults().design().unwrap();
    assert_eq!(d.profile.id, "roce-400g");
    assert_eq!(d.switch.id, "sn5600");
    assert_eq!(d.nic.id, "cx7");
    // SN5600 in 128 x 400G mode (sn5000/data+interfaces).
    assert_eq!(d.spec.switch_radix, 128);
    assert_eq!(d.spec.gpus, 1024);
    assert_eq!(d.server.id, "hgx-h100-8");
}

#[test]
fn sections_and_flags_set_the_design() {
    let mut s = Scenario::parse(
        "s.toml",
        "[cluster]\ngpus = 512\n[fabric]\nprofile = \"ib-ndr\"\n[topology]\nkind = \"rail-optimized\"\ntiers = 2\noversubscription = \"2:1\"\n",
    )
    .unwrap();
    s.apply_flags(&[
        ("--gpus".into(), "2048".into()),
        ("--years".into(), "3".into()),
    ])
    .unwrap();
    let d = s.design().unwrap();
    assert_eq!(d.spec.gpus, 2048);
    assert_eq!(d.spec.oversubscription, (2, 1));
    assert_eq!(d.spec.tiers, fabricsim_core::topology::Tiers::Fixed(2));
    assert_eq!(d.spec.switch_radix, 64);
    assert_eq!(d.cost.years, 3);
}

#[test]
fn every_flag_sets_its_key() {
    // Each flag's value lands on its scenario key, typed as the file's value would be.
    for f in flags::FLAGS {
        let mut s = Scenario::defaults();
        let v = match f.key {
            "cost.usd_per_kwh"
            | "cost.pue"
            | "train.dp_bucket_mb"
            | "serve.rate"
            | "reliability.mtbf_scale"
            | "reliability.checkpoint_interval_s" => "1.5",
            "serve.prefill_instances"
            | "serve.prefill_tp"
            | "serve.decode_instances"
            | "serve.decode_tp"
            | "serve.max_batch"
            | "serve.max_batch_tokens"
            | "serve.requests"
            | "serve.prompt_tokens"
            | "serve.output_tokens" => "2",
            "train.swiglu"
            | "train.dp_overlap"
            | "train.tp_overlap"
            | "train.pp_overlap"
            | "train.sequence_parallel"
            | "serve.expert_parallel" => "false",
            "compare.claims" => "full",
            k if k.starts_with("train.")
                && k != "train.model"
                && k != "train.recompute"
                && k != "train.precision" =>
            {
                "2"
            }
            k if k.starts_with("nccl.") => "1",
            "cluster.gpus"
            | "cluster.gpus_per_node"
            | "cluster.nics_per_node"
            | "fabric.mtu_bytes"
            | "layout.servers_per_rack"
            | "layout.racks_per_row"
            | "cost.years"
            | "compare.seeds"
            | "seeds"
            | "topology.planes"
            | "topology.pod_sus"
            | "topology.tiers" => "2",
            _ => "x",
        };
        s.apply_flags_for(&[(f.flag.to_string(), v.to_string())], |k| k == f.key)
            .unwrap_or_else(|e| panic!("{}: {e}", f.flag));
        assert_eq!(s.flags.get(f.key).map(String::as_str), Some(f.flag));
        let mut path = f.key.split('.');
        let mut node = &s.doc[path.next().unwrap()];
        for part in path {
            node = &node[part];
        }
        assert_eq!(node.to_string().trim_matches('"'), v, "{}", f.flag);
    }
    // The typed file was read again from the tree: a spot check per kind.
    let mut s = Scenario::defaults();
    s.apply_flags(&[
        ("--gpus".into(), "64".into()),
        ("--pue".into(), "1.2".into()),
        ("--tiers".into(), "auto".into()),
        ("--swiglu".into(), "false".into()),
        ("--fabric".into(), "400".into()),
    ])
    .unwrap();
    assert_eq!(s.file.cluster.gpus, 64);
    assert_eq!(s.file.cost.pue, 1.2);
    assert_eq!(s.file.topology.tiers, toml::Value::String("auto".into()));
    assert_eq!(s.file.train.as_ref().unwrap().swiglu, Some(false));
    assert_eq!(s.file.fabric.profile, "400");
}

#[test]
fn range_errors_name_the_file_line_and_key() {
    let e = design("[cluster]\ngpus = -8\n").unwrap_err();
    assert_eq!(
        (e.file.as_str(), e.line, e.key.as_str()),
        ("s.toml", Some(2), "cluster.gpus")
    );
    assert_eq!(e.value, "-8");
    assert!(e.allowed.contains("1 to"));

    let e = design("[topology]\noversubscription = \"2-1\"\n").unwrap_err();
    assert_eq!(
        (e.line, e.key.as_str()),
        (Some(2), "topology.oversubscription")
    );

    let e = design("[fabric]\nprofile = \"uec-1600g\"\n").unwrap_err();
    assert!(e.problem.contains("unknown"), "{e}");
    assert!(e.allowed.contains("uec-800g"), "{e}");

    let e = design("[topology]\nswitch = \"th4-64x400\"\n[fabric]\nprofile = \"ib-ndr\"\n")
        .unwrap_err();
    assert_eq!(e.key, "topology.switch");
    assert!(e.allowed.contains("qm9700"), "{e}");

    let e = design("[cost]\nprices_usd = { nope = 3 }\n").unwrap_err();
    assert_eq!(e.key, "cost.prices_usd.nope");
}

#[test]
fn flag_errors_name_the_flag() {
    let mut s = Scenario::defaults();
    let e = s
        .apply_flags(&[("--gpus".into(), "lots".into())])
        .unwrap_err();
    assert_eq!(
        (e.file.as_str(), e.key.as_str()),
        ("command line", "--gpus")
    );
    assert_eq!(e.allowed, "a whole number");
    let e = Scenario::defaults()
        .apply_flags(&[("--tp".into(), "-2".into())])
        .unwrap_err();
    assert_eq!(e.key, "--tp");
    let mut s = Scenario::parse("s.toml", "[cluster]\ngpus = 64\n").unwrap();
    s.apply_flags(&[("--gpus".into(), "0".into())]).unwrap();
    let e = s.design().unwrap_err();
    assert_eq!(
        (e.file.as_str(), e.key.as_str()),
        ("command line", "--gpus")
    );
}

#[test]
fn unknown_keys_and_wrong_types_are_located() {
    let e = Scenario::parse("s.toml", "[layout]\nracks = 3\n").unwrap_err();
    assert_eq!((e.line, e.key.as_str()), (Some(2), "layout.racks"));
    assert!(e.allowed.contains("racks_per_row"), "{e}");
    let e = Scenario::parse("s.toml", "[cost]\nyears = \"five\"\n").unwrap_err();
    assert_eq!((e.line, e.key.as_str()), (Some(2), "cost.years"));
}

#[test]
fn unknown_or_mismatched_catalog_ids_are_errors() {
    let e = design("[cluster]\ngpu = \"mi300x\"\n").unwrap_err();
    assert_eq!((e.line, e.key.as_str()), (Some(2), "cluster.gpu"));
    assert!(e.allowed.contains("h100"));
    let e = design("[cluster]\nnic = \"cx6\"\n").unwrap_err();
    assert_eq!(e.key, "cluster.nic");
    // A 400G NIC on an 800G fabric.
    let e = design("[fabric]\nprofile = \"roce-800g\"\n[cluster]\nnic = \"cx7\"\n").unwrap_err();
    assert_eq!((e.line, e.key.as_str()), (Some(4), "cluster.nic"));
    assert!(e.allowed.contains("cx8"), "{e}");
    // An Ethernet-only NIC on InfiniBand.
    let e = design("[fabric]\nprofile = \"ib-ndr\"\n[cluster]\nnic = \"thor2\"\n").unwrap_err();
    assert_eq!(e.key, "cluster.nic");
    // No 4-GPU B200 server in the catalog.
    let e = design("[cluster]\ngpu = \"b200\"\ngpus = 64\ngpus_per_node = 4\n").unwrap_err();
    assert_eq!((e.line, e.key.as_str()), (Some(4), "cluster.gpus_per_node"));
    let e = design("[cluster]\ngpus = 100\n").unwrap_err();
    assert!(e.problem.contains("whole number of 8-GPU servers"), "{e}");
    let e = design("[topology]\ntiers = 4\n").unwrap_err();
    assert_eq!((e.key.as_str(), e.value.as_str()), ("topology.tiers", "4"));
    let e = design("[layout]\nleaf = \"under-the-floor\"\n").unwrap_err();
    assert!(e.allowed.contains("top-of-rack"));
    let e = design("[cost]\npue = 0.5\n").unwrap_err();
    assert_eq!(e.key, "cost.pue");
}

/// TOML errors in the scenario's value types (`fabricsim_core::error::InputError::from_toml`).
#[test]
fn toml_errors_name_no_rust_type() {
    #[derive(serde::Deserialize, Debug)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Inner {
        a: Option<u8>,
        b: Option<i64>,
        s: Option<crate::scenario::value::SizeValue>,
        v: Option<Vec<u32>>,
    }
    #[derive(serde::Deserialize, Debug)]
    #[allow(dead_code)]
    struct File {
        t: Option<Inner>,
    }
    for text in [
        "t = 3",
        "[t]\na = 300",
        "[t]\nb = 99999999999999999999999",
        "[t]\ns = true",
        "[t]\nv = {x = 1}",
        "[t]\nb = [1]",
        "[t]\na = \"x\"",
    ] {
        let src = fabricsim_core::error::Source::new("f.toml", text);
        let e = toml::from_str::<File>(text).unwrap_err();
        let shown = fabricsim_core::error::InputError::from_toml(&src, &e).to_string();
        for word in [
            "struct",
            "enum",
            "u8",
            "i64",
            "i128",
            "u32",
            "SizeValue",
            "sequence",
        ] {
            assert!(!shown.contains(word), "{shown}");
        }
        assert!(shown.starts_with("f.toml:"), "{shown}");
    }
}

/// `compat`: an 800G NIC on an H100 host's PCIe Gen5 x16 link (504 Gb/s) is warned, naming
/// both parts; 400G on it is not; 200G-class PCIe Gen4 on an A100 host warns at 400G.
#[test]
fn compat_warns_a_nic_faster_than_the_hosts_pcie() {
    let d = design("[fabric]\nprofile = \"ib-xdr\"\n").unwrap();
    assert_eq!(
        (d.nic.id.as_str(), d.server.id.as_str()),
        ("cx8", "hgx-h100-8")
    );
    assert_eq!(d.warnings.len(), 1, "{:?}", d.warnings);
    let w = &d.warnings[0];
    assert!(
        w.contains("cx8") && w.contains("hgx-h100-8") && w.contains("Gen5 x16"),
        "{w}"
    );
    assert!(w.contains("504 Gb/s"), "{w}");
    assert!(
        design("[fabric]\nprofile = \"ib-ndr\"\n")
            .unwrap()
            .warnings
            .is_empty()
    );
    let a100 = design("[cluster]\ngpu = \"a100\"\n[fabric]\nprofile = \"ib-ndr\"\n").unwrap();
    assert!(a100.warnings[0].contains("Gen4 x16"), "{:?}", a100.warnings);
    assert_eq!(super::compat::pcie_lane_gbps(7), None);
}

/// `compat`: more NIC ports than the server model has slots is an error naming the key and the
/// server; a GPU-to-NIC ratio that does not divide evenly is a warning.
#[test]
fn compat_checks_nics_against_the_server_model() {
    let e = design("[cluster]\nnics_per_node = 9\n")
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("cluster.nics_per_node") && e.contains("hgx-h100-8"),
        "{e}"
    );
    assert!(e.contains("8 scale-out NIC slots"), "{e}");
    let d = design("[cluster]\nnics_per_node = 3\n").unwrap();
    assert!(
        d.warnings
            .iter()
            .any(|w| w.contains("does not divide evenly")),
        "{:?}",
        d.warnings
    );
    assert!(
        design("[cluster]\nnics_per_node = 4\n")
            .unwrap()
            .warnings
            .is_empty()
    );
}

/// `compat`: a switch whose SerDes lanes match no optics at the port rate is warned naming the
/// switch and the lane rates (Tomahawk 4's 50G lanes against the 100G-lane 400G optics); the
/// SN5600's 100G lanes match.
#[test]
fn compat_warns_switch_serdes_unlike_the_optics_lanes() {
    let d = design("[topology]\nswitch = \"th4-64x400\"\n").unwrap();
    let w: Vec<&String> = d.warnings.iter().filter(|w| w.contains("SerDes")).collect();
    assert_eq!(w.len(), 1, "{:?}", d.warnings);
    assert!(
        w[0].contains("th4-64x400") && w[0].contains("50G") && w[0].contains("100G"),
        "{}",
        w[0]
    );
    assert!(design("").unwrap().warnings.is_empty());
}

/// `[cost] optics` takes the two sources only; a bad value names the key and both.
#[test]
fn cost_optics_names_the_allowed_sources() {
    let e = design("[cost]\noptics = \"oem\"\n").unwrap_err();
    assert_eq!(e.key, "cost.optics");
    assert_eq!(e.line, Some(2));
    assert!(
        e.allowed.contains("third_party") && e.allowed.contains("vendor"),
        "{e}"
    );
    let d = design("[cost]\noptics = \"vendor\"\n").unwrap();
    assert_eq!(d.cost.optics, crate::catalog::OpticsPrices::Vendor);
    let t = d
        .catalog
        .transceivers
        .iter()
        .find(|x| x.id == "sr4-400g")
        .unwrap();
    assert_eq!(Some(t.price_usd), t.vendor_price_usd);
}

#[test]
fn pod_keys_shape_a_pods_fabric_and_are_refused_elsewhere() {
    use fabricsim_core::topology::{Kind, Pod, build};
    let pods =
        "[cluster]\ngpus = 16384\n[fabric]\nprofile = \"ib-ndr\"\n[topology]\nkind = \"pods\"\n";
    let d = design(&format!(
        "{pods}pod_sus = 7\ncore_oversubscription = \"15:1\"\n"
    ))
    .unwrap();
    assert_eq!(
        d.spec.kind,
        Kind::Pods(Pod {
            sus: 7,
            core_oversubscription: (15, 1)
        })
    );
    assert_eq!(design(pods).unwrap().spec.kind, Kind::Pods(Pod::LARGEST));
    // A key of another kind, a ratio that is not one, a count out of range: file, line, key.
    let e = design("[topology]\nkind = \"fat-tree\"\npod_sus = 4\n").unwrap_err();
    assert_eq!((e.line, e.key.as_str()), (Some(3), "topology.pod_sus"));
    assert!(e.problem.contains("kind pods"), "{e}");
    let e = design(&format!("{pods}core_oversubscription = \"1:2\"\n")).unwrap_err();
    assert_eq!(
        (e.line, e.key.as_str()),
        (Some(7), "topology.core_oversubscription")
    );
    assert_eq!(e.value, "\"1:2\"");
    let e = design(&format!("{pods}pod_sus = 0\n")).unwrap_err();
    assert_eq!((e.line, e.key.as_str()), (Some(7), "topology.pod_sus"));
    // A pod larger than its spine takes is the builder's error, at the key: 64-port QM9700
    // spines at 1:1 take 4 SUs of 8 rail leaves.
    let s = Scenario::parse("s.toml", &format!("{pods}pod_sus = 5\n")).unwrap();
    let e = s.design_and_topology().unwrap_err();
    assert_eq!(
        (e.line, e.key.as_str(), e.value.as_str()),
        (Some(7), "topology.pod_sus", "5")
    );
    assert!(e.allowed.contains("1 to 4"), "{e}");
    assert!(build(&s.design().unwrap().spec).is_err());
}
