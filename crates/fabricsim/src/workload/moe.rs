//! MoE expert-parallel routing in expectation: from a skew (`moe_skew::Skew`), the experts,
//! top-k and the EP ranks, the share of each rank's routed tokens that goes to each EP rank,
//! and from it the bytes every rank sends every other in the dispatch all-to-all (the tokens to
//! the experts) and in the combine (the expert outputs back: the dispatch's transpose). Expected
//! loads, never sampled (as the step costs loss: ARCHITECTURE.md, invariants): every source rank
//! routes by the same distribution, so rank p sends the same share r_q of its buffer to rank q.
//!
//! - Each token picks top_k distinct experts, so an expert takes at most 1/top_k of the routed
//!   slots: shares over that are cut to it and the excess re-spread over the others in
//!   proportion to their shares, until none is over (water-filling).
//! - With a capacity factor c, an expert keeps at most c / E of the slots, the rest dropped
//!   and not sent (Fedus et al. 2021, Switch Transformer, arXiv 2101.03961, §2.2: expert
//!   capacity = tokens / experts x capacity factor; Lepikhin et al. 2020, GShard, arXiv
//!   2006.16668, §2.2, for top-2).
//! - EP rank q holds experts q E/n .. (q+1) E/n - 1 (Megatron's contiguous local experts), so
//!   under Zipf the hottest experts share rank 0: the worst case of a placement that ignores
//!   load (a histogram in any expert order gives any other placement).

use super::collective::Op;
use super::comm_model::{CommModel, GroupShape};
use fabricsim_input::moe_skew::Skew;

/// The expected routing of one MoE layer over `ranks` EP ranks.
#[derive(Clone, Debug, PartialEq)]
pub enum Route {
    /// Every rank takes 1/n of each buffer: the all-to-all's blocks, byte for byte.
    Uniform { ranks: usize },
    /// Rank q takes `shares[q]` of each rank's buffer (summing to 1 less the dropped share).
    Skewed { shares: Vec<f64> },
}

/// The routed-slot share of each expert under `skew` (sums to 1; each at most 1 / top_k).
/// `Err` says why the skew does not fit the layer (a histogram of another expert count).
pub fn expert_shares(skew: &Skew, experts: u64, top_k: u64) -> Result<Vec<f64>, String> {
    let e = experts as usize;
    let raw: Vec<f64> = match skew {
        Skew::Uniform => vec![1.0; e],
        Skew::Zipf(s) => (1..=e).map(|i| (i as f64).powf(-s)).collect(),
        Skew::Histogram { file, loads } => {
            if loads.len() != e {
                return Err(format!(
                    "the histogram {file} has {} loads for {experts} experts",
                    loads.len()
                ));
            }
            loads.clone()
        }
    };
    let sum: f64 = raw.iter().sum();
    let mut shares: Vec<f64> = raw.iter().map(|v| v / sum).collect();
    cap(&mut shares, 1.0 / top_k.max(1) as f64);
    Ok(shares)
}

/// Cuts every share to `limit` and re-spreads the excess over the shares under it in
/// proportion to them, until none is over (the total is kept when `limit` x len >= 1).
fn cap(shares: &mut [f64], limit: f64) {
    // Each pass pins at least one more share at the limit, so len passes suffice.
    for _ in 0..shares.len() {
        let excess: f64 = shares.iter().map(|&s| (s - limit).max(0.0)).sum();
        if excess <= 0.0 {
            return;
        }
        let under: f64 = shares.iter().filter(|&&s| s < limit).sum();
        for s in shares.iter_mut() {
            *s = if *s >= limit {
                limit
            } else {
                *s + excess * *s / under
            };
        }
    }
}

impl Route {
    /// The routing of a layer of `experts` experts, `top_k` per token, over `ranks` EP ranks
    /// (`experts` a multiple of `ranks`), keeping at most `capacity` x the even share per
    /// expert when given. Uniform routing with no capacity is [`Route::Uniform`].
    pub fn new(
        skew: &Skew,
        experts: u64,
        top_k: u64,
        ranks: usize,
        capacity: Option<f64>,
    ) -> Result<Route, String> {
        if *skew == Skew::Uniform && capacity.is_none_or(|c| c >= 1.0) {
            return Ok(Route::Uniform { ranks });
        }
        let mut shares = expert_shares(skew, experts, top_k)?;
        if let Some(c) = capacity {
            let keep = c / experts as f64;
            shares.iter_mut().for_each(|s| *s = s.min(keep));
        }
        let per = (experts as usize / ranks.max(1)).max(1);
        Ok(Route::Skewed {
            shares: shares.chunks(per).map(|c| c.iter().sum()).collect(),
        })
    }

    /// The share of the routed tokens kept (sent): 1 but under a capacity factor.
    pub fn kept(&self) -> f64 {
        match self {
            Route::Uniform { .. } => 1.0,
            Route::Skewed { shares } => shares.iter().sum::<f64>().min(1.0),
        }
    }

    pub fn ranks(&self) -> usize {
        match self {
            Route::Uniform { ranks } => *ranks,
            Route::Skewed { shares } => shares.len(),
        }
    }

    /// Bytes each rank sends rank q in the dispatch, for a buffer of `bytes` (every rank's
    /// row is the same): uniform, `collective::piece` (the all-to-all's blocks); skewed, the
    /// kept bytes apportioned by largest remainder (ties to the lower rank), so they sum to
    /// the buffer's kept share.
    pub fn row(&self, bytes: u64) -> Vec<u64> {
        match self {
            Route::Uniform { ranks } => super::collective::split(bytes, *ranks as u64).collect(),
            Route::Skewed { shares } => {
                let kept: f64 = shares.iter().sum();
                let total = (bytes as f64 * kept.min(1.0)).round() as u64;
                let exact: Vec<f64> = shares.iter().map(|s| total as f64 * s / kept).collect();
                let mut row: Vec<u64> = exact.iter().map(|x| x.floor() as u64).collect();
                let left = total.saturating_sub(row.iter().sum());
                let mut order: Vec<usize> = (0..row.len()).collect();
                order.sort_by(|&a, &b| {
                    let (ra, rb) = (exact[a] - row[a] as f64, exact[b] - row[b] as f64);
                    rb.total_cmp(&ra).then(a.cmp(&b))
                });
                for &q in order.iter().take(left as usize) {
                    row[q] += 1;
                }
                row
            }
        }
    }

    /// The bytes rank `p` sends rank `q` (given the dispatch `row`): the dispatch sends the
    /// tokens for q's experts, the combine returns p's experts' outputs (the transpose).
    pub fn pair(row: &[u64], combine: bool, p: usize, q: usize) -> u64 {
        if combine { row[p] } else { row[q] }
    }

    /// The slowest rank over the mean one, and the slowest over a uniform rank: per rank, the
    /// larger of the bytes it sends and receives over the link class the uniform all-to-all
    /// is bound by (the fabric when the ranks span servers, else NVLink; `server[p]` is rank
    /// p's server), the mean over ranks of the bytes sent. 1 and 1 for uniform routing.
    pub fn slowest(&self, server: &[u32]) -> Slowest {
        let Route::Skewed { shares } = self else {
            return Slowest::EVEN;
        };
        let n = shares.len();
        let spans = server.iter().any(|&s| s != server[0]);
        let crosses = |p: usize, q: usize| p != q && (server[p] != server[q]) == spans;
        let (mut most, mut sent_sum) = (0.0f64, 0.0);
        for p in 0..n {
            let sent: f64 = (0..n).filter(|&q| crosses(p, q)).map(|q| shares[q]).sum();
            let recv = shares[p] * (0..n).filter(|&q| crosses(q, p)).count() as f64;
            most = most.max(sent.max(recv));
            sent_sum += sent;
        }
        // A uniform rank moves 1/n of its buffer to each peer across the link class.
        let peers = (0..n).filter(|&q| crosses(0, q)).count() as f64;
        let uniform = peers / n as f64;
        let mean = sent_sum / n as f64;
        Slowest {
            kept: self.kept(),
            over_mean: if mean > 0.0 { most / mean } else { 1.0 },
            over_uniform: if uniform > 0.0 { most / uniform } else { 1.0 },
        }
    }
}

/// The time of one dispatch or combine of `bytes` per rank on `group` whose slowest rank is
/// `slowest` ([`Route::slowest`]): `comm`'s all-to-all at the slowest rank's bytes (its
/// bandwidth term scaled; the exchange ends when that rank does).
pub fn exchange_time_s(
    comm: &dyn CommModel,
    bytes: f64,
    group: GroupShape,
    slowest: Slowest,
) -> f64 {
    let at = (bytes * slowest.over_uniform).round() as u64;
    comm.time_s(Op::AllToAll, at, group)
}

/// How much longer than an even rank the slowest rank of a skewed all-to-all works.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Slowest {
    /// The share of the routed tokens sent (the rest dropped over capacity).
    pub kept: f64,
    /// The slowest rank's bytes over the mean rank's (1: balanced).
    pub over_mean: f64,
    /// The slowest rank's bytes over a rank's under uniform routing with no drop: the factor
    /// on the all-to-all's bandwidth term.
    pub over_uniform: f64,
}

impl Slowest {
    pub const EVEN: Slowest = Slowest {
        kept: 1.0,
        over_mean: 1.0,
        over_uniform: 1.0,
    };
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::collective::piece;

    #[test]
    fn uniform_rows_are_the_all_to_all_blocks() {
        for (bytes, n) in [(0u64, 4usize), (5, 8), (4096, 3), (3 << 20, 64)] {
            let r = Route::new(&Skew::Uniform, 256, 8, n, None).unwrap();
            let row = r.row(bytes);
            assert_eq!(row.len(), n);
            for (q, &b) in row.iter().enumerate() {
                assert_eq!(b, piece(bytes, n as u64, q as u64));
            }
            assert_eq!(r.slowest(&vec![0; n]), Slowest::EVEN);
        }
    }

    #[test]
    fn zipf_shares_sum_to_one_and_the_hottest_rank_matches_the_closed_form() {
        // 64 experts, top-2, 8 ranks of 8 experts; s = 0.5: no share over 1/2, so rank 0
        // takes H(8, s) / H(64, s), H(n, s) = sum of i^-s for i = 1..n.
        let h = |n: usize, s: f64| (1..=n).map(|i| (i as f64).powf(-s)).sum::<f64>();
        for s in [0.5, 1.0, 1.5] {
            let shares = expert_shares(&Skew::Zipf(s), 64, 2).unwrap();
            assert!((shares.iter().sum::<f64>() - 1.0).abs() < 1e-12);
            assert!(shares.iter().all(|&x| x <= 0.5 + 1e-12));
            let r = Route::new(&Skew::Zipf(s), 64, 2, 8, None).unwrap();
            let Route::Skewed { shares: ranks } = &r else {
                panic!()
            };
            if 1.0 / h(64, s) <= 0.5 {
                assert!((ranks[0] - h(8, s) / h(64, s)).abs() < 1e-12, "s {s}");
            }
            // The routed bytes of a buffer of T x top_k x hidden x 2 bytes all arrive.
            let bytes = 4096 * 2 * 7168 * 2;
            assert_eq!(r.row(bytes).iter().sum::<u64>(), bytes);
        }
    }

    #[test]
    fn a_share_over_one_per_token_is_cut_and_re_spread() {
        // Zipf 3 over 4 experts, top-2: 1/1 : 1/8 : 1/27 : 1/64 puts 85% on expert 0, over
        // the 1/2 a token's two distinct experts allow; it keeps 1/2, the rest re-spread.
        let s = expert_shares(&Skew::Zipf(3.0), 4, 2).unwrap();
        assert!((s[0] - 0.5).abs() < 1e-12);
        assert!((s.iter().sum::<f64>() - 1.0).abs() < 1e-12);
        assert!(s[1] > s[2] && s[2] > s[3]);
        assert!((s[1] / s[2] - 27.0 / 8.0).abs() < 1e-9);
    }

    #[test]
    fn capacity_drops_what_is_over_and_the_slowest_rank_follows() {
        let h = Skew::Histogram {
            file: "h".into(),
            loads: vec![4.0, 2.0, 1.0, 1.0],
        };
        // Shares 1/2, 1/4, 1/8, 1/8 over 4 ranks (one expert each), top-1.
        let r = Route::new(&h, 4, 1, 4, None).unwrap();
        // Across 4 servers: rank 0 receives 1/2 from each of 3 peers (1.5); uniform 3/4.
        let sl = r.slowest(&[0, 1, 2, 3]);
        assert!((sl.over_uniform - 2.0).abs() < 1e-12, "{sl:?}");
        // Capacity 1.5 x 1/4: expert 0 keeps 3/8, expert 1 1/4: kept 7/8 of each buffer.
        let c = Route::new(&h, 4, 1, 4, Some(1.5)).unwrap();
        assert_eq!(c.row(800), vec![300, 200, 100, 100]);
        assert!(c.slowest(&[0, 1, 2, 3]).over_uniform < sl.over_uniform);
        assert!(Route::new(&h, 8, 1, 4, None).is_err());
    }
}
