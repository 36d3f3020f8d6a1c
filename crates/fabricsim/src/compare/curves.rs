//! Bus bandwidth curves measured on an engine (`engine` choice; packet unless the scenario says): all-reduce and all-to-all over every GPU
//! of the cluster at a few sizes, each size one engine run of the collective's message DAG
//! (the algorithm the step model uses for that group: hierarchical NVLink + rails for
//! all-reduce, direct for all-to-all), with the compared fabric's engine parameters. busbw is
//! nccl-tests' (`workload::busbw`).

use serde::Serialize;

use super::engine::{CHANNELS, makespan, params};
use super::variant::Variant;
use crate::error::Error;
use crate::workload::busbw::busbw_gbps;
use crate::workload::collective::{CollectiveSpec, Comm, Op};
use crate::workload::comm_model::GroupShape;
use crate::workload::measure::{SweepError, Timed, measure};
use crate::workload::placement::Placement;
use crate::workload::sweep::round;
use crate::workload::train::calibrate::algo_for;
use fabricsim_core::topology::Topology;
use fabricsim_core::units::BitRate;
use fabricsim_input::scenario::Design;

/// Bus bandwidth of one collective over the whole cluster at several sizes.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct BusbwCurve {
    pub op: &'static str,
    pub algorithm: &'static str,
    pub ranks: u32,
    pub servers: u32,
    /// (size in bytes as nccl-tests rounds it, busbw in GB/s).
    pub points: Vec<(u64, f64)>,
    /// Summed over the curve's runs (loss shows here).
    pub retransmitted_packets: u64,
    pub timeouts: u64,
    /// The engine(s) that ran the sizes: packet, flow, or packet+flow.
    pub engine: String,
    pub source: String,
}

/// Sizes of the curves: 64 KiB, 1 MiB and 8 MiB per rank (a 256-GPU all-to-all at 8 MiB is
/// half a million packets, about a second of packet simulation).
pub const SIZES: [u64; 3] = [64 << 10, 1 << 20, 8 << 20];

/// All-reduce and all-to-all over all GPUs of `topo` with `v`'s parameters.
pub fn measured(
    design: &Design,
    topo: &Topology,
    v: &Variant,
    seed: u64,
) -> Result<Vec<BusbwCurve>, Error> {
    let p = params(v, design, seed)?;
    let place = Placement::on_topology(topo, design.spec.gpus_per_node);
    let comm = Comm::world(&place);
    let nvlink = BitRate((design.gpu.nvlink_one_way_bytes_per_s() * 8.0) as u64);
    let ranks = comm.len() as u32;
    let servers = topo.servers;
    [Op::AllReduce, Op::AllToAll]
        .into_iter()
        .map(|op| {
            let algo = algo_for(op, GroupShape { ranks, servers });
            let spec = CollectiveSpec {
                algo,
                ..CollectiveSpec::with_defaults(op, 0, CHANNELS)
            };
            let sizes: Vec<_> = SIZES.iter().map(|&b| round(op, ranks, b)).collect();
            let (mut retx, mut timeouts, mut kinds) = (0, 0, Vec::new());
            let out = measure(&spec, &comm, nvlink, &sizes, |dag| {
                let (t, c, kind) = makespan(topo, &p, dag, v.engine)?;
                if !kinds.contains(&kind.name()) {
                    kinds.push(kind.name());
                }
                retx += c.retransmitted_packets;
                timeouts += c.timeouts;
                Ok::<_, Error>(Timed {
                    time: t,
                    timeouts: c.timeouts,
                })
            })
            .map_err(|e| match e {
                SweepError::Input(e) => Error::Input(e),
                SweepError::Run { bytes, error } => {
                    Error::Run(format!("{} of {bytes} B on the packet engine: {error}", op.name()))
                }
            })?;
            Ok(BusbwCurve {
                op: op.name(),
                algorithm: algo.name(),
                ranks,
                servers,
                points: out
                    .points
                    .iter()
                    .map(|&(b, secs)| (b, busbw_gbps(op, ranks, b, secs)))
                    .collect(),
                retransmitted_packets: retx,
                timeouts,
                source: format!(
                    "simulation: {} engine, {} {} over {ranks} GPUs on {servers} servers, {CHANNELS} channels, one run per size",
                    kinds.join("+"),
                    op.name(),
                    algo.name()
                ),
                engine: kinds.join("+"),
            })
        })
        .collect()
}
