//! Where each parallelism's communicator lands on the servers, from the Megatron rank layout
//! (see `config`): TP groups are consecutive GPUs, CP strides by tp, DP and EP by tp * cp,
//! expert-data-parallel by tp * cp * ep, and a pipeline hop by tp * cp * dp.

use super::config::TrainConfig;
use crate::workload::comm_model::GroupShape;

/// The communicator shapes of one training job (those of the group containing GPU 0).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Groups {
    pub tp: GroupShape,
    pub cp: GroupShape,
    pub dp: GroupShape,
    pub ep: GroupShape,
    /// Data parallelism of the expert weights: dp / ep ranks.
    pub edp: GroupShape,
    /// Two adjacent pipeline stages (a send/recv pair).
    pub pp_pair: GroupShape,
}

/// `size` GPUs `stride` apart from GPU 0 on servers of `gpn` GPUs.
pub fn shape(stride: u64, size: u64, gpn: u64) -> GroupShape {
    let mut servers: Vec<u64> = (0..size).map(|i| i * stride / gpn).collect();
    servers.dedup();
    GroupShape {
        ranks: size as u32,
        servers: servers.len() as u32,
    }
}

pub fn groups(cfg: &TrainConfig) -> Groups {
    let (p, g) = (&cfg.par, cfg.gpus_per_node);
    Groups {
        tp: shape(1, p.tp, g),
        cp: shape(p.tp, p.cp, g),
        dp: shape(p.tp * p.cp, p.dp, g),
        ep: shape(p.tp * p.cp, p.ep, g),
        edp: shape(p.tp * p.cp * p.ep, p.dp / p.ep, g),
        pp_pair: shape(p.tp * p.cp * p.dp, p.pp.min(2), g),
    }
}
