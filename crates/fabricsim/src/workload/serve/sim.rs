//! One seed of a deployment as a request-level discrete-event simulation in integer
//! picoseconds. Disaggregated (Zhong et al. 2024, DistServe, OSDI; Patel et al. 2024,
//! Splitwise, ISCA): requests queue first come first served for the first free prefill instance
//! (one prompt per prefill: a prompt of hundreds of tokens already fills the GEMMs); each is
//! handed round-robin to a decode instance, its KV cache sent when its prefill ends, all of a
//! seed's transfers in one engine run (`net::Net::arrivals`); the decode instance admits it when
//! the cache has landed, which is when its first token goes out (so TTFT counts the transfer).
//! Colocated: requests go round-robin to the instances, each prefilling and decoding
//! (`batching`).

use super::ServeJob;
use super::arrivals::{Request, requests};
use super::batching::{Done, Pending, Steps, run_instance};
use super::kv;
use super::net::{Net, Transfer};
use crate::error::Error;
use fabricsim_core::units::Time;
use fabricsim_input::scenario::serve::Mode;

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
    /// Network time of the decode steps it was in.
    pub decode_comm_ps: u64,
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
    let p = prefill(job, net, seed)?;
    let landed = net.arrivals(&p.transfers)?;
    decode(job, net, p, &landed)
}

/// A seed's requests up to their prefills' ends, and the KV transfers they then post (none
/// colocated): what a seed does before the network's answer on the transfers.
#[derive(Clone, Debug)]
pub struct Prefilled {
    pub requests: Vec<Request>,
    pub served: Vec<Served>,
    pub transfers: Vec<Transfer>,
}

/// The prefill pool's queue for `seed`'s requests (disaggregated), or nothing (colocated).
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
            decode_comm_ps: 0,
        })
        .collect();
    let transfers = match job.spec.mode {
        Mode::Colocated => Vec::new(),
        Mode::Disaggregated => prefill_transfers(job, net, &reqs, &mut served)?,
    };
    Ok(Prefilled {
        requests: reqs,
        served,
        transfers,
    })
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
    } = p;
    let d = job.decode.len();
    let mut pending: Vec<Vec<Pending>> = vec![Vec::new(); d];
    let prefill_here = job.spec.mode == Mode::Colocated;
    for (i, r) in reqs.iter().enumerate() {
        let ready_ps = if prefill_here {
            r.arrival_ps
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
    Ok(served)
}

/// The prefill pool's queue: each request's KV transfer to its decode instance (round-robin by
/// arrival), posted when its prefill ends.
fn prefill_transfers(
    job: &ServeJob,
    net: &Net,
    reqs: &[Request],
    served: &mut [Served],
) -> Result<Vec<Transfer>, Error> {
    let c = &job.compute;
    let mut free = vec![0u64; job.prefill.len()];
    let mut transfers = Vec::with_capacity(reqs.len());
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
    Ok(transfers)
}
