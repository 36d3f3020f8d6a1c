//! Packet trimming (UEC 1.0 3.6.17, as Tomahawk 5/6 switches do it): at a lossy class, a data
//! packet that would take its egress queue past the trim threshold (1 x the plane BDP; a
//! retransmission 1.5 x, so a resend gets through a queue that new data holds at 1 x) is cut
//! to its header and forwarded on the ACK class, ahead of the data, so the receiver learns of
//! the loss within a round trip and NACKs it (`nic_rx`); its payload counts as dropped. What
//! the buffer's dynamic threshold refuses is still dropped (drop-tail beyond, 2-5 x BDP).

use super::Admission;
use crate::engine::Engine;
use crate::packet::{F_RETX, Kind, Packet};

/// Lossy classes with trimming, no link-level flow control.
pub(in crate::engine) enum Trim {}

impl Admission for Trim {
    #[inline(always)]
    fn admit(e: &mut Engine<'_>, id: u32, node: usize, _in_port: usize, out: usize, pk: &Packet) {
        let qlen = e.tcq[out * e.ntc + pk.tc as usize].bytes;
        let t = e.p.cc.trim_bytes;
        let limit = if pk.flags & F_RETX != 0 { t + t / 2 } else { t };
        if pk.kind == Kind::Data && qlen + pk.frame as u64 > limit {
            let header = e.trim(id);
            return e.drop_tail::<Self>(id, node, out, &header);
        }
        e.drop_tail::<Self>(id, node, out, pk)
    }
}

impl Engine<'_> {
    /// Cuts data packet `id` to its header on the ACK class; returns the header (the slab's
    /// copy: it holds the next port `bind` gave it).
    #[inline(never)]
    fn trim(&mut self, id: u32) -> Packet {
        let pk = self.pkts.get_mut(id);
        self.c.trimmed += 1;
        self.c.bytes_dropped += pk.payload as u64;
        *pk = Packet {
            kind: Kind::Trimmed,
            payload: 0,
            frame: self.p.data_frame_bytes(0) as u16,
            tc: self.p.ack_tc,
            ..*pk
        };
        *pk
    }
}
