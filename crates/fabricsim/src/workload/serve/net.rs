//! The network under a serving deployment, timed by the engines (`run_engine::Cluster`): every
//! request's KV-cache transfer, prefill rank to decode rank, as one message DAG of a seed's
//! whole run (each message posted when its prefill ends, so transfers in flight together share
//! NICs and links as the engine's rates say), and the tensor-parallel collectives of one layer
//! inside an instance (two all-reduces of the layer's activations, Shoeybi et al. 2019, arXiv
//! 1909.08053 §3), run once per distinct row count on the instance's own GPUs: NVLink inside a
//! server, the fabric when the instance spans servers; with `expert_parallel` the MoE layers'
//! dispatch and combine all-to-alls at the routing skew instead of the MLP's all-reduce.
//! With a front-end on the fabric the prompts join the KV transfers' DAG (`frontend`).
//! `network = "ideal"` makes all of it zero.

use std::cell::RefCell;
use std::collections::BTreeMap;

use super::ServeJob;
use super::frontend::QP_PROMPT;
use super::sim::Prefilled;
use crate::error::Error;
use crate::setup::engine_choice;
use crate::workload::collective::{self, Algo, Builder, CollectiveSpec, Comm, Op};
use crate::workload::moe::Route;
use crate::workload::placement::Placement;
use crate::workload::run_engine::{Cluster, run_collective};
use crate::workload::train::model::ModelSpec;
use fabricsim_core::message::MessageDag;
use fabricsim_core::topology::HostId;
use fabricsim_core::units::Time;
use fabricsim_mech::results::MessageResult;
use fabricsim_mech::{Faults, SimParams, Status};
use fabricsim_packet::RunOptions;

/// One KV-cache transfer: posted at `start_ps`, its shards (source GPU, destination GPU,
/// bytes).
#[derive(Clone, Debug)]
pub struct Transfer {
    pub start_ps: u64,
    pub shards: Vec<(u32, u32, u64)>,
}

/// The collectives of one transformer layer of an instance of `ranks` GPUs for `rows` tokens,
/// each (op, bytes per rank). Tensor-parallel: the all-reduce after attention and the one after
/// the MLP, of rows x hidden bf16 values (the wire stays bf16). Expert-parallel (`route`: the
/// MoE layer's routing over the ranks), as Megatron-Core's MoE layer with sequence parallelism
/// and the all-to-all token dispatcher runs it (megatron/core/transformer/moe/
/// token_dispatcher.py, `MoEAlltoAllTokenDispatcher`): the attention output reduce-scattered
/// (each rank keeps rows / ranks tokens), those tokens' top_k copies dispatched to the ranks
/// holding their experts and combined back (DeepSeek-V3: Liu et al. 2024, arXiv 2412.19437,
/// §3.4; its shared expert counted as one more routed expert every token picks, run where the
/// token is), and the rows all-gathered for the next attention.
pub fn layer_collectives(
    model: &ModelSpec,
    rows: u64,
    ranks: u64,
    route: Option<&Route>,
) -> Vec<(Op, u64)> {
    let bytes = rows * model.hidden * 2;
    match route {
        None => vec![(Op::AllReduce, bytes), (Op::AllReduce, bytes)],
        Some(_) => {
            let routed = rows.div_ceil(ranks) * model.top_k * model.hidden * 2;
            vec![
                (Op::ReduceScatter, bytes),
                (Op::MoeDispatch, routed),
                (Op::MoeCombine, routed),
                (Op::AllGather, bytes),
            ]
        }
    }
}

/// A seed's network: the cluster's engine with the seed's parameters, and where the
/// deployment's GPUs sit (the cluster's first GPUs, or a tenant's servers).
pub struct Net<'a> {
    pub cluster: &'a Cluster,
    place: Placement,
    params: SimParams,
    pub ideal: bool,
    /// (first GPU of the instance, rows) -> ps of one layer's collectives.
    memo: RefCell<BTreeMap<(u32, u64), u64>>,
}

impl<'a> Net<'a> {
    pub fn new(cluster: &'a Cluster, seed: u64, ideal: bool) -> Net<'a> {
        Net::on(cluster, cluster.place.clone(), seed, ideal)
    }

    /// The deployment's GPUs on `place` (a sub-placement of the cluster's topology).
    pub fn on(cluster: &'a Cluster, place: Placement, seed: u64, ideal: bool) -> Net<'a> {
        let mut params = cluster.params.clone();
        params.seed = seed;
        Net {
            cluster,
            place,
            params,
            ideal,
            memo: RefCell::new(BTreeMap::new()),
        }
    }

    /// The port of the deployment's GPU `gpu`.
    pub fn host(&self, gpu: u32) -> HostId {
        self.place.host(gpu)
    }

    /// Picoseconds of one layer's collectives ([`layer_collectives`]) for `rows` tokens on the
    /// instance of `job` on GPUs `gpus` (0 for one GPU or an ideal network).
    pub fn layer_comm_ps(&self, job: &ServeJob, gpus: &[u32], rows: u64) -> Result<u64, Error> {
        if self.ideal || gpus.len() < 2 {
            return Ok(0);
        }
        let key = (gpus[0], rows);
        if let Some(&t) = self.memo.borrow().get(&key) {
            return Ok(t);
        }
        let c = self.cluster;
        let comm = Comm {
            place: &self.place,
            gpus: gpus.to_vec(),
        };
        let model = &job.compute.model;
        let route = match &job.spec.expert_parallel {
            Some(skew) => Some(
                Route::new(skew, model.experts, model.top_k, gpus.len(), None)
                    .map_err(Error::Run)?,
            ),
            None => None,
        };
        // Channels: NCCL's for the server's NICs when the instance spans servers; inside one
        // server the rings are not NIC-bound, so one search ring per GPU of the instance, doubled
        // as across servers (an ESTIMATE, like `Nccl::search_channels`).
        let one_server = gpus.iter().all(|&g| self.place.same_server(g, gpus[0]));
        let rings = if one_server {
            gpus.len() as u32
        } else {
            c.design.spec.nics_per_node
        };
        let mut total = 0;
        for (op, bytes) in layer_collectives(model, rows, gpus.len() as u64, route.as_ref()) {
            let channels = collective::nccl_channels(
                &c.design.nccl,
                rings,
                Algo::for_op(op)[0],
                gpus.len() as u32,
            );
            let spec = CollectiveSpec {
                route: route.as_ref(),
                ..CollectiveSpec::with_defaults(op, bytes, channels)
            };
            let dag = collective::compile(&spec, &comm, c.nvlink())?;
            let kind = c.engine_for(&dag);
            total += run_collective(kind, &c.topology, &self.params, &dag, None)?
                .time
                .ps();
        }
        self.memo.borrow_mut().insert(key, total);
        Ok(total)
    }

    /// The seed's network traffic as one DAG: the prompts from the front-end first (one
    /// message each, posted at its request's arrival), then the KV transfers, each shard a
    /// message posted at its transfer's start or, after prompts, when its prefill ends (its
    /// dependencies on the prompts with their gaps, `sim::Prompt`); and each KV message's
    /// transfer.
    pub fn kv_dag(&self, p: &Prefilled) -> (MessageDag, Vec<usize>) {
        let mut b = Builder::new(&self.place, self.cluster.nvlink());
        for (r, q) in p.requests.iter().zip(&p.prompts) {
            let id = b.dag.push(
                q.src,
                self.place.host(q.gpu),
                q.bytes,
                Time::from_ps(r.arrival_ps),
                &[],
            );
            b.dag.messages[id as usize].qp = QP_PROMPT;
        }
        let mut owner = Vec::new();
        for (i, t) in p.transfers.iter().enumerate() {
            let deps: Vec<u32> = match p.prompts.get(i) {
                Some(q) => q.deps.iter().map(|&(k, _)| k as u32).collect(),
                None => Vec::new(),
            };
            for &(src, dst, bytes) in &t.shards {
                let id = b.send(src, dst, bytes, &deps, 0, i as u32);
                match p.prompts.get(i) {
                    Some(q) => {
                        for (k, &(_, gap)) in q.deps.iter().enumerate() {
                            b.dag.set_gap(id, k as u32, Time::from_ps(gap));
                        }
                    }
                    None => b.dag.messages[id as usize].start = Time::from_ps(t.start_ps),
                }
                owner.push(i);
            }
        }
        (b.finish(), owner)
    }

    /// Each message's result from one engine run of `dag` (none under an ideal network or for
    /// an empty DAG).
    pub fn run(&self, dag: &MessageDag) -> Result<Vec<MessageResult>, Error> {
        if self.ideal || dag.messages.is_empty() {
            return Ok(Vec::new());
        }
        let c = self.cluster;
        let kind = c.engine_for(dag);
        let opts = RunOptions {
            until: None,
            progress: None,
        };
        let r = engine_choice::run(
            kind,
            &c.topology,
            &self.params,
            dag,
            &Faults::default(),
            opts,
        )?;
        if r.sim.status != Status::Complete {
            return Err(Error::Run(format!(
                "the serving transfers did not complete ({:?}: {} of {} messages done)",
                r.sim.status, r.summary.messages_completed, r.summary.messages_total
            )));
        }
        Ok(r.messages)
    }
}

/// When each transfer landed: the last receive time of its messages (`messages`, in the
/// order [`Net::kv_dag`] made them, `owner` their transfers), its start if it has none.
pub fn landed(transfers: &[Transfer], owner: &[usize], messages: &[MessageResult]) -> Vec<u64> {
    let mut landed: Vec<u64> = transfers.iter().map(|t| t.start_ps).collect();
    for (m, &i) in messages.iter().zip(owner) {
        let done = m.recv_ps.or(m.finish_ps).unwrap_or(0);
        landed[i] = landed[i].max(done);
    }
    landed
}
