//! Continuous batching on one instance (Yu et al. 2022, Orca, OSDI: the batch is re-formed at
//! every iteration; requests join and leave between steps). Before each step the instance
//! admits waiting requests first come first served while the batch stays within `max_batch`
//! requests and `max_batch_tokens` tokens (one per running decode, a prompt's tokens for a
//! prefill). A colocated instance runs the admitted prompts' prefill as its own iteration
//! before decoding again (prefill first, as vLLM's scheduler does without chunked prefill:
//! Kwon et al. 2023, SOSP, §4.5), which stalls the running decodes; a decode instance of a
//! disaggregated deployment admits requests whose KV cache has landed.

use crate::error::Error;

/// A request waiting for this instance from `ready_ps` on.
#[derive(Clone, Copy, Debug)]
pub struct Pending {
    pub id: usize,
    pub ready_ps: u64,
    pub prompt: u64,
    pub output: u64,
}

/// The cost of an instance's iterations, (compute ps, network ps).
pub trait Steps {
    fn prefill(&self, prompt: u64) -> Result<(u64, u64), Error>;
    fn decode(&self, batch: u64, context: u64) -> Result<(u64, u64), Error>;
}

/// What the instance did for one request.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Done {
    /// When its first token was out (a colocated instance's prefill end; the KV landing on a
    /// decode instance).
    pub first_token_ps: u64,
    pub finish_ps: u64,
    /// Colocated: its own prefill's compute and network time.
    pub prefill_compute_ps: u64,
    pub prefill_comm_ps: u64,
    /// Network time of the decode steps it was in.
    pub decode_comm_ps: u64,
}

struct Running {
    id: usize,
    prompt: u64,
    /// Tokens produced so far (the first from the prefill).
    produced: u64,
    output: u64,
}

/// Runs `pending` (in ready order) to completion; `prefill_here` for a colocated instance.
/// Returns each request's outcome by its index in `pending`.
pub fn run_instance(
    pending: &[Pending],
    prefill_here: bool,
    max_batch: u64,
    max_batch_tokens: u64,
    steps: &impl Steps,
) -> Result<Vec<Done>, Error> {
    let mut done = vec![Done::default(); pending.len()];
    let mut running: Vec<Running> = Vec::new();
    let (mut next, mut t) = (0usize, 0u64);
    while next < pending.len() || !running.is_empty() {
        if running.is_empty() && pending[next].ready_ps > t {
            t = pending[next].ready_ps;
        }
        // Admit first come first served within the limits.
        let mut admitted = Vec::new();
        let mut tokens = running.len() as u64;
        while let Some(p) = pending.get(next) {
            let cost = if prefill_here { p.prompt } else { 1 };
            let batch = (running.len() + admitted.len()) as u64;
            if p.ready_ps > t || batch >= max_batch || tokens + cost > max_batch_tokens {
                break;
            }
            tokens += cost;
            admitted.push(next);
            next += 1;
        }
        let prefilled = prefill_here && !admitted.is_empty();
        if prefilled {
            let mut costs = Vec::with_capacity(admitted.len());
            for &i in &admitted {
                let (c, n) = steps.prefill(pending[i].prompt)?;
                costs.push((c, n));
                t += c + n;
            }
            for (&i, (c, n)) in admitted.iter().zip(costs) {
                done[i].prefill_compute_ps = c;
                done[i].prefill_comm_ps = n;
            }
        }
        for i in admitted {
            let p = pending[i];
            done[i].first_token_ps = if prefill_here { t } else { p.ready_ps };
            if p.output <= 1 {
                done[i].finish_ps = done[i].first_token_ps;
            } else {
                running.push(Running {
                    id: i,
                    prompt: p.prompt,
                    produced: 1,
                    output: p.output,
                });
            }
        }
        // After a prefill iteration, admit again before decoding.
        if prefilled || running.is_empty() {
            continue;
        }
        let context: u64 = running.iter().map(|r| r.prompt + r.produced).sum();
        let (c, n) = steps.decode(running.len() as u64, context)?;
        t += c + n;
        for r in &mut running {
            r.produced += 1;
            done[r.id].decode_comm_ps += n;
            if r.produced == r.output {
                done[r.id].finish_ps = t;
            }
        }
        running.retain(|r| r.produced < r.output);
    }
    Ok(done)
}
