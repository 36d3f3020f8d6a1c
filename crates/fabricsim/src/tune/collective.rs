//! `[tune.collective]`: the one NCCL collective a candidate runs in place of `[traffic]`, on
//! the scenario's cluster with the candidate's profile, compiled as `fabricsim collective`
//! compiles one size of its sweep (NCCL's default channels, `collective::nccl_channels`).

use crate::workload::collective::{self, Algo, CollectiveSpec, Comm, Op};
use crate::workload::run_engine::Cluster;
use fabricsim_core::error::InputError;
use fabricsim_core::message::MessageDag;
use fabricsim_input::profile::Profile;
use fabricsim_input::scenario::Scenario;
use fabricsim_input::scenario::tune::TuneCollective;

/// The cluster with `profile` (`None`: the scenario's own) and the collective's spec on it.
pub fn prepare(
    sc: &Scenario,
    profile: Option<&Profile>,
    c: &TuneCollective,
) -> Result<(Cluster, CollectiveSpec<'static>), InputError> {
    // The names checked where the collectives are, the error placed at the scenario's key.
    let at = |key: &str, value: &str, e: InputError| sc.error(key, value, e.problem, e.allowed);
    let op =
        Op::parse("tune.collective.op", &c.op).map_err(|e| at("tune.collective.op", &c.op, e))?;
    if matches!(op, Op::MoeDispatch | Op::MoeCombine) {
        return Err(sc.error(
            "tune.collective.op",
            &c.op,
            "is routed by a skew that [tune.collective] has no keys for",
            "all_reduce, all_gather, reduce_scatter, all_to_all, broadcast, reduce, sendrecv",
        ));
    }
    let algos = Algo::for_op(op);
    let algo = match &c.algo {
        None => algos[0],
        Some(s) => {
            let a = Algo::parse("tune.collective.algo", s)
                .map_err(|e| at("tune.collective.algo", s, e))?;
            if !algos.contains(&a) {
                let names: Vec<_> = algos.iter().map(|a| a.name()).collect();
                return Err(sc.error(
                    "tune.collective.algo",
                    s,
                    format!("{op} has no {} algorithm", a.name()),
                    names.join(", "),
                ));
            }
            a
        }
    };
    let cluster = Cluster::with_profile(sc, profile)?;
    let channels = c.channels.unwrap_or_else(|| {
        collective::nccl_channels(
            &cluster.design.nccl,
            cluster.design.spec.nics_per_node,
            algo,
            Comm::world(&cluster.place).len() as u32,
        )
    });
    let spec = CollectiveSpec {
        algo,
        ..CollectiveSpec::with_defaults(op, c.bytes, channels)
    };
    Ok((cluster, spec))
}

/// The collective's DAG over every GPU of the cluster.
pub fn dag(cluster: &Cluster, spec: &CollectiveSpec) -> Result<MessageDag, InputError> {
    collective::compile(spec, &Comm::world(&cluster.place), cluster.nvlink())
}
