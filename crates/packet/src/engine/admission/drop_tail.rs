//! Drop-tail admission (lossy Ethernet): a shared buffer with dynamic thresholds, where a queue
//! may grow to alpha x the free buffer (Choudhury & Hahne, IEEE/ACM ToN 1998); a packet that
//! does not fit is dropped.

use super::Admission;
use crate::engine::Engine;
use crate::packet::Packet;
use fabricsim_mech::results::DropReason;

/// No link-level flow control: every class is drop-tail.
pub(in crate::engine) enum DropTail {}

impl Admission for DropTail {
    #[inline(always)]
    fn admit(e: &mut Engine<'_>, id: u32, node: usize, _in_port: usize, out: usize, pk: &Packet) {
        e.drop_tail::<Self>(id, node, out, pk)
    }
}

impl Engine<'_> {
    /// Packet `id` (`pk`) of a lossy class at switch `node`, routed to egress `out`, under
    /// policy `A`: dropped when it does not fit, else sent on or queued.
    #[inline(always)]
    pub(super) fn drop_tail<A: Admission>(
        &mut self,
        id: u32,
        node: usize,
        out: usize,
        pk: &Packet,
    ) {
        let frame = pk.frame as u64;
        let used = self.buf_used[node];
        let size = self.p.switch_buffer_bytes;
        let port = &self.ports[out];
        let idle = port.queued == 0 && !port.wake && !port.llr_hold && port.busy_until <= self.now;
        if idle && port.blocked & (1 << pk.tc) == 0 {
            // An idle egress with empty queues: straight to the wire (the packet passes through
            // the buffer in no time, so admission sees an empty queue).
            if used + frame > size || frame * 1024 > self.alpha_x1024 * (size - used) {
                return self.drop_pkt(id, DropReason::Buffer);
            }
            return self.transmit::<A>(out, id, pk.tc, pk.frame);
        }
        let qi = out * self.ntc + pk.tc as usize;
        let qlen = self.tcq[qi].bytes;
        if used + frame > size || (qlen + frame) * 1024 > self.alpha_x1024 * (size - used) {
            return self.drop_pkt(id, DropReason::Buffer);
        }
        self.enqueue::<A>(node, out, id, pk);
    }
}
