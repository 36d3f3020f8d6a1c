//! Rates of whole components, cached by the multiset of (route, cap) of their flows.
//!
//! Every step of a ring, and every repetition of a collective, puts the same routes with the
//! same caps on the fabric again. Max-min rates depend only on that multiset (and on the link
//! capacities, fixed for a run), and flows with the same route and cap get the same rate, so a
//! component seen before is answered by a lookup instead of a solve.
//!
//! The key is a 128-bit multiset hash (two independent 64-bit mixes of each (route, cap),
//! summed, so the order of flows does not matter) plus the flow count; a hit also checks that
//! every flow's (route, cap) is in the stored entry.

use std::collections::BTreeMap;

use super::calibration::CACHE_MIN_FLOWS;

struct Entry {
    /// Sorted, deduplicated (route, cap) with the rate of every flow that has them.
    rates: Vec<(u32, u64, u64)>,
}

pub struct RateCache {
    entries: BTreeMap<(u64, u64, usize), Entry>,
    /// Stored (route, cap, rate) triples, bounded by `budget`.
    stored: usize,
    budget: usize,
    scratch: Vec<u64>,
}

/// SplitMix64 finalizer (Steele, Lea & Flood, OOPSLA 2014): a strong 64-bit mix.
#[inline]
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

fn signature<T>(flows: &[u32], st: &[T], key: impl Fn(&T) -> (u32, u64)) -> (u64, u64, usize) {
    let (mut a, mut b) = (0u64, 0u64);
    for &f in flows {
        let (r, c) = key(&st[f as usize]);
        let x = mix(r as u64 ^ mix(c));
        a = a.wrapping_add(x);
        b = b.wrapping_add(mix(x ^ 0x9E37_79B9_7F4A_7C15));
    }
    (a, b, flows.len())
}

impl RateCache {
    pub fn new(budget: usize) -> RateCache {
        RateCache {
            entries: BTreeMap::new(),
            stored: 0,
            budget,
            scratch: Vec::new(),
        }
    }

    /// The rate of each of `flows` (same order) when this multiset was stored before; `key`
    /// gives a flow's (route, cap) from its state in `st`.
    pub fn lookup<T>(
        &mut self,
        flows: &[u32],
        st: &[T],
        key: impl Fn(&T) -> (u32, u64),
    ) -> Option<&[u64]> {
        if flows.len() < CACHE_MIN_FLOWS {
            return None;
        }
        let e = self.entries.get(&signature(flows, st, &key))?;
        self.scratch.clear();
        for &f in flows {
            let key = key(&st[f as usize]);
            let i = e.rates.partition_point(|t| (t.0, t.1) < key);
            match e.rates.get(i) {
                Some(t) if (t.0, t.1) == key => self.scratch.push(t.2),
                _ => return None,
            }
        }
        Some(&self.scratch)
    }

    /// Stores the rates just computed for `flows`, while the budget allows; `key` gives a
    /// flow's (route, cap, rate) from its state in `st`.
    pub fn store<T>(&mut self, flows: &[u32], st: &[T], key: impl Fn(&T) -> (u32, u64, u64)) {
        // Deduplication only shrinks the entry: a set larger than the room left is skipped
        // before it is copied.
        if flows.len() < CACHE_MIN_FLOWS || self.stored + flows.len() > self.budget {
            return;
        }
        let mut rates: Vec<(u32, u64, u64)> = flows.iter().map(|&f| key(&st[f as usize])).collect();
        rates.sort_unstable();
        rates.dedup();
        self.stored += rates.len();
        let sig = signature(flows, st, |t| {
            let (r, c, _) = key(t);
            (r, c)
        });
        self.entries.insert(sig, Entry { rates });
    }
}
