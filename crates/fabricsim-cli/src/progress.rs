//! Progress on standard error when it is a terminal, nothing otherwise (logs and pipes stay
//! clean): a bar of what is done, the count and what is running.

use std::io::IsTerminal;

pub struct Bar {
    tty: bool,
}

impl Bar {
    pub fn new() -> Bar {
        Bar {
            tty: std::io::stderr().is_terminal(),
        }
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
