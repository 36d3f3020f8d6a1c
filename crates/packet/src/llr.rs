//! Link-level retry, one link direction (UEC 1.0 specification 5.1, LLR): the sender numbers
//! each frame and keeps it in a bounded replay buffer until the receiver's cumulative ACK; the
//! receiver accepts frames only in sequence, NACKs the first corrupted one and discards what
//! follows it; the sender replays go-back-N from the NACKed sequence number. The receiver
//! coalesces its cumulative ACKs: one once the frames accepted since the last reach the ACK
//! spacing in bytes, or when the ACK timer armed by the first of them runs out (the OCP SAI LLR
//! proposal's CtlOS spacing, `fabricsim_mech::llr::Llr`); a NACK goes at once. ACK and NACK
//! are not lost (not modelled), so no replay timer is needed.
//!
//! The wire is first in, first out (one delay per link), so the receiver learns each arriving
//! frame's sequence number and corruption from `flight` in the order they were sent.

use fabricsim_core::units::Time;
use fabricsim_mech::llr::Llr;
use std::collections::VecDeque;

/// A frame in the replay buffer: its packet, class and buffer bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Entry {
    pub id: u32,
    pub tc: u8,
    pub frame: u16,
}

/// What the sender may put on the wire next.
#[derive(Debug, PartialEq, Eq)]
pub enum Gate {
    /// A new frame.
    Open,
    /// The replay of this buffered frame.
    Replay(Entry),
    /// The replay buffer has no room for a frame: transmit stalls until an ACK.
    Stall,
}

/// When the receiver acknowledges a frame it accepted.
#[derive(Debug, PartialEq, Eq)]
pub enum Ack {
    /// Now, cumulatively: all below this number (the spacing is reached).
    Now(u64),
    /// The first frame since the last ACK: arm the ACK timer, which carries this epoch.
    Arm(u32),
    /// With a later ACK (the timer is armed).
    Later,
}

/// What the receiver does with an arriving frame.
#[derive(Debug, PartialEq, Eq)]
pub enum Rx {
    /// In sequence and intact: delivered, and acknowledged as `Ack` says.
    Accept(Ack),
    /// Out of sequence after a loss: discarded (its replay follows).
    Discard,
    /// Corrupted in sequence: discarded, NACK this (expected) number.
    Nack(u64),
}

pub struct LlrLink {
    /// Sender: next new sequence number, all below `acked` acknowledged, next to replay.
    next: u64,
    acked: u64,
    resend: u64,
    /// Frames `acked..next`, and their wire bytes against `cap`.
    buf: VecDeque<Entry>,
    bytes: u64,
    cap: u64,
    /// Wire bytes of the largest frame and each frame's bytes on the wire beyond its buffer bytes.
    max_wire: u64,
    wire_extra: u64,
    /// Frames on the wire, oldest first: sequence number, whether it was corrupted, its buffer
    /// bytes.
    flight: VecDeque<(u64, bool, u16)>,
    /// Receiver: the next sequence number it accepts; the wire bytes accepted since its last
    /// ACK or NACK, against `spacing`; the count of those ACKs and NACKs, which names the armed
    /// ACK timer (a timer of an older epoch finds its frames acknowledged already).
    expected: u64,
    pending: u64,
    spacing: u64,
    epoch: u32,
    /// How long the first unacknowledged frame waits at most for its ACK.
    pub ack_timer: Time,
    /// Transmit is parked on a full buffer (no wake-up scheduled).
    pub parked: bool,
    pub replays: u64,
    pub nacks: u64,
    pub acks: u64,
    pub stalls: u64,
}

impl LlrLink {
    /// A link with a `cap`-byte replay buffer whose receiver ACKs as `llr` says; both queues
    /// preallocated for the most frames it can hold (`min_wire`-byte frames), so nothing
    /// allocates per frame.
    pub fn new(cap: u64, max_wire: u64, min_wire: u64, wire_extra: u64, llr: &Llr) -> LlrLink {
        assert!(cap >= max_wire, "LLR replay buffer below one frame");
        let n = (cap / min_wire.max(1)) as usize + 1;
        LlrLink {
            next: 0,
            acked: 0,
            resend: 0,
            buf: VecDeque::with_capacity(n),
            bytes: 0,
            cap,
            max_wire,
            wire_extra,
            flight: VecDeque::with_capacity(2 * n),
            expected: 0,
            pending: 0,
            spacing: llr.ack_spacing,
            epoch: 0,
            ack_timer: llr.ack_timer,
            parked: false,
            replays: 0,
            nacks: 0,
            acks: 0,
            stalls: 0,
        }
    }

    /// Replays go first; a new frame needs room for the largest frame.
    pub fn gate(&mut self) -> Gate {
        if self.resend < self.next {
            return Gate::Replay(self.buf[(self.resend - self.acked) as usize]);
        }
        if self.full() {
            self.stalls += 1;
            return Gate::Stall;
        }
        Gate::Open
    }

    fn full(&self) -> bool {
        self.bytes + self.max_wire > self.cap
    }

    /// Whether new frames must wait (a replay pending or the buffer full).
    pub fn hold(&self) -> bool {
        self.resend < self.next || self.full()
    }

    /// A frame goes on the wire, `corrupt` if the link corrupts it: the pending replay's when
    /// one is pending, else `e`, numbered and buffered.
    pub fn on_wire(&mut self, e: Entry, corrupt: bool) {
        if self.resend < self.next {
            debug_assert_eq!(self.buf[(self.resend - self.acked) as usize], e);
            self.flight.push_back((self.resend, corrupt, e.frame));
            self.resend += 1;
            self.replays += 1;
            return;
        }
        self.buf.push_back(e);
        self.bytes += e.frame as u64 + self.wire_extra;
        self.flight.push_back((self.next, corrupt, e.frame));
        self.next += 1;
        self.resend = self.next;
    }

    /// The oldest frame on the wire reaches the receiver.
    pub fn arrive(&mut self) -> Rx {
        let (seq, corrupt, frame) = self
            .flight
            .pop_front()
            .expect("LLR: arrival with nothing on the wire");
        if seq != self.expected {
            return Rx::Discard;
        }
        if corrupt {
            self.nacks += 1;
            self.acknowledged();
            return Rx::Nack(seq);
        }
        self.expected += 1;
        let first = self.pending == 0;
        self.pending += frame as u64 + self.wire_extra;
        if self.pending >= self.spacing {
            self.acks += 1;
            self.acknowledged();
            return Rx::Accept(Ack::Now(self.expected));
        }
        Rx::Accept(if first {
            Ack::Arm(self.epoch)
        } else {
            Ack::Later
        })
    }

    /// The ACK timer of `epoch` runs out: the cumulative ACK to send, unless an ACK or NACK
    /// has covered its frames since.
    pub fn ack_timer_out(&mut self, epoch: u32) -> Option<u64> {
        if epoch != self.epoch {
            return None;
        }
        debug_assert!(self.pending > 0);
        self.acks += 1;
        self.acknowledged();
        Some(self.expected)
    }

    /// An ACK or NACK covers every accepted frame: the armed timer is stale.
    fn acknowledged(&mut self) {
        self.pending = 0;
        self.epoch = self.epoch.wrapping_add(1);
    }

    /// A cumulative ACK: frames below `seq` leave the buffer.
    pub fn ack(&mut self, seq: u64) {
        while self.acked < seq {
            let e = self.buf.pop_front().expect("LLR: ACK beyond the buffer");
            self.bytes -= e.frame as u64 + self.wire_extra;
            self.acked += 1;
        }
    }

    /// A NACK: acknowledges below `seq` and replays from it.
    pub fn nack(&mut self, seq: u64) {
        self.ack(seq);
        self.resend = seq;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An ACK per frame (a spacing of 0 bytes).
    fn per_frame() -> Llr {
        Llr {
            ack_spacing: 0,
            ..Llr::default()
        }
    }

    fn accept(seq: u64) -> Rx {
        Rx::Accept(Ack::Now(seq))
    }

    fn e(id: u32) -> Entry {
        Entry {
            id,
            tc: 1,
            frame: 80,
        }
    }

    #[test]
    fn a_corrupted_frame_is_nacked_and_replayed_with_those_behind_it() {
        let mut l = LlrLink::new(1000, 100, 100, 20, &per_frame());
        for i in 0..4 {
            assert_eq!(l.gate(), Gate::Open);
            l.on_wire(e(i), i == 1);
        }
        assert_eq!(l.arrive(), accept(1));
        assert_eq!(l.arrive(), Rx::Nack(1));
        assert_eq!(l.arrive(), Rx::Discard);
        assert_eq!(l.arrive(), Rx::Discard);
        l.ack(1);
        l.nack(1);
        assert!(l.hold());
        for i in 1..4 {
            assert_eq!(l.gate(), Gate::Replay(e(i)));
            l.on_wire(e(i), false);
        }
        assert_eq!(l.gate(), Gate::Open);
        assert_eq!(
            (l.arrive(), l.arrive(), l.arrive()),
            (accept(2), accept(3), accept(4))
        );
        assert_eq!((l.replays, l.nacks), (3, 1));
    }

    #[test]
    fn a_full_buffer_stalls_until_an_ack() {
        // 300 B: room for three 100 B frames with room for a fourth needed to send one.
        let mut l = LlrLink::new(300, 100, 100, 20, &per_frame());
        for i in 0..3 {
            assert_eq!(l.gate(), Gate::Open);
            l.on_wire(e(i), false);
        }
        assert_eq!(l.gate(), Gate::Stall);
        assert!(l.hold());
        assert_eq!(l.arrive(), accept(1));
        l.ack(1);
        assert_eq!(l.gate(), Gate::Open);
        assert_eq!(l.stalls, 1);
    }

    #[test]
    fn a_replay_corrupted_again_is_nacked_again() {
        let mut l = LlrLink::new(1000, 100, 100, 20, &per_frame());
        l.on_wire(e(0), true);
        assert_eq!(l.arrive(), Rx::Nack(0));
        l.nack(0);
        l.on_wire(e(0), true);
        assert_eq!(l.arrive(), Rx::Nack(0));
        l.nack(0);
        l.on_wire(e(0), false);
        assert_eq!(l.arrive(), accept(1));
        assert_eq!((l.replays, l.nacks), (2, 2));
    }

    #[test]
    fn acks_coalesce_by_spacing_and_a_nack_goes_at_once() {
        // 100 B frames on the wire (80 + 20), ACKs every 250 B: the third frame's bytes reach it.
        let spaced = Llr {
            ack_spacing: 250,
            ..Llr::default()
        };
        let mut l = LlrLink::new(1000, 100, 100, 20, &spaced);
        for i in 0..6 {
            l.on_wire(e(i), i == 4);
        }
        assert_eq!(l.arrive(), Rx::Accept(Ack::Arm(0)));
        assert_eq!(l.arrive(), Rx::Accept(Ack::Later));
        assert_eq!(l.arrive(), accept(3));
        assert_eq!(l.arrive(), Rx::Accept(Ack::Arm(1)));
        // The timer armed by frame 3 finds it unacknowledged.
        assert_eq!(l.ack_timer_out(1), Some(4));
        assert_eq!(l.arrive(), Rx::Nack(4));
        assert_eq!(l.arrive(), Rx::Discard);
        assert_eq!((l.acks, l.nacks), (2, 1));
    }

    #[test]
    fn a_timer_covered_by_a_later_ack_sends_nothing() {
        let spaced = Llr {
            ack_spacing: 150,
            ..Llr::default()
        };
        let mut l = LlrLink::new(1000, 100, 100, 20, &spaced);
        for i in 0..3 {
            l.on_wire(e(i), i == 2);
        }
        assert_eq!(l.arrive(), Rx::Accept(Ack::Arm(0)));
        assert_eq!(l.arrive(), accept(2));
        assert_eq!(
            l.ack_timer_out(0),
            None,
            "the spacing's ACK covered its frame"
        );
        assert_eq!(l.arrive(), Rx::Nack(2));
        l.nack(2);
        l.on_wire(e(2), false);
        assert_eq!(
            l.arrive(),
            Rx::Accept(Ack::Arm(2)),
            "the NACK started a new epoch"
        );
        assert_eq!(l.ack_timer_out(2), Some(3));
        assert_eq!(l.ack_timer_out(2), None);
        assert_eq!(l.acks, 2);
    }
}
