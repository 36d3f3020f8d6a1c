//! `fabricsim compare` and `fabricsim sweep`: one cluster and workload on each fabric side by
//! side, a recommendation scored from the results and the user's constraints, and parameter
//! sweeps.
//!
//! - [`section`]: the `[compare]` scenario section; [`variant`]: its fabrics validated;
//! - [`model`]: per fabric the plan, the training step and the cost per delivered throughput,
//!   each relative to the best;
//! - [`metrics`]: the table architects compare fabrics by, each figure with its provenance;
//! - [`recommend`]: the documented score and its reasons.

pub mod engine;
pub mod metrics;
pub mod model;
pub mod recommend;
pub mod section;
pub mod step;
pub mod sweep;
pub mod variant;

pub use model::{Comparison, run};

#[cfg(test)]
mod tests;
