//! `fabricsim train` from a scenario: the cluster `plan` builds (design and topology from
//! `[cluster]`, `[fabric]` and `[topology]`), the ranks placed on its hosts, the `[train]` job
//! validated on it, and one step modelled on the profile's and GPU's link parameters, with the
//! job's random loss (`[train] loss_rate`) costed in expectation.

use super::config::TrainConfig;
use super::efficiency::Efficiency;
use super::loss_cost::{StepLoss, step_with_loss};
use super::random_loss::RandomLoss;
use super::step::StepReport;
use crate::workload::comm_model::AlphaBetaModel;
use crate::workload::link_params::FabricParams;
use crate::workload::placement::Placement;
use fabricsim_core::error::InputError;
use fabricsim_core::topology::Topology;
use fabricsim_input::profile::Profile;
use fabricsim_input::scenario::{Design, Scenario};

/// Everything a training run resolved and computed; the engines calibrate `comm` on
/// `topology` through `config.place`.
pub struct TrainRun {
    pub design: Design,
    pub topology: Topology,
    pub config: TrainConfig,
    pub comm: AlphaBetaModel,
    /// `[train] loss_rate`: costed in expectation in `report`.
    pub loss: Option<RandomLoss>,
    pub report: StepReport,
    /// What that loss costs the step.
    pub step_loss: Option<StepLoss>,
}

/// Validates the scenario, builds its topology, places the ranks and models one step with the
/// closed-form communication model.
pub fn run(s: &Scenario) -> Result<TrainRun, InputError> {
    run_with(s, None)
}

/// [`run`] with `profile` in place of the scenario's fabric profile (`fabricsim tune`'s
/// candidates; `None`: the scenario's own).
pub fn run_with(s: &Scenario, profile: Option<&Profile>) -> Result<TrainRun, InputError> {
    let (mut design, topology) = s.design_and_topology()?;
    if let Some(p) = profile {
        design.profile = p.clone();
    }
    let place = Placement::on_topology(&topology, design.spec.gpus_per_node);
    let config = TrainConfig::resolve(s, &design, place)?;
    let comm = AlphaBetaModel::new(FabricParams::of(&design));
    let loss = RandomLoss::of(s)?;
    let (report, step_loss) = step_with_loss(
        &config,
        &Efficiency::h200(&design.catalog),
        &comm,
        loss.map(|l| l.setup(&design, &topology)).transpose()?,
        &topology,
        crate::workload::collective::Channels::of_design(&design),
    );
    Ok(TrainRun {
        design,
        topology,
        config,
        comm,
        loss,
        report,
        step_loss,
    })
}
