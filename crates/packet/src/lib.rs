//! The packet-level discrete-event engine: the ground truth for mechanisms (links, shared-buffer
//! switches, RDMA NICs with the RC transport, ECMP, loss and link faults). Its parameters,
//! results and the mechanisms it shares with the flow engine are in `fabricsim_mech`.
//!
//! - `queue`: the calendar event queue; `packet`: the packet slab and FIFOs (`ring` buffers);
//!   `hugepages`: 2 MB pages for the slab;
//! - `sched`: egress scheduling between traffic classes (strict priority, DWRR);
//! - `transport`: the RC queue pair (go-back-N, selective repeat, timeouts);
//! - `congestion`: the congestion-control seam (trait `CongestionControl`, one file per
//!   algorithm, `AnyCc` resolved once per run) and its per-run state `CcState`;
//! - `marking`: the marking seam (RED and step ECN, IB FECN; `Marking` resolved once per run);
//! - `engine`: the event loop and the packet path; congestion control's engine hooks are in
//!   `engine/cc.rs`, marking's in `engine/mark.rs`, and the admission seam (drop-tail, PFC,
//!   credits: the loop's type parameter) in `engine/admission/`;
//! - `credits`, `pfc`, `deadlock`: link-level flow control (IB credits per VL, PFC with SONiC
//!   headroom, the watchdog, deadlock detection); `engine::admission` and `engine::llfc` hook
//!   them in.
//!
//! Where later mechanisms plug in: an admission policy is an `engine::admission` arm (PFC sets
//! a port's per-class `blocked` bits and wakes the port); a marking rule a `marking` arm, acting
//! where `switch_next` dequeues a packet (the `F_ECN` flag); congestion control drives a QP's
//! pacing gap and window (`congestion`); adaptive routing and spraying are `RoutePolicy`
//! variants chosen in `route::choose`.

pub mod congestion;
pub mod credits;
pub mod deadlock;
pub mod engine;
pub mod error;
pub mod hugepages;
pub mod llr;
pub mod marking;
pub mod packet;
pub mod pfc;
pub mod queue;
pub mod ring;
pub mod sched;
#[cfg(feature = "trace")]
pub mod trace;
pub mod transport;

pub use engine::{Engine, Progress, RunOptions};
pub use error::SimError;

use fabricsim_core::message::MessageDag;
use fabricsim_core::topology::Topology;
use fabricsim_mech::{Faults, RunResult, SimParams};

/// Runs `dag` on `topo` with `params` and `faults`; `Err` when the traffic does not fit the
/// topology or a parameter is out of range.
pub fn run(
    topo: &Topology,
    params: &SimParams,
    dag: &MessageDag,
    faults: &Faults,
    opts: RunOptions,
) -> Result<RunResult, SimError> {
    Ok(Engine::new(topo, params, dag, faults)?.run(opts))
}
