//! AVX-512 kernels (AVX512F + AVX512VPOPCNTDQ): eight 64-bit lanes per
//! vector, masked loads for any column count, `vpopcntq` for lane parity.

use bytemuck::must_cast;
use core::arch::x86_64::*;

use super::expand::U64Lanes;
use crate::arch::generic::{self, Lanes64, ProbeChunk, QueryKernel, SolveLanes};
use crate::bumped_layout::{BumpedKey, ThresholdsRef};
use crate::hash::{Coeff, FreeRows};
use crate::layout::Geometry;
use crate::probe::{Parts, Probe, Probes};
use crate::word::Rows;

crate::arch::isa_proof!(
    /// The AVX-512F + VPOPCNTDQ instruction set (with AVX2).
    Avx512,
    AVX512
);

/// Loads the lanes in `mask` starting at word `word` (size `bytes`).
///
/// # Safety
/// AVX-512F is available and every lane in `mask` lies inside `payload`.
#[inline(always)]
unsafe fn load(payload: &[u8], word: usize, bytes: usize, mask: __mmask8) -> __m512i {
    // SAFETY: masked-off lanes are not accessed (the address is formed with
    // wrapping arithmetic, so no lane need be in bounds when the mask is
    // empty); the caller guarantees the enabled ones are in bounds.
    unsafe {
        _mm512_maskz_loadu_epi64(
            mask,
            payload.as_ptr().wrapping_add(word * bytes).cast::<i64>(),
        )
    }
}

impl QueryKernel<u64> for Avx512 {
    super::expand_and_prefetch!(__m512i, u64);

    #[inline(always)]
    unsafe fn matches<P: Probes<u64>>(payload: &[u8], p: &Probe<u64>, max_columns: usize) -> bool {
        // SAFETY: AVX-512F/VPOPCNTDQ are available (caller); the lanes
        // `eight_columns` loads are columns of both blocks, inside the
        // validated payload.
        unsafe {
            let cl = _mm512_set1_epi64(p.c_lo as i64);
            let ch = _mm512_set1_epi64(p.c_hi as i64);
            // Columns 0..8 (the usual case: one vector, no loop). Written
            // out ahead of the loop on purpose: folded into it, batch
            // queries measured about 10 % slower.
            let mut mismatches = eight_columns::<P>(payload, p, 0, cl, ch);
            // Further groups of eight up to the filter's column count; the
            // key's column mask disables the lanes it lacks (a group may
            // be empty: masked-off lanes are never read).
            let mut j = 8;
            while j < max_columns {
                let more = eight_columns::<P>(payload, p, j, cl, ch);
                mismatches = _mm512_or_si512(mismatches, more);
                j += 8;
            }
            _mm512_test_epi64_mask(mismatches, _mm512_set1_epi64(1)) == 0
        }
    }

    #[inline(always)]
    unsafe fn column_values<P: Probes<u64>>(
        payload: &[u8],
        p: &Probe<u64>,
        max_columns: usize,
    ) -> u64 {
        // SAFETY: as for `matches`.
        unsafe {
            let cl = _mm512_set1_epi64(p.c_lo as i64);
            let ch = _mm512_set1_epi64(p.c_hi as i64);
            // Columns 0..8 ahead of the loop, as in `matches`.
            let mut bits = eight_parities(payload, p, 0, cl, ch);
            let mut j = 8;
            while j < max_columns {
                bits |= eight_parities(payload, p, j, cl, ch) << (j & 63);
                j += 8;
            }
            // Lanes past the key's columns were not loaded (0).
            bits ^ if P::RESULT { p.expected & p.mask } else { 0 }
        }
    }
}

/// `(lo & cl) ^ (hi & ch)` of the lanes in `lanes` from words `lo_word`
/// and `hi_word` on (size `bytes`); 0 in the other lanes.
///
/// # Safety
/// AVX-512F is available and the lanes in `lanes` lie inside `payload`
/// from both words on.
#[inline(always)]
unsafe fn selected(
    payload: &[u8],
    (lo_word, hi_word): (usize, usize),
    bytes: usize,
    lanes: __mmask8,
    cl: __m512i,
    ch: __m512i,
) -> __m512i {
    // SAFETY: as documented above.
    unsafe {
        let lo = load(payload, lo_word, bytes, lanes);
        let hi = load(payload, hi_word, bytes, lanes);
        _mm512_xor_si512(_mm512_and_si512(lo, cl), _mm512_and_si512(hi, ch))
    }
}

/// The parities of columns `j .. j + 8` of a 64-bit probe, column `j + k`
/// in bit `k` (0 past the key's columns): `vpopcntq`, then its low bit per
/// lane as a mask.
///
/// # Safety
/// AVX-512F/VPOPCNTDQ are available, `j < 64`, and `p`'s columns lie
/// inside `payload`.
#[inline(always)]
unsafe fn eight_parities(
    payload: &[u8],
    p: &Probe<u64>,
    j: usize,
    cl: __m512i,
    ch: __m512i,
) -> u64 {
    // SAFETY: as documented above.
    unsafe {
        let lanes = (p.mask >> j) as __mmask8;
        let x = selected(payload, (p.lo_word + j, p.hi_word + j), 8, lanes, cl, ch);
        u64::from(_mm512_test_epi64_mask(
            _mm512_popcnt_epi64(x),
            _mm512_set1_epi64(1),
        ))
    }
}

/// Columns `j .. j + 8` of a 64-bit probe: lane `k` holds a count whose
/// low bit is 1 when column `j + k` does not match its expected bit (0 in
/// lanes past the key's columns). Mismatches of several groups combine
/// with a plain OR, tested once at the end.
///
/// # Safety
/// AVX-512F/VPOPCNTDQ are available, `j < 64`, and `p`'s columns lie
/// inside `payload`.
#[inline(always)]
unsafe fn eight_columns<P: Probes<u64>>(
    payload: &[u8],
    p: &Probe<u64>,
    j: usize,
    cl: __m512i,
    ch: __m512i,
) -> __m512i {
    // SAFETY: as documented above.
    unsafe {
        let lanes = (p.mask >> j) as __mmask8;
        let mut x = selected(payload, (p.lo_word + j, p.hi_word + j), 8, lanes, cl, ch);
        if P::RESULT {
            // parity(x) ^ e = parity(x ^ e) for a one-bit e.
            let expected = (p.expected >> j) as __mmask8;
            x = _mm512_mask_xor_epi64(x, expected, x, _mm512_set1_epi64(1));
        }
        _mm512_popcnt_epi64(x)
    }
}

impl QueryKernel<u128> for Avx512 {
    super::expand_and_prefetch!(__m512i, u128);

    #[inline(always)]
    unsafe fn matches<P: Probes<u128>>(
        payload: &[u8],
        p: &Probe<u128>,
        max_columns: usize,
    ) -> bool {
        // SAFETY: as for the 64-bit kernel; a column is two lanes.
        unsafe {
            let cl = _mm512_broadcast_i32x4(_mm_set_epi64x(
                (p.c_lo >> 64) as u64 as i64,
                p.c_lo as u64 as i64,
            ));
            let ch = _mm512_broadcast_i32x4(_mm_set_epi64x(
                (p.c_hi >> 64) as u64 as i64,
                p.c_hi as u64 as i64,
            ));
            let mut mismatches = _mm512_setzero_si512();
            let mut j = 0;
            loop {
                // Eight columns per step, as two independent vectors. The
                // key's columns are the low bits of its mask, so the 16
                // lanes of the next eight columns are the low
                // 2 * min(8, columns - j) bits: (m + 1)^2 - 1 for
                // m = (1 << c) - 1.
                let m = (p.mask >> j) & 0xff;
                let lanes = (m + 1) * (m + 1) - 1;
                let expected = _mm512_set1_epi64((p.expected >> j) as i64);
                let a = four_columns::<P>(payload, p, j, lanes, expected, 0, cl, ch);
                let b = four_columns::<P>(payload, p, j + 4, lanes >> 8, expected, 4, cl, ch);
                mismatches = _mm512_or_si512(mismatches, _mm512_or_si512(a, b));
                j += 8;
                if j >= max_columns {
                    return _mm512_test_epi64_mask(mismatches, _mm512_set1_epi64(1)) == 0;
                }
            }
        }
    }

    #[inline(always)]
    unsafe fn column_values<P: Probes<u128>>(
        payload: &[u8],
        p: &Probe<u128>,
        max_columns: usize,
    ) -> u64 {
        // SAFETY: as for `matches`: the lanes loaded are the key's
        // columns, inside the validated payload.
        unsafe {
            let cl = _mm512_broadcast_i32x4(_mm_set_epi64x(
                (p.c_lo >> 64) as u64 as i64,
                p.c_lo as u64 as i64,
            ));
            let ch = _mm512_broadcast_i32x4(_mm_set_epi64x(
                (p.c_hi >> 64) as u64 as i64,
                p.c_hi as u64 as i64,
            ));
            // Lane indices into the pair (a, b) of 4-column vectors: every
            // column's low halves, then its high halves, in column order.
            let low_halves = _mm512_set_epi64(14, 12, 10, 8, 6, 4, 2, 0);
            let high_halves = _mm512_set_epi64(15, 13, 11, 9, 7, 5, 3, 1);
            let mut bits = 0u64;
            let mut j = 0;
            loop {
                // The 16 lanes of the next eight columns, as in `matches`.
                let m = (p.mask >> j) & 0xff;
                let lanes = (m + 1) * (m + 1) - 1;
                let (lo, hi) = (p.lo_word + j, p.hi_word + j);
                let a = selected(payload, (lo, hi), 16, lanes as __mmask8, cl, ch);
                let b = selected(
                    payload,
                    (lo + 4, hi + 4),
                    16,
                    (lanes >> 8) as __mmask8,
                    cl,
                    ch,
                );
                // parity(l) ^ parity(h) = parity(l ^ h): one lane per column.
                let x = _mm512_xor_si512(
                    _mm512_permutex2var_epi64(a, low_halves, b),
                    _mm512_permutex2var_epi64(a, high_halves, b),
                );
                let eight = _mm512_test_epi64_mask(_mm512_popcnt_epi64(x), _mm512_set1_epi64(1));
                bits |= u64::from(eight) << (j & 63);
                j += 8;
                if j >= max_columns {
                    // Lanes past the key's columns were not loaded (0).
                    return bits ^ if P::RESULT { p.expected & p.mask } else { 0 };
                }
            }
        }
    }
}

/// Columns `j .. j + 4` of a 128-bit probe (lanes 2k and 2k + 1 hold
/// column `j + k`): both lanes of a column hold a count whose low bit is 1
/// when the column does not match its expected bit, 0 in lanes past the
/// key's columns. Bit `first + k` of every lane of `expected` is column
/// `j + k`'s expected bit. (A function, not a closure: closures do not
/// inherit the caller's target features.)
///
/// # Safety
/// AVX-512F/VPOPCNTDQ are available and the lanes in `lanes` lie inside
/// `payload`.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
unsafe fn four_columns<P: Probes<u128>>(
    payload: &[u8],
    p: &Probe<u128>,
    j: usize,
    lanes: u64,
    expected: __m512i,
    first: i64,
    cl: __m512i,
    ch: __m512i,
) -> __m512i {
    // SAFETY: as documented above.
    unsafe {
        let words = (p.lo_word + j, p.hi_word + j);
        let x = selected(payload, words, 16, lanes as __mmask8, cl, ch);
        // Fold each column's two halves: parity(l) ^ parity(h).
        let mut folded = _mm512_xor_si512(x, _mm512_shuffle_epi32::<0x4e>(x));
        if P::RESULT {
            // parity(x) ^ e = parity(x ^ e) for a one-bit e.
            let column = _mm512_set_epi64(
                first + 3,
                first + 3,
                first + 2,
                first + 2,
                first + 1,
                first + 1,
                first,
                first,
            );
            let bit = _mm512_and_si512(_mm512_srlv_epi64(expected, column), _mm512_set1_epi64(1));
            folded = _mm512_xor_si512(folded, bit);
        }
        _mm512_popcnt_epi64(folded)
    }
}

/// Eight 64-bit lanes (back-substitution and the hash expansion).
impl Lanes64 for __m512i {
    const LANES: usize = 8;

    #[inline(always)]
    unsafe fn splat(v: u64) -> Self {
        // SAFETY: AVX-512F is available (the trait's contract).
        unsafe { _mm512_set1_epi64(v as i64) }
    }
    #[inline(always)]
    unsafe fn store(self, dst: &mut [u64]) {
        generic::copy_lanes(dst, must_cast::<__m512i, [u64; 8]>(self));
    }
    generic::lanes64_bitwise!(_mm512_xor_si512, _mm512_and_si512, _mm512_or_si512);
    #[inline(always)]
    unsafe fn shr<const N: u32>(self) -> Self {
        // SAFETY: AVX-512F is available (the trait's contract).
        unsafe { _mm512_srli_epi64::<N>(self) }
    }
    #[inline(always)]
    unsafe fn shl<const N: u32>(self) -> Self {
        // SAFETY: AVX-512F is available (the trait's contract).
        unsafe { _mm512_slli_epi64::<N>(self) }
    }
    #[inline(always)]
    unsafe fn parity(self) -> Self {
        // SAFETY: AVX-512 VPOPCNTDQ is available (the trait's contract).
        unsafe { _mm512_popcnt_epi64(self) }
    }
    #[inline(always)]
    unsafe fn bit_per_lane(bits: u64) -> Self {
        // SAFETY: AVX-512F is available (the trait's contract).
        unsafe {
            _mm512_srlv_epi64(
                _mm512_set1_epi64(bits as i64),
                _mm512_set_epi64(7, 6, 5, 4, 3, 2, 1, 0),
            )
        }
    }
}

/// Eight lanes for the vector hash expansion (`super::expand`).
impl U64Lanes for __m512i {
    type Mask = __mmask8;

    #[inline(always)]
    unsafe fn load(src: &[u64]) -> Self {
        must_cast(super::lanes_of::<8>(src))
    }
    #[inline(always)]
    unsafe fn store_u128(lo: Self, hi: Self, dst: &mut [u128]) {
        debug_assert!(dst.len() >= 8);
        // Little-endian u128: low half first; keys 0-3, then 4-7.
        // SAFETY: AVX-512F is available (the trait's contract).
        unsafe {
            let first =
                _mm512_permutex2var_epi64(lo, _mm512_set_epi64(11, 3, 10, 2, 9, 1, 8, 0), hi);
            let second =
                _mm512_permutex2var_epi64(lo, _mm512_set_epi64(15, 7, 14, 6, 13, 5, 12, 4), hi);
            let (first, second): ([u128; 4], [u128; 4]) = (must_cast(first), must_cast(second));
            generic::copy_lanes(dst, first.into_iter().chain(second));
        }
    }
    #[inline(always)]
    unsafe fn add(self, o: Self) -> Self {
        // SAFETY: AVX-512F is available (the trait's contract).
        unsafe { _mm512_add_epi64(self, o) }
    }
    #[inline(always)]
    unsafe fn sub(self, o: Self) -> Self {
        // SAFETY: AVX-512F is available (the trait's contract).
        unsafe { _mm512_sub_epi64(self, o) }
    }
    #[inline(always)]
    unsafe fn mul32(self, o: Self) -> Self {
        // SAFETY: AVX-512F is available (the trait's contract).
        unsafe { _mm512_mul_epu32(self, o) }
    }
    #[inline(always)]
    unsafe fn shr_var(self, counts: Self) -> Self {
        // SAFETY: AVX-512F is available (the trait's contract).
        unsafe { _mm512_srlv_epi64(self, counts) }
    }
    #[inline(always)]
    unsafe fn shl_var(self, counts: Self) -> Self {
        // SAFETY: AVX-512F is available (the trait's contract).
        unsafe { _mm512_sllv_epi64(self, counts) }
    }
    #[inline(always)]
    unsafe fn ge(self, o: Self) -> __mmask8 {
        // SAFETY: AVX-512F is available (the trait's contract).
        unsafe { _mm512_cmpge_epu64_mask(self, o) }
    }
    #[inline(always)]
    unsafe fn lt(self, o: Self) -> __mmask8 {
        // SAFETY: AVX-512F is available (the trait's contract).
        unsafe { _mm512_cmplt_epu64_mask(self, o) }
    }
    #[inline(always)]
    unsafe fn select(m: __mmask8, if_true: Self, if_false: Self) -> Self {
        // SAFETY: AVX-512F is available (the trait's contract).
        unsafe { _mm512_mask_blend_epi64(m, if_false, if_true) }
    }
}

generic::entry_points!(Avx512, __m512i, "avx512f,avx512vpopcntdq,avx2");

impl super::bumped::GatherLanes for __m512i {
    #[inline(always)]
    unsafe fn gather(bytes: &[u8], offsets: Self) -> Self {
        // Two AVX2 gathers: as fast here, and Miri runs them (it lacks the
        // 512-bit one).
        // SAFETY: AVX-512F and AVX2 are available and every offset leaves
        // 8 bytes inside `bytes` (the trait's contract).
        unsafe {
            let base = bytes.as_ptr().cast::<i64>();
            let lo = _mm256_i64gather_epi64::<1>(base, _mm512_castsi512_si256(offsets));
            let hi = _mm256_i64gather_epi64::<1>(base, _mm512_extracti64x4_epi64::<1>(offsets));
            _mm512_inserti64x4::<1>(_mm512_castsi256_si512(lo), hi)
        }
    }
    #[inline(always)]
    unsafe fn mask_bits(m: __mmask8) -> u32 {
        u32::from(m)
    }
    #[inline(always)]
    unsafe fn store_packed(x: Self, first: u64, lanes: u32, out: &mut [BumpedKey]) {
        let Some(order) = super::bumped::PACKED_LANES.get(lanes as usize) else {
            return;
        };
        // SAFETY: AVX-512F is available (the trait's contract); `order`
        // holds 8 bytes; `out` holds 8 pairs of two u64 (the trait's
        // contract), which the two unaligned stores fill.
        unsafe {
            let lane = _mm512_cvtepu8_epi64(_mm_loadl_epi64(order.as_ptr().cast()));
            let xs = _mm512_permutexvar_epi64(lane, x);
            let at = _mm512_add_epi64(_mm512_set1_epi64(first as i64), lane);
            // Pairs 0-3 and 4-7: x and at of one packed lane side by side.
            let lo = _mm512_permutex2var_epi64(xs, _mm512_setr_epi64(0, 8, 1, 9, 2, 10, 3, 11), at);
            let hi =
                _mm512_permutex2var_epi64(xs, _mm512_setr_epi64(4, 12, 5, 13, 6, 14, 7, 15), at);
            let dst = out.as_mut_ptr().cast::<__m512i>();
            _mm512_storeu_si512(dst, lo);
            _mm512_storeu_si512(dst.add(1), hi);
        }
    }
}

/// `scalar::scan_bumped` (a Bumped filter's first-layer threshold check)
/// eight keys at a time.
///
/// # Safety
/// The CPU supports AVX-512F, AVX512VPOPCNTDQ and AVX2.
#[target_feature(enable = "avx512f,avx512vpopcntdq,avx2")]
pub(crate) unsafe fn scan_bumped(
    parts: &Parts,
    thresholds: &ThresholdsRef<'_>,
    hashes: &[u64],
    first: usize,
    out: &mut [BumpedKey],
) -> (usize, usize) {
    // SAFETY: the instruction sets are enabled for this function.
    unsafe { super::bumped::scan_bumped::<__m512i>(parts, thresholds, hashes, first, out) }
}
