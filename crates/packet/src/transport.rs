//! The transport seam: the RC transport of one queue pair (PSNs, posting, cumulative ACKs, the
//! receiver's in-order path) and the dispatch on the run's recovery ([`Transport`], resolved
//! once per run by `Transport::under`; the QP methods match on it: no `dyn`, no per-packet
//! lookup of the routing). One file per recovery (IBA Vol. 1 9.7):
//!
//! - `go_back_n`: NAK at the first PSN sequence error, resend from it (IBA Vol. 1 9.7.5);
//! - `go_back_0`: a sequence error restarts the message from its first packet (early RoCE
//!   firmware; Guo et al., SIGCOMM 2016);
//! - `selective_repeat`: SACK per out-of-order packet, resend the holes (IRN, SIGCOMM 2018);
//! - `unordered`: the receiver places out-of-order packets and acknowledges cumulatively, a hole
//!   found by the timeout (adaptive routing's and spraying's receiver; UEC RUD later);
//! - `rud`: Ultra Ethernet's reliable unordered delivery (UEC 1.0 3.5.7): SACK per packet,
//!   per-message completion in any order, resend of only what is missing (a trim's NACK, the
//!   timeout);
//! - `timeout`: the local ACK timer's resend (IBA Vol. 1 9.7.6.1.3).
//!
//! Pure state machines: the engine feeds them events and acts on what they return.
//!
//! Sequence numbers: the sender numbers its packets 0, 1, 2, ... (its *sequence*: `segs`,
//! `una`, `nxt`, the receiver's `expected`); on the wire a packet carries the 24-bit PSN
//! `initial PSN + sequence` modulo 2^24 (`sim::psn`), and every PSN that arrives (data at the
//! receiver; ACK, NAK and SACK at the sender) is placed by serial arithmetic against the PSN the
//! side expects, so a QP runs across the wrap as anywhere else.

use std::collections::VecDeque;

use fabricsim_core::units::Time;
use fabricsim_mech::psn;
use fabricsim_mech::recovery::Transport;

mod go_back_0;
mod go_back_n;
mod rud;
mod selective_repeat;
mod timeout;
mod unordered;

/// A message's span of PSNs on its QP.
#[derive(Clone, Copy, Debug)]
pub struct Seg {
    pub msg: u32,
    pub first: u32,
    /// One past its last PSN.
    pub end: u32,
    pub bytes: u64,
    /// RUD (`rud`): its packets not yet received, and not yet acknowledged at the sender.
    pub rx_left: u32,
    pub tx_left: u32,
}

/// A ring of bits indexed by PSN modulo its capacity (a power of two >= the window).
#[derive(Clone, Debug, Default)]
pub struct SeqBitmap {
    pub(super) words: Vec<u64>,
    mask: u32,
}

impl SeqBitmap {
    pub fn new(window: u32) -> SeqBitmap {
        if window == 0 {
            return SeqBitmap::default();
        }
        let cap = window.next_power_of_two().max(64);
        SeqBitmap {
            words: vec![0; (cap / 64) as usize],
            mask: cap - 1,
        }
    }
    #[inline]
    pub fn get(&self, psn: u32) -> bool {
        let i = psn & self.mask;
        self.words[(i >> 6) as usize] >> (i & 63) & 1 != 0
    }
    #[inline]
    pub fn set(&mut self, psn: u32, v: bool) {
        let i = psn & self.mask;
        let w = &mut self.words[(i >> 6) as usize];
        if v {
            *w |= 1 << (i & 63);
        } else {
            *w &= !(1 << (i & 63));
        }
    }
}

/// What the receiver sends back for a data packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reply {
    None,
    Ack(u32),
    Nak(u32),
    Sack(u32, u32),
}

/// How the receiver took a data packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rx {
    /// New data, placed in memory.
    Accepted,
    /// Discarded: out of sequence under go-back-N (or beyond the window).
    OutOfSequence,
    /// Discarded: already received.
    Duplicate,
    /// Discarded after a sequence error under go-back-0, with the message's packets received
    /// before it (their count).
    Restart(u32),
}

#[derive(Clone, Debug)]
pub struct Qp {
    pub src: u32,
    pub dst: u32,
    pub hash_fwd: u32,
    pub hash_rev: u32,
    /// Traffic class of its data packets (the QP's SL / priority).
    pub tc: u8,
    /// The PSN of sequence number 0 (chosen at QP setup, `sim::psn::InitialPsn`).
    pub ipsn: u32,
    /// Posted messages not yet completed at the sender, in PSN order.
    pub segs: VecDeque<Seg>,
    /// Segments completed and removed from the front of `segs` so far.
    pub segs_popped: u32,
    /// `segs.front().end` (`u32::MAX`: none), and the segment `packet_of` found last: the
    /// per-packet paths read these in the QP's lines, not `segs`' own allocation, usually out
    /// of the cache (`rx_end` below likewise).
    una_end: u32,
    seg_hint: Seg,
    /// One past the last posted PSN.
    pub posted_end: u32,
    /// Oldest unacknowledged PSN.
    pub una: u32,
    /// Next new PSN to send (go-back-N rewinds it).
    pub nxt: u32,
    /// One past the highest PSN ever sent (a PSN below it is a retransmission).
    pub max_sent: u32,
    /// In its NIC's round-robin ring of sending QPs.
    pub active: bool,
    pub timer_pending: bool,
    pub rto_deadline: Time,
    pub retries: u8,
    /// The QP exhausted its retries (IBA: error state); its messages never complete.
    pub failed: bool,
    /// Rate limiter: earliest time of the next packet (`Time::ZERO` when unlimited).
    pub next_send: Time,
    /// Rate limit in picoseconds per wire byte (0: line rate); driven by congestion control.
    pub limit_ps_per_byte: u64,
    // Selective repeat, sender.
    pub sacked: SeqBitmap,
    /// How many sequence numbers at or past `una` are SACKed (set bits of `sacked`).
    pub sacked_n: u32,
    pub in_recovery: bool,
    pub recovery_point: u32,
    pub retx_ptr: u32,
    pub high_sack: u32,
    /// RUD: sequence numbers NACKed after a trim, resent first (`rud`).
    pub nacked: VecDeque<u32>,
    /// RUD: the packets the last ACK, SACK or NACK acknowledged for the first time.
    pub newly_acked: u32,
    /// RUD: each packet's retransmission timer (UEC 1.0 PDS, `RTO_Init_Time`, `rud`).
    pub rud_timers: rud::PacketTimers,
    // Receiver.
    pub expected: u32,
    pub nak_sent: bool,
    pub unacked: u32,
    /// Absolute index (counting popped ones) of the first segment not yet received in full.
    pub rx_seg: u32,
    /// The end of segment `rx_seg` (`u32::MAX`: not posted yet).
    rx_end: u32,
    pub received: SeqBitmap,
}

impl Qp {
    pub fn new(
        src: u32,
        dst: u32,
        hash_fwd: u32,
        hash_rev: u32,
        kind: Transport,
        window: u32,
    ) -> Qp {
        let sr = kind.places_out_of_order();
        Qp {
            src,
            dst,
            hash_fwd,
            hash_rev,
            tc: 0,
            ipsn: 0,
            segs: VecDeque::new(),
            segs_popped: 0,
            una_end: u32::MAX,
            seg_hint: Seg {
                msg: 0,
                first: 0,
                end: 0,
                bytes: 0,
                rx_left: 0,
                tx_left: 0,
            },
            posted_end: 0,
            una: 0,
            nxt: 0,
            max_sent: 0,
            active: false,
            timer_pending: false,
            rto_deadline: Time::ZERO,
            retries: 0,
            failed: false,
            next_send: Time::ZERO,
            limit_ps_per_byte: 0,
            sacked: if sr {
                SeqBitmap::new(window)
            } else {
                SeqBitmap::default()
            },
            sacked_n: 0,
            in_recovery: false,
            recovery_point: 0,
            retx_ptr: 0,
            high_sack: 0,
            nacked: VecDeque::new(),
            newly_acked: 0,
            rud_timers: if kind == Transport::Rud {
                rud::PacketTimers::new(window)
            } else {
                rud::PacketTimers::default()
            },
            expected: 0,
            nak_sent: false,
            unacked: 0,
            rx_seg: 0,
            rx_end: u32::MAX,
            received: if sr {
                SeqBitmap::new(window)
            } else {
                SeqBitmap::default()
            },
        }
    }

    /// The 24-bit wire PSN of sequence number `seq`.
    #[inline]
    pub fn wire_psn(&self, seq: u32) -> u32 {
        psn::add(self.ipsn, seq)
    }

    /// The sequence number of wire PSN `p` by serial arithmetic against sequence `near` (the
    /// PSN the side expects); `None` when `p` lies behind it.
    #[inline]
    pub(super) fn seq_of(&self, p: u32, near: u32) -> Option<u32> {
        let d = psn::diff(p, self.wire_psn(near));
        (d >= 0).then(|| near + d as u32)
    }

    /// Appends a message of `bytes` split into packets of `mtu` payload bytes.
    pub fn post(&mut self, msg: u32, bytes: u64, mtu: u32) {
        let n = bytes.div_ceil(mtu as u64).max(1) as u32;
        let first = self.posted_end;
        self.posted_end += n;
        self.segs.push_back(Seg {
            msg,
            first,
            end: first + n,
            bytes,
            rx_left: n,
            tx_left: n,
        });
        if self.segs.len() == 1 {
            self.una_end = first + n;
        }
        // Under RUD `rx_seg` stays behind (messages complete by their own counts, `rud`).
        if self.rx_seg.checked_sub(self.segs_popped) == Some(self.segs.len() as u32 - 1) {
            self.rx_end = first + n;
        }
    }

    /// The message of segment `rx_seg` if every PSN of it is now received (`expected` is past
    /// its end); `rx_seg` moves to the next segment.
    #[inline]
    pub fn next_received(&mut self) -> Option<u32> {
        if self.rx_end > self.expected {
            return None;
        }
        let msg = self.segs[(self.rx_seg - self.segs_popped) as usize].msg;
        self.rx_seg += 1;
        self.rx_end = self
            .segs
            .get((self.rx_seg - self.segs_popped) as usize)
            .map_or(u32::MAX, |s| s.end);
        Some(msg)
    }

    /// The message of the oldest segment if `una` is past its end (all of it acknowledged),
    /// removed from `segs`.
    #[inline]
    pub fn pop_acked(&mut self) -> Option<u32> {
        if self.una_end > self.una {
            return None;
        }
        let s = self.segs.pop_front().expect("una_end is the front's end");
        self.segs_popped += 1;
        self.una_end = self.segs.front().map_or(u32::MAX, |s| s.end);
        Some(s.msg)
    }

    /// The segment holding `psn` and the payload bytes of that packet; whether it is the last.
    #[inline]
    pub fn packet_of(&mut self, psn: u32, mtu: u32) -> (u32, bool) {
        let h = self.seg_hint;
        let s = if h.first <= psn && psn < h.end {
            h
        } else {
            let i = self.segs.partition_point(|s| s.end <= psn);
            self.seg_hint = self.segs[i];
            self.seg_hint
        };
        let off = (psn - s.first) as u64 * mtu as u64;
        let payload = (s.bytes - off).min(mtu as u64) as u32;
        (payload, psn + 1 == s.end)
    }

    pub fn outstanding(&self) -> bool {
        self.una < self.max_sent
    }

    /// The next PSN to put on the wire and whether it is a retransmission, if any may go now.
    #[inline]
    pub fn next_psn(&mut self, kind: Transport, window: u32) -> Option<(u32, bool)> {
        if self.failed {
            return None;
        }
        if kind.places_out_of_order()
            && (self.in_recovery || !self.nacked.is_empty())
            && let Some(r) = self.next_resend(window)
        {
            return Some((r, true));
        }
        let open = window == 0 || self.nxt - self.una < window;
        if self.nxt < self.posted_end && open {
            let psn = self.nxt;
            self.nxt += 1;
            let retx = psn < self.max_sent;
            self.max_sent = self.max_sent.max(self.nxt);
            return Some((psn, retx));
        }
        None
    }

    /// The next resend of a receiver that places out-of-order packets: a NACKed packet (RUD)
    /// when the window has room for it, else in recovery the next hole. Out of line: the
    /// common path sends new data.
    #[inline(never)]
    fn next_resend(&mut self, window: u32) -> Option<u32> {
        if self.resend_open(window)
            && let Some(r) = self.next_nacked()
        {
            return Some(r);
        }
        if self.in_recovery {
            return self.next_hole();
        }
        None
    }

    /// Whether a NACKed packet may be resent under `window` (0: unlimited): the packets still in
    /// the network (sent, not cumulatively acknowledged, not NACKed; the window counts the
    /// SACKed ones, as NSCC hands them back) below the window. A trimmed packet has left the
    /// network, so its resend takes the slot it freed, but no more: without this a NACK put its
    /// packet straight back, and a window NSCC had cut on trims never drained to its new size
    /// (a 127-to-1 incast stayed at its first windows and trimmed nearly every packet). The
    /// UEC working group's htsim likewise sends a resend only if `cwnd >= in_flight + size`
    /// (`UecSrc::can_send_NSCC` outside loss recovery; a NACK takes the packet out of
    /// `_in_flight`).
    #[inline]
    fn resend_open(&self, window: u32) -> bool {
        let pending = (self.nacked.len() as u32).min(self.nxt - self.una);
        window == 0 || self.nxt - self.una - pending < window
    }

    /// Whether `next_psn` would return something (without changing state).
    pub fn can_send(&self, kind: Transport, window: u32) -> bool {
        if self.failed {
            return false;
        }
        if kind.places_out_of_order()
            && ((self.in_recovery && self.has_hole())
                || (!self.nacked.is_empty() && self.resend_open(window)))
        {
            return true;
        }
        self.nxt < self.posted_end && (window == 0 || self.nxt - self.una < window)
    }

    /// Cumulative acknowledgement up to (not including) wire PSN `e`. Returns whether `una`
    /// advanced.
    pub fn on_ack(&mut self, e: u32) -> bool {
        match self.seq_of(e, self.una) {
            Some(e) if e <= self.max_sent => self.ack_seq(e),
            _ => false,
        }
    }

    /// Cumulative acknowledgement up to (not including) sequence number `e`.
    pub(super) fn ack_seq(&mut self, e: u32) -> bool {
        if e <= self.una {
            return false;
        }
        if !self.sacked.words.is_empty() {
            self.unsack(e);
        }
        self.una = e;
        if self.nxt < e {
            self.nxt = e;
        }
        if self.in_recovery && self.una > self.recovery_point {
            self.in_recovery = false;
        }
        true
    }

    /// Clears the SACK bits from `una` up to (not including) `e`, counting them off
    /// `sacked_n`. Out of line: only the out-of-order receivers have SACK bits.
    #[inline(never)]
    fn unsack(&mut self, e: u32) {
        for psn in self.una..e {
            if self.sacked.get(psn) {
                self.sacked.set(psn, false);
                self.sacked_n -= 1;
            }
        }
    }

    /// The receiver's handling of a data packet with wire PSN `psn` (IBA 9.7.5.1: a PSN
    /// sequence error NAKs once; a duplicate is re-ACKed); the reply carries wire PSNs. An ACK
    /// goes when `ack_every` packets are unacknowledged or at the `last` packet of a message.
    pub fn on_data(
        &mut self,
        psn: u32,
        kind: Transport,
        window: u32,
        ack_every: u32,
        last: bool,
    ) -> (Rx, Reply) {
        // In sequence numbers: the packet's place by serial arithmetic against the expected
        // PSN, the reply's sequence numbers (mapped to wire PSNs below).
        let (r, reply) = 'rx: {
            // Behind the expected PSN (the duplicate region): re-ACK.
            let Some(psn) = self.seq_of(psn, self.expected) else {
                break 'rx (Rx::Duplicate, Reply::Ack(self.expected));
            };
            if psn == self.expected {
                self.expected += 1;
                if kind.places_out_of_order() {
                    while self.received.get(self.expected) {
                        self.received.set(self.expected, false);
                        self.expected += 1;
                    }
                }
                self.nak_sent = false;
                self.unacked += 1;
                if self.unacked >= ack_every || last || self.expected != psn + 1 {
                    self.unacked = 0;
                    break 'rx (Rx::Accepted, Reply::Ack(self.expected));
                }
                break 'rx (Rx::Accepted, Reply::None);
            }
            match kind {
                Transport::GoBackN => self.sequence_error(),
                Transport::GoBack0 => self.restart_message(),
                Transport::SelectiveRepeat | Transport::Rud => self.sack_out_of_order(psn, window),
                Transport::Unordered => self.place_out_of_order(psn, window),
            }
        };
        let w = |q: u32| self.wire_psn(q);
        let reply = match reply {
            Reply::None => Reply::None,
            Reply::Ack(e) => Reply::Ack(w(e)),
            Reply::Nak(e) => Reply::Nak(w(e)),
            Reply::Sack(e, s) => Reply::Sack(w(e), w(s)),
        };
        (r, reply)
    }
}
