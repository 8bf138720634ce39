//! The portable kernels: the generic query and back-substitution over
//! `wide`'s lane types, which compile to whatever vector instructions the
//! build's target features give (SSE2 on x86_64, `simd128` on wasm32, NEON
//! on aarch64, plain arrays elsewhere). No runtime detection: a CPU that
//! runs this build runs these kernels.
//!
//! A query evaluates every column of a key as 64-bit lanes: column `j` of
//! a w = 64 filter is one lane, `(lo_j & c_lo) ^ (hi_j & c_hi)`; a w = 128
//! column is two lanes (its low and high halves), whose parities are
//! combined at the end. Lane parities are not folded lane by lane: two
//! vectors of 64-bit lanes are first packed into one vector of 32-bit
//! lanes holding each lane's two halves xored (same parity), two of those
//! into 16-bit lanes, and only then folded in place, so eight lanes cost
//! about as much as two folded one by one. The pack order permutes the
//! lanes; small tables (built at compile time, for either byte order)
//! put the parity bits back in column order.

use bytemuck::must_cast;
use wide::{i16x8, i32x4, i64x2, u16x8, u32x4, u64x2, u64x4};

use super::generic::{self, Lanes64, QueryKernel, SolveLanes};
use crate::hash::{Coeff, FreeRows};
use crate::layout::Geometry;
use crate::probe::{Probe, Probes};
use crate::word::Rows;

/// The portable kernel, and the proof type its entry points ask for: its
/// only precondition, that the CPU runs the build's own target features,
/// holds for every CPU that runs the build at all, so [`Portable::detect`]
/// always succeeds.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Portable(());

impl super::IsaProof for Portable {}

impl Portable {
    /// Proof that the portable kernels run here: always.
    pub(crate) fn detect() -> Option<Portable> {
        Some(Portable(()))
    }
}

/// Two little-endian 64-bit words from 16 bytes (one unaligned load on
/// little-endian targets, byte swaps on big-endian ones).
#[inline(always)]
fn load(bytes: &[u8; 16]) -> u64x2 {
    let [low, high]: [[u8; 8]; 2] = must_cast(*bytes);
    u64x2::from([u64::from_le_bytes(low), u64::from_le_bytes(high)])
}

/// `N` 16-byte words of `bytes` from byte `at` on: one bounds check for
/// the group, none per word.
#[inline(always)]
fn words<const N: usize, const BYTES: usize>(bytes: &[u8], at: usize) -> Option<&[[u8; 16]; N]>
where
    [u8; BYTES]: bytemuck::Pod,
    [[u8; 16]; N]: bytemuck::Pod,
{
    bytes
        .get(at..)?
        .first_chunk::<BYTES>()
        .map(bytemuck::must_cast_ref::<[u8; BYTES], [[u8; 16]; N]>)
}

/// Lane-wise `(lo & cl) ^ (hi & ch)` of `N` words of both blocks.
#[inline(always)]
fn masked<const N: usize>(
    lo: &[[u8; 16]; N],
    hi: &[[u8; 16]; N],
    cl: u64x2,
    ch: u64x2,
) -> [u64x2; N] {
    let mut x = [u64x2::splat(0); N];
    for ((x, l), h) in x.iter_mut().zip(lo).zip(hi) {
        *x = (load(l) & cl) ^ (load(h) & ch);
    }
    x
}

/// Whether this target stores the low half of a lane at the lower address.
const LITTLE: bool = cfg!(target_endian = "little");

/// One vector of four 32-bit lanes from two of 64-bit lanes, each 32-bit
/// lane the xor of one 64-bit lane's halves (so the same parity): `a`'s
/// lanes go to the low halves, `b`'s to the high halves.
#[inline(always)]
fn pack64(a: u64x2, b: u64x2) -> u32x4 {
    let low = (a ^ (a >> 32u32)) & u64x2::splat(0xffff_ffff);
    let high = (b ^ (b << 32u32)) & u64x2::splat(0xffff_ffff_0000_0000);
    must_cast(low | high)
}

/// [`pack64`] one level down: 32-bit lanes to 16-bit lanes.
#[inline(always)]
fn pack32(a: u32x4, b: u32x4) -> u16x8 {
    let low = (a ^ (a >> 16u32)) & u32x4::splat(0xffff);
    let high = (b ^ (b << 16u32)) & u32x4::splat(0xffff_0000);
    must_cast(low | high)
}

/// The index in memory order of half `half` (0 low, 1 high) of the lane
/// at index `lane` when the lanes are split in two.
const fn half_index(lane: usize, half: usize) -> usize {
    if LITTLE {
        2 * lane + half
    } else {
        2 * lane + 1 - half
    }
}

/// Where [`parities8`]'s mask holds the parity of 64-bit lane `k` of its
/// four input vectors (vector `k / 2`, lane `k % 2`).
const fn position8(k: usize) -> usize {
    let (vector, lane) = (k / 2, k % 2);
    // Vectors 0, 1 pack into the first 32-bit vector, 2, 3 into the second.
    let lane32 = half_index(lane, vector % 2);
    half_index(lane32, vector / 2)
}

/// Where [`parities4`]'s mask holds the parity of 64-bit lane `k` of its
/// two input vectors.
const fn position4(k: usize) -> usize {
    half_index(k % 2, k / 2)
}

/// Lane parities in mask order to lane order; with `pairs`, also xors
/// lanes `2i` and `2i + 1` into bit `i` (a w = 128 column's halves).
const fn reorder_table<const N: usize>(lanes: usize, pairs: bool) -> [u8; N] {
    let mut table = [0u8; N];
    let mut mask = 0;
    while mask < N {
        let mut out = 0usize;
        let mut k = 0;
        while k < lanes {
            let position = if lanes == 8 {
                position8(k)
            } else {
                position4(k)
            };
            let bit = (mask >> position) & 1;
            out ^= if pairs { bit << (k / 2) } else { bit << k };
            k += 1;
        }
        table[mask] = out as u8;
        mask += 1;
    }
    table
}

/// [`parities8`] masks to lane order, and to column order for w = 128.
const ORDER8: [u8; 256] = reorder_table(8, false);
const ORDER8_PAIRS: [u8; 256] = reorder_table(8, true);
/// [`parities4`] masks likewise.
const ORDER4: [u8; 16] = reorder_table(4, false);
const ORDER4_PAIRS: [u8; 16] = reorder_table(4, true);

/// `x` with each lane xor-folded by the given shifts: with shifts of half
/// the lane width down to 1, bit 0 of each lane is the lane's parity.
macro_rules! fold {
    ($x:expr, $($shift:literal),+) => {{
        let mut x = $x;
        $(x ^= x >> $shift;)+
        x
    }};
}

/// The parities of the eight 64-bit lanes of `x`, as a mask in pack order
/// (see [`position8`]).
#[inline(always)]
fn parities8(x: [u64x2; 4]) -> usize {
    let z = fold!(
        pack32(pack64(x[0], x[1]), pack64(x[2], x[3])),
        8u32,
        4u32,
        2u32,
        1u32
    );
    let signs: i16x8 = must_cast(z << 15u32);
    (signs.move_mask() & 0xff) as usize
}

/// The parities of the four 64-bit lanes of `x`, in pack order (see
/// [`position4`]).
#[inline(always)]
fn parities4(x: [u64x2; 2]) -> usize {
    let y = fold!(pack64(x[0], x[1]), 16u32, 8u32, 4u32, 2u32, 1u32);
    let signs: i32x4 = must_cast(y << 31u32);
    (signs.move_mask() & 0xf) as usize
}

/// The parities of the two 64-bit lanes of `x` (lane `k` in bit `k`).
#[inline(always)]
fn parities2(x: u64x2) -> u64 {
    let x = fold!(x, 32u32, 16u32, 8u32, 4u32, 2u32, 1u32);
    let signs: i64x2 = must_cast(x << 63u32);
    (signs.move_mask() & 3) as u64
}

/// The result bits of a key's columns (column `j` in bit `j`) from its
/// first `lanes` 64-bit lanes: `lo` and `hi` are the payload from the
/// key's two blocks on, `(cl, ch)` its coefficients as lanes. With `PAIRS`
/// (w = 128) two lanes make one column. Lanes past a key's columns are
/// evaluated and masked by the caller. `None` when the lanes would run
/// past the payload (a key at the end of it: the caller falls back to the
/// scalar evaluation).
#[inline(always)]
fn column_bits<const PAIRS: bool>(
    lo: &[u8],
    hi: &[u8],
    cl: u64x2,
    ch: u64x2,
    lanes: usize,
) -> Option<u64> {
    // Columns per group of eight lanes.
    let per8 = if PAIRS { 4 } else { 8 };
    let vectors = lanes.div_ceil(2);
    // Groups of four vectors; a last group of three reads a fourth (lanes
    // past the key's, masked by the caller).
    let read = if vectors % 4 == 3 {
        vectors + 1
    } else {
        vectors
    };
    let mut bits = 0u64;
    let mut shift = 0;
    let mut at = 0;
    let mut left = read;
    while left >= 4 {
        let x = masked(words::<4, 64>(lo, at)?, words::<4, 64>(hi, at)?, cl, ch);
        let order = if PAIRS { &ORDER8_PAIRS } else { &ORDER8 };
        bits |= u64::from(order[parities8(x) & 0xff]) << (shift & 63);
        shift += per8;
        at += 64;
        left -= 4;
    }
    match left {
        2 => {
            let x = masked(words::<2, 32>(lo, at)?, words::<2, 32>(hi, at)?, cl, ch);
            let order = if PAIRS { &ORDER4_PAIRS } else { &ORDER4 };
            bits |= u64::from(order[parities4(x) & 0xf]) << (shift & 63);
        }
        1 => {
            let [x] = masked(words::<1, 16>(lo, at)?, words::<1, 16>(hi, at)?, cl, ch);
            let two = parities2(x);
            let column = if PAIRS { (two ^ (two >> 1)) & 1 } else { two };
            bits |= column << (shift & 63);
        }
        _ => {}
    }
    Some(bits)
}

/// The column bits of `p` up to `max_columns` (bits past the key's
/// columns are arbitrary: callers mask them): [`column_bits`] with the
/// key's coefficients as lanes `(cl, ch)` (`PAIRS` for w = 128); `None`
/// for a key whose last group of words would run past the payload (the
/// scalar kernel's, see [`QueryKernel::matches_fast`]).
#[inline(always)]
fn key_bits<W: Coeff, const PAIRS: bool>(
    payload: &[u8],
    p: &Probe<W>,
    max_columns: usize,
    (cl, ch): (u64x2, u64x2),
) -> Option<u64> {
    let word_bytes = W::BITS as usize / 8;
    let lanes = max_columns.min(64) * (word_bytes / 8);
    match (
        payload.get(p.lo_word.saturating_mul(word_bytes)..),
        payload.get(p.hi_word.saturating_mul(word_bytes)..),
    ) {
        (Some(lo), Some(hi)) => column_bits::<PAIRS>(lo, hi, cl, ch, lanes),
        _ => None,
    }
}

/// Whether all of `p`'s columns match, from [`key_bits`].
#[inline(always)]
fn key_matches<W: Coeff, P: Probes<W>, const PAIRS: bool>(
    payload: &[u8],
    p: &Probe<W>,
    max_columns: usize,
    lanes: (u64x2, u64x2),
) -> Option<bool> {
    let bits = key_bits::<W, PAIRS>(payload, p, max_columns, lanes)?;
    Some(bits & p.mask == if P::RESULT { p.expected } else { 0 })
}

/// The value of `p`'s columns ([`QueryKernel::column_values`]), from
/// [`key_bits`].
#[inline(always)]
fn key_value<W: Coeff, P: Probes<W>, const PAIRS: bool>(
    payload: &[u8],
    p: &Probe<W>,
    max_columns: usize,
    lanes: (u64x2, u64x2),
) -> Option<u64> {
    let bits = key_bits::<W, PAIRS>(payload, p, max_columns, lanes)?;
    Some((bits ^ if P::RESULT { p.expected } else { 0 }) & p.mask)
}

/// The 64-bit lanes of a 128-bit word: its low half first.
#[inline(always)]
fn halves(c: u128) -> u64x2 {
    u64x2::from([c as u64, (c >> 64) as u64])
}

impl QueryKernel<u64> for Portable {
    #[inline(always)]
    unsafe fn prefetch(_payload: &[u8], _p: &Probe<u64>, _max_columns: usize) {}

    generic::matches_with_scalar_fallback!(u64);

    #[inline(always)]
    unsafe fn matches_fast<P: Probes<u64>>(
        payload: &[u8],
        p: &Probe<u64>,
        max_columns: usize,
    ) -> Option<bool> {
        let lanes = (u64x2::splat(p.c_lo), u64x2::splat(p.c_hi));
        key_matches::<u64, P, false>(payload, p, max_columns, lanes)
    }

    generic::column_values_with_scalar_fallback!(u64);

    #[inline(always)]
    unsafe fn column_values_fast<P: Probes<u64>>(
        payload: &[u8],
        p: &Probe<u64>,
        max_columns: usize,
    ) -> Option<u64> {
        let lanes = (u64x2::splat(p.c_lo), u64x2::splat(p.c_hi));
        key_value::<u64, P, false>(payload, p, max_columns, lanes)
    }
}

impl QueryKernel<u128> for Portable {
    #[inline(always)]
    unsafe fn prefetch(_payload: &[u8], _p: &Probe<u128>, _max_columns: usize) {}

    generic::matches_with_scalar_fallback!(u128);

    #[inline(always)]
    unsafe fn matches_fast<P: Probes<u128>>(
        payload: &[u8],
        p: &Probe<u128>,
        max_columns: usize,
    ) -> Option<bool> {
        key_matches::<u128, P, true>(payload, p, max_columns, (halves(p.c_lo), halves(p.c_hi)))
    }

    generic::column_values_with_scalar_fallback!(u128);

    #[inline(always)]
    unsafe fn column_values_fast<P: Probes<u128>>(
        payload: &[u8],
        p: &Probe<u128>,
        max_columns: usize,
    ) -> Option<u64> {
        key_value::<u128, P, true>(payload, p, max_columns, (halves(p.c_lo), halves(p.c_hi)))
    }
}

/// Four 64-bit lanes (back-substitution): two vectors on SSE2, `simd128`
/// and NEON, whose independent halves the CPU overlaps.
impl Lanes64 for u64x4 {
    const LANES: usize = 4;

    #[inline(always)]
    unsafe fn splat(v: u64) -> Self {
        u64x4::splat(v)
    }
    #[inline(always)]
    unsafe fn store(self, dst: &mut [u64]) {
        generic::copy_lanes(dst, must_cast::<u64x4, [u64; 4]>(self));
    }
    #[inline(always)]
    unsafe fn xor(self, o: Self) -> Self {
        self ^ o
    }
    #[inline(always)]
    unsafe fn and(self, o: Self) -> Self {
        self & o
    }
    #[inline(always)]
    unsafe fn or(self, o: Self) -> Self {
        self | o
    }
    #[inline(always)]
    unsafe fn shr<const N: u32>(self) -> Self {
        self >> N
    }
    #[inline(always)]
    unsafe fn shl<const N: u32>(self) -> Self {
        self << N
    }
    #[inline(always)]
    unsafe fn parity(self) -> Self {
        fold!(self, 32u32, 16u32, 8u32, 4u32, 2u32, 1u32)
    }
    #[inline(always)]
    unsafe fn bit_per_lane(bits: u64) -> Self {
        u64x4::from([bits, bits >> 1, bits >> 2, bits >> 3])
    }
}

generic::entry_points!(Portable, u64x4);

#[cfg(test)]
mod tests {
    use super::*;

    /// The pack-order tables undo the packing: every single-lane input
    /// lands on its own bit, in lane order.
    #[test]
    fn parity_masks_come_back_in_lane_order() {
        for k in 0..8 {
            let mut x = [u64x2::splat(0); 4];
            let mut lanes = [[0u64; 2]; 4];
            // An odd number of set bits spread over both halves.
            lanes[k / 2][k % 2] = 0x8000_0001_0000_0001;
            for (v, l) in x.iter_mut().zip(lanes) {
                *v = u64x2::from(l);
            }
            assert_eq!(ORDER8[parities8(x)], 1 << k, "lane {k} of 8");
            assert_eq!(
                ORDER8_PAIRS[parities8(x)],
                1 << (k / 2),
                "lane {k} of 8, pairs"
            );
            if k < 4 {
                let two = [x[0], x[1]];
                assert_eq!(ORDER4[parities4(two)], 1 << k, "lane {k} of 4");
                assert_eq!(ORDER4_PAIRS[parities4(two)], 1 << (k / 2));
            }
            if k < 2 {
                assert_eq!(parities2(x[0]), 1 << k, "lane {k} of 2");
            }
        }
        // Even parities vanish.
        let even = [u64x2::splat(0x0300_0000_0000_0000); 4];
        assert_eq!(parities8(even), 0);
    }
}
