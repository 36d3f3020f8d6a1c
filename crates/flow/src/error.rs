//! The flow engine's error: why it refuses a run before the first event.

use fabricsim_core::error::CoreError;
use fabricsim_mech::ParamError;
use std::fmt;

/// Why `run` refuses a run.
#[derive(Clone, Debug, PartialEq)]
pub enum FlowError {
    /// A parameter of the packet engine's `SimParams` out of range.
    Param(ParamError),
    /// The rate model's factor outside (0, 1].
    RateModel(String),
    /// A message the run cannot carry (a host the topology lacks, a dependency cycle).
    Traffic(String),
}

impl fmt::Display for FlowError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FlowError::Param(e) => e.fmt(f),
            FlowError::RateModel(s) | FlowError::Traffic(s) => f.write_str(s),
        }
    }
}

impl std::error::Error for FlowError {}

impl From<ParamError> for FlowError {
    fn from(e: ParamError) -> FlowError {
        FlowError::Param(e)
    }
}

/// Core's refusals of the run's messages.
impl From<CoreError> for FlowError {
    fn from(e: CoreError) -> FlowError {
        FlowError::Traffic(e.to_string())
    }
}
