//! Per-flow rate limits: the one place where effects a fluid model does not see by itself
//! become a cap on a flow's max-min rate.
//!
//! The caps: an optional per-QP rate limit (a NIC or QP rate limiter) and a throughput factor
//! on the path's bottleneck line rate (the loss model's goodput, `loss`); credit-limited long
//! links lower the links' capacities instead (`credits`). The engine calls [`RateModel::cap`]
//! once per route and never looks at the mechanism.
//!
//! Incast (PFC, DCQCN/ECN) adds no cap: a congested egress is shared per flow, max-min, with
//! no throughput lost. That is what the packet engine does on the profiles' switches, checked
//! by `cargo run -p fabricsim --example flow_calibrate -- incast` (roce-400g, 128 GPUs, 1 MB per
//! sender, SN5600's 128 MB buffer):
//! - DCQCN/ECN: in N:1 incasts (N = 2..32), with the profile's ConnectX DCQCN and without it,
//!   the bottleneck stays busy (collective time within 0.01% of the fluid one; ECN marks and
//!   CNPs flow, no PAUSE): the switch buffer holds the backlog while DCQCN cuts rates.
//! - Per-input-port service: the switch serves a congested egress round robin over its input
//!   ports, so sharing per port, then per flow within a port, was the candidate model. The
//!   mixed incast (3 senders on their own input ports of the receiver's leaf, 24 entering over
//!   its up ports, several per port) finishes every flow within 0.9% of per-flow max-min on
//!   roce-400g (3.8% on ib-ndr, where the local senders finish 4% early), while per-port
//!   sharing would finish the local flows about twice as early: the rate limiters (DCQCN) and
//!   the buffer even the flows out, so per-flow sharing stays the model.
//!
//! Outside the model (printed by the same command, part 3): PFC head-of-line blocking once the
//! buffer is small enough to pause (16 MB: a flow that shares its NIC with an incast sender
//! takes 523 us instead of 25 us, blocked behind the paused link), the NIC's per-QP round robin
//! while the buffer absorbs (46 us, the fluid model gives such a flow the rest of the link), and
//! the packet engine's DCQCN slow recovery leaving one cut flow a straggler (the incast's last
//! flow 2.6-4.5 ms instead of 0.58 ms when one sender also carries another flow): each needs
//! state in time (queues, pauses, rate recovery) that a max-min solve has no place for.

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
