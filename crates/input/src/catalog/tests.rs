use super::*;

#[test]
fn builtin_catalog_loads_with_the_required_items() {
    let c = Catalog::builtin().unwrap();
    for id in ["qm9700", "q3400", "sn5600", "th5-64x800", "th4-64x400"] {
        assert!(c.switch(id).is_some(), "switch {id}");
    }
    for id in ["cx7", "cx8", "thor2"] {
        assert!(c.nic(id).is_some(), "nic {id}");
    }
    for id in ["a100", "h100", "h200", "b200"] {
        assert!(c.gpu(id).is_some(), "gpu {id}");
        assert!(c.servers.iter().any(|s| s.gpu == id), "server with {id}");
    }
    // QM9700: 64 x 400G on 32 twin-port cages (NVIDIA QM97X0 user manual, "Interfaces").
    assert_eq!(c.switch("qm9700").unwrap().ports_per_cage(400), Some(2));
    assert_eq!(c.switch("th4-64x400").unwrap().ports_per_cage(400), Some(1));
    for class in [
        MediumClass::Dac,
        MediumClass::Acc,
        MediumClass::Aoc,
        MediumClass::Sr,
        MediumClass::Dr,
        MediumClass::Fr,
    ] {
        let n = c.cables.iter().filter(|x| x.class == class).count()
            + c.transceivers.iter().filter(|x| x.class == class).count();
        assert!(n > 0, "no {class:?} medium");
    }
}

/// Every number in the shipped data files carries a source or the word estimate: each line
/// that assigns a number has a trailing comment with a source tag, and each entry a `source`.
#[test]
fn every_shipped_number_cites_a_source() {
    for (name, text) in BUILTIN {
        for (i, line) in text.lines().enumerate() {
            let code = line.split('#').next().unwrap_or("");
            let Some((_, v)) = code.split_once('=') else {
                continue;
            };
            let has_number = v.chars().any(|ch| ch.is_ascii_digit()) && !v.contains('"');
            if has_number {
                let comment = line.split_once('#').map(|x| x.1).unwrap_or("");
                assert!(
                    ["[V", "[S", "[E", "[U", "[P"]
                        .iter()
                        .any(|t| comment.contains(t)),
                    "{name}:{}: number without a source tag: {line}",
                    i + 1
                );
            }
        }
    }
    let c = Catalog::builtin().unwrap();
    let sources = c
        .switches
        .iter()
        .map(|x| &x.source)
        .chain(c.nics.iter().map(|x| &x.source))
        .chain(c.transceivers.iter().map(|x| &x.source))
        .chain(c.cables.iter().map(|x| &x.source))
        .chain(c.fibers.iter().map(|x| &x.source))
        .chain(c.gpus.iter().map(|x| &x.source))
        .chain(c.servers.iter().map(|x| &x.source));
    for s in sources {
        assert!(!s.trim().is_empty());
    }
}

/// Every price in the shipped catalog says where it comes from: a source tag `[V]` or `[S]`
/// with the year of the source (`2024`), or the word estimate with its reasoning (at least six
/// words: what it is derived from or compared with), never a bare "placeholder" or "estimate".
#[test]
fn every_shipped_price_has_a_dated_source_or_a_reasoned_estimate() {
    let mut prices = 0;
    for (name, text) in BUILTIN {
        for (i, line) in text.lines().enumerate() {
            let code = line.split('#').next().unwrap_or("");
            let Some((key, _)) = code.split_once('=') else {
                continue;
            };
            let key = key.trim();
            if !(key.contains("price") || key.starts_with("usd_")) {
                continue;
            }
            prices += 1;
            let comment = line.split_once('#').map(|x| x.1).unwrap_or("");
            let dated = (comment.contains("[V") || comment.contains("[S"))
                && comment
                    .as_bytes()
                    .windows(4)
                    .any(|w| w.starts_with(b"20") && w.iter().all(u8::is_ascii_digit));
            let words = comment
                .split_whitespace()
                .filter(|w| !w.starts_with('['))
                .count();
            let reasoned = comment.contains("estimate") && words >= 7;
            assert!(
                (dated || reasoned) && !comment.contains("placeholder"),
                "{name}:{}: a price needs a dated source or a reasoned estimate: {line}",
                i + 1
            );
        }
    }
    assert!(prices >= 30, "{prices} prices found");
}

#[test]
fn a_user_file_replaces_same_ids_and_adds_new_ones() {
    let mut c = Catalog::builtin().unwrap();
    let before = c.switches.len();
    let user = r#"
[[switch]]
id = "qm9700"
name = "QM9700 at a negotiated price"
family = "infiniband"
cages = 32
modes = [{ port_gbps = 400, ports = 64 }]
latency_ns = 130
buffer_mb = 0
power_w = 1000
rack_units = 1
price_usd = 36000

[[fiber]]
id = "om5"
name = "OM5"
usd_per_m = 4
usd_fixed = 40
ns_per_m = 5
"#;
    c.merge(&Source::new("mine.toml", user)).unwrap();
    assert_eq!(c.switches.len(), before);
    assert_eq!(c.switch("qm9700").unwrap().price_usd, 36000.0);
    assert_eq!(c.fibers.last().unwrap().id, "om5");
}

#[test]
fn bad_catalog_entries_name_file_line_and_key() {
    let mut c = Catalog::builtin().unwrap();
    let user = "[[nic]]\nid = \"x\"\nname = \"x\"\nfamilies = [\"ethernet\"]\nport_gbps = 400\nlatency_ns = 1\npower_w = -3\nprice_usd = 1\n";
    let e = c.merge(&Source::new("mine.toml", user)).unwrap_err();
    assert_eq!(e.file, "mine.toml");
    assert_eq!(e.line, Some(7));
    assert_eq!(e.key, "nic[id=x].power_w");
    assert_eq!(e.value, "-3");

    let unknown = "[[gpu]]\nid = \"g\"\nname = \"g\"\nbf16_tflops = 1\nhbm_gb = 1\nnvlink_GBps = 1\ntdp_w = 1\ncolour = \"red\"\n";
    let e = c.merge(&Source::new("mine.toml", unknown)).unwrap_err();
    assert_eq!(e.line, Some(8));
    assert!(e.problem.contains("unknown field"), "{e}");

    let dangling = "[[server]]\nid = \"s\"\nname = \"s\"\ngpu = \"tpu\"\ngpus = 8\npower_w = 1\nprice_usd = 1\nincludes_nics = false\n";
    let e = c.merge(&Source::new("mine.toml", dangling)).unwrap_err();
    assert_eq!((e.line, e.key.as_str()), (Some(4), "server[id=s].gpu"));
    let own = "[[server]]\nid = \"s\"\nname = \"s\"\ngpu = \"h100\"\ngpus = 8\npower_w = 1\nprice_usd = 1\nincludes_nics = true\nnic = \"cx9\"\n";
    let e = c.merge(&Source::new("mine.toml", own)).unwrap_err();
    assert_eq!((e.line, e.key.as_str()), (Some(9), "server[id=s].nic"));
}

#[test]
fn a_nic_splits_into_at_most_its_breakout_ports() {
    let c = Catalog::builtin().unwrap();
    let cx8 = c.nics.iter().find(|n| n.id == "cx8").unwrap();
    assert_eq!(
        [800, 400, 200].map(|r| cx8.ports_at(r)),
        [Some(1), Some(2), None]
    );
    let cx7 = c.nics.iter().find(|n| n.id == "cx7").unwrap();
    assert_eq!([400, 200].map(|r| cx7.ports_at(r)), [Some(1), None]);
}

#[test]
fn set_price_reaches_every_kind_and_rejects_unknown_ids() {
    let mut c = Catalog::builtin().unwrap();
    assert!(c.set_price("sr4-400g", 1.0));
    assert_eq!(c.transceivers[0].price_usd, 1.0);
    assert!(!c.set_price("nope", 1.0));
}

#[test]
fn a_servers_nvlink_domain_bandwidth_must_match_its_gpus() {
    let c = Catalog::builtin().unwrap();
    let nvl72 = c.servers.iter().find(|s| s.id == "gb200-nvl72").unwrap();
    assert_eq!((nvl72.gpus, nvl72.nvlink_domain_tbps), (72, Some(130.0)));
    let user = "[[server]]\nid = \"hgx-h100-8\"\nname = \"x\"\ngpu = \"h100\"\ngpus = 8\n\
                nvlink_domain_TBps = 14.4\npower_w = 1\nprice_usd = 1\nincludes_nics = true\n";
    let mut c = Catalog::builtin().unwrap();
    let e = c.merge(&Source::new("u.toml", user)).unwrap_err();
    assert_eq!(
        (e.line, e.key.as_str()),
        (Some(6), "server[id=hgx-h100-8].nvlink_domain_TBps")
    );
    assert!(e.problem.contains("8 GPUs x 900 GB/s"), "{e}");
}
