//! How a subcommand ends: success, bad input (exit 2), a run that failed (exit 1), or a run a
//! signal stopped after writing what it had done (exit 128 + the signal: 130, 143).

use fabricsim::{Error, InputError};

use crate::interrupt;
use std::process::ExitCode;

pub enum Failure {
    /// The user's input is wrong: printed with file, line, key, value and what is allowed.
    Input(InputError),
    /// The run itself failed (unfinished messages, broken conservation, I/O while writing).
    Run(String),
    /// SIGINT or SIGTERM stopped the run; the text says what partial results were written.
    Interrupted(String),
}

impl From<InputError> for Failure {
    fn from(e: InputError) -> Failure {
        Failure::Input(e)
    }
}

/// The driver's errors: its input errors are the user's (exit 2), the rest the run's (exit 1).
impl From<Error> for Failure {
    fn from(e: Error) -> Failure {
        match e {
            Error::Input(e) => Failure::Input(e),
            e => Failure::Run(e.to_string()),
        }
    }
}

pub type Outcome = Result<(), Failure>;

/// Prints the failure on stderr and maps it to the process exit code.
pub fn exit_code(o: Outcome) -> ExitCode {
    match o {
        Ok(()) => ExitCode::SUCCESS,
        Err(Failure::Input(e)) => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
        Err(Failure::Run(msg)) => {
            eprintln!("error: {msg}");
            ExitCode::from(1)
        }
        Err(Failure::Interrupted(msg)) => {
            let sig = interrupt::received().unwrap_or(2);
            eprintln!("interrupted by {}: {msg}", interrupt::name(sig));
            ExitCode::from((128 + sig) as u8)
        }
    }
}

/// `Err(Interrupted)` saying `written` when a signal asked to stop, else `Ok`.
pub fn unless_interrupted(written: impl FnOnce() -> String) -> Outcome {
    match interrupt::received() {
        Some(_) => Err(Failure::Interrupted(written())),
        None => Ok(()),
    }
}
