//! What the flow engine is told beyond the packet engine's parameters, and what it counts.

use super::calibration::{
    CACHE_ENTRIES, LOSSLESS_MODELS_MAX_ACTIVE, LOSSLESS_MODELS_MAX_PORT_WORK,
};
use super::loss::LossModel;
use super::paths::PathModel;
use super::rate_model::RateModel;
use fabricsim_core::topology::LinkId;

/// What the flow engine is told beyond the packet engine's parameters.
#[derive(Clone, Debug, PartialEq)]
pub struct FlowParams {
    pub paths: PathModel,
    pub rates: RateModel,
    /// Random packet loss and its recovery (`None`: no loss).
    pub loss: Option<LossModel>,
    /// Flow rates the repeated-component cache may hold (0 disables it).
    pub cache_entries: usize,
    /// Batching tolerance (0, the default everywhere: exact). A flow's start or finish
    /// reaches the other rates at most `batch_tol` x its span later, its span being a starting
    /// flow's drain time alone on its route or a finishing flow's age; changes falling due by
    /// then share one re-solve. Meanwhile the other flows keep their rates (the allocation
    /// stays feasible) and a new flow waits at rate 0. The shift reaches other flows through
    /// the shared links and the DAG, so the error is measured, not bounded: along a chain of
    /// dependent transfers it adds up to about `batch_tol` of the chain (`tests/flow_batch.rs`).
    pub batch_tol: f64,
    /// The most port-service work of a run (`SolveStats::port_work`) before the lossless
    /// models end ([`LOSSLESS_MODELS_MAX_PORT_WORK`]).
    pub lossless_max_port_work: u64,
    /// The most flows active at once before the lossless models end
    /// ([`LOSSLESS_MODELS_MAX_ACTIVE`]).
    pub lossless_max_active: u64,
    /// Links down since before the run, the fabric converged around them
    /// (`reroute::Converged`): no route takes them.
    pub failed_links: Vec<LinkId>,
}

impl Default for FlowParams {
    fn default() -> Self {
        FlowParams {
            paths: PathModel::Hash,
            rates: RateModel::default(),
            loss: None,
            cache_entries: CACHE_ENTRIES,
            batch_tol: 0.0,
            lossless_max_port_work: LOSSLESS_MODELS_MAX_PORT_WORK,
            lossless_max_active: LOSSLESS_MODELS_MAX_ACTIVE,
            failed_links: Vec::new(),
        }
    }
}
