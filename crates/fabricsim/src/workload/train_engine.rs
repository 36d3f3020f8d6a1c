//! A training step calibrated on an engine: every collective of the step small enough for the
//! chosen engine (`--engine`: packet, flow, or auto, which takes the flow engine above a size)
//! is run at a few sizes ([`calibrate`]), fitted to alpha-beta, and the step recomputed with
//! the fits; the larger ones keep the closed form. The result names, per collective, where its
//! time came from.

use serde::Serialize;

use super::comm_model::{AlphaBetaModel, GroupShape};
use super::run_engine::{Cluster, fabric_packets, run_collective};
use super::train::calibrate::{Calibrated, calibrate};
use super::train::efficiency::Efficiency;
use super::train::loss_cost::step_with_loss;
use super::train::run::TrainRun;
use crate::error::Error;
use crate::setup::engine_choice::{EngineChoice, EngineKind};
use crate::workload::measure::SweepError;
use crate::workload::seeds;
use fabricsim_core::estimate::Estimate;
use fabricsim_mech::SimParams;

/// Fabric packets one packet run may hold (about 5 s of engine time: the 64-GPU all_reduce
/// sweep of `fabricsim collective`, ~4 M fabric packets, ran in 0.9 s on the dev profile;
/// estimate): larger collectives keep the closed form.
pub const MAX_PACKETS_PER_RUN: u64 = 20_000_000;

/// Messages one flow run may hold (the flow engine's cost grows with messages, not bytes: a
/// few seconds at 4 M messages; estimate): larger collectives keep the closed form.
pub const MAX_FLOW_MESSAGES_PER_RUN: u64 = 4_000_000;

/// Where one collective's time came from.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Provenance {
    pub name: &'static str,
    pub op: &'static str,
    pub ranks: u32,
    pub servers: u32,
    /// `fit` (alpha-beta fitted to engine runs) or `closed_form`.
    pub source: &'static str,
    /// The engine the fit came from (`packet` or `flow`), when it is one.
    pub engine: Option<&'static str>,
    /// Why the closed form stayed (too large to simulate, or no fit), when it did.
    pub reason: Option<String>,
    pub alpha_us: Option<f64>,
    #[serde(rename = "bandwidth_GBps")]
    pub bandwidth_gbps: Option<f64>,
    /// Largest relative error of the fit at the sizes it was fitted to.
    pub fit_max_rel_err: Option<f64>,
    pub fit_sizes: Option<usize>,
    /// Runs of the fit that met a retransmission timeout, and the stall per call they add to
    /// alpha when set apart from the line (`alpha_beta::fit_runs`).
    pub fit_timeout_runs: Option<usize>,
    pub stall_us: Option<f64>,
}

/// Upper bound of the fabric packets of one call: no collective moves more than twice its
/// buffer per rank (ring all-reduce: 2(n-1)/n S; nccl-tests).
fn packets_bound(ranks: u32, bytes: u64, mtu: u32) -> u64 {
    (2 * ranks as u64 * bytes).div_ceil(mtu.max(1) as u64)
}

/// Upper bound of the fabric messages of one call: ring and hierarchical collectives send at
/// most 2(n-1) messages per rank and channel, all-to-all n-1 per rank.
fn messages_bound(ranks: u32, channels: u32) -> u64 {
    2 * ranks as u64 * ranks as u64 * channels.max(1) as u64
}

/// The engine that runs a call of `ranks` x `bytes`, or why none may (too large).
fn engine_of_call(c: &Cluster, ranks: u32, bytes: u64, channels: u32) -> Result<EngineKind, Error> {
    let packets = packets_bound(ranks, bytes, c.params.mtu_bytes);
    match c.engine.resolve(packets) {
        EngineKind::Packet if packets > MAX_PACKETS_PER_RUN => Err(Error::Unsupported(format!(
            "too large to simulate packet by packet (up to {packets} packets per call > {MAX_PACKETS_PER_RUN})"
        ))),
        EngineKind::Flow if messages_bound(ranks, channels) > MAX_FLOW_MESSAGES_PER_RUN => {
            Err(Error::Unsupported(format!(
                "too large for a flow run (up to {} messages per call > {MAX_FLOW_MESSAGES_PER_RUN})",
                messages_bound(ranks, channels)
            )))
        }
        kind => Ok(kind),
    }
}

/// A calibrated step over the engine's seeds (`seeds`, `workload::seeds`): each seed's runs
/// fitted and the step recomputed with that seed's fits; each figure's mean and 95% interval.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct OverSeeds {
    pub seeds: Vec<u64>,
    pub step_time_s: Estimate,
    pub mfu: Estimate,
    pub tokens_per_s: Estimate,
}

/// Calibrates `tr`'s communication model on `engine` at each of `n_seeds` seeds (the first
/// `seed`, `None`: the design's; the others `seeds::derive`d from it) and recomputes its step:
/// the report and provenance are the first seed's, the spread over all of them (more than one)
/// is [`OverSeeds`].
pub fn calibrate_on_engine(
    tr: TrainRun,
    engine: EngineChoice,
    seed: Option<u64>,
    n_seeds: u32,
) -> Result<(TrainRun, Vec<Provenance>, Option<OverSeeds>), Error> {
    let TrainRun {
        design,
        topology,
        config,
        mut comm,
        loss,
        report,
        ..
    } = tr;
    let mut cluster = Cluster::of(design, topology, engine)?;
    if let Some(s) = seed {
        cluster.params.seed = s;
    }
    let channels = crate::workload::collective::Channels::of_design(&cluster.design);
    let mut small = report.clone();
    small.collectives.retain(|c| {
        engine_of_call(&cluster, c.ranks, c.bytes_per_call, channels.most(c.ranks)).is_ok()
    });
    let seed_list = seeds::derive(cluster.params.seed, n_seeds.max(1));
    let base = comm.clone();
    // The step's collectives fitted to the engine's runs at `seed`: the model and its fits.
    let fit_at = |seed: u64| -> Result<(AlphaBetaModel, Vec<Calibrated>), Error> {
        let params = SimParams {
            seed,
            ..cluster.params.clone()
        };
        let mut model = base.clone();
        let fits = calibrate(
            &mut model,
            &small,
            &config.place,
            cluster.nvlink(),
            channels,
            |dag| {
                let packets = fabric_packets(&params, dag);
                let kind = cluster.engine_for(dag);
                if kind == EngineKind::Packet && packets > MAX_PACKETS_PER_RUN {
                    return Err(Error::Unsupported(format!("{packets} packets")));
                }
                run_collective(kind, &cluster.topology, &params, dag, None)
            },
        )
        .map_err(|e| match e {
            SweepError::Input(e) => Error::Input(e),
            SweepError::Run { bytes, error } => Error::Run(format!(
                "engine run of a {bytes}-byte collective failed: {error}"
            )),
        })?;
        Ok((model, fits))
    };
    let eff = Efficiency::h200(&cluster.design.catalog);
    let setup = loss
        .map(|l| l.setup(&cluster.design, &cluster.topology))
        .transpose()?;
    // The step on a seed's fits, with the job's loss in expectation over them.
    let step_on =
        |m: &AlphaBetaModel| step_with_loss(&config, &eff, m, setup, &cluster.topology, channels);
    let (fitted, fits) = fit_at(seed_list[0])?;
    comm = fitted;
    let (report, step_loss) = step_on(&comm);
    let over_seeds = if seed_list.len() > 1 {
        let mut steps = vec![report.clone()];
        for &s in &seed_list[1..] {
            steps.push(step_on(&fit_at(s)?.0).0);
        }
        let est = |what: &str, f: &dyn Fn(&super::train::step::StepReport) -> f64| {
            let v: Vec<f64> = steps.iter().map(f).collect();
            seeds::estimate(what, &v).map_err(Error::Run)
        };
        Some(OverSeeds {
            seeds: seed_list.clone(),
            step_time_s: est("the step time", &|r| r.step_time_s)?,
            mfu: est("the MFU", &|r| r.mfu)?,
            tokens_per_s: est("tokens/s", &|r| r.tokens_per_s)?,
        })
    } else {
        None
    };
    let mut out: Vec<Provenance> = Vec::new();
    for c in &report.collectives {
        let group = GroupShape {
            ranks: c.ranks,
            servers: c.servers,
        };
        if out.iter().any(|p| p.name == c.name) {
            continue;
        }
        let fit = fits
            .iter()
            .find(|f| f.op.name() == c.op && f.group == group);
        let mut p = Provenance {
            name: c.name,
            op: c.op,
            ranks: c.ranks,
            servers: c.servers,
            source: "closed_form",
            engine: None,
            reason: None,
            alpha_us: None,
            bandwidth_gbps: None,
            fit_max_rel_err: None,
            fit_sizes: None,
            fit_timeout_runs: None,
            stall_us: None,
        };
        match fit.map(|f| &f.fit) {
            Some(Ok(f)) => {
                p.source = "fit";
                p.engine =
                    engine_of_call(&cluster, c.ranks, c.bytes_per_call, channels.most(c.ranks))
                        .ok()
                        .map(EngineKind::name);
                p.alpha_us = Some(f.model.alpha_s * 1e6);
                p.bandwidth_gbps = Some(f.model.bytes_per_s / 1e9);
                p.fit_max_rel_err = Some(f.max_rel_err);
                p.fit_sizes = Some(f.points);
                p.fit_timeout_runs = Some(f.stalled_runs);
                p.stall_us = f.set_apart.then_some(f.stall_s * 1e6);
            }
            Some(Err(e)) => p.reason = Some(format!("no fit: {e}")),
            None => {
                p.reason =
                    engine_of_call(&cluster, c.ranks, c.bytes_per_call, channels.most(c.ranks))
                        .err()
                        .map(|e| e.to_string())
            }
        }
        out.push(p);
    }
    let tr = TrainRun {
        design: cluster.design,
        topology: cluster.topology,
        config,
        comm,
        loss,
        report,
        step_loss,
    };
    Ok((tr, out, over_seeds))
}

/// The text line of [`OverSeeds`].
pub fn over_seeds_text(o: &OverSeeds) -> String {
    let e = |x: &Estimate, scale: f64, unit: &str| {
        format!(
            "{:.3}{unit} [{:.3}, {:.3}]",
            x.mean * scale,
            x.lo * scale,
            x.hi * scale
        )
    };
    format!(
        "over {} engine seeds (mean [95% interval]): step time {}, MFU {}, tokens/s {}\n",
        o.seeds.len(),
        e(&o.step_time_s, 1e3, " ms"),
        e(&o.mfu, 100.0, "%"),
        e(&o.tokens_per_s, 1.0, "")
    )
}

/// The provenance lines of the text report.
pub fn to_text(rows: &[Provenance]) -> String {
    let mut s = String::from("communication times by collective:\n");
    for p in rows {
        let plural = if p.servers == 1 { "" } else { "s" };
        let what = format!(
            "{} on {} GPUs in {} server{plural}",
            p.op, p.ranks, p.servers
        );
        match (p.source, p.alpha_us, p.bandwidth_gbps, p.fit_max_rel_err) {
            ("fit", Some(a), Some(b), Some(e)) => {
                s.push_str(&format!(
                    "  {:<26} fitted to {} runs ({what}): alpha {a:.2} us, {b:.1} GB/s, max error {:.1}% at {} sizes",
                    p.name,
                    p.engine.unwrap_or("engine"),
                    100.0 * e,
                    p.fit_sizes.unwrap_or(0)
                ));
                match (p.fit_timeout_runs, p.stall_us) {
                    (Some(n), Some(st)) if n > 0 => s.push_str(&format!(
                        "; {n} runs with a retransmission timeout set apart, {st:.1} us per call in alpha"
                    )),
                    (Some(n), None) if n > 0 => s.push_str(&format!(
                        "; {n} runs with a retransmission timeout in the fit (too few without)"
                    )),
                    _ => {}
                }
                s.push('\n');
            }
            _ => s.push_str(&format!(
                "  {:<26} closed form ({what}): {}\n",
                p.name,
                p.reason.as_deref().unwrap_or("")
            )),
        }
    }
    s
}
