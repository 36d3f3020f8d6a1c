//! Front-end (north-south) request traffic: each request's prompt, its tokens x
//! `prompt_bytes_per_token` bytes, sent from a front-end host (`[frontend]`, a
//! `workload::tier` of the cluster's last servers) to the first GPU of the instance that
//! prefills it, before that prefill may start (the request's effective arrival), as a
//! disaggregated deployment's router forwards a request to a prefill instance (Zhong et al.
//! 2024, DistServe, OSDI, §5: the controller dispatches each request to a prefill instance;
//! Patel et al. 2024, Splitwise, ISCA, §4: the cluster-level scheduler routes it at arrival).
//!
//! The router picks the instance at the request's arrival: the one that would be free first
//! by the prefill ends of its own dispatches (what `sim` does without a front-end); each
//! instance then prefills its requests in dispatch order, a prefill starting at the later of
//! its prompt's arrival and the instance's previous end. On a shared fabric the prompts are
//! messages of the seed's one DAG, each prefill's KV transfer depending on the prompts of its
//! instance's requests up to it (gaps: the prefills between), so the engine's one run times
//! prompts, prefill queue and KV transfers together; on a separate network a prompt takes its
//! bytes over the front-end port's rate (closed form, no contention).
//!
//! The responses: each decode step's new token of a request streamed back from the first GPU
//! of its decode instance to the front-end port its prompt left by, one message per request
//! per decode step (`response_bytes_per_token` bytes), as a streaming server flushes each
//! token as its own event (vLLM's OpenAI-compatible server yields one server-sent event per
//! step's output, `vllm/entrypoints/openai/serving_completion.py`). They are a closed form,
//! not engine messages, on either fabric: the decode does not wait on them (TPOT as without a
//! front-end), and a message's unloaded one-way time ([`response_ps`]: its wire bytes over the
//! slower of its two ports plus the path's NIC and switch pipelines and propagation delay;
//! the bytes over the front-end port alone on a separate network) is when it reaches the
//! front-end, so the last token's is the request's end (`Served::e2e_ps`), without contention
//! from the fabric's other traffic (an approximation: the responses are not engine messages).

use super::ServeJob;
use crate::workload::tier::{self, Room, Tier};
use fabricsim_core::error::InputError;
use fabricsim_core::topology::{self as topology, HostId, Topology};
use fabricsim_core::units::Time;
use fabricsim_flow::paths;
use fabricsim_input::scenario::{Design, Scenario, frontend};
use fabricsim_mech::SimParams;

/// Queue pair of the prompts (apart from the KV transfers': ECMP entropy).
pub const QP_PROMPT: u16 = 66;

/// Most dependencies the prompts may add to a seed's DAG ([`prefill_deps`] grows as the
/// square of the requests per prefill instance): an ESTIMATE of what fits a workstation, about
/// 26 bytes each in the DAG and the engine's release tables (measured: 21.3 million took 545 MB
/// more than the run without a front-end, `examples/serve-frontend.toml --requests 4000`), so
/// about 1.7 GB at the bound.
pub const MAX_PROMPT_EDGES: usize = 1 << 26;

/// The front-end hosts of a deployment.
#[derive(Clone, Debug, PartialEq)]
pub struct Frontend {
    /// The tier's servers (`tier::check`).
    pub servers: Vec<u32>,
    pub nics: u32,
    pub separate: bool,
    pub prompt_bytes_per_token: u64,
    pub response_bytes_per_token: u64,
}

impl Frontend {
    /// The scenario's `[frontend]` in `room` on a cluster of `rails` NIC ports per server;
    /// `None` when it has none.
    pub fn resolve(s: &Scenario, rails: u32, room: Room) -> Result<Option<Frontend>, InputError> {
        let Some(f) = frontend::frontend(s)? else {
            return Ok(None);
        };
        let (servers, nics) = tier::check(s, "frontend", f.tier, rails, room)?;
        Ok(Some(Frontend {
            servers,
            nics,
            separate: f.tier.separate,
            prompt_bytes_per_token: f.prompt_bytes_per_token,
            response_bytes_per_token: f.response_bytes_per_token,
        }))
    }

    /// `[frontend]` beside `fabricsim serve`'s deployment of `gpus` GPUs on the first servers
    /// of `design`'s cluster.
    pub fn beside(
        s: &Scenario,
        design: &Design,
        gpus: u64,
    ) -> Result<Option<Frontend>, InputError> {
        let spec = &design.spec;
        let gpn = spec.gpus_per_node as u64;
        let room = Room {
            end: (spec.gpus as u64 / gpn) as u32,
            keep: gpus.div_ceil(gpn) as u32,
            who: "the serving pools",
        };
        Frontend::resolve(s, spec.nics_per_node, room)
    }

    /// The tier on `topo`.
    pub fn tier(&self, topo: &Topology) -> Tier {
        tier::place(topo, self.servers.clone(), self.nics, self.separate)
    }

    /// Bytes of a prompt of `tokens` tokens.
    pub fn prompt_bytes(&self, tokens: u64) -> u64 {
        tokens * self.prompt_bytes_per_token
    }
}

/// Each request's effective arrival on a separate front-end network: its arrival plus its
/// prompt's bytes over the rate of the front-end port it leaves by (request `i` from port `i
/// mod ports`).
pub fn separate_ready(job: &ServeJob, topo: &Topology, arrivals: &[(u64, u64)]) -> Vec<u64> {
    let f = job.frontend.as_ref().expect("a front-end");
    let t = f.tier(topo);
    arrivals
        .iter()
        .enumerate()
        .map(|(i, &(at, tokens))| {
            let h = t.hosts[i % t.hosts.len()];
            let secs = f.prompt_bytes(tokens) as f64 / tier::port_bytes_per_s(topo, h);
            at + Time::from_secs_f64(secs).ps()
        })
        .collect()
}

/// Picoseconds of one response message (one token) from the decode GPU's port `gpu` to the
/// front-end port `fe` on `topo` under `p`. Shared fabric: the unloaded latency the flow
/// engine gives a lone message with cut-through (`flow::paths::one_way_ps`): both NICs'
/// pipelines, the path's switches and propagation delay (`core::topology::up_down`), and its
/// wire bytes (`flow::paths::wire_bytes`) over the slower port. Separate network: the bytes
/// over the front-end port's rate, as its prompts.
pub fn response_ps(f: &Frontend, topo: &Topology, p: &SimParams, gpu: HostId, fe: HostId) -> u64 {
    let bytes = f.response_bytes_per_token;
    let rate = tier::port_bytes_per_s(topo, fe);
    if f.separate {
        return Time::from_secs_f64(bytes as f64 / rate).ps();
    }
    let (switches, delay) =
        topology::up_down(topo, gpu, fe).expect("a shared tier reaches the GPUs");
    let rate = rate.min(tier::port_bytes_per_s(topo, gpu));
    let wire = paths::wire_bytes(p, bytes) as f64 / rate;
    Time::from_secs_f64(wire).ps()
        + delay.ps()
        + switches as u64 * p.switch_latency.ps()
        + 2 * p.nic_latency.ps()
}

/// Prefill ends when each instance prefills its requests in dispatch order: request `i` on
/// `instance[i]` takes `dur[i]` from the later of `ready[i]` and the instance's last end.
pub fn prefill_ends(instance: &[usize], dur: &[u64], ready: &[u64]) -> Vec<u64> {
    let mut free = vec![0u64; instance.iter().max().map_or(0, |&m| m + 1)];
    (0..instance.len())
        .map(|i| {
            let f = &mut free[instance[i]];
            *f = (*f).max(ready[i]) + dur[i];
            *f
        })
        .collect()
}

/// For each request, the earlier requests of its instance and itself, each with the sum of
/// the prefills from it to the request: its prefill ends at the latest of (that request's
/// ready time + the sum), the [`prefill_ends`] recurrence unrolled (a DAG's dependencies with
/// gaps say it: `core::message::MessageDag::dep_gaps`).
pub fn prefill_deps(instance: &[usize], dur: &[u64]) -> Vec<Vec<(usize, u64)>> {
    let mut by: Vec<Vec<usize>> = vec![Vec::new(); instance.iter().max().map_or(0, |&m| m + 1)];
    let mut deps = Vec::with_capacity(instance.len());
    for (j, &q) in instance.iter().enumerate() {
        by[q].push(j);
        let mut sum = 0;
        let mut d: Vec<(usize, u64)> = by[q]
            .iter()
            .rev()
            .map(|&k| {
                sum += dur[k];
                (k, sum)
            })
            .collect();
        d.reverse();
        deps.push(d);
    }
    deps
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_unrolled_dependencies_give_the_recurrences_ends() {
        let instance = [0, 1, 0, 0, 1];
        let dur = [5, 7, 3, 2, 4];
        let ready = [0, 1, 2, 30, 3];
        let ends = prefill_ends(&instance, &dur, &ready);
        assert_eq!(ends, [5, 8, 8, 32, 12]);
        let deps = prefill_deps(&instance, &dur);
        for (j, d) in deps.iter().enumerate() {
            let end = d.iter().map(|&(k, gap)| ready[k] + gap).max().unwrap();
            assert_eq!(end, ends[j], "request {j}");
        }
        assert_eq!(deps[3], [(0, 10), (2, 5), (3, 2)]);
    }
}
