//! 24-bit PSNs on the packet engine (IBA Vol. 1 9.2: the BTH PSN field; 9.7.5.1.1: serial
//! comparison against the expected PSN). A message that crosses the wrap, with losses around
//! it, must run exactly as the same message far from the wrap: the PSN offset may change no
//! decision of the transport.

use fabricsim::message::MessageDag;
use fabricsim::sim::psn::{InitialPsn, PSN_MASK};
use fabricsim::sim::{Dir, Fault, Faults, LinkLoss, RunResult, SimParams, Transport};
use fabricsim::topology::{HostId, LinkId};
use fabricsim::units::{BitRate, Time};
use fabricsim_cases::sim_util::{pair, run};

const PACKETS: u32 = 1000;
/// Packets before the wrap: the second message's packet 500 has PSN 0.
const BEFORE_WRAP: u32 = 1500;

fn case(kind: Transport, initial: InitialPsn) -> RunResult {
    let t = pair(1, BitRate::gbps(100), &[Time::from_ns(200); 2]);
    let mut p = SimParams::roce();
    p.transport = kind;
    p.window_packets = if kind == Transport::SelectiveRepeat {
        64
    } else {
        0
    };
    p.timeout_exp = 4; // 65.5 us, so lost ACKs at the end are recovered within the run
    p.initial_psn = initial;
    p.seed = 11;
    let bytes = PACKETS as u64 * p.mtu_bytes as u64;
    // Two messages on one QP: their PSN spans meet the wrap inside the second.
    let mut dag = MessageDag::default();
    dag.push(HostId(0), HostId(1), bytes, Time::ZERO, &[]);
    dag.push(HostId(0), HostId(1), bytes, Time::ZERO, &[]);
    let faults = Faults {
        faults: vec![
            // The data packet with the last PSN before the wrap is lost on the first link (the
            // 1500th packet there), the one with PSN 0 on the second (the 1500th that reaches
            // it, its predecessor lost), ...
            Fault::DropNth {
                link: LinkId(0),
                dir: Dir::Up,
                nth: BEFORE_WRAP as u64,
            },
            Fault::DropNth {
                link: LinkId(1),
                dir: Dir::Down,
                nth: BEFORE_WRAP as u64,
            },
            // ... and 0.2% of the ACKs and NAKs on the way back.
            Fault::Loss {
                link: LinkId(0),
                dir: Dir::Down,
                loss: LinkLoss::Rate(2e-3),
            },
        ],
        ..Faults::default()
    };
    run(&t, &p, &dag, &faults)
}

#[test]
fn a_message_across_the_psn_wrap_runs_as_far_from_it() {
    for kind in [Transport::GoBackN, Transport::SelectiveRepeat] {
        let start = PSN_MASK + 1 - BEFORE_WRAP;
        let far = case(kind, InitialPsn::Zero);
        let wrap = case(kind, InitialPsn::At(start));
        let c = &wrap.counters;
        eprintln!(
            "{kind:?}: retransmitted {} naks {} timeouts {} fct_max {:?} ps",
            c.retransmitted_packets, c.naks, c.timeouts, wrap.summary.max_fct_ps
        );
        assert_eq!(wrap.summary.messages_completed, 2, "{kind:?}");
        assert_eq!(c.bytes_delivered, 2 * PACKETS as u64 * 4096, "{kind:?}");
        assert!(
            c.retransmitted_packets > 0 && c.naks > 0,
            "{kind:?}: losses recovered"
        );
        // The same decisions packet by packet: identical results, byte for byte.
        assert_eq!(wrap.to_json(false), far.to_json(false), "{kind:?}");
        // Per-QP initial PSNs from the seed change nothing either.
        assert_eq!(
            case(kind, InitialPsn::Seeded).to_json(false),
            far.to_json(false),
            "{kind:?}"
        );
    }
}
