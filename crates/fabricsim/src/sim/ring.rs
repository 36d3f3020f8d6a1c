//! A FIFO ring buffer of `Copy` values for the engine's per-packet queues: a power-of-two slice
//! indexed by a masked `u32` head, 24 bytes (a `VecDeque` is 32, and its push and pop carry
//! wrap-around and capacity bookkeeping this one does with one mask). It grows by doubling, so
//! nothing allocates once a queue has reached its working size; it never shrinks.

#[derive(Clone, Debug)]
pub struct Ring<T> {
    /// Capacity a power of two (or empty); slot `(head + i) & (len - 1)` holds element `i`.
    buf: Box<[T]>,
    head: u32,
    len: u32,
}

impl<T> Default for Ring<T> {
    fn default() -> Self {
        Ring {
            buf: Box::new([]),
            head: 0,
            len: 0,
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

    #[inline]
    fn mask(&self) -> u32 {
        self.buf.len() as u32 - 1
    }

    #[inline]
    pub fn push_back(&mut self, x: T) {
        if self.len as usize == self.buf.len() {
            self.grow(x);
        }
        let i = (self.head.wrapping_add(self.len) & self.mask()) as usize;
        self.buf[i] = x;
        self.len += 1;
    }

    #[inline]
    pub fn front(&self) -> Option<&T> {
        if self.len == 0 {
            return None;
        }
        Some(&self.buf[self.head as usize])
    }

    #[inline]
    pub fn pop_front(&mut self) -> Option<T> {
        if self.len == 0 {
            return None;
        }
        let x = self.buf[self.head as usize];
        self.head = (self.head + 1) & self.mask();
        self.len -= 1;
        Some(x)
    }

    /// Elements, oldest first.
    /// Hints the CPU to fetch the slot `pop_front` reads next (nothing when empty).
    #[inline(always)]
    pub fn prefetch_front(&self) {
        if self.len != 0 {
            if let Some(x) = self.buf.get(self.head as usize) {
                super::packet::prefetch(x);
            }
        }
    }

    /// Hints the CPU to fetch the slot `push_back` writes next (nothing when full: it grows).
    #[inline(always)]
    pub fn prefetch_back(&self) {
        if self.buf.is_empty() {
            return;
        }
        let i = self.head.wrapping_add(self.len) & self.mask();
        if let Some(x) = self.buf.get(i as usize) {
            super::packet::prefetch(x);
        }
    }

    pub fn iter(&self) -> impl Iterator<Item = &T> + '_ {
        (0..self.len).map(move |i| &self.buf[(self.head.wrapping_add(i) & self.mask()) as usize])
    }

    /// A full ring doubles its capacity (at least 4), the elements in order from slot 0; `fill`
    /// pads the unused slots (no `Default` needed).
    #[cold]
    #[inline(never)]
    fn grow(&mut self, fill: T) {
        let (old, head) = (self.buf.len(), self.head as usize);
        let cap = (old * 2).max(4);
        assert!(cap <= 1 << 31, "ring of more than 2^31 entries");
        let mut buf = vec![fill; cap].into_boxed_slice();
        buf[..old - head].copy_from_slice(&self.buf[head..]);
        buf[old - head..old].copy_from_slice(&self.buf[..head]);
        self.buf = buf;
        self.head = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Rng;
    use std::collections::VecDeque;

    #[test]
    fn behaves_as_a_vecdeque_fifo_through_growth_and_wrap_around() {
        // Reference: std's VecDeque with the same pushes and pops.
        for seed in 0..10 {
            let mut rng = Rng::new(seed);
            let mut r = Ring::default();
            let mut v = VecDeque::new();
            for i in 0..20_000u32 {
                if rng.below(5) < 3 {
                    r.push_back(i);
                    v.push_back(i);
                } else {
                    assert_eq!(r.pop_front(), v.pop_front());
                }
                assert_eq!(r.len(), v.len());
                assert_eq!(r.front(), v.front());
            }
            assert!(r.iter().eq(v.iter()));
        }
    }
}
