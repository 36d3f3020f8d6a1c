//! The jobs run alone and together on the scenario's engine, per seed: job `i` alone (its
//! placement, the others absent), every pair (i, j) when there are more than two jobs, and all
//! together. A job's time is its last message's completion at the sender (its step or its
//! loop's end; all jobs start at time zero); a serving job's is its TTFT p99, its decodes run
//! after each engine run from when that run landed its KV caches (`ServeStage::finish`); its
//! slowdown with `j` is its time with `j` over its time alone, and together over alone with
//! every job present. Each figure is a
//! `core::estimate::Estimate` over the seeds (the engine's seed, and the servers of `random`
//! placements); every run of a scenario uses the one engine `auto` picks for all jobs together,
//! so the ratios compare runs of one engine.

use std::ops::Range;

use serde::Serialize;

use super::merge::merge;
use super::storage::{Layout, StorageResult, checkpoint_bytes};
use super::{ServeStage, Tenants, Work};
use crate::error::Error;
use crate::setup::engine_choice::{self, EngineKind};
use crate::workload::seeds;
use crate::workload::serve::report::Metrics;
use fabricsim_core::estimate::Estimate;
use fabricsim_core::message::MessageDag;
use fabricsim_core::topology::Topology;
use fabricsim_input::scenario::jobs::JobStorage;
use fabricsim_mech::results::MessageResult;
use fabricsim_mech::{Faults, SimParams, Status};
use fabricsim_packet::RunOptions;

/// How much of a job's DAG a run takes (`storage::Layout`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Part {
    /// The step and its storage traffic: the job as it runs.
    Full,
    /// The step alone.
    Step,
    /// The step and its data loading.
    WithData,
}

/// One engine run: which jobs it holds, and how much of each.
#[derive(Clone, Debug)]
struct Run {
    seed: usize,
    jobs: Vec<(usize, Part)>,
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
    /// The training jobs with storage traffic (`[jobs.storage]`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub storage: Vec<StorageResult>,
    /// The serving jobs' latencies alone and with every job present.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub serving: Vec<ServingResult>,
}

/// The latency figures a serving job reports beside the others' steps.
pub const SERVING_FIGURES: [&str; 5] = [
    "ttft_p50",
    "ttft_p99",
    "tpot_p50",
    "tpot_p99",
    "kv_transfer_p99",
];

/// A serving job's [`SERVING_FIGURES`] (seconds) alone and together.
#[derive(Clone, Debug, Serialize)]
pub struct ServingResult {
    pub job: String,
    pub figures: Vec<ServingFigure>,
}

#[derive(Clone, Debug, Serialize)]
pub struct ServingFigure {
    pub name: &'static str,
    pub alone_s: Estimate,
    pub together_s: Estimate,
}

/// One job's end in one run: its step's (a serving job's TTFT p99), its checkpoint's, and a
/// serving job's figures.
#[derive(Clone, Debug)]
struct JobEnd {
    step: f64,
    ckpt: f64,
    serve: Option<Metrics>,
}

/// The runs of one seed: each job alone, each pair (more than two jobs), all together, and
/// a job with storage traffic on the shared fabric without it and with its data loading only.
fn runs_of(seed: usize, n: usize, storage: &[bool]) -> Vec<Run> {
    let run = |jobs: Vec<(usize, Part)>| Run { seed, jobs };
    let mut runs: Vec<Run> = (0..n).map(|i| run(vec![(i, Part::Full)])).collect();
    if n > 2 {
        for i in 0..n {
            for j in i + 1..n {
                runs.push(run(vec![(i, Part::Full), (j, Part::Full)]));
            }
        }
    }
    if n > 1 {
        runs.push(run((0..n).map(|i| (i, Part::Full)).collect()));
    }
    for i in (0..n).filter(|&i| storage[i]) {
        runs.push(run(vec![(i, Part::Step)]));
        runs.push(run(vec![(i, Part::WithData)]));
    }
    runs
}

/// Seconds from time zero to the last completion of the messages in `range`.
fn end_s(r: &fabricsim_mech::RunResult, range: Range<u32>) -> f64 {
    let end = r.messages[range.start as usize..range.end as usize]
        .iter()
        .filter_map(|m| m.finish_ps)
        .max()
        .unwrap_or(0);
    end as f64 * 1e-12
}

/// One seed's DAG of a job, with its layout and class (and a serving job's decodes to run).
struct JobDag {
    dag: MessageDag,
    layout: Layout,
    class: Option<u8>,
    serve: Option<ServeStage>,
}

/// Runs `jobs` of one seed's DAGs together: per job, its step's and checkpoint's ends and a
/// serving job's messages (its KV transfers as run).
fn run_one(
    fabric: (&Topology, &SimParams),
    kind: EngineKind,
    seed: u64,
    dags: &[JobDag],
    jobs: &[(usize, Part)],
) -> Result<Vec<(f64, f64, Option<Vec<MessageResult>>)>, Error> {
    let m = merge(jobs.iter().map(|&(i, part)| {
        let d = &dags[i];
        let n = match part {
            Part::Full => d.dag.messages.len(),
            Part::Step => d.layout.step as usize,
            Part::WithData => d.layout.data_end as usize,
        };
        (&d.dag, n, d.class)
    }));
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
    Ok(jobs
        .iter()
        .zip(&m.ranges)
        .map(|(&(i, _), range)| {
            let l = dags[i].layout;
            let step = end_s(&r, range.start..range.start + l.step);
            let ckpt = end_s(&r, (range.start + l.data_end).min(range.end)..range.end);
            let own = dags[i]
                .serve
                .as_ref()
                .map(|_| r.messages[range.start as usize..range.end as usize].to_vec());
            (step, ckpt, own)
        })
        .collect())
}

/// A job's ends in a run of `seed`: a serving job's decodes run from when its caches landed.
fn job_end(
    t: &Tenants,
    seed: u64,
    dag: &JobDag,
    work: &Work,
    (step, ckpt, own): (f64, f64, Option<Vec<MessageResult>>),
) -> Result<JobEnd, Error> {
    let (Some(stage), Work::Serve(job), Some(own)) = (&dag.serve, work, own) else {
        return Ok(JobEnd {
            step,
            ckpt,
            serve: None,
        });
    };
    let served = stage.finish(job, &t.cluster, seed, &own)?;
    let metrics = Metrics::of(job, &served);
    Ok(JobEnd {
        step: metrics.get("ttft_p99"),
        ckpt,
        serve: Some(metrics),
    })
}

/// Runs every job alone, in pairs and together on every seed; `progress(done, total)` after
/// each run. `Ok(None)` after a stop request.
pub fn run(
    t: &Tenants,
    progress: &(dyn Fn(usize, usize) + Sync),
) -> Result<Option<TenantsResult>, Error> {
    let n = t.tenants.len();
    let placed: Vec<_> = t
        .seeds
        .iter()
        .map(|&s| t.place(s))
        .collect::<Result<_, _>>()?;
    let first = &placed[0];
    let first_servers = first.servers.clone();
    let all = merge(first.dags.iter().map(|d| (d, d.messages.len(), None)));
    let kind = t.cluster.engine_for(&all.dag);
    // Storage traffic on the fabric: runs without it and with its data loading only.
    let on_fabric: Vec<bool> = first
        .layouts
        .iter()
        .zip(&first.dags)
        .map(|(l, d)| (l.step as usize) < d.messages.len())
        .collect();
    let runs: Vec<Run> = (0..t.seeds.len())
        .flat_map(|s| runs_of(s, n, &on_fabric))
        .collect();
    let done = std::sync::atomic::AtomicUsize::new(0);
    let dags: Vec<Vec<JobDag>> = placed
        .into_iter()
        .map(|p| {
            p.dags
                .into_iter()
                .zip(p.layouts)
                .zip(p.serve)
                .zip(&t.tenants)
                .map(|(((dag, layout), serve), tn)| JobDag {
                    dag,
                    layout,
                    class: tn.job.class,
                    serve,
                })
                .collect()
        })
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
    // Per seed: each run's jobs and their ends.
    type Done = (Vec<(usize, Part)>, Vec<JobEnd>);
    let mut per_seed: Vec<Vec<Done>> = vec![Vec::new(); t.seeds.len()];
    for (r, res) in runs.iter().zip(out.into_iter().flatten()) {
        let ends = r
            .jobs
            .iter()
            .zip(res?)
            .map(|(&(i, _), raw)| {
                let dag = &dags[r.seed][i];
                job_end(t, seed_values[r.seed], dag, &t.tenants[i].work, raw)
            })
            .collect::<Result<_, Error>>()?;
        per_seed[r.seed].push((r.jobs.clone(), ends));
    }
    // Job i's (step, checkpoint) ends in the run holding exactly `jobs` (all Full unless
    // `part` says), per seed.
    let ends_in = |i: usize, jobs: &[usize], part: Part| -> Vec<JobEnd> {
        let want: Vec<(usize, Part)> = jobs
            .iter()
            .map(|&j| (j, if j == i { part } else { Part::Full }))
            .collect();
        per_seed
            .iter()
            .map(|runs| {
                let (js, ts) = runs
                    .iter()
                    .find(|(js, _)| *js == want)
                    .expect("every run of the seed was made");
                ts[js
                    .iter()
                    .position(|&(j, _)| j == i)
                    .expect("the run holds job i")]
                .clone()
            })
            .collect()
    };
    let time_in = |i: usize, jobs: &[usize]| -> Vec<f64> {
        ends_in(i, jobs, Part::Full)
            .into_iter()
            .map(|e| e.step)
            .collect()
    };
    let time_in_part = |i: usize, part: Part| -> Vec<f64> {
        ends_in(i, &[i], part).into_iter().map(|e| e.step).collect()
    };
    let mut stored = Vec::new();
    let mut serving = Vec::new();
    let est = |what: &str, v: &[f64]| seeds::estimate(what, v).map_err(Error::Run);
    let ratio =
        |a: &[f64], b: &[f64]| -> Vec<f64> { a.iter().zip(b).map(|(x, y)| x / y).collect() };
    let everyone: Vec<usize> = (0..n).collect();
    let mut jobs = Vec::with_capacity(n);
    let mut matrix = vec![vec![None; n]; n];
    for (i, tn) in t.tenants.iter().enumerate() {
        let alone = time_in(i, &[i]);
        let together = if n > 1 {
            time_in(i, &everyone)
        } else {
            alone.clone()
        };
        for (j, cell) in matrix[i].iter_mut().enumerate() {
            if i != j {
                let pair = [i.min(j), i.max(j)];
                *cell = Some(est("a slowdown", &ratio(&time_in(i, &pair), &alone))?);
            }
        }
        let servers = first_servers[i].clone();
        if let (Some(st), Some(tier)) = (&tn.job.storage, &t.tier) {
            let ends = ends_in(i, &[i], Part::Full);
            let ckpt_step: Vec<f64> = ends.iter().map(|e| e.step).collect();
            let (step, with_data) = match on_fabric[i] {
                true => (time_in_part(i, Part::Step), time_in_part(i, Part::WithData)),
                false => (ckpt_step.clone(), ckpt_step.clone()),
            };
            let cfg_bytes = storage_bytes(tn, st);
            let write: Vec<f64> = match on_fabric[i] {
                true if st.checkpoint_every.is_some() => ends.iter().map(|e| e.ckpt).collect(),
                _ => vec![cfg_bytes.1 as f64 / tier.bytes_per_s; t.seeds.len()],
            };
            let every = st.checkpoint_every.unwrap_or(1) as f64;
            let amortized: Vec<f64> = (0..t.seeds.len())
                .map(|k| {
                    let ck = if st.checkpoint_every.is_some() {
                        ckpt_step[k]
                    } else {
                        with_data[k]
                    };
                    ((every - 1.0) * with_data[k] + ck) / every / step[k]
                })
                .collect();
            stored.push(StorageResult {
                job: tn.job.name.clone(),
                fabric: if tier.separate { "separate" } else { "shared" },
                data_bytes_per_step: cfg_bytes.0,
                checkpoint_bytes: cfg_bytes.1,
                checkpoint_every: st.checkpoint_every,
                tier_gbps: tier.bytes_per_s / 1e9,
                step_s: est("a step without storage traffic", &step)?,
                with_data_s: est("a step with data loading", &with_data)?,
                checkpoint_step_s: est("a checkpoint step", &ckpt_step)?,
                write_outlasts_step: write.iter().zip(&ckpt_step).any(|(w, s)| w > s),
                checkpoint_write_s: est("a checkpoint write", &write)?,
                amortized_slowdown: est("a storage slowdown", &amortized)?,
            });
        }
        if let Work::Serve(job) = &tn.work {
            // With a front-end, its prompts' p99 too (`serve::report::FRONTEND_FIGURES`).
            let fe: &[&'static str] = match job.frontend {
                Some(_) => &["frontend_p99"],
                None => &[],
            };
            let figure = |jobs: &[usize], name: &str| -> Vec<f64> {
                ends_in(i, jobs, Part::Full)
                    .iter()
                    .map(|e| e.serve.as_ref().map_or(0.0, |m| m.get(name)))
                    .collect()
            };
            let figures = SERVING_FIGURES
                .iter()
                .chain(fe)
                .map(|&name| {
                    Ok(ServingFigure {
                        name,
                        alone_s: est(name, &figure(&[i], name))?,
                        together_s: est(name, &figure(&everyone, name))?,
                    })
                })
                .collect::<Result<_, Error>>()?;
            serving.push(ServingResult {
                job: tn.job.name.clone(),
                figures,
            });
        }
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
        storage: stored,
        serving,
    }))
}

/// A training job's data-loading bytes per step and checkpoint bytes, all GPUs.
fn storage_bytes(tn: &super::Tenant, st: &JobStorage) -> (u64, u64) {
    let Work::Train(cfg) = &tn.work else {
        return (0, 0);
    };
    let ckpt = match st.checkpoint_every {
        Some(_) => (0..cfg.gpus).map(|g| checkpoint_bytes(cfg, g)).sum(),
        None => 0,
    };
    (st.data_per_gpu * cfg.gpus, ckpt)
}
