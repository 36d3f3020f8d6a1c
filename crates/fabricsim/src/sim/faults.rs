//! Injected faults: per-link corruption loss (a rate or a BER), a chosen packet dropped, links
//! going down and up, and the delay before routing steers around a change.
//!
//! Rerouting is local: after the delay, the failed link's two ends stop choosing it among their
//! equal-cost ports. Switches further away still forward towards it, and a packet left with no
//! way down is dropped as `no_route`; recomputing routes fabric-wide (a subnet manager, a routing
//! protocol withdrawing prefixes) is not modelled yet.

use crate::topology::LinkId;
use crate::units::Time;

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
    /// Bit error rate: a frame of L bytes is lost with probability 1-(1-BER)^(8L) (physics D1).
    Ber(f64),
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
    /// The link fails at `at`; routing avoids it `reroute_delay` later.
    Down { link: LinkId, at: Time },
    /// The link comes back at `at`; routing uses it again `reroute_delay` later.
    Up { link: LinkId, at: Time },
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct Faults {
    pub faults: Vec<Fault>,
    /// Time from a link state change to routes that reflect it (subnet manager or routing
    /// protocol convergence; fast local repair when short).
    pub reroute_delay: Time,
}
