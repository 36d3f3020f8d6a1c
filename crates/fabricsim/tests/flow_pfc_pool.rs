//! The flow engine's PFC shared pool (`fabricsim_flow::pfc_pause::Ingress`) against the packet
//! engine's: the headroom each reserves per port is the same figure. Here, not in the flow
//! crate, because the flow engine does not depend on the packet engine.

use fabricsim_core::message::MessageDag;
use fabricsim_core::topology::HostId;
use fabricsim_core::units::{BitRate, Time};
use fabricsim_flow::pfc_pause::Ingress;
use fabricsim_mech::lossless_scenarios::clos2;
use fabricsim_mech::params::{FlowControl, PfcParams, SimParams};

#[test]
fn the_shared_pool_is_the_packet_engines() {
    // The packet engine reports the headroom of its switch ports (`FlowControlResult`):
    // on a Clos whose links are all alike it is one figure, and a leaf of 4 hosts under 2
    // spines reserves it on each of its 6 ports for the one lossless class.
    let (topo, leaves, _) = clos2(2, 2, 4, BitRate::gbps(400), Time::from_ns(100));
    let mut p = SimParams::roce();
    p.flow_control = FlowControl::Pfc(PfcParams::tuned(p.data_tc, p.mtu_frame_wire_bytes()));
    let mut dag = MessageDag::default();
    dag.push(HostId(0), HostId(5), 64 << 10, Time::ZERO, &[]);
    let r =
        fabricsim_packet::run(&topo, &p, &dag, &Default::default(), Default::default()).unwrap();
    let fc = r.flow_control.expect("PFC");
    assert_eq!(fc.headroom_bytes_min, fc.headroom_bytes_max);
    let ing = Ingress::of(&topo, &p, leaves[0]).expect("a switch under PFC");
    assert_eq!(
        ing.shared_bytes,
        p.switch_buffer_bytes - 6 * fc.headroom_bytes_max
    );
    // Dynamic alpha 1/8 of the free pool (`PfcParams::tuned`).
    let used = 1e6;
    assert_eq!(ing.threshold(used), (ing.shared_bytes as f64 - used) / 8.0);
    let nic = topo.nics[0];
    assert!(Ingress::of(&topo, &p, nic).is_none());
}
