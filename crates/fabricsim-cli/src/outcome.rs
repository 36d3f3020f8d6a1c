//! How a subcommand ends: success, bad input (exit 2), or a run that failed (exit 1).

use fabricsim::InputError;
use std::process::ExitCode;

pub enum Failure {
    /// The user's input is wrong: printed with file, line, key, value and what is allowed.
    Input(InputError),
    /// The run itself failed (unfinished messages, broken conservation, I/O while writing).
    Run(String),
}

impl From<InputError> for Failure {
    fn from(e: InputError) -> Failure {
        Failure::Input(e)
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
    }
}
