//! fabricsim: plan, simulate and compare the networks of AI training clusters.
//!
//! This crate is the driver, the top library layer: `setup` (the road from a scenario to an
//! engine), `plan`, `workload`, `compare`, `report` (with `svg`) and `bench`. Below it are
//! `fabricsim_input` (scenarios, catalog, profiles), the peer engines `fabricsim_packet` and
//! `fabricsim_flow`, `fabricsim_mech` (what both engines share) and `fabricsim_core`.
//! See ARCHITECTURE.md at the repository root for the map of modules and their invariants.

pub mod bench;
pub mod columns;
pub mod compare;
pub mod error;
pub mod plan;
pub mod report;
pub mod setup;
pub mod svg;
pub mod tune;
pub mod workload;

// The paths of the one-crate library, re-exported for the CLI, tests, examples and benches.
// Code in this crate names the layer crates directly (`tests/layering.rs` checks it).
pub use error::{Error, InputError, Source};
pub use fabricsim_core::{estimate, message, release, rng, stop, topology, traffic, units};
pub use fabricsim_flow as flow;
pub use fabricsim_input::{catalog, io, moe_skew, profile};
pub use setup::{engine_choice, memory};

/// `fabricsim_input::scenario`, with `sim::build` (in `setup`).
pub mod scenario {
    pub use fabricsim_input::scenario::*;

    /// `fabricsim_input::scenario::sim` and the run it builds (`setup::build`).
    pub mod sim {
        pub use crate::setup::build::{SimSetup, build};
        pub use fabricsim_input::scenario::sim::*;
    }
}

/// The packet engine (`fabricsim_packet`), what it shares with the flow engine
/// (`fabricsim_mech`), its profile mapping (`fabricsim_input`) and its setup and bench.
pub mod sim {
    pub use crate::bench;
    pub use crate::setup::params_from_design;
    pub use fabricsim_input::{cc_profile, profile_fc};
    pub use fabricsim_mech::{
        CreditParams, Dir, Fault, Faults, FlowControl, Headroom, LinkLoss, PfcParams, PfcThreshold,
        RoutePolicy, RunResult, Scheduling, SimParams, Spray, SprayPick, Status, Transport, cc,
        cc_algo, class_map, dcqcn, ecn, entropy, faults, headroom, hpcc, ibcc, ibroute,
        lossless_scenarios, params, psn, recovery, reroute, results, route,
    };
    #[cfg(feature = "trace")]
    pub use fabricsim_packet::trace;

    /// The congestion-control seam (`fabricsim_packet::congestion`) with the run's algorithm
    /// and HPCC's and NSCC's parameters (`fabricsim_mech::{cc_algo, hpcc, nscc}`).
    pub mod congestion {
        pub use fabricsim_mech::cc_algo::CcAlgo;
        pub use fabricsim_mech::hpcc::HpccParams;
        pub use fabricsim_mech::nscc::NsccParams;
        pub use fabricsim_mech::rccc::RcccParams;
        pub use fabricsim_packet::congestion::*;
    }
    pub use fabricsim_packet::{
        Engine, Progress, RunOptions, SimError, credits, deadlock, engine, hugepages, packet, pfc,
        queue, ring, run, sched, transport,
    };
}
