//! The engine's hooks for congestion control (`fabricsim_mech::cc`, `crate::congestion`:
//! telemetry, notification, ACK, timers, send) and the application of what they ask (pacing,
//! window, timers). Each is called from one place in the engine; marking is `engine/mark.rs`,
//! the adaptive route choice `engine/adaptive.rs`.

use super::{Engine, Ev};
use crate::congestion::{Acked, CcOut, CongestionControl, Echo, Gap, Hop, TimerId};
use crate::packet::{Kind, NIL, Packet};
use fabricsim_core::units::Time;

impl Engine<'_> {
    /// Packet `id` of `wire` bytes started its transmission on egress `out` of a switch
    /// (`tx_hooks`): the congestion control's telemetry of a data packet.
    pub(super) fn cc_egress(&mut self, id: u32, out: usize, wire: u32) {
        let port = &self.ports[out];
        if self.pkts.get(id).kind != Kind::Data {
            return;
        }
        let hop = Hop {
            now: self.now,
            queue_bytes: port.queued,
            // Sent before this packet.
            tx_bytes: port.tx_bytes - wire as u64,
            rate: port.rate,
        };
        self.cc.alg.on_egress(id, &hop);
    }

    /// The receiver NIC answers data packet `data` with ACK `ack`, echoing `echo`.
    #[inline]
    pub(super) fn cc_echo(&mut self, data: u32, ack: u32, echo: Echo) {
        if self.cc.acks {
            self.cc.alg.on_echo(data, ack, echo);
        }
    }

    /// The receiver NIC got a marked data packet of QP `qi`: the notification point (DCQCN's
    /// CNP, IB CC's BECN) may return a notification to the source.
    pub(super) fn cc_marked_rx(&mut self, qi: u32) {
        if !self.cc.alg.on_marked(qi, self.now) {
            return;
        }
        let qp = &self.qps[qi as usize];
        // RoCEv2 CNP: BTH + 16 reserved bytes (IBA annex A17.9.3); the IB BECN packet likewise.
        let frame = (self.p.header_bytes + 16).max(self.p.min_frame_bytes) as u16;
        let cnp = Packet {
            qp: qi,
            psn: 0,
            aux: 0,
            dst: qp.src,
            hash: qp.hash_rev,
            payload: 0,
            frame,
            port: NIL,
            kind: Kind::Cnp,
            tc: self.p.cc.cnp_tc,
            flags: 0,
            ev: 0,
        };
        let h = qp.dst as usize;
        let id = self.pkts.alloc(cnp);
        self.nics[h].ctrl.push(&mut self.queued, id, frame);
        self.c.cnps += 1;
        let port = self.nics[h].port as usize;
        self.kick_any(port);
    }

    /// A CNP/BECN reached the source of QP `qi`.
    pub(super) fn cc_notified(&mut self, qi: u32) {
        let line = self.cc.line[qi as usize];
        let out = self.cc.alg.on_notified(qi, self.now, line);
        self.cc_apply(qi, out);
    }

    /// ACK `ack` (or a NAK/SACK) reached the source of QP `qi` and was applied, acknowledging
    /// `newly` packets for the first time. Inlined as far as the test for an algorithm that
    /// takes ACKs, the hook itself a call.
    #[inline(always)]
    pub(super) fn cc_acked(&mut self, qi: u32, ack: u32, newly: u32) {
        if self.cc.acks {
            self.cc_acked_on(qi, ack, newly);
        }
    }

    #[inline(never)]
    fn cc_acked_on(&mut self, qi: u32, ack: u32, newly: u32) {
        let (line, qp) = (self.cc.line[qi as usize], &self.qps[qi as usize]);
        let a = Acked {
            now: self.now,
            una: qp.una,
            nxt: qp.nxt,
            newly,
            sacked: qp.sacked_n,
        };
        let out = self.cc.alg.on_ack(qi, ack, &a, line);
        self.cc_apply(qi, out);
    }

    pub(super) fn cc_timer(&mut self, qi: u32, timer: TimerId) {
        let line = self.cc.line[qi as usize];
        let out = self.cc.alg.on_timer(qi, timer, self.now, line);
        self.cc_apply(qi, out);
    }

    /// QP `qi` put data packet `id` of `wire` bytes on the wire: pacing by the
    /// congestion-controlled rate, then the congestion control's own count. Inlined into the
    /// send path (a call saved and restored registers around every data packet sent).
    #[inline(always)]
    pub(super) fn cc_sent(&mut self, qi: u32, id: u32, wire: u64) {
        let q = qi as usize;
        let gap = self.cc.gap_q16[q];
        if gap != 0 {
            let at = self.now + Time((wire as u128 * gap as u128 >> 16) as u64);
            let qp = &mut self.qps[q];
            qp.next_send = qp.next_send.max(at);
        }
        let out = self.cc.alg.on_sent(qi, id, wire, self.now, self.cc.line[q]);
        self.cc_apply(qi, out);
    }

    /// Applies what a hook asks (`out`) to QP `qi`: the pacing gap, the window, the timers.
    #[inline(always)]
    fn cc_apply(&mut self, qi: u32, out: Option<CcOut>) {
        if let Some(out) = &out {
            self.cc_apply_out(qi, out);
        }
    }

    fn cc_apply_out(&mut self, qi: u32, out: &CcOut) {
        match out.gap {
            Gap::Keep => {}
            Gap::Rate(g) => self.set_gap(qi, g),
            Gap::Delay(g) => self.cc.gap_q16[qi as usize] = g,
        }
        if let Some(w) = out.window {
            self.cc.window[qi as usize] = w;
        }
        for &(timer, at) in out.arms() {
            self.q.push(at.0, Ev::CcTimer { qp: qi, timer });
        }
    }

    /// A new pacing gap for QP `qi`. The wait still due after its last packet is the byte
    /// deficit of a rate limiter, so it is rescaled to the new rate (HPCC ns-3 `RdmaHw::
    /// ChangeRate` moves `m_nextAvail` likewise): a packet sent at 1 Mb/s must not hold the QP
    /// for 33 ms after the rate has recovered.
    fn set_gap(&mut self, qi: u32, gap_q16: u64) {
        let q = qi as usize;
        let old = std::mem::replace(&mut self.cc.gap_q16[q], gap_q16);
        let qp = &mut self.qps[q];
        if old == gap_q16 || old == 0 || qp.next_send <= self.now {
            return;
        }
        let wait = (qp.next_send.0 - self.now.0) as u128 * gap_q16 as u128 / old as u128;
        qp.next_send = self.now + Time(wait as u64);
        if gap_q16 < old {
            // Sooner than the wake already queued (a stale wake finds the QP active or waiting).
            self.q.push(qp.next_send.0, Ev::QpWake { qp: qi });
        }
    }
}
