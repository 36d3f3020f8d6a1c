//! The engine's hooks for congestion control and adaptive routing (`sim::cc`): egress marking,
//! the notification point (CNP/BECN), the reaction point (DCQCN, IB CC), their timers, pacing,
//! and the adaptive route choice. Each is called from one place in the engine.

use super::{Engine, Ev};
use crate::packet::{F_ECN, Kind, NIL, Packet};
use fabricsim_core::units::Time;
use fabricsim_mech::cc::CcTimer;
use fabricsim_mech::dcqcn::RpAction;

impl Engine<'_> {
    /// A data packet of class `tc` leaves switch `node`'s egress queue at `out`, `queue_bytes` of its class
    /// staying behind: ECN CE (RED/step) or IB FECN (threshold, one in `marking_rate + 1`).
    /// Marking at dequeue, as the HPCC ns-3 switch (`SwitchNotifyDequeue`) and Mellanox
    /// switches do, so the mark does not wait behind the queue it reports. Inlined into the
    /// dequeue as far as the test for a marking policy, the marking itself a call.
    #[inline(always)]
    pub(super) fn cc_mark(
        &mut self,
        id: u32,
        node: usize,
        out: usize,
        tc: usize,
        queue_bytes: u64,
    ) {
        if self.cc.marker.is_some() {
            self.cc_mark_marking(id, node, out, tc, queue_bytes);
        }
    }

    /// `cc_mark` under a marking policy.
    #[inline(never)]
    fn cc_mark_marking(&mut self, id: u32, node: usize, out: usize, tc: usize, queue_bytes: u64) {
        let Some(m) = &self.cc.marker else {
            return;
        };
        if !m.mark(queue_bytes, &mut self.cc.rng[node]) {
            return;
        }
        if let Some(ib) = &self.p.cc.ibcc {
            // IBA A10: a congested port that waits for credits is a victim and marks only
            // with Victim_Mask. A port held up for credits within the time its link drains a
            // threshold's worth of queue could not have kept its queue below the threshold
            // by itself, so its congestion comes from downstream [E: the window].
            let window = self.ports[out].ser(ib.threshold_bytes.min(u32::MAX as u64) as u32);
            if !ib.victim_mask
                && let Some(c) = &self.fc.credits
                && c.starved_since(out, tc, self.now.0.saturating_sub(window.0))
            {
                return;
            }
            let skip = &mut self.cc.fecn_skip[out];
            if *skip > 0 {
                *skip -= 1;
                return;
            }
            *skip = ib.marking_rate;
        }
        self.pkts.get_mut(id).flags |= F_ECN;
        self.c.ecn_marks += 1;
    }

    /// The receiver NIC got a marked data packet of QP `qi`: DCQCN's NP sends a CNP (at most
    /// one per `cnp_interval`); IB CC returns a BECN for every FECN.
    pub(super) fn cc_marked_rx(&mut self, qi: u32) {
        let now = self.now;
        if let Some(d) = &self.p.cc.dcqcn {
            let last = &mut self.cc.last_cnp[qi as usize];
            if last.is_some_and(|t| now < t + d.cnp_interval) {
                return;
            }
            *last = Some(now);
        } else if self.p.cc.ibcc.is_none() {
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
        let q = qi as usize;
        let line = self.cc.line[q];
        if let Some(d) = &self.p.cc.dcqcn {
            let a = self.cc.rp[q].on_cnp(d, line, self.now);
            self.rp_act(qi, a);
        } else if let Some(ib) = &self.p.cc.ibcc {
            let arm = self.cc.cca[q].on_becn(ib);
            self.cc.gap_q16[q] = ib.gap_q16(self.cc.cca[q].ccti, line);
            if arm {
                self.arm(qi, CcTimer::Ccti, self.now + ib.ccti_timer);
            }
        }
    }

    fn arm(&mut self, qp: u32, timer: CcTimer, at: Time) {
        self.q.push(at.0, Ev::CcTimer { qp, timer });
    }

    /// Applies a DCQCN reaction: the new pacing gap and the timers it asks for.
    fn rp_act(&mut self, qi: u32, a: RpAction) {
        let q = qi as usize;
        let d = self.p.cc.dcqcn.expect("DCQCN on");
        self.set_gap(qi, a.gap_q16);
        if a.arm_alpha && !self.cc.alpha_pending[q] {
            self.cc.alpha_pending[q] = true;
            self.arm(qi, CcTimer::Alpha, self.now + d.alpha_update);
        }
        if a.arm_increase {
            // T restarts at every decrease and after every increase.
            self.cc.increase_due[q] = self.now + d.rate_increase_timer;
            if !self.cc.increase_pending[q] {
                self.cc.increase_pending[q] = true;
                self.arm(qi, CcTimer::Increase, self.cc.increase_due[q]);
            }
        }
        if let Some(at) = a.arm_decrease_at {
            self.arm(qi, CcTimer::Decrease, at);
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

    pub(super) fn cc_timer(&mut self, qi: u32, timer: CcTimer) {
        let q = qi as usize;
        let line = self.cc.line[q];
        let now = self.now;
        match timer {
            CcTimer::Alpha => {
                let d = self.p.cc.dcqcn.expect("DCQCN on");
                if self.cc.rp[q].on_alpha_timer(&d) {
                    self.arm(qi, CcTimer::Alpha, now + d.alpha_update);
                } else {
                    self.cc.alpha_pending[q] = false;
                }
            }
            CcTimer::Increase => {
                let d = self.p.cc.dcqcn.expect("DCQCN on");
                self.cc.increase_pending[q] = false;
                if !self.cc.rp[q].active {
                    return;
                }
                if now < self.cc.increase_due[q] {
                    self.cc.increase_pending[q] = true;
                    self.arm(qi, CcTimer::Increase, self.cc.increase_due[q]);
                    return;
                }
                let a = self.cc.rp[q].on_increase_timer(&d, line);
                self.rp_act(qi, a);
            }
            CcTimer::Decrease => {
                let d = self.p.cc.dcqcn.expect("DCQCN on");
                let a = self.cc.rp[q].on_decrease_timer(&d, line, now);
                self.rp_act(qi, a);
            }
            CcTimer::Ccti => {
                let ib = self.p.cc.ibcc.expect("IB CC on");
                let keep = self.cc.cca[q].on_timer(&ib);
                self.cc.gap_q16[q] = ib.gap_q16(self.cc.cca[q].ccti, line);
                if keep {
                    self.arm(qi, CcTimer::Ccti, now + ib.ccti_timer);
                }
            }
        }
    }

    /// QP `qi` put a packet of `wire` bytes on the wire: pacing by the congestion-controlled
    /// rate, and DCQCN's byte counter.
    #[inline]
    pub(super) fn cc_sent(&mut self, qi: u32, wire: u64) {
        let q = qi as usize;
        let gap = self.cc.gap_q16[q];
        if gap != 0 {
            let at = self.now + Time((wire as u128 * gap as u128 >> 16) as u64);
            let qp = &mut self.qps[q];
            qp.next_send = qp.next_send.max(at);
        }
        if let Some(d) = &self.p.cc.dcqcn
            && let Some(a) = self.cc.rp[q].on_sent(d, self.cc.line[q], wire)
        {
            self.rp_act(qi, a);
        }
    }
}
