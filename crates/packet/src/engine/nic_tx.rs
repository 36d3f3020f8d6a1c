//! The NIC send path: QPs with something to send in a round-robin ring, ACK/NAKs first,
//! segmentation, rate limiting, the retransmission timer armed.

use super::admission::Admission;
use super::{Engine, Ev};
use crate::packet::{F_LAST, F_RETX, Kind, Packet};
use fabricsim_core::units::Time;
use fabricsim_mech::Transport;

impl Engine<'_> {
    /// Puts `qp` in its NIC's ring if it has something to send, and wakes the NIC port.
    pub(super) fn activate(&mut self, qp: u32) {
        let q = &mut self.qps[qp as usize];
        if q.active || !q.can_send(self.recovery, self.cc.window[qp as usize]) {
            return;
        }
        q.active = true;
        let h = q.src as usize;
        self.nics[h].ring.push_back(&mut self.qp_rings, qp);
        let port = self.nics[h].port as usize;
        self.kick_any(port);
    }

    /// The next packet a NIC sends: ACK/NAKs first, then its QPs round robin.
    #[inline]
    pub(super) fn nic_next<A: Admission>(&mut self, h: usize) -> Option<(u32, u8, u16)> {
        let pi = self.nics[h].port as usize;
        let peer = self.ports[pi].peer;
        if let Some((id, f)) = self.nics[h].ctrl.head(&self.queued) {
            let pk = self.pkts.get(id);
            let (tc, kind) = (pk.tc, pk.kind);
            if A::may_send(self, pi, tc, f as u32) {
                self.pkts.get_mut(id).port = peer;
                self.nics[h].ctrl.pop(&self.queued).expect("a head");
                if kind != Kind::Cnp {
                    self.c.ack_packets += 1;
                }
                return Some((id, tc, f));
            }
        }
        let full = self.p.data_frame_bytes(self.p.mtu_bytes);
        let (kind, mtu) = (self.recovery, self.p.mtu_bytes);
        // Classes found paused or short of credits in this pass (checked once per class).
        let (mut stopped, mut checked) = (0u8, 0u8);
        for _ in 0..self.nics[h].ring.len() {
            let qi = self.nics[h].ring.pop_front(&self.qp_rings)?;
            let tc = self.qps[qi as usize].tc;
            let bit = 1u8 << tc;
            if checked & bit == 0 {
                checked |= bit;
                if !A::may_send(self, pi, tc, full) {
                    stopped |= bit;
                }
            }
            if stopped & bit != 0 {
                // Its class is paused (PFC) or short of credits: it stays in the ring for when
                // the class may send again, and the other classes go on (IEEE 802.1Qbb).
                self.nics[h].ring.push_back(&mut self.qp_rings, qi);
                continue;
            }
            let window = self.cc.window[qi as usize];
            let qp = &mut self.qps[qi as usize];
            if qp.next_send > self.now {
                qp.active = false;
                self.q.push(qp.next_send.0, Ev::QpWake { qp: qi });
                continue;
            }
            let was_idle = !qp.outstanding();
            let Some((psn, retx)) = qp.next_psn(kind, window) else {
                qp.active = false;
                continue;
            };
            let (payload, last) = qp.packet_of(psn, mtu);
            let frame = self.p.data_frame_bytes(payload);
            if qp.can_send(kind, window) {
                self.nics[h].ring.push_back(&mut self.qp_rings, qi);
            } else {
                qp.active = false;
            }
            if qp.limit_ps_per_byte > 0 {
                qp.next_send =
                    self.now + Time((frame + self.wire_extra) as u64 * qp.limit_ps_per_byte);
            }
            if kind == Transport::Rud {
                // UEC PDS `RTO_Init_Time`: each packet's timer runs from its latest send; with no
                // timer event pending no other packet is timed.
                qp.rud_sent(psn, retx, self.now);
                if !qp.timer_pending {
                    qp.rto_deadline = self.now + self.rto;
                }
            } else if was_idle {
                qp.rto_deadline = self.now + self.rto;
            }
            if !qp.timer_pending {
                qp.timer_pending = true;
                self.q
                    .push(qp.rto_deadline.0.max(self.now.0), Ev::Timer { qp: qi });
            }
            let mut pkt = Packet {
                qp: qi,
                psn: qp.wire_psn(psn),
                aux: 0,
                dst: qp.dst,
                hash: qp.hash_fwd,
                payload: payload as u16,
                frame: frame as u16,
                port: peer,
                kind: Kind::Data,
                tc: qp.tc,
                flags: if last { F_LAST } else { 0 } | self.ar_flags(qi, psn),
                ev: 0,
            };
            pkt.aux = self.spray_entropy(h, qi, psn);
            let id = self.pkts.alloc(pkt);
            self.cc_sent(qi, id, (frame + self.wire_extra) as u64);
            self.c.bytes_offered += payload as u64;
            self.c.data_packets += 1;
            self.data_sent += 1;
            if retx {
                self.c.retransmitted_packets += 1;
                // SAFETY: `id` was just allocated.
                unsafe { self.pkts.get_unchecked_mut(id) }.flags |= F_RETX;
            }
            return Some((id, pkt.tc, pkt.frame));
        }
        None
    }
}
