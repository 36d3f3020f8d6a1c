//! Several jobs on one fabric (`fabricsim tenants`): the scenario's `[[jobs]]`, each a training
//! step ([`super::train::step_dag`]), a serving deployment ([`super::serve`]: its KV-cache
//! transfers, [`serve::net::Net::kv_dag`]) or a collective loop ([`super::collective`])
//! compiled on the servers its placement policy gives it ([`placement`]), merged into one DAG
//! ([`merge`]) and run on the engines alone and together ([`run`]): each job's time alone, with
//! every other job, and with each other job in turn (the slowdown matrix).

pub mod merge;
pub mod placement;
pub mod report;
pub mod run;
pub mod storage;

use super::collective::{self, Algo, CollectiveSpec, Comm, Op, start_frontier};
use super::run_engine::Cluster;
use super::serve::ServeJob;
use super::serve::frontend::Frontend;
use super::serve::net::Net;
use super::serve::sim::{self as serve_sim, Prefilled};
use super::tier::{self, Room};
use super::train::config::{Keys, TrainConfig};
use super::train::efficiency::Efficiency;
use super::train::random_loss;
use super::train::step_dag::{self, DagOptions};
use crate::error::Error;
use crate::workload::placement::Placement;
use fabricsim_core::error::InputError;
use fabricsim_core::message::MessageDag;
use fabricsim_input::scenario::Scenario;
use fabricsim_input::scenario::jobs::{self, Job, JobWork};
use placement::{Free, job_placement};

/// What a job runs, resolved.
#[derive(Clone, Debug)]
pub enum Work {
    /// One training step (the step DAG, every data-parallel ring step simulated).
    Train(Box<TrainConfig>),
    /// A serving deployment on the job's GPUs (its requests of the run's seed).
    Serve(Box<ServeJob>),
    /// `iterations` runs of `spec`, each after the last (every rank waits for its result).
    Collective {
        spec: CollectiveSpec<'static>,
        iterations: u32,
    },
}

/// One job: its entry and its work.
#[derive(Clone, Debug)]
pub struct Tenant {
    pub job: Job,
    pub work: Work,
}

/// The scenario's jobs on its cluster, ready to run over its seeds.
pub struct Tenants {
    pub cluster: Cluster,
    pub tenants: Vec<Tenant>,
    /// The servers below each leaf (`placement::leaves`).
    pub leaves: Vec<Vec<u32>>,
    /// The storage servers (`[storage]`), which no job takes.
    pub tier: Option<tier::Tier>,
    /// The front-end hosts of the serving jobs (`[frontend]`, before the storage servers),
    /// which no job takes either.
    pub frontend: Option<Frontend>,
    pub eff: Efficiency,
    pub seeds: Vec<u64>,
    /// The cluster's ranks on its topology (`Placement::on_topology`).
    world: Placement,
}

/// The servers each job takes and its DAG, for one seed's placement.
#[derive(Clone, Debug)]
pub struct Placed {
    pub servers: Vec<Vec<u32>>,
    pub dags: Vec<MessageDag>,
    /// Where each DAG's step ends and its storage traffic sits.
    pub layouts: Vec<storage::Layout>,
    /// A serving job's requests up to their prefills (its DAG is their KV transfers).
    pub serve: Vec<Option<ServeStage>>,
}

/// A serving job of one seed between its prefills and its decodes: the engine's run of the
/// DAG its transfers make (alone or with other jobs) says when each cache lands.
#[derive(Clone, Debug)]
pub struct ServeStage {
    pub place: Placement,
    pub prefilled: Prefilled,
    /// Each message's transfer (`Net::kv_dag`).
    pub owner: Vec<usize>,
}

impl ServeStage {
    /// The deployment's requests served, the transfers' messages run as `messages`.
    pub fn finish(
        &self,
        job: &ServeJob,
        cluster: &Cluster,
        seed: u64,
        messages: &[fabricsim_mech::results::MessageResult],
    ) -> Result<Vec<serve_sim::Served>, Error> {
        let mut p = self.prefilled.clone();
        let landed = serve_sim::settle(&mut p, &self.owner, messages);
        let net = Net::on(cluster, self.place.clone(), seed, job.spec.ideal_network);
        serve_sim::decode(job, &net, p, &landed)
    }
}

/// Resolves the scenario's `[[jobs]]` on its cluster; every error names the job's key.
pub fn resolve(s: &Scenario) -> Result<Tenants, InputError> {
    let jobs = jobs::checked(s)?;
    if jobs.is_empty() {
        return Err(s.error(
            "jobs",
            "(missing)",
            "the scenario has no [[jobs]] to run",
            "one or more [[jobs]] entries, each with gpus and a [jobs.train] or [jobs.collective] table (see examples/tenants-*.toml)",
        ));
    }
    let cluster = Cluster::new(s)?;
    let gpn = cluster.design.spec.gpus_per_node as u64;
    let world = Placement::on_topology(&cluster.topology, gpn as u32);
    let leaves = placement::leaves(&cluster.topology);
    let eff = Efficiency::h200(&cluster.design.catalog);
    let seeds = super::seeds::derive(cluster.params.seed, s.engine_seeds()?);
    let tier = storage::tier(s, &cluster.topology)?;
    let room = Room {
        end: tier
            .as_ref()
            .map_or(cluster.topology.servers, |t| t.servers[0]),
        keep: 1,
        who: "the jobs",
    };
    let frontend = Frontend::resolve(s, cluster.topology.rails_per_server(), room)?;
    let taken = taken_servers(tier.as_ref(), frontend.as_ref());
    let mut free = Free::new(free_leaves(&leaves, &taken));
    let mut tenants = Vec::with_capacity(jobs.len());
    for (i, job) in jobs.into_iter().enumerate() {
        if !job.gpus.is_multiple_of(gpn) {
            return Err(s.error(
                &job.key("gpus"),
                job.gpus,
                format!("jobs take whole servers of {gpn} GPUs"),
                format!("a multiple of [cluster] gpus_per_node = {gpn}"),
            ));
        }
        let left = free.count();
        let Some(servers) = free.take((job.gpus / gpn) as usize, job.placement, seeds[0], i as u64)
        else {
            return Err(s.error(
                &job.key("gpus"),
                job.gpus,
                format!(
                    "{} servers asked, {left} of the cluster's {} left free by the jobs before it",
                    job.gpus / gpn,
                    cluster.topology.servers
                ),
                format!(
                    "at most {} GPUs, or a larger [cluster] gpus",
                    left as u64 * gpn
                ),
            ));
        };
        if let Some(c) = job.class
            && cluster.params.message_class(0, Some(c)).is_err()
        {
            return Err(s.error(
                &job.key("class"),
                c,
                "the fabric has no class for this label",
                format!(
                    "0 to {} (the fabric's traffic classes, or the labels of [classes] \
                     sl_to_vl or priority_to_tc)",
                    cluster.params.class_labels() - 1
                ),
            ));
        }
        let place = job_placement(&world, &servers);
        let work = match &job.work {
            JobWork::Train(t) => {
                let keys = Keys {
                    s,
                    section: job.key("train"),
                    gpus: job.key("gpus"),
                };
                random_loss::refuse(
                    s,
                    &keys.section,
                    t,
                    "fabricsim train with the job alone in [train]",
                )?;
                let cfg = TrainConfig::resolve_section(&keys, t, job.gpus, &cluster.design, place)?;
                step_dag::check(&cfg).map_err(|e| {
                    s.error(
                        &job.key("train"),
                        "",
                        e,
                        "a dense model with cp = 1 and zero 0-2",
                    )
                })?;
                Work::Train(Box::new(cfg))
            }
            JobWork::Serve(d) => {
                let have = (job.key("gpus"), job.gpus);
                let (spec, compute) = ServeJob::resolve_section(
                    s,
                    d,
                    &job.key("serve"),
                    (&have.0, have.1),
                    &cluster.design,
                )?;
                let need = spec.prefill.map_or(0, |p| p.gpus()) + spec.decode.gpus();
                let gpus: Vec<u32> = (0..need as u32).collect();
                Work::Serve(Box::new(ServeJob {
                    frontend: frontend.clone(),
                    ..ServeJob::on_gpus(spec, compute, &gpus)
                }))
            }
            JobWork::Collective {
                op,
                bytes,
                iterations,
                algo,
                channels,
            } => {
                let bad = |field: &str, e: InputError| {
                    s.error(&job.key(field), e.value, e.problem, e.allowed)
                };
                let name = if op == "all_to_all" { "alltoall" } else { op };
                let op = Op::parse("op", name).map_err(|e| bad("collective.op", e))?;
                let algo = match algo {
                    Some(a) => Algo::parse("algo", a).map_err(|e| bad("collective.algo", e))?,
                    None => Algo::for_op(op)[0],
                };
                let nics = cluster.design.spec.nics_per_node;
                let ranks = Comm::world(&place).len() as u32;
                let channels = channels.unwrap_or_else(|| {
                    collective::nccl_channels(&cluster.design.nccl, nics, algo, ranks)
                });
                let spec = CollectiveSpec {
                    algo,
                    ..CollectiveSpec::with_defaults(op, *bytes, channels)
                };
                // The builders' own checks (ranks, algorithm, channels), named by the job's key.
                collective::compile(&spec, &Comm::world(&place), cluster.nvlink()).map_err(
                    |e| {
                        let field = match e.key.trim_start_matches("--") {
                            "gpus" => "gpus".to_string(),
                            k => format!("collective.{k}"),
                        };
                        bad(&field, e)
                    },
                )?;
                Work::Collective {
                    spec,
                    iterations: *iterations,
                }
            }
        };
        tenants.push(Tenant { job, work });
    }
    Ok(Tenants {
        cluster,
        tenants,
        leaves,
        tier,
        frontend,
        eff,
        seeds,
        world,
    })
}

/// The servers of the storage and front-end tiers.
fn taken_servers(storage: Option<&tier::Tier>, frontend: Option<&Frontend>) -> Vec<u32> {
    let st = storage.map_or(&[][..], |t| &t.servers[..]);
    let fe = frontend.map_or(&[][..], |f| &f.servers[..]);
    [st, fe].concat()
}

/// `leaves` without the servers `taken`.
fn free_leaves(leaves: &[Vec<u32>], taken: &[u32]) -> Vec<Vec<u32>> {
    leaves
        .iter()
        .map(|l| l.iter().copied().filter(|s| !taken.contains(s)).collect())
        .collect()
}

impl Tenants {
    /// Places every job for `seed` (only `random` placement draws) and compiles its DAG on the
    /// shared topology's hosts.
    pub fn place(&self, seed: u64) -> Result<Placed, Error> {
        let gpn = self.cluster.design.spec.gpus_per_node as u64;
        let taken = taken_servers(self.tier.as_ref(), self.frontend.as_ref());
        let mut free = Free::new(free_leaves(&self.leaves, &taken));
        let mut placed = Placed {
            servers: Vec::new(),
            dags: Vec::new(),
            layouts: Vec::new(),
            serve: Vec::new(),
        };
        for (i, t) in self.tenants.iter().enumerate() {
            let servers = free
                .take((t.job.gpus / gpn) as usize, t.job.placement, seed, i as u64)
                .expect("resolve placed every job on the same free servers");
            let place = job_placement(&self.world, &servers);
            let (mut dag, stage) = match &t.work {
                Work::Serve(job) => {
                    let net = Net::on(&self.cluster, place.clone(), seed, job.spec.ideal_network);
                    let prefilled = serve_sim::prefill(job, &net, seed)?;
                    let (dag, owner) = match job.spec.ideal_network {
                        true => (MessageDag::default(), Vec::new()),
                        false => net.kv_dag(&prefilled),
                    };
                    let stage = ServeStage {
                        place: place.clone(),
                        prefilled,
                        owner,
                    };
                    (dag, Some(stage))
                }
                w => (self.compile(w, place.clone())?, None),
            };
            let end = dag.messages.len() as u32;
            let mut layout = storage::Layout {
                step: end,
                data_end: end,
            };
            if let (Some(st), Some(tier), Work::Train(cfg)) = (&t.job.storage, &self.tier, &t.work)
            {
                let cfg = TrainConfig {
                    place,
                    ..(**cfg).clone()
                };
                layout = storage::append(&mut dag, &cfg, st, tier);
            }
            placed.servers.push(servers);
            placed.dags.push(dag);
            placed.layouts.push(layout);
            placed.serve.push(stage);
        }
        Ok(placed)
    }

    fn compile(&self, work: &Work, place: Placement) -> Result<MessageDag, Error> {
        let nvlink = self.cluster.nvlink();
        match work {
            Work::Train(cfg) => {
                let cfg = TrainConfig {
                    place,
                    ..(**cfg).clone()
                };
                Ok(step_dag::compile(&cfg, &self.eff, nvlink, DagOptions::default())?.dag)
            }
            Work::Collective { spec, iterations } => {
                let comm = Comm::world(&place);
                let mut b = collective::Builder::new(&place, nvlink);
                let mut ready = start_frontier(comm.len());
                for _ in 0..*iterations {
                    ready = collective::append(&mut b, spec, &comm, &ready)?;
                }
                Ok(b.finish())
            }
            Work::Serve(_) => unreachable!("place() runs a serving job's prefills itself"),
        }
    }
}
