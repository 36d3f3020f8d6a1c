//! The engine's hook for the marking seam (`crate::marking`): a data packet leaving a switch
//! egress queue is marked (ECN CE or IB FECN, the `F_ECN` flag) by the run's rule.

use super::Engine;
use crate::packet::F_ECN;

impl Engine<'_> {
    /// A data packet of class `tc` leaves switch `node`'s egress queue at `out`, `queue_bytes`
    /// of its class staying behind. Marking at dequeue, as the HPCC ns-3 switch
    /// (`SwitchNotifyDequeue`) and Mellanox switches do, so the mark does not wait behind the
    /// queue it reports. Inlined into the dequeue as far as the test for a rule, the marking
    /// itself a call.
    #[inline(always)]
    pub(super) fn mark(&mut self, id: u32, node: usize, out: usize, tc: usize, queue_bytes: u64) {
        if !self.cc.marking.is_off() {
            self.mark_by_rule(id, node, out, tc, queue_bytes);
        }
    }

    /// `mark` under a rule. IB FECN asks whether the port is a victim: whether it waited for
    /// credits of class `tc` within the time its link drains the bytes asked.
    #[inline(never)]
    fn mark_by_rule(&mut self, id: u32, node: usize, out: usize, tc: usize, queue_bytes: u64) {
        let (ports, credits, now) = (&self.ports, &self.fc.credits, self.now.0);
        let victim = |bytes: u64| {
            let window = ports[out].ser(bytes.min(u32::MAX as u64) as u32);
            credits
                .as_ref()
                .is_some_and(|c| c.starved_since(out, tc, now.saturating_sub(window.0)))
        };
        if self.cc.marking.mark(queue_bytes, node, out, victim) {
            self.pkts.get_mut(id).flags |= F_ECN;
            self.c.ecn_marks += 1;
        }
    }
}
