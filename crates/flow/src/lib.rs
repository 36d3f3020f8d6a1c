//! The flow-level (fluid) engine: max-min fair rates over the real paths, for fabrics of 10K to
//! 131K GPUs where a packet run would take hours.
//!
//! It takes what the packet engine takes (topology, `SimParams`, a `MessageDag`) plus
//! [`FlowParams`], and returns the same `RunResult` schema, so the two compare record by record:
//! `flow::run(&topo, &params, &dag, &FlowParams::default())` gives `(RunResult, FlowStats)`.
//! It places every flow where the packet engine sends its packets (same QP numbering, hash and
//! per-switch choice, through `sim::route`), so ECMP collisions are the same.
//!
//! The pieces:
//! - `fluid`: the event loop (events: `event::Event`); `params`: what it is told; `stats`: what
//!   it counts;
//!   `state`: its per-message, per-QP and per-flow state; `report`: the results;
//! - `maxmin`: the incremental max-min solver (progressive filling, integer rates);
//! - `dense`: a dense all-to-all as flow classes (leaf to leaf) filled by `weighted`, the
//!   max-min of weighted classes, where one flow per message would not fit in memory;
//! - `cache`: rates of repeated components (ring steps) by flow-set signature;
//! - `paths`: directed links, the packet engine's per-QP ECMP routes, spraying and adaptive
//!   splits, latencies and wire bytes;
//! - `rate_model`: a route's cap from its bottleneck, a rate limit and the effects' factors;
//! - `effect`: the seam: the `Effect` trait (hooks with no-op defaults) and the context `Ctx`
//!   the effects share; `compose`: the effects in their fixed order (static dispatch);
//! - the effects, one file each, none importing another: `credits` (credit-limited rates of
//!   long InfiniBand links), `hpcc` (HPCC's target utilization η of every link),
//!   `dcqcn_incast` (DCQCN's cost for synchronized incast starters),
//!   `dcqcn_victim` (DCQCN's cut of flows crossing the queues a start-up burst fills), `hol`
//!   (head-of-line blocking behind an incast under PFC or credits), `nic_send` (the NIC's send
//!   stage: round-robin injection, back-pressure), `nic_rr` (the NIC's per-QP round robin at
//!   message end), `loss` (go-back-N and selective-repeat goodput, tail-loss timeouts);
//! - the models the effects share: `mean_field` (DCQCN's mean-field fluid model of a
//!   congested egress), `pfc_pause` (PFC pauses of the queues before one, `dcqcn_victim`'s),
//!   `window` (a switch ingress's hold threshold), `groups` (the synchronized incasts' flows);
//! - `calibration`: every fitted constant and on/off limit, with the command behind it.
//!
//! Adding an effect: a file with a struct that implements `effect::Effect` (only the hooks it
//! needs; it reads and changes the run through `Ctx`, not through other effects), a field in
//! `compose::Effects` at its place in the order (and in `in_order!`), its constants in
//! `calibration` (a `TABLE` row each), and an `Event` variant if it schedules its own events.

pub mod cache;
pub mod calibration;
pub mod classes;
mod compose;
pub mod credits;
pub mod dcqcn_incast;
pub mod dcqcn_victim;
pub mod dense;
mod effect;
pub mod error;
mod event;
pub mod fluid;
pub mod groups;
pub mod hol;
pub mod hpcc;
pub mod llr;
pub mod loss;
pub mod maxmin;
pub mod mean_field;
mod nic_rr;
pub mod nic_send;
pub mod params;
pub mod paths;
pub mod pfc_pause;
pub mod rate_model;
mod report;
mod state;
mod stats;
mod weighted;
mod window;

pub use calibration::BATCH_TOL;
pub use error::FlowError;
pub use fluid::{Progress, run, run_observed};
pub use loss::LossModel;
pub use maxmin::{MaxMin, NO_CAP, Routes, SolveStats};
pub use params::FlowParams;
pub use paths::PathModel;
pub use rate_model::RateModel;
pub use stats::FlowStats;
