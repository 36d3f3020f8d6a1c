//! fabricsim's lowest layer: time and rates ([`units`]), input errors, the seeded RNG, topologies,
//! message DAGs, their release policy, the traffic generators and [`estimate`] (a figure over
//! seeds with its 95% interval). It depends on no other layer.

pub mod error;
pub mod estimate;
pub mod message;
pub mod prefetch;
pub mod release;
pub mod rng;
pub mod stop;
pub mod topology;
pub mod traffic;
pub mod units;

pub use error::{InputError, Source};
