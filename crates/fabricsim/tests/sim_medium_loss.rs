//! `[faults] link_loss = "medium"`: every planned link loses what its medium's pre-FEC BER
//! costs after RS(544,514) (`plan::link_errors::link_faults`, `mech::fec`), so changing the
//! medium the plan picks for a tier changes those links' loss and the run.

use fabricsim_cases::sim_util::{run_setup as run, setup};
use std::path::Path;

use fabricsim::scenario::Scenario;
use fabricsim::scenario::sim::{SimSetup, build};
use fabricsim::sim::{Fault, LinkLoss};

/// 64 GPUs on one leaf tier; the leaf in the rack (short copper) or at the end of the row
/// (multimode optics); the given `[faults]` lines.
fn scenario(leaf: &str, faults: &str) -> String {
    format!(
        "[cluster]\ngpus = 64\n[layout]\nleaf = \"{leaf}\"\n\
         [traffic]\nkind = \"permutation\"\nbytes = \"1MB\"\n[faults]\n{faults}"
    )
}

/// The pre-FEC BER each link was given (every link once, in link order).
fn link_bers(s: &SimSetup) -> Vec<f64> {
    s.faults
        .faults
        .iter()
        .map(|f| match f {
            Fault::Loss {
                loss: LinkLoss::Fec { ber, .. },
                ..
            } => *ber,
            other => panic!("not a medium loss: {other:?}"),
        })
        .collect()
}

#[test]
fn each_link_takes_the_loss_of_the_medium_the_plan_chose() {
    let on = "link_loss = \"medium\"\n";
    let copper = setup(&scenario("top-of-rack", on));
    let optics = setup(&scenario("end-of-row", on));
    let table = fabricsim_input::link_errors::table().unwrap();
    let typical = |c| {
        fabricsim_input::link_errors::find(&table, c, 100)
            .unwrap()
            .typical_ber
    };
    use fabricsim::catalog::MediumClass::{Acc, Dac, Sr};
    // Every link has its loss; in the rack the plan cables with DAC and ACC, from the end of
    // the row with SR optics, each at its class's typical BER.
    assert_eq!(link_bers(&copper).len(), copper.net.topo.links.len());
    let mut c = link_bers(&copper);
    c.dedup();
    c.sort_by(f64::total_cmp);
    c.dedup();
    assert_eq!(c, vec![typical(Dac), typical(Acc)]);
    assert!(link_bers(&optics).iter().all(|&b| b == typical(Sr)));
    // The default keeps the scenario's own loss: no per-link faults.
    assert!(setup(&scenario("end-of-row", "")).faults.faults.is_empty());
}

#[test]
fn a_degraded_medium_class_loses_packets_only_where_the_plan_uses_it() {
    // Multimode optics at a pre-FEC BER of 1.5e-3, above the 2.4e-4 the FEC is designed to:
    // about one codeword in a hundred fails.
    let faults = "link_loss = \"medium\"\n[faults.class_ber]\nsr = 1.5e-3\n";
    let copper = run(&setup(&scenario("top-of-rack", faults)));
    let optics = run(&setup(&scenario("end-of-row", faults)));
    assert_eq!(copper.counters.drops.corruption, 0);
    let lost = optics.counters.drops.corruption as f64 / optics.counters.data_packets as f64;
    let mtu = setup(&scenario("end-of-row", faults))
        .params
        .mtu_frame_wire_bytes();
    // Each data packet crosses two SR links (NIC-leaf, leaf-NIC) losing at the MTU frame's rate.
    let per_link = fabricsim_mech::fec::KP4.frame_loss(1.5e-3, mtu as u64);
    let expect = 1.0 - (1.0 - per_link).powi(2);
    let n = optics.counters.data_packets as f64;
    let se = (expect * (1.0 - expect) / n).sqrt();
    assert!(
        (lost - expect).abs() < 5.0 * se + 0.1 * expect,
        "lost {lost:.4} of {n} packets, expected {expect:.4} (se {se:.4})"
    );
    // The run pays for it: the optics' run finishes later.
    assert!(
        optics.summary.max_fct_ps > copper.summary.max_fct_ps,
        "{:?} vs {:?}",
        optics.summary.max_fct_ps,
        copper.summary.max_fct_ps
    );
    assert_eq!(optics.summary.messages_completed, 64);
}

#[test]
fn medium_loss_keys_are_checked() {
    let err = |faults: &str| {
        build(
            &Scenario::parse("t.toml", &scenario("end-of-row", faults)).unwrap(),
            Path::new("."),
            None,
        )
        .err()
        .unwrap()
        .to_string()
    };
    let e = err("link_loss = \"cable\"\n");
    assert!(
        e.contains("faults.link_loss") && e.contains("none, medium"),
        "{e}"
    );
    let e = err("link_loss = \"medium\"\n[faults.class_ber]\nlr = 1e-5\n");
    assert!(
        e.contains("faults.class_ber.lr") && e.contains("dac, acc"),
        "{e}"
    );
    let e = err("[faults.class_ber]\nsr = 1e-5\n");
    assert!(e.contains("link_loss"), "{e}");
    let e = err("link_loss = \"medium\"\n[faults.class_ber]\nsr = 0.2\n");
    assert!(e.contains("0 <= BER < 0.01"), "{e}");
}
