//! Progress on standard error when it is a terminal, nothing otherwise (logs and pipes stay
//! clean) unless `FABRICSIM_PROGRESS=1` asks for it (a log followed with `tail -f`): a bar of
//! what is done, the count and what is running.

use std::io::IsTerminal;

/// Whether progress is shown: standard error is a terminal, or `FABRICSIM_PROGRESS=1`.
pub fn wanted() -> bool {
    std::io::stderr().is_terminal()
        || std::env::var_os("FABRICSIM_PROGRESS").is_some_and(|v| v == "1")
}

pub struct Bar {
    tty: bool,
}

impl Bar {
    pub fn new() -> Bar {
        Bar { tty: wanted() }
    }

    /// Redraws the line: `done` of `total` `unit`, then `what` (may be empty).
    pub fn show(&self, done: usize, total: usize, unit: &str, what: &str) {
        if self.tty {
            let w = 30 * done.min(total) / total.max(1);
            eprint!(
                "\r[{}{}] {done}/{total} {unit} {what:<40}",
                "#".repeat(w),
                ".".repeat(30 - w)
            );
        }
    }

    /// Ends the line.
    pub fn finish(&self) {
        if self.tty {
            eprintln!();
        }
    }
}
