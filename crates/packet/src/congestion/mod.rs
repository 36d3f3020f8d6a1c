//! The congestion-control seam of the packet engine, after smoltcp's
//! `socket/tcp/congestion.rs`: a trait with a no-op hook per event a congestion control reacts
//! to, one file per algorithm, and `AnyCc`, the run's algorithm as an enum resolved once per run
//! and dispatched by `match` (no `dyn`).
//!
//! The engine (`engine/cc.rs`) calls each hook from one place: a data packet leaving a switch
//! egress (telemetry), a marked data packet at the receiver (notification generation), the
//! receiver's ACK (echo: telemetry, the ECN mark, a trim), a notification (CNP/BECN) or an ACK at the sender, the algorithm's
//! timers, and every data packet sent. A hook's effect on the sender (pacing gap, window,
//! timers) comes back in a `CcOut` the engine applies; marking itself is the switch's.
//!
//! Adding a congestion control: a file here implementing `CongestionControl` and reading its
//! parameters, a variant in `AnyCc` and in `CcAlgo` (`fabricsim_mech::cc_algo`, with its parameters), and its profile key (`cc_profile`).

mod both;
mod dcqcn;
mod hpcc;
mod ibcc;
mod none;
mod nscc;
mod rccc;

mod state;

pub use state::CcState;

use crate::error::SimError;
use crate::transport::Qp;
use fabricsim_core::topology::Topology;
use fabricsim_core::units::{BitRate, Time};
use fabricsim_mech::cc_algo::CcAlgo;
use fabricsim_mech::params::SimParams;

/// What a sender hook asks of the engine (`None`: nothing), applied in this order: the pacing gap, the window,
/// then the timers in the order given (ties pop in insertion order).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CcOut {
    pub gap: Gap,
    /// The QP's new send window in packets (0: unlimited), if it changes.
    pub window: Option<u32>,
    arms: [(TimerId, Time); 3],
    n_arms: u8,
}

/// A new pacing gap, ps per byte × 2^16 (0: line rate).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Gap {
    #[default]
    Keep,
    /// A rate limiter's new rate: the wait still due is rescaled to it (`engine::cc::set_gap`).
    Rate(u64),
    /// A new inter-packet delay for the packets after the next (the wait due stays).
    Delay(u64),
}

impl CcOut {
    /// Asks for the algorithm's timer `timer` at `at` (an `Ev::CcTimer`).
    pub fn arm(&mut self, timer: TimerId, at: Time) {
        self.arms[self.n_arms as usize] = (timer, at);
        self.n_arms += 1;
    }

    pub fn arms(&self) -> &[(TimerId, Time)] {
        &self.arms[..self.n_arms as usize]
    }
}

/// An algorithm's timer (an `Ev::CcTimer`): each algorithm names its own (at most four).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(u8)]
pub enum TimerId {
    #[default]
    T0,
    T1,
    T2,
    T3,
}

impl TimerId {
    /// The timer whose `as u8` is `i` (the event queue stores it so).
    pub fn from_index(i: u8) -> TimerId {
        match i {
            0 => TimerId::T0,
            1 => TimerId::T1,
            2 => TimerId::T2,
            _ => TimerId::T3,
        }
    }
}

/// A data packet leaving a switch egress, as in-band telemetry sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Hop {
    pub now: Time,
    /// Bytes queued at the egress port after the packet.
    pub queue_bytes: u64,
    /// Bytes the port has sent so far.
    pub tx_bytes: u64,
    pub rate: BitRate,
}

/// What the receiver's ACK (or NACK) echoes of the data packet it answers.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Echo {
    /// The data packet arrived ECN-marked (UET's `pds.flags.m`).
    pub marked: bool,
    /// It arrived trimmed: the reply is a NACK (UEC 1.0 3.6.17).
    pub trimmed: bool,
    /// Its entropy index mod 256 (REPS recycles it, `engine::spray`).
    pub ev: u8,
    /// Its QP.
    pub qp: u32,
    /// It was new data, placed (not a duplicate, not trimmed).
    pub accepted: bool,
    /// It completed a message at the receiver.
    pub completes: bool,
}

/// An ACK (or NAK/SACK) applied at the source of a QP.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Acked {
    pub now: Time,
    /// The oldest unacknowledged and the next new sequence numbers.
    pub una: u32,
    pub nxt: u32,
    /// Packets it acknowledged for the first time (cumulatively or selectively).
    pub newly: u32,
    /// Packets at or past `una` SACKed so far.
    pub sacked: u32,
}

/// What a run's congestion control starts from.
pub struct CcSetup<'a> {
    pub p: &'a SimParams,
    pub topo: &'a Topology,
    pub qps: &'a [Qp],
    /// Each QP's NIC line rate.
    pub line: &'a [BitRate],
    /// The packet slab's room at the start (per-packet side tables take it, `hpcc`'s INT).
    pub packets: usize,
}

/// The hooks; each defaults to doing nothing. `qp` is the QP's index, `line` its NIC's rate; a
/// sender hook returns what the engine must change (`None`: nothing).
pub trait CongestionControl {
    /// QP `qp`'s send window in packets at the start, `default` unless the algorithm sets one.
    fn initial_window(&self, _qp: u32, default: u32) -> u32 {
        default
    }

    /// Whether `on_egress` is called (switches add telemetry to data packets).
    fn telemetry(&self) -> bool {
        false
    }

    /// Whether `on_echo` and `on_ack` are called (telemetry implies them).
    fn acks(&self) -> bool {
        self.telemetry()
    }

    /// Data packet `pkt` leaves a switch egress (in-band telemetry).
    fn on_egress(&mut self, _pkt: u32, _hop: &Hop) {}

    /// The receiver answers data packet `data` with ACK `ack` (the ACK echoes its telemetry and
    /// `echo`).
    fn on_echo(&mut self, _data: u32, _ack: u32, _echo: Echo) {}

    /// Data packet `pkt` of `qp` leaves its NIC with `wire` bytes on the wire.
    fn on_sent(
        &mut self,
        _qp: u32,
        _pkt: u32,
        _wire: u64,
        _now: Time,
        _line: BitRate,
    ) -> Option<CcOut> {
        None
    }

    /// The receiver got a marked (ECN CE / FECN) data packet of `qp` at `now`: whether it
    /// returns a notification (CNP / BECN) to the source.
    fn on_marked(&mut self, _qp: u32, _now: Time) -> bool {
        false
    }

    /// A notification (CNP / BECN) reached the source of `qp`.
    fn on_notified(&mut self, _qp: u32, _now: Time, _line: BitRate) -> Option<CcOut> {
        None
    }

    /// ACK (or NAK/SACK) `ack` reached the source of `qp` and was applied (`a`).
    fn on_ack(&mut self, _qp: u32, _ack: u32, _a: &Acked, _line: BitRate) -> Option<CcOut> {
        None
    }

    /// The algorithm's timer `timer` of `qp` fired at `now`.
    fn on_timer(&mut self, _qp: u32, _timer: TimerId, _now: Time, _line: BitRate) -> Option<CcOut> {
        None
    }
}

/// The run's congestion control.
pub enum AnyCc {
    None(none::NoCc),
    Dcqcn(dcqcn::Dcqcn),
    IbCc(ibcc::IbCc),
    Hpcc(hpcc::Hpcc),
    Nscc(nscc::Nscc),
    Rccc(rccc::Rccc),
    /// NSCC's window and RCCC's credit together: the sender keeps the smaller.
    NsccRccc(both::Both<nscc::Nscc, rccc::Rccc>),
}

impl AnyCc {
    /// The run's algorithm; `Err` when it cannot run on the setup (a route too long for its
    /// telemetry).
    pub fn new(s: &CcSetup) -> Result<AnyCc, SimError> {
        Ok(match &s.p.cc.algo {
            CcAlgo::None => AnyCc::None(none::NoCc),
            CcAlgo::Dcqcn(d) => AnyCc::Dcqcn(dcqcn::Dcqcn::new(*d, s)),
            CcAlgo::IbCc(i) => AnyCc::IbCc(ibcc::IbCc::new(*i, s)),
            CcAlgo::Hpcc(h) => AnyCc::Hpcc(hpcc::Hpcc::new(*h, s)?),
            CcAlgo::Nscc(n) => AnyCc::Nscc(nscc::Nscc::new(*n, s)),
            CcAlgo::Rccc(r) => AnyCc::Rccc(rccc::Rccc::new(*r, s)),
            CcAlgo::NsccRccc(n, r) => {
                AnyCc::NsccRccc(both::Both(nscc::Nscc::new(*n, s), rccc::Rccc::new(*r, s)))
            }
        })
    }
}

/// `AnyCc`'s hooks: each a `match` on the variant.
macro_rules! dispatch {
    ($self:ident, $c:ident => $e:expr) => {
        match $self {
            AnyCc::None($c) => $e,
            AnyCc::Dcqcn($c) => $e,
            AnyCc::IbCc($c) => $e,
            AnyCc::Hpcc($c) => $e,
            AnyCc::Nscc($c) => $e,
            AnyCc::Rccc($c) => $e,
            AnyCc::NsccRccc($c) => $e,
        }
    };
}

impl CongestionControl for AnyCc {
    fn initial_window(&self, qp: u32, default: u32) -> u32 {
        dispatch!(self, c => c.initial_window(qp, default))
    }
    fn telemetry(&self) -> bool {
        dispatch!(self, c => c.telemetry())
    }
    fn acks(&self) -> bool {
        dispatch!(self, c => c.acks())
    }
    #[inline]
    fn on_egress(&mut self, pkt: u32, hop: &Hop) {
        dispatch!(self, c => c.on_egress(pkt, hop))
    }
    #[inline]
    fn on_echo(&mut self, data: u32, ack: u32, echo: Echo) {
        dispatch!(self, c => c.on_echo(data, ack, echo))
    }
    #[inline]
    fn on_sent(&mut self, qp: u32, pkt: u32, wire: u64, now: Time, line: BitRate) -> Option<CcOut> {
        dispatch!(self, c => c.on_sent(qp, pkt, wire, now, line))
    }
    #[inline]
    fn on_marked(&mut self, qp: u32, now: Time) -> bool {
        dispatch!(self, c => c.on_marked(qp, now))
    }
    #[inline]
    fn on_notified(&mut self, qp: u32, now: Time, line: BitRate) -> Option<CcOut> {
        dispatch!(self, c => c.on_notified(qp, now, line))
    }
    #[inline]
    fn on_ack(&mut self, qp: u32, ack: u32, a: &Acked, line: BitRate) -> Option<CcOut> {
        dispatch!(self, c => c.on_ack(qp, ack, a, line))
    }
    #[inline]
    fn on_timer(&mut self, qp: u32, timer: TimerId, now: Time, line: BitRate) -> Option<CcOut> {
        dispatch!(self, c => c.on_timer(qp, timer, now, line))
    }
}
