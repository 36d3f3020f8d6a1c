//! A collective measured over a size sweep by an engine: compile the DAG of each size, let the
//! engine (a closure: DAG -> completion time) run it, and return the nccl-tests table and the
//! alpha-beta fit of the points with its error. This is where `fabricsim collective` plugs
//! the packet engine in; [`measure_seeds`] runs each size once per seed.

use super::alpha_beta::{Fit, FitError, fit_runs};
use super::collective::{CollectiveSpec, Comm, compile};
use super::sweep::SweepSize;
use super::table::{Measured, Table};
use fabricsim_core::error::InputError;
use fabricsim_core::message::MessageDag;
use fabricsim_core::units::{BitRate, Time};

#[derive(Debug)]
pub enum SweepError<E> {
    /// The collective cannot be built as asked.
    Input(InputError),
    /// The engine failed on one size.
    Run { bytes: u64, error: E },
}

/// One engine run: its completion time and the RC retransmission timeouts it met.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Timed {
    pub time: Time,
    pub timeouts: u64,
}

impl From<Time> for Timed {
    /// A run known to have met no timeout (an analytic engine).
    fn from(time: Time) -> Timed {
        Timed { time, timeouts: 0 }
    }
}

#[derive(Clone, Debug)]
pub struct SweepOutcome {
    pub table: Table,
    /// (size in bytes, seconds) per size.
    pub points: Vec<(u64, f64)>,
    /// Retransmission timeouts per size.
    pub timeouts: Vec<u64>,
    /// time(S) = alpha + S / B_eff over the points, with its error against them; runs with
    /// timeouts set apart (`alpha_beta::fit_runs`).
    pub fit: Result<Fit, FitError>,
    /// A stop request (`fabricsim_core::stop`) ended the sweep: the sizes after the last point are missing.
    pub interrupted: bool,
}

/// Measures `spec` (its `bytes` is replaced by each size) over `comm` with `run`.
pub fn measure<E, R: Into<Timed>>(
    spec: &CollectiveSpec,
    comm: &Comm,
    nvlink: BitRate,
    sizes: &[SweepSize],
    mut run: impl FnMut(&MessageDag) -> Result<R, E>,
) -> Result<SweepOutcome, SweepError<E>> {
    let mut measured = Vec::with_capacity(sizes.len());
    let mut timeouts = Vec::with_capacity(sizes.len());
    let mut interrupted = false;
    for &size in sizes {
        let s = CollectiveSpec {
            bytes: size.bytes,
            ..*spec
        };
        let dag = compile(&s, comm, nvlink).map_err(SweepError::Input)?;
        let outcome = run(&dag);
        // A run the stop cut short is no measurement.
        if fabricsim_core::stop::requested() {
            interrupted = true;
            break;
        }
        let t: Timed = outcome
            .map_err(|error| SweepError::Run {
                bytes: size.bytes,
                error,
            })?
            .into();
        measured.push(Measured {
            size,
            secs: vec![t.time.as_secs_f64()],
        });
        timeouts.push(t.timeouts);
    }
    let points: Vec<(u64, f64)> = measured.iter().map(|m| (m.size.bytes, m.secs[0])).collect();
    Ok(SweepOutcome {
        table: Table::new(spec.op, comm.len() as u32, spec.root, &measured),
        fit: fit_runs(&points, &timeouts),
        points,
        timeouts,
        interrupted,
    })
}

/// A sweep measured on several seeds.
#[derive(Clone, Debug)]
pub struct SeedsOutcome {
    /// Each figure estimated over the seeds.
    pub table: Table,
    /// (size in bytes, mean seconds over the seeds) per size: the points a fit takes.
    pub points: Vec<(u64, f64)>,
    /// A stop request (`fabricsim_core::stop`) ended the sweep: the sizes after the last point
    /// are missing.
    pub interrupted: bool,
}

/// Measures `spec` over `comm` at every size on every seed: `direct(spec at the size)` first may
/// measure a size without its DAG (a dense all-to-all as flow classes, `flow::dense`: it draws
/// nothing at random, so it runs once and counts as one run); otherwise each size's DAG is
/// compiled once, `prepare` sees it once (a check, the engine to run it on), then
/// `run(dag, &prepared, seed)` runs it per seed on up to `threads` threads (`seeds::run_jobs`);
/// each size's times are in seed order, so the result does not depend on the thread count.
#[allow(clippy::too_many_arguments)]
pub fn measure_seeds<E: Send, P: Sync, R: Into<Timed> + Send>(
    spec: &CollectiveSpec,
    comm: &Comm,
    nvlink: BitRate,
    sizes: &[SweepSize],
    seeds: &[u64],
    threads: usize,
    mut direct: impl FnMut(&CollectiveSpec) -> Result<Option<R>, E>,
    mut prepare: impl FnMut(&MessageDag) -> Result<P, E>,
    run: impl Fn(&MessageDag, &P, u64) -> Result<R, E> + Sync,
) -> Result<SeedsOutcome, SweepError<E>> {
    let mut measured = Vec::with_capacity(sizes.len());
    let mut interrupted = false;
    for &size in sizes {
        let fail = |error| SweepError::Run {
            bytes: size.bytes,
            error,
        };
        let sized = CollectiveSpec {
            bytes: size.bytes,
            ..*spec
        };
        if let Some(r) = direct(&sized).map_err(fail)? {
            if fabricsim_core::stop::requested() {
                interrupted = true;
                break;
            }
            let t: Timed = r.into();
            measured.push(Measured {
                size,
                secs: vec![t.time.as_secs_f64()],
            });
            continue;
        }
        let dag = compile(&sized, comm, nvlink).map_err(SweepError::Input)?;
        let prepared = prepare(&dag).map_err(fail)?;
        let runs = super::seeds::run_jobs(seeds, threads, |&seed| run(&dag, &prepared, seed));
        // A run the stop cut short (or never started) is no measurement.
        if fabricsim_core::stop::requested() || runs.iter().any(Option::is_none) {
            interrupted = true;
            break;
        }
        let mut secs = Vec::with_capacity(seeds.len());
        for r in runs.into_iter().flatten() {
            let t: Timed = r.map_err(fail)?.into();
            secs.push(t.time.as_secs_f64());
        }
        measured.push(Measured { size, secs });
    }
    Ok(SeedsOutcome {
        table: Table::new(spec.op, comm.len() as u32, spec.root, &measured),
        points: measured
            .iter()
            .map(|m| {
                let n = m.secs.len().max(1) as f64;
                (m.size.bytes, m.secs.iter().sum::<f64>() / n)
            })
            .collect(),
        interrupted,
    })
}
