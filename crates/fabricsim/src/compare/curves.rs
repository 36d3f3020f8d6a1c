//! Bus bandwidth curves measured on an engine (`engine` choice; packet unless the scenario says): all-reduce and all-to-all over every GPU
//! of the cluster at a few sizes, each size one engine run of the collective's message DAG
//! (the algorithm the step model uses for that group: hierarchical NVLink + rails for
//! all-reduce, direct for all-to-all), with the compared fabric's engine parameters. busbw is
//! nccl-tests' (`workload::busbw`).

use serde::Serialize;

use super::engine::{Span, makespan, params};
use super::seeds::single;
use super::variant::Variant;
use crate::error::Error;
use crate::setup::engine_choice::EngineChoice;
use crate::workload::busbw::busbw_gbps;
use crate::workload::collective::{CollectiveSpec, Comm, Op};
use crate::workload::comm_model::GroupShape;
use crate::workload::comm_model::{AlphaBetaModel, CommModel};
use crate::workload::link_params::FabricParams;
use crate::workload::measure::{SweepError, Timed, measure};
use crate::workload::placement::Placement;
use crate::workload::sweep::round;
use crate::workload::train::calibrate::algo_for;
use fabricsim_core::estimate::Estimate;
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
    /// (size in bytes as nccl-tests rounds it, busbw in GB/s over the seeds).
    pub points: Vec<(u64, Estimate)>,
    /// Summed over the curve's runs and seeds (loss shows here).
    pub retransmitted_packets: u64,
    pub timeouts: u64,
    /// The engine(s) that ran the sizes: packet, flow, or packet+flow.
    pub engine: String,
    pub source: String,
}

/// Sizes of the curves: 64 KiB, 1 MiB and 8 MiB per rank (a 256-GPU all-to-all at 8 MiB is
/// half a million packets, about a second of packet simulation).
pub const SIZES: [u64; 3] = [64 << 10, 1 << 20, 8 << 20];

/// Most (sender, receiver) pairs of an all-to-all the curves run on the packet engine (a
/// 256-GPU one, the built-in comparison's) and on the flow engine (a 512-GPU one) when the
/// scenario's engine is `auto`; past them the engine's runs outgrow a comparison's time (a
/// 1,024-GPU one holds a million messages) and the curve is the closed form.
pub const PACKET_PAIRS: u64 = 256 * 255;
pub const FLOW_PAIRS: u64 = 512 * 511;

/// NCCL channels of the curves' collectives: 2 connections per peer (an ESTIMATE), not NCCL's
/// default 2 per NIC (16 on 8 NICs): a 256-GPU ring at 16 channels is 2 M messages a run, and
/// the comparison's curves took 10x the packet-engine time (`docs/where-fabrics-part.md`).
pub const CHANNELS: u32 = 2;

/// Most GPUs a whole-cluster curve runs on an engine under `auto`: a 16,384-GPU all-reduce's
/// DAG at NCCL's 16 channels outgrew 8 GB (`compare --gpus 16384`), so past 4,096 GPUs the
/// curves are the closed form, as their source says.
pub const MAX_ENGINE_RANKS: u32 = 4096;

/// The engine that runs `op` over `ranks` GPUs (`None`: the closed form): the scenario's choice,
/// except that `auto` moves a large all-to-all to the flow engine, then to the closed form.
pub fn engine_for(op: Op, ranks: u32, choice: EngineChoice) -> Option<EngineChoice> {
    let pairs = ranks as u64 * (ranks as u64).saturating_sub(1);
    match (op, choice) {
        (_, EngineChoice::Auto) if ranks > MAX_ENGINE_RANKS => None,
        (Op::AllToAll, EngineChoice::Auto) if pairs > FLOW_PAIRS => None,
        (Op::AllToAll, EngineChoice::Auto) if pairs > PACKET_PAIRS => Some(EngineChoice::Flow),
        _ => Some(choice),
    }
}

/// The curve of `op` in closed form: alpha-beta of `algo` on the profile's link parameters
/// (`workload::comm_model`), busbw as nccl-tests computes it.
fn closed_form(
    design: &Design,
    op: Op,
    algo: crate::workload::collective::Algo,
    (ranks, servers): (u32, u32),
    sizes: &[crate::workload::sweep::SweepSize],
) -> BusbwCurve {
    let model = AlphaBetaModel::new(FabricParams::of(design));
    let shape = GroupShape { ranks, servers };
    BusbwCurve {
        op: op.name(),
        algorithm: algo.name(),
        ranks,
        servers,
        points: sizes
            .iter()
            .map(|s| {
                let secs = model.time_s(op, s.bytes, shape);
                (s.bytes, single(busbw_gbps(op, ranks, s.bytes, secs)))
            })
            .collect(),
        retransmitted_packets: 0,
        timeouts: 0,
        engine: "closed form".into(),
        source: format!(
            "closed form: alpha-beta of {} {} over {ranks} GPUs on {servers} servers on the profile's link parameters ({} sender-receiver pairs, {ranks} GPUs: past what an engine run of the comparison holds)",
            op.name(),
            algo.name(),
            ranks as u64 * (ranks as u64 - 1)
        ),
    }
}

/// All-reduce and all-to-all over all GPUs of `topo` with `v`'s parameters under `seed`, and
/// whether any of their runs drew from the seed's random streams.
pub fn measured(
    design: &Design,
    topo: &Topology,
    v: &Variant,
    seed: u64,
) -> Result<(Vec<BusbwCurve>, bool), Error> {
    let p = params(v, design, seed)?;
    let place = Placement::on_topology(topo, design.spec.gpus_per_node);
    let comm = Comm::world(&place);
    let nvlink = BitRate((design.gpu.nvlink_one_way_bytes_per_s() * 8.0) as u64);
    let ranks = comm.len() as u32;
    let servers = topo.servers;
    let mut drew = false;
    let curves = [Op::AllReduce, Op::AllToAll]
        .into_iter()
        .map(|op| {
            let algo = algo_for(op, GroupShape { ranks, servers });
            let spec = CollectiveSpec {
                algo,
                ..CollectiveSpec::with_defaults(op, 0, CHANNELS)
            };
            let sizes: Vec<_> = SIZES.iter().map(|&b| round(op, ranks, b)).collect();
            let Some(engine) = engine_for(op, ranks, v.engine) else {
                return Ok(closed_form(design, op, algo, (ranks, servers), &sizes));
            };
            let (mut retx, mut timeouts, mut kinds) = (0, 0, Vec::new());
            let out = measure(&spec, &comm, nvlink, &sizes, |dag| {
                let Span {
                    time: t,
                    counters: c,
                    kind,
                    drew_random,
                } = makespan(topo, &p, dag, engine)?;
                drew |= drew_random;
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
                    .map(|&(b, secs)| (b, single(busbw_gbps(op, ranks, b, secs))))
                    .collect(),
                retransmitted_packets: retx,
                timeouts,
                source: format!(
                    "simulation: {} engine, {} {} over {ranks} GPUs on {servers} servers, {CHANNELS} channels, one run per size and seed",
                    kinds.join("+"),
                    op.name(),
                    algo.name()
                ),
                engine: kinds.join("+"),
            })
        })
        .collect::<Result<Vec<_>, Error>>()?;
    Ok((curves, drew))
}

/// The curves of every seed (each from [`measured`] with that seed) as one set: each point's
/// busbw over the seeds, the loss counters summed.
pub fn over_seeds(runs: &[Vec<BusbwCurve>]) -> Result<Vec<BusbwCurve>, String> {
    let Some(first) = runs.first() else {
        return Ok(Vec::new());
    };
    first
        .iter()
        .enumerate()
        .map(|(k, c)| {
            let seeds: Vec<&BusbwCurve> = runs.iter().filter_map(|r| r.get(k)).collect();
            let points = c
                .points
                .iter()
                .enumerate()
                .map(|(i, &(bytes, _))| {
                    let xs: Vec<f64> = seeds
                        .iter()
                        .filter_map(|s| s.points.get(i))
                        .map(|p| p.1.mean)
                        .collect();
                    Ok((
                        bytes,
                        super::seeds::estimate(&format!("{} busbw at {bytes} B", c.op), &xs)?,
                    ))
                })
                .collect::<Result<Vec<_>, String>>()?;
            let mut engines: Vec<&str> = Vec::new();
            for e in seeds.iter().flat_map(|s| s.engine.split('+')) {
                if !engines.contains(&e) {
                    engines.push(e);
                }
            }
            Ok(BusbwCurve {
                points,
                retransmitted_packets: seeds.iter().map(|s| s.retransmitted_packets).sum(),
                timeouts: seeds.iter().map(|s| s.timeouts).sum(),
                engine: engines.join("+"),
                source: format!("{}, {} seed(s)", c.source, seeds.len()),
                ..c.clone()
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `auto` keeps the built-in 256-GPU curves on the packet engine, moves a 512-GPU
    /// all-to-all to the flow engine and a 1,024-GPU one to the closed form, and every curve
    /// past [`MAX_ENGINE_RANKS`] GPUs to the closed form; an engine the scenario names is left
    /// as chosen.
    #[test]
    fn auto_moves_large_all_to_alls_off_the_packet_engine() {
        use EngineChoice::{Auto, Flow, Packet};
        assert_eq!(engine_for(Op::AllToAll, 256, Auto), Some(Auto));
        assert_eq!(engine_for(Op::AllToAll, 512, Auto), Some(Flow));
        assert_eq!(engine_for(Op::AllToAll, 1024, Auto), None);
        assert_eq!(
            engine_for(Op::AllReduce, MAX_ENGINE_RANKS, Auto),
            Some(Auto)
        );
        assert_eq!(engine_for(Op::AllReduce, MAX_ENGINE_RANKS + 1, Auto), None);
        assert_eq!(engine_for(Op::AllReduce, 16384, Packet), Some(Packet));
        assert_eq!(engine_for(Op::AllToAll, 1024, Packet), Some(Packet));
    }
}
