//! A cache prefetch hint, shared by the packet engine's slab and the flow engine's solver.

/// Hints the CPU to bring `r`'s first cache line into cache (no effect off x86_64).
#[inline]
pub fn prefetch<T>(r: &T) {
    prefetch_ptr((r as *const T).cast::<i8>());
}

#[inline]
fn prefetch_ptr(p: *const i8) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
        // SAFETY: a prefetch is a hint that never faults, whatever the address; SSE is part of
        // x86_64.
        unsafe { _mm_prefetch::<_MM_HINT_T0>(p) };
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}
