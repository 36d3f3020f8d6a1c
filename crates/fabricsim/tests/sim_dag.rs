//! The message API: a message posted when its dependencies complete starts exactly at the
//! latest dependency's completion plus its delay; several QPs of one host share its link; an
//! NVLink transfer takes bytes / NVLink rate.

use fabricsim_cases::sim_util;

use fabricsim::message::{MessageDag, Path};
use fabricsim::sim::{Faults, SimParams};
use fabricsim::topology::HostId;
use fabricsim::units::{BitRate, Time};
use fabricsim_cases::sim_util::{run, star};

#[test]
fn dependants_post_at_the_last_completion_plus_delay() {
    let t = star(&[BitRate::gbps(100); 4], Time::from_ns(200));
    let p = SimParams::roce();
    let mut dag = MessageDag::default();
    let a = dag.push(HostId(0), HostId(1), 50_000, Time::ZERO, &[]);
    let b = dag.push(HostId(2), HostId(3), 200_000, Time::from_ns(10), &[]);
    let c = dag.push(HostId(1), HostId(2), 10_000, Time::ZERO, &[a, b]);
    dag.messages[c as usize].delay = Time::from_ns(777);
    // A start time later than the dependencies wins.
    let d = dag.push(HostId(3), HostId(0), 10_000, Time::from_ms(1), &[a]);
    let r = run(&t, &p, &dag, &Faults::default());
    let m = &r.messages;
    let last = m[a as usize]
        .finish_ps
        .unwrap()
        .max(m[b as usize].finish_ps.unwrap());
    assert_eq!(m[c as usize].start_ps, Some(last + 777_000));
    assert_eq!(m[d as usize].start_ps, Some(Time::from_ms(1).ps()));
}

#[test]
fn queue_pairs_of_one_host_share_its_link_round_robin() {
    // Two QPs from host 0 to hosts 1 and 2 post 1 MB each at once: served packet by packet in
    // turn (the first gets one packet out before the second joins), both finish within two
    // packet times of each other, at about twice the solo time.
    let t = star(&[BitRate::gbps(100); 3], Time::from_ns(200));
    let p = SimParams::roce();
    let mut dag = MessageDag::default();
    dag.push(HostId(0), HostId(1), 1_000_000, Time::ZERO, &[]);
    dag.push(HostId(0), HostId(2), 1_000_000, Time::ZERO, &[]);
    let r = run(&t, &p, &dag, &Faults::default());
    let (f0, f1) = (
        r.messages[0].recv_ps.unwrap(),
        r.messages[1].recv_ps.unwrap(),
    );
    let packet = BitRate::gbps(100)
        .serialize(sim_util::wire(&p, p.mtu_bytes))
        .ps();
    assert!(f0.abs_diff(f1) <= 2 * packet, "{f0} vs {f1}");
    let solo = r.messages[0].ideal_fct_ps;
    let ratio = r.messages[0].fct_ps.unwrap() as f64 / solo as f64;
    assert!((1.9..2.05).contains(&ratio), "{ratio}");
}

#[test]
fn nvlink_transfers_take_bytes_over_the_nvlink_rate() {
    let t = star(&[BitRate::gbps(100); 2], Time::from_ns(200));
    let mut dag = MessageDag {
        nvlink_rate: Some(BitRate::gbps(3600)),
        ..MessageDag::default()
    };
    let m = dag.push(HostId(0), HostId(1), 9_000_000, Time::ZERO, &[]);
    dag.messages[m as usize].path = Path::NvLink;
    let r = run(&t, &SimParams::roce(), &dag, &Faults::default());
    assert_eq!(
        r.messages[0].fct_ps,
        Some(BitRate::gbps(3600).serialize(9_000_000).ps())
    );
}
