//! InfiniBand congestion control (IBA Vol. 1 annex A10; ibccconfig(8) knobs, physics.md C2):
//! a switch marks FECN on packets that find their output queue above a threshold, at the root
//! of congestion (a port short of credits is a victim and marks only with Victim_Mask); the
//! destination channel adapter returns a BECN to the source; the source raises the flow's
//! congestion control table index (CCTI) by `ccti_increase` per BECN, up to `ccti_limit`, and
//! waits the table's inter-packet delay CCT[CCTI] between packets; every `ccti_timer` the index
//! drops by one until `ccti_min`.
//!
//! The table. IBA leaves the CCT contents to the congestion control manager; this model builds
//! a linear table: entry i adds i/`cct_denominator` of the packet's own serialization time after
//! each packet, so the injection rate at index i is line / (1 + i/d). With d = 8 and the limit
//! 127, the deepest throttle is line/16.9 [E: linear table; OpenSM's CC manager fills the CCT
//! from a user list, no shipped default was found].

use crate::units::{BitRate, Time};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IbCcParams {
    /// Output-queue bytes above which a switch marks FECN.
    pub threshold_bytes: u64,
    /// Mark one packet in `marking_rate + 1` above the threshold (IBA Marking_Rate; 0: all).
    pub marking_rate: u32,
    /// Also mark at victim ports: congested only for lack of credits downstream (IBA A10
    /// Victim_Mask; off: only the root of congestion marks).
    pub victim_mask: bool,
    pub ccti_increase: u16,
    pub ccti_limit: u16,
    pub ccti_min: u16,
    /// The CCTI decrease timer.
    pub ccti_timer: Time,
    /// d of the linear table: entry i delays i/d packet times.
    pub cct_denominator: u16,
}

impl IbCcParams {
    pub fn validate(&self) -> Result<(), (String, &'static str)> {
        if self.ccti_timer == Time::ZERO || self.cct_denominator == 0 {
            return Err((
                "ccti_timer or cct_denominator is 0".into(),
                "a positive timer and denominator",
            ));
        }
        if self.ccti_min > self.ccti_limit {
            return Err((
                format!(
                    "ccti_min {} above ccti_limit {}",
                    self.ccti_min, self.ccti_limit
                ),
                "ccti_min <= ccti_limit",
            ));
        }
        Ok(())
    }

    /// The pacing gap (ps per byte × 2^16) at index `ccti` for a NIC of `line` rate: the CCT
    /// entry i/d times the serialization time, added to it. 0 at index 0 (line rate).
    pub fn gap_q16(&self, ccti: u16, line: BitRate) -> u64 {
        if ccti == 0 {
            return 0;
        }
        let ser_q16 = (8_000_000_000_000u128 << 16) / line.bps().max(1) as u128;
        let d = self.cct_denominator as u128;
        (ser_q16 * (d + ccti as u128) / d) as u64
    }
}

/// The congestion-control state of one source QP (IBA keeps it per QP or per SL; here per QP).
#[derive(Clone, Copy, Debug, Default)]
pub struct CcaState {
    pub ccti: u16,
    pub timer_pending: bool,
}

impl CcaState {
    /// A BECN arrived: raise the index. Returns whether the decrease timer must be armed.
    pub fn on_becn(&mut self, p: &IbCcParams) -> bool {
        self.ccti = (self.ccti.max(p.ccti_min) + p.ccti_increase).min(p.ccti_limit);
        let arm = !self.timer_pending;
        self.timer_pending = true;
        arm
    }

    /// The CCTI timer fired: lower the index; returns whether the timer keeps running.
    pub fn on_timer(&mut self, p: &IbCcParams) -> bool {
        if self.ccti > p.ccti_min {
            self.ccti -= 1;
        }
        self.timer_pending = self.ccti > p.ccti_min;
        self.timer_pending
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params() -> IbCcParams {
        IbCcParams {
            threshold_bytes: 0,
            marking_rate: 0,
            victim_mask: false,
            ccti_increase: 1,
            ccti_limit: 127,
            ccti_min: 0,
            ccti_timer: Time::from_us(50),
            cct_denominator: 8,
        }
    }

    /// The linear table: index i gives line/(1 + i/8); at 400G (20 ps/B) index 8 is 40 ps/B.
    #[test]
    fn cct_entry_scales_the_packet_time() {
        let p = params();
        assert_eq!(p.gap_q16(0, BitRate::gbps(400)), 0);
        assert_eq!(p.gap_q16(8, BitRate::gbps(400)), 40 << 16);
        assert_eq!(p.gap_q16(127, BitRate::gbps(400)), (20 * 135 << 16) / 8);
    }

    /// A10: CCTI += ccti_increase per BECN, capped at ccti_limit; the timer lowers it by one.
    #[test]
    fn becn_raises_and_timer_lowers_the_index() {
        let mut p = params();
        p.ccti_limit = 3;
        let mut s = CcaState::default();
        assert!(s.on_becn(&p));
        assert!(!s.on_becn(&p));
        s.on_becn(&p);
        s.on_becn(&p);
        assert_eq!(s.ccti, 3);
        assert!(s.on_timer(&p));
        assert!(s.on_timer(&p));
        assert!(!s.on_timer(&p));
        assert_eq!(s.ccti, 0);
    }
}
