//! Case definitions shared by fabricsim's tests (a dev-dependency: `use fabricsim_cases::...`)
//! and its calibration lab (`fabricsim-lab`).
//!
//! - [`flow_cases`]: the flow/packet cross-validation cases (issue 7) on a fabric profile's
//!   parameters, their traffic patterns and the pooled comparison of both engines;
//! - [`sim_util`]: small topologies and helpers of the packet-engine tests;
//! - [`cc_util`]: fat trees, traffic and measurements of the congestion-control and routing
//!   tests, and the DCQCN fluid model's fixed point ([`cc_util::fluid`]).

pub mod cc_util;
pub mod flow_cases;
pub mod sim_util;
