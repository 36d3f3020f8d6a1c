//! Ultra Ethernet's reliable unordered delivery (UEC 1.0 3.5.7, the PDS's RUD mode): the
//! receiver places every packet where it belongs as it arrives and SACKs each (the cumulative
//! PSN and the one that arrived: the sender's `sacked` bitmap is the SACK bitmap the replies
//! build up); a message completes, at the receiver and at the sender, when all its packets have
//! arrived, whatever order they and the messages before it on the context took. Reordering
//! (spraying) never triggers a resend: the sender resends a trimmed packet at once on its NACK
//! (spec 3.6.17: the trimmed header reaches the receiver, which NACKs it) and, at the
//! retransmission timeout, only the holes the SACKs show (`timeout`).

use super::Qp;

impl Qp {
    /// The index in `segs` of the segment holding sequence number `q` (posted, not popped).
    #[inline]
    fn seg_index(&self, q: u32) -> usize {
        self.segs.partition_point(|s| s.end <= q)
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
            self.sacked_n += 1;
            self.high_sack = self.high_sack.max(q + 1);
            self.rud_acked(q, done);
        }
        advanced
    }

    /// Sender: the receiver NACKed wire PSN `p` (its packet was trimmed): queued for resending
    /// first, unless it is acknowledged already.
    pub fn on_rud_nack(&mut self, p: u32) {
        if let Some(q) = self.seq_of(p, self.una)
            && q < self.max_sent
            && !self.sacked.get(q)
        {
            self.nacked.push_back(q);
        }
    }

    /// The next NACKed sequence number still unacknowledged, removed from the queue.
    #[inline]
    pub(super) fn next_nacked(&mut self) -> Option<u32> {
        while let Some(q) = self.nacked.pop_front() {
            if q >= self.una && !self.sacked.get(q) {
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

    /// A NACK (trim) resends that packet at once and nothing else; a timeout resends only the
    /// holes below the highest SACK, or the oldest packet when nothing is SACKed past it.
    #[test]
    fn only_the_missing_packets_are_resent() {
        let k = Transport::Rud;
        let mut q = Qp::new(0, 1, 0, 0, k, 16);
        q.post(0, 800, 100);
        for _ in 0..8 {
            q.next_psn(k, 16).unwrap();
        }
        let mut done = Vec::new();
        // 0 and 1 arrive in order, 2 is trimmed, 3 and 5 arrive, 4 is lost, 6 and 7 in flight.
        q.on_rud_ack(2, None, &mut done);
        q.on_rud_nack(2);
        q.on_rud_ack(2, Some(3), &mut done);
        q.on_rud_ack(2, Some(5), &mut done);
        assert_eq!(q.next_psn(k, 16), Some((2, true)));
        assert_eq!(q.next_psn(k, 16), None);
        q.on_timeout(k);
        assert_eq!(
            q.next_psn(k, 16),
            Some((2, true)),
            "2's resend not SACKed yet"
        );
        assert_eq!(q.next_psn(k, 16), Some((4, true)));
        assert_eq!(q.next_psn(k, 16), None, "6 and 7 are in flight, not resent");
        // With nothing SACKed past the cumulative point, the oldest packet alone.
        q.on_rud_ack(2, Some(2), &mut done);
        q.on_rud_ack(2, Some(4), &mut done);
        q.on_rud_ack(6, None, &mut done);
        q.on_timeout(k);
        assert_eq!(q.next_psn(k, 16), Some((6, true)));
        assert_eq!(q.next_psn(k, 16), None);
        assert!(done.is_empty());
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
