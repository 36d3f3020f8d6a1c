//! InfiniBand congestion control at the channel adapters (IBA Vol. 1 annex A10, A10.2: the
//! destination returns a BECN for every FECN; the source raises its CCTI per BECN and lowers it
//! every CCTI_Timer, pacing by CCT[CCTI]); the switch's FECN marking is the marker's, the
//! arithmetic `sim::ibcc`.

use super::{CcOut, CcSetup, CongestionControl, Gap, TimerId};
use fabricsim_core::units::{BitRate, Time};
use fabricsim_mech::ibcc::{CcaState, IbCcParams};

/// The CCTI decrease timer.
const CCTI: TimerId = TimerId::T0;

pub struct IbCc {
    ib: IbCcParams,
    /// Source state per QP.
    cca: Vec<CcaState>,
}

impl IbCc {
    pub fn new(ib: IbCcParams, s: &CcSetup) -> IbCc {
        IbCc {
            ib,
            cca: vec![CcaState::default(); s.line.len()],
        }
    }
}

impl IbCc {
    /// The gap of `qp`'s CCTI, and the CCTI timer if `arm`.
    fn pace(&self, qp: u32, arm: bool, now: Time, line: BitRate) -> CcOut {
        let mut out = CcOut {
            gap: Gap::Delay(self.ib.gap_q16(self.cca[qp as usize].ccti, line)),
            ..CcOut::default()
        };
        if arm {
            out.arm(CCTI, now + self.ib.ccti_timer);
        }
        out
    }
}

impl CongestionControl for IbCc {
    /// A BECN for every FECN.
    fn on_marked(&mut self, _qp: u32, _now: Time) -> bool {
        true
    }

    fn on_notified(&mut self, qp: u32, now: Time, line: BitRate) -> Option<CcOut> {
        let c = &mut self.cca[qp as usize];
        let arm = c.on_becn(&self.ib);
        Some(self.pace(qp, arm, now, line))
    }

    fn on_timer(&mut self, qp: u32, _timer: TimerId, now: Time, line: BitRate) -> Option<CcOut> {
        let keep = self.cca[qp as usize].on_timer(&self.ib);
        Some(self.pace(qp, keep, now, line))
    }
}
