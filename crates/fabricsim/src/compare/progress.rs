//! Where a comparison is, for a progress display: the fabric, the stage it is in, and the stages
//! done out of all (each fabric's training step, busbw curves, stress run and latency probes,
//! then each loss-sweep point).

use std::sync::atomic::{AtomicUsize, Ordering};

/// One progress report: `fabric` entered or left `stage`; `done` of `total` stages are done.
pub struct Stage<'a> {
    pub fabric: &'a str,
    pub stage: &'static str,
    pub done: usize,
    pub total: usize,
}

/// What is told of each stage (called from the fabrics' threads).
pub type Report<'a> = &'a (dyn Fn(&Stage) + Sync);

/// Counts the stages done and reports each start and end.
pub(super) struct Tracker<'a> {
    done: AtomicUsize,
    total: AtomicUsize,
    report: Report<'a>,
}

impl<'a> Tracker<'a> {
    pub fn new(total: usize, report: Report<'a>) -> Tracker<'a> {
        Tracker {
            done: AtomicUsize::new(0),
            total: AtomicUsize::new(total),
            report,
        }
    }

    /// Runs `f` as `stage` of `fabric`, reporting its start and its end.
    pub fn stage<T>(&self, fabric: &str, stage: &'static str, f: impl FnOnce() -> T) -> T {
        self.tell(fabric, stage, self.done.load(Ordering::Relaxed));
        let t = f();
        self.tell(fabric, stage, self.done.fetch_add(1, Ordering::Relaxed) + 1);
        t
    }

    /// Reports `done` stages of the whole (a sweep reporting its points one by one).
    pub fn tell(&self, fabric: &str, stage: &'static str, done: usize) {
        (self.report)(&Stage {
            fabric,
            stage,
            done,
            total: self.total.load(Ordering::Relaxed),
        });
    }

    /// `n` stages done that were told one by one ([`Tracker::tell`]: a sweep's points), so the
    /// stages after them count on from there.
    pub fn advance(&self, n: usize) {
        self.done.fetch_add(n, Ordering::Relaxed);
    }

    /// `n` more stages to do (the loss sweep's points, known once it starts).
    pub fn add(&self, n: usize) {
        self.total.fetch_add(n, Ordering::Relaxed);
    }

    pub fn done(&self) -> usize {
        self.done.load(Ordering::Relaxed)
    }
}
