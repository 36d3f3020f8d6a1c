//! Injected faults: per-link corruption loss (a rate, a raw BER or a BER under FEC), a chosen packet or every n-th
//! dropped, links
//! going down and up, and the delays before routing steers around a change: local repair at the
//! link's ends, then the fabric-wide reroute (`sim::reroute`).

use super::reroute::RerouteDelays;
use fabricsim_core::topology::{HostId, LinkId, NodeId, PortId};
use fabricsim_core::units::Time;

/// Which direction of a full-duplex link.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dir {
    /// From the lower end (NIC or lower-tier switch) to the upper one.
    Up,
    Down,
    Both,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum LinkLoss {
    /// Per-packet loss probability.
    Rate(f64),
    /// Bit error rate: a frame of L bytes is lost with probability 1-(1-BER)^(8L) (independent bit errors).
    Ber(f64),
    /// Bit errors at pre-FEC `ber` under the Reed-Solomon code `fec`: a frame is lost when a
    /// codeword it touches is uncorrectable (`fec::RsFec::frame_loss`).
    Fec { fec: super::fec::RsFec, ber: f64 },
    /// A pre-FEC BER per lane (the first `lanes` of `ber`), each lane carrying an equal share of
    /// every codeword (`fec::RsFec::codeword_ln_ok_lanes`): one bad lane of a link.
    FecLanes {
        fec: super::fec::RsFec,
        ber: [f64; super::fec::MAX_LANES],
        lanes: u8,
    },
}

#[derive(Clone, Debug, PartialEq)]
pub enum Fault {
    Loss {
        link: LinkId,
        dir: Dir,
        loss: LinkLoss,
    },
    /// The `nth` packet (1-based) put on the link in `dir` is corrupted.
    DropNth { link: LinkId, dir: Dir, nth: u64 },
    /// Every `every`-th packet put on the link in `dir` is corrupted (a deterministic periodic
    /// drop, as Guo et al., SIGCOMM 2016, 4.1 injected 1/256 to show go-back-0's livelock).
    DropEvery { link: LinkId, dir: Dir, every: u64 },
    /// The link fails at `at`; routing avoids it after the `reroute` delays.
    Down { link: LinkId, at: Time },
    /// The link comes back at `at`; routing uses it again after the `reroute` delays.
    Up { link: LinkId, at: Time },
    /// Host `host`'s NIC stops receiving at `at` (until `until`): under PFC it pauses its
    /// switch port without end, a pause storm (Guo et al., "RDMA over commodity Ethernet at
    /// scale", SIGCOMM 2016, 4.3); packets reaching it meanwhile are discarded.
    RxStall {
        host: HostId,
        at: Time,
        until: Option<Time>,
    },
    /// Switch `node` forwards lossless packets for `dst` out of `port`, whatever up/down routing
    /// says: a routing misconfiguration or a transient reroute that bounces traffic down and up
    /// again, the way cyclic buffer dependencies (PFC deadlocks) form (Hu et al., HotNets 2016).
    Misroute {
        node: NodeId,
        dst: HostId,
        port: PortId,
    },
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct Faults {
    pub faults: Vec<Fault>,
    /// Time from a link state change to local repair and to the global reroute (the default:
    /// neither happens).
    pub reroute: RerouteDelays,
}
