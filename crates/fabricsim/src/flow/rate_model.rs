//! Per-flow rate limits: the one place where effects a fluid model does not see by itself
//! become a cap on a flow's max-min rate.
//!
//! Today: an optional per-QP rate limit (a NIC or QP rate limiter) and a throughput factor on
//! the path's bottleneck line rate. The calibrated fabric effects of issue 7 (go-back-N and
//! selective-repeat loss penalties, DCQCN/ECN, PFC head-of-line blocking, credit-limited long
//! links) plug in here as factors computed from the profile and the path; the engine calls
//! [`RateModel::cap`] once per route and never looks at the mechanism.

use super::maxmin::NO_CAP;
use crate::units::BitRate;

#[derive(Clone, Debug, PartialEq)]
pub struct RateModel {
    /// A per-flow rate limit, if any.
    pub max_rate: Option<BitRate>,
    /// Fraction of the path's bottleneck line rate a flow can reach (1.0: no loss).
    pub factor: f64,
}

impl Default for RateModel {
    fn default() -> Self {
        RateModel {
            max_rate: None,
            factor: 1.0,
        }
    }
}

impl RateModel {
    /// Checks the factor; `Err` names the problem.
    pub fn validate(&self) -> Result<(), String> {
        if !(self.factor > 0.0 && self.factor <= 1.0) {
            return Err(format!(
                "rate factor {} is outside (0, 1] (1 means no penalty)",
                self.factor
            ));
        }
        Ok(())
    }

    /// The cap of a flow whose path's slowest link runs at `bottleneck_bps`, with the path's
    /// own throughput `factor` (the loss model's goodput; 1.0 when none) on top of this one.
    pub fn cap(&self, bottleneck_bps: u64, factor: f64) -> u64 {
        let f = self.factor * factor;
        let by_factor = if f < 1.0 {
            (bottleneck_bps as f64 * f).floor() as u64
        } else {
            NO_CAP
        };
        by_factor.min(self.max_rate.map_or(NO_CAP, |r| r.bps()))
    }
}
