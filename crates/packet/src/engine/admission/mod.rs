//! The admission seam of the packet engine: what a switch does with a packet that meets its
//! buffer, as the run's type, one arm per policy, each its own file:
//! - `drop_tail`: lossy Ethernet, a shared buffer with dynamic thresholds; a packet that does
//!   not fit is dropped;
//! - `pfc`: PFC (IEEE 802.1Qbb), a lossless class pauses its sender before its headroom
//!   overflows; the lossy classes as drop-tail;
//! - `credits`: IB credits (IBA Vol. 1 7.9), a sender sends only what the receiver has room for,
//!   so nothing is dropped;
//! - `trim`: lossy Ethernet with packet trimming (UEC 1.0 3.6.17): a data packet that would
//!   take its queue past the trim threshold goes on as its header, at high priority.
//!
//! An arm also owns the packet path's other flow-control steps (`Admission`'s hooks): whether an
//! egress may send a class now, a transmission, a packet leaving the buffer (credits back, XON)
//! and a packet at a NIC. The control frames (PAUSE, credit updates), the watchdog and deadlock
//! detection are `engine/llfc.rs`, the state machines `crate::pfc` and `crate::credits`.
//!
//! The event loop (`Engine::run`) is compiled once per arm, so the packet path does not test on
//! every transmission, arrival and release which of `LinkFc`'s `credits` and `pfc` is present
//! (measured: 17 instructions per event on ft8_perm128, cachegrind on `fabricsim bench`, the
//! tests and the code they let the compiler drop). The arm is read once, from `LinkFc`, which
//! never changes it. Events outside the hop and the port wake-up (posts, timers, flow-control
//! frames, link changes) reach the packet path through `kick_any` and `fc_release_any`.
//!
//! Adding a policy: a file here with a type implementing `Admission` (only the hooks it needs),
//! its state in `LinkFc` (`engine/llfc.rs`, built from its `FlowControl` variant), a variant in
//! `Mode` and an arm in `LinkFc::mode`, `Engine::run`, `kick_any` and `fc_release_any`.

mod credits;
mod drop_tail;
mod pfc;
mod trim;

pub(super) use credits::Credit;
pub(super) use drop_tail::DropTail;
pub(super) use pfc::Pause;
pub(super) use trim::Trim;

use super::Engine;
use super::llfc::LinkFc;
use crate::packet::Packet;

/// The run's admission policy and its hooks on the packet path; the defaults are a policy
/// without link-level flow control. Each hook is inlined into the hop.
pub(super) trait Admission {
    /// Packet `id` (`pk`) at ingress `in_port` of switch `node`, routed to egress `out`: sent on,
    /// queued, or dropped.
    fn admit(e: &mut Engine<'_>, id: u32, node: usize, in_port: usize, out: usize, pk: &Packet);

    /// Classes of switch egress `pi` whose head packet may not leave (short of credits).
    #[inline(always)]
    fn held(_e: &mut Engine<'_>, _pi: usize) -> u8 {
        0
    }

    /// Whether egress `pi` may send a `frame`-byte packet of class `tc` now (not paused).
    #[inline(always)]
    fn may_send(e: &mut Engine<'_>, pi: usize, tc: u8, _frame: u32) -> bool {
        e.ports[pi].blocked & (1 << tc) == 0
    }

    /// Egress `pi` puts a `frame`-byte packet of class `tc` on the wire.
    #[inline(always)]
    fn sent(_e: &mut Engine<'_>, _pi: usize, _tc: u8, _frame: u32) {}

    /// A `frame`-byte packet of class `tc` from ingress `in_port` leaves switch `node`'s buffer
    /// (which still counts it).
    #[inline(always)]
    fn release(e: &mut Engine<'_>, _in_port: usize, _tc: u8, frame: u32, node: usize) {
        e.buf_used[node] -= frame as u64;
    }

    /// Packet `pk`, arrived at ingress `in_port`, is discarded before admission (lost on the
    /// link, its link down, no route on).
    #[inline(always)]
    fn discarded(_e: &mut Engine<'_>, _in_port: usize, _pk: &Packet) {}

    /// Packet `id` (`pk`) reached NIC port `in_port`; false when the NIC discards it.
    #[inline(always)]
    fn nic_arrived(_e: &mut Engine<'_>, _id: u32, _in_port: usize, _pk: &Packet) -> bool {
        true
    }
}

/// The policy as a value, to pick the loop's instance.
pub(super) enum Mode {
    DropTail,
    Trim,
    Pfc,
    Credits,
}

impl LinkFc {
    pub(super) fn mode(&self) -> Mode {
        match (&self.credits, &self.pfc) {
            (Some(_), _) => Mode::Credits,
            (None, Some(_)) => Mode::Pfc,
            (None, None) if self.trim => Mode::Trim,
            (None, None) => Mode::DropTail,
        }
    }
}

/// The state of the loop's policy, without testing the option (`Credit`, `Pause`).
#[inline(always)]
fn state<T>(state: &mut Option<T>) -> &mut T {
    debug_assert!(state.is_some());
    // SAFETY: the loop runs an arm only when its state is set (`LinkFc::mode`), and nothing
    // unsets it.
    unsafe { state.as_mut().unwrap_unchecked() }
}

impl Engine<'_> {
    /// An admitted packet of a lossless class (`id`, `pk`, from ingress `in_port` of switch
    /// `node`): straight to egress `out` when the port is idle and may send it (the packet
    /// passes through the buffer in no time), else queued there.
    #[inline(always)]
    fn pass<A: Admission>(
        &mut self,
        id: u32,
        node: usize,
        in_port: usize,
        out: usize,
        pk: &Packet,
    ) {
        let port = &self.ports[out];
        let idle = port.queued == 0 && !port.wake && !port.llr_hold && port.busy_until <= self.now;
        if idle && A::may_send(self, out, pk.tc, pk.frame as u32) {
            self.buf_used[node] += pk.frame as u64;
            A::release(self, in_port, pk.tc, pk.frame as u32, node);
            return self.transmit::<A>(out, id, pk.tc, pk.frame);
        }
        self.enqueue::<A>(node, out, id, pk);
    }

    /// `kick` from outside the loop's hop and wake-up, in the run's policy.
    pub(super) fn kick_any(&mut self, pi: usize) {
        match self.fc.mode() {
            Mode::DropTail => self.kick::<DropTail>(pi),
            Mode::Trim => self.kick::<Trim>(pi),
            Mode::Pfc => self.kick::<Pause>(pi),
            Mode::Credits => self.kick::<Credit>(pi),
        }
    }

    /// `Admission::release` from outside the loop's hop and wake-up (link failure, watchdog),
    /// in the run's policy.
    pub(super) fn fc_release_any(&mut self, in_port: usize, tc: u8, frame: u32, node: usize) {
        match self.fc.mode() {
            Mode::DropTail => DropTail::release(self, in_port, tc, frame, node),
            Mode::Trim => Trim::release(self, in_port, tc, frame, node),
            Mode::Pfc => Pause::release(self, in_port, tc, frame, node),
            Mode::Credits => Credit::release(self, in_port, tc, frame, node),
        }
    }
}
