//! The input schema: scenarios and their sections (parsed and validated), the hardware catalog,
//! fabric profiles and their sub-tables mapped into engine parameters (`profile_fc`,
//! `cc_profile`), and the ns-3 HPCC file formats (`io`). Below the driver; never runs an engine.

pub mod catalog;
pub mod cc_profile;
pub mod error;
pub mod failure_rates;
pub mod io;
pub mod link_errors;
pub mod moe_skew;
pub mod profile;
pub mod profile_dcqcn;
pub mod profile_extends;
pub mod profile_fc;
pub mod profile_knobs;
pub mod scenario;

#[cfg(any(test, feature = "testing"))]
pub mod test_util;
