//! Go-back-0, the recovery of early RoCE NIC firmware (Guo et al., "RDMA over Commodity
//! Ethernet at Scale", SIGCOMM 2016, 4.1): a PSN sequence error discards what the receiver holds
//! of the message and NAKs its first PSN; the sender restarts the message from there, below
//! PSNs already acknowledged. ACKs, and a timeout's resend from the oldest unacknowledged PSN,
//! are go-back-N's. A message longer than the gap between two losses never completes: the
//! livelock Guo et al. measured under a deterministic 1/256 drop.

use super::{Qp, Reply, Rx};

impl Qp {
    /// The first PSN of the message being received (`expected` itself between messages).
    #[inline]
    fn rx_first(&self) -> u32 {
        self.segs
            .get((self.rx_seg - self.segs_popped) as usize)
            .map_or(self.expected, |s| s.first)
    }

    /// The receiver's answer to a packet ahead of the expected PSN: discard it and, at the
    /// first sequence error, the message's packets received so far (`Rx::Restart` counts them),
    /// NAKing the message's first PSN.
    #[inline]
    pub(super) fn restart_message(&mut self) -> (Rx, Reply) {
        if self.nak_sent {
            return (Rx::OutOfSequence, Reply::None);
        }
        self.nak_sent = true;
        let first = self.rx_first();
        let discarded = self.expected - first;
        self.expected = first;
        (Rx::Restart(discarded), Reply::Nak(first))
    }

    /// Go-back-0 NAK: everything before wire PSN `e`, a message's first, arrived; the message
    /// is resent from `e`, acknowledged packets of it included. Returns whether `una` advanced.
    pub fn on_restart(&mut self, e: u32) -> bool {
        let front = self.segs.front().map_or(self.una, |s| s.first);
        match self.seq_of(e, front) {
            Some(f) if f < self.una => {
                self.una = f;
                self.nxt = f;
                false
            }
            _ => self.on_nak(e),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use fabricsim_mech::Transport;

    /// A loss in the middle of a message sends the receiver back to its first PSN and the
    /// sender back to the message's first packet, though the packets before the loss were
    /// acknowledged.
    #[test]
    fn a_loss_restarts_the_message_from_its_first_packet() {
        let k = Transport::GoBack0;
        let mut s = Qp::new(0, 1, 0, 0, k, 0);
        s.post(0, 2 * 100, 100);
        s.post(1, 4 * 100, 100);
        let mut r = s.clone();
        for _ in 0..6 {
            s.next_psn(k, 0).unwrap();
        }
        assert_eq!(r.on_data(0, k, 0, 1, false), (Rx::Accepted, Reply::Ack(1)));
        assert_eq!(r.on_data(1, k, 0, 1, true), (Rx::Accepted, Reply::Ack(2)));
        assert_eq!(r.next_received(), Some(0));
        // Message 1 is PSNs 2..6: 2 and 3 arrive and are ACKed, 4 is lost, 5 restarts it.
        assert_eq!(r.on_data(2, k, 0, 1, false), (Rx::Accepted, Reply::Ack(3)));
        assert_eq!(r.on_data(3, k, 0, 1, false), (Rx::Accepted, Reply::Ack(4)));
        assert!(s.on_ack(4));
        assert_eq!(s.pop_acked(), Some(0));
        assert_eq!(r.on_data(5, k, 0, 1, true), (Rx::Restart(2), Reply::Nak(2)));
        assert_eq!(r.expected, 2);
        assert!(!s.on_restart(2));
        assert_eq!((s.una, s.next_psn(k, 0)), (2, Some((2, true))));
        assert_eq!(r.on_data(2, k, 0, 1, false), (Rx::Accepted, Reply::Ack(3)));
    }
}
