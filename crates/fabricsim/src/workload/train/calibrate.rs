//! Calibrating the step model with an engine: every (op, group) a step uses is compiled into
//! message DAGs at a few sizes around the size the step uses, run by the engine (a closure),
//! fitted to alpha-beta, and inserted into the [`AlphaBetaModel`]; re-running the step model
//! then uses the fitted times. The DAG's algorithm is the one the closed form models:
//! hierarchical (NVLink + rails) for groups with several GPUs on each of several servers,
//! the ring otherwise; direct for all-to-all and send/recv.

use super::step::StepReport;
use crate::workload::alpha_beta::{Fit, FitError};
use crate::workload::collective::{Algo, Channels, CollectiveSpec, Comm, Op};
use crate::workload::comm_model::{AlphaBetaModel, GroupShape};
use crate::workload::measure::{SweepError, Timed, measure};
use crate::workload::placement::Placement;
use crate::workload::sweep::round;
use fabricsim_core::message::MessageDag;
use fabricsim_core::units::BitRate;

/// The algorithm whose closed form `AlphaBetaModel::closed_form` uses for `op` on `g`.
pub fn algo_for(op: Op, g: GroupShape) -> Algo {
    let hier = g.servers > 1 && g.per_server() > 1;
    match op {
        Op::AllReduce | Op::AllGather | Op::ReduceScatter if hier => Algo::Hierarchical,
        _ => Algo::for_op(op)[0],
    }
}

/// Sizes measured per collective: the step's size and 1/8 and 1/64 of it (at least 64 KiB).
fn sizes_around(bytes: u64) -> Vec<u64> {
    let mut v: Vec<u64> = [bytes / 64, bytes / 8, bytes]
        .iter()
        .map(|&b| b.max(64 << 10))
        .collect();
    v.dedup();
    v
}

/// One fitted (op, group) with the collective it came from.
#[derive(Clone, Debug)]
pub struct Calibrated {
    pub name: &'static str,
    pub op: Op,
    pub group: GroupShape,
    /// The fit, or why the engine's times admit none (the closed form stays in use then).
    pub fit: Result<Fit, FitError>,
}

/// Measures every collective of `report` on `place` with `run` and inserts the fits into
/// `model`. `channels` gives the NCCL channel count of the DAGs per algorithm.
pub fn calibrate<E, R: Into<Timed>>(
    model: &mut AlphaBetaModel,
    report: &StepReport,
    place: &Placement,
    nvlink: BitRate,
    channels: Channels,
    run: impl FnMut(&MessageDag) -> Result<R, E>,
) -> Result<Vec<Calibrated>, SweepError<E>> {
    calibrate_at(model, report, place, nvlink, channels, &sizes_around, run)
}

/// [`calibrate`] measuring each collective at `sizes(step's bytes)` (for example sizes capped
/// to keep packet-level runs short; the fit extrapolates).
pub fn calibrate_at<E, R: Into<Timed>>(
    model: &mut AlphaBetaModel,
    report: &StepReport,
    place: &Placement,
    nvlink: BitRate,
    channels: Channels,
    sizes: &dyn Fn(u64) -> Vec<u64>,
    mut run: impl FnMut(&MessageDag) -> Result<R, E>,
) -> Result<Vec<Calibrated>, SweepError<E>> {
    let mut done: Vec<Calibrated> = Vec::new();
    for row in &report.collectives {
        let op = Op::ALL
            .into_iter()
            .find(|o| o.name() == row.op)
            .expect("rows name known ops");
        let group = GroupShape {
            ranks: row.ranks,
            servers: row.servers,
        };
        if done.iter().any(|c| (c.op, c.group) == (op, group)) {
            continue;
        }
        let comm = Comm {
            place,
            gpus: (0..row.ranks as u64)
                .map(|i| (i * row.gpu_stride) as u32)
                .collect(),
        };
        let algo = algo_for(op, group);
        let spec = CollectiveSpec {
            algo,
            ..CollectiveSpec::with_defaults(op, 0, channels.of(algo, row.ranks))
        };
        let sizes: Vec<_> = sizes(row.bytes_per_call)
            .into_iter()
            .map(|b| round(op, row.ranks, b))
            .collect();
        let out = measure(&spec, &comm, nvlink, &sizes, &mut run)?;
        if let Ok(fit) = &out.fit {
            model.insert_fit(op, group, fit.model);
        }
        done.push(Calibrated {
            name: row.name,
            op,
            group,
            fit: out.fit,
        });
    }
    Ok(done)
}
