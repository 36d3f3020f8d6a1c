//! The NIC receive path and the RC transport's reactions: data in order or not (ACK, NAK, SACK),
//! ACKs at the sender (completions), CNPs, and the retransmission timeout.

use super::{Engine, Ev, MsgState};
use crate::congestion::Echo;
use crate::packet::{F_ECE, F_ECN, F_LAST, Kind, NIL, Packet};
use crate::transport::{Reply, Rx};
use fabricsim_mech::Transport;
use fabricsim_mech::results::DropReason;

impl Engine<'_> {
    /// Packet `pk` (`id`) reached its NIC. Out of line: a sixth of the hops end here, and the
    /// switch hop, inlined into the event loop, stays short.
    #[inline(never)]
    pub(super) fn nic_receive(&mut self, id: u32, pk: &Packet) {
        let (kind, window) = (self.recovery, self.p.window_packets);
        let qi = pk.qp;
        match pk.kind {
            Kind::Data => {
                let qp = &mut self.qps[qi as usize];
                let (rx, reply) = qp.on_data(
                    pk.psn,
                    kind,
                    window,
                    self.p.ack_every,
                    pk.flags & F_LAST != 0,
                );
                let mut completes = false;
                match rx {
                    Rx::Accepted => {
                        self.c.bytes_delivered += pk.payload as u64;
                        self.pkts.free(id);
                        if kind == Transport::Rud {
                            // RUD: a message is received when all its packets are.
                            if let Some(m) = qp.rud_received(pk.psn) {
                                received(&mut self.msgs[m as usize], self.now.0);
                                completes = true;
                            }
                        } else {
                            // Messages whose every PSN is now in order are received.
                            while let Some(m) = qp.next_received() {
                                received(&mut self.msgs[m as usize], self.now.0);
                                completes = true;
                            }
                        }
                    }
                    Rx::OutOfSequence => self.drop_pkt(id, DropReason::OutOfSequence),
                    Rx::Duplicate => self.drop_pkt(id, DropReason::Duplicate),
                    Rx::Restart(discarded) => {
                        self.drop_pkt(id, DropReason::OutOfSequence);
                        self.discard_received(discarded);
                    }
                }
                if pk.flags & F_ECN != 0 {
                    self.cc_marked_rx(qi);
                }
                let (k, psn, aux) = match reply {
                    Reply::None => return,
                    Reply::Ack(e) => (Kind::Ack, e, 0),
                    Reply::Nak(e) => (Kind::Nak, e, 0),
                    Reply::Sack(e, s) => (Kind::Sack, e, s),
                };
                let echo = Echo {
                    marked: pk.flags & F_ECN != 0,
                    trimmed: false,
                    ev: pk.aux as u8,
                    qp: qi,
                    accepted: rx == Rx::Accepted,
                    completes,
                };
                self.reply(id, qi, (k, psn, aux), echo);
            }
            // A trimmed packet's header (UEC 1.0 3.6.17): NACKed at once, nothing placed.
            Kind::Trimmed => {
                self.pkts.free(id);
                let echo = Echo {
                    marked: pk.flags & F_ECN != 0,
                    trimmed: true,
                    ev: pk.aux as u8,
                    qp: qi,
                    accepted: false,
                    completes: false,
                };
                self.reply(id, qi, (Kind::Nak, pk.psn, 0), echo);
            }
            Kind::Ack | Kind::Nak | Kind::Sack if kind == Transport::Rud => {
                self.pkts.free(id);
                self.reps_ack(qi, pk);
                self.rud_reply(qi, id, pk);
            }
            Kind::Ack | Kind::Nak | Kind::Sack => {
                self.pkts.free(id);
                self.reps_ack(qi, pk);
                let qp = &mut self.qps[qi as usize];
                let una = qp.una;
                let advanced = match pk.kind {
                    Kind::Ack => qp.on_ack(pk.psn),
                    Kind::Nak if kind == Transport::GoBack0 => qp.on_restart(pk.psn),
                    Kind::Nak => qp.on_nak(pk.psn),
                    _ => qp.on_sack(pk.psn, pk.aux),
                };
                let newly = self.qps[qi as usize].una.saturating_sub(una);
                self.cc_acked(qi, id, newly);
                let qp = &mut self.qps[qi as usize];
                if advanced {
                    qp.retries = 0;
                    qp.rto_deadline = self.now + self.rto;
                    while let Some(m) = self.qps[qi as usize].pop_acked() {
                        self.complete(m);
                    }
                }
                self.activate(qi);
            }
            Kind::Cnp => {
                self.pkts.free(id);
                self.cc_notified(qi);
            }
        }
    }

    /// The receiver of packet `id` on QP `qi` answers with `k` (wire PSN `psn`, `aux`) on the
    /// ACK class, ahead of its NIC's data, echoing `echo` to the congestion control.
    #[inline(always)]
    fn reply(&mut self, id: u32, qi: u32, (k, psn, aux): (Kind, u32, u32), echo: Echo) {
        // A NAK, or a SACK that reveals a hole to selective repeat; RUD SACKs every reordered
        // packet as its acknowledgement (UEC 1.0 3.5.7: reordering never triggers a resend), so
        // a sprayed fabric's SACKs are no loss signal and are not counted.
        if k == Kind::Nak || (k == Kind::Sack && self.recovery != Transport::Rud) {
            self.c.naks += 1;
        }
        let qp = &self.qps[qi as usize];
        let ack = Packet {
            qp: qi,
            psn,
            aux,
            dst: qp.src,
            hash: qp.hash_rev,
            payload: 0,
            frame: self.p.ack_frame_bytes() as u16,
            port: NIL,
            kind: k,
            tc: self.p.ack_tc,
            flags: if echo.marked || echo.trimmed {
                F_ECE
            } else {
                0
            },
            ev: echo.ev,
        };
        let h = qp.dst as usize;
        let aid = self.pkts.alloc(ack);
        self.cc_echo(id, aid, echo);
        self.nics[h]
            .ctrl
            .push(&mut self.queued, aid, self.p.ack_frame_bytes() as u16);
        let port = self.nics[h].port as usize;
        self.kick_any(port);
    }

    /// Go-back-0's receiver discarded the `packets` full-MTU packets of a message it had
    /// delivered: their bytes count as dropped out of sequence, not delivered.
    fn discard_received(&mut self, packets: u32) {
        let bytes = packets as u64 * self.p.mtu_bytes as u64;
        self.c.bytes_delivered -= bytes;
        self.c.bytes_dropped += bytes;
        for _ in 0..packets {
            self.c.drops.add(DropReason::OutOfSequence);
        }
    }

    /// The local ACK timer of `qp` fires (lazily re-armed: one pending event per QP).
    pub(super) fn timer(&mut self, qi: u32) {
        let now = self.now;
        let qp = &mut self.qps[qi as usize];
        qp.timer_pending = false;
        if !qp.outstanding() || qp.failed {
            return;
        }
        if self.recovery == Transport::Rud {
            return self.timer_rud(qi);
        }
        if now < qp.rto_deadline {
            qp.timer_pending = true;
            self.q.push(qp.rto_deadline.0, Ev::Timer { qp: qi });
            return;
        }
        qp.retries += 1;
        if qp.retries > self.p.retry_count {
            // IBA: retries exhausted, the QP enters the error state; its messages fail.
            return self.fail_qp(qi);
        }
        self.c.timeouts += 1;
        qp.on_timeout(self.recovery);
        qp.rto_deadline = now + self.rto;
        qp.timer_pending = true;
        self.q.push(qp.rto_deadline.0, Ev::Timer { qp: qi });
        self.activate(qi);
    }
}

impl Engine<'_> {
    /// QP `qi` exhausted its retries: the error state (IBA 9.7.6.1.3; UEC PDS: a failure
    /// event); its messages fail.
    fn fail_qp(&mut self, qi: u32) {
        let qp = &mut self.qps[qi as usize];
        qp.failed = true;
        self.c.qp_errors += 1;
        let failed: Vec<u32> = qp.segs.iter().map(|s| s.msg).collect();
        for m in failed {
            self.msgs[m as usize].failed = true;
        }
    }

    /// RUD's timer event: the packets whose own timers expired are resent, each counted as a
    /// timeout; the timer re-armed at the earliest deadline still running (UEC PDS
    /// `RTO_Init_Time`, `transport::rud`).
    fn timer_rud(&mut self, qi: u32) {
        let qp = &mut self.qps[qi as usize];
        let e = qp.rud_expire(self.now, self.rto, self.p.retry_count);
        if e.exhausted {
            return self.fail_qp(qi);
        }
        self.c.timeouts += e.expired as u64;
        if let Some(t) = e.next {
            qp.rto_deadline = t;
            qp.timer_pending = true;
            self.q.push(t.0, Ev::Timer { qp: qi });
        }
        if e.expired > 0 {
            self.activate(qi);
        }
    }
}

/// A part of message `st` is received in full at `now`.
#[inline]
fn received(st: &mut MsgState, now: u64) {
    st.recv_left -= 1;
    if st.recv_left == 0 {
        st.recv = now;
    }
}
