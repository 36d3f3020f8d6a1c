//! A collective measured over a size sweep by an engine: compile the DAG of each size, let the
//! engine (a closure: DAG -> completion time) run it, and return the nccl-tests table and the
//! alpha-beta fit of the points with its error. This is where `fabricsim collective` plugs
//! the packet engine in.

use super::alpha_beta::{Fit, FitError, fit};
use super::collective::{CollectiveSpec, Comm, compile};
use super::sweep::SweepSize;
use super::table::{Measured, Table};
use crate::error::InputError;
use crate::message::MessageDag;
use crate::units::{BitRate, Time};

#[derive(Debug)]
pub enum SweepError<E> {
    /// The collective cannot be built as asked.
    Input(InputError),
    /// The engine failed on one size.
    Run { bytes: u64, error: E },
}

#[derive(Clone, Debug)]
pub struct SweepOutcome {
    pub table: Table,
    /// (size in bytes, seconds) per size.
    pub points: Vec<(u64, f64)>,
    /// time(S) = alpha + S / B_eff over the points, with its error against them.
    pub fit: Result<Fit, FitError>,
}

/// Measures `spec` (its `bytes` is replaced by each size) over `comm` with `run`.
pub fn measure<E>(
    spec: &CollectiveSpec,
    comm: &Comm,
    nvlink: BitRate,
    sizes: &[SweepSize],
    mut run: impl FnMut(&MessageDag) -> Result<Time, E>,
) -> Result<SweepOutcome, SweepError<E>> {
    let mut measured = Vec::with_capacity(sizes.len());
    for &size in sizes {
        let s = CollectiveSpec {
            bytes: size.bytes,
            ..*spec
        };
        let dag = compile(&s, comm, nvlink).map_err(SweepError::Input)?;
        let t = run(&dag).map_err(|error| SweepError::Run {
            bytes: size.bytes,
            error,
        })?;
        measured.push(Measured {
            size,
            secs: t.as_secs_f64(),
        });
    }
    let points: Vec<(u64, f64)> = measured.iter().map(|m| (m.size.bytes, m.secs)).collect();
    Ok(SweepOutcome {
        table: Table::new(spec.op, comm.len() as u32, spec.root, &measured),
        fit: fit(&points),
        points,
    })
}
