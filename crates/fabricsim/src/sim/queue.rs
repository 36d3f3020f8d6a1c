//! The event queue: a monotone radix heap (Ahuja, Mehlhorn, Orlin & Tarjan, "Faster algorithms
//! for the shortest path problem", JACM 1990) over coarse keys `time >> SHIFT`, written out here.
//!
//! Bucket `i` (1..=64) holds entries whose coarse key differs from the current one first at bit
//! `i - 1`. The entries of the current coarse key (a window of 2^SHIFT ps) sit in `current`,
//! sorted by time; each entry moves down at most 64 - SHIFT times instead of 64, the measured
//! hot spot of a picosecond-keyed radix heap. Entries are appended and redistributed in order and
//! `current` is sorted stably, so equal times pop in insertion order (FIFO ties) without a
//! sequence number. Push is O(1) outside the current window.

/// log2 of the window width in picoseconds.
const SHIFT: u32 = 12;

/// A time-ordered queue of `E` with FIFO order among equal times. Times pushed must not be
/// earlier than the last popped time (a discrete-event simulation never schedules the past).
pub struct RadixQueue<E> {
    /// The current coarse key.
    last: u64,
    len: usize,
    /// Entries of the current window, sorted by time; `head` is the next to pop.
    current: Vec<(u64, E)>,
    head: usize,
    /// Bit i-1 set: bucket i is non-empty, so a refill finds the lowest in O(1).
    occupied: u64,
    buckets: Vec<Vec<(u64, E)>>,
    scratch: Vec<(u64, E)>,
}

#[inline]
fn bucket_of(k: u64, last: u64) -> usize {
    (64 - (k ^ last).leading_zeros()) as usize
}

impl<E: Copy> RadixQueue<E> {
    pub fn new() -> Self {
        RadixQueue {
            last: 0,
            len: 0,
            current: Vec::new(),
            head: 0,
            occupied: 0,
            buckets: (0..65).map(|_| Vec::new()).collect(),
            scratch: Vec::new(),
        }
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    #[inline]
    pub fn push(&mut self, t: u64, e: E) {
        let k = t >> SHIFT;
        debug_assert!(k >= self.last, "scheduled in the past: {t}");
        self.len += 1;
        if k == self.last {
            // In the window being drained: after every entry with a time <= t.
            let pos = self.head + self.current[self.head..].partition_point(|x| x.0 <= t);
            self.current.insert(pos, (t, e));
            return;
        }
        let b = bucket_of(k, self.last);
        self.occupied |= 1 << (b - 1);
        self.buckets[b].push((t, e));
    }

    /// Every pending entry, in no particular order.
    pub fn iter(&self) -> impl Iterator<Item = &(u64, E)> {
        self.current[self.head..]
            .iter()
            .chain(self.buckets[1..].iter().flatten())
    }

    /// Removes and returns the earliest entry (FIFO among equal times).
    #[inline]
    pub fn pop(&mut self) -> Option<(u64, E)> {
        self.pop_with(|_| {})
    }

    /// As `pop`; `ready` sees each entry of a new window as it becomes current (the engine
    /// prefetches their packets, so the memory loads overlap).
    #[inline]
    pub fn pop_with(&mut self, ready: impl FnMut(&E)) -> Option<(u64, E)> {
        if self.head == self.current.len() {
            if self.len == 0 {
                return None;
            }
            self.refill(ready);
        }
        let e = self.current[self.head];
        self.head += 1;
        self.len -= 1;
        Some(e)
    }

    /// The current window is exhausted: open the next one from the lowest non-empty bucket.
    fn refill(&mut self, mut ready: impl FnMut(&E)) {
        self.current.clear();
        self.head = 0;
        debug_assert!(self.occupied != 0, "len > 0 implies a non-empty bucket");
        let i = self.occupied.trailing_zeros() as usize + 1;
        self.occupied &= !(1 << (i - 1));
        std::mem::swap(&mut self.scratch, &mut self.buckets[i]);
        let min = self
            .scratch
            .iter()
            .map(|e| e.0 >> SHIFT)
            .min()
            .unwrap_or(self.last);
        self.last = min;
        for &(t, e) in &self.scratch {
            // Every entry lands below bucket `i`: they share the bits above it with `min`.
            let b = bucket_of(t >> SHIFT, min);
            if b == 0 {
                self.current.push((t, e));
            } else {
                self.occupied |= 1 << (b - 1);
                self.buckets[b].push((t, e));
            }
        }
        self.scratch.clear();
        // Stable: equal times keep their insertion order. A window arrives nearly sorted (its
        // entries were pushed roughly in time order), so insertion sort (no allocation, moves
        // only for the few inversions) unless it is long.
        let v = &mut self.current[..];
        if v.len() <= 64 {
            for i in 1..v.len() {
                let x = v[i];
                let mut j = i;
                while j > 0 && v[j - 1].0 > x.0 {
                    v[j] = v[j - 1];
                    j -= 1;
                }
                v[j] = x;
            }
        } else {
            v.sort_by_key(|e| e.0);
        }
        for e in &self.current {
            ready(&e.1);
        }
    }
}

impl<E: Copy> Default for RadixQueue<E> {
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Rng;

    #[test]
    fn pops_in_time_order_with_fifo_ties_like_a_stable_sort() {
        for seed in 0..20 {
            let mut rng = Rng::new(seed);
            let mut q = RadixQueue::new();
            let mut pushed = 0usize;
            let mut now = 0u64;
            let mut popped = Vec::new();
            let mut next_id = 0u32;
            for _ in 0..20_000 {
                if rng.below(3) > 0 {
                    // Delays within and across windows; few distinct values so ties are common.
                    let t = now + rng.below(8) * [1u64, 1000, 100_000][rng.below(3) as usize];
                    q.push(t, next_id);
                    pushed += 1;
                    next_id += 1;
                } else if let Some((t, id)) = q.pop() {
                    assert!(t >= now);
                    now = t;
                    popped.push((t, id));
                }
            }
            while let Some(e) = q.pop() {
                popped.push(e);
            }
            assert_eq!(popped.len(), pushed);
            for w in popped.windows(2) {
                assert!(w[0].0 <= w[1].0, "time order broken at {w:?}");
                if w[0].0 == w[1].0 {
                    assert!(w[0].1 < w[1].1, "FIFO tie order broken at {w:?}");
                }
            }
        }
    }
}
