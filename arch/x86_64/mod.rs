//! x86_64 kernels: AVX2, and AVX-512F with VPOPCNTDQ where the compiler has
//! the intrinsics (Rust 1.89+, see `build.rs`).

pub(crate) mod avx2;
pub(crate) mod bumped;
pub(crate) mod expand;
// Compiled only where the intrinsics are stable (Rust 1.89+, see build.rs).
#[cfg(ribbon_avx512_kernels)]
#[clippy::msrv = "1.89"]
pub(crate) mod avx512;

use core::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};

use crate::probe::Probe;
use crate::word::Word;

/// The `expand` and `prefetch` methods every x86 `QueryKernel<$W>` shares:
/// the vector hash expansion over lanes `$lanes`, and [`prefetch_probe`].
macro_rules! expand_and_prefetch {
    ($lanes:ty, $W:ty) => {
        #[inline(always)]
        unsafe fn expand<P: Probes<$W>>(probes: &P, hashes: &[u64], chunk: &mut ProbeChunk<$W>) {
            // SAFETY: the caller guarantees the instruction set.
            unsafe { super::expand::expand_chunk::<$lanes, $W, P>(probes, hashes, chunk) }
        }

        #[inline(always)]
        unsafe fn prefetch(payload: &[u8], p: &Probe<$W>, max_columns: usize) {
            // SAFETY: SSE is part of x86_64.
            unsafe { super::prefetch_probe(payload, p, max_columns) }
        }
    };
}
pub(crate) use expand_and_prefetch;

/// Prefetches every cache line of a probe's start-block and next-block words.
///
/// # Safety
/// SSE is available (always true on x86_64).
#[inline(always)]
pub(crate) unsafe fn prefetch_probe<W: Word>(payload: &[u8], p: &Probe<W>, max_columns: usize) {
    // The two blocks are adjacent: from the start block's first word to the
    // next block's last. The span assumes the filter's largest blocks, so
    // that it is the same for every key (for smaller blocks and the last
    // start it reaches a few words further; prefetching past the payload
    // is harmless).
    let span = 2 * max_columns * W::BYTES;
    let base = payload.as_ptr().wrapping_add(p.lo_word * W::BYTES);
    // SAFETY (all prefetches): prefetching never faults and needs no valid
    // pointer; addresses are formed with wrapping arithmetic, never read.
    unsafe {
        _mm_prefetch::<_MM_HINT_T0>(base.cast::<i8>());
        _mm_prefetch::<_MM_HINT_T0>(base.wrapping_add(64).cast::<i8>());
        _mm_prefetch::<_MM_HINT_T0>(base.wrapping_add(span.saturating_sub(1)).cast::<i8>());
    }
    // Every 64 bytes from the first, plus the last byte, touch every line;
    // the loop only runs for blocks wider than 128 bytes (many columns).
    let mut at = 128;
    while at < span.saturating_sub(1) {
        // SAFETY: as above.
        unsafe { _mm_prefetch::<_MM_HINT_T0>(base.wrapping_add(at).cast::<i8>()) };
        at += 64;
    }
}

/// The first `N` values of `src` as an array (zeros past its end), to be
/// cast into a register.
#[inline(always)]
pub(crate) fn lanes_of<const N: usize>(src: &[u64]) -> [u64; N] {
    let mut lanes = [0u64; N];
    super::generic::copy_lanes(&mut lanes, src.iter().copied());
    lanes
}
