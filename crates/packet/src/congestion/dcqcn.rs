//! DCQCN at the NICs (Zhu et al., "Congestion Control for Large-Scale RDMA Deployments",
//! SIGCOMM 2015, §3: the notification point and the reaction point), with the timer structure
//! of NVIDIA ConnectX firmware and the HPCC ns-3 model (`rdma-hw.cc` `*Mlx`); the reaction
//! point's arithmetic is `sim::dcqcn`.

use super::{CcOut, CcSetup, CongestionControl, Gap, TimerId};
use fabricsim_core::units::{BitRate, Time};
use fabricsim_mech::dcqcn::{DcqcnParams, Rp, RpAction};

const ALPHA: TimerId = TimerId::T0;
const INCREASE: TimerId = TimerId::T1;
/// A decrease waiting for the monitor period.
const DECREASE: TimerId = TimerId::T2;

pub struct Dcqcn {
    d: DcqcnParams,
    /// Reaction point per QP.
    rp: Vec<Rp>,
    /// Per QP: the NP's last CNP time (`None`: never).
    last_cnp: Vec<Option<Time>>,
    /// Per QP: timers pending (alpha, increase) and when the next increase is due.
    alpha_pending: Vec<bool>,
    increase_pending: Vec<bool>,
    increase_due: Vec<Time>,
}

impl Dcqcn {
    pub fn new(d: DcqcnParams, s: &CcSetup) -> Dcqcn {
        let nq = s.line.len();
        Dcqcn {
            d,
            rp: s.line.iter().map(|&l| Rp::new(l)).collect(),
            last_cnp: vec![None; nq],
            alpha_pending: vec![false; nq],
            increase_pending: vec![false; nq],
            increase_due: vec![Time::ZERO; nq],
        }
    }

    /// A reaction of `q`'s RP as the engine's new rate and the timers it asks for.
    fn act(&mut self, q: usize, a: RpAction, now: Time) -> Option<CcOut> {
        let mut out = CcOut {
            gap: Gap::Rate(a.gap_q16),
            ..CcOut::default()
        };
        if a.arm_alpha && !self.alpha_pending[q] {
            self.alpha_pending[q] = true;
            out.arm(ALPHA, now + self.d.alpha_update);
        }
        if a.arm_increase {
            // T restarts at every decrease and after every increase.
            self.increase_due[q] = now + self.d.rate_increase_timer;
            if !self.increase_pending[q] {
                self.increase_pending[q] = true;
                out.arm(INCREASE, self.increase_due[q]);
            }
        }
        if let Some(at) = a.arm_decrease_at {
            out.arm(DECREASE, at);
        }
        Some(out)
    }
}

impl CongestionControl for Dcqcn {
    /// The RP's byte counter.
    #[inline]
    fn on_sent(
        &mut self,
        qp: u32,
        _pkt: u32,
        wire: u64,
        now: Time,
        line: BitRate,
    ) -> Option<CcOut> {
        let q = qp as usize;
        let a = self.rp[q].on_sent(&self.d, line, wire)?;
        self.act(q, a, now)
    }

    /// NP: a CNP, at most one per `cnp_interval`.
    fn on_marked(&mut self, qp: u32, now: Time) -> bool {
        let last = &mut self.last_cnp[qp as usize];
        if last.is_some_and(|t| now < t + self.d.cnp_interval) {
            return false;
        }
        *last = Some(now);
        true
    }

    fn on_notified(&mut self, qp: u32, now: Time, line: BitRate) -> Option<CcOut> {
        let q = qp as usize;
        let a = self.rp[q].on_cnp(&self.d, line, now);
        self.act(q, a, now)
    }

    fn on_timer(&mut self, qp: u32, timer: TimerId, now: Time, line: BitRate) -> Option<CcOut> {
        let q = qp as usize;
        let mut out = CcOut::default();
        match timer {
            ALPHA => {
                if self.rp[q].on_alpha_timer(&self.d) {
                    out.arm(ALPHA, now + self.d.alpha_update);
                } else {
                    self.alpha_pending[q] = false;
                }
                Some(out)
            }
            INCREASE => {
                self.increase_pending[q] = false;
                if !self.rp[q].active {
                    return None;
                }
                if now < self.increase_due[q] {
                    self.increase_pending[q] = true;
                    out.arm(INCREASE, self.increase_due[q]);
                    return Some(out);
                }
                let a = self.rp[q].on_increase_timer(&self.d, line);
                self.act(q, a, now)
            }
            _ => {
                let a = self.rp[q].on_decrease_timer(&self.d, line, now);
                self.act(q, a, now)
            }
        }
    }
}
