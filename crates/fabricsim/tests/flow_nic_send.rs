//! The sender NIC's send stage in the flow engine (`flow::nic_send`): a victim flow beside an
//! incast flow on one NIC, against the closed forms of the NIC's per-QP round robin while the
//! switch buffers absorb the incast, and of the held NIC once its backlog fills the ingress
//! after the NIC (IB credits per VL); and a dense all-to-all whose caps the send stage keeps.

mod flow_cases;

use flow_cases::fat_tree;

use fabricsim::flow::{self, FlowParams, paths};
use fabricsim::message::MessageDag;
use fabricsim::sim::{CreditParams, FlowControl, SimParams};
use fabricsim::topology::HostId;
use fabricsim::units::Time;

/// InfiniBand credits with `kb` KB per VL in the switches.
fn ib(kb: u64) -> SimParams {
    let mut p = SimParams::ib();
    let mut c = CreditParams::default_ib();
    c.switch_vl_buffer_bytes = kb << 10;
    p.flow_control = FlowControl::Credits(c);
    p
}

const MB: u64 = 1 << 20;
const L: f64 = 400e9;

/// Hosts 1, 2 and 3 send 1 MB each to host 0 (their leaf's egress to host 0 serves each at
/// L/3), and host 1 sends a 1 MB victim to host 4 on another leaf: (the victim's FCT beside
/// the incast, alone).
fn victim_fct(p: &SimParams) -> (f64, f64) {
    // 32 hosts, 8-port switches: 4 hosts per leaf (hosts 0-3 on leaf 0, 4-7 on leaf 1).
    let topo = fat_tree(32, 8);
    let mut dag = MessageDag::default();
    for s in 1..=3 {
        dag.push(HostId(s), HostId(0), MB, Time::ZERO, &[]);
    }
    dag.push(HostId(1), HostId(4), MB, Time::ZERO, &[]);
    let (r, _) = flow::run(&topo, p, &dag, &FlowParams::default()).unwrap();
    let mut alone = MessageDag::default();
    alone.push(HostId(1), HostId(4), MB, Time::ZERO, &[]);
    let (a, _) = flow::run(&topo, p, &alone, &FlowParams::default()).unwrap();
    let fct = |r: &fabricsim::sim::RunResult, i: usize| r.messages[i].fct_ps.unwrap() as f64;
    (fct(&r, 3), fct(&a, 0))
}

/// Buffers absorb (4 MB per VL): NIC 1 serves its two QPs in turn, L/2 each, while the incast
/// QP puts its 1 MB on the wire (its backlog, 1 MB less the L/3 it delivers meanwhile, a third
/// of its wire bytes, fits in the 4 MB after the NIC). The victim's wire bytes D = 8 x wire / L
/// at L/2 take 2D: its FCT is its lone FCT plus D (the max-min rate, L - L/3, would give it
/// D/2 more).
#[test]
fn a_victim_gets_half_the_line_while_the_buffers_absorb_the_incast_flow_beside_it() {
    let p = ib(4096);
    let d = paths::wire_bytes(&p, MB) as f64 * 8.0 / L * 1e12;
    let (fct, alone) = victim_fct(&p);
    let want = alone + d;
    assert!((fct - want).abs() < 1e-3 * want, "{fct} ps, want {want} ps");
}

/// Back-pressure reaches the NIC (256 KB per VL): the incast QP's backlog grows at
/// L/2 - L/3 = L/6 until it fills the 256 KB ingress after the NIC, T1 = 8 x 262,144 / (L/6) =
/// 31.46 us, when each QP has put L/2 x T1 = 786 KB on the wire. Then the NIC's link waits
/// for credits, which come back at the incast flow's rate L/3, and the round robin serves both
/// QPs at it: the victim's other 8 x wire - L/2 x T1 bits take 3 (8 x wire - L/2 x T1) / L.
/// Its FCT: its lone FCT - D + T1 + that.
#[test]
fn a_victim_moves_at_the_incast_flows_rate_once_the_nic_is_held() {
    let p = ib(256);
    let bits = paths::wire_bytes(&p, MB) as f64 * 8.0;
    let t1 = 8.0 * 262_144.0 / (L / 2.0 - L / 3.0);
    let rest = (bits - L / 2.0 * t1) / (L / 3.0);
    let (fct, alone) = victim_fct(&p);
    let want = alone - bits / L * 1e12 + (t1 + rest) * 1e12;
    assert!((fct - want).abs() < 1e-3 * want, "{fct} ps, want {want} ps");
}

/// `MaxMin::set_cap`, which the send stage caps flows with, lowers and lifts a flow's cap:
/// links 0 and 1 of 100 bit/s, flow 0 on link 0, flow 1 on both, flow 2 on link 1. Uncapped,
/// each link splits evenly: 50, 50, 50. Flow 0 capped at 20: flow 1 stays at link 1's share,
/// 50 (link 0 keeps 30 spare). Flow 2 capped at 10 too: flow 1 takes 80, what link 0 leaves it.
/// Both caps lifted: 50, 50, 50 again.
#[test]
fn a_flows_cap_can_fall_and_rise_between_solves() {
    use fabricsim::flow::{MaxMin, NO_CAP, Routes};
    let mut routes = Routes::new();
    let r = [routes.push(&[0]), routes.push(&[0, 1]), routes.push(&[1])];
    let mut s = MaxMin::new(vec![100, 100], routes, 3);
    for f in 0..3 {
        s.add(f, r[f as usize], NO_CAP);
    }
    let mut changed = Vec::new();
    let mut solve = |s: &mut MaxMin| {
        s.resolve(&mut changed);
        [0, 1, 2].map(|f| s.rate(f))
    };
    assert_eq!(solve(&mut s), [50, 50, 50]);
    s.set_cap(0, 20);
    assert_eq!(solve(&mut s), [20, 50, 50]);
    s.set_cap(2, 10);
    assert_eq!(solve(&mut s), [20, 80, 10]);
    s.set_cap(0, NO_CAP);
    s.set_cap(2, NO_CAP);
    assert_eq!(solve(&mut s), [50, 50, 50]);
}

/// `MaxMin::set_cap` re-solves as finishing the flow and starting it again with the new cap
/// would: on random routes and caps (with and without per-input-port service, which the
/// engine turns on where the send stage runs), after each batch of cap changes the
/// incremental rates equal a from-scratch solve's with the same caps.
#[test]
fn capped_incrementally_equals_from_scratch() {
    use fabricsim::flow::{MaxMin, NO_CAP, Routes};
    use fabricsim::rng::{Rng, Stream};
    const G: u64 = 1_000_000_000;
    let cap_of = |rng: &mut Rng| match rng.below(3) {
        0 => NO_CAP,
        _ => (1 + rng.below(40)) * G / 2,
    };
    for per_port in [false, true] {
        for seed in 0..200 {
            let mut rng = Rng::stream(seed, Stream::Test(0x6e1c), per_port as u64);
            let nl = 3 + rng.below(10) as usize;
            let link_caps: Vec<u64> = (0..nl).map(|_| (1 + rng.below(40)) * G).collect();
            let nf = 4 + rng.below(30) as usize;
            let mut routes_of = Vec::new();
            for _ in 0..nf {
                let mut links: Vec<u32> = Vec::new();
                let len = 1 + rng.below(3) as usize;
                while links.len() < len.min(nl) {
                    let l = rng.below(nl as u64) as u32;
                    if !links.contains(&l) {
                        links.push(l);
                    }
                }
                routes_of.push(links);
            }
            let mut caps: Vec<u64> = (0..nf).map(|_| cap_of(&mut rng)).collect();
            let build = |caps: &[u64]| {
                let mut routes = Routes::new();
                for r in &routes_of {
                    routes.push(r);
                }
                let mut s = MaxMin::new(link_caps.clone(), routes, nf);
                if per_port {
                    s = s.with_port_service(|l| l % 3 == 0);
                }
                for (f, &c) in caps.iter().enumerate() {
                    s.add(f as u32, f as u32, c);
                }
                s.resolve(&mut Vec::new());
                s
            };
            let mut inc = build(&caps);
            for round in 0..6 {
                for _ in 0..1 + rng.below(3) {
                    let f = rng.below(nf as u64) as usize;
                    caps[f] = cap_of(&mut rng);
                    inc.set_cap(f as u32, caps[f]);
                }
                inc.resolve(&mut Vec::new());
                let fresh = build(&caps);
                let rates = |s: &MaxMin| (0..nf as u32).map(|f| s.rate(f)).collect::<Vec<_>>();
                assert_eq!(rates(&inc), rates(&fresh), "seed {seed} round {round}");
            }
        }
    }
}

#[test]
fn the_lossless_models_end_when_too_many_flows_are_active_at_once() {
    // Every host sends 4 KB to every other at once on credits: 128 hosts start 16,256 flows,
    // within `fluid::LOSSLESS_MODELS_MAX_ACTIVE` (20,000): port service and the send stage stay
    // on; 160 hosts start 25,440: both end at the first solve, before the send stage set a cap.
    for (hosts, ends) in [(128u32, false), (160, true)] {
        let topo = fat_tree(hosts, 32);
        let mut dag = MessageDag::default();
        for s in 0..hosts {
            for k in 1..hosts {
                dag.push(HostId(s), HostId((s + k) % hosts), 4 << 10, Time::ZERO, &[]);
            }
        }
        let (r, st) = flow::run(&topo, &ib(4096), &dag, &FlowParams::default()).unwrap();
        assert_eq!(st.peak_active, u64::from(hosts * (hosts - 1)));
        let first_finish = r.messages.iter().filter_map(|m| m.finish_ps).min().unwrap();
        match st.lossless_models_end_ps {
            Some(t) => {
                assert!(ends, "{hosts} hosts: ended at {t} ps");
                assert!(t < first_finish, "ended at the first solve");
                assert_eq!(st.nic_caps, 0);
            }
            None => assert!(!ends, "{hosts} hosts: the models did not end"),
        }
    }
}

#[test]
fn the_lossless_models_end_once_their_port_work_is_spent() {
    // The 128-host all-to-all of the test above keeps the models with the default budget; with
    // a budget of 1 flow-fill its first solve (16,256 flows through links shared per port)
    // spends it, and the models end at the next solve.
    let hosts = 128u32;
    let topo = fat_tree(hosts, 32);
    let mut dag = MessageDag::default();
    for s in 0..hosts {
        for k in 1..hosts {
            dag.push(HostId(s), HostId((s + k) % hosts), 4 << 10, Time::ZERO, &[]);
        }
    }
    let fp = FlowParams {
        lossless_max_port_work: 1,
        ..FlowParams::default()
    };
    let (_, st) = flow::run(&topo, &ib(4096), &dag, &fp).unwrap();
    // The first event time's solves (a rate solve, then one under the send stage's caps:
    // `nic_send::ROUNDS`) ran per port, and only they did.
    assert!((1..=2).contains(&st.solve.port_solves), "{:?}", st.solve);
    assert!(
        st.solve.port_work >= u64::from(hosts * (hosts - 1)),
        "{:?}",
        st.solve
    );
    assert!(
        st.lossless_models_end_ps.is_some(),
        "the models did not end"
    );
}

#[test]
fn an_all_to_all_ends_its_flows_within_a_leaf_with_the_others() {
    // Every host of the 128-GPU ib-ndr fabric sends 16 KB to every other at once, the lossless
    // models forced on (its 130,048 adaptive subflows are above their limit). Each NIC's round
    // robin gives its 127 QPs 1/127 of the line each, which offers every receiver's egress
    // exactly its line, so the flows within a leaf end with the others (packet engine: 39.6
    // us against 40.2; `flow_calibrate -- dense 128 16 forced`). Port service gives them an
    // input port each at that egress, more than a flow from another leaf gets; the send stage
    // caps them at the round robin's share and must keep the caps once the flows from other
    // leaves reach it (lifted: 22.6 us against 39.4).
    let (topo, p) = flow_cases::fabric(128, "ib-ndr");
    let fp = FlowParams {
        lossless_max_active: u64::MAX,
        lossless_max_port_work: u64::MAX,
        ..fabricsim::engine_choice::flow_params(&topo, &p)
    };
    let dag = flow_cases::all_to_all(128, 16 << 10);
    let (r, st) = flow::run(&topo, &p, &dag, &fp).unwrap();
    assert!(st.lossless_models_end_ps.is_none() && st.solve.port_solves > 0);
    let leaf = |h: u32| topo.peer_node(topo.host_port(HostId(h)));
    let mut sum = [(0.0, 0u32); 2];
    for (m, res) in dag.messages.iter().zip(&r.messages) {
        let s = &mut sum[(leaf(m.src.0) != leaf(m.dst.0)) as usize];
        *s = (s.0 + res.fct_ps.unwrap() as f64, s.1 + 1);
    }
    let [within, across] = sum.map(|(t, n)| t / f64::from(n));
    assert!(
        within >= 0.95 * across,
        "within a leaf {within} ps, across {across} ps"
    );
}
