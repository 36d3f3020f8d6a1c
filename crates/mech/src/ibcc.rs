//! InfiniBand congestion control (IBA Vol. 1 annex A10; ibccconfig(8) knobs):
//! a switch marks FECN on packets that find their output queue above a threshold, at the root
//! of congestion (a port short of credits is a victim and marks only with Victim_Mask); the
//! destination channel adapter returns a BECN to the source; the source raises the flow's
//! congestion control table index (CCTI) by `ccti_increase` per BECN, up to `ccti_limit`, and
//! waits the table's inter-packet delay CCT[CCTI] between packets; every `ccti_timer` the index
//! drops by one until `ccti_min`.
//!
//! The table (IBA A10 CongestionControlTable): 128 entries of a 2-bit CCT_Shift and a 14-bit
//! CCT_Multiplier; entry i asks for an inter-packet delay of Multiplier x (MTU packet time >>
//! Shift) after each packet, as the Linux hfi1 driver computes it (`set_link_ipg`), so the rate
//! at index i is line / (1 + Multiplier / 2^Shift). Applied per byte (`gap_q16`), a smaller
//! packet gets a proportionally smaller gap. The CCT is filled by the congestion control
//! manager; `Cct::mellanox_default` is the table LLNL's OpenSM CC study labels the Mellanox
//! default (quadratic, Multiplier = 7 i^2 / (95^2 x 0.218), Shift 0: no delay up to index 16,
//! line/2 at 17, line/58 at 127) [S: Perry Huang, LLNL, opensm-cc-conf-gen.rb].

use fabricsim_core::units::{BitRate, Time};

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
    pub cct: Cct,
}

/// IBA A10 CCT size: 128 entries (CCTI_Limit <= 127).
pub const CCT_ENTRIES: usize = 128;

/// A congestion control table: per index, CCT_Shift in bits 15..14 and CCT_Multiplier in bits
/// 13..0 (IBA A10 CongestionControlTableEntry).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cct(pub [u16; CCT_ENTRIES]);

impl Cct {
    /// The quadratic table LLNL's OpenSM CC study uses as the Mellanox default (module doc).
    pub fn mellanox_default() -> Cct {
        let mut e = [0u16; CCT_ENTRIES];
        for (i, x) in e.iter_mut().enumerate() {
            // floor(7 i^2 / (95^2 x 0.218)) in integers: 7000 i^2 / (9025 x 218).
            *x = (7000 * (i * i) as u64 / (9025 * 218)) as u16;
        }
        Cct(e)
    }

    /// The inter-packet delay at index `i` in MTU packet times, as (multiplier, shift).
    #[inline]
    pub fn entry(&self, i: u16) -> (u64, u32) {
        let e = self.0[(i as usize).min(CCT_ENTRIES - 1)];
        ((e & 0x3fff) as u64, (e >> 14) as u32)
    }
}

impl IbCcParams {
    pub fn validate(&self) -> Result<(), (String, &'static str)> {
        if self.ccti_timer == Time::ZERO {
            return Err(("ccti_timer is 0".into(), "a positive timer"));
        }
        if self.ccti_limit as usize >= CCT_ENTRIES {
            return Err((
                format!("ccti_limit {}", self.ccti_limit),
                "0 to 127 (the CCT has 128 entries)",
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

    /// The pacing gap (ps per byte × 2^16, start to start) at index `ccti` for a NIC of `line`
    /// rate: the serialization time plus the CCT entry's delay, Multiplier / 2^Shift times it.
    /// 0 (line rate, no pacing) where the entry asks for no delay.
    pub fn gap_q16(&self, ccti: u16, line: BitRate) -> u64 {
        let (mult, shift) = self.cct.entry(ccti);
        if mult == 0 {
            return 0;
        }
        let ser_q16 = (8_000_000_000_000u128 << 16) / line.bps().max(1) as u128;
        (ser_q16 * ((1u128 << shift) + mult as u128) >> shift) as u64
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
            cct: Cct::mellanox_default(),
        }
    }

    /// The LLNL "Mellanox default" table: floor(7 i^2 / (95^2 x 0.218)) gives 0 up to index
    /// 16, 1 at 17, 14 at 64 and 57 at 127.
    #[test]
    fn mellanox_default_cct_is_the_quadratic_table() {
        let c = Cct::mellanox_default();
        let m = |i: u16| c.entry(i).0;
        assert_eq!((m(16), m(17), m(64), m(127)), (0, 1, 14, 57));
    }

    /// IPD = Multiplier x (packet time >> Shift) (hfi1 `set_link_ipg`): at 400G (20 ps/B)
    /// multiplier 1 doubles the spacing; 3:1 (shift 3) adds an eighth.
    #[test]
    fn cct_entry_scales_the_packet_time() {
        let mut p = params();
        assert_eq!(p.gap_q16(0, BitRate::gbps(400)), 0);
        assert_eq!(p.gap_q16(17, BitRate::gbps(400)), 40 << 16);
        assert_eq!(p.gap_q16(127, BitRate::gbps(400)), 20 * 58 << 16);
        p.cct.0[5] = (3 << 14) | 1;
        assert_eq!(p.gap_q16(5, BitRate::gbps(400)), (20 * 9 << 16) / 8);
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
