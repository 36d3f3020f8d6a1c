//! The sender's side of RUD in the engine (UEC 1.0 3.5.7, `transport::rud`): an ACK, SACK or
//! NACK back at the NIC completes the messages whose packets are now all acknowledged, in any
//! order, and queues a NACKed packet for resending.

use super::Engine;
use crate::packet::{Kind, Packet};

impl Engine<'_> {
    /// ACK, SACK or NACK `pk` (freed `id`) for QP `qi` under RUD.
    pub(super) fn rud_reply(&mut self, qi: u32, id: u32, pk: &Packet) {
        let qp = &mut self.qps[qi as usize];
        let advanced = match pk.kind {
            Kind::Nak => {
                qp.on_rud_nack(pk.psn);
                qp.newly_acked = 0;
                false
            }
            Kind::Ack => qp.on_rud_ack(pk.psn, None, &mut self.rud_done),
            _ => qp.on_rud_ack(pk.psn, Some(pk.aux), &mut self.rud_done),
        };
        let newly = qp.newly_acked;
        self.cc_acked(qi, id, newly);
        let qp = &mut self.qps[qi as usize];
        if advanced {
            // The timers are per packet (`transport::rud`), not restarted here.
            // The fronts' completions are in `rud_done` already.
            while qp.pop_acked().is_some() {}
        }
        for j in 0..self.rud_done.len() {
            self.complete(self.rud_done[j]);
        }
        self.rud_done.clear();
        self.activate(qi);
    }
}
