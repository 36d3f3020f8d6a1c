//! North-south traffic of a training job: data loading and checkpoint writes to the storage
//! servers of `[storage]`, on the jobs' fabric (messages beside the step's, so they share its
//! links) or on a network of their own (no message on the fabric: no interference, and the
//! transfer times are the tier's bytes over its ports' rate, closed form).
//!
//! The storage servers are a `workload::tier`: the cluster's last servers, each serving on its
//! first `nics` NIC ports; job GPU `g` reads from and writes to storage port `g mod ports`.
//!
//! - Data loading: `data_per_gpu` bytes from storage to every GPU, posted at the step's start
//!   and needed by no operation of it (the loader prefetches the next step's batch: PyTorch
//!   `DataLoader` `prefetch_factor`), so it only competes for links.
//! - Checkpoint: the model's state, 2 bytes of bf16 weights and 12 of fp32 master weights,
//!   momentum and variance per parameter (`train::memory`), written once for the whole job with
//!   each replicated shard split over the data-parallel ranks (Megatron-LM distributed
//!   checkpointing, `--ckpt-fully-parallel-save`: megatron/core/dist_checkpointing/strategies/
//!   fully_parallel.py); posted at the step's start (asynchronous save, `--async-save`: the
//!   state is copied to host memory and written while training goes on).

use serde::Serialize;

use super::super::train::config::TrainConfig;
use super::super::train::memory::stage_params_per_gpu;
use crate::plan::reliability::CheckpointWrite;
use crate::workload::tier::{self, Room, Tier};
use fabricsim_core::error::InputError;
use fabricsim_core::message::MessageDag;
use fabricsim_core::topology::{HostId, Topology};
use fabricsim_core::units::Time;
use fabricsim_input::failure_rates;
use fabricsim_input::scenario::jobs::{self, JobStorage};
use fabricsim_input::scenario::{Design, Scenario};

/// State bytes per parameter a checkpoint writes: bf16 weights (2) and Adam's fp32 master
/// weights, momentum and variance (12), as `train::memory` counts them.
pub const STATE_BYTES_PER_PARAM: f64 = 14.0;

/// Queue pairs of the storage reads and writes (apart from the step's: ECMP entropy).
const QP_DATA: u16 = 64;
const QP_CHECKPOINT: u16 = 65;

/// The scenario's `[storage]` on `topo` (the cluster's last servers); `None` when it has
/// none.
pub fn tier(s: &Scenario, topo: &Topology) -> Result<Option<Tier>, InputError> {
    let Some(st) = jobs::storage(s)? else {
        return Ok(None);
    };
    let room = Room {
        end: topo.servers,
        keep: 1,
        who: "the jobs",
    };
    let (servers, nics) = tier::check(s, "storage", st, topo.rails_per_server(), room)?;
    Ok(Some(tier::place(topo, servers, nics, st.separate)))
}

/// Checkpoint bytes job GPU `g` writes: its stage's state per GPU over the data-parallel ranks
/// (Megatron rank layout, cp = 1: g = tp_i + tp (dp_i + dp pp_i)).
pub fn checkpoint_bytes(cfg: &TrainConfig, g: u64) -> u64 {
    let p = &cfg.par;
    let stage = (g / (p.tp * p.dp)) as usize;
    let (dense, expert) = stage_params_per_gpu(cfg, stage);
    (STATE_BYTES_PER_PARAM * (dense + expert) / p.dp as f64).round() as u64
}

/// The checkpoint of `cfg`'s job for the plan's ETTR: its whole state, STATE_BYTES_PER_PARAM per
/// parameter (ZeRO's 16 of mixed-precision Adam less the bf16 gradients, which a checkpoint does
/// not keep: Rajbhandari et al. 2020, 3.1), at the rate of `[storage]`'s ports, else at the
/// failure-rate table's storage bandwidth per GPU times the cluster's GPUs.
pub fn checkpoint_write(
    s: &Scenario,
    cfg: &TrainConfig,
    d: &Design,
    topo: &Topology,
) -> Result<CheckpointWrite, InputError> {
    let bytes = STATE_BYTES_PER_PARAM * cfg.model.params() as f64;
    Ok(match tier(s, topo)? {
        Some(t) => CheckpointWrite {
            bytes,
            bytes_per_s: t.bytes_per_s,
            storage_tier: true,
        },
        None => CheckpointWrite {
            bytes,
            bytes_per_s: failure_rates::table()?.job.storage_gbps_per_gpu
                * 1e9
                * d.spec.gpus as f64,
            storage_tier: false,
        },
    })
}

/// `plan` of `s` with its `[train]` job's checkpoint (`checkpoint_write`); unchanged without
/// a `[train]` section.
pub fn with_job_checkpoint(
    s: &Scenario,
    d: &Design,
    topo: &Topology,
    mut plan: crate::plan::Plan,
) -> Result<crate::plan::Plan, InputError> {
    if s.file.train.is_none() {
        return Ok(plan);
    }
    let place = crate::workload::placement::Placement::on_topology(topo, d.spec.gpus_per_node);
    let cfg = TrainConfig::resolve(s, d, place)?;
    let w = checkpoint_write(s, &cfg, d, topo)?;
    plan.reliability = plan.reliability.with_checkpoint(d, w);
    Ok(plan)
}

/// Where a job's storage messages sit in its DAG: the step's messages first (`..step`), then
/// the data loads (`step..data_end`), then the checkpoint writes (`data_end..`), so every
/// prefix ending at a boundary is a DAG of its own.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Layout {
    pub step: u32,
    pub data_end: u32,
}

/// Appends `st`'s storage traffic for the job of `cfg` to its step DAG (none on a separate
/// tier).
pub fn append(dag: &mut MessageDag, cfg: &TrainConfig, st: &JobStorage, tier: &Tier) -> Layout {
    let step = dag.messages.len() as u32;
    let ports = tier.hosts.len() as u64;
    let push = |dag: &mut MessageDag, src: HostId, dst: HostId, bytes: u64, qp: u16| {
        let id = dag.push(src, dst, bytes, Time::ZERO, &[]);
        dag.messages[id as usize].qp = qp;
    };
    let on_fabric = !tier.separate;
    for g in 0..cfg.gpus {
        if on_fabric && st.data_per_gpu > 0 {
            let sto = tier.hosts[(g % ports) as usize];
            push(dag, sto, cfg.place.host(g as u32), st.data_per_gpu, QP_DATA);
        }
    }
    let data_end = dag.messages.len() as u32;
    for g in 0..cfg.gpus {
        if on_fabric && st.checkpoint_every.is_some() {
            let sto = tier.hosts[(g % ports) as usize];
            push(
                dag,
                cfg.place.host(g as u32),
                sto,
                checkpoint_bytes(cfg, g),
                QP_CHECKPOINT,
            );
        }
    }
    Layout { step, data_end }
}

/// A job's storage figures, written beside its tenant figures.
#[derive(Clone, Debug, Serialize)]
pub struct StorageResult {
    pub job: String,
    /// "shared" or "separate".
    pub fabric: &'static str,
    pub data_bytes_per_step: u64,
    pub checkpoint_bytes: u64,
    pub checkpoint_every: Option<u64>,
    /// The storage ports' rate in all, GB/s.
    #[serde(rename = "tier_GBps")]
    pub tier_gbps: f64,
    /// The job alone without storage traffic, with its data loading, and with data loading and
    /// a checkpoint write (seconds); on a separate tier all three are the step alone.
    pub step_s: fabricsim_core::estimate::Estimate,
    pub with_data_s: fabricsim_core::estimate::Estimate,
    pub checkpoint_step_s: fabricsim_core::estimate::Estimate,
    /// When the last checkpoint byte is written (seconds from the step's start): simulated on
    /// a shared tier, the bytes over the tier's rate on a separate one.
    pub checkpoint_write_s: fabricsim_core::estimate::Estimate,
    /// The write outlasts the step, so it slows steps after it too (not simulated).
    pub write_outlasts_step: bool,
    /// Mean step over a checkpoint interval ((every - 1) steps with data loading and one
    /// checkpoint step) over the step without storage traffic.
    pub amortized_slowdown: fabricsim_core::estimate::Estimate,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::ettr;

    const JOB: &str = "[cluster]\ngpus = 256\ngpus_per_node = 8\n\
        [train]\nmodel = \"llama3-70b\"\ntp = 8\npp = 4\ndp = 8\nzero = 1\nmicro_batch = 1\n";

    fn planned(text: &str) -> (crate::plan::Plan, crate::plan::Plan, f64) {
        let s = Scenario::parse("t.toml", text).unwrap();
        let (d, t, p) = crate::plan::run(&s).unwrap();
        let place = crate::workload::placement::Placement::on_topology(&t, 8);
        let params = TrainConfig::resolve(&s, &d, place).map_or(0.0, |c| c.model.params() as f64);
        let with = with_job_checkpoint(&s, &d, &t, p.clone()).unwrap();
        (p, with, params)
    }

    #[test]
    fn a_known_models_checkpoint_is_its_state_over_the_storage_bandwidth() {
        let (table, with, params) = planned(JOB);
        let rates = failure_rates::table().unwrap();
        assert_eq!(table.reliability.checkpoint.write_s, rates.job.checkpoint_s);
        let r = &with.reliability;
        let w = r.checkpoint_write.as_ref().unwrap();
        // Llama 3 70B: 14 B per parameter; no [storage]: 0.122 GB/s per GPU x 256.
        assert_eq!(w.bytes, 14.0 * params);
        assert!(!w.storage_tier);
        assert!((w.bytes_per_s - rates.job.storage_gbps_per_gpu * 1e9 * 256.0).abs() < 1e-3);
        let write_s = 14.0 * params / (0.122e9 * 256.0);
        assert!(
            (r.checkpoint.write_s / write_s - 1.0).abs() < 1e-12,
            "{write_s}"
        );
        // Daly's interval and the ETTR at that write time; the failures are the plan's.
        let mtbf_s = r.job_mtbf_hours * 3600.0;
        assert_eq!(
            r.interruptions_per_day,
            table.reliability.interruptions_per_day
        );
        assert_eq!(
            r.checkpoint.interval_s,
            ettr::daly_interval_s(write_s, mtbf_s)
        );
        assert_eq!(r.ettr, r.checkpoint.ettr(mtbf_s));
        assert_ne!(r.ettr, table.reliability.ettr);
        // A [storage] tier of one server on 8 x 400G ports: 400 GB/s.
        let (_, tier, _) = planned(&format!("{JOB}[storage]\nservers = 1\nnics = 8\n"));
        let w = tier.reliability.checkpoint_write.unwrap();
        assert!(w.storage_tier);
        assert_eq!(w.bytes_per_s, 8.0 * 400e9 / 8.0);
        assert!((tier.reliability.checkpoint.write_s - 14.0 * params / 400e9).abs() < 1e-9);
        // Without a [train] job the table's write time stays.
        let (p, same, _) = planned("[cluster]\ngpus = 256\n");
        assert_eq!(p.reliability, same.reliability);
    }
}
