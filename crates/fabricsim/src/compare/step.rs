//! The training step with its collectives timed by the packet engine: every (op, group) of the
//! step is run as a message DAG at a few sizes (capped so a run stays short), fitted to
//! alpha-beta and inserted into the communication model (`workload::train::calibrate`); the
//! step model then uses the fits. The runs are lossless: random loss is costed in expectation
//! at the step's real sizes (`workload::train::loss_cost`), not sampled once per size.

use serde::{Deserialize, Serialize};

use super::engine::{Span, makespan, params};
use super::ideal::IdealFabric;
use super::variant::Variant;
use crate::error::Error;
use crate::setup::engine_choice::EngineKind;
use crate::workload::collective::Channels;
use crate::workload::comm_model::AlphaBetaModel;
use crate::workload::link_params::FabricParams;
use crate::workload::measure::{SweepError, Timed};
use crate::workload::train::calibrate::{Calibrated, calibrate_at};
use crate::workload::train::config::TrainConfig;
use crate::workload::train::efficiency::Efficiency;
use crate::workload::train::loss_cost::{LossSetup, StepLoss, step_with_loss};
use crate::workload::train::step::{StepReport, step};
use fabricsim_core::topology::Topology;
use fabricsim_core::units::BitRate;
use fabricsim_input::scenario::Design;
use fabricsim_mech::SimParams;

/// Largest collective size run on the packet engine; larger collectives are extrapolated by
/// the fit (64 MiB keeps a 256-GPU step's calibration around a second).
pub const CAP_BYTES: u64 = 64 << 20;

/// Sizes measured for a collective of `bytes`: 1/64, 1/8 and all of min(bytes, CAP_BYTES),
/// at least 64 KiB each.
pub fn sizes(bytes: u64) -> Vec<u64> {
    let c = bytes.min(CAP_BYTES);
    let mut v: Vec<u64> = [c / 64, c / 8, c]
        .iter()
        .map(|&b| b.max(64 << 10))
        .collect();
    v.dedup();
    v
}

/// What the packet runs of one calibration saw, summed over them.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct EngineTotals {
    pub runs: u64,
    /// Runs on each engine (`engine` = auto picks per run by size).
    pub packet_runs: u64,
    pub flow_runs: u64,
    pub packets_dropped: u64,
    pub retransmitted_packets: u64,
    pub timeouts: u64,
    pub naks: u64,
    /// (op, ranks, servers) pairs whose times admit no alpha-beta fit: the closed form stays
    /// in use for them, and the step is reported with this warning.
    pub unfitted: Vec<String>,
    /// Fits with runs that met a retransmission timeout: the line through the others, the
    /// stalls' mean per call added to alpha (`alpha_beta::fit_runs`), one line each.
    pub stalled: Vec<String>,
    /// Random loss in expectation (`None` without loss).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loss: Option<StepLoss>,
}

/// The loss of `p` on `topo` to cost in expectation, and `p` without it for the calibration
/// runs.
fn split_loss(
    mut p: SimParams,
    design: &Design,
    topo: &Topology,
) -> (Option<LossSetup>, SimParams) {
    let rate = BitRate::gbps(design.profile.ports.rate_gbps as u64);
    let loss = LossSetup::of(&p, topo, rate);
    p.loss_rate = 0.0;
    p.ber = 0.0;
    (loss, p)
}

impl EngineTotals {
    /// Adds the totals of `seed`'s runs; its stalled fits are named with the seed.
    pub fn add(&mut self, x: &EngineTotals, seed: u64) {
        self.runs += x.runs;
        self.packet_runs += x.packet_runs;
        self.flow_runs += x.flow_runs;
        self.packets_dropped += x.packets_dropped;
        self.retransmitted_packets += x.retransmitted_packets;
        self.timeouts += x.timeouts;
        self.naks += x.naks;
        for u in &x.unfitted {
            if !self.unfitted.contains(u) {
                self.unfitted.push(u.clone());
            }
        }
        self.stalled
            .extend(x.stalled.iter().map(|l| format!("seed {seed}: {l}")));
        // The loss is costed in expectation from the step's sizes, not sampled: every seed's
        // cost is the same, so the first stands for all.
        if self.loss.is_none() {
            self.loss = x.loss.clone();
        }
    }
}

/// A fabric's step, what its engine runs saw, and the same job on the ideal fabric.
pub struct EngineStep {
    pub step: StepReport,
    pub totals: EngineTotals,
    /// The step with no time across servers ([`super::ideal::IdealFabric`]), lossless.
    pub ideal: StepReport,
    /// Seconds random loss adds to the step in expectation (0 without loss).
    pub loss_s: f64,
}

/// The step of `cfg` on `topo` with `v`'s engine parameters and `seed`.
pub fn engine_step(
    cfg: &TrainConfig,
    design: &Design,
    topo: &Topology,
    v: &Variant,
    seed: u64,
) -> Result<EngineStep, Error> {
    engine_step_with(cfg, design, topo, v, seed, true)
}

/// [`engine_step`], its collectives fitted from engine runs only with `fit` (without, the
/// closed form times them: a step timed whole elsewhere, `super::whole_step`, needs only its
/// split and its loss cost).
pub fn engine_step_with(
    cfg: &TrainConfig,
    design: &Design,
    topo: &Topology,
    v: &Variant,
    seed: u64,
    fit: bool,
) -> Result<EngineStep, Error> {
    let eff = Efficiency::h200(&design.catalog);
    let mut model = AlphaBetaModel::new(FabricParams::of(design));
    // The step's collectives and sizes come from the closed-form step; the fits replace times.
    let first = step(cfg, &eff, &model);
    let (loss, p) = split_loss(params(v, design, seed)?, design, topo);
    let nvlink = BitRate((cfg.gpu.nvlink_one_way_bytes_per_s() * 8.0) as u64);
    let mut totals = EngineTotals::default();
    let channels = Channels::of_design(design);
    let calibrated = if !fit {
        Vec::new()
    } else {
        calibrate_at(
            &mut model,
            &first,
            &cfg.place,
            nvlink,
            channels,
            &sizes,
            |dag| -> Result<Timed, Error> {
                let Span {
                    time: t,
                    counters: c,
                    kind,
                    ..
                } = makespan(topo, &p, dag, v.engine)?;
                totals.runs += 1;
                match kind {
                    EngineKind::Packet => totals.packet_runs += 1,
                    EngineKind::Flow => totals.flow_runs += 1,
                }
                totals.packets_dropped += c.drops.total();
                totals.retransmitted_packets += c.retransmitted_packets;
                totals.timeouts += c.timeouts;
                totals.naks += c.naks;
                Ok(Timed {
                    time: t,
                    timeouts: c.timeouts,
                })
            },
        )
        .map_err(|e| match e {
            SweepError::Input(e) => Error::Input(e),
            SweepError::Run { bytes, error } => {
                Error::Run(format!("engine run of {bytes} B: {error}"))
            }
        })?
    };
    let what = |c: &Calibrated| {
        format!(
            "{} on {} GPUs / {} servers",
            c.op.name(),
            c.group.ranks,
            c.group.servers
        )
    };
    totals.unfitted = calibrated
        .iter()
        .filter(|c| c.fit.is_err())
        .map(what)
        .collect();
    totals.stalled = calibrated
        .iter()
        .filter_map(|c| {
            let f = c.fit.as_ref().ok().filter(|f| f.stalled_runs > 0)?;
            Some(match f.set_apart {
                true => format!(
                    "{}: {} of {} runs met a timeout, {:.3} s per call in alpha",
                    what(c),
                    f.stalled_runs,
                    f.points + f.stalled_runs,
                    f.stall_s
                ),
                false => format!(
                    "{}: {} runs met a timeout, too few without one to set them apart",
                    what(c),
                    f.stalled_runs
                ),
            })
        })
        .collect();
    let ideal = step(cfg, &eff, &IdealFabric(&model));
    let (costed, loss) = step_with_loss(cfg, &eff, &model, loss, topo, channels);
    totals.loss = loss;
    Ok(EngineStep {
        loss_s: totals.loss.as_ref().map_or(0.0, |l| l.step_s_added),
        step: costed,
        totals,
        ideal,
    })
}
