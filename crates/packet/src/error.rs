//! The packet engine's error: why it refuses a run before the first event (the input it was
//! given breaks an invariant its tables rely on).

use fabricsim_core::error::CoreError;
use fabricsim_mech::ParamError;
use std::fmt;

/// Why `Engine::new` (and so `run`) refuses a run.
#[derive(Clone, Debug, PartialEq)]
pub enum SimError {
    /// A parameter out of range.
    Param(ParamError),
    /// The topology breaks an id invariant (a port, candidate or NIC the tables cannot hold).
    Topology(String),
    /// A message the fabric cannot carry (a host or traffic class it lacks, a dependency cycle).
    Traffic(String),
    /// A fault or misroute naming a link, host or port the topology lacks.
    Fault(String),
    /// A buffer too small for what its flow control reserves (a packet's credits, PFC headroom).
    Buffer(String),
}

impl fmt::Display for SimError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SimError::Param(e) => e.fmt(f),
            SimError::Topology(s) => write!(f, "topology: {s}"),
            SimError::Traffic(s) | SimError::Fault(s) | SimError::Buffer(s) => f.write_str(s),
        }
    }
}

impl std::error::Error for SimError {}

impl From<ParamError> for SimError {
    fn from(e: ParamError) -> SimError {
        SimError::Param(e)
    }
}

/// Core's refusals of the run's topology or messages.
impl From<CoreError> for SimError {
    fn from(e: CoreError) -> SimError {
        match e {
            CoreError::Topology(s) => SimError::Topology(s),
            CoreError::Value(s) | CoreError::Dag(s) | CoreError::Traffic(s) => SimError::Traffic(s),
        }
    }
}
