//! What the flow engine is told beyond the packet engine's parameters, and what it counts.

use super::calibration::{
    CACHE_ENTRIES, LOSSLESS_MODELS_MAX_ACTIVE, LOSSLESS_MODELS_MAX_PORT_WORK,
};
use super::loss::LossModel;
use super::maxmin::SolveStats;
use super::paths::PathModel;
use super::rate_model::RateModel;

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
        }
    }
}

/// The engine's own counters (beside the results schema).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FlowStats {
    pub solve: SolveStats,
    pub flows: u64,
    pub routes: u64,
    /// Most flows active at once.
    pub peak_active: u64,
    /// Distinct event times (one incremental solve each, at most).
    pub batches: u64,
    /// The longest a message drained beyond its drain alone on its route (ps): the queueing
    /// delay a packet network would add (`loss::LossModel::rto_warning`).
    pub max_wait_ps: u64,
    /// Caps the NICs' send stage set or lifted (`nic_send`; 0: it changed no rate).
    pub nic_caps: u64,
    /// When the lossless fabrics' models ended, more than [`LOSSLESS_MODELS_MAX_ACTIVE`] flows
    /// being active or their work over `FlowParams::lossless_max_port_work` (ps; `None`: they
    /// did not, or were never on).
    pub lossless_models_end_ps: Option<u64>,
}
