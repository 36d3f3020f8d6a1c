//! FIFO ring buffers of `Copy` values for the engine's per-packet queues, all of one kind backed
//! by one arena. A `Ring` is a 16-byte header: a power-of-two region of the arena (offset and
//! capacity) indexed by a masked `u32` head. The regions sit side by side in one allocation
//! advised onto 2 MB pages (`hugepages`), so the thousands of queues of a large fabric share a
//! few TLB entries (one heap allocation per queue spread them over as many 4 KB pages as queues).
//! A full ring moves to a region twice its size (the old one is kept for the next ring of that
//! size), so nothing allocates once the queues have reached their working sizes; a ring never
//! shrinks. Invariant: a ring is only ever used with the one arena it grew in (the engine holds
//! one arena per entry type), so its slots are read and written without bounds checks.

use std::marker::PhantomData;

/// The storage of every `Ring<T>` of one engine.
#[derive(Clone, Debug)]
pub struct RingArena<T> {
    buf: Vec<T>,
    /// Free regions by log2 of their capacity (offsets into `buf`).
    free: Vec<Vec<u32>>,
}

/// A FIFO in a `RingArena`: slot `off + ((head + i) & (cap - 1))` holds element `i`.
#[derive(Clone, Debug)]
pub struct Ring<T> {
    off: u32,
    /// A power of two, or 0 before the first push.
    cap: u32,
    head: u32,
    len: u32,
    _of: PhantomData<T>,
}

impl<T> Default for Ring<T> {
    fn default() -> Self {
        Ring {
            off: 0,
            cap: 0,
            head: 0,
            len: 0,
            _of: PhantomData,
        }
    }
}

impl<T: Copy> RingArena<T> {
    /// An arena with room for `n` elements before it reallocates, on huge pages when that is
    /// large (advised before any of it is touched).
    pub fn with_capacity(n: usize) -> RingArena<T> {
        let buf = Vec::with_capacity(n);
        super::hugepages::advise(&buf);
        RingArena {
            buf,
            free: Vec::new(),
        }
    }

    /// A region of `cap` slots (a power of two), filled with `fill` when new.
    fn alloc(&mut self, cap: u32, fill: T) -> u32 {
        let class = cap.trailing_zeros() as usize;
        if let Some(off) = self.free.get_mut(class).and_then(|f| f.pop()) {
            return off;
        }
        let off = self.buf.len();
        let end = off + cap as usize;
        assert!(
            end <= u32::MAX as usize,
            "ring arena of more than 2^32 slots"
        );
        if end > self.buf.capacity() {
            // A new allocation twice as large, advised before the elements are copied in.
            let mut buf = Vec::with_capacity(end.max(2 * self.buf.capacity()));
            super::hugepages::advise(&buf);
            buf.extend_from_slice(&self.buf);
            self.buf = buf;
        }
        self.buf.resize(end, fill);
        off as u32
    }

    /// Gives back a region of `cap` slots at `off`.
    fn release(&mut self, off: u32, cap: u32) {
        let class = cap.trailing_zeros() as usize;
        if self.free.len() <= class {
            self.free.resize(class + 1, Vec::new());
        }
        self.free[class].push(off);
    }
}

impl<T> Default for RingArena<T> {
    fn default() -> Self {
        RingArena {
            buf: Vec::new(),
            free: Vec::new(),
        }
    }
}

impl<T: Copy> Ring<T> {
    #[inline]
    pub fn len(&self) -> usize {
        self.len as usize
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The arena index of the ring's `i`-th slot after its head (`cap` > 0).
    #[inline(always)]
    fn slot(&self, i: u32) -> usize {
        (self.off + (self.head.wrapping_add(i) & (self.cap - 1))) as usize
    }

    /// The arena's slot `i` of this ring (`slot`'s value, `cap` > 0).
    #[inline(always)]
    fn at<'a>(&self, a: &'a RingArena<T>, i: usize) -> &'a T {
        debug_assert!(
            i < a.buf.len(),
            "ring slot {i} in an arena of {}",
            a.buf.len()
        );
        // SAFETY: the ring's region `off..off + cap` was allocated in `a` (`grow`; a ring is
        // used with the one arena of its kind, the module's invariant) and the arena never
        // shrinks; `slot` masks into that region.
        unsafe { a.buf.get_unchecked(i) }
    }

    #[inline]
    pub fn push_back(&mut self, a: &mut RingArena<T>, x: T) {
        if self.len == self.cap {
            self.grow(a, x);
        }
        let i = self.slot(self.len);
        debug_assert!(
            i < a.buf.len(),
            "ring slot {i} in an arena of {}",
            a.buf.len()
        );
        // SAFETY: as in `at`; `grow` made room.
        unsafe { *a.buf.get_unchecked_mut(i) = x };
        self.len += 1;
    }

    #[inline]
    pub fn front<'a>(&self, a: &'a RingArena<T>) -> Option<&'a T> {
        if self.len == 0 {
            return None;
        }
        Some(self.at(a, self.slot(0)))
    }

    #[inline]
    pub fn pop_front(&mut self, a: &RingArena<T>) -> Option<T> {
        if self.len == 0 {
            return None;
        }
        let x = *self.at(a, self.slot(0));
        self.head = (self.head + 1) & (self.cap - 1);
        self.len -= 1;
        Some(x)
    }

    /// Elements, oldest first.
    pub fn iter<'a>(&'a self, a: &'a RingArena<T>) -> impl Iterator<Item = &'a T> + 'a {
        (0..self.len).map(move |i| self.at(a, self.slot(i)))
    }

    /// A full ring moves to a region of twice its capacity (at least 4), the elements in order
    /// from its slot 0; `fill` pads new slots (no `Default` needed).
    #[cold]
    #[inline(never)]
    fn grow(&mut self, a: &mut RingArena<T>, fill: T) {
        let (old, cap, head) = (self.off as usize, self.cap, self.head as usize);
        let new_cap = (cap * 2).max(4);
        assert!(new_cap <= 1 << 31, "ring of more than 2^31 entries");
        let off = a.alloc(new_cap, fill) as usize;
        let cap = cap as usize;
        a.buf.copy_within(old + head..old + cap, off);
        a.buf.copy_within(old..old + head, off + cap - head);
        if cap > 0 {
            a.release(old as u32, cap as u32);
        }
        self.off = off as u32;
        self.cap = new_cap;
        self.head = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use fabricsim_core::rng::Rng;
    use std::collections::VecDeque;

    #[test]
    fn rings_sharing_an_arena_behave_as_vecdeque_fifos_through_growth_and_wrap_around() {
        // Reference: std's VecDeque with the same pushes and pops, per ring; the rings grow
        // interleaved, so regions are moved, freed and reused between them.
        for seed in 0..10 {
            let mut rng = Rng::new(seed);
            let mut arena = RingArena::with_capacity(16);
            let mut rings: Vec<Ring<u32>> = vec![Ring::default(); 5];
            let mut refs = vec![VecDeque::new(); 5];
            for i in 0..40_000u32 {
                let r = rng.below(5) as usize;
                // Ring r's push share drifts, so rings fill and drain by turns.
                if rng.below(10) < 3 + ((i / 4000 + r as u32) % 5) as u64 {
                    rings[r].push_back(&mut arena, i);
                    refs[r].push_back(i);
                } else {
                    assert_eq!(rings[r].pop_front(&arena), refs[r].pop_front());
                }
                assert_eq!(rings[r].len(), refs[r].len());
                assert_eq!(rings[r].front(&arena), refs[r].front());
            }
            for (r, v) in rings.iter().zip(&refs) {
                assert!(r.iter(&arena).eq(v.iter()));
            }
        }
    }
}
