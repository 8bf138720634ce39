//! Hash expansion several keys at a time: the vector twin of
//! `NativeProbes::probe` (`hash::remix`, `hash::start`, `hash::coeff`,
//! `hash::result`, `ColumnMasks::for_start` and `probe::probe_for`), bit for
//! bit, written once over [`U64Lanes`]; AVX2 (four lanes) and AVX-512
//! (eight) implement the trait.
//!
//! Neither instruction set has a full 64-bit multiply (AVX-512F lacks
//! `vpmullq`, which is AVX512DQ), so products are assembled from
//! 32 x 32 -> 64-bit ones. Filters with 2^32 or more starts (over 4 GiB
//! per column) take the scalar path, which keeps the start math to 32-bit
//! products and every compared value below 2^63 (so signed compares do).

use super::super::generic::{self, CHUNK, Lanes64, ProbeChunk};
use crate::hash::{self, Coeff, Expander};
use crate::layout::Geometry;
use crate::probe::Probes;

/// What the hash expansion needs of 64-bit lanes beyond [`Lanes64`].
///
/// # Safety
/// Every method requires that the CPU supports the implementing
/// instruction set; `load` and `store_u128` also that their slice holds at
/// least `LANES` values.
pub(crate) trait U64Lanes: Lanes64 {
    /// Result of a lane comparison.
    type Mask: Copy;

    /// Lanes from `src[..LANES]` (`src` is at least that long).
    ///
    /// # Safety
    /// See the trait.
    unsafe fn load(src: &[u64]) -> Self;
    /// 128-bit values, low halves in `lo`, to `dst[..LANES]` (at least
    /// that long).
    ///
    /// # Safety
    /// See the trait.
    unsafe fn store_u128(lo: Self, hi: Self, dst: &mut [u128]);
    /// Lane-wise wrapping add.
    ///
    /// # Safety
    /// See the trait.
    unsafe fn add(self, o: Self) -> Self;
    /// Lane-wise wrapping subtract.
    ///
    /// # Safety
    /// See the trait.
    unsafe fn sub(self, o: Self) -> Self;
    /// Low 32 bits of each lane times low 32 bits of `o`'s, 64-bit result.
    ///
    /// # Safety
    /// See the trait.
    unsafe fn mul32(self, o: Self) -> Self;
    /// Per-lane shift; counts of 64 or more give 0.
    ///
    /// # Safety
    /// See the trait.
    unsafe fn shr_var(self, counts: Self) -> Self;
    /// Per-lane shift; counts of 64 or more give 0.
    ///
    /// # Safety
    /// See the trait.
    unsafe fn shl_var(self, counts: Self) -> Self;
    /// `self >= o` per lane, for values below 2^63.
    ///
    /// # Safety
    /// See the trait.
    unsafe fn ge(self, o: Self) -> Self::Mask;
    /// `self < o` per lane, for values below 2^63.
    ///
    /// # Safety
    /// See the trait.
    unsafe fn lt(self, o: Self) -> Self::Mask;
    /// `if_true` where `m` is set, else `if_false`.
    ///
    /// # Safety
    /// See the trait.
    unsafe fn select(m: Self::Mask, if_true: Self, if_false: Self) -> Self;
}

/// Low 64 bits of `a * b` in every lane.
///
/// # Safety
/// The CPU supports `V`'s instruction set.
#[inline(always)]
unsafe fn mul_lo<V: U64Lanes>(a: V, b: u64) -> V {
    // SAFETY: the caller guarantees the instruction set.
    unsafe {
        let b_lo = V::splat(b & 0xffff_ffff);
        let b_hi = V::splat(b >> 32);
        let cross = a.shr::<32>().mul32(b_lo).add(a.mul32(b_hi));
        a.mul32(b_lo).add(cross.shl::<32>())
    }
}

/// The 128-bit product `a * b` in every lane, as (low, high) halves.
///
/// # Safety
/// The CPU supports `V`'s instruction set.
#[inline(always)]
unsafe fn mul_full<V: U64Lanes>(a: V, b: u64) -> (V, V) {
    // SAFETY: the caller guarantees the instruction set.
    unsafe {
        let low32 = V::splat(0xffff_ffff);
        let b_lo = V::splat(b & 0xffff_ffff);
        let b_hi = V::splat(b >> 32);
        let a_hi = a.shr::<32>();
        let p00 = a.mul32(b_lo);
        let p01 = a.mul32(b_hi);
        let p10 = a_hi.mul32(b_lo);
        let p11 = a_hi.mul32(b_hi);
        // Bits 32..96: three terms below 2^32 each, no overflow.
        let mid = p00.shr::<32>().add(p01.and(low32)).add(p10.and(low32));
        let hi = p11
            .add(p01.shr::<32>())
            .add(p10.shr::<32>().add(mid.shr::<32>()));
        let lo = p00.and(low32).or(mid.shl::<32>());
        (lo, hi)
    }
}

/// A filter's expansion constants, one per lane.
pub(crate) struct Broadcast<V> {
    seed_mix: V,
    /// `num_starts + 2 * smash`, below 2^32.
    draws: V,
    /// `smash` and the last start, for StandardSmash.
    smash: Option<(V, V)>,
    upper_start_slot: V,
    lower_mask: V,
    upper_mask: V,
    lower_columns: V,
    upper_start_block: V,
    num_blocks: V,
}

impl<V: U64Lanes> Broadcast<V> {
    /// The constants, or `None` for an empty filter or one with 2^32 or
    /// more starts.
    ///
    /// # Safety
    /// The CPU supports `V`'s instruction set.
    #[inline(always)]
    unsafe fn new(g: &Geometry, e: &Expander) -> Option<Broadcast<V>> {
        let draws = e.num_starts.checked_add(2 * e.smash)?;
        if draws > u64::from(u32::MAX) || e.num_starts == 0 {
            return None;
        }
        // SAFETY: the caller guarantees the instruction set.
        let set = |v: u64| unsafe { V::splat(v) };
        Some(Broadcast {
            seed_mix: set(e.seed_mix),
            draws: set(draws),
            smash: (e.smash > 0).then(|| (set(e.smash), set(e.num_starts - 1))),
            upper_start_slot: set(e.masks.upper_start_slot),
            lower_mask: set(e.masks.lower),
            upper_mask: set(e.masks.upper),
            lower_columns: set(u64::from(g.lower_columns)),
            upper_start_block: set(g.upper_start_block as u64),
            num_blocks: set(g.num_blocks as u64),
        })
    }
}

/// The keys' remixed values (`hash::remix`) and their draws in
/// `0..draws` (`hash::start` before any smash clamping), for
/// `draws < 2^32`.
///
/// # Safety
/// The CPU supports `V`'s instruction set.
#[inline(always)]
pub(super) unsafe fn remix_and_draw<V: U64Lanes>(hashes: V, seed_mix: V, draws: V) -> (V, V) {
    // SAFETY: the caller guarantees the instruction set.
    unsafe {
        let x = mul_lo(hashes.xor(seed_mix), hash::REMIX);
        // Fastrange with `draws < 2^32`: the high half of x * draws is
        // (x_hi * draws + (x_lo * draws >> 32)) >> 32, exactly.
        let high = x.shr::<32>().mul32(draws);
        let low = x.mul32(draws).shr::<32>();
        (x, high.add(low).shr::<32>())
    }
}

/// The keys' remixed values, starts, column masks and (`standard`) masked
/// result bits.
///
/// # Safety
/// The CPU supports `V`'s instruction set.
#[inline(always)]
unsafe fn expand_common<V: U64Lanes>(b: &Broadcast<V>, hashes: V, standard: bool) -> (V, V, V, V) {
    // SAFETY: the caller guarantees the instruction set.
    unsafe {
        let (x, mut start) = remix_and_draw(hashes, b.seed_mix, b.draws);
        if let Some((smash, last)) = b.smash {
            // min(max(draw, smash) - smash, last)
            let above = V::select(start.ge(smash), start, smash).sub(smash);
            start = V::select(above.lt(last), above, last);
        }
        let mask = V::select(start.ge(b.upper_start_slot), b.upper_mask, b.lower_mask);
        let expected = if standard {
            let (lo, hi) = mul_full(x, hash::RESULT);
            lo.xor(hi).and(mask)
        } else {
            V::splat(0)
        };
        (x, start, mask, expected)
    }
}

/// ICML word indices of the keys' start blocks and next blocks.
///
/// # Safety
/// The CPU supports `V`'s instruction set; `block < 2^32` in every lane.
#[inline(always)]
unsafe fn expand_words<V: U64Lanes>(b: &Broadcast<V>, block: V) -> (V, V) {
    // SAFETY: the caller guarantees the instruction set.
    unsafe {
        let one = V::splat(1);
        let upper = block.ge(b.upper_start_block);
        let columns = V::select(upper, b.lower_columns.add(one), b.lower_columns);
        let base = block.mul32(b.lower_columns);
        let extra = V::select(upper, block.sub(b.upper_start_block), V::splat(0));
        let lo_word = base.add(extra);
        let has_next = block.add(one).lt(b.num_blocks);
        let hi_word = V::select(has_next, lo_word.add(columns), lo_word);
        (lo_word, hi_word)
    }
}

/// Per-width part of the vector expansion: block index and the split
/// coefficient row.
pub(crate) trait ExpandWidth: Coeff {
    /// The start blocks of `start` (`start / w`).
    ///
    /// # Safety
    /// The CPU supports `V`'s instruction set.
    unsafe fn block<V: U64Lanes>(start: V) -> V;

    /// Stores `c << (start % w)` and `c >> (w - start % w)` (as in
    /// `probe::probe_for`) of the coefficient rows of remixed values `x`
    /// to `c_lo[i..]` and `c_hi[i..]` (nothing if out of range).
    ///
    /// # Safety
    /// The CPU supports `V`'s instruction set.
    unsafe fn store_coefficients<V: U64Lanes>(
        x: V,
        start: V,
        i: usize,
        chunk: &mut ProbeChunk<Self>,
    );
}

/// Stores `v` to `out[i..i + V::LANES]`, if in range.
///
/// # Safety
/// The CPU supports `V`'s instruction set.
#[inline(always)]
unsafe fn store_at<V: U64Lanes>(out: &mut [u64], i: usize, v: V) {
    if let Some(dst) = out.get_mut(i..i + V::LANES) {
        // SAFETY: the caller guarantees the instruction set; `dst` holds
        // LANES values.
        unsafe { v.store(dst) };
    }
}

/// Expands `hashes[i..i + V::LANES]` into the same chunk entries (nothing
/// if out of range).
///
/// # Safety
/// The CPU supports `V`'s instruction set.
#[inline(always)]
unsafe fn expand_lanes<V: U64Lanes, W: ExpandWidth>(
    b: &Broadcast<V>,
    hashes: &[u64],
    i: usize,
    standard: bool,
    chunk: &mut ProbeChunk<W>,
) {
    let Some(keys) = hashes.get(i..i + V::LANES) else {
        return;
    };
    // SAFETY: the caller guarantees the instruction set; starts are below
    // 2^32 (Broadcast::new), so blocks are too.
    unsafe {
        let (x, start, mask, expected) = expand_common(b, V::load(keys), standard);
        let (lo_word, hi_word) = expand_words(b, W::block(start));
        W::store_coefficients(x, start, i, chunk);
        store_at(&mut chunk.lo_word, i, lo_word);
        store_at(&mut chunk.hi_word, i, hi_word);
        store_at(&mut chunk.mask, i, mask);
        store_at(&mut chunk.expected, i, expected);
    }
}

impl ExpandWidth for u64 {
    #[inline(always)]
    unsafe fn block<V: U64Lanes>(start: V) -> V {
        // SAFETY: the caller guarantees the instruction set.
        unsafe { start.shr::<6>() }
    }

    #[inline(always)]
    unsafe fn store_coefficients<V: U64Lanes>(
        x: V,
        start: V,
        i: usize,
        chunk: &mut ProbeChunk<u64>,
    ) {
        // SAFETY: the caller guarantees the instruction set.
        unsafe {
            let c = mul_lo(x, hash::COEFF).or(V::splat(1));
            let shift = start.and(V::splat(63));
            // c << shift, and (c >> 1) >> (63 - shift) as in probe_for.
            let c_lo = c.shl_var(shift);
            let c_hi = c.shr::<1>().shr_var(V::splat(63).sub(shift));
            store_at(&mut chunk.c_lo, i, c_lo);
            store_at(&mut chunk.c_hi, i, c_hi);
        }
    }
}

impl ExpandWidth for u128 {
    #[inline(always)]
    unsafe fn block<V: U64Lanes>(start: V) -> V {
        // SAFETY: the caller guarantees the instruction set.
        unsafe { start.shr::<7>() }
    }

    #[inline(always)]
    unsafe fn store_coefficients<V: U64Lanes>(
        x: V,
        start: V,
        i: usize,
        chunk: &mut ProbeChunk<u128>,
    ) {
        // SAFETY: the caller guarantees the instruction set; the slices
        // passed to store_u128 hold LANES values.
        unsafe {
            let (c_low, c_high) = mul_full(x, hash::COEFF);
            let c_low = c_low.or(V::splat(1));
            let s = start.and(V::splat(127));
            // 128-bit shifts by s in 0..128 from 64-bit lane shifts, which
            // give 0 for counts of 64 or more (negative counts wrap to huge
            // ones): c << s, and c >> (128 - s) (0 for s = 0).
            let sixty_four = V::splat(64);
            let s_minus_64 = s.sub(sixty_four);
            let sixty_four_minus_s = sixty_four.sub(s);
            let t = V::splat(128).sub(s);
            let lo_of_lo = c_low.shl_var(s);
            let hi_of_lo = c_high
                .shl_var(s)
                .or(c_low.shr_var(sixty_four_minus_s))
                .or(c_low.shl_var(s_minus_64));
            let lo_of_hi = c_low
                .shr_var(t)
                .or(c_high.shl_var(s_minus_64))
                .or(c_high.shr_var(sixty_four_minus_s));
            let hi_of_hi = c_high.shr_var(t);
            if let Some(dst) = chunk.c_lo.get_mut(i..i + V::LANES) {
                V::store_u128(lo_of_lo, hi_of_lo, dst);
            }
            if let Some(dst) = chunk.c_hi.get_mut(i..i + V::LANES) {
                V::store_u128(lo_of_hi, hi_of_hi, dst);
            }
        }
    }
}

/// `QueryKernel::expand` for a kernel with lanes `V`: native probes of
/// filters with fewer than 2^32 starts take the vector path `V::LANES`
/// keys at a time, the rest (and the last few keys) the scalar one.
///
/// # Safety
/// The CPU supports `V`'s instruction set.
#[inline(always)]
pub(crate) unsafe fn expand_chunk<V: U64Lanes, W: ExpandWidth, P: Probes<W>>(
    probes: &P,
    hashes: &[u64],
    chunk: &mut ProbeChunk<W>,
) {
    let hashes = &hashes[..hashes.len().min(CHUNK)];
    let mut done = 0;
    if let Some((g, e)) = probes.native() {
        // SAFETY: the caller guarantees the instruction set.
        if let Some(b) = unsafe { Broadcast::<V>::new(g, e) } {
            while done + V::LANES <= hashes.len() {
                // SAFETY: the caller guarantees the instruction set.
                // `P::RESULT` is the filter's kind for native probes.
                unsafe { expand_lanes(&b, hashes, done, P::RESULT, chunk) };
                done += V::LANES;
            }
        }
    }
    generic::expand_scalar(probes, hashes, chunk, done);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::Backend;
    use crate::layout::{Kind, Width};
    use crate::probe::{NativeProbes, Parts};

    /// Vector and scalar expansion of the same keys, field by field.
    fn check<V: U64Lanes, W: ExpandWidth, const STANDARD: bool, const SMASH: bool>(
        g: Geometry,
        seed: u32,
        hashes: &[u64],
    ) where
        NativeProbes<STANDARD, SMASH>: Probes<W, Source = Parts>,
    {
        let parts = Parts {
            geometry: g,
            expander: Expander::new(&g, seed),
        };
        let probes = <NativeProbes<STANDARD, SMASH> as Probes<W>>::new(&parts);
        assert!(probes.native().is_some());
        let mut vector = ProbeChunk::<W>::EMPTY;
        let mut scalar = ProbeChunk::<W>::EMPTY;
        // SAFETY: the caller checked that V's instruction set is available.
        unsafe { expand_chunk::<V, W, _>(&probes, hashes, &mut vector) };
        generic::expand_scalar(&probes, hashes, &mut scalar, 0);
        let n = hashes.len().min(CHUNK);
        let context = || std::format!("{} lanes, {g:?} seed {seed}", V::LANES);
        assert_eq!(vector.lo_word[..n], scalar.lo_word[..n], "{}", context());
        assert_eq!(vector.hi_word[..n], scalar.hi_word[..n], "{}", context());
        assert_eq!(vector.c_lo[..n], scalar.c_lo[..n], "{}", context());
        assert_eq!(vector.c_hi[..n], scalar.c_hi[..n], "{}", context());
        assert_eq!(vector.mask[..n], scalar.mask[..n], "{}", context());
        assert_eq!(vector.expected[..n], scalar.expected[..n], "{}", context());
    }

    /// [`check`] with the probes' type of `kind`.
    fn check_kind<V: U64Lanes, W: ExpandWidth>(kind: Kind, g: Geometry, seed: u32, hashes: &[u64]) {
        match kind {
            Kind::Homogeneous => check::<V, W, false, false>(g, seed, hashes),
            Kind::Standard | Kind::Bumped => check::<V, W, true, false>(g, seed, hashes),
            Kind::StandardSmash => check::<V, W, true, true>(g, seed, hashes),
        }
    }

    /// Whether `backend` runs here; says why not, and fails when
    /// `RIBBON_REQUIRE_BACKENDS` demands it.
    fn available(backend: Backend) -> bool {
        crate::test_kit::runnable(backend.name(), backend.is_available())
    }

    #[test]
    fn avx2_expansion_equals_scalar() {
        if available(Backend::Avx2) {
            sweep::<core::arch::x86_64::__m256i>();
        }
    }

    #[cfg(ribbon_avx512_kernels)]
    #[test]
    fn avx512_expansion_equals_scalar() {
        if available(Backend::Avx512) {
            sweep::<core::arch::x86_64::__m512i>();
        }
    }

    /// Every kind and width over geometries with and without upper
    /// blocks, tiny to large, keys covering the first and last starts.
    fn sweep<V: U64Lanes>() {
        // Keys whose starts cover the first and last slots and everything
        // between: extreme hashes plus a pseudo-random spread.
        let mut hashes = std::vec![0, 1, u64::MAX, u64::MAX - 1, 1 << 63, (1 << 63) - 1];
        let mut state = 0;
        while hashes.len() < CHUNK {
            hashes.push(crate::test_kit::splitmix64(&mut state));
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
            let len = CHUNK - round % (CHUNK + 1);
            let keys = &hashes[..len];
            for kind in [Kind::Homogeneous, Kind::Standard, Kind::StandardSmash] {
                for width in [Width::W64, Width::W128] {
                    let g = Geometry::new(kind, width, blocks, lower, upper_start).unwrap();
                    match width {
                        Width::W64 => check_kind::<V, u64>(kind, g, seed, keys),
                        Width::W128 => check_kind::<V, u128>(kind, g, seed, keys),
                    }
                }
            }
        }
    }
}
