use super::*;
use crate::plan::media::MediumDef;
use fabricsim_core::topology::{GraphBuilder, Medium, NodeId, Shape};
use fabricsim_core::units::{BitRate, Time};
use fabricsim_input::catalog::{Catalog, Drive, MediumClass};

fn scenario(text: &str) -> Scenario {
    Scenario::parse("t.toml", text).unwrap()
}

/// `n` NICs on one QM9700 leaf (twin-port cages at 400G), each link of the given length.
fn star(lengths: &[f64]) -> fabricsim_core::topology::Topology {
    let mut b = GraphBuilder::new();
    let nics: Vec<NodeId> = (0..lengths.len() as u32).map(|s| b.add_nic(s, 0)).collect();
    let leaf = b.add_switch(1, 0, 0, 64);
    for (&n, &len) in nics.iter().zip(lengths) {
        b.connect(
            n,
            leaf,
            BitRate::gbps(400),
            len,
            Time::ZERO,
            Medium::Unspecified,
        );
    }
    b.finish(Shape::FatTree, 1, lengths.len() as u32)
}

fn class_of(
    t: &fabricsim_core::topology::Topology,
    m: &media::Media,
    c: &Catalog,
    link: usize,
) -> MediumClass {
    let Medium::Catalog(d) = t.links[link].medium else {
        panic!("link {link} has no medium");
    };
    m.class(c, d as usize)
}

/// Cheapest-that-reaches, with the shipped catalog at 400G from a twin-port switch cage to a
/// NIC: passive DAC splitter to 3 m (MCP7Y00), active copper splitter to 5 m (MCP7Y50), then
/// multimode SR to 50 m, single-mode DR to 500 m, FR to 2 km (the reaches of NVIDIA LinkX MCP4Y10,
/// MMA4Z00, MMS4X00, MMS4X50).
#[test]
fn each_link_gets_the_cheapest_medium_that_reaches() {
    let c = Catalog::builtin().unwrap();
    let lengths = [2.5, 4.0, 30.0, 80.0, 400.0, 1500.0];
    let mut t = star(&lengths);
    let m = media::assign(&mut t, &c, "qm9700", Drive::Dsp).unwrap();
    let got: Vec<MediumClass> = (0..lengths.len())
        .map(|i| class_of(&t, &m, &c, i))
        .collect();
    use MediumClass::*;
    assert_eq!(got, vec![Dac, Acc, Sr, Dr, Dr, Fr]);
    // Delay = length x propagation: 4.5 ns/m copper (MCP4Y10 spec), 5 ns/m fibre.
    assert_eq!(t.links[0].delay, Time::from_ps(11_250));
    assert_eq!(t.links[2].delay, Time::from_ns(150));
    // Beyond every reach: an error, not a silent choice.
    let mut far = star(&[2500.0]);
    assert!(media::assign(&mut far, &c, "qm9700", Drive::Dsp).is_err());
}

/// Twin-port counting: one 800G twin-port module serves two 400G switch ports; each NIC has its
/// own single-port module; a split cable serves two NICs from one cage.
#[test]
fn twin_port_cages_are_counted_per_two_ports() {
    let c = Catalog::builtin().unwrap();
    for (n, twin_modules) in [(1usize, 1u64), (2, 1), (3, 2), (4, 2)] {
        let mut t = star(&vec![20.0; n]);
        let m = media::assign(&mut t, &c, "qm9700", Drive::Dsp).unwrap();
        let b = bom::count(&t, &c, &m, "qm9700", ("cx7", t.num_hosts() as u64));
        let count = |id: &str| b.lines.iter().find(|l| l.id == id).map_or(0, |l| l.count);
        assert_eq!(count("sr8-2x400g"), twin_modules, "{n} links");
        assert_eq!(count("sr4-400g"), n as u64);
        assert_eq!(count("mmf-mpo12"), n as u64);
    }
    for (n, cables) in [(1usize, 1u64), (2, 1), (3, 2)] {
        let mut t = star(&vec![2.0; n]);
        let m = media::assign(&mut t, &c, "qm9700", Drive::Dsp).unwrap();
        assert!(matches!(m.defs[0], MediumDef::Cable { .. }));
        let b = bom::count(&t, &c, &m, "qm9700", ("cx7", t.num_hosts() as u64));
        assert_eq!(b.total(bom::Category::Cable).0, cables, "{n} links");
        assert_eq!(b.total(bom::Category::Transceiver).0, 0);
    }
}

/// NVIDIA DGX SuperPOD reference architecture (DGX H100 RA-11333-001 Table 3; the same
/// compute-fabric table appears in the DGX B200 RA at docs.nvidia.com/dgx-superpod/
/// reference-architecture-scalable-infrastructure-b200/latest/dgx-superpod-architecture.html):
/// rail-optimized NDR on 64-port QM9700 switches.
/// - 4 SU, 127 GPU nodes (the 128th node slot holds the UFM appliance): 32 leaves, 16 spines,
///   1,024 leaf-spine cables; node-leaf cables are 1,016 here, where NVIDIA lists 1,024 for 128
///   nodes: the difference is the 8 leaf ports of the 128th slot, which carry no GPU NIC.
/// - 16 SU, 512 nodes (4,096 GPUs): 128 leaves, 128 spines, 64 cores, 4,096 cables per tier.
#[test]
fn reproduces_the_dgx_superpod_compute_fabric_counts() {
    for (gpus, leaves, spines, cores, links) in [
        (1016u32, 32u64, 16u64, 0u64, [1016u64, 1024, 0]),
        (1024, 32, 16, 0, [1024, 1024, 0]),
        (2048, 64, 32, 0, [2048, 2048, 0]),
        (4096, 128, 128, 64, [4096, 4096, 4096]),
    ] {
        let s = scenario(&format!(
            "[cluster]\ngpus = {gpus}\n[fabric]\nprofile = \"ib-ndr\"\n[topology]\nkind = \"rail-optimized\"\n"
        ));
        let (_, _, p) = run(&s).unwrap();
        let sw = |tier| {
            p.bom
                .tiers
                .iter()
                .find(|x| x.tier == tier)
                .map_or(0, |x| x.switches)
        };
        let ln = |tier| {
            p.bom
                .links
                .iter()
                .find(|x| x.tier == tier)
                .map_or(0, |x| x.links)
        };
        assert_eq!(
            (sw(1), sw(2), sw(3)),
            (leaves, spines, cores),
            "{gpus} GPUs"
        );
        assert_eq!([ln(1), ln(2), ln(3)], links, "{gpus} GPUs");
        assert_eq!(
            p.bom.total(bom::Category::Switch).0,
            leaves + spines + cores
        );
    }
}

/// CAPEX is linear in each catalog price: raising the switch price by $10,000 raises CAPEX by
/// $10,000 per switch and $100 per NIC, plus their spares share; nothing else moves.
#[test]
fn changing_a_catalog_price_changes_capex_accordingly() {
    let base = "[cluster]\ngpus = 2048\n[fabric]\nprofile = \"roce-400g\"\n";
    let (d0, _, p0) = run(&scenario(base)).unwrap();
    let sw = d0.switch.price_usd + 10_000.0;
    let nic = d0.nic.price_usd + 100.0;
    let s1 = scenario(&format!(
        "{base}[cost]\nprices_usd = {{ sn5600 = {sw}, cx7 = {nic} }}\n"
    ));
    let (_, _, p1) = run(&s1).unwrap();
    let switches = p0.bom.total(bom::Category::Switch).0 as f64;
    let nics = p0.bom.total(bom::Category::Nic).0 as f64;
    // The hardware moves by the price changes, the CAPEX by those and their spares.
    let hardware = 10_000.0 * switches + 100.0 * nics;
    let delta = p1.cost.network_capex_usd - p0.cost.network_capex_usd;
    assert!(
        (delta - hardware * (1.0 + d0.cost.spares_share)).abs() < 1e-6,
        "{delta}"
    );
    assert_eq!(p1.cost.optics_usd, p0.cost.optics_usd);
    // A cheaper transceiver lowers optics CAPEX by at least its saving on the modules in use.
    let used = p0
        .bom
        .lines
        .iter()
        .find(|l| l.id == "sr8-2x400g")
        .unwrap()
        .count as f64;
    let s2 = scenario(&format!(
        "{base}[cost]\nprices_usd = {{ \"sr8-2x400g\" = 700 }}\n"
    ));
    let (_, _, p2) = run(&s2).unwrap();
    assert!(p0.cost.optics_usd - p2.cost.optics_usd >= 100.0 * used - 1e-6);
}

/// OPEX = kW x PUE x USD/kWh x 8760 h + licences + support; TCO = CAPEX + years x OPEX; the
/// CAPEX lines sum to the CAPEX.
#[test]
fn opex_and_tco_follow_their_formulas() {
    let s = scenario("[cost]\nyears = 3\nusd_per_kwh = 0.1\npue = 1.5\n");
    let (_, _, p) = run(&s).unwrap();
    let kw = p.power.total_kw();
    let energy = kw * 1.5 * 0.1 * 8760.0;
    let c = &p.cost;
    assert!((c.energy_usd_per_year - energy).abs() < 1e-6);
    let opex = energy + c.software_usd_per_year + c.support_usd_per_year;
    assert!((c.network_opex_usd_per_year - opex).abs() < 1e-6);
    assert!((c.network_tco_usd - (c.network_capex_usd + 3.0 * opex)).abs() < 1e-6);
    let parts: f64 = c.capex_lines().iter().map(|l| l.1).sum();
    assert!((parts - c.network_capex_usd).abs() < 1e-6);
    assert!(c.network_share_of_capex > 0.0 && c.network_share_of_capex < 1.0);
}

/// Licences per switch and server, support and spares as shares of the hardware, labour per
/// switch and per cable, and one management port per switch and server, each from its `[cost]`
/// key; with them all 0 the network costs its hardware and energy only.
#[test]
fn licences_support_labour_spares_and_oob_follow_their_keys() {
    let s = scenario(
        "[cost]\nswitch_software_usd_per_year = 1000\nfabric_manager_usd_per_node_year = 100\n\
         support_share_per_year = 0.1\ninstall_usd_per_cable = 20\ninstall_usd_per_switch = 200\n\
         spares_share = 0.05\noob_usd_per_port = 50\n",
    );
    let (_, t, p) = run(&s).unwrap();
    let c = &p.cost;
    let switches = t.switches().count() as f64;
    let servers = t.servers as f64;
    let hardware = c.switches_usd + c.nics_usd + c.optics_usd + c.cables_usd;
    let cables = (p.bom.total(bom::Category::Cable).0 + p.bom.total(bom::Category::Fiber).0) as f64;
    assert!(cables > 0.0 && switches > 0.0);
    let near = |a: f64, b: f64| (a - b).abs() < 1e-6 * b.max(1.0);
    assert!(near(
        c.software_usd_per_year,
        1000.0 * switches + 100.0 * servers
    ));
    assert!(near(c.support_usd_per_year, 0.1 * hardware));
    assert!(near(c.install_usd, 200.0 * switches + 20.0 * cables));
    assert!(near(c.spares_usd, 0.05 * hardware));
    assert_eq!(c.oob_ports as f64, switches + servers);
    assert!(near(c.oob_usd, 50.0 * (switches + servers)));
    let zero = scenario(
        "[cost]\nswitch_software_usd_per_year = 0\nfabric_manager_usd_per_node_year = 0\n\
         support_share_per_year = 0\ninstall_usd_per_cable = 0\ninstall_usd_per_switch = 0\n\
         spares_share = 0\noob_usd_per_port = 0\n",
    );
    let (_, _, z) = run(&zero).unwrap();
    assert!(near(z.cost.network_capex_usd, hardware));
    assert!(near(
        z.cost.network_opex_usd_per_year,
        c.energy_usd_per_year
    ));
    // A share above 1 is refused naming the key.
    let e = run(&scenario("[cost]\nspares_share = 2\n"))
        .unwrap_err()
        .to_string();
    assert!(e.contains("cost.spares_share"), "{e}");
}

/// Every link of a planned fabric has a length, a medium and delay = length x ns/m.
#[test]
fn every_planned_link_has_length_medium_and_delay() {
    let s = scenario(
        "[cluster]\ngpus = 512\n[fabric]\nprofile = \"ib-ndr\"\n[layout]\nleaf = \"top-of-rack\"\n",
    );
    let (d, t, _) = run(&s).unwrap();
    for l in &t.links {
        assert!(l.length_m > 0.0);
        let Medium::Catalog(_) = l.medium else {
            panic!("unassigned medium");
        };
        let ns = l.delay.ps() as f64 / 1000.0 / l.length_m;
        assert!((4.4..=5.1).contains(&ns), "{ns} ns/m");
    }
    assert_eq!(d.switch.id, "qm9700");
}

/// A build error (radix too small for the fixed tier count) is reported on the scenario key.
#[test]
fn topology_errors_point_at_the_scenario_key() {
    let s =
        scenario("[cluster]\ngpus = 8192\n[fabric]\nprofile = \"ib-ndr\"\n[topology]\ntiers = 2\n");
    let e = run(&s).unwrap_err();
    assert_eq!(e.file, "t.toml");
    assert!(
        e.key == "topology.tiers" || e.key == "topology.switch" || e.key == "cluster.gpus",
        "{e}"
    );
}

/// Property test over random scenarios (sizes, fabrics, kinds, oversubscription, placements):
/// the bill of materials is consistent with the graph it counts.
/// - one NIC per NIC port; switch ports used never exceed the radix;
/// - transceivers: module ports cover both ends of every optical link, and waste at most one
///   partly used module per (node, module type);
/// - two-link cables: at least half the links they carry, at most that plus one per group;
/// - CAPEX is the sum of its parts; every link has a length, a medium and a delay.
#[test]
fn bom_is_consistent_with_the_graph_for_random_scenarios() {
    let mut rng = fabricsim_core::rng::Rng::new(2026);
    let fabrics = ["ib-ndr", "ib-xdr", "roce-400g", "roce-800g"];
    let kinds = ["fat-tree", "rail-optimized"];
    let leaves = ["top-of-rack", "end-of-row", "network-row"];
    let spines = ["end-of-row", "network-row"];
    for _ in 0..24 {
        let gpus = 8 * (1 + rng.below(1500));
        let fabric = fabrics[rng.below(4) as usize];
        let text = format!(
            "[cluster]\ngpus = {gpus}\n[fabric]\nprofile = \"{fabric}\"\n[topology]\nkind = \"{}\"\noversubscription = \"{}:1\"\n[layout]\nservers_per_rack = {}\nracks_per_row = {}\nleaf = \"{}\"\nspine = \"{}\"\n",
            kinds[rng.below(2) as usize],
            1 + rng.below(3),
            1 + rng.below(8),
            4 + rng.below(20),
            leaves[rng.below(3) as usize],
            spines[rng.below(2) as usize],
        );
        let s = scenario(&text);
        let (d, t, p) = run(&s).unwrap_or_else(|e| panic!("{text}\n{e}"));
        let c = &d.catalog;
        assert_eq!(
            p.bom.total(bom::Category::Nic).0,
            t.num_hosts() as u64,
            "{text}"
        );
        for x in &p.bom.tiers {
            assert!(x.ports_used <= x.ports_total, "{text}");
        }
        let rate = d.profile.ports.rate_gbps;
        let mut optical_ends = 0u64;
        let mut per_switch: Vec<(u32, usize)> = Vec::new();
        let mut pair_links = 0u64;
        for l in &t.links {
            assert!(l.length_m > 0.0 && l.delay.ps() > 0, "{text}");
            let Medium::Catalog(def) = l.medium else {
                panic!("{text}: link without medium");
            };
            match &p.media.defs[def as usize] {
                MediumDef::Optics { lower, upper, .. } => {
                    optical_ends += 2;
                    for (end, m) in [(0, lower), (1, upper)] {
                        let node = t.ports[l.ends[end].idx()].node.0;
                        per_switch.push((node, *m));
                    }
                }
                MediumDef::Cable { shape, .. } if shape.links() == 2 => pair_links += 1,
                MediumDef::Cable { .. } => {}
            }
        }
        per_switch.sort_unstable();
        per_switch.dedup();
        let module_groups = per_switch.len() as u64;
        let module_ports: u64 = p
            .bom
            .lines
            .iter()
            .filter(|l| l.category == bom::Category::Transceiver)
            .map(|l| {
                let x = c.transceivers.iter().find(|x| x.id == l.id).unwrap();
                l.count * x.ports_at(rate).unwrap() as u64
            })
            .sum();
        assert!(module_ports >= optical_ends, "{text}");
        assert!(module_ports <= optical_ends + module_groups, "{text}");
        let paired_cables: u64 = p
            .bom
            .lines
            .iter()
            .filter(|l| l.category == bom::Category::Cable)
            .filter(|l| {
                let x = c.cables.iter().find(|x| x.id == l.id).unwrap();
                x.shape_at(rate).unwrap().links() == 2
            })
            .map(|l| l.count)
            .sum();
        assert!(2 * paired_cables >= pair_links, "{text}");
        assert!(paired_cables <= pair_links, "{text}");
        let k = &p.cost;
        let parts: f64 = k.capex_lines().iter().map(|l| l.1).sum();
        assert!(
            (parts - k.network_capex_usd).abs() < 1e-3 * parts.max(1.0),
            "{text}"
        );
    }
}

/// `[layout] optics = "lpo"`: every optical link the plan can carry on linear-drive modules
/// takes them, the optics draw less and their share of network power falls; the default plans
/// DSP modules only. The switch's watts with its cages' optics exceed its bare box.
#[test]
fn linear_drive_optics_cut_the_optics_share_of_network_power() {
    let plan = |optics: &str| {
        let s = Scenario::parse(
            "t.toml",
            &format!("[cluster]\ngpus = 1024\n[layout]\noptics = \"{optics}\"\n"),
        )
        .unwrap();
        let (_, t, p) = run(&s).unwrap();
        (t, p)
    };
    let ((td, dsp), (tl, lpo)) = (plan("dsp"), plan("lpo"));
    let c = Catalog::builtin().unwrap();
    // The drives of the modules the plan's links use.
    let drives = |t: &Topology, p: &Plan| {
        let mut d: Vec<Drive> = t
            .links
            .iter()
            .filter_map(|l| match l.medium {
                Medium::Catalog(i) => Some(&p.media.defs[i as usize]),
                _ => None,
            })
            .filter_map(|m| match m {
                MediumDef::Optics { lower, upper, .. } => {
                    Some([c.transceivers[*lower].drive, c.transceivers[*upper].drive])
                }
                _ => None,
            })
            .flatten()
            .collect();
        d.sort();
        d.dedup();
        d
    };
    assert_eq!(drives(&td, &dsp), vec![Drive::Dsp]);
    assert_eq!(drives(&tl, &lpo), vec![Drive::Lpo]);
    assert!(lpo.power.optics_kw < dsp.power.optics_kw);
    assert!(lpo.power.optics_share() < dsp.power.optics_share());
    assert!(dsp.power.optics_share() > 0.0);
    let (bare, full) = (
        dsp.power.switch_without_optics_w().unwrap(),
        dsp.power.switch_with_optics_w().unwrap(),
    );
    assert!(full > bare && dsp.power.switch_optics_kw < dsp.power.optics_kw);
    let e = Scenario::parse(
        "t.toml",
        "[cluster]\ngpus = 64\n[layout]\noptics = \"cpo\"\n",
    )
    .unwrap();
    let e = run(&e).unwrap_err().to_string();
    assert!(
        e.contains("layout.optics") && e.contains("dsp, lpo, lro"),
        "{e}"
    );
}
