//! Unordered placement: the receiver writes an out-of-order packet to its place in the message
//! and acknowledges cumulatively, never NAKing or SACKing a gap, so packets that only arrive
//! late (adaptive routing, spraying) cost no resend; a message completes when every one of its
//! PSNs (and those before it on the QP: RC completes in order) has arrived. A lost packet is
//! found by the local ACK timeout and resent as selective repeat resends after one
//! (`timeout`). The receiver of NVIDIA adaptive routing (`RoutePolicy::Adaptive`) and of
//! spraying; the placement Ultra Ethernet's reliable unordered delivery (RUD) builds on.

use super::{Qp, Reply, Rx};

impl Qp {
    /// The receiver's answer to a packet ahead of the expected PSN: placed (or a duplicate),
    /// and the cumulative ACK repeated; beyond the window, discarded.
    #[inline]
    pub(super) fn place_out_of_order(&mut self, psn: u32, window: u32) -> (Rx, Reply) {
        match self.place(psn, window) {
            Some(rx) => (rx, Reply::Ack(self.expected)),
            None => (Rx::OutOfSequence, Reply::None),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use fabricsim_mech::Transport;

    /// Reordered packets are placed and answered with the cumulative ACK only; the hole's
    /// arrival moves the ACK past everything placed, and nothing is resent.
    #[test]
    fn reordering_is_placed_without_naks_or_sacks() {
        let k = Transport::Unordered;
        let mut s = Qp::new(0, 1, 0, 0, k, 16);
        s.post(0, 4 * 100, 100);
        let mut r = s.clone();
        for _ in 0..4 {
            s.next_psn(k, 16).unwrap();
        }
        assert_eq!(r.on_data(1, k, 16, 1, false), (Rx::Accepted, Reply::Ack(0)));
        assert_eq!(r.on_data(3, k, 16, 1, true), (Rx::Accepted, Reply::Ack(0)));
        assert_eq!(
            r.on_data(1, k, 16, 1, false),
            (Rx::Duplicate, Reply::Ack(0))
        );
        assert_eq!(r.next_received(), None);
        assert_eq!(r.on_data(0, k, 16, 1, false), (Rx::Accepted, Reply::Ack(2)));
        assert_eq!(r.on_data(2, k, 16, 1, false), (Rx::Accepted, Reply::Ack(4)));
        assert_eq!(r.next_received(), Some(0));
        assert!(s.on_ack(4));
        assert_eq!(s.next_psn(k, 16), None);
    }
}
