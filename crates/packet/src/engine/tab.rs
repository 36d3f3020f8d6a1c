//! The engine's per-id tables, indexed without bounds checks.
//!
//! The packet path indexes a dozen tables per event by ids the engine numbers itself: ports,
//! queues (port x class), nodes, hosts, queue pairs. A bounds check per access was about a tenth
//! of its instructions (cachegrind, `fabricsim bench`). `Engine::new` checks once what makes
//! every such id valid: the topology's structure (`Topology::check`: peers, nodes, NIC ports),
//! the routing's candidate ports (`route::candidates_within`) and the classes (`SimParams`);
//! every id the engine holds afterwards is one of those or derived from them.

use std::ops::{Deref, DerefMut, Index, IndexMut};

/// A fixed-length table; `t[i]` is unchecked in release builds (checked with debug assertions,
/// as in the tests). Invariant: the engine indexes it only with ids below its length, one entry
/// per id of its kind (the module doc's checks).
pub(super) struct Tab<T>(Box<[T]>);

impl<T> From<Vec<T>> for Tab<T> {
    fn from(v: Vec<T>) -> Tab<T> {
        Tab(v.into_boxed_slice())
    }
}

impl<T> Index<usize> for Tab<T> {
    type Output = T;
    #[inline(always)]
    fn index(&self, i: usize) -> &T {
        debug_assert!(i < self.0.len(), "id {i} in a table of {}", self.0.len());
        // SAFETY: the engine's ids are below their table's length (the type's invariant, which
        // `Engine::new` establishes by its checks).
        unsafe { self.0.get_unchecked(i) }
    }
}

impl<T> IndexMut<usize> for Tab<T> {
    #[inline(always)]
    fn index_mut(&mut self, i: usize) -> &mut T {
        debug_assert!(i < self.0.len(), "id {i} in a table of {}", self.0.len());
        // SAFETY: as in `index`.
        unsafe { self.0.get_unchecked_mut(i) }
    }
}

impl<T> Tab<T> {
    /// Entries `i * n .. (i + 1) * n` (the `n` class queues of port `i`).
    #[inline(always)]
    pub(super) fn group(&self, i: usize, n: usize) -> &[T] {
        debug_assert!(
            (i + 1) * n <= self.0.len(),
            "group {i} of {n} in a table of {}",
            self.0.len()
        );
        // SAFETY: `i` is an id whose `n` entries the table holds (the type's invariant).
        unsafe { self.0.get_unchecked(i * n..(i + 1) * n) }
    }
}

impl<'a, T> IntoIterator for &'a Tab<T> {
    type Item = &'a T;
    type IntoIter = std::slice::Iter<'a, T>;
    fn into_iter(self) -> Self::IntoIter {
        self.0.iter()
    }
}

/// Ranges, iteration and lengths as a slice (checked).
impl<T> Deref for Tab<T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        &self.0
    }
}

impl<T> DerefMut for Tab<T> {
    fn deref_mut(&mut self) -> &mut [T] {
        &mut self.0
    }
}
