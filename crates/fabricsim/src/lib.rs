//! fabricsim: plan, simulate and compare the networks of AI training clusters.
//!
//! See ARCHITECTURE.md at the repository root for the map of modules and their invariants.

pub mod catalog;
pub mod compare;
pub mod engine_choice;
pub mod error;
pub mod flow;
pub mod io;
pub mod message;
pub mod plan;
pub mod profile;
pub mod release;
pub mod report;
pub mod rng;
pub mod scenario;
pub mod sim;
pub mod stop;
pub mod topology;
pub mod traffic;
pub mod units;
pub mod workload;

#[cfg(test)]
mod test_util;

pub use error::{InputError, Source};
