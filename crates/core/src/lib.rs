//! fabricsim's lowest layer: time and rates ([`units`]), input errors, the seeded RNG, topologies,
//! message DAGs, their release policy and the traffic generators. It depends on no other layer.

pub mod error;
pub mod message;
pub mod prefetch;
pub mod release;
pub mod rng;
pub mod stop;
pub mod topology;
pub mod traffic;
pub mod units;

pub use error::{InputError, Source};
