//! Case definitions shared by fabricsim's tests (a dev-dependency: `use fabricsim_cases::...`)
//! and its calibration lab (`fabricsim-lab`).
//!
//! - [`flow_cases`]: the flow/packet cross-validation cases (issue 7) on a fabric profile's
//!   parameters, their traffic patterns and the pooled comparison of both engines;
//! - [`loss_expect`]: the step's loss expectation against seed-averaged packet runs;
//! - [`sim_util`]: small topologies and helpers of the packet-engine tests;
//! - [`cc_util`]: fat trees, traffic and measurements of the congestion-control and routing
//!   tests, and the DCQCN fluid model's fixed point ([`cc_util::fluid`]).

pub mod cc_util;
pub mod flow_cases;
pub mod loss_expect;
pub mod sim_util;
