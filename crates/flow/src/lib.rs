//! The flow-level (fluid) engine: max-min fair rates over the real paths, for fabrics of 10K to
//! 131K GPUs where a packet run would take hours.
//!
//! It takes what the packet engine takes (topology, `SimParams`, a `MessageDag`) plus
//! [`FlowParams`], and returns the same `RunResult` schema, so the two compare record by record:
//! `flow::run(&topo, &params, &dag, &FlowParams::default())` gives `(RunResult, FlowStats)`.
//! It places every flow where the packet engine sends its packets (same QP numbering, hash and
//! per-switch choice, through `sim::route`), so ECMP collisions are the same.
//!
//! - `maxmin`: the incremental max-min solver (progressive filling, integer rates);
//! - `cache`: rates of repeated components (ring steps) by flow-set signature;
//! - `paths`: directed links, the packet engine's per-QP ECMP routes, spraying and adaptive
//!   splits, latencies and wire bytes;
//! - `rate_model`: per-flow caps, where calibrated fabric effects plug in;
//! - `credits`: credit-limited rates of long InfiniBand links;
//! - `dcqcn_incast`: DCQCN's cost for synchronized incast starters (a mean-field fluid model);
//! - `dcqcn_victim`: DCQCN's cut of flows that cross a queue a start-up burst fills;
//! - `hol`: head-of-line blocking of victim flows behind an incast under PFC or credits;
//! - `nic_rr`: the packet granularity of the NIC's per-QP round robin at message end;
//! - `nic_send`: the NIC's send stage: round-robin injection while buffers absorb, back-pressure;
//! - `loss`: go-back-N and selective-repeat goodput under random loss, tail-loss timeouts;
//! - `fluid`: the event loop; `report`: the results.

pub mod cache;
pub mod credits;
pub mod dcqcn_incast;
pub mod dcqcn_victim;
pub mod error;
pub mod fluid;
pub mod hol;
pub mod loss;
pub mod maxmin;
mod nic_rr;
pub mod nic_send;
pub mod paths;
pub mod pfc_pause;
pub mod rate_model;
mod report;

pub use error::FlowError;
pub use fluid::{BATCH_TOL, FlowParams, FlowStats, run};
pub use loss::LossModel;
pub use maxmin::{MaxMin, NO_CAP, Routes, SolveStats};
pub use paths::PathModel;
pub use rate_model::RateModel;
