//! `credits`: the credit cap of `flow::credits` on long links, packet vs flow.

use fabricsim::flow::paths;
use fabricsim::message::MessageDag;
use fabricsim::sim::{self, Faults, RunOptions};
use fabricsim::topology::HostId;
use fabricsim::units::Time;
use fabricsim_cases::flow_cases;

/// Checks the credit cap of `flow::credits` on long links (no constant: the closed form).
///
/// A 4 MB flow between leaves of a 128-GPU ib-ndr fabric whose leaf-spine links are 0, 1, 2,
/// 5 and 10 km long (5 ns/m): the packet and flow FCT, their error and the cap. No arguments.
#[derive(clap::Args)]
pub struct Args {}

/// A single 4 MB flow between leaves of a 128-GPU ib-ndr fabric whose leaf-spine links are
/// `km` long (5 ns/m): packet and flow FCT and the `flow::credits` closed form of the cap.
pub fn run() {
    println!(
        "{:>6} {:>14} {:>14} {:>8} {:>12}",
        "km", "packet us", "flow us", "err", "cap Gb/s"
    );
    for km in [0.0, 1.0, 2.0, 5.0, 10.0] {
        let (mut topo, p) = flow_cases::fabric(128, "ib-ndr");
        for l in topo.links.iter_mut().filter(|l| l.tier >= 1) {
            l.delay = Time::from_ps(l.delay.ps() + (km * 1000.0 * 5_000.0) as u64);
        }
        let mut dag = MessageDag::default();
        dag.push(HostId(0), HostId(100), 4 << 20, Time::ZERO, &[]);
        let pr = sim::run(&topo, &p, &dag, &Faults::default(), RunOptions::default()).unwrap();
        let fp = fabricsim::engine_choice::flow_params(&topo, &p);
        let (fr, _) = fabricsim::flow::run(&topo, &p, &dag, &fp).unwrap();
        let caps = fabricsim::flow::credits::limit(&topo, &p, paths::capacities(&topo));
        let cap = caps.iter().min().copied().unwrap_or(0);
        let (a, b) = (
            pr.messages[0].fct_ps.unwrap() as f64,
            fr.messages[0].fct_ps.unwrap() as f64,
        );
        println!(
            "{km:>6} {:>14.2} {:>14.2} {:>+7.1}% {:>12.2}",
            a / 1e6,
            b / 1e6,
            100.0 * (b - a) / a,
            cap as f64 / 1e9
        );
    }
}
