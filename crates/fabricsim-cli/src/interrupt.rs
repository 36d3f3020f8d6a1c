//! SIGINT and SIGTERM: the first asks the library to stop (`fabricsim::stop`: the engines poll it
//! every few hundred thousand events, sweeps and comparisons between runs) and is remembered for
//! the exit status, 128 + the signal (130, 143, as shells report a death by signal); a second
//! signal ends the process at once.

use std::sync::atomic::{AtomicI32, Ordering};

static SIGNAL: AtomicI32 = AtomicI32::new(0);

const SIGINT: i32 = 2;
const SIGTERM: i32 = 15;

#[cfg(unix)]
mod os {
    use super::{Ordering, SIGNAL};

    unsafe extern "C" {
        fn signal(sig: i32, handler: extern "C" fn(i32)) -> usize;
        fn _exit(status: i32) -> !;
    }

    extern "C" fn on_signal(sig: i32) {
        if SIGNAL.swap(sig, Ordering::Relaxed) != 0 {
            // SAFETY: _exit is async-signal-safe (POSIX.1-2008 2.4.3).
            unsafe { _exit(128 + sig) }
        }
        fabricsim::stop::request();
    }

    pub fn install() {
        // SAFETY: the handler only touches atomics and calls _exit, all async-signal-safe.
        unsafe {
            signal(super::SIGINT, on_signal);
            signal(super::SIGTERM, on_signal);
        }
    }
}

#[cfg(not(unix))]
mod os {
    pub fn install() {}
}

pub use os::install;

/// The signal that asked to stop, if one did.
pub fn received() -> Option<i32> {
    match SIGNAL.load(Ordering::Relaxed) {
        0 => None,
        s => Some(s),
    }
}

/// The signal's name, for messages.
pub fn name(sig: i32) -> String {
    match sig {
        SIGINT => "SIGINT".into(),
        SIGTERM => "SIGTERM".into(),
        s => format!("signal {s}"),
    }
}
