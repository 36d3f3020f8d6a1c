//! Transparent huge pages for the engine's largest array, the packet slab (tens of megabytes
//! on a 1,024-host fabric, read at random as packets hop): `madvise(MADV_HUGEPAGE)` (Linux
//! madvise(2); the kernel's THP "madvise" mode, the default of several distributions, backs
//! only such ranges with 2 MB pages) so one TLB entry covers 512 of the 4 KB pages and the
//! loads and prefetches miss the TLB less. A hint: without THP, or off Linux, nothing changes.

/// Advises huge pages for the whole allocation of `v` (its spare capacity included, where the
/// pages are not yet touched) when it spans at least one 2 MB page.
pub fn advise<T>(v: &Vec<T>) {
    const HUGE: usize = 2 << 20;
    let bytes = v.capacity() * std::mem::size_of::<T>();
    if bytes < HUGE {
        return;
    }
    let start = (v.as_ptr() as usize).next_multiple_of(4096);
    let end = (v.as_ptr() as usize + bytes) & !4095;
    if end > start {
        madvise_hugepage(start, end - start);
    }
}

#[cfg(all(
    target_os = "linux",
    any(target_arch = "x86_64", target_arch = "aarch64")
))]
fn madvise_hugepage(start: usize, len: usize) {
    // <asm-generic/mman-common.h>: MADV_HUGEPAGE.
    const MADV_HUGEPAGE: std::ffi::c_int = 14;
    unsafe extern "C" {
        fn madvise(
            addr: *mut std::ffi::c_void,
            len: usize,
            advice: std::ffi::c_int,
        ) -> std::ffi::c_int;
    }
    // SAFETY: the range lies inside a live allocation and is page-aligned; MADV_HUGEPAGE only
    // changes how the kernel backs the pages, never their contents. A failure (THP off) is
    // harmless and ignored.
    unsafe {
        madvise(start as *mut std::ffi::c_void, len, MADV_HUGEPAGE);
    }
}

#[cfg(not(all(
    target_os = "linux",
    any(target_arch = "x86_64", target_arch = "aarch64")
)))]
fn madvise_hugepage(_start: usize, _len: usize) {}
