//! The jobs run alone and together on the scenario's engine, per seed: job `i` alone (its
//! placement, the others absent), every pair (i, j) when there are more than two jobs, and all
//! together. A job's time is its last message's completion at the sender (its step or its
//! loop's end; all jobs start at time zero); its slowdown with `j` is its time with `j` over
//! its time alone, and together over alone with every job present. Each figure is a
//! `core::estimate::Estimate` over the seeds (the engine's seed, and the servers of `random`
//! placements); every run of a scenario uses the one engine `auto` picks for all jobs together,
//! so the ratios compare runs of one engine.

use std::ops::Range;

use serde::Serialize;

use super::Tenants;
use super::merge::merge;
use crate::error::Error;
use crate::setup::engine_choice::{self, EngineKind};
use crate::workload::seeds;
use fabricsim_core::estimate::Estimate;
use fabricsim_core::message::MessageDag;
use fabricsim_core::topology::Topology;
use fabricsim_mech::{Faults, SimParams, Status};
use fabricsim_packet::RunOptions;

/// One engine run: which jobs it holds.
#[derive(Clone, Debug)]
struct Run {
    seed: usize,
    jobs: Vec<usize>,
}

/// Each job's figures.
#[derive(Clone, Debug, Serialize)]
pub struct JobResult {
    pub name: String,
    pub kind: &'static str,
    pub gpus: u64,
    pub placement: &'static str,
    pub class: Option<u8>,
    /// Servers of the first seed's placement, and the leaves they touch.
    pub servers: Vec<u32>,
    pub leaves: Vec<u32>,
    /// Seconds alone and with every job present.
    pub alone_s: Estimate,
    pub together_s: Estimate,
    /// together / alone.
    pub slowdown: Estimate,
}

/// What `fabricsim tenants` measured.
#[derive(Clone, Debug, Serialize)]
pub struct TenantsResult {
    pub engine: &'static str,
    pub seeds: Vec<u64>,
    pub jobs: Vec<JobResult>,
    /// `matrix[i][j]`: job i's time with job j present over its time alone (`None` for i = j).
    pub matrix: Vec<Vec<Option<Estimate>>>,
}

/// The runs of one seed: each job alone, each pair (more than two jobs), all together.
fn runs_of(seed: usize, n: usize) -> Vec<Run> {
    let mut runs: Vec<Run> = (0..n).map(|i| Run { seed, jobs: vec![i] }).collect();
    if n > 2 {
        for i in 0..n {
            for j in i + 1..n {
                runs.push(Run {
                    seed,
                    jobs: vec![i, j],
                });
            }
        }
    }
    if n > 1 {
        runs.push(Run {
            seed,
            jobs: (0..n).collect(),
        });
    }
    runs
}

/// Seconds from time zero to the last completion of the messages in `range`.
fn end_s(r: &fabricsim_mech::RunResult, range: &Range<u32>) -> f64 {
    let end = r.messages[range.start as usize..range.end as usize]
        .iter()
        .filter_map(|m| m.finish_ps)
        .max()
        .unwrap_or(0);
    end as f64 * 1e-12
}

/// Runs `jobs` of one seed's DAGs together; their times in the order given.
fn run_one(
    fabric: (&Topology, &SimParams),
    kind: EngineKind,
    seed: u64,
    dags: &[(MessageDag, Option<u8>)],
    jobs: &[usize],
) -> Result<Vec<f64>, Error> {
    let m = merge(jobs.iter().map(|&i| (&dags[i].0, dags[i].1)));
    let (topo, params) = fabric;
    let params = SimParams {
        seed,
        ..params.clone()
    };
    let opts = RunOptions {
        until: None,
        progress: None,
    };
    let r = engine_choice::run(kind, topo, &params, &m.dag, &Faults::default(), opts)?;
    if r.sim.status != Status::Complete || r.messages.len() != m.dag.messages.len() {
        return Err(Error::Run(format!(
            "the jobs did not complete ({:?}: {} of {} messages done)",
            r.sim.status, r.summary.messages_completed, r.summary.messages_total
        )));
    }
    Ok(m.ranges.iter().map(|range| end_s(&r, range)).collect())
}

/// Runs every job alone, in pairs and together on every seed; `progress(done, total)` after
/// each run. `Ok(None)` after a stop request.
pub fn run(
    t: &Tenants,
    progress: &(dyn Fn(usize, usize) + Sync),
) -> Result<Option<TenantsResult>, Error> {
    let n = t.tenants.len();
    let placed: Vec<_> = t.seeds.iter().map(|&s| t.place(s)).collect::<Result<_, _>>()?;
    let all = merge(placed[0].dags.iter().map(|d| (d, None)));
    let kind = t.cluster.engine_for(&all.dag);
    let runs: Vec<Run> = (0..t.seeds.len()).flat_map(|s| runs_of(s, n)).collect();
    let done = std::sync::atomic::AtomicUsize::new(0);
    let classes: Vec<Option<u8>> = t.tenants.iter().map(|tn| tn.job.class).collect();
    let dags: Vec<Vec<(MessageDag, Option<u8>)>> = placed
        .iter()
        .map(|p| p.dags.iter().cloned().zip(classes.iter().copied()).collect())
        .collect();
    let fabric = (&t.cluster.topology, &t.cluster.params);
    let seed_values = &t.seeds;
    let out = seeds::run_jobs(&runs, seeds::threads(), |r| {
        let res = run_one(fabric, kind, seed_values[r.seed], &dags[r.seed], &r.jobs);
        let k = done.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
        progress(k, runs.len());
        res
    });
    if out.iter().any(Option::is_none) {
        return Ok(None);
    }
    // times[seed][run within the seed]: per job of the run.
    let mut per_seed: Vec<Vec<(Vec<usize>, Vec<f64>)>> = vec![Vec::new(); t.seeds.len()];
    for (r, res) in runs.iter().zip(out.into_iter().flatten()) {
        per_seed[r.seed].push((r.jobs.clone(), res?));
    }
    // Job i's time in the run holding exactly `jobs`, per seed.
    let time_in = |i: usize, jobs: &[usize]| -> Vec<f64> {
        per_seed
            .iter()
            .map(|runs| {
                let (js, ts) = runs
                    .iter()
                    .find(|(js, _)| js == jobs)
                    .expect("every run of the seed was made");
                ts[js.iter().position(|&j| j == i).expect("the run holds job i")]
            })
            .collect()
    };
    let est = |what: &str, v: &[f64]| seeds::estimate(what, v).map_err(Error::Run);
    let ratio = |a: &[f64], b: &[f64]| -> Vec<f64> { a.iter().zip(b).map(|(x, y)| x / y).collect() };
    let everyone: Vec<usize> = (0..n).collect();
    let mut jobs = Vec::with_capacity(n);
    let mut matrix = vec![vec![None; n]; n];
    for (i, tn) in t.tenants.iter().enumerate() {
        let alone = time_in(i, &[i]);
        let together = if n > 1 { time_in(i, &everyone) } else { alone.clone() };
        for (j, cell) in matrix[i].iter_mut().enumerate() {
            if i != j {
                let pair = [i.min(j), i.max(j)];
                *cell = Some(est("a slowdown", &ratio(&time_in(i, &pair), &alone))?);
            }
        }
        let servers = placed[0].servers[i].clone();
        jobs.push(JobResult {
            name: tn.job.name.clone(),
            kind: tn.job.work.kind(),
            gpus: tn.job.gpus,
            placement: tn.job.placement.name(),
            class: tn.job.class,
            leaves: super::placement::leaves_touched(&t.leaves, &servers),
            servers,
            alone_s: est("a job's time alone", &alone)?,
            together_s: est("a job's time together", &together)?,
            slowdown: est("a slowdown", &ratio(&together, &alone))?,
        });
    }
    Ok(Some(TenantsResult {
        engine: kind.name(),
        seeds: t.seeds.clone(),
        jobs,
        matrix,
    }))
}
