//! What the flow engine counts beside the results schema.

use super::maxmin::SolveStats;

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
    /// When the lossless fabrics' models ended, more than `calibration::LOSSLESS_MODELS_MAX_ACTIVE` flows
    /// being active or their work over `FlowParams::lossless_max_port_work` (ps; `None`: they
    /// did not, or were never on).
    pub lossless_models_end_ps: Option<u64>,
}
