//! A process-wide request to stop (the command line sets it on SIGINT or SIGTERM). The engines
//! poll it where they already pause to report progress (every `CHECK_EVERY` events, every few
//! thousand flow-engine batches), never per event; drivers of many runs (sweeps, comparisons,
//! size sweeps) poll it between runs and keep only the runs that finished before it.

use std::sync::atomic::{AtomicBool, Ordering};

static STOP: AtomicBool = AtomicBool::new(false);

/// Asks every running engine to stop at its next check (async-signal-safe: one atomic store).
pub fn request() {
    STOP.store(true, Ordering::Relaxed);
}

/// Whether a stop was requested.
#[inline]
pub fn requested() -> bool {
    STOP.load(Ordering::Relaxed)
}

/// Withdraws a request (a library caller that outlives a run, such as the Python package after
/// a Ctrl-C, starts its next run afresh).
pub fn clear() {
    STOP.store(false, Ordering::Relaxed);
}
