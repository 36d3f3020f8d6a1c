//! Per-flow rate limits: the one place where effects a fluid model does not see by itself
//! become a cap on a flow's max-min rate.
//!
//! The caps: an optional per-QP rate limit (a NIC or QP rate limiter) and a throughput factor
//! on the path's bottleneck line rate (the loss model's goodput, `loss`); credit-limited long
//! links lower the links' capacities instead (`credits`). The engine calls [`RateModel::cap`]
//! once per route and never looks at the mechanism.
//!
//! Incast under PFC and ECN alone adds no cap: a congested egress is shared max-min with no
//! throughput lost; DCQCN's over-cut of synchronized starters caps their flows
//! (`dcqcn_incast`, an `effect::Effect`), and its cut of other flows crossing the queues their
//! start-up burst fills caps those (`dcqcn_victim`; `fabricsim-lab victim-cnp`). `fabricsim-lab
//! incast` checks both against the packet engine (roce-400g, SN5600's 128 MB buffer, ConnectX DCQCN):
//! - PFC and ECN without DCQCN: N:1 incasts of 1 MB (N = 2..32, 128 GPUs) keep the bottleneck
//!   busy: collective time within 0.01% of the fluid one, mean FCT within 0.2%.
//! - DCQCN: synchronized starters are over-cut (the start-up queue passes Kmax before the
//!   first cut lands, and every QP is cut once per monitor period while it drains), a cost the
//!   sharing does not see. `dcqcn_incast` models it (a mean-field fluid model over the
//!   profile's DCQCN parameters and the packet engine's `Rp`) and caps the flows of such a
//!   group; roce-400g, 1 MB per sender, the model's drain against the packet engine's last
//!   completion (its pacer rescales a pending gap on a rate change, HPCC `RdmaHw::ChangeRate`):
//!   N = 4: 386 vs 382 us; 8: 466 vs 462; 16: 636 vs 633; 32: 978 vs 968 (mean FCT +2.4% to
//!   +5.8%: the packet engine's flows finish up to 10% apart, the mean field's together).
//!   N = 2 is off (172 vs 335 us; mean 221): near Kmin the marks are rare, so the two senders'
//!   cuts diverge, which a mean field of identical senders cannot show.
//! - Per-input-port service: the switch serves a congested egress round robin over its input
//!   ports, and that shows when ports carry different numbers of flows. In the mixed incast
//!   of `flow_cases` (1,024 GPUs, 2 tiers: 3 senders on the receiver's leaf, one per input
//!   port, 96 entering over 54 of its up ports), the packet engine's mean FCT is 428.7 us;
//!   sharing per input port, then per flow within a port, predicts 432.4 us (+0.9%), per-flow
//!   max-min 534.8 us (+25%). This is now in the solver (`maxmin`'s port service; while at
//!   most `calibration::LOSSLESS_MODELS_MAX_ACTIVE` flows are active), on lossless
//!   fabrics, at the egresses to NICs: the engine gives 432.3 us (+1.1%; ib-ndr +2.3%, was
//!   +11%). Not at inner switch egresses: applied there too it moved the 128-GPU ib-ndr
//!   all-to-all's collective time from -0.7% to +8.1% of the packet engine's (the receiver's
//!   local senders, one per port, finish first and the tail grows), so the packet engine's
//!   inner arbitration is not per port in the fluid sense and stays per flow.

//! PFC head-of-line blocking (the same command, part 3) is `hol`'s: once the buffer is small
//! enough to pause (16 MB, no DCQCN), a flow that shares its NIC with an incast sender takes
//! 677.8 us instead of 25 us, blocked behind the paused link; `hol` gives 687.5 us (it gave
//! 25.1). With DCQCN it takes 84.2 us, flow 24.9 us (the `dcqcn_incast` cap leaves the root
//! below full, so nothing is held in the fluid). The NIC's per-QP round robin while the buffer
//! absorbs (46 us: the max-min rates give that flow the rest of the link) is `nic_send`'s,
//! which keeps the NIC's injection as state in time beside the solve. Outside the model: DCQCN
//! with PFC pauses (`dcqcn_incast` does not bound its queue by XOFF).

use super::maxmin::NO_CAP;
use crate::error::FlowError;
use fabricsim_core::units::BitRate;

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
    pub fn validate(&self) -> Result<(), FlowError> {
        if !(self.factor > 0.0 && self.factor <= 1.0) {
            return Err(FlowError::RateModel(format!(
                "rate factor {} is outside (0, 1] (1 means no penalty)",
                self.factor
            )));
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
