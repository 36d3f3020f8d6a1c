//! One seed of a deployment as a request-level discrete-event simulation in integer
//! picoseconds. Disaggregated (Zhong et al. 2024, DistServe, OSDI; Patel et al. 2024,
//! Splitwise, ISCA): requests queue first come first served for the first free prefill instance
//! (one prompt per prefill: a prompt of hundreds of tokens already fills the GEMMs); each is
//! handed round-robin to a decode instance, its KV cache sent when its prefill ends, all of a
//! seed's transfers in one engine run (`net::Net::arrivals`); the decode instance admits it when
//! the cache has landed, which is when its first token goes out (so TTFT counts the transfer).
//! Colocated: requests go round-robin to the instances, each prefilling and decoding
//! (`batching`). With `[frontend]` each prompt first travels from a front-end host to its
//! instance (`frontend`): on a shared fabric in the same engine run as the KV transfers; its
//! last output token streams back to the front-end after the decode (`frontend::response_ps`,
//! a closed form).

use super::ServeJob;
use super::arrivals::{Request, requests};
use super::batching::{Done, Pending, Steps, run_instance};
use super::frontend;
use super::kv;
use super::net::{self, Net, Transfer};
use crate::error::Error;
use fabricsim_core::topology::HostId;
use fabricsim_core::units::Time;
use fabricsim_input::scenario::serve::Mode;
use fabricsim_mech::results::MessageResult;

/// One request served.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Served {
    pub request: Request,
    pub first_token_ps: u64,
    pub finish_ps: u64,
    pub prefill_compute_ps: u64,
    /// The prefill's tensor-parallel collectives.
    pub prefill_comm_ps: u64,
    /// Prefill end to the KV cache landing on the decode instance (0 colocated).
    pub kv_ps: u64,
    pub kv_bytes: u64,
    /// Arrival to the prompt's arrival at its instance from the front-end (0 without one).
    pub frontend_ps: u64,
    /// Network time of the decode steps it was in.
    pub decode_comm_ps: u64,
    /// The last output token's way from the decode GPU to the front-end (0 without one).
    pub response_ps: u64,
}

impl Served {
    pub fn ttft_ps(&self) -> u64 {
        self.first_token_ps - self.request.arrival_ps
    }

    /// Time per output token after the first; `None` for a one-token output.
    pub fn tpot_ps(&self) -> Option<u64> {
        (self.request.output > 1)
            .then(|| (self.finish_ps - self.first_token_ps) / (self.request.output - 1))
    }

    /// End to end: arrival to the last token at the front-end (at the decode GPU without one).
    pub fn e2e_ps(&self) -> u64 {
        self.finish_ps + self.response_ps - self.request.arrival_ps
    }
}

fn ps(secs: f64) -> u64 {
    Time::from_secs_f64(secs).ps()
}

/// An instance's iterations: compute from `super::compute`, collectives from the network.
struct InstanceSteps<'a> {
    job: &'a ServeJob,
    net: &'a Net<'a>,
    gpus: &'a [u32],
}

impl Steps for InstanceSteps<'_> {
    fn prefill(&self, prompt: u64) -> Result<(u64, u64), Error> {
        let c = &self.job.compute;
        let tp = self.gpus.len() as u64;
        let comm = self.net.layer_comm_ps(self.job, self.gpus, prompt)?;
        Ok((ps(c.prefill_s(tp, prompt)), c.model.layers * comm))
    }

    fn decode(&self, batch: u64, context: u64) -> Result<(u64, u64), Error> {
        let c = &self.job.compute;
        let tp = self.gpus.len() as u64;
        let comm = self.net.layer_comm_ps(self.job, self.gpus, batch)?;
        Ok((ps(c.decode_s(tp, batch, context)), c.model.layers * comm))
    }
}

/// Serves `job`'s requests of `seed` over `net`.
pub fn run_seed(job: &ServeJob, net: &Net, seed: u64) -> Result<Vec<Served>, Error> {
    let mut p = prefill(job, net, seed)?;
    let (dag, owner) = net.kv_dag(&p);
    let messages = net.run(&dag)?;
    let landed = settle(&mut p, &owner, &messages);
    decode(job, net, p, &landed)
}

/// A seed's requests up to their prefills' ends, and the KV transfers they then post (none
/// colocated): what a seed does before the network's answer on the transfers (and on the
/// prompts, when they cross the fabric).
#[derive(Clone, Debug)]
pub struct Prefilled {
    pub requests: Vec<Request>,
    pub served: Vec<Served>,
    pub transfers: Vec<Transfer>,
    /// Each request's instance: of the prefill pool (disaggregated) or the decode pool.
    pub instance: Vec<usize>,
    /// When each request may start at its instance (its arrival, after the front-end).
    pub ready: Vec<u64>,
    /// The prompts on the fabric (none without a shared front-end), request by request.
    pub prompts: Vec<Prompt>,
}

/// A prompt's message: from a front-end port to the first GPU of its instance at its
/// arrival; the prefill depends on `deps` (`frontend::prefill_deps`: earlier prompts of the
/// instance, each with its gap).
#[derive(Clone, Debug)]
pub struct Prompt {
    pub src: HostId,
    pub gpu: u32,
    pub bytes: u64,
    pub deps: Vec<(usize, u64)>,
}

/// The prefill pool's queue for `seed`'s requests (disaggregated), or nothing (colocated),
/// and the prompts' way from the front-end.
pub fn prefill(job: &ServeJob, net: &Net, seed: u64) -> Result<Prefilled, Error> {
    let reqs = requests(&job.spec.arrivals, seed);
    let mut served: Vec<Served> = reqs
        .iter()
        .map(|&request| Served {
            request,
            first_token_ps: 0,
            finish_ps: 0,
            prefill_compute_ps: 0,
            prefill_comm_ps: 0,
            kv_ps: 0,
            kv_bytes: 0,
            frontend_ps: 0,
            decode_comm_ps: 0,
            response_ps: 0,
        })
        .collect();
    let d = job.decode.len();
    let (transfers, instance) = match job.spec.mode {
        Mode::Colocated => (Vec::new(), (0..reqs.len()).map(|i| i % d).collect()),
        Mode::Disaggregated => prefill_transfers(job, net, &reqs, &mut served)?,
    };
    let mut p = Prefilled {
        ready: reqs.iter().map(|r| r.arrival_ps).collect(),
        requests: reqs,
        served,
        transfers,
        instance,
        prompts: Vec::new(),
    };
    match job.frontend.as_ref().filter(|_| !net.ideal) {
        None => {}
        Some(f) if f.separate => {
            let at: Vec<(u64, u64)> = p
                .requests
                .iter()
                .map(|r| (r.arrival_ps, r.prompt))
                .collect();
            let ready = frontend::separate_ready(job, &net.cluster.topology, &at);
            arrive(&mut p, ready);
        }
        Some(f) => {
            let tier = f.tier(&net.cluster.topology);
            let pool = match job.spec.mode {
                Mode::Colocated => &job.decode,
                Mode::Disaggregated => &job.prefill,
            };
            let dur: Vec<u64> = p
                .served
                .iter()
                .map(|s| s.prefill_compute_ps + s.prefill_comm_ps)
                .collect();
            // Colocated: no KV transfer waits on the prompts (the instance admits each at
            // its arrival), so no dependencies.
            let deps = match job.spec.mode {
                Mode::Colocated => vec![Vec::new(); p.requests.len()],
                Mode::Disaggregated => frontend::prefill_deps(&p.instance, &dur),
            };
            let edges: usize = deps
                .iter()
                .zip(&p.transfers)
                .map(|(d, t)| d.len() * t.shards.len())
                .sum();
            if edges > frontend::MAX_PROMPT_EDGES {
                return Err(Error::Unsupported(format!(
                    "a shared front-end's prompts need {edges} dependencies in the DAG (per \
                     prefill instance, about requests^2 / 2 x KV shards per request); at most \
                     {}: fewer requests per prefill instance, or [frontend] fabric = \"separate\"",
                    frontend::MAX_PROMPT_EDGES
                )));
            }
            p.prompts = p
                .requests
                .iter()
                .zip(deps)
                .enumerate()
                .map(|(i, (r, deps))| Prompt {
                    src: tier.hosts[i % tier.hosts.len()],
                    gpu: pool[p.instance[i]][0],
                    bytes: f.prompt_bytes(r.prompt),
                    deps,
                })
                .collect();
        }
    }
    Ok(p)
}

/// The requests of `p` may start at `ready` (after the front-end): the prefill ends (each
/// instance's queue in dispatch order) and the KV transfers' starts follow.
fn arrive(p: &mut Prefilled, ready: Vec<u64>) {
    for (s, &at) in p.served.iter_mut().zip(&ready) {
        s.frontend_ps = at - s.request.arrival_ps;
    }
    if !p.transfers.is_empty() {
        let dur: Vec<u64> = p
            .served
            .iter()
            .map(|s| s.prefill_compute_ps + s.prefill_comm_ps)
            .collect();
        let ends = frontend::prefill_ends(&p.instance, &dur, &ready);
        for (t, end) in p.transfers.iter_mut().zip(ends) {
            t.start_ps = end;
        }
    }
    p.ready = ready;
}

/// What the engine's run of [`Net::kv_dag`]`(p)` (`messages`; `owner`: each KV message's
/// transfer) says: the prompts' arrivals (the sender's completion, when the DAG releases the
/// prefill: `core::release`) and when each KV transfer landed.
pub fn settle(p: &mut Prefilled, owner: &[usize], messages: &[MessageResult]) -> Vec<u64> {
    let n = p.prompts.len();
    if n > 0 {
        let ready = messages[..n]
            .iter()
            .map(|m| m.finish_ps.expect("a completed run"))
            .collect();
        arrive(p, ready);
    }
    net::landed(&p.transfers, owner, &messages[n.min(messages.len())..])
}

/// The decode pool after the transfers of `p` landed at `landed` (ps, one per transfer).
pub fn decode(
    job: &ServeJob,
    net: &Net,
    p: Prefilled,
    landed: &[u64],
) -> Result<Vec<Served>, Error> {
    let Prefilled {
        requests: reqs,
        mut served,
        transfers,
        ready,
        ..
    } = p;
    let d = job.decode.len();
    let mut pending: Vec<Vec<Pending>> = vec![Vec::new(); d];
    let prefill_here = job.spec.mode == Mode::Colocated;
    for (i, r) in reqs.iter().enumerate() {
        let ready_ps = if prefill_here {
            ready[i]
        } else {
            served[i].kv_ps = landed[i] - transfers[i].start_ps;
            landed[i]
        };
        pending[i % d].push(Pending {
            id: i,
            ready_ps,
            prompt: r.prompt,
            output: r.output,
        });
    }
    if !prefill_here {
        for p in &mut pending {
            p.sort_by_key(|p| (p.ready_ps, p.id));
        }
    }
    for (inst, p) in pending.iter().enumerate() {
        let steps = InstanceSteps {
            job,
            net,
            gpus: &job.decode[inst],
        };
        let done = run_instance(
            p,
            prefill_here,
            job.spec.max_batch,
            job.spec.max_batch_tokens,
            &steps,
        )?;
        for (
            p,
            Done {
                first_token_ps,
                finish_ps,
                prefill_compute_ps,
                prefill_comm_ps,
                decode_comm_ps,
            },
        ) in p.iter().zip(done)
        {
            let s = &mut served[p.id];
            s.first_token_ps = first_token_ps;
            s.finish_ps = finish_ps;
            s.decode_comm_ps = decode_comm_ps;
            if prefill_here {
                s.prefill_compute_ps = prefill_compute_ps;
                s.prefill_comm_ps = prefill_comm_ps;
            }
        }
    }
    respond(job, net, &mut served);
    Ok(served)
}

/// Each request's last token streamed to the front-end port its prompt left by (request `i`
/// from port `i mod ports`, as `prefill` sends the prompts), from the first GPU of its decode
/// instance (`frontend::response_ps`); nothing without a front-end or on an ideal network.
fn respond(job: &ServeJob, net: &Net, served: &mut [Served]) {
    let Some(f) = job.frontend.as_ref().filter(|_| !net.ideal) else {
        return;
    };
    let topo = &net.cluster.topology;
    let tier = f.tier(topo);
    let d = job.decode.len();
    for (i, s) in served.iter_mut().enumerate() {
        let gpu = net.host(job.decode[i % d][0]);
        let fe = tier.hosts[i % tier.hosts.len()];
        s.response_ps = frontend::response_ps(f, topo, &net.cluster.params, gpu, fe);
    }
}

/// The prefill pool's queue: each request's KV transfer to its decode instance (round-robin by
/// arrival), posted when its prefill ends, and its prefill instance.
fn prefill_transfers(
    job: &ServeJob,
    net: &Net,
    reqs: &[Request],
    served: &mut [Served],
) -> Result<(Vec<Transfer>, Vec<usize>), Error> {
    let c = &job.compute;
    let mut free = vec![0u64; job.prefill.len()];
    let mut transfers = Vec::with_capacity(reqs.len());
    let mut instance = Vec::with_capacity(reqs.len());
    for (i, r) in reqs.iter().enumerate() {
        // The first free instance, the lowest index among equals.
        let (inst, &at) = free
            .iter()
            .enumerate()
            .min_by_key(|&(k, &f)| (f, k))
            .expect("a pool has an instance");
        let gpus = &job.prefill[inst];
        let steps = InstanceSteps { job, net, gpus };
        let (compute, comm) = steps.prefill(r.prompt)?;
        let end = at.max(r.arrival_ps) + compute + comm;
        free[inst] = end;
        instance.push(inst);
        let dst = &job.decode[i % job.decode.len()];
        let shards = kv::shards(
            &c.model,
            r.prompt,
            c.bytes_per_element,
            gpus.len() as u64,
            dst.len() as u64,
        )
        .into_iter()
        .map(|(a, b, bytes)| (gpus[a as usize], dst[b as usize], bytes))
        .collect();
        served[i].prefill_compute_ps = compute;
        served[i].prefill_comm_ps = comm;
        served[i].kv_bytes = kv::kv_bytes(&c.model, r.prompt, c.bytes_per_element);
        transfers.push(Transfer {
            start_ps: end,
            shards,
        });
    }
    Ok((transfers, instance))
}
