//! A collective measured over a size sweep by an engine: compile the DAG of each size, let the
//! engine (a closure: DAG -> completion time) run it, and return the nccl-tests table and the
//! alpha-beta fit of the points with its error. This is where `fabricsim collective` plugs
//! the packet engine in.

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
    measure_by(spec, comm, sizes, |s| {
        let dag = compile(s, comm, nvlink).map_err(SweepError::Input)?;
        Ok(run(&dag))
    })
}

/// [`measure`] with `run` given each size's spec, to compile (or not: `flow::dense`) itself;
/// its outer `Err` ends the sweep as it is, its inner one is the run's failure at that size.
pub fn measure_by<E, R: Into<Timed>>(
    spec: &CollectiveSpec,
    comm: &Comm,
    sizes: &[SweepSize],
    mut run: impl FnMut(&CollectiveSpec) -> Result<Result<R, E>, SweepError<E>>,
) -> Result<SweepOutcome, SweepError<E>> {
    let mut measured = Vec::with_capacity(sizes.len());
    let mut timeouts = Vec::with_capacity(sizes.len());
    let mut interrupted = false;
    for &size in sizes {
        let s = CollectiveSpec {
            bytes: size.bytes,
            ..*spec
        };
        let outcome = run(&s)?;
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
            secs: t.time.as_secs_f64(),
        });
        timeouts.push(t.timeouts);
    }
    let points: Vec<(u64, f64)> = measured.iter().map(|m| (m.size.bytes, m.secs)).collect();
    Ok(SweepOutcome {
        table: Table::new(spec.op, comm.len() as u32, spec.root, &measured),
        fit: fit_runs(&points, &timeouts),
        points,
        timeouts,
        interrupted,
    })
}
