//! Go-back-N, the RC transport's loss recovery (IBA Vol. 1 9.7.5.1: a PSN sequence error is
//! NAKed once; the requester resends from the NAKed PSN, 9.7.5.2.2).

use super::{Qp, Reply, Rx};

impl Qp {
    /// The receiver's answer to a packet ahead of the expected PSN: discard it, NAK the first
    /// sequence error only (the NAK stays sent until the expected PSN arrives).
    #[inline]
    pub(super) fn sequence_error(&mut self) -> (Rx, Reply) {
        if self.nak_sent {
            (Rx::OutOfSequence, Reply::None)
        } else {
            self.nak_sent = true;
            (Rx::OutOfSequence, Reply::Nak(self.expected))
        }
    }

    /// Go-back-N NAK: everything before `e` arrived; resend from `e`. Returns whether `una`
    /// advanced.
    pub fn on_nak(&mut self, e: u32) -> bool {
        let advanced = self.on_ack(e);
        if let Some(e) = self.seq_of(e, self.una)
            && e < self.nxt
        {
            self.nxt = e;
        }
        advanced
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use fabricsim_mech::Transport;
    use fabricsim_mech::psn;

    #[test]
    fn go_back_n_naks_once_and_rewinds() {
        let mut s = Qp::new(0, 1, 0, 0, Transport::GoBackN, 0);
        let mut r = s.clone();
        s.post(0, 10 * 100, 100);
        let sent: Vec<u32> = (0..5)
            .map(|_| s.next_psn(Transport::GoBackN, 0).unwrap().0)
            .collect();
        assert_eq!(sent, vec![0, 1, 2, 3, 4]);
        assert_eq!(
            r.on_data(0, Transport::GoBackN, 0, 1, false),
            (Rx::Accepted, Reply::Ack(1))
        );
        // PSN 1 lost: 2 triggers one NAK, 3 is silently discarded.
        assert_eq!(
            r.on_data(2, Transport::GoBackN, 0, 1, false),
            (Rx::OutOfSequence, Reply::Nak(1))
        );
        assert_eq!(
            r.on_data(3, Transport::GoBackN, 0, 1, false),
            (Rx::OutOfSequence, Reply::None)
        );
        s.on_nak(1);
        assert_eq!(s.next_psn(Transport::GoBackN, 0), Some((1, true)));
    }

    /// IBA 9.7.5.1.1 across the wrap: PSN 1 is ahead of an expected PSN 0 (a sequence error),
    /// 0xFFFFFF behind it (a duplicate); the sender maps the NAK's PSN 0 back to its sequence.
    #[test]
    fn psns_compare_across_the_wrap() {
        let k = Transport::GoBackN;
        let mut s = Qp::new(0, 1, 0, 0, k, 0);
        s.ipsn = psn::PSN_MASK - 1;
        let mut r = s.clone();
        s.post(0, 5 * 100, 100);
        let wire: Vec<u32> = (0..5)
            .map(|_| {
                let q = s.next_psn(k, 0).unwrap().0;
                s.wire_psn(q)
            })
            .collect();
        assert_eq!(wire, vec![psn::PSN_MASK - 1, psn::PSN_MASK, 0, 1, 2]);
        assert_eq!(
            r.on_data(wire[0], k, 0, 1, false),
            (Rx::Accepted, Reply::Ack(psn::PSN_MASK))
        );
        assert_eq!(
            r.on_data(wire[1], k, 0, 1, false),
            (Rx::Accepted, Reply::Ack(0))
        );
        // PSN 0 lost.
        assert_eq!(
            r.on_data(wire[3], k, 0, 1, false),
            (Rx::OutOfSequence, Reply::Nak(0))
        );
        assert_eq!(
            r.on_data(wire[1], k, 0, 1, false),
            (Rx::Duplicate, Reply::Ack(0))
        );
        assert!(s.on_nak(0));
        assert_eq!((s.una, s.next_psn(k, 0)), (2, Some((2, true))));
    }
}
