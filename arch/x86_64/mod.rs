//! x86_64 kernels: AVX2, and AVX-512F with VPOPCNTDQ where the compiler has
//! the intrinsics (Rust 1.89+, see `build.rs`).

pub(crate) mod avx2;
// Compiled only where the intrinsics are stable (Rust 1.89+, see build.rs).
#[cfg(ribbon_avx512_kernels)]
#[clippy::msrv = "1.89"]
pub(crate) mod avx512;

use core::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};

use crate::query::Probe;
use crate::word::Word;

/// Prefetches every cache line of a probe's start-block and next-block words.
///
/// # Safety
/// SSE is available (always true on x86_64).
#[inline(always)]
pub(crate) unsafe fn prefetch_probe<W: Word>(payload: &[u8], p: &Probe<W>) {
    let first = p.lo_word.min(p.hi_word) * W::BYTES;
    let end = (p.lo_word.max(p.hi_word) + p.columns) * W::BYTES;
    let base = payload.as_ptr();
    let mut at = first;
    while at < end {
        // SAFETY: prefetching never faults and needs no valid pointer; the
        // address is formed with wrapping arithmetic, not dereferenced.
        unsafe { _mm_prefetch::<_MM_HINT_T0>(base.wrapping_add(at).cast::<i8>()) };
        at += 64;
    }
    // The last line, when the range does not start on a line boundary.
    // SAFETY: as above.
    unsafe { _mm_prefetch::<_MM_HINT_T0>(base.wrapping_add(end.saturating_sub(1)).cast::<i8>()) };
}
