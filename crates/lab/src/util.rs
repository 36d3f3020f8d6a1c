//! Helpers shared by the lab's sub-commands: one run on both engines, a run's last completion
//! and mean FCT, and a message's links as the packet engine's ECMP hash places it.

use fabricsim::flow::paths;
use fabricsim::message::MessageDag;
use fabricsim::sim::{self, Faults, RunOptions};

/// The fabric and incast of the 1,024-GPU victim traces (`flow_cases::incast_victims`).
#[derive(clap::Args)]
pub struct Incast1024 {
    /// GPUs of the fabric (8 per server)
    #[arg(default_value_t = 1024)]
    pub gpus: u32,
    /// Incast senders (1 MB each, to host 0; 8 victims of 1 MB)
    #[arg(default_value_t = 99)]
    pub senders: u32,
}

/// The fabric and incast of the 128-GPU cross-validation case `incast 32:1 + victims`.
#[derive(clap::Args)]
pub struct Incast128 {
    /// GPUs of the fabric (8 per server)
    #[arg(default_value_t = 128)]
    pub gpus: u32,
    /// Incast senders (1 MB each, to host 0)
    #[arg(default_value_t = 32)]
    pub senders: u32,
}

/// One run of `dag` on both engines: (packet, flow).
pub fn both(
    topo: &fabricsim::topology::Topology,
    p: &sim::SimParams,
    dag: &MessageDag,
) -> (sim::RunResult, sim::RunResult) {
    let pr = sim::run(topo, p, dag, &Faults::default(), RunOptions::default()).unwrap();
    let fp = fabricsim::engine_choice::flow_params(topo, p);
    (pr, fabricsim::flow::run(topo, p, dag, &fp).unwrap().0)
}

/// Last completion and mean FCT (us).
pub fn last_mean(r: &sim::RunResult) -> (f64, f64) {
    let f: Vec<u64> = r.messages.iter().filter_map(|m| m.fct_ps).collect();
    let last = r
        .messages
        .iter()
        .filter_map(|m| m.finish_ps)
        .max()
        .unwrap_or(0);
    (
        last as f64 / 1e6,
        f.iter().sum::<u64>() as f64 / f.len().max(1) as f64 / 1e6,
    )
}

/// The directed links of the first message of `dag` as both engines route it.
pub fn route_links(
    topo: &fabricsim::topology::Topology,
    p: &sim::SimParams,
    dag: &MessageDag,
) -> Vec<u32> {
    let router = paths::Router::new(topo, p.routing);
    let (msg_qp, _) = sim::route::number_qps(&dag.messages, 1);
    let mut links = Vec::new();
    message_links(topo, &router, p, &dag.messages[0], msg_qp[0], &mut links);
    links
}

/// The links message `m` on QP `qp` crosses, as the packet engine's ECMP hash places it.
pub fn message_links(
    topo: &fabricsim::topology::Topology,
    router: &paths::Router,
    p: &sim::SimParams,
    m: &fabricsim::message::Message,
    qp: u32,
    links: &mut Vec<u32>,
) {
    let (h, _) = paths::qp_hashes(p, qp, m.src.0, m.dst.0);
    links.clear();
    let model = fabricsim::flow::PathModel::Hash;
    paths::subflow_links(topo, router, model, m.src.0, m.dst.0, h, 0, |_| 0, links);
}
