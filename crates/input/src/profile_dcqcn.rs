//! `[congestion.dcqcn_params]`: DCQCN parameters set over the named set (`dcqcn = ...`), keyed
//! by their ConnectX firmware names (NVIDIA "DCQCN Parameters", DOC-2790; `mlxconfig` / the
//! `/sys/class/net/*/ecn/roce_rp/` files), so a tuned profile reads as the NIC is configured.
//!
//! ```toml
//! [congestion.dcqcn_params]
//! rpg_time_reset_us = 300            # rate-increase timer T
//! rpg_byte_reset = 32767             # byte counter B, in 64-byte units
//! rpg_ai_rate_mbps = 5               # additive increase R_AI
//! rpg_hai_rate_mbps = 50             # hyper increase R_HAI
//! rate_reduce_monitor_period_us = 4  # rate-decrease period
//! min_time_between_cnps_us = 4       # the NP's CNP interval
//! dce_tcp_g = 1019                   # alpha gain: g = (1024 - dce_tcp_g) / 1024
//! dce_tcp_rtt_us = 1                 # alpha update period
//! ```

use serde::Deserialize;

use fabricsim_core::units::{BitRate, Time};
use fabricsim_mech::dcqcn::{DcqcnParams, Q20, RPG_BYTE_RESET_UNIT};
use fabricsim_mech::error::ParamError;

#[derive(Clone, Debug, Default, PartialEq, Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct DcqcnKeys {
    pub rpg_time_reset_us: Option<u64>,
    pub rpg_byte_reset: Option<u64>,
    pub rpg_ai_rate_mbps: Option<u64>,
    pub rpg_hai_rate_mbps: Option<u64>,
    pub rate_reduce_monitor_period_us: Option<u64>,
    pub min_time_between_cnps_us: Option<u64>,
    pub dce_tcp_g: Option<u64>,
    pub dce_tcp_rtt_us: Option<u64>,
}

impl DcqcnKeys {
    /// The keys of `d` (what a named set amounts to, in firmware units; rounded down).
    pub fn of(d: &DcqcnParams) -> DcqcnKeys {
        let us = |t: Time| Some(t.ps() / 1_000_000);
        DcqcnKeys {
            rpg_time_reset_us: us(d.rate_increase_timer),
            rpg_byte_reset: Some(d.byte_counter_bytes / RPG_BYTE_RESET_UNIT),
            rpg_ai_rate_mbps: Some(d.rate_ai.bps() / 1_000_000),
            rpg_hai_rate_mbps: Some(d.rate_hai.bps() / 1_000_000),
            rate_reduce_monitor_period_us: us(d.rate_decrease_interval),
            min_time_between_cnps_us: us(d.cnp_interval),
            dce_tcp_g: Some(1024 - d.g_q20 * 1024 / Q20),
            dce_tcp_rtt_us: us(d.alpha_update),
        }
    }

    /// `d` with the keys set here replaced; the error names the key.
    pub fn apply(&self, d: &mut DcqcnParams) -> Result<(), ParamError> {
        let positive = |key: &'static str, v: Option<u64>| match v {
            Some(0) => Err(ParamError::new(key, "0", "a positive whole number")),
            _ => Ok(v),
        };
        let us = |v: Option<u64>| v.map(Time::from_us);
        if let Some(t) = us(positive(
            "congestion.dcqcn_params.rpg_time_reset_us",
            self.rpg_time_reset_us,
        )?) {
            d.rate_increase_timer = t;
        }
        if let Some(b) = self.rpg_byte_reset {
            d.byte_counter_bytes = b * RPG_BYTE_RESET_UNIT;
        }
        if let Some(r) = self.rpg_ai_rate_mbps {
            d.rate_ai = BitRate::mbps(r);
        }
        if let Some(r) = self.rpg_hai_rate_mbps {
            d.rate_hai = BitRate::mbps(r);
        }
        if let Some(t) = us(positive(
            "congestion.dcqcn_params.rate_reduce_monitor_period_us",
            self.rate_reduce_monitor_period_us,
        )?) {
            d.rate_decrease_interval = t;
        }
        if let Some(t) = us(self.min_time_between_cnps_us) {
            d.cnp_interval = t;
        }
        if let Some(t) = us(positive(
            "congestion.dcqcn_params.dce_tcp_rtt_us",
            self.dce_tcp_rtt_us,
        )?) {
            d.alpha_update = t;
        }
        match self.dce_tcp_g {
            Some(g) if g >= 1024 => {
                return Err(ParamError::new(
                    "congestion.dcqcn_params.dce_tcp_g",
                    format!("{g} out of range"),
                    "0 to 1023 (alpha gain g = (1024 - dce_tcp_g) / 1024)",
                ));
            }
            Some(g) => d.g_q20 = Q20 * (1024 - g) / 1024,
            None => {}
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use fabricsim_mech::dcqcn::DcqcnSet;

    #[test]
    fn firmware_names_set_the_engine_fields_and_zero_periods_are_refused() {
        let line = BitRate::gbps(400);
        let mut d = DcqcnParams::set(DcqcnSet::ConnectxFw, line);
        let base = d;
        let k = DcqcnKeys {
            rpg_time_reset_us: Some(50),
            rpg_ai_rate_mbps: Some(40),
            dce_tcp_g: Some(1019),
            ..DcqcnKeys::default()
        };
        k.apply(&mut d).unwrap();
        assert_eq!(d.rate_increase_timer, Time::from_us(50));
        assert_eq!(d.rate_ai, BitRate::mbps(40));
        assert_eq!(d.g_q20, base.g_q20, "1019 is the firmware default gain");
        assert_eq!(
            d.rate_hai, base.rate_hai,
            "keys not set keep the set's value"
        );
        let mut back = DcqcnParams::set(DcqcnSet::ConnectxFw, line);
        DcqcnKeys::of(&base).apply(&mut back).unwrap();
        assert_eq!(back, base, "the keys of a set give the set back");
        let zero = DcqcnKeys {
            rpg_time_reset_us: Some(0),
            ..DcqcnKeys::default()
        };
        let e = zero.apply(&mut d).unwrap_err();
        assert_eq!(e.field, "congestion.dcqcn_params.rpg_time_reset_us");
        let g = DcqcnKeys {
            dce_tcp_g: Some(1024),
            ..DcqcnKeys::default()
        };
        assert!(g.apply(&mut d).is_err());
    }
}
