//! What both engines share: the engine-neutral parameters ([`params`]) and results
//! ([`results`]), injected faults and rerouting, and the mechanisms both the packet and the flow
//! engine run: ECN marking, the DCQCN reaction point, IB congestion control, PSNs, QP entropy,
//! next-hop routing (ECMP hash, D-mod-K, adaptive) and PFC headroom.
//!
//! - `params`: what an engine is told (a plain struct; fabric profiles map onto it);
//! - `route`: next-hop choice (ECMP 5-tuple hash, static destination routing); `psn`: 24-bit
//!   PSNs and their serial arithmetic;
//! - `faults`: injected faults; `reroute`: local repair and the fabric-wide reroute after a link
//!   failure;
//! - `results`: counters, completion times, time series, the JSON written;
//! - `cc` (with `ecn`, `dcqcn`, `ibcc`, `entropy`, `ibroute`): ECN/FECN marking, DCQCN, IB
//!   congestion control, QPs per connection and the flow hash, D-mod-K and adaptive routing;
//! - `loss_expect`: random loss in expectation per message (both engines' and the step's);
//! - `fec`: RS(544,514) / RS(528,514) FEC, pre-FEC BER to codeword failure and frame loss;
//! - `class_map`: a message's SL or 802.1Q priority to its engine class (SL2VL, priority to TC);
//! - `headroom`: the PFC headroom formula; `lossless_scenarios`: small lossless test fabrics.

pub mod cc;
pub mod cc_algo;
pub mod class_map;
pub mod dcqcn;
pub mod ecn;
pub mod entropy;
pub mod error;
pub mod faults;
pub mod fec;
pub mod headroom;
pub mod hpcc;
pub mod ibcc;
pub mod ibroute;
pub mod llr;
pub mod loss_expect;
pub mod lossless_scenarios;
pub mod nscc;
pub mod params;
pub mod psn;
pub mod rccc;
pub mod recovery;
pub mod reroute;
pub mod results;
pub mod route;

pub use error::ParamError;
pub use faults::{Dir, Fault, Faults, LinkLoss};
pub use params::{
    CreditParams, FlowControl, Headroom, PfcParams, PfcThreshold, RoutePolicy, Scheduling,
    SimParams, Spray, SprayPick, Transport,
};
pub use results::{RunResult, Status};
