//! Ultra Ethernet's reliable unordered delivery (UEC 1.0 3.5.7, the PDS's RUD mode): the
//! receiver places every packet where it belongs as it arrives and SACKs each (the cumulative
//! PSN and the one that arrived: the sender's `sacked` bitmap is the SACK bitmap the replies
//! build up); a message completes, at the receiver and at the sender, when all its packets have
//! arrived, whatever order they and the messages before it on the context took. Reordering
//! (spraying) never triggers a resend: the sender resends a trimmed packet on its NACK (spec
//! 3.6.17: the trimmed header reaches the receiver, which NACKs it) and a packet whose own
//! retransmission timer expired ([`PacketTimers`]).
//!
//! The timer is per packet (UEC 1.0 PDS configuration, `RTO_Init_Time`: "retransmit packet
//! after this amount of time if no ACK or NACK is received"; RUD's NACK sequence, spec
//! 3.5.20.3.1 as read in https://github.com/KaiLv16/UEC-Notes/blob/main/Notes/RUD.md: a NACKed
//! packet is resent under `Max_NACK_Retx_Cnt`, the RTO resends it only if the NACK was lost, up
//! to `Max_RTO_Retx_Cnt`): it runs from the packet's latest (re)send, an ACK, SACK or NACK of that
//! packet stops it, it backs off as `RTO_Init_Time x 2^retry_count`, and only its expiries
//! count toward `Max_RTO_Retx_Cnt` (the profile's `retry_count`), per packet. A trimmed
//! packet's resends are not timeouts; `Max_NACK_Retx_Cnt` is taken at its maximum, which the
//! spec's parameter defines as unlimited.

use super::{Qp, SeqBitmap};
use fabricsim_core::units::Time;

/// Each packet's retransmission timer in a ring indexed like `sacked` (allocated once with the
/// QP; nothing per packet): the time of its latest send, its RTO resends so far, and whether it
/// is out of the network awaiting a resend (NACKed, or its timer expired).
#[derive(Clone, Debug, Default)]
pub struct PacketTimers {
    sent_ps: Vec<u64>,
    rto_retx: Vec<u8>,
    pending: SeqBitmap,
}

impl PacketTimers {
    pub fn new(window: u32) -> PacketTimers {
        let pending = SeqBitmap::new(window);
        let n = if window == 0 {
            0
        } else {
            pending.mask as usize + 1
        };
        PacketTimers {
            sent_ps: vec![0; n],
            rto_retx: vec![0; n],
            pending,
        }
    }
}

/// What a RUD timer scan found (`Qp::rud_expire`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Expiry {
    /// Packets whose timer expired, queued for resending.
    pub expired: u32,
    /// A packet expired with `Max_RTO_Retx_Cnt` RTO resends behind it: the PDC fails.
    pub exhausted: bool,
    /// The earliest deadline of a packet still timed (none in the network: `None`).
    pub next: Option<Time>,
}

impl Qp {
    /// The index in `segs` of the segment holding sequence number `q` (posted, not popped).
    #[inline]
    fn seg_index(&self, q: u32) -> usize {
        self.segs.partition_point(|s| s.end <= q)
    }

    /// Sender: sequence number `q` went on the wire at `now` (`retx`: a resend): its timer
    /// restarts from this send (spec `RTO_Init_Time`); a first send has no RTO resends yet.
    #[inline]
    pub fn rud_sent(&mut self, q: u32, retx: bool, now: Time) {
        let t = &mut self.rud_timers;
        let i = (q & t.pending.mask) as usize;
        t.sent_ps[i] = now.0;
        if !retx {
            t.rto_retx[i] = 0;
        }
    }

    /// Sender: the timer event at `now`: every packet still in the network (sent, not
    /// acknowledged, not NACKed) whose timer, `rto x 2^(its RTO resends)` from its latest send
    /// (spec: `RTO_TIMER = RTO_INIT_TIME * 2^retry_count`), has expired is queued for resending
    /// as lost and counts one RTO resend; one that already had `max_retx` of them exhausts the
    /// PDC (spec `Max_RTO_Retx_Cnt`, a failure event). A scan of the window, per timer event,
    /// not per packet.
    pub fn rud_expire(&mut self, now: Time, rto: Time, max_retx: u8) -> Expiry {
        let mut e = Expiry {
            expired: 0,
            exhausted: false,
            next: None,
        };
        for q in self.una..self.max_sent {
            let t = &mut self.rud_timers;
            if self.sacked.get(q) || t.pending.get(q) {
                continue;
            }
            let i = (q & t.pending.mask) as usize;
            let n = t.rto_retx[i];
            let deadline = t.sent_ps[i].saturating_add(rto.0.saturating_mul(1 << n.min(20)));
            if deadline > now.0 {
                e.next = Some(e.next.map_or(Time(deadline), |d| d.min(Time(deadline))));
                continue;
            }
            if n >= max_retx {
                e.exhausted = true;
                return e;
            }
            t.rto_retx[i] = n + 1;
            t.pending.set(q, true);
            self.nacked.push_back(q);
            e.expired += 1;
        }
        e
    }

    /// Receiver: packet wire PSN `p` was accepted (new data); the message it completes, if its
    /// last missing packet. A new packet is not acknowledged yet, so it is at or past `una`.
    #[inline]
    pub fn rud_received(&mut self, p: u32) -> Option<u32> {
        let q = self.seq_of(p, self.una)?;
        let i = self.seg_index(q);
        let s = &mut self.segs[i];
        s.rx_left -= 1;
        (s.rx_left == 0).then_some(s.msg)
    }

    /// Sender: sequence number `q` is acknowledged for the first time (cumulatively or by a
    /// SACK); its message into `done` when that was its last.
    #[inline]
    fn rud_acked(&mut self, q: u32, done: &mut Vec<u32>) {
        self.newly_acked += 1;
        let i = self.seg_index(q);
        let s = &mut self.segs[i];
        s.tx_left -= 1;
        if s.tx_left == 0 {
            done.push(s.msg);
        }
    }

    /// Sender: an ACK (cumulative wire PSN `e`) or a SACK (`e` and the wire PSN `s` that
    /// arrived) under RUD: every newly acknowledged packet counted to its message, the
    /// messages completed pushed to `done` (in any order); no recovery is entered. Returns
    /// whether `una` advanced (the front segments are then popped by `pop_acked`, their
    /// completions already in `done`). `newly_acked` counts the packets it acknowledged.
    pub fn on_rud_ack(&mut self, e: u32, s: Option<u32>, done: &mut Vec<u32>) -> bool {
        self.newly_acked = 0;
        let advanced = match self.seq_of(e, self.una) {
            Some(e) if e <= self.max_sent && e > self.una => {
                for q in self.una..e {
                    self.rud_timers.pending.set(q, false);
                    if !self.sacked.get(q) {
                        self.rud_acked(q, done);
                    }
                }
                self.ack_seq(e)
            }
            _ => false,
        };
        if let Some(q) = s.and_then(|s| self.seq_of(s, self.una))
            && q < self.max_sent
            && !self.sacked.get(q)
        {
            self.sacked.set(q, true);
            self.rud_timers.pending.set(q, false);
            self.sacked_n += 1;
            self.high_sack = self.high_sack.max(q + 1);
            self.rud_acked(q, done);
        }
        advanced
    }

    /// Sender: the receiver NACKed wire PSN `p` (its packet was trimmed): out of the network,
    /// its timer stopped (spec `RTO_Init_Time`: no timeout once a NACK came), queued for
    /// resending first, unless it is acknowledged or queued already.
    pub fn on_rud_nack(&mut self, p: u32) {
        if let Some(q) = self.seq_of(p, self.una)
            && q < self.max_sent
            && !self.sacked.get(q)
            && !self.rud_timers.pending.get(q)
        {
            self.rud_timers.pending.set(q, true);
            self.nacked.push_back(q);
        }
    }

    /// The next NACKed sequence number still unacknowledged, removed from the queue.
    #[inline]
    pub(super) fn next_nacked(&mut self) -> Option<u32> {
        while let Some(q) = self.nacked.pop_front() {
            if q >= self.una && !self.sacked.get(q) && self.rud_timers.pending.get(q) {
                self.rud_timers.pending.set(q, false);
                return Some(q);
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transport::{Reply, Rx};
    use fabricsim_mech::Transport;

    /// Two messages of 3 packets; the second's packets all arrive before the first's middle
    /// one: the second completes first, at the receiver and at the sender; nothing is resent
    /// for the reordering.
    #[test]
    fn messages_complete_out_of_order_and_reordering_resends_nothing() {
        let k = Transport::Rud;
        let mut q = Qp::new(0, 1, 0, 0, k, 16);
        q.post(7, 300, 100);
        q.post(8, 300, 100);
        for _ in 0..6 {
            q.next_psn(k, 16).unwrap();
        }
        let mut done = Vec::new();
        // Receiver: 0, 2, 3, 4, 5 arrive; 1 is late.
        let mut got = Vec::new();
        for p in [0, 2, 3, 4, 5] {
            let (rx, reply) = q.on_data(p, k, 16, 1, false);
            assert_eq!(rx, Rx::Accepted);
            got.extend(q.rud_received(p));
            match reply {
                Reply::Ack(e) => q.on_rud_ack(e, None, &mut done),
                Reply::Sack(e, s) => q.on_rud_ack(e, Some(s), &mut done),
                r => panic!("{r:?}"),
            };
        }
        assert_eq!(
            (got.as_slice(), done.as_slice()),
            ([8].as_slice(), [8].as_slice())
        );
        assert_eq!(q.next_psn(k, 16), None, "reordering resends nothing");
        // The late packet completes message 7; the cumulative ACK covers everything.
        let (_, reply) = q.on_data(1, k, 16, 1, false);
        assert_eq!(q.rud_received(1), Some(7));
        assert_eq!(reply, Reply::Ack(6));
        assert!(q.on_rud_ack(6, None, &mut done));
        assert_eq!(done, vec![8, 7]);
        // The fronts pop without completing again (the engine ignores pop_acked's ids).
        assert_eq!(
            (q.pop_acked(), q.pop_acked(), q.pop_acked()),
            (Some(7), Some(8), None)
        );
    }

    /// A NACK (trim) resends that packet at once and nothing else; a timer expiry resends only
    /// the packets still in the network whose own timers ran out: not the SACKed ones, not a
    /// NACKed one awaiting its resend, not a resend younger than its timer.
    #[test]
    fn only_the_missing_packets_are_resent() {
        let k = Transport::Rud;
        let rto = Time::from_us(10);
        let mut q = Qp::new(0, 1, 0, 0, k, 16);
        q.post(0, 800, 100);
        for i in 0..8 {
            let (p, retx) = q.next_psn(k, 16).unwrap();
            // 0-5 sent at t = 0, 6 and 7 at 5 us.
            q.rud_sent(p, retx, Time::from_us(if i < 6 { 0 } else { 5 }));
        }
        let mut done = Vec::new();
        // 0 and 1 arrive in order, 2 is trimmed, 3 and 5 arrive, 4 is lost, 6 and 7 in flight.
        q.on_rud_ack(2, None, &mut done);
        q.on_rud_nack(2);
        q.on_rud_ack(2, Some(3), &mut done);
        q.on_rud_ack(2, Some(5), &mut done);
        assert_eq!(q.next_psn(k, 16), Some((2, true)));
        q.rud_sent(2, true, Time::from_us(8));
        assert_eq!(q.next_psn(k, 16), None);
        // At 10 us only 4's timer has run out: 2 was resent at 8 us, 6 and 7 sent at 5 us.
        let e = q.rud_expire(Time::from_us(10), rto, 7);
        assert_eq!(
            e,
            Expiry {
                expired: 1,
                exhausted: false,
                next: Some(Time::from_us(15))
            }
        );
        assert_eq!(q.next_psn(k, 16), Some((4, true)));
        assert_eq!(q.next_psn(k, 16), None, "6 and 7 are in flight, not resent");
        // 4's second timer is twice as long (spec: RTO_INIT_TIME x 2^retry_count).
        q.rud_sent(4, true, Time::from_us(10));
        q.on_rud_ack(2, Some(2), &mut done);
        q.on_rud_ack(2, Some(7), &mut done);
        // At 20 us 6's timer (from 5 us) has run out, 4's (from 10 us, now 20 us long) has not.
        let e = q.rud_expire(Time::from_us(20), rto, 7);
        assert_eq!((e.expired, e.next), (1, Some(Time::from_us(30))));
        assert_eq!(q.next_psn(k, 16), Some((6, true)));
        assert!(done.is_empty());
    }

    /// A NACKed packet's resends never count toward `Max_RTO_Retx_Cnt`: trimmed 20 times it
    /// stays alive; only its timer's own expiries, `max_retx` + 1 of them, exhaust the PDC.
    #[test]
    fn nack_resends_do_not_count_toward_the_rto_retry_limit() {
        let k = Transport::Rud;
        let rto = Time::from_us(10);
        let mut q = Qp::new(0, 1, 0, 0, k, 16);
        q.post(0, 100, 100);
        let (p, retx) = q.next_psn(k, 16).unwrap();
        q.rud_sent(p, retx, Time::ZERO);
        let mut now = Time::ZERO;
        for _ in 0..20 {
            q.on_rud_nack(0);
            assert_eq!(
                q.rud_expire(now + rto, rto, 2).expired,
                0,
                "NACKed: not timed"
            );
            assert_eq!(q.next_psn(k, 16), Some((0, true)));
            now = now + Time::from_us(1);
            q.rud_sent(0, true, now);
        }
        let mut t = now;
        for n in 0..2u64 {
            t = t + Time(rto.0 << n);
            let e = q.rud_expire(t, rto, 2);
            assert_eq!((e.expired, e.exhausted), (1, false));
            assert_eq!(q.next_psn(k, 16), Some((0, true)));
            q.rud_sent(0, true, t);
        }
        assert!(q.rud_expire(t + Time(rto.0 << 2), rto, 2).exhausted);
    }

    /// A trimmed packet's resend waits for room in the window (htsim `can_send_NSCC`): with 8
    /// packets out and the window cut to 2, a NACK frees one slot of 8 and resends nothing;
    /// once SACKs leave one packet in the network (the window then 2 + 6 SACKed), it goes.
    #[test]
    fn a_nacked_resend_waits_for_the_window() {
        let k = Transport::Rud;
        let mut q = Qp::new(0, 1, 0, 0, k, 16);
        q.post(0, 1000, 100);
        for _ in 0..8 {
            q.next_psn(k, 16).unwrap();
        }
        let mut done = Vec::new();
        q.on_rud_nack(0);
        assert!(!q.can_send(k, 2));
        assert_eq!(q.next_psn(k, 2), None, "7 packets in the network, window 2");
        for s in 1..7 {
            q.on_rud_ack(0, Some(s), &mut done);
        }
        assert!(q.can_send(k, 2 + 6));
        assert_eq!(q.next_psn(k, 2 + 6), Some((0, true)));
        assert_eq!(q.next_psn(k, 2 + 6), None, "0 and 7 in the network");
        // Unlimited (window 0) and a window with room resend at once, as before.
        q.on_rud_nack(0);
        assert_eq!(q.next_psn(k, 0), Some((0, true)));
    }
}
