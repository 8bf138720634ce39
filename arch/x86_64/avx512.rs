//! AVX-512 kernels (AVX512F + AVX512VPOPCNTDQ): eight 64-bit lanes per
//! vector, masked loads for any column count, `vpopcntq` for lane parity.

use core::arch::x86_64::*;

use crate::arch::generic::{self, CHUNK, ProbeChunk, QueryKernel, SolveLanes};
use crate::hash::{self, Coeff, Expander, FreeRows};
use crate::layout::Geometry;
use crate::query::{Probe, Probes};
use crate::word::Rows;

/// The AVX-512F + VPOPCNTDQ instruction set (with AVX2).
pub(crate) struct Avx512;

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
    #[inline(always)]
    unsafe fn expand<P: Probes<u64>>(probes: &P, hashes: &[u64], chunk: &mut ProbeChunk<u64>) {
        // SAFETY: AVX-512F is available (caller).
        unsafe { expand_chunk::<u64, P>(probes, hashes, chunk) }
    }

    #[inline(always)]
    unsafe fn prefetch(payload: &[u8], p: &Probe<u64>, max_columns: usize) {
        // SAFETY: SSE is part of x86_64.
        unsafe { super::prefetch_probe(payload, p, max_columns) }
    }

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
        let lo = load(payload, p.lo_word + j, 8, lanes);
        let hi = load(payload, p.hi_word + j, 8, lanes);
        let mut x = _mm512_xor_si512(_mm512_and_si512(lo, cl), _mm512_and_si512(hi, ch));
        if P::RESULT {
            // parity(x) ^ e = parity(x ^ e) for a one-bit e.
            let expected = (p.expected >> j) as __mmask8;
            x = _mm512_mask_xor_epi64(x, expected, x, _mm512_set1_epi64(1));
        }
        _mm512_popcnt_epi64(x)
    }
}

impl QueryKernel<u128> for Avx512 {
    #[inline(always)]
    unsafe fn expand<P: Probes<u128>>(probes: &P, hashes: &[u64], chunk: &mut ProbeChunk<u128>) {
        // SAFETY: AVX-512F is available (caller).
        unsafe { expand_chunk::<u128, P>(probes, hashes, chunk) }
    }

    #[inline(always)]
    unsafe fn prefetch(payload: &[u8], p: &Probe<u128>, max_columns: usize) {
        // SAFETY: SSE is part of x86_64.
        unsafe { super::prefetch_probe(payload, p, max_columns) }
    }

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
        let lo = load(payload, p.lo_word + j, 16, lanes as __mmask8);
        let hi = load(payload, p.hi_word + j, 16, lanes as __mmask8);
        let x = _mm512_xor_si512(_mm512_and_si512(lo, cl), _mm512_and_si512(hi, ch));
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

// ---------------------------------------------------------------------
// Hash expansion, eight keys at a time: the vector twin of
// `NativeProbes::probe` (hash::remix, hash::start, hash::coeff,
// hash::result, Expander::mask_for and query::probe_for), bit for bit.
// AVX-512F has no 64-bit multiply, so products are assembled from
// 32 x 32 -> 64-bit ones (`vpmuludq`).
// ---------------------------------------------------------------------

/// Low 64 bits of `a * b` in every lane.
///
/// # Safety
/// AVX-512F is available.
#[inline(always)]
unsafe fn mul_lo(a: __m512i, b: u64) -> __m512i {
    // SAFETY: AVX-512F is available (caller).
    unsafe {
        let b_lo = _mm512_set1_epi64((b & 0xffff_ffff) as i64);
        let b_hi = _mm512_set1_epi64((b >> 32) as i64);
        let a_hi = _mm512_srli_epi64::<32>(a);
        let cross = _mm512_add_epi64(_mm512_mul_epu32(a_hi, b_lo), _mm512_mul_epu32(a, b_hi));
        _mm512_add_epi64(_mm512_mul_epu32(a, b_lo), _mm512_slli_epi64::<32>(cross))
    }
}

/// The 128-bit product `a * b` in every lane, as (low, high) halves.
///
/// # Safety
/// AVX-512F is available.
#[inline(always)]
unsafe fn mul_full(a: __m512i, b: u64) -> (__m512i, __m512i) {
    // SAFETY: AVX-512F is available (caller).
    unsafe {
        let low32 = _mm512_set1_epi64(0xffff_ffff);
        let b_lo = _mm512_set1_epi64((b & 0xffff_ffff) as i64);
        let b_hi = _mm512_set1_epi64((b >> 32) as i64);
        let a_hi = _mm512_srli_epi64::<32>(a);
        let p00 = _mm512_mul_epu32(a, b_lo);
        let p01 = _mm512_mul_epu32(a, b_hi);
        let p10 = _mm512_mul_epu32(a_hi, b_lo);
        let p11 = _mm512_mul_epu32(a_hi, b_hi);
        // Bits 32..96: three terms below 2^32 each, no overflow.
        let mid = _mm512_add_epi64(
            _mm512_add_epi64(_mm512_srli_epi64::<32>(p00), _mm512_and_si512(p01, low32)),
            _mm512_and_si512(p10, low32),
        );
        let hi = _mm512_add_epi64(
            _mm512_add_epi64(p11, _mm512_srli_epi64::<32>(p01)),
            _mm512_add_epi64(_mm512_srli_epi64::<32>(p10), _mm512_srli_epi64::<32>(mid)),
        );
        let lo = _mm512_or_si512(_mm512_and_si512(p00, low32), _mm512_slli_epi64::<32>(mid));
        (lo, hi)
    }
}

/// A filter's expansion constants, one per lane.
struct Broadcast {
    seed_mix: __m512i,
    /// `num_starts + 2 * smash`, below 2^32.
    draws: __m512i,
    smash: Option<(__m512i, __m512i)>,
    upper_start_slot: __m512i,
    lower_mask: __m512i,
    upper_mask: __m512i,
    lower_columns: __m512i,
    upper_start_block: __m512i,
    num_blocks: __m512i,
}

impl Broadcast {
    /// The constants, or `None` when the filter is too large for the
    /// 32-bit multiplies below (more than 2^32 starts: over 4 GiB per
    /// column).
    ///
    /// # Safety
    /// AVX-512F is available.
    #[inline(always)]
    unsafe fn new(g: &Geometry, e: &Expander) -> Option<Broadcast> {
        let draws = e.num_starts.checked_add(2 * e.smash)?;
        if draws > u64::from(u32::MAX) || e.num_starts == 0 {
            return None;
        }
        let set = |v: u64| {
            // SAFETY: AVX-512F is available (caller).
            unsafe { _mm512_set1_epi64(v as i64) }
        };
        Some(Broadcast {
            seed_mix: set(e.seed_mix),
            draws: set(draws),
            smash: (e.smash > 0).then(|| (set(e.smash), set(e.num_starts - 1))),
            upper_start_slot: set(e.upper_start_slot),
            lower_mask: set(e.lower_mask),
            upper_mask: set(e.upper_mask),
            lower_columns: set(u64::from(g.lower_columns)),
            upper_start_block: set(g.upper_start_block as u64),
            num_blocks: set(g.num_blocks as u64),
        })
    }
}

/// Eight keys' remixed values, starts, column masks and (`standard`)
/// masked result bits.
///
/// # Safety
/// AVX-512F is available.
#[inline(always)]
unsafe fn expand_common(
    b: &Broadcast,
    hashes: __m512i,
    standard: bool,
) -> (__m512i, __m512i, __m512i, __m512i) {
    // SAFETY: AVX-512F is available (caller).
    unsafe {
        let x = mul_lo(_mm512_xor_si512(hashes, b.seed_mix), hash::REMIX);
        // Fastrange with `draws < 2^32`: the high half of x * draws is
        // (x_hi * draws + (x_lo * draws >> 32)) >> 32, exactly.
        let high = _mm512_mul_epu32(_mm512_srli_epi64::<32>(x), b.draws);
        let low = _mm512_srli_epi64::<32>(_mm512_mul_epu32(x, b.draws));
        let mut start = _mm512_srli_epi64::<32>(_mm512_add_epi64(high, low));
        if let Some((smash, last)) = b.smash {
            let above = _mm512_sub_epi64(_mm512_max_epu64(start, smash), smash);
            start = _mm512_min_epu64(above, last);
        }
        let upper = _mm512_cmpge_epu64_mask(start, b.upper_start_slot);
        let mask = _mm512_mask_blend_epi64(upper, b.lower_mask, b.upper_mask);
        let expected = if standard {
            let (lo, hi) = mul_full(x, hash::RESULT);
            _mm512_and_si512(_mm512_xor_si512(lo, hi), mask)
        } else {
            _mm512_setzero_si512()
        };
        (x, start, mask, expected)
    }
}

/// ICML word indices of eight keys' start blocks and next blocks.
///
/// # Safety
/// AVX-512F is available; `block < 2^32` in every lane.
#[inline(always)]
unsafe fn expand_words(b: &Broadcast, block: __m512i) -> (__m512i, __m512i) {
    // SAFETY: AVX-512F is available (caller).
    unsafe {
        let one = _mm512_set1_epi64(1);
        let upper = _mm512_cmpge_epu64_mask(block, b.upper_start_block);
        let columns = _mm512_mask_add_epi64(b.lower_columns, upper, b.lower_columns, one);
        let base = _mm512_mul_epu32(block, b.lower_columns);
        let lo_word = _mm512_mask_add_epi64(
            base,
            upper,
            base,
            _mm512_sub_epi64(block, b.upper_start_block),
        );
        let has_next = _mm512_cmplt_epu64_mask(_mm512_add_epi64(block, one), b.num_blocks);
        let hi_word = _mm512_mask_add_epi64(lo_word, has_next, lo_word, columns);
        (lo_word, hi_word)
    }
}

/// Stores eight lanes at `out[i..i + 8]`; nothing if that is out of range.
///
/// # Safety
/// AVX-512F is available.
#[inline(always)]
unsafe fn store8<T: Copy>(out: &mut [T; CHUNK], i: usize, v: __m512i) {
    const { assert!(core::mem::size_of::<T>() == 8) };
    if let Some(dst) = out.get_mut(i..i + 8) {
        // SAFETY: `dst` is eight 8-byte values, 64 bytes; storeu has no
        // alignment requirement; T is usize or u64 (plain integers).
        unsafe { _mm512_storeu_si512(dst.as_mut_ptr().cast(), v) };
    }
}

/// Stores eight 128-bit values given as low and high halves at
/// `out[i..i + 8]`; nothing if that is out of range.
///
/// # Safety
/// AVX-512F is available.
#[inline(always)]
unsafe fn store8_u128(out: &mut [u128; CHUNK], i: usize, lo: __m512i, hi: __m512i) {
    if let Some(dst) = out.get_mut(i..i + 8) {
        // SAFETY: `dst` is 128 bytes; little-endian u128 = low half first.
        unsafe {
            let first =
                _mm512_permutex2var_epi64(lo, _mm512_set_epi64(11, 3, 10, 2, 9, 1, 8, 0), hi);
            let second =
                _mm512_permutex2var_epi64(lo, _mm512_set_epi64(15, 7, 14, 6, 13, 5, 12, 4), hi);
            _mm512_storeu_si512(dst.as_mut_ptr().cast(), first);
            _mm512_storeu_si512(dst.as_mut_ptr().wrapping_add(4).cast(), second);
        }
    }
}

/// Per-width part of the vector expansion.
trait ExpandWidth: Coeff {
    /// Expands `hashes[i..i + 8]` into `chunk[i..i + 8]`.
    ///
    /// # Safety
    /// AVX-512F is available; `i + 8 <= hashes.len().min(CHUNK)`.
    unsafe fn expand8(
        b: &Broadcast,
        hashes: &[u64],
        i: usize,
        standard: bool,
        chunk: &mut ProbeChunk<Self>,
    );
}

/// Loads `hashes[i..i + 8]`.
///
/// # Safety
/// AVX-512F is available; `i + 8 <= hashes.len()`.
#[inline(always)]
unsafe fn load_hashes(hashes: &[u64], i: usize) -> __m512i {
    // SAFETY: the caller guarantees the eight values are in bounds.
    unsafe { _mm512_loadu_si512(hashes.as_ptr().add(i).cast()) }
}

impl ExpandWidth for u64 {
    #[inline(always)]
    unsafe fn expand8(
        b: &Broadcast,
        hashes: &[u64],
        i: usize,
        standard: bool,
        chunk: &mut ProbeChunk<u64>,
    ) {
        // SAFETY: AVX-512F is available and the hashes are in bounds
        // (caller); starts are below 2^32, so blocks are too.
        unsafe {
            let (x, start, mask, expected) = expand_common(b, load_hashes(hashes, i), standard);
            let c = _mm512_or_si512(mul_lo(x, hash::COEFF), _mm512_set1_epi64(1));
            let shift = _mm512_and_si512(start, _mm512_set1_epi64(63));
            let (lo_word, hi_word) = expand_words(b, _mm512_srli_epi64::<6>(start));
            // c << shift, and (c >> 1) >> (63 - shift) as in probe_for.
            let c_lo = _mm512_sllv_epi64(c, shift);
            let c_hi = _mm512_srlv_epi64(
                _mm512_srli_epi64::<1>(c),
                _mm512_sub_epi64(_mm512_set1_epi64(63), shift),
            );
            store8(&mut chunk.lo_word, i, lo_word);
            store8(&mut chunk.hi_word, i, hi_word);
            store8(&mut chunk.c_lo, i, c_lo);
            store8(&mut chunk.c_hi, i, c_hi);
            store8(&mut chunk.mask, i, mask);
            store8(&mut chunk.expected, i, expected);
        }
    }
}

impl ExpandWidth for u128 {
    #[inline(always)]
    unsafe fn expand8(
        b: &Broadcast,
        hashes: &[u64],
        i: usize,
        standard: bool,
        chunk: &mut ProbeChunk<u128>,
    ) {
        // SAFETY: as for u64.
        unsafe {
            let (x, start, mask, expected) = expand_common(b, load_hashes(hashes, i), standard);
            let (c_low, c_high) = mul_full(x, hash::COEFF);
            let c_low = _mm512_or_si512(c_low, _mm512_set1_epi64(1));
            let shift = _mm512_and_si512(start, _mm512_set1_epi64(127));
            let (lo_word, hi_word) = expand_words(b, _mm512_srli_epi64::<7>(start));
            // 128-bit shifts by s in 0..128 from 64-bit lane shifts, which
            // give 0 for counts of 64 or more (negative counts wrap to
            // huge ones): c << s and c >> (128 - s).
            let sixty_four = _mm512_set1_epi64(64);
            let s = shift;
            let s_minus_64 = _mm512_sub_epi64(s, sixty_four);
            let sixty_four_minus_s = _mm512_sub_epi64(sixty_four, s);
            let t = _mm512_sub_epi64(_mm512_set1_epi64(128), s);
            let lo_of_lo = _mm512_sllv_epi64(c_low, s);
            let hi_of_lo = _mm512_or_si512(
                _mm512_or_si512(
                    _mm512_sllv_epi64(c_high, s),
                    _mm512_srlv_epi64(c_low, sixty_four_minus_s),
                ),
                _mm512_sllv_epi64(c_low, s_minus_64),
            );
            let lo_of_hi = _mm512_or_si512(
                _mm512_or_si512(
                    _mm512_srlv_epi64(c_low, t),
                    _mm512_sllv_epi64(c_high, s_minus_64),
                ),
                _mm512_srlv_epi64(c_high, sixty_four_minus_s),
            );
            let hi_of_hi = _mm512_srlv_epi64(c_high, t);
            store8(&mut chunk.lo_word, i, lo_word);
            store8(&mut chunk.hi_word, i, hi_word);
            store8_u128(&mut chunk.c_lo, i, lo_of_lo, hi_of_lo);
            store8_u128(&mut chunk.c_hi, i, lo_of_hi, hi_of_hi);
            store8(&mut chunk.mask, i, mask);
            store8(&mut chunk.expected, i, expected);
        }
    }
}

/// [`QueryKernel::expand`] for AVX-512: native probes of filters with
/// fewer than 2^32 starts take the vector path eight keys at a time, the
/// rest (and the last `len % 8` keys) the scalar one.
///
/// # Safety
/// AVX-512F is available.
#[inline(always)]
unsafe fn expand_chunk<W: ExpandWidth, P: Probes<W>>(
    probes: &P,
    hashes: &[u64],
    chunk: &mut ProbeChunk<W>,
) {
    let hashes = &hashes[..hashes.len().min(CHUNK)];
    let mut done = 0;
    if let Some((g, e)) = probes.native() {
        // SAFETY: AVX-512F is available (caller).
        if let Some(b) = unsafe { Broadcast::new(g, e) } {
            while done + 8 <= hashes.len() {
                // SAFETY: AVX-512F is available; `done + 8` is within
                // the hashes and the chunk. `P::RESULT` is the filter's
                // kind for native probes.
                unsafe { W::expand8(&b, hashes, done, P::RESULT, chunk) };
                done += 8;
            }
        }
    }
    generic::expand_scalar(probes, hashes, chunk, done);
}

impl SolveLanes<u64> for Avx512 {
    type State = __m512i;
    const LANES: usize = 8;

    #[inline(always)]
    unsafe fn zero() -> __m512i {
        // SAFETY: AVX-512F is available (caller).
        unsafe { _mm512_setzero_si512() }
    }

    #[inline(always)]
    unsafe fn step(s: __m512i, c: u64, bits: u64) -> __m512i {
        // SAFETY: AVX-512F/VPOPCNTDQ are available (caller).
        unsafe {
            let shifted = _mm512_slli_epi64::<1>(s);
            let parity =
                _mm512_popcnt_epi64(_mm512_and_si512(shifted, _mm512_set1_epi64(c as i64)));
            let b = _mm512_srlv_epi64(
                _mm512_set1_epi64(bits as i64),
                _mm512_set_epi64(7, 6, 5, 4, 3, 2, 1, 0),
            );
            let bit = _mm512_and_si512(_mm512_xor_si512(parity, b), _mm512_set1_epi64(1));
            _mm512_or_si512(shifted, bit)
        }
    }

    #[inline(always)]
    unsafe fn store(s: __m512i, out: &mut [u64]) {
        let mut lanes = [0u64; 8];
        // SAFETY: AVX-512F is available (caller); `lanes` holds 64 bytes.
        unsafe { _mm512_storeu_si512(lanes.as_mut_ptr().cast(), s) };
        for (o, l) in out.iter_mut().zip(lanes) {
            *o = l;
        }
    }
}

impl SolveLanes<u128> for Avx512 {
    /// Low and high halves of eight columns' 128-bit state words.
    type State = (__m512i, __m512i);
    const LANES: usize = 8;

    #[inline(always)]
    unsafe fn zero() -> (__m512i, __m512i) {
        // SAFETY: AVX-512F is available (caller).
        unsafe { (_mm512_setzero_si512(), _mm512_setzero_si512()) }
    }

    #[inline(always)]
    unsafe fn step(s: (__m512i, __m512i), c: u128, bits: u64) -> (__m512i, __m512i) {
        // SAFETY: AVX-512F/VPOPCNTDQ are available (caller).
        unsafe {
            let (l, h) = s;
            let sl = _mm512_slli_epi64::<1>(l);
            let sh = _mm512_or_si512(_mm512_slli_epi64::<1>(h), _mm512_srli_epi64::<63>(l));
            let t = _mm512_xor_si512(
                _mm512_and_si512(sl, _mm512_set1_epi64(c as u64 as i64)),
                _mm512_and_si512(sh, _mm512_set1_epi64((c >> 64) as u64 as i64)),
            );
            let parity = _mm512_popcnt_epi64(t);
            let b = _mm512_srlv_epi64(
                _mm512_set1_epi64(bits as i64),
                _mm512_set_epi64(7, 6, 5, 4, 3, 2, 1, 0),
            );
            let bit = _mm512_and_si512(_mm512_xor_si512(parity, b), _mm512_set1_epi64(1));
            (_mm512_or_si512(sl, bit), sh)
        }
    }

    #[inline(always)]
    unsafe fn store(s: (__m512i, __m512i), out: &mut [u128]) {
        let (mut lo, mut hi) = ([0u64; 8], [0u64; 8]);
        // SAFETY: AVX-512F is available (caller); each array holds 64 bytes.
        unsafe {
            _mm512_storeu_si512(lo.as_mut_ptr().cast(), s.0);
            _mm512_storeu_si512(hi.as_mut_ptr().cast(), s.1);
        }
        for ((o, l), h) in out.iter_mut().zip(lo).zip(hi) {
            *o = u128::from(l) | (u128::from(h) << 64);
        }
    }
}

/// Single query.
///
/// # Safety
/// AVX-512F, AVX-512 VPOPCNTDQ and AVX2 are available.
#[target_feature(enable = "avx512f,avx512vpopcntdq,avx2")]
pub(crate) unsafe fn contains<W: Coeff, P: Probes<W>>(probes: &P, payload: &[u8], hash: u64) -> bool
where
    Avx512: QueryKernel<W>,
{
    let probe = probes.probe(hash);
    // SAFETY: the features are enabled for this function; the probe belongs
    // to `p`.
    unsafe { <Avx512 as QueryKernel<W>>::matches::<P>(payload, &probe, probes.max_columns()) }
}

/// Batch query.
///
/// # Safety
/// As for [`contains`].
#[target_feature(enable = "avx512f,avx512vpopcntdq,avx2")]
pub(crate) unsafe fn contains_batch<W: Coeff, P: Probes<W>>(
    probes: &P,
    payload: &[u8],
    hashes: &[u64],
    out: &mut [bool],
) where
    Avx512: QueryKernel<W>,
{
    // SAFETY: the features are enabled for this function.
    unsafe { generic::contains_batch::<W, P, Avx512>(probes, payload, hashes, out) }
}

/// Back-substitution.
///
/// # Safety
/// As for [`contains`].
#[target_feature(enable = "avx512f,avx512vpopcntdq,avx2")]
pub(crate) unsafe fn back_substitute<W: Coeff>(
    g: &Geometry,
    free: FreeRows,
    rows: Rows<'_>,
    payload: &mut [u8],
) where
    Avx512: SolveLanes<W>,
{
    // SAFETY: the features are enabled for this function.
    unsafe { generic::back_substitute::<W, Avx512>(g, free, rows, payload) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dispatch::Backend;
    use crate::filter::Parts;
    use crate::layout::{Kind, Width};
    use crate::query::NativeProbes;

    /// Vector and scalar expansion of the same keys, field by field.
    fn check<W: ExpandWidth, const STANDARD: bool>(g: Geometry, seed: u32, hashes: &[u64])
    where
        Avx512: QueryKernel<W>,
        NativeProbes<STANDARD>: Probes<W>,
    {
        let parts = Parts {
            geometry: g,
            expander: Expander::new(&g, seed),
            payload: &[],
        };
        let probes = NativeProbes::<STANDARD>::new(&parts);
        assert!(probes.native().is_some());
        let mut vector = ProbeChunk::<W>::EMPTY;
        let mut scalar = ProbeChunk::<W>::EMPTY;
        // SAFETY: the caller checked that AVX-512 is available.
        unsafe { <Avx512 as QueryKernel<W>>::expand(&probes, hashes, &mut vector) };
        generic::expand_scalar(&probes, hashes, &mut scalar, 0);
        let n = hashes.len().min(CHUNK);
        let context = || std::format!("{g:?} seed {seed}");
        assert_eq!(vector.lo_word[..n], scalar.lo_word[..n], "{}", context());
        assert_eq!(vector.hi_word[..n], scalar.hi_word[..n], "{}", context());
        assert_eq!(vector.c_lo[..n], scalar.c_lo[..n], "{}", context());
        assert_eq!(vector.c_hi[..n], scalar.c_hi[..n], "{}", context());
        assert_eq!(vector.mask[..n], scalar.mask[..n], "{}", context());
        assert_eq!(vector.expected[..n], scalar.expected[..n], "{}", context());
    }

    #[test]
    fn vector_expansion_equals_scalar() {
        if !Backend::Avx512.is_available() {
            let required = std::env::var("RIBBON_REQUIRE_BACKENDS").unwrap_or_default();
            assert!(
                !required.split(',').any(|name| name.trim() == "avx512"),
                "backend avx512 is required by RIBBON_REQUIRE_BACKENDS but not available"
            );
            std::eprintln!("SKIPPED: backend avx512 is not available on this CPU or build");
            return;
        }
        // Keys whose starts cover the first and last slots and everything
        // between: extreme hashes plus a pseudo-random spread.
        let mut hashes = std::vec![0, 1, u64::MAX, u64::MAX - 1, 1 << 63, (1 << 63) - 1];
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        while hashes.len() < CHUNK {
            x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = x;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            hashes.push(z ^ (z >> 31));
        }
        let rounds = if cfg!(miri) { 2 } else { 200 };
        for round in 0..rounds {
            let blocks = [1usize, 2, 3, 17, 1000, 1 << 20][round % 6];
            let lower = [0u32, 1, 7, 8, 9, 31, 63, 64][round % 8];
            let upper_start = if lower == 64 {
                blocks
            } else {
                (round * 7) % (blocks + 1)
            };
            let seed = round as u32;
            // Rotating the keys changes which land in the scalar tail.
            hashes.rotate_left(round % 7);
            let len = CHUNK - round % 11;
            let keys = &hashes[..len];
            for kind in [Kind::Homogeneous, Kind::Standard, Kind::StandardSmash] {
                for width in [Width::W64, Width::W128] {
                    let g = Geometry::new(kind, width, blocks, lower, upper_start).unwrap();
                    match (width, kind.is_standard()) {
                        (Width::W64, false) => check::<u64, false>(g, seed, keys),
                        (Width::W64, true) => check::<u64, true>(g, seed, keys),
                        (Width::W128, false) => check::<u128, false>(g, seed, keys),
                        (Width::W128, true) => check::<u128, true>(g, seed, keys),
                    }
                }
            }
        }
    }
}
