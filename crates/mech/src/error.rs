//! The mechanism layer's error: a parameter out of range, naming the field, what is wrong and
//! what is allowed (the scenario reader turns it into an `InputError` at the key).

use std::fmt;

/// A parameter an engine cannot run with (`SimParams::validate`, `CcParams::validate`).
#[derive(Clone, Debug, PartialEq)]
pub struct ParamError {
    /// The `SimParams` field (`mtu_bytes`, `cc.dcqcn`) or profile key at fault.
    pub field: &'static str,
    /// What is wrong, with the value.
    pub problem: String,
    /// What is allowed.
    pub allowed: String,
}

impl ParamError {
    pub fn new(
        field: &'static str,
        problem: impl Into<String>,
        allowed: impl Into<String>,
    ) -> ParamError {
        ParamError {
            field,
            problem: problem.into(),
            allowed: allowed.into(),
        }
    }
}

impl fmt::Display for ParamError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "parameter {}: {} (allowed: {})",
            self.field, self.problem, self.allowed
        )
    }
}

impl std::error::Error for ParamError {}
