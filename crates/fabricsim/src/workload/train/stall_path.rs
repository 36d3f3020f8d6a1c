//! What a collective's timeouts cost along its longest path, in expectation: a call ends when its
//! last message does, so a stall delays it only through the dependency chains it lies on, and
//! two stalls on messages that do not depend on each other overlap instead of adding (a ring's
//! ranks wait out one timer together). The sum over dependency levels that
//! `loss_cost::dag_loss` keeps for small delays overcounts such stalls 1.2-2.8x where several
//! fall in one call (`docs/loss-expectation.md`).
//!
//! E[delay] = Σ_k P(K = k) g(k), over the number `K` of stalled messages. `P(K = k)` is exact:
//! the Poisson-binomial law of the messages' stall probabilities (a normal law of the same mean
//! and variance past [`EXACT_WORK`]; Lyapunov's central limit theorem). `g(k)`, the longest
//! path's growth given `k` stalls, is the mean over [`PLACEMENTS`] placements of the stalls,
//! each drawn in proportion to the messages' probabilities without replacement (exponential
//! clocks: Efraimidis and Spirakis, "Weighted random sampling with a reservoir", IPL 2006) from
//! a fixed stream, nested (placement k+1 adds one stall to placement k), so `g` is
//! non-decreasing in `k` and the expectation non-decreasing in every probability. So a rare
//! event is paid at its exact probability (one stall delays the call by its duration less its
//! slack), and only where the stalls fall, not how many there are, is sampled.
//!
//! Every message weighs one level's share of the call's lossless time, so the lossless longest
//! path is the call's time; a stall adds its duration to its message.

use std::collections::BTreeMap;

use fabricsim_core::message::{MessageDag, Path};
use fabricsim_core::rng::{Rng, Stream};

/// Placements of the stalls averaged per stall count.
pub const PLACEMENTS: u32 = 8;
/// Stall counts the longest path is measured at (the others interpolated between them).
const GRID: usize = 16;
/// Work (messages x counts) past which `P(K = k)` is the normal approximation.
const EXACT_WORK: f64 = 2e7;
/// The stream id of the placements (fixed: the expectation does not move with the run's seed).
const PLACEMENT_ID: u64 = 0x57a11;

/// A message that may stall: its index in the DAG, the probability that it does and for how long.
#[derive(Clone, Copy, Debug)]
pub struct Stall {
    pub message: u32,
    pub prob: f64,
    pub duration_s: f64,
}

/// Per message, the one before it on its queue pair (`NONE` for the first): an RC queue pair
/// completes its messages in order (IBA Vol. 1 9.5), so a stalled one holds those behind it.
fn queue_order(dag: &MessageDag) -> Vec<u32> {
    let mut last: BTreeMap<(u32, u32, u16), u32> = BTreeMap::new();
    dag.messages
        .iter()
        .enumerate()
        .map(|(i, m)| match m.path {
            Path::Net => last
                .insert((m.src.0, m.dst.0, m.qp), i as u32)
                .unwrap_or(NONE),
            Path::NvLink => NONE,
        })
        .collect()
}

const NONE: u32 = u32::MAX;

/// The longest path through `dag` (every message `level_s` plus its `extra`, none completing
/// before the one `before` it), its end time.
fn longest(
    dag: &MessageDag,
    before: &[u32],
    level_s: f64,
    extra: &[f64],
    finish: &mut [f64],
) -> f64 {
    let mut end = 0.0f64;
    for (i, m) in dag.messages.iter().enumerate() {
        let deps = &dag.deps[m.deps_start as usize..(m.deps_start + m.deps_len) as usize];
        let ready = deps
            .iter()
            .map(|&d| finish[d as usize])
            .fold(0.0f64, f64::max);
        let behind = before
            .get(i)
            .filter(|&&b| b != NONE)
            .map_or(0.0, |&b| finish[b as usize]);
        finish[i] = (ready + level_s + extra[i]).max(behind);
        end = end.max(finish[i]);
    }
    end
}

/// `P(K = k)` for `k = 0..=cap`: exact (Poisson-binomial, one message at a time) when small
/// enough, else the normal law of mean Σp and variance Σp(1-p) at the integers.
fn count_law(probs: &[f64], cap: usize) -> Vec<f64> {
    if probs.len() as f64 * (cap + 1) as f64 <= EXACT_WORK {
        let mut pmf = vec![0.0f64; cap + 1];
        pmf[0] = 1.0;
        let mut top = 0usize;
        for &p in probs {
            top = (top + 1).min(cap);
            for k in (1..=top).rev() {
                pmf[k] = pmf[k] * (1.0 - p) + pmf[k - 1] * p;
            }
            pmf[0] *= 1.0 - p;
        }
        return pmf;
    }
    let mean: f64 = probs.iter().sum();
    let sd = probs
        .iter()
        .map(|p| p * (1.0 - p))
        .sum::<f64>()
        .sqrt()
        .max(1e-9);
    let dens: Vec<f64> = (0..=cap)
        .map(|k| (-0.5 * ((k as f64 - mean) / sd).powi(2)).exp())
        .collect();
    let total: f64 = dens.iter().sum();
    dens.iter().map(|d| d / total).collect()
}

/// The stall counts to measure: every one up to `cap` when few, else [`GRID`] points spread
/// over where the law has its mass (and 1).
fn grid(pmf: &[f64]) -> Vec<usize> {
    let cap = pmf.len() - 1;
    if cap <= GRID {
        return (1..=cap).collect();
    }
    let (mut cdf, mut lo, mut hi) = (0.0, cap, 1);
    for (k, p) in pmf.iter().enumerate() {
        if cdf < 1e-9 && cdf + p >= 1e-9 {
            lo = k.max(1);
        }
        cdf += p;
        if cdf < 1.0 - 1e-12 {
            hi = k + 1;
        }
    }
    let hi = hi.clamp(lo, cap);
    let mut ks: Vec<usize> = std::iter::once(1)
        .chain((0..GRID).map(|j| lo + (hi - lo) * j / (GRID - 1)))
        .collect();
    ks.sort_unstable();
    ks.dedup();
    ks
}

/// The expected growth of `dag`'s longest path (messages weighing `level_s`) from `stalls`;
/// `in_order`: the fabric messages of a queue pair complete in order (RC; not UEC RUD).
pub fn expected_delay(dag: &MessageDag, level_s: f64, stalls: &[Stall], in_order: bool) -> f64 {
    let stalls: Vec<Stall> = stalls.iter().copied().filter(|s| s.prob > 0.0).collect();
    if stalls.is_empty() {
        return 0.0;
    }
    let probs: Vec<f64> = stalls.iter().map(|s| s.prob.min(1.0)).collect();
    let mean: f64 = probs.iter().sum();
    let cap = ((mean + 10.0 * mean.sqrt() + 10.0).ceil() as usize).min(stalls.len());
    let pmf = count_law(&probs, cap);
    let ks = grid(&pmf);
    let top = *ks.last().expect("a stall gives a count");
    let n = dag.messages.len();
    let (mut extra, mut finish) = (vec![0.0f64; n], vec![0.0f64; n]);
    let before = if in_order {
        queue_order(dag)
    } else {
        Vec::new()
    };
    let base = longest(dag, &before, level_s, &extra, &mut finish);
    let mut g = vec![0.0f64; ks.len()];
    let mut rng = Rng::stream(0, Stream::StallPlacement, PLACEMENT_ID);
    let mut order: Vec<(f64, usize)> = Vec::with_capacity(stalls.len());
    for _ in 0..PLACEMENTS {
        // Exponential clocks of rates `prob`: the first `k` to ring are a draw of `k` without
        // replacement in proportion to the probabilities.
        order.clear();
        order.extend(
            probs
                .iter()
                .enumerate()
                .map(|(i, &p)| (rng.exp(1.0) / p, i)),
        );
        if top < order.len() {
            order.select_nth_unstable_by(top, |a, b| a.0.total_cmp(&b.0));
        }
        order[..top].sort_unstable_by(|a, b| a.0.total_cmp(&b.0));
        extra.iter_mut().for_each(|x| *x = 0.0);
        let mut placed = 0usize;
        for (j, &k) in ks.iter().enumerate() {
            for &(_, i) in &order[placed..k] {
                extra[stalls[i].message as usize] += stalls[i].duration_s;
            }
            placed = k;
            g[j] += longest(dag, &before, level_s, &extra, &mut finish) - base;
        }
    }
    g.iter_mut().for_each(|x| *x /= PLACEMENTS as f64);
    // Σ_k P(K = k) g(k), g linear between the measured counts (g(0) = 0).
    let at = |k: usize| -> f64 {
        let j = ks.partition_point(|&x| x < k);
        if j < ks.len() && ks[j] == k {
            return g[j];
        }
        let (k0, g0) = if j == 0 {
            (0, 0.0)
        } else {
            (ks[j - 1], g[j - 1])
        };
        if j == ks.len() {
            return g0;
        }
        g0 + (g[j] - g0) * (k - k0) as f64 / (ks[j] - k0) as f64
    };
    pmf.iter().enumerate().skip(1).map(|(k, p)| p * at(k)).sum()
}

#[cfg(test)]
mod tests {
    use super::*;
    use fabricsim_core::message::Message;
    use fabricsim_core::topology::HostId;
    use fabricsim_core::units::Time;

    /// `chains` independent chains of `len` messages each.
    fn chains(chains: u32, len: u32) -> MessageDag {
        let mut dag = MessageDag::default();
        for c in 0..chains {
            for l in 0..len {
                let deps = if l == 0 {
                    vec![]
                } else {
                    vec![dag.messages.len() as u32 - 1]
                };
                let start = dag.deps.len() as u32;
                dag.deps.extend(&deps);
                dag.messages.push(Message {
                    src: HostId(c),
                    dst: HostId(c + 1),
                    bytes: 1,
                    start: Time::ZERO,
                    delay: Time::ZERO,
                    deps_start: start,
                    deps_len: deps.len() as u32,
                    qp: 0,
                    path: Path::Net,
                    class: None,
                    tag: 0,
                });
            }
        }
        dag
    }

    /// What the stalls would cost one after another: Σ prob x duration.
    fn serial_s(stalls: &[Stall]) -> f64 {
        stalls.iter().map(|s| s.prob * s.duration_s).sum()
    }

    fn every(dag: &MessageDag, prob: f64) -> Vec<Stall> {
        (0..dag.messages.len() as u32)
            .map(|message| Stall {
                message,
                prob,
                duration_s: 1.0,
            })
            .collect()
    }

    #[test]
    fn stalls_on_one_chain_add_up() {
        let dag = chains(1, 20);
        let d = expected_delay(&dag, 1e-6, &every(&dag, 0.3), true);
        assert!((d - 6.0).abs() < 1e-9, "{d:?}");
        assert!((serial_s(&every(&dag, 0.3)) - 6.0).abs() < 1e-9);
    }

    #[test]
    fn stalls_on_parallel_messages_overlap() {
        // 20 chains of one message: the call waits for the longest, E = 1 - (1-q)^20.
        let dag = chains(20, 1);
        let d = expected_delay(&dag, 1e-6, &every(&dag, 0.3), true);
        let exact = 1.0 - 0.7f64.powi(20);
        assert!((d - exact).abs() < 1e-9, "{d:?} vs {exact}");
        assert!(serial_s(&every(&dag, 0.3)) > 5.9);
    }

    #[test]
    fn a_rare_stall_is_paid_at_its_probability() {
        // 4 chains of 50: at q = 1e-6 per message almost surely at most one stall.
        let dag = chains(4, 50);
        let d = expected_delay(&dag, 1e-6, &every(&dag, 1e-6), true);
        assert!((d / 2e-4 - 1.0).abs() < 1e-3, "{d:?}");
    }

    #[test]
    fn the_delay_grows_with_the_probability() {
        let dag = chains(8, 30);
        let mut last = 0.0;
        for q in [1e-4, 1e-3, 1e-2, 0.05, 0.2, 0.5] {
            let d = expected_delay(&dag, 1e-6, &every(&dag, q), true);
            assert!(d >= last, "{q}: {d} < {last}");
            last = d;
        }
    }
}
