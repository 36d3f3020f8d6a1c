//! `fabricsim compare` and `fabricsim sweep`: one cluster and workload on each fabric side by
//! side, a recommendation scored from the results and the user's constraints, and parameter
//! sweeps.
//!
//! - [`section`]: the `[compare]` scenario section; [`variant`]: its fabrics validated;
//! - [`model`]: per fabric the plan, the training step and the cost per delivered throughput,
//!   each relative to the best;
//! - [`curves`]: busbw against size, [`stress`]: incast over background load, [`probe`]:
//!   ping-pong latency by switch hops and one long flow, each on the packet engine;
//! - [`metrics`]: the table architects compare fabrics by, each figure with its provenance;
//! - [`recommend`]: the documented score and its reasons, seed by seed; [`robust`]: the
//!   verdict under price changes and the loss-rate interval; [`seeds`]: the seeds and the runs
//!   over them; [`progress`]: the stages done; [`serving`]: a `[serve]` deployment on each fabric;
//!   [`tenants`]: the scenario's `[[jobs]]` on each fabric, per-job slowdowns.

pub mod claims;
pub mod curves;
pub mod engine;
pub mod ideal;
pub mod memo;
pub mod metrics;
pub mod model;
pub mod probe;
pub mod progress;
pub mod recommend;
pub mod regimes;
pub mod robust;
pub mod seeds;
pub mod serving;
pub mod step;
pub mod stress;
pub mod sweep;
pub mod sweep_job;
pub mod sweep_workload;
pub mod tenants;
pub mod variant;
pub mod whole_step;

pub use model::{Comparison, run, run_with};

#[cfg(test)]
mod tests;
