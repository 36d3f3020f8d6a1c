//! The packet-level discrete-event engine: the ground truth for mechanisms (links, shared-buffer
//! switches, RDMA NICs with the RC transport, ECMP, loss and link faults).
//!
//! - `params`: what the engine is told (a plain struct; fabric profiles map onto it);
//! - `queue`: the calendar event queue; `packet`: the packet slab and FIFOs (`ring` buffers);
//!   `hugepages`: 2 MB pages for the slab;
//! - `route`: next-hop choice (ECMP 5-tuple hash, static destination routing);
//! - `sched`: egress scheduling between traffic classes (strict priority, DWRR);
//! - `transport`: the RC queue pair (go-back-N, selective repeat, timeouts); `psn`: 24-bit
//!   PSNs and their serial arithmetic;
//! - `engine`: the event loop and the packet path; `faults`: injected faults; `reroute`: local
//!   repair and the fabric-wide reroute after a link failure;
//! - `results`: counters, completion times, time series, the JSON written;
//! - `cc` (with `ecn`, `dcqcn`, `ibcc`, `entropy`, `ibroute`): ECN/FECN marking, DCQCN, IB
//!   congestion control, QPs per connection and the flow hash, D-mod-K and adaptive routing;
//!   their engine hooks are in `engine/cc.rs`.
//!
//! - `credits`, `pfc`, `headroom`, `deadlock`: link-level flow control (IB credits per VL,
//!   PFC with SONiC headroom, the watchdog, deadlock detection); `engine::llfc` hooks them in.
//!
//! Where later mechanisms plug in: link-level flow control (IB credits, PFC) sets a port's
//! per-class `blocked` bits and wakes the port; ECN marking acts where `switch_next` dequeues a
//! packet (the `F_ECN` flag); congestion control drives a QP's `limit_ps_per_byte` rate limiter;
//! adaptive routing and spraying are new `RoutePolicy` variants chosen in `route::choose`.

pub mod bench;
pub mod cc;
pub mod cc_profile;
pub mod congestion;
pub mod credits;
pub mod dcqcn;
pub mod deadlock;
pub mod ecn;
pub mod engine;
pub mod entropy;
pub mod faults;
pub mod headroom;
pub mod hugepages;
pub mod ibcc;
pub mod ibroute;
pub mod lossless_scenarios;
pub mod packet;
pub mod params;
pub mod params_from_design;
pub mod pfc;
pub mod profile_fc;
pub mod psn;
pub mod queue;
pub mod reroute;
pub mod results;
pub mod ring;
pub mod route;
pub mod sched;
#[cfg(feature = "trace")]
pub mod trace;
pub mod transport;

pub use engine::{Engine, Progress, RunOptions};
pub use faults::{Dir, Fault, Faults, LinkLoss};
pub use params::{
    CreditParams, FlowControl, Headroom, PfcParams, PfcThreshold, RoutePolicy, Scheduling,
    SimParams, Transport,
};
pub use params_from_design::params_from_design;
pub use results::{RunResult, Status};

use crate::message::MessageDag;
use crate::topology::Topology;

/// Runs `dag` on `topo` with `params` and `faults`; `Err` when the traffic does not fit the
/// topology or a parameter is out of range.
pub fn run(
    topo: &Topology,
    params: &SimParams,
    dag: &MessageDag,
    faults: &Faults,
    opts: RunOptions,
) -> Result<RunResult, String> {
    Ok(Engine::new(topo, params, dag, faults)?.run(opts))
}
