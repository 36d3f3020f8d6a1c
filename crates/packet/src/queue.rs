//! The event queue: a calendar queue (R. Brown, "Calendar queues: a fast O(1) priority queue
//! implementation for the simulation event set problem", CACM 31(10), 1988) with a fixed bucket
//! width, written out here, plus a binary heap for events beyond the calendar's horizon.
//!
//! Times map to coarse keys `time >> SHIFT` (buckets of 4.096 ns, a few to a hundred events each
//! on a busy fabric). The wheel holds the `BUCKETS` keys from the current one on, bucket `key % BUCKETS`,
//! appended to in push order, as a chain of 16-entry chunks from one pool; an occupancy bitmap
//! finds the next non-empty bucket. An opened bucket's chunks go back to the pool's free list
//! and the next chunks taken are the last freed, so pushes write lines still in cache, and the
//! wheel's memory is the pending events' (a `Vec` per bucket kept each bucket's largest burst:
//! 5.7 MB over 1,400 pages on the 1,024-host benchmark, where a push wrote a line last touched a
//! horizon ago). A wheel entry is one `u64`: the time's offset in its bucket in the top `SHIFT`
//! bits, the event packed (`Packed`) below, so the wheel, written at a push and read a hop later,
//! is half the size of (time, event) pairs. When the current bucket runs dry the next one is
//! sorted stably by offset, so equal times pop in push order (FIFO ties) without a sequence
//! number: in its chunk when it fits one, else copied out (spread by the offsets' top bits first).
//! A push is O(1) inside the horizon (packet hops: a link's propagation plus a serialization,
//! about 1.3 us on the benchmark fabrics); later events (timeouts, pause expiry) go to the heap
//! ordered by (time, push sequence) and move into the wheel, in that order, as the horizon
//! reaches them, always before any direct push into their bucket, which keeps ties FIFO.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

/// log2 of the bucket width in picoseconds: fewer bucket opens on sparse fabrics, longer buckets
/// sorted at about the same cost per event once spread (measured, `fabricsim bench` under
/// cachegrind, instructions per event on (a) ft8_perm128 / (c) ft16_perm1024: 10 388.0 / 374.1,
/// 11 381.9 / 372.2, 12 378.3 / 368.9). At most 12: the packed event needs 52 bits.
const SHIFT: u32 = 12;
/// Buckets in the wheel (a power of two): the horizon is 2^(SHIFT+9) ps = 2.1 us, past a packet
/// hop on the benchmark fabrics; a shorter wheel keeps the buckets a push writes in cache.
const BUCKETS: usize = 1 << 9;
const MASK: u64 = BUCKETS as u64 - 1;
const WORDS: usize = BUCKETS / 64;
/// Entries per chunk of a bucket's chain: two cache lines.
const CHUNK: usize = 16;

/// A piece of a bucket's chain, aligned so it spans exactly two cache lines.
#[derive(Clone, Copy)]
#[repr(C, align(64))]
struct Chunk([u64; CHUNK]);

/// Bits of a wheel entry below the time's offset in its bucket: room for the packed event.
pub const PACKED_BITS: u32 = 64 - SHIFT;
/// The packed event's bits of a wheel entry.
const PACKED_MASK: u64 = (1 << PACKED_BITS) - 1;

/// An event as the wheel stores it: `pack` gives a value below 2^`PACKED_BITS` that `unpack`
/// turns back into the same event.
pub trait Packed: Copy {
    fn pack(self) -> u64;
    fn unpack(x: u64) -> Self;
}

impl Packed for u32 {
    #[inline]
    fn pack(self) -> u64 {
        self as u64
    }
    #[inline]
    fn unpack(x: u64) -> Self {
        x as u32
    }
}

/// A wheel entry: the offset of time `t` in its bucket above the packed event.
#[inline(always)]
fn entry<E: Packed>(t: u64, e: E) -> u64 {
    let x = e.pack();
    debug_assert!(
        x >> PACKED_BITS == 0,
        "packed event wider than {PACKED_BITS} bits"
    );
    ((t & ((1 << SHIFT) - 1)) << PACKED_BITS) | x
}

/// The offset in its bucket of an entry's time (entries sort by it).
#[inline(always)]
fn offset(x: u64) -> u64 {
    x >> PACKED_BITS
}

/// A time-ordered queue of `E` with FIFO order among equal times. Times pushed must not be
/// earlier than the last popped time (a discrete-event simulation never schedules the past).
pub struct CalendarQueue<E> {
    /// The key of the current bucket.
    cur: u64,
    /// Entries of the current bucket, sorted by offset: `base[head..end]`, `head` the next to
    /// pop. `base` points into the chunk `held` when the bucket fit in one chunk (sorted there,
    /// no copy; the chunk goes back to the pool when the next bucket opens), else (`held` 0)
    /// into `current`, where a longer bucket's chain is copied out.
    base: *mut u64,
    head: usize,
    end: usize,
    held: u32,
    current: Vec<u64>,
    /// Keys `cur + 1 .. cur + BUCKETS`, key `k` in bucket `k & MASK`, in push order: a chain
    /// of chunks (`Ends`).
    ends: Box<[Ends; BUCKETS]>,
    /// The chunk pool: `next[c]` follows chunk `c` in its bucket's chain; `free` is a stack.
    chunks: Vec<Chunk>,
    next: Vec<u32>,
    free: Vec<u32>,
    /// Bit `b` set: bucket `b` is non-empty.
    occupied: [u64; WORDS],
    /// Entries with keys `>= cur + BUCKETS`.
    far: BinaryHeap<Far<E>>,
    seq: u64,
    /// The key of `far`'s earliest entry, `u64::MAX` when it is empty (a bucket open compares
    /// it, no heap peek).
    far_key: u64,
    /// The key whose bucket `pop_with`'s `ready` saw when the previous bucket opened.
    readied: u64,
}

/// A bucket's chain: its first chunk, and the slot (chunk x `CHUNK` + index) its next entry
/// goes to; a multiple of `CHUNK` there means a chunk is to be chained first, 0 that the bucket
/// is empty (chunk 0 is never used). Side by side, so a push's tail and a link's first share a
/// line.
#[derive(Clone, Copy, Default)]
struct Ends {
    first: u32,
    tail: u32,
}

/// Log2 of the groups a bucket longer than a chunk is spread into when it opens. On the 1,024-host
/// benchmark two thirds of the events are in such buckets, at 3-4 inversions each (at 1.024 ns
/// buckets; measured: an instrumented `fabricsim bench --only ft16_perm1024`); 4 and 6 bits cost
/// more (docs/engine-speed.md, "Session 11 (queue)").
const GROUP_BITS: u32 = 5;

/// A far entry; the heap pops the earliest time, then the earliest push.
struct Far<E> {
    t: u64,
    seq: u64,
    e: E,
}

impl<E> PartialEq for Far<E> {
    fn eq(&self, o: &Self) -> bool {
        (self.t, self.seq) == (o.t, o.seq)
    }
}
impl<E> Eq for Far<E> {}
impl<E> PartialOrd for Far<E> {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl<E> Ord for Far<E> {
    fn cmp(&self, o: &Self) -> Ordering {
        (o.t, o.seq).cmp(&(self.t, self.seq))
    }
}

impl<E: Packed> CalendarQueue<E> {
    pub fn new() -> Self {
        CalendarQueue {
            cur: 0,
            base: std::ptr::NonNull::dangling().as_ptr(),
            head: 0,
            end: 0,
            held: 0,
            current: Vec::new(),
            ends: Box::new([Ends::default(); BUCKETS]),
            chunks: vec![Chunk([0; CHUNK])],
            next: vec![0],
            free: Vec::new(),
            occupied: [0; WORDS],
            far: BinaryHeap::new(),
            seq: 0,
            far_key: u64::MAX,
            readied: u64::MAX,
        }
    }

    /// No count is kept (a count cost two read-modify-writes per event): the current bucket,
    /// the bitmap and the heap are all empty.
    pub fn is_empty(&self) -> bool {
        self.head == self.end && self.occupied == [0; WORDS] && self.far.is_empty()
    }

    #[inline(always)]
    pub fn push(&mut self, t: u64, e: E) {
        let k = t >> SHIFT;
        debug_assert!(k >= self.cur, "scheduled in the past: {t}");
        if k == self.cur {
            self.push_current(entry(t, e));
        } else if k - self.cur < BUCKETS as u64 {
            self.put(k, t, e);
        } else {
            self.far.push(Far {
                t,
                seq: self.seq,
                e,
            });
            self.seq += 1;
            self.far_key = self.far_key.min(k);
        }
    }

    /// An entry into the bucket being drained (rare: a zero-delay event), after every entry with
    /// a time <= its own; the bucket moves to `current` first if it was in a chunk.
    #[inline(never)]
    fn push_current(&mut self, x: u64) {
        if self.held != 0 {
            self.current.clear();
            // SAFETY: as in `rest`; the entries are in the held chunk, not in `current`.
            let rest = unsafe {
                std::slice::from_raw_parts(self.base.add(self.head), self.end - self.head)
            };
            self.current.extend_from_slice(rest);
            self.release();
            self.head = 0;
        } else if self.head > self.current.len() / 2 {
            // The popped entries go only once they are half the bucket: a burst of zero-delay
            // events (a collective's messages all released at once) then costs amortised O(1)
            // per push instead of moving the whole bucket each time.
            self.current.drain(..self.head);
            self.head = 0;
        }
        let pos =
            self.head + self.current[self.head..].partition_point(|&y| offset(y) <= offset(x));
        self.current.insert(pos, x);
        self.base = self.current.as_mut_ptr();
        self.end = self.current.len();
    }

    /// The current bucket's entries not yet popped.
    fn rest(&self) -> &[u64] {
        // SAFETY: `base[head..end]` are entries of the held chunk or of `current`, written when
        // the bucket opened (or by `push_current`); `new_chunk` moves `base` with the pool.
        unsafe { std::slice::from_raw_parts(self.base.add(self.head), self.end - self.head) }
    }

    /// The chunk the current bucket was sorted in, if any, goes back to the pool.
    #[inline(always)]
    fn release(&mut self) {
        if self.held != 0 {
            self.free.push(self.held);
            self.held = 0;
        }
    }

    #[inline(always)]
    fn put(&mut self, k: u64, t: u64, e: E) {
        let b = (k & MASK) as usize;
        let mut slot = self.ends[b].tail;
        if slot % CHUNK as u32 == 0 {
            slot = self.link(b, slot);
        }
        debug_assert!((slot as usize) < self.chunks.len() * CHUNK);
        // SAFETY: `tail` is a slot of a chunk `link` took from the pool, which never shrinks; a
        // `Chunk` is exactly `CHUNK` entries, so slot `s` is entry `s` of the pool's entries.
        unsafe {
            *self.chunks.as_mut_ptr().cast::<u64>().add(slot as usize) = entry(t, e);
        }
        self.ends[b].tail = slot + 1;
    }

    /// Bucket `b`, empty or its last chunk full (`tail` `slot`), gets a chunk from the pool
    /// (the last freed, else a new one); returns its first slot. An empty bucket becomes
    /// occupied here, so a push into a non-empty one does not touch the bitmap.
    #[inline(always)]
    fn link(&mut self, b: usize, slot: u32) -> u32 {
        let c = match self.free.pop() {
            Some(c) => c,
            None => self.new_chunk(),
        };
        if slot == 0 {
            self.occupied[b >> 6] |= 1 << (b & 63);
            self.ends[b].first = c;
        } else {
            self.next[slot as usize / CHUNK - 1] = c;
        }
        c * CHUNK as u32
    }

    #[cold]
    #[inline(never)]
    fn new_chunk(&mut self) -> u32 {
        self.chunks.push(Chunk([0; CHUNK]));
        self.next.push(0);
        if self.held != 0 {
            // The pool may have moved.
            self.base = self.chunks[self.held as usize].0.as_mut_ptr();
        }
        self.chunks.len() as u32 - 1
    }

    /// Calls `f(c, n)` for the first `max` chunks `c` of bucket `b`'s chain in push order, `n`
    /// the entries chunk `c` holds.
    #[inline(always)]
    fn walk(&self, b: usize, max: usize, mut f: impl FnMut(usize, usize)) {
        let Ends { first, tail } = self.ends[b];
        let tail = tail as usize;
        if tail == 0 {
            return;
        }
        let last = (tail - 1) / CHUNK;
        let mut c = first as usize;
        for _ in 0..max {
            if c == last {
                f(c, tail - c * CHUNK);
                return;
            }
            f(c, CHUNK);
            debug_assert!(c < self.next.len());
            // SAFETY: a chained chunk came from the pool, and `next` is as long as the pool.
            c = unsafe { *self.next.get_unchecked(c) } as usize;
        }
    }

    /// Chunk `c` of a chain (`walk`).
    #[inline(always)]
    fn chunk(&self, c: usize) -> &Chunk {
        debug_assert!(c < self.chunks.len());
        // SAFETY: `walk` passes chunks of a chain, taken from the pool, which never shrinks.
        unsafe { self.chunks.get_unchecked(c) }
    }

    /// The first `n <= CHUNK` entries of chunk `c` of a chain (`walk`).
    #[inline(always)]
    fn entries(&self, c: usize, n: usize) -> &[u64] {
        debug_assert!(n <= CHUNK);
        // SAFETY: `walk` passes at most `CHUNK` entries.
        unsafe { self.chunk(c).0.get_unchecked(..n) }
    }

    /// Every pending event, in no particular order.
    pub fn events(&self) -> impl Iterator<Item = E> + '_ {
        self.rest()
            .iter()
            .copied()
            .chain((0..BUCKETS).flat_map(|b| {
                let mut v = Vec::new();
                self.walk(b, usize::MAX, |c, n| {
                    v.extend_from_slice(&self.chunks[c].0[..n])
                });
                v
            }))
            .map(|x| E::unpack(x & PACKED_MASK))
            .chain(self.far.iter().map(|f| f.e))
    }

    /// Removes and returns the earliest entry (FIFO among equal times).
    #[inline]
    pub fn pop(&mut self) -> Option<(u64, E)> {
        self.pop_with(|_| {}).map(|(t, x)| (t, E::unpack(x)))
    }

    /// As `pop`, the event packed (the caller decodes what it needs: the hot kinds from their
    /// bits); when a bucket opens, `ready` sees each packed event of the next bucket (and of
    /// the opened one if it did not as the next): the engine prefetches what they read, so
    /// the memory loads overlap a bucket of work.
    #[inline]
    pub fn pop_with(&mut self, ready: impl FnMut(u64)) -> Option<(u64, u64)> {
        if self.head == self.end && !self.refill(ready) {
            return None;
        }
        // SAFETY: as in `rest`; `head < end` here.
        let x = unsafe { *self.base.add(self.head) };
        self.head += 1;
        let t = (self.cur << SHIFT) | offset(x);
        Some((t, x & PACKED_MASK))
    }

    /// The time of the earliest pending entry, `None` when the queue is empty. Not for the hot
    /// path (it scans the next bucket's chain): periodic events use it to skip idle spans.
    pub fn next_time(&self) -> Option<u64> {
        let here = self
            .rest()
            .first()
            .map(|&x| (self.cur << SHIFT) | offset(x));
        let wheel = here.or_else(|| {
            let k = self.next_in_wheel()?;
            let mut least = u64::MAX;
            self.walk((k & MASK) as usize, usize::MAX, |c, n| {
                for &x in self.entries(c, n) {
                    least = least.min(offset(x));
                }
            });
            Some((k << SHIFT) | least)
        });
        let far = self.far.peek().map(|f| f.t);
        match (wheel, far) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// The key of the first non-empty wheel bucket after the current one.
    fn next_in_wheel(&self) -> Option<u64> {
        let start = ((self.cur + 1) & MASK) as usize;
        let mut w = start >> 6;
        let mut bits = self.occupied[w] & (!0u64 << (start & 63));
        for _ in 0..=WORDS {
            if bits != 0 {
                let pos = (w << 6) + bits.trailing_zeros() as usize;
                let d = (pos as u64).wrapping_sub(start as u64) & MASK;
                return Some(self.cur + 1 + d);
            }
            w = (w + 1) % WORDS;
            bits = self.occupied[w];
        }
        None
    }

    /// The current bucket is exhausted: open the next non-empty one; false when there is none
    /// (the queue is empty).
    fn refill(&mut self, mut ready: impl FnMut(u64)) -> bool {
        self.release();
        let k = self.next_in_wheel().unwrap_or(u64::MAX).min(self.far_key);
        if k == u64::MAX {
            // Empty: the drained bucket's pushes (`push_current`) go to `current`.
            self.current.clear();
            self.base = self.current.as_mut_ptr();
            (self.head, self.end) = (0, 0);
            return false;
        }
        self.cur = k;
        if self.far_key - k < BUCKETS as u64 {
            self.admit_far();
        }
        let b = (k & MASK) as usize;
        self.occupied[b >> 6] &= !(1 << (b & 63));
        let Ends { first, tail } = self.ends[b];
        self.head = 0;
        if (tail as usize - 1) / CHUNK == first as usize {
            // One chunk: sorted where it is.
            self.held = first;
            self.end = tail as usize - first as usize * CHUNK;
            self.base = self.chunks[first as usize].0.as_mut_ptr();
        } else {
            // Longer (a burst): copied out spread by the top `GROUP_BITS` of the offsets, a stable
            // counting sort, so the insertion sort after moves entries only within a group.
            let group = |x: u64| (x >> (64 - GROUP_BITS)) as usize;
            let mut at = [0usize; 1 << GROUP_BITS];
            self.walk(b, usize::MAX, |c, n| {
                for &x in self.entries(c, n) {
                    at[group(x)] += 1;
                }
            });
            let mut len = 0;
            for a in &mut at {
                (*a, len) = (len, len + *a);
            }
            let mut current = std::mem::take(&mut self.current);
            let mut free = std::mem::take(&mut self.free);
            current.clear();
            current.reserve(len);
            let dst = current.as_mut_ptr();
            self.walk(b, usize::MAX, |c, n| {
                for &x in self.entries(c, n) {
                    let g = group(x);
                    // SAFETY: `at[g]` starts at the entries of the groups before `g` and counts
                    // `g`'s entries, so each of the `len` slots reserved is written once.
                    unsafe { dst.add(at[g]).write(x) };
                    at[g] += 1;
                }
                free.push(c as u32);
            });
            // SAFETY: all `len` entries were written just above.
            unsafe { current.set_len(len) };
            self.current = current;
            self.free = free;
            self.base = self.current.as_mut_ptr();
            self.end = self.current.len();
        }
        self.ends[b] = Ends::default();
        // SAFETY: `base[0..end]` are the bucket's entries, in its held chunk or in `current`,
        // and nothing else refers to them while they are sorted.
        sort(unsafe { std::slice::from_raw_parts_mut(self.base, self.end) });
        // `ready` sees the events of the next bucket (usually the one after this, its lines
        // loaded when the previous bucket opened), so what they read loads while this bucket
        // runs; and this bucket's when it was not the next one when the previous bucket opened.
        // A later push into a bucket is not seen.
        if self.cur != self.readied {
            // SAFETY: as in `rest`.
            for &x in unsafe { std::slice::from_raw_parts(self.base, self.end) } {
                ready(x & PACKED_MASK);
            }
        }
        self.readied = self.cur + 1;
        self.walk((self.readied & MASK) as usize, usize::MAX, |c, n| {
            for &x in self.entries(c, n) {
                ready(x & PACKED_MASK);
            }
        });
        // The bucket after next: start loading its first chunks' lines.
        self.walk(((self.cur + 2) & MASK) as usize, 4, |c, _| {
            for line in self.chunk(c).0.iter().step_by(8) {
                fabricsim_core::prefetch::prefetch(line);
            }
        });
        true
    }

    /// Far entries the horizon now reaches move into the wheel in (time, push) order: before
    /// any direct push into their buckets.
    #[inline(never)]
    fn admit_far(&mut self) {
        while let Some(f) = self.far.peek() {
            let k = f.t >> SHIFT;
            if k - self.cur >= BUCKETS as u64 {
                self.far_key = k;
                return;
            }
            let f = self.far.pop().expect("peeked");
            self.put(k, f.t, f.e);
        }
        self.far_key = u64::MAX;
    }
}

/// Sorts a bucket's entries stably by offset, so equal times keep their push order. Insertion
/// sort (no allocation, one move per inversion: buckets are short, and a burst of equal times is
/// already in order) unless the inversions pass a budget, then the general stable sort finishes
/// (insertion never moves an entry past an equal one, so the order of ties is still the push
/// order).
#[inline(always)]
fn sort(v: &mut [u64]) {
    let mut budget = 8 * v.len() + 64;
    for i in 1..v.len() {
        let x = v[i];
        // `y > top` exactly when `offset(y) > offset(x)`: `top` is the largest entry with
        // `x`'s offset, so one compare of whole entries, no shift of the loaded one.
        let top = x | PACKED_MASK;
        if v[i - 1] <= top {
            continue;
        }
        // Shift the later entries of v[..i] up by one; on the subslice the indices are
        // provably in bounds.
        let s = &mut v[..=i];
        let mut j = i;
        while j > 0 && s[j - 1] > top {
            s[j] = s[j - 1];
            j -= 1;
        }
        s[j] = x;
        budget = budget.saturating_sub(i - j);
        if budget == 0 {
            v.sort_by_key(|&x| offset(x));
            break;
        }
    }
}

impl<E: Packed> Default for CalendarQueue<E> {
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use fabricsim_core::rng::Rng;
    use std::collections::BTreeMap;

    #[test]
    fn buckets_of_every_length_pop_like_a_stable_sort() {
        // Reference: a stable sort by time of the push order. One bucket of each length 1..=80
        // (sorted in its chunk up to a chunk, spread and copied out past it), three times over so
        // the pool hands out its chunks in changing order (a chain may go to a lower chunk); 16
        // offsets in the bucket, so ties are common.
        let mut rng = Rng::new(3);
        let mut q = CalendarQueue::new();
        let mut now = 0u64;
        let mut id = 0u32;
        for n in (1..=80).chain(1..=80).chain((1..=80).rev()) {
            let start = ((now >> SHIFT) + 1 + rng.below(3)) << SHIFT;
            let mut want = Vec::new();
            for _ in 0..n {
                let t = start + rng.below(16) * ((1 << SHIFT) / 16);
                q.push(t, id);
                want.push((t, id));
                id += 1;
            }
            want.sort_by_key(|&(t, _)| t);
            for w in want {
                assert_eq!(q.pop(), Some(w), "bucket of {n}");
                now = w.0;
            }
            assert!(q.is_empty());
        }
    }

    #[test]
    fn pops_like_a_stable_sort_by_time_across_buckets_horizon_and_heap() {
        // Reference: a map keyed by (time, push number) pops exactly the stable-sort order.
        let scales = [1u64, 1000, 100_000, 3_000_000, 50_000_000, 1 << 40];
        for seed in 0..20 {
            let mut rng = Rng::new(seed);
            let mut q = CalendarQueue::new();
            let mut reference = BTreeMap::new();
            let mut now = 0u64;
            for id in 0..20_000u32 {
                if rng.below(3) > 0 {
                    // Delays within a bucket, across buckets, past the horizon and far out; few
                    // distinct values so ties are common.
                    let t = now + rng.below(8) * scales[rng.below(scales.len() as u64) as usize];
                    q.push(t, id);
                    reference.insert((t, id), ());
                } else {
                    let first = reference.keys().next().map(|&(t, _)| t);
                    assert_eq!(q.next_time(), first, "seed {seed}");
                    let got = q.pop();
                    let want = reference.pop_first().map(|((t, id), ())| (t, id));
                    assert_eq!(got, want, "seed {seed}");
                    if let Some((t, _)) = got {
                        now = t;
                    }
                }
                assert_eq!(q.is_empty(), reference.is_empty());
            }
            let mut n = 0;
            let mut sum = 0u64;
            for e in q.events() {
                n += 1;
                sum = sum.wrapping_add(e as u64);
            }
            assert_eq!(n, reference.len());
            let want_sum = reference
                .keys()
                .fold(0u64, |s, &(_, e)| s.wrapping_add(e as u64));
            assert_eq!(sum, want_sum);
            while let Some(got) = q.pop() {
                assert_eq!(
                    Some(got),
                    reference.pop_first().map(|((t, id), ())| (t, id))
                );
            }
            assert!(reference.is_empty() && q.is_empty());
        }
    }
}
