//! Inference serving: a deployment of a model on GPU pools (disaggregated prefill and decode,
//! or colocated), its requests, continuous batching, and the KV-cache transfers and
//! tensor-parallel collectives run on the engines; the result is TTFT and TPOT percentiles,
//! tokens/s per GPU, goodput at the SLOs, and the network's share of each latency
//! (docs/serving.md).
//!
//! [`ServeJob`] is the deployment resolved: a pure input to [`sim::run_seed`] with a
//! [`net::Net`] (the cluster's engine), so a multi-tenant run can place several on one fabric
//! ([`ServeJob::on_gpus`]).

pub mod arrivals;
pub mod batching;
pub mod compute;
pub mod frontend;
pub mod kv;
pub mod net;
pub mod report;
pub mod sim;

use crate::error::Error;
use crate::setup::engine_choice::EngineChoice;
use crate::workload::run_engine::Cluster;
use crate::workload::train::efficiency::Efficiency;
use crate::workload::train::model::ModelSpec;
use compute::Compute;
use fabricsim_core::error::InputError;
use fabricsim_input::scenario::serve::{Mode, ServeSection, ServeSpec};
use fabricsim_input::scenario::{Design, Scenario};

/// A serving deployment ready to run: its spec, compute model and the GPUs of each instance.
#[derive(Clone, Debug)]
pub struct ServeJob {
    pub spec: ServeSpec,
    pub compute: Compute,
    /// The prefill pool's instances (empty when colocated), each its GPUs in TP rank order.
    pub prefill: Vec<Vec<u32>>,
    /// The decode pool's instances (the one pool when colocated).
    pub decode: Vec<Vec<u32>>,
    /// Where the requests come from (`[frontend]`); `None`: from no host.
    pub frontend: Option<frontend::Frontend>,
}

impl ServeJob {
    /// The scenario's `[serve]` section on the cluster of `design`, on its first GPUs
    /// (prefill pool first); errors name the key or flag.
    pub fn resolve(s: &Scenario, design: &Design) -> Result<ServeJob, InputError> {
        let d = s.file.serve.clone().unwrap_or_default();
        let have = ("cluster.gpus", design.spec.gpus as u64);
        let (spec, compute) = ServeJob::resolve_section(s, &d, "serve", have, design)?;
        let need = spec.prefill.map_or(0, |p| p.gpus()) + spec.decode.gpus();
        let gpus: Vec<u32> = (0..need as u32).collect();
        let frontend = frontend::Frontend::beside(s, design, need)?;
        Ok(ServeJob {
            frontend,
            ..ServeJob::on_gpus(spec, compute, &gpus)
        })
    }

    /// Section `d` (keys `{table}.KEY`: `serve`, or a job's `jobs[1].serve`) checked, with its
    /// compute model, for a deployment on `have` = (the key of its GPU count, the count).
    pub fn resolve_section(
        s: &Scenario,
        d: &ServeSection,
        table: &str,
        have: (&str, u64),
        design: &Design,
    ) -> Result<(ServeSpec, Compute), InputError> {
        let k = |field: &str| format!("{table}.{field}");
        let spec = d.resolve_section(s, table)?;
        let model = ModelSpec::preset("", &spec.model)
            .map_err(|e| s.error(&k("model"), &spec.model, e.problem, e.allowed))?;
        if spec.fp8 && design.gpu.fp8_tflops.is_none() {
            return Err(s.error(
                &k("precision"),
                "\"fp8\"",
                format!("the {} has no FP8 peak in the catalog", design.gpu.id),
                "bf16, or a GPU with fp8_tflops",
            ));
        }
        let need = spec.prefill.map_or(0, |p| p.gpus()) + spec.decode.gpus();
        let (have_key, have) = have;
        if need > have {
            // The first pool key the file or a flag sets (the error points at it).
            let p = spec
                .prefill
                .unwrap_or(fabricsim_input::scenario::serve::Pool {
                    instances: 0,
                    tp: 0,
                });
            let keys = [
                (k("decode_instances"), spec.decode.instances),
                (k("prefill_instances"), p.instances),
                (k("decode_tp"), spec.decode.tp),
                (k("prefill_tp"), p.tp),
            ];
            let (key, value) = keys
                .iter()
                .find(|(k, _)| s.flags.contains_key(k) || s.source.locate_key(k).is_some())
                .unwrap_or(&keys[0]);
            return Err(s.error(
                key,
                value,
                format!("the pools need {need} GPUs and {have_key} is {have}"),
                format!("instances x tp summed over the pools at most {have_key} ({have})"),
            ));
        }
        if spec.expert_parallel.is_some() {
            expert_parallel_fits(s, &k, &spec, &model)?;
        }
        let compute = Compute {
            model,
            gpu: design.gpu.clone(),
            eff: Efficiency::h200(&design.catalog),
            bytes_per_element: spec.bytes_per_element,
            fp8: spec.fp8,
        };
        Ok((spec, compute))
    }

    /// `spec`'s pools cut from `gpus` in order (prefill instances first, each `tp` consecutive
    /// GPUs of the list); `gpus` holds at least their sum.
    pub fn on_gpus(spec: ServeSpec, compute: Compute, gpus: &[u32]) -> ServeJob {
        let mut rest = gpus;
        let mut cut = |pool: Option<fabricsim_input::scenario::serve::Pool>| -> Vec<Vec<u32>> {
            let Some(p) = pool else { return Vec::new() };
            (0..p.instances)
                .map(|_| {
                    let (a, b) = rest.split_at(p.tp as usize);
                    rest = b;
                    a.to_vec()
                })
                .collect()
        };
        let prefill = cut(spec.prefill);
        let decode = cut(Some(spec.decode));
        ServeJob {
            spec,
            compute,
            prefill,
            decode,
            frontend: None,
        }
    }

    /// GPUs the deployment occupies.
    pub fn gpus(&self) -> u64 {
        self.prefill
            .iter()
            .chain(&self.decode)
            .map(|i| i.len() as u64)
            .sum()
    }

    pub fn mode(&self) -> Mode {
        self.spec.mode
    }
}

/// An expert-parallel deployment's model has experts and each instance's GPUs split them
/// evenly (`workload::moe::Route`'s contiguous experts per rank).
fn expert_parallel_fits(
    s: &Scenario,
    k: &dyn Fn(&str) -> String,
    spec: &ServeSpec,
    model: &ModelSpec,
) -> Result<(), InputError> {
    if !model.is_moe() {
        return Err(s.error(
            &k("expert_parallel"),
            "true",
            format!("{} is a dense model (no experts to route to)", model.id),
            "false, or a MoE model (mixtral-8x7b, deepseek-v3)",
        ));
    }
    let pools = [
        ("serve.prefill_tp", spec.prefill),
        ("serve.decode_tp", Some(spec.decode)),
    ];
    for (key, pool) in pools {
        if let Some(p) = pool.filter(|p| !model.experts.is_multiple_of(p.tp)) {
            return Err(s.error(
                key,
                p.tp,
                format!(
                    "expert parallelism spreads {}'s {} experts evenly over an instance's GPUs",
                    model.id, model.experts
                ),
                format!("a divisor of {}", model.experts),
            ));
        }
    }
    Ok(())
}

/// The engine a serving run takes: the scenario's `engine` when it sets one, else the flow
/// engine (a run's KV transfers are gigabytes of packets).
pub fn engine_of(s: &Scenario) -> Result<EngineChoice, InputError> {
    match s.sets("engine") {
        true => EngineChoice::of(s),
        false => Ok(EngineChoice::Flow),
    }
}

/// Runs `job` on `cluster` for each of `seeds` in order; `on_seed(done)` sees each seed finish
/// (progress). A stop request (`fabricsim_core::stop`) ends the run after the seed in hand: the
/// report covers the seeds done and says it was interrupted.
pub fn run(
    job: &ServeJob,
    cluster: &Cluster,
    seeds: &[u64],
    on_seed: &mut dyn FnMut(usize),
) -> Result<report::Report, Error> {
    let mut metrics = Vec::with_capacity(seeds.len());
    for &seed in seeds {
        if fabricsim_core::stop::requested() {
            break;
        }
        let net = net::Net::new(cluster, seed, job.spec.ideal_network);
        let served = sim::run_seed(job, &net, seed)?;
        metrics.push(report::Metrics::of(job, &served));
        on_seed(metrics.len());
    }
    let interrupted = metrics.len() < seeds.len();
    report::Report::over(job, &metrics, interrupted)
}
