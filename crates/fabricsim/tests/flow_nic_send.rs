//! The sender NIC's send stage in the flow engine (`flow::nic_send`): a victim flow beside an
//! incast flow on one NIC, against the closed forms of the NIC's per-QP round robin while the
//! switch buffers absorb the incast, and of the held NIC once its backlog fills the ingress
//! after the NIC (IB credits per VL).

use fabricsim::flow::{self, FlowParams, paths};
use fabricsim::message::MessageDag;
use fabricsim::sim::{CreditParams, FlowControl, SimParams};
use fabricsim::topology::{HostId, Kind, Tiers, Topology, TopologySpec, build};
use fabricsim::units::{BitRate, Time};

/// 32 hosts, 8-port switches: 4 hosts per leaf (hosts 0-3 on leaf 0, 4-7 on leaf 1).
fn fat_tree() -> Topology {
    build(&TopologySpec {
        gpus: 32,
        gpus_per_node: 1,
        nics_per_node: 1,
        kind: Kind::FatTree,
        tiers: Tiers::Fixed(2),
        oversubscription: (1, 1),
        switch_radix: 8,
        port_rate: BitRate::gbps(400),
    })
    .unwrap()
}

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
    let topo = fat_tree();
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
