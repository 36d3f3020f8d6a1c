//! The three peer scenarios (ns-3 HPCC format, ../shared/peer-scenarios) parse into the fat
//! trees their README describes, and the k=8 permutation runs to completion.

use fabricsim::Source;
use fabricsim::io::ns3;
use fabricsim::sim::{Faults, SimParams, Status};
use fabricsim::units::Time;
use fabricsim_cases::sim_util::{peer_dir, run};

fn load(
    stem: &str,
) -> (
    fabricsim::io::imported::ImportedTopology,
    fabricsim::message::MessageDag,
) {
    let dir = peer_dir();
    let read = |f: String| {
        let path = dir.join(&f);
        Source::new(f, std::fs::read_to_string(path).unwrap())
    };
    let t = ns3::read_topology(&read(format!("{stem}.topo.txt"))).unwrap();
    let d = ns3::read_flows(&read(format!("{stem}.flow.txt")), &t, 2).unwrap();
    (t, d)
}

#[test]
fn peer_scenarios_parse_as_described() {
    // (stem, hosts, switches, links, flows) from the peer-scenarios README.
    for (stem, hosts, switches, links, flows) in [
        ("ft8_perm128", 128, 80, 384, 128),
        ("ft8_incast128", 128, 80, 384, 127),
        ("ft16_perm1024", 1024, 320, 3072, 1024),
    ] {
        let (t, d) = load(stem);
        t.topo.check().unwrap();
        assert_eq!(t.topo.num_hosts(), hosts, "{stem}");
        assert_eq!(t.topo.switches().count(), switches, "{stem}");
        assert_eq!(t.topo.links.len(), links, "{stem}");
        assert_eq!(t.topo.tiers, 3, "{stem}");
        assert_eq!(d.messages.len(), flows, "{stem}");
        assert!(
            d.messages
                .iter()
                .all(|m| m.bytes == 2_000_000 && m.start == Time::ZERO)
        );
        assert!(t.topo.links.iter().all(|l| l.delay == Time::from_ns(1000)));
        // 1:1 fat tree: every host pair in different pods has (k/2)^2 paths.
        let k = if hosts == 128 { 8 } else { 16 };
        let far = fabricsim::topology::HostId(hosts as u32 - 1);
        assert_eq!(
            t.topo
                .routing
                .path_count(&t.topo, fabricsim::topology::HostId(0), far),
            (k / 2) * (k / 2)
        );
    }
}

#[test]
fn k8_permutation_completes() {
    let (t, d) = load("ft8_perm128");
    let r = run(&t.topo, &SimParams::roce(), &d, &Faults::default());
    assert_eq!(r.sim.status, Status::Complete);
    assert_eq!(r.counters.bytes_delivered, 128 * 2_000_000);
    // No flow beats its ideal completion time.
    assert!(
        r.messages
            .iter()
            .all(|m| m.fct_ps.unwrap() >= m.ideal_fct_ps)
    );
}
