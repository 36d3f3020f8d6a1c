//! Per-flow rate limits: the one place where effects a fluid model does not see by itself
//! become a cap on a flow's max-min rate.
//!
//! The caps: an optional per-QP rate limit (a NIC or QP rate limiter) and a throughput factor
//! on the path's bottleneck line rate (the loss model's goodput, `loss`); credit-limited long
//! links lower the links' capacities instead (`credits`). The engine calls [`RateModel::cap`]
//! once per route and never looks at the mechanism.
//!
//! Incast (PFC, DCQCN/ECN) adds no cap: a congested egress is shared per flow, max-min, with
//! no throughput lost. `cargo run -p fabricsim --example flow_calibrate -- incast` checks this
//! against the packet engine (roce-400g, SN5600's 128 MB buffer, ConnectX DCQCN):
//! - PFC and ECN without DCQCN: N:1 incasts of 1 MB (N = 2..32, 128 GPUs) keep the bottleneck
//!   busy: collective time within 0.01% of the fluid one, mean FCT within 0.2%.
//! - DCQCN: since the packet engine's DCQCN reaction point cuts at the monitor-period tick and
//!   counts increase stages as the firmware does (s3-dcqcn), the same incasts leave the
//!   bottleneck idle for most of the run, with no PAUSE: 2.4x (N = 16) to 12.7x (N = 32) the
//!   fluid collective time, not monotone in N (it was within 0.01% before that change). That
//!   cost is NOT modeled: it comes from the rate-recovery dynamics, not from a stable factor
//!   of N, and is for the DCQCN model's owner to confirm before a fluid factor is fitted to it.
//! - Per-input-port service: the switch serves a congested egress round robin over its input
//!   ports, and that shows when ports carry different numbers of flows. In the mixed incast
//!   of `flow_cases` (1,024 GPUs, 2 tiers: 3 senders on the receiver's leaf, one per input
//!   port, 96 entering over 54 of its up ports), the packet engine's mean FCT is 428.7 us;
//!   sharing per input port, then per flow within a port, predicts 432.4 us (+0.9%), per-flow
//!   max-min 534.8 us (+25%). This is now in the solver (`maxmin`'s port service), on lossless
//!   fabrics, at the egresses to NICs: the engine gives 432.3 us (+1.1%; ib-ndr +2.3%, was
//!   +11%). Not at inner switch egresses: applied there too it moved the 128-GPU ib-ndr
//!   all-to-all's collective time from -0.7% to +8.1% of the packet engine's (the receiver's
//!   local senders, one per port, finish first and the tail grows), so the packet engine's
//!   inner arbitration is not per port in the fluid sense and stays per flow.

//! Outside the model (the same command, part 3): PFC head-of-line blocking once the buffer is
//! small enough to pause (16 MB: a flow that shares its NIC with an incast sender takes 678 us
//! instead of 25 us, blocked behind the paused link), the NIC's per-QP round robin while the
//! buffer absorbs (46 us: the fluid model gives that flow the rest of the link), and DCQCN with
//! PFC pauses (the incast takes 2.0 ms instead of 0.69 ms: cut rates recover slowly): each
//! needs state in time (queues, pauses, rate recovery) that a max-min solve has no place for.

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
