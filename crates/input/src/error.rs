//! The input layer's own errors, besides `fabricsim_core::InputError` (which every reader of a
//! scenario, catalog, profile or ns-3 file returns): a profile whose tables do not map to engine
//! parameters, and an input file that cannot be read. The reader that knows the file and key
//! places either into an `InputError`.

use fabricsim_mech::ParamError;
use std::fmt;
use std::path::PathBuf;

/// A profile's table that does not map to engine parameters (`profile_fc::from_profile`),
/// naming the profile key.
#[derive(Clone, Debug, PartialEq)]
pub struct ProfileError {
    /// The dotted profile key (`flow_control.priority`, `routing.ar_select`).
    pub key: &'static str,
    /// What is wrong and what is allowed, in words.
    pub problem: String,
}

impl ProfileError {
    pub fn new(key: &'static str, problem: impl Into<String>) -> ProfileError {
        ProfileError {
            key,
            problem: problem.into(),
        }
    }
}

impl fmt::Display for ProfileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.key, self.problem)
    }
}

impl std::error::Error for ProfileError {}

/// A congestion-control or routing table the engine parameters refuse (`cc_profile::apply`).
impl From<ParamError> for ProfileError {
    fn from(e: ParamError) -> ProfileError {
        ProfileError::new(e.field, format!("{} (allowed: {})", e.problem, e.allowed))
    }
}

/// Why an input file is not read (`io::input::read_input`).
#[derive(Debug)]
pub enum ReadError {
    /// The file system refused (no such file, no permission).
    Io {
        path: PathBuf,
        error: std::io::Error,
    },
    /// Not a regular file: a directory, a FIFO, a socket or a device.
    NotAFile { path: PathBuf, what: &'static str },
}

impl fmt::Display for ReadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ReadError::Io { path, error } => write!(f, "cannot read {}: {error}", path.display()),
            ReadError::NotAFile { path, what } => {
                write!(f, "{} is {what}, not a regular file", path.display())
            }
        }
    }
}

impl std::error::Error for ReadError {}
