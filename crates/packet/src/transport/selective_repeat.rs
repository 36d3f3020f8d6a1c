//! Selective repeat as IRN implements it on the NIC (Mittal et al., "Revisiting network support
//! for RDMA", SIGCOMM 2018): the receiver keeps out-of-order packets within the window and SACKs
//! each; the sender enters recovery at the first SACK and resends only the holes below the
//! highest SACKed PSN, until the cumulative ACK passes the recovery point.

use super::{Qp, Reply, Rx};

impl Qp {
    /// The receiver's answer to a packet ahead of the expected PSN: kept (or a duplicate) and
    /// SACKed; beyond the window, discarded.
    #[inline]
    pub(super) fn sack_out_of_order(&mut self, psn: u32, window: u32) -> (Rx, Reply) {
        match self.place(psn, window) {
            Some(rx) => (rx, Reply::Sack(self.expected, psn)),
            None => (Rx::OutOfSequence, Reply::None),
        }
    }

    /// Keeps out-of-order sequence number `psn` in the receive bitmap: `Accepted`, or
    /// `Duplicate` when it is there already; `None` beyond the window.
    #[inline]
    pub(super) fn place(&mut self, psn: u32, window: u32) -> Option<Rx> {
        if psn - self.expected >= window {
            return None;
        }
        if self.received.get(psn) {
            return Some(Rx::Duplicate);
        }
        self.received.set(psn, true);
        Some(Rx::Accepted)
    }

    /// Selective-repeat NACK: cumulative `e`, and `s` arrived out of order.
    pub fn on_sack(&mut self, e: u32, s: u32) -> bool {
        let advanced = self.on_ack(e);
        if let Some(s) = self.seq_of(s, self.una)
            && s < self.max_sent
        {
            if !self.sacked.get(s) {
                self.sacked.set(s, true);
                self.sacked_n += 1;
            }
            self.high_sack = self.high_sack.max(s + 1);
            if !self.in_recovery {
                self.in_recovery = true;
                self.recovery_point = self.nxt.saturating_sub(1);
                self.retx_ptr = self.una;
            }
        }
        advanced
    }

    /// The first hole at or after the resend pointer: not SACKed, below the highest SACK.
    #[inline]
    fn hole_from(&self) -> u32 {
        let mut r = self.retx_ptr.max(self.una);
        while r < self.high_sack && self.sacked.get(r) {
            r += 1;
        }
        r
    }

    /// In recovery: the next hole to resend, the resend pointer moved past it.
    #[inline]
    pub(super) fn next_hole(&mut self) -> Option<u32> {
        let r = self.hole_from();
        self.retx_ptr = r;
        if r < self.high_sack && r < self.nxt {
            self.retx_ptr = r + 1;
            return Some(r);
        }
        None
    }

    /// Whether `next_hole` would return a hole (without changing state).
    #[inline]
    pub(super) fn has_hole(&self) -> bool {
        let r = self.hole_from();
        r < self.high_sack && r < self.nxt
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use fabricsim_mech::Transport;

    #[test]
    fn selective_repeat_resends_only_the_hole() {
        let k = Transport::SelectiveRepeat;
        let mut s = Qp::new(0, 1, 0, 0, k, 16);
        s.post(0, 6 * 100, 100);
        for _ in 0..6 {
            s.next_psn(k, 16).unwrap();
        }
        s.on_ack(2);
        s.on_sack(2, 3);
        s.on_sack(2, 4);
        assert_eq!(s.next_psn(k, 16), Some((2, true)));
        // 5 is beyond the highest SACK: not presumed lost; nothing new to send.
        assert_eq!(s.next_psn(k, 16), None);
    }
}
