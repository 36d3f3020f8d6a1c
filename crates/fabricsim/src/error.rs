//! The driver's error: one type for what setup, the workloads and the comparison refuse, wrapping
//! the layers' own (`InputError`, mech's `ParamError`, the packet engine's `SimError`, the flow
//! engine's `FlowError`, core's `CoreError`, input's `ProfileError`) with the driver's cases.
//! `Display` prints the wrapped error's text unchanged; the CLI maps it to an exit code
//! (`fabricsim-cli`'s `outcome`: input errors exit 2).

use std::fmt;

pub use fabricsim_core::error::*;
use fabricsim_flow::FlowError;
use fabricsim_input::error::ProfileError;
use fabricsim_mech::ParamError;
use fabricsim_packet::SimError;

#[derive(Clone, Debug, PartialEq)]
pub enum Error {
    /// Input refused where the driver reads it (a scenario key, a catalog id).
    Input(InputError),
    /// An engine parameter out of range.
    Param(ParamError),
    /// The packet engine refuses the run.
    Sim(SimError),
    /// The flow engine refuses the run.
    Flow(FlowError),
    /// Core refuses a value, topology, message DAG or traffic pattern.
    Core(CoreError),
    /// A profile's parameters (as the comparison tunes them) that do not map to an engine's.
    Profile(ProfileError),
    /// What the chosen engine does not model, or a run too large for it.
    Unsupported(String),
    /// A run that did not complete, or a result that breaks byte conservation.
    Run(String),
    /// A workload the driver cannot build (a step DAG, a compute-efficiency table).
    Workload(String),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Input(e) => e.fmt(f),
            Error::Param(e) => e.fmt(f),
            Error::Sim(e) => e.fmt(f),
            Error::Flow(e) => e.fmt(f),
            Error::Core(e) => e.fmt(f),
            Error::Profile(e) => e.fmt(f),
            Error::Unsupported(s) | Error::Run(s) | Error::Workload(s) => f.write_str(s),
        }
    }
}

impl std::error::Error for Error {}

/// `From` each layer's error, so `?` carries it up unchanged.
macro_rules! from {
    ($($t:ty => $v:ident),* $(,)?) => {
        $(impl From<$t> for Error {
            fn from(e: $t) -> Error {
                Error::$v(e)
            }
        })*
    };
}

from!(
    InputError => Input,
    ParamError => Param,
    SimError => Sim,
    FlowError => Flow,
    CoreError => Core,
    ProfileError => Profile,
);
