//! AVX2 kernels: four 64-bit lanes per vector, lane parity through a
//! nibble lookup table (`vpshufb`) and `vpsadbw`.

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
    /// The AVX2 instruction set.
    Avx2,
    AVX2
);

/// Per-lane parity of `x`: 0 or 1 in each 64-bit lane.
#[inline(always)]
unsafe fn parity_lanes(x: __m256i) -> __m256i {
    // SAFETY: the callers are `avx2` target-feature functions or are only
    // inlined into them.
    unsafe {
        let nibble_parity = _mm256_setr_epi8(
            0, 1, 1, 0, 1, 0, 0, 1, 1, 0, 0, 1, 0, 1, 1, 0, //
            0, 1, 1, 0, 1, 0, 0, 1, 1, 0, 0, 1, 0, 1, 1, 0,
        );
        let low = _mm256_set1_epi8(0x0f);
        let lo = _mm256_and_si256(x, low);
        let hi = _mm256_and_si256(_mm256_srli_epi16::<4>(x), low);
        let per_byte = _mm256_xor_si256(
            _mm256_shuffle_epi8(nibble_parity, lo),
            _mm256_shuffle_epi8(nibble_parity, hi),
        );
        // Sum of the eight byte parities of each lane: its low bit is the
        // lane's parity.
        let sums = _mm256_sad_epu8(per_byte, _mm256_setzero_si256());
        _mm256_and_si256(sums, _mm256_set1_epi64x(1))
    }
}

/// Lane parities of `x` as a 4-bit mask (lane `i` in bit `i`).
#[inline(always)]
unsafe fn parity_mask(x: __m256i) -> u64 {
    // SAFETY: as for `parity_lanes`.
    unsafe {
        let p = parity_lanes(x);
        _mm256_movemask_pd(_mm256_castsi256_pd(_mm256_slli_epi64::<63>(p))) as u64
    }
}

/// Parities of the eight 32-bit lanes of `y` as an 8-bit mask (lane `k`
/// in bit `k`).
#[inline(always)]
unsafe fn parity_mask32(y: __m256i) -> u64 {
    // SAFETY: as for `parity_lanes`.
    unsafe {
        let nibble_parity = _mm256_setr_epi8(
            0, 1, 1, 0, 1, 0, 0, 1, 1, 0, 0, 1, 0, 1, 1, 0, //
            0, 1, 1, 0, 1, 0, 0, 1, 1, 0, 0, 1, 0, 1, 1, 0,
        );
        // Xor-folding keeps the parity: 32 -> 16 -> 8 -> 4 bits.
        let mut y = _mm256_xor_si256(y, _mm256_srli_epi32::<16>(y));
        y = _mm256_xor_si256(y, _mm256_srli_epi32::<8>(y));
        y = _mm256_xor_si256(y, _mm256_srli_epi32::<4>(y));
        let p = _mm256_shuffle_epi8(nibble_parity, _mm256_and_si256(y, _mm256_set1_epi32(0x0f)));
        _mm256_movemask_ps(_mm256_castsi256_ps(_mm256_slli_epi32::<31>(p))) as u64
    }
}

/// Loads 32 bytes at word `word` of `payload` (word size `bytes`).
///
/// # Safety
/// AVX2 is available and `(word * bytes) + 32 <= payload.len()`.
#[inline(always)]
unsafe fn load(payload: &[u8], word: usize, bytes: usize) -> __m256i {
    // SAFETY: the caller checked the 32 bytes are inside `payload`; loadu
    // has no alignment requirement.
    unsafe { _mm256_loadu_si256(payload.as_ptr().add(word * bytes).cast::<__m256i>()) }
}

impl QueryKernel<u64> for Avx2 {
    super::expand_and_prefetch!(__m256i, u64);

    generic::matches_with_scalar_fallback!(u64);
    generic::column_values_with_scalar_fallback!(u64);

    #[inline(always)]
    unsafe fn matches_fast<P: Probes<u64>>(
        payload: &[u8],
        p: &Probe<u64>,
        max_columns: usize,
    ) -> Option<bool> {
        // SAFETY: the caller's guarantees.
        let bits = unsafe { parities_64(payload, p, max_columns) }?;
        Some(bits & p.mask == if P::RESULT { p.expected } else { 0 })
    }

    #[inline(always)]
    unsafe fn column_values_fast<P: Probes<u64>>(
        payload: &[u8],
        p: &Probe<u64>,
        max_columns: usize,
    ) -> Option<u64> {
        // SAFETY: the caller's guarantees.
        let bits = unsafe { parities_64(payload, p, max_columns) };
        bits.map(|bits| (bits ^ if P::RESULT { p.expected } else { 0 }) & p.mask)
    }
}

/// The column parities of a 64-bit probe, column `j` in bit `j`, for
/// whole groups of four columns up to `max_columns` (bits past the key's
/// columns are those of the words that follow: callers mask them), or
/// `None` when a group would run past the payload (the scalar kernel's
/// keys, see [`QueryKernel::matches_fast`]).
///
/// # Safety
/// AVX2 is available.
#[inline(always)]
unsafe fn parities_64(payload: &[u8], p: &Probe<u64>, max_columns: usize) -> Option<u64> {
    // Lanes past the key's columns read words that exist but are
    // masked out of the result.
    let groups = max_columns.div_ceil(4);
    // Whole groups of four words are read; the few keys whose groups
    // would run past the payload take the scalar path.
    if (p.lo_word.max(p.hi_word) + groups * 4) * 8 > payload.len() {
        return None;
    }
    // SAFETY: AVX2 is available (caller); every load is in bounds
    // (checked above).
    unsafe {
        let cl = _mm256_set1_epi64x(p.c_lo as i64);
        let ch = _mm256_set1_epi64x(p.c_hi as i64);
        let mut bits = 0u64;
        for g in 0..groups {
            let lo = load(payload, p.lo_word + 4 * g, 8);
            let hi = load(payload, p.hi_word + 4 * g, 8);
            let x = _mm256_xor_si256(_mm256_and_si256(lo, cl), _mm256_and_si256(hi, ch));
            bits |= parity_mask(x) << (4 * g);
        }
        Some(bits)
    }
}

impl QueryKernel<u128> for Avx2 {
    super::expand_and_prefetch!(__m256i, u128);

    generic::matches_with_scalar_fallback!(u128);
    generic::column_values_with_scalar_fallback!(u128);

    #[inline(always)]
    unsafe fn matches_fast<P: Probes<u128>>(
        payload: &[u8],
        p: &Probe<u128>,
        max_columns: usize,
    ) -> Option<bool> {
        // SAFETY: the caller's guarantees.
        let bits = unsafe { parities_128(payload, p, max_columns) }?;
        Some(bits & p.mask == if P::RESULT { p.expected } else { 0 })
    }

    #[inline(always)]
    unsafe fn column_values_fast<P: Probes<u128>>(
        payload: &[u8],
        p: &Probe<u128>,
        max_columns: usize,
    ) -> Option<u64> {
        // SAFETY: the caller's guarantees.
        let bits = unsafe { parities_128(payload, p, max_columns) };
        bits.map(|bits| (bits ^ if P::RESULT { p.expected } else { 0 }) & p.mask)
    }
}

/// The column parities of a 128-bit probe, column `j` in bit `j`, eight
/// columns at a time up to `max_columns` (bits past the key's columns
/// are those of the words that follow, or 0 past `max_columns`: callers
/// mask them), or `None` when a pair of columns would run past the
/// payload (the scalar kernel's keys).
///
/// # Safety
/// AVX2 is available.
#[inline(always)]
unsafe fn parities_128(payload: &[u8], p: &Probe<u128>, max_columns: usize) -> Option<u64> {
    let groups = max_columns.div_ceil(2);
    if (p.lo_word.max(p.hi_word) + groups * 2) * 16 > payload.len() {
        return None;
    }
    // SAFETY: AVX2 is available (caller); loads checked above (a pair
    // of columns is loaded only below `max_columns`).
    unsafe {
        let (cl_lo, cl_hi) = (p.c_lo as u64 as i64, (p.c_lo >> 64) as u64 as i64);
        let (ch_lo, ch_hi) = (p.c_hi as u64 as i64, (p.c_hi >> 64) as u64 as i64);
        let cl = _mm256_set_epi64x(cl_hi, cl_lo, cl_hi, cl_lo);
        let ch = _mm256_set_epi64x(ch_hi, ch_lo, ch_hi, ch_lo);
        // Columns j, j + 1 as 64-bit lanes low, high, low, high.
        let select = |j: usize| {
            if j < max_columns {
                let lo = load(payload, p.lo_word + j, 16);
                let hi = load(payload, p.hi_word + j, 16);
                _mm256_xor_si256(_mm256_and_si256(lo, cl), _mm256_and_si256(hi, ch))
            } else {
                _mm256_setzero_si256()
            }
        };
        let mut bits = 0u64;
        let mut j = 0;
        while j < max_columns {
            // The 32-bit folds of column pairs (j, j + 2) and (j + 1,
            // j + 3) interleaved, then each column's two halves xored.
            let halves = |x: __m256i, y: __m256i| {
                let t = _mm256_blend_epi32::<0b1010_1010>(
                    _mm256_xor_si256(x, _mm256_srli_epi64::<32>(x)),
                    _mm256_xor_si256(y, _mm256_slli_epi64::<32>(y)),
                );
                // 32-bit lanes: j, j+2, j, j+2, j+1, j+3, j+1, j+3.
                _mm256_xor_si256(t, _mm256_shuffle_epi32::<0x4e>(t))
            };
            let u = halves(select(j), select(j + 2));
            let v = halves(select(j + 4), select(j + 6));
            // Columns j, j+2, j+4, j+6, j+1, j+3, j+5, j+7, then in order.
            let w = _mm256_permutevar8x32_epi32(
                _mm256_blend_epi32::<0b1100_1100>(u, v),
                _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7),
            );
            bits |= parity_mask32(w) << (j & 63);
            j += 8;
        }
        Some(bits)
    }
}

/// Four 64-bit lanes (back-substitution and the hash expansion).
impl Lanes64 for __m256i {
    const LANES: usize = 4;

    #[inline(always)]
    unsafe fn splat(v: u64) -> Self {
        // SAFETY: AVX2 is available (the trait's contract).
        unsafe { _mm256_set1_epi64x(v as i64) }
    }
    #[inline(always)]
    unsafe fn store(self, dst: &mut [u64]) {
        generic::copy_lanes(dst, must_cast::<__m256i, [u64; 4]>(self));
    }
    generic::lanes64_bitwise!(_mm256_xor_si256, _mm256_and_si256, _mm256_or_si256);
    #[inline(always)]
    unsafe fn shr<const N: u32>(self) -> Self {
        // A count register rather than an immediate (whose type differs);
        // the compiler emits the immediate form for the constant count.
        unsafe { _mm256_srl_epi64(self, _mm_set_epi64x(0, i64::from(N))) }
    }
    #[inline(always)]
    unsafe fn shl<const N: u32>(self) -> Self {
        // SAFETY: AVX2 is available (the trait's contract).
        unsafe { _mm256_sll_epi64(self, _mm_set_epi64x(0, i64::from(N))) }
    }
    #[inline(always)]
    unsafe fn parity(self) -> Self {
        // SAFETY: AVX2 is available (the trait's contract).
        unsafe { parity_lanes(self) }
    }
    #[inline(always)]
    unsafe fn bit_per_lane(bits: u64) -> Self {
        // SAFETY: AVX2 is available (the trait's contract).
        unsafe {
            _mm256_srlv_epi64(
                _mm256_set1_epi64x(bits as i64),
                _mm256_setr_epi64x(0, 1, 2, 3),
            )
        }
    }
}

/// Four lanes for the vector hash expansion (`super::expand`). AVX2 has
/// only signed 64-bit compares; the expansion compares values below 2^63,
/// where they agree with unsigned ones.
impl U64Lanes for __m256i {
    /// All ones in lanes where the comparison holds.
    type Mask = __m256i;

    #[inline(always)]
    unsafe fn load(src: &[u64]) -> Self {
        must_cast(super::lanes_of::<4>(src))
    }
    #[inline(always)]
    unsafe fn store_u128(lo: Self, hi: Self, dst: &mut [u128]) {
        debug_assert!(dst.len() >= 4);
        // Little-endian u128: low half first. The unpacks give keys 0, 2
        // and 1, 3; the permutes put them in order.
        // SAFETY: AVX2 is available (the trait's contract).
        unsafe {
            let even = _mm256_unpacklo_epi64(lo, hi);
            let odd = _mm256_unpackhi_epi64(lo, hi);
            let first = _mm256_permute2x128_si256::<0x20>(even, odd);
            let second = _mm256_permute2x128_si256::<0x31>(even, odd);
            let (first, second): ([u128; 2], [u128; 2]) = (must_cast(first), must_cast(second));
            generic::copy_lanes(dst, first.into_iter().chain(second));
        }
    }
    #[inline(always)]
    unsafe fn add(self, o: Self) -> Self {
        // SAFETY: AVX2 is available (the trait's contract).
        unsafe { _mm256_add_epi64(self, o) }
    }
    #[inline(always)]
    unsafe fn sub(self, o: Self) -> Self {
        // SAFETY: AVX2 is available (the trait's contract).
        unsafe { _mm256_sub_epi64(self, o) }
    }
    #[inline(always)]
    unsafe fn mul32(self, o: Self) -> Self {
        // SAFETY: AVX2 is available (the trait's contract).
        unsafe { _mm256_mul_epu32(self, o) }
    }
    #[inline(always)]
    unsafe fn shr_var(self, counts: Self) -> Self {
        // SAFETY: AVX2 is available (the trait's contract).
        unsafe { _mm256_srlv_epi64(self, counts) }
    }
    #[inline(always)]
    unsafe fn shl_var(self, counts: Self) -> Self {
        // SAFETY: AVX2 is available (the trait's contract).
        unsafe { _mm256_sllv_epi64(self, counts) }
    }
    #[inline(always)]
    unsafe fn ge(self, o: Self) -> __m256i {
        // self >= o  <=>  self > o - 1 (signed; o - 1 >= -1 here).
        unsafe { _mm256_cmpgt_epi64(self, _mm256_sub_epi64(o, _mm256_set1_epi64x(1))) }
    }
    #[inline(always)]
    unsafe fn lt(self, o: Self) -> __m256i {
        // SAFETY: AVX2 is available (the trait's contract).
        unsafe { _mm256_cmpgt_epi64(o, self) }
    }
    #[inline(always)]
    unsafe fn select(m: __m256i, if_true: Self, if_false: Self) -> Self {
        // SAFETY: AVX2 is available (the trait's contract).
        unsafe { _mm256_blendv_epi8(if_false, if_true, m) }
    }
}

generic::entry_points!(Avx2, __m256i, "avx2");

impl super::bumped::GatherLanes for __m256i {
    #[inline(always)]
    unsafe fn gather(bytes: &[u8], offsets: Self) -> Self {
        // SAFETY: AVX2 is available and every offset leaves 8 bytes inside
        // `bytes` (the trait's contract).
        unsafe { _mm256_i64gather_epi64::<1>(bytes.as_ptr().cast::<i64>(), offsets) }
    }
    #[inline(always)]
    unsafe fn mask_bits(m: __m256i) -> u32 {
        // SAFETY: AVX2 is available (the trait's contract).
        unsafe { _mm256_movemask_pd(_mm256_castsi256_pd(m)) as u32 }
    }
    #[inline(always)]
    unsafe fn store_packed(x: Self, first: u64, lanes: u32, out: &mut [BumpedKey]) {
        // Masks of four lanes pack to lanes below four.
        let Some(order) = super::bumped::PACKED_LANES.get(lanes as usize & 15) else {
            return;
        };
        let order = u32::from_le_bytes([order[0], order[1], order[2], order[3]]);
        // SAFETY: AVX2 is available (the trait's contract); `out` holds 4
        // pairs of two u64 (the trait's contract), which the two unaligned
        // stores fill.
        unsafe {
            let lane = _mm256_cvtepu8_epi64(_mm_cvtsi32_si128(order as i32));
            // The 32-bit halves of each packed lane: 2 * lane and 2 * lane + 1.
            let half = _mm256_add_epi64(lane, lane);
            let halves = _mm256_or_si256(
                half,
                _mm256_slli_epi64::<32>(_mm256_add_epi64(half, _mm256_set1_epi64x(1))),
            );
            let xs = _mm256_permutevar8x32_epi32(x, halves);
            let at = _mm256_add_epi64(_mm256_set1_epi64x(first as i64), lane);
            let (lo, hi) = (_mm256_unpacklo_epi64(xs, at), _mm256_unpackhi_epi64(xs, at));
            let dst = out.as_mut_ptr().cast::<__m256i>();
            _mm256_storeu_si256(dst, _mm256_permute2x128_si256::<0x20>(lo, hi));
            _mm256_storeu_si256(dst.add(1), _mm256_permute2x128_si256::<0x31>(lo, hi));
        }
    }
}

/// `scalar::scan_bumped` (a Bumped filter's first-layer threshold check)
/// four keys at a time.
///
/// # Safety
/// The CPU supports AVX2.
#[target_feature(enable = "avx2")]
pub(crate) unsafe fn scan_bumped(
    parts: &Parts,
    thresholds: &ThresholdsRef<'_>,
    hashes: &[u64],
    first: usize,
    out: &mut [BumpedKey],
) -> (usize, usize) {
    // SAFETY: AVX2 is enabled for this function.
    unsafe { super::bumped::scan_bumped::<__m256i>(parts, thresholds, hashes, first, out) }
}
