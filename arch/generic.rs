//! The query (and the evaluation of a retrieval structure's values) and
//! the vector back-substitution, written once over small traits, and the
//! macro that makes each instruction set's entry points.

use crate::hash::{Coeff, FreeRows};
use crate::layout::Geometry;
use crate::probe::{Probe, Probes};
use crate::word::{Rows, Word};

/// Evaluating every column of one key at once, and prefetching its words.
pub(crate) trait QueryKernel<W: Coeff> {
    /// Writes the probes of `hashes` (at most [`CHUNK`]) to the first
    /// entries of `chunk`. Kernels with a vector twin of the hash expansion
    /// override this for [`Probes::native`] probes.
    ///
    /// # Safety
    /// The CPU supports the kernel's instruction set.
    #[inline(always)]
    unsafe fn expand<P: Probes<W>>(probes: &P, hashes: &[u64], chunk: &mut ProbeChunk<W>) {
        expand_scalar(probes, hashes, chunk, 0);
    }

    /// Starts loading the cache lines `p` will read (`max_columns` as for
    /// [`QueryKernel::matches`]).
    ///
    /// # Safety
    /// The CPU supports the kernel's instruction set.
    unsafe fn prefetch(payload: &[u8], p: &Probe<W>, max_columns: usize);

    /// Whether all of `p`'s columns match its expected bits. Reads only
    /// within `payload`. `max_columns` is at least the filter's
    /// [`Probes::max_columns`] (single queries pass a compile-time bound,
    /// see [`contains`]): kernels loop up to it, masking the columns
    /// a key lacks, so that the loop count never depends on the key (a
    /// per-key count mispredicts whenever blocks differ in columns).
    /// `P` is the probes' type: without result bits ([`Probes::RESULT`]),
    /// kernels skip `expected`.
    ///
    /// # Safety
    /// The CPU supports the kernel's instruction set, and `p` comes from
    /// [`crate::probe::probe_for`] for the validated geometry `payload` belongs to.
    unsafe fn matches<P: Probes<W>>(payload: &[u8], p: &Probe<W>, max_columns: usize) -> bool;

    /// [`QueryKernel::matches`] without the kernel's scalar fallback:
    /// `None` for the keys it would hand to the scalar kernel (whole
    /// vectors that would pass the payload's end, in the last blocks).
    /// Single-key queries answer those out of line ([`contains`]), so that
    /// the fallback takes none of the fast path's registers: inlined, it
    /// made every query save and restore six of them.
    ///
    /// # Safety
    /// As for [`QueryKernel::matches`].
    #[inline(always)]
    unsafe fn matches_fast<P: Probes<W>>(
        payload: &[u8],
        p: &Probe<W>,
        max_columns: usize,
    ) -> Option<bool> {
        // SAFETY: the caller's guarantees.
        Some(unsafe { Self::matches::<P>(payload, p, max_columns) })
    }

    /// The value of `p`'s columns, column `j` in bit `j`: each column's
    /// parity `parity((lo_j & c_lo) ^ (hi_j & c_hi))` xor its expected bit
    /// (for probes with [`Probes::RESULT`]), 0 past the key's columns.
    /// This is what [`QueryKernel::matches`] compares with the expected
    /// bits, and a retrieval structure's value of the key. Reads only
    /// within `payload`; `max_columns` as for `matches`. The default is
    /// the scalar definition (`scalar::key_value`), which the scalar
    /// kernel keeps and the vector kernels override.
    ///
    /// # Safety
    /// As for [`QueryKernel::matches`].
    #[inline(always)]
    unsafe fn column_values<P: Probes<W>>(
        payload: &[u8],
        p: &Probe<W>,
        _max_columns: usize,
    ) -> u64 {
        crate::arch::scalar::key_value::<W, P>(payload, p)
    }

    /// [`QueryKernel::column_values`] without the kernel's scalar
    /// fallback: `None` for the keys it would hand to the scalar kernel,
    /// which single evaluations ([`get`]) compute out of line, as
    /// [`QueryKernel::matches_fast`] does for queries.
    ///
    /// # Safety
    /// As for [`QueryKernel::matches`].
    #[inline(always)]
    unsafe fn column_values_fast<P: Probes<W>>(
        payload: &[u8],
        p: &Probe<W>,
        max_columns: usize,
    ) -> Option<u64> {
        // SAFETY: the caller's guarantees.
        Some(unsafe { Self::column_values::<P>(payload, p, max_columns) })
    }
}

/// Keys one expansion writes: a vector kernel's lanes divide it.
pub(crate) const CHUNK: usize = 8;

/// Chunks in flight in a batch query: while chunk `i` is evaluated, the
/// blocks of the next three chunks (24-32 keys) are already being loaded.
/// The ring takes 1.5 KiB of stack for w = 64 and 2 KiB for w = 128, so
/// 32-bit targets (small stacks: Cortex-M, where memory is near and no
/// backend prefetches) answer one key at a time instead.
const CHUNKS_IN_FLIGHT: usize = 4;

/// The probes of up to [`CHUNK`] keys, field by field (so that a vector
/// expansion stores eight keys' field with one instruction).
pub(crate) struct ProbeChunk<W> {
    /// Word indices as u64 (a validated geometry's fit in usize), so that
    /// vector code stores them the same on every target.
    pub(crate) lo_word: [u64; CHUNK],
    pub(crate) hi_word: [u64; CHUNK],
    pub(crate) c_lo: [W; CHUNK],
    pub(crate) c_hi: [W; CHUNK],
    pub(crate) expected: [u64; CHUNK],
    pub(crate) mask: [u64; CHUNK],
}

impl<W: Coeff> ProbeChunk<W> {
    pub(crate) const EMPTY: ProbeChunk<W> = ProbeChunk {
        lo_word: [0; CHUNK],
        hi_word: [0; CHUNK],
        c_lo: [W::ZERO; CHUNK],
        c_hi: [W::ZERO; CHUNK],
        expected: [0; CHUNK],
        mask: [0; CHUNK],
    };

    /// Stores probe `i` (`i < CHUNK`; larger indices are ignored).
    #[inline(always)]
    pub(crate) fn set(&mut self, i: usize, p: Probe<W>) {
        if i < CHUNK {
            self.lo_word[i] = p.lo_word as u64;
            self.hi_word[i] = p.hi_word as u64;
            self.c_lo[i] = p.c_lo;
            self.c_hi[i] = p.c_hi;
            self.expected[i] = p.expected;
            self.mask[i] = p.mask;
        }
    }

    /// Probe `i` (`i < CHUNK`; larger indices give an empty probe).
    #[inline(always)]
    pub(crate) fn get(&self, i: usize) -> Probe<W> {
        if i < CHUNK {
            Probe {
                lo_word: self.lo_word[i] as usize,
                hi_word: self.hi_word[i] as usize,
                c_lo: self.c_lo[i],
                c_hi: self.c_hi[i],
                expected: self.expected[i],
                mask: self.mask[i],
            }
        } else {
            Probe::EMPTY
        }
    }
}

/// Writes the probes of `hashes[from..]` to the same entries of `chunk`,
/// one key at a time.
#[inline(always)]
pub(crate) fn expand_scalar<W: Coeff, P: Probes<W>>(
    probes: &P,
    hashes: &[u64],
    chunk: &mut ProbeChunk<W>,
    from: usize,
) {
    for (i, &hash) in hashes.iter().enumerate().skip(from) {
        chunk.set(i, probes.probe(hash));
    }
}

/// Single query of a non-empty filter whose blocks have at most `COLUMNS`
/// columns (`COLUMNS = 0`: any number, read from the probes).
///
/// A compile-time bound lets the kernel's column loop unroll into
/// straight-line code: a single query's cost is mostly how many
/// instructions it keeps in flight (the CPU overlaps the memory reads of
/// consecutive queries only as far as its reorder window reaches), and a
/// loop's control and recomputed addresses are a good part of them.
///
/// # Safety
/// The CPU supports `K`'s instruction set, and `COLUMNS` is 0 or at least
/// the filter's [`Probes::max_columns`].
#[inline(always)]
pub(crate) unsafe fn contains<W: Coeff, P: Probes<W>, K: QueryKernel<W>, const COLUMNS: usize>(
    source: &P::Source,
    payload: &[u8],
    hash: u64,
) -> bool {
    let probes = P::new(source);
    let max_columns = if COLUMNS == 0 {
        probes.max_columns()
    } else {
        COLUMNS
    };
    // SAFETY: the caller guarantees the instruction set and the column
    // bound; the probe is computed here for this filter's geometry.
    match unsafe { K::matches_fast::<P>(payload, &probes.probe(hash), max_columns) } {
        Some(answer) => answer,
        None => contains_near_end::<W, P>(source, payload, hash),
    }
}

/// [`QueryKernel::matches`] of a kernel with a scalar fallback: its
/// [`QueryKernel::matches_fast`], or the scalar kernel for the keys that
/// leaves.
///
/// # Safety
/// As for [`QueryKernel::matches`].
#[inline(always)]
pub(crate) unsafe fn matches_or_scalar<W: Coeff, P: Probes<W>, K: QueryKernel<W>>(
    payload: &[u8],
    p: &Probe<W>,
    max_columns: usize,
) -> bool
where
    crate::arch::scalar::Scalar: QueryKernel<W>,
{
    // SAFETY: the caller's guarantees; the scalar kernel needs no
    // instruction set.
    unsafe {
        K::matches_fast::<P>(payload, p, max_columns).unwrap_or_else(|| {
            <crate::arch::scalar::Scalar as QueryKernel<W>>::matches::<P>(payload, p, max_columns)
        })
    }
}

/// The `matches` method of a kernel that implements
/// [`QueryKernel::matches_fast`] and leaves the rest to the scalar kernel
/// ([`matches_or_scalar`]), for words `$W`.
macro_rules! matches_with_scalar_fallback {
    ($W:ty) => {
        #[inline(always)]
        unsafe fn matches<P: Probes<$W>>(
            payload: &[u8],
            p: &Probe<$W>,
            max_columns: usize,
        ) -> bool {
            // SAFETY: the caller's guarantees.
            unsafe { generic::matches_or_scalar::<$W, P, Self>(payload, p, max_columns) }
        }
    };
}
pub(crate) use matches_with_scalar_fallback;

/// [`QueryKernel::column_values`] of a kernel with a scalar fallback: its
/// [`QueryKernel::column_values_fast`], or the scalar definition for the
/// keys that leaves.
///
/// # Safety
/// As for [`QueryKernel::matches`].
#[inline(always)]
pub(crate) unsafe fn column_values_or_scalar<W: Coeff, P: Probes<W>, K: QueryKernel<W>>(
    payload: &[u8],
    p: &Probe<W>,
    max_columns: usize,
) -> u64 {
    // SAFETY: the caller's guarantees.
    unsafe { K::column_values_fast::<P>(payload, p, max_columns) }
        .unwrap_or_else(|| crate::arch::scalar::key_value::<W, P>(payload, p))
}

/// The `column_values` method of a kernel that implements
/// [`QueryKernel::column_values_fast`] and leaves the rest to the scalar
/// definition ([`column_values_or_scalar`]), for words `$W`.
macro_rules! column_values_with_scalar_fallback {
    ($W:ty) => {
        #[inline(always)]
        unsafe fn column_values<P: Probes<$W>>(
            payload: &[u8],
            p: &Probe<$W>,
            max_columns: usize,
        ) -> u64 {
            // SAFETY: the caller's guarantees.
            unsafe { generic::column_values_or_scalar::<$W, P, Self>(payload, p, max_columns) }
        }
    };
}
pub(crate) use column_values_with_scalar_fallback;

/// The scalar single query, for the keys a vector kernel leaves to it
/// ([`QueryKernel::matches_fast`]): cold and out of line, it recomputes
/// the probe from the hash rather than keep it alive in the fast path.
#[cold]
#[inline(never)]
fn contains_near_end<W: Coeff, P: Probes<W>>(
    source: &P::Source,
    payload: &[u8],
    hash: u64,
) -> bool {
    crate::arch::scalar::contains::<W, P>(source, payload, hash)
}

/// The value of `hash` in a non-empty retrieval structure whose blocks
/// have at most `COLUMNS` columns (`COLUMNS = 0`: any number), as
/// [`contains`] (the same compile-time bound, the same out-of-line
/// fallback).
///
/// # Safety
/// As for [`contains`].
#[inline(always)]
pub(crate) unsafe fn get<W: Coeff, P: Probes<W>, K: QueryKernel<W>, const COLUMNS: usize>(
    source: &P::Source,
    payload: &[u8],
    hash: u64,
) -> u64 {
    let probes = P::new(source);
    let max_columns = if COLUMNS == 0 {
        probes.max_columns()
    } else {
        COLUMNS
    };
    // SAFETY: the caller guarantees the instruction set and the column
    // bound; the probe is computed here for this geometry.
    match unsafe { K::column_values_fast::<P>(payload, &probes.probe(hash), max_columns) } {
        Some(value) => value,
        None => get_near_end::<W, P>(source, payload, hash),
    }
}

/// The scalar single evaluation, for the keys a vector kernel leaves to
/// it, out of line as [`contains_near_end`].
#[cold]
#[inline(never)]
fn get_near_end<W: Coeff, P: Probes<W>>(source: &P::Source, payload: &[u8], hash: u64) -> u64 {
    crate::arch::scalar::get::<W, P>(source, payload, hash)
}

/// The compile-time column bound ([`contains`]'s `COLUMNS`) that the
/// kernel table picks for a filter with at most `max_columns` columns per
/// block: the first of 8, 12 and 16 that holds them (whole vectors of 4
/// and 8 lanes), or 0 (a runtime bound) above 16 (FP rates below
/// 0.0015 %, rare enough to keep the code small).
pub(crate) const fn single_query_columns(max_columns: usize) -> usize {
    match max_columns {
        0..=8 => 8,
        9..=12 => 12,
        13..=16 => 16,
        _ => 0,
    }
}

/// What a batch writes per key, from its probe: a filter's answer
/// (`bool`, [`QueryKernel::matches`]) or a retrieval structure's value
/// (`u64`, [`QueryKernel::column_values`]). One ring ([`batch`]) serves
/// both.
trait Evaluation<W: Coeff>: Sized {
    /// The evaluation of `p` by kernel `K`.
    ///
    /// # Safety
    /// As for [`QueryKernel::matches`].
    unsafe fn evaluate<P: Probes<W>, K: QueryKernel<W>>(
        payload: &[u8],
        p: &Probe<W>,
        max_columns: usize,
    ) -> Self;
}

impl<W: Coeff> Evaluation<W> for bool {
    #[inline(always)]
    unsafe fn evaluate<P: Probes<W>, K: QueryKernel<W>>(
        payload: &[u8],
        p: &Probe<W>,
        max_columns: usize,
    ) -> bool {
        // SAFETY: the caller's guarantees.
        unsafe { K::matches::<P>(payload, p, max_columns) }
    }
}

impl<W: Coeff> Evaluation<W> for u64 {
    #[inline(always)]
    unsafe fn evaluate<P: Probes<W>, K: QueryKernel<W>>(
        payload: &[u8],
        p: &Probe<W>,
        max_columns: usize,
    ) -> u64 {
        // SAFETY: the caller's guarantees.
        unsafe { K::column_values::<P>(payload, p, max_columns) }
    }
}

/// Batch query as a pipeline over a ring of [`CHUNKS_IN_FLIGHT`] chunks:
/// evaluate the oldest chunk, then expand the next keys into its slot and
/// prefetch their blocks. `out.len() == hashes.len()`; the filter is not
/// empty.
///
/// # Safety
/// The CPU supports `K`'s instruction set.
#[inline(always)]
pub(crate) unsafe fn contains_batch<W: Coeff, P: Probes<W>, K: QueryKernel<W>>(
    source: &P::Source,
    payload: &[u8],
    hashes: &[u64],
    out: &mut [bool],
) {
    // SAFETY: the caller guarantees the instruction set.
    unsafe { batch::<W, P, K, bool>(source, payload, hashes, out) }
}

/// The values of `hashes` in a non-empty retrieval structure, through the
/// ring of [`contains_batch`]; `out.len() == hashes.len()`.
///
/// # Safety
/// The CPU supports `K`'s instruction set.
#[inline(always)]
pub(crate) unsafe fn get_batch<W: Coeff, P: Probes<W>, K: QueryKernel<W>>(
    source: &P::Source,
    payload: &[u8],
    hashes: &[u64],
    out: &mut [u64],
) {
    // SAFETY: the caller guarantees the instruction set.
    unsafe { batch::<W, P, K, u64>(source, payload, hashes, out) }
}

/// The ring of [`contains_batch`] and [`get_batch`], writing evaluations
/// `E` of the keys' probes to `out`.
///
/// # Safety
/// The CPU supports `K`'s instruction set.
#[inline(always)]
unsafe fn batch<W: Coeff, P: Probes<W>, K: QueryKernel<W>, E: Evaluation<W>>(
    source: &P::Source,
    payload: &[u8],
    hashes: &[u64],
    out: &mut [E],
) {
    let probes = &P::new(source);
    let max_columns = probes.max_columns();
    // 32-bit targets, and unoptimized builds (`build.rs`), where the
    // ring's bookkeeping costs more than it saves.
    if cfg!(not(target_pointer_width = "64")) || cfg!(ribbon_unoptimized) {
        for (&hash, answer) in hashes.iter().zip(out.iter_mut()) {
            // SAFETY: the caller guarantees the instruction set; the
            // probe is computed for this geometry.
            *answer = unsafe { E::evaluate::<P, K>(payload, &probes.probe(hash), max_columns) };
        }
        return;
    }
    let mut ring = [ProbeChunk::<W>::EMPTY; CHUNKS_IN_FLIGHT];
    let mut pending = hashes.chunks(CHUNK);
    for (chunk, keys) in ring.iter_mut().zip(pending.by_ref()) {
        // SAFETY: the caller guarantees the instruction set.
        unsafe { fill::<W, P, K>(probes, payload, keys, chunk, max_columns) };
    }
    for (index, answers) in out.chunks_mut(CHUNK).enumerate() {
        let Some(chunk) = ring.get_mut(index % CHUNKS_IN_FLIGHT) else {
            return;
        };
        for (i, answer) in answers.iter_mut().enumerate() {
            // SAFETY: the caller guarantees the instruction set; the
            // probes were computed for this geometry.
            *answer = unsafe { E::evaluate::<P, K>(payload, &chunk.get(i), max_columns) };
        }
        if let Some(keys) = pending.next() {
            // SAFETY: the caller guarantees the instruction set.
            unsafe { fill::<W, P, K>(probes, payload, keys, chunk, max_columns) };
        }
    }
}

/// Expands `keys` into `chunk` and starts loading their blocks. A function
/// rather than a closure: a closure would not inherit the caller's target
/// features, and the kernels would not inline.
///
/// # Safety
/// The CPU supports `K`'s instruction set.
#[inline(always)]
unsafe fn fill<W: Coeff, P: Probes<W>, K: QueryKernel<W>>(
    probes: &P,
    payload: &[u8],
    keys: &[u64],
    chunk: &mut ProbeChunk<W>,
    max_columns: usize,
) {
    // SAFETY (both): the caller guarantees the instruction set; the probes
    // are computed here for this filter's geometry.
    unsafe { K::expand(probes, keys, chunk) };
    for i in 0..keys.len() {
        unsafe { K::prefetch(payload, &chunk.get(i), max_columns) };
    }
}

/// Unsigned 64-bit lanes of one vector register: what back-substitution
/// with columns as lanes needs, and the base of the hash expansion's lane
/// trait on x86_64 (`U64Lanes`). Each instruction set implements it once;
/// [`SolveLanes`] follows for both word widths.
///
/// # Safety
/// Every method requires that the CPU supports the implementing
/// instruction set; `store` also that its slice holds at least `LANES`
/// values.
pub(crate) trait Lanes64: Copy {
    /// Lanes per vector (at most [`MAX_LANES`]).
    const LANES: usize;
    /// Every lane `v`.
    ///
    /// # Safety
    /// See the trait.
    unsafe fn splat(v: u64) -> Self;
    /// Lanes to `dst[..LANES]` (`dst` is at least that long).
    ///
    /// # Safety
    /// See the trait.
    unsafe fn store(self, dst: &mut [u64]);
    /// Lane-wise xor.
    ///
    /// # Safety
    /// See the trait.
    unsafe fn xor(self, o: Self) -> Self;
    /// Lane-wise and.
    ///
    /// # Safety
    /// See the trait.
    unsafe fn and(self, o: Self) -> Self;
    /// Lane-wise or.
    ///
    /// # Safety
    /// See the trait.
    unsafe fn or(self, o: Self) -> Self;
    /// Lane-wise logical shift right by `N` (< 64).
    ///
    /// # Safety
    /// See the trait.
    unsafe fn shr<const N: u32>(self) -> Self;
    /// Lane-wise shift left by `N` (< 64).
    ///
    /// # Safety
    /// See the trait.
    unsafe fn shl<const N: u32>(self) -> Self;
    /// Each lane's parity in its low bit (the other bits are arbitrary).
    ///
    /// # Safety
    /// See the trait.
    unsafe fn parity(self) -> Self;
    /// Lane `k` holds `bits >> k` (its low bit is bit `k` of `bits`; the
    /// other bits are arbitrary).
    ///
    /// # Safety
    /// See the trait.
    unsafe fn bit_per_lane(bits: u64) -> Self;
}

/// Copies `lanes` (a register's lanes, through `bytemuck`) to the start
/// of `dst`, as far as both go: every [`Lanes64::store`].
#[inline(always)]
pub(crate) fn copy_lanes<T: Copy>(dst: &mut [T], lanes: impl IntoIterator<Item = T>) {
    for (d, lane) in dst.iter_mut().zip(lanes) {
        *d = lane;
    }
}

/// Implements [`Lanes64`]'s `xor`, `and` and `or` with one intrinsic each.
#[cfg(any(ribbon_x86_kernels, ribbon_neon_kernels))]
macro_rules! lanes64_bitwise {
    ($xor:path, $and:path, $or:path) => {
        #[inline(always)]
        unsafe fn xor(self, o: Self) -> Self {
            // SAFETY: the CPU runs the instruction set (the trait's contract).
            unsafe { $xor(self, o) }
        }
        #[inline(always)]
        unsafe fn and(self, o: Self) -> Self {
            // SAFETY: as for `xor`.
            unsafe { $and(self, o) }
        }
        #[inline(always)]
        unsafe fn or(self, o: Self) -> Self {
            // SAFETY: as for `xor`.
            unsafe { $or(self, o) }
        }
    };
}
#[cfg(any(ribbon_x86_kernels, ribbon_neon_kernels))]
pub(crate) use lanes64_bitwise;

/// Most lanes of any [`Lanes64`] (AVX-512's eight).
pub(crate) const MAX_LANES: usize = 8;

/// Back-substitution with columns as vector lanes: one state vector holds
/// `LANES` columns' state words. Implemented once for every [`Lanes64`]
/// and both word widths.
pub(crate) trait SolveLanes<W: Word> {
    type State: Copy;
    /// Columns per state vector.
    const COLUMNS: usize;

    /// All-zero state.
    ///
    /// # Safety
    /// The CPU supports the kernel's instruction set.
    unsafe fn zero() -> Self::State;

    /// Solves one row for this vector's columns: per lane `j`,
    /// `s' = (s << 1) | (parity(c & (s << 1)) ^ bit j of bits)`, the step
    /// of the scalar `arch/scalar.rs`.
    ///
    /// # Safety
    /// As for [`SolveLanes::zero`].
    unsafe fn step(s: Self::State, c: W, bits: u64) -> Self::State;

    /// Writes the lanes' state words to `out` (`COLUMNS` words).
    ///
    /// # Safety
    /// As for [`SolveLanes::zero`].
    unsafe fn store(s: Self::State, out: &mut [W]);
}

/// The new bit 0 of each lane: `parity(t) ^ bit k of bits` for lane `k`.
///
/// # Safety
/// The CPU supports `V`'s instruction set.
#[inline(always)]
unsafe fn solved_bit<V: Lanes64>(t: V, bits: u64) -> V {
    // SAFETY: the caller guarantees the instruction set.
    unsafe { t.parity().xor(V::bit_per_lane(bits)).and(V::splat(1)) }
}

impl<V: Lanes64> SolveLanes<u64> for V {
    type State = V;
    const COLUMNS: usize = V::LANES;

    #[inline(always)]
    unsafe fn zero() -> V {
        // SAFETY: the caller guarantees the instruction set.
        unsafe { V::splat(0) }
    }

    #[inline(always)]
    unsafe fn step(s: V, c: u64, bits: u64) -> V {
        // SAFETY: the caller guarantees the instruction set.
        unsafe {
            let shifted = s.shl::<1>();
            shifted.or(solved_bit(shifted.and(V::splat(c)), bits))
        }
    }

    #[inline(always)]
    unsafe fn store(s: V, out: &mut [u64]) {
        // SAFETY: the caller guarantees the instruction set and passes
        // `COLUMNS` words.
        unsafe { s.store(out) }
    }
}

/// 128-bit state words as two vectors: low and high halves.
impl<V: Lanes64> SolveLanes<u128> for V {
    type State = (V, V);
    const COLUMNS: usize = V::LANES;

    #[inline(always)]
    unsafe fn zero() -> (V, V) {
        // SAFETY: the caller guarantees the instruction set.
        unsafe { (V::splat(0), V::splat(0)) }
    }

    #[inline(always)]
    unsafe fn step(s: (V, V), c: u128, bits: u64) -> (V, V) {
        // SAFETY: the caller guarantees the instruction set.
        unsafe {
            let (l, h) = s;
            let sl = l.shl::<1>();
            let sh = h.shl::<1>().or(l.shr::<63>());
            let t = sl
                .and(V::splat(c as u64))
                .xor(sh.and(V::splat((c >> 64) as u64)));
            (sl.or(solved_bit(t, bits)), sh)
        }
    }

    #[inline(always)]
    unsafe fn store(s: (V, V), out: &mut [u128]) {
        let (mut lo, mut hi) = ([0u64; MAX_LANES], [0u64; MAX_LANES]);
        // SAFETY: the caller guarantees the instruction set; each array
        // holds at least LANES values.
        unsafe {
            s.0.store(&mut lo);
            s.1.store(&mut hi);
        }
        for ((o, l), h) in out.iter_mut().zip(lo).zip(hi) {
            *o = u128::from(l) | (u128::from(h) << 64);
        }
    }
}

/// Most state vectors any lane width needs (64 columns, 2 lanes each).
pub(crate) const MAX_VECTORS: usize = 32;

/// State vectors a geometry's back-substitution uses: 1, 2 or
/// [`MAX_VECTORS`] (the state lives in registers when the number of
/// vectors is a constant; one or two cover up to 16 columns on AVX-512).
pub(crate) fn state_vectors<W: Word, L: SolveLanes<W>>(g: &Geometry) -> usize {
    match g.max_columns().min(64).div_ceil(L::COLUMNS) {
        0 | 1 => 1,
        2 => 2,
        _ => MAX_VECTORS,
    }
}

/// Defines a SIMD module's entry points, each compiled with `$features`
/// (none for the portable kernels, which use the build's own):
/// `contains` and `contains_batch` (a filter's queries) and `get` and
/// `get_batch` (a retrieval structure's values) over query kernel
/// `$kernel`, and
/// `back_substitute` over lanes `$lanes` (the three variants of
/// [`solve_vectors`], each in a frame of its own: inlined into one
/// function, their state arrays added up to 6 KiB of stack on AVX-512;
/// `tests/embedded`). The kernel table (`src/kernels.rs`) is their only
/// caller.
macro_rules! entry_points {
    ($kernel:ty, $lanes:ty, $features:literal) => {
        $crate::arch::generic::entry_points!(@define $kernel, $lanes, #[target_feature(enable = $features)]);
    };
    ($kernel:ty, $lanes:ty) => {
        $crate::arch::generic::entry_points!(@define $kernel, $lanes,);
    };
    (@define $kernel:ty, $lanes:ty, $(#[$attr:meta])*) => {
        /// Single query of a non-empty filter with at most `COLUMNS`
        /// columns per block (0: any), as `generic::contains`.
        ///
        /// # Safety
        /// The CPU supports the module's instruction set; `COLUMNS` is 0
        /// or at least the filter's `Probes::max_columns`.
        $(#[$attr])*
        pub(crate) unsafe fn contains<W: Coeff, P: Probes<W>, const COLUMNS: usize>(
            source: &P::Source,
            payload: &[u8],
            hash: u64,
        ) -> bool
        where
            $kernel: QueryKernel<W>,
        {
            // SAFETY: the instruction set is enabled for this function (or
            // is the build's own, for the portable kernels); the caller
            // guarantees the column bound.
            unsafe { generic::contains::<W, P, $kernel, COLUMNS>(source, payload, hash) }
        }

        /// Batch query of a non-empty filter; `out.len() == hashes.len()`.
        ///
        /// # Safety
        /// As for `contains`.
        $(#[$attr])*
        pub(crate) unsafe fn contains_batch<W: Coeff, P: Probes<W>>(
            source: &P::Source,
            payload: &[u8],
            hashes: &[u64],
            out: &mut [bool],
        ) where
            $kernel: QueryKernel<W>,
        {
            // SAFETY: the instruction set is enabled for this function (or
            // is the build's own, for the portable kernels).
            unsafe { generic::contains_batch::<W, P, $kernel>(source, payload, hashes, out) }
        }

        /// The value of `hash` in a non-empty retrieval structure with at
        /// most `COLUMNS` columns per block (0: any), as `generic::get`.
        ///
        /// # Safety
        /// As for `contains`.
        $(#[$attr])*
        pub(crate) unsafe fn get<W: Coeff, P: Probes<W>, const COLUMNS: usize>(
            source: &P::Source,
            payload: &[u8],
            hash: u64,
        ) -> u64
        where
            $kernel: QueryKernel<W>,
        {
            // SAFETY: the instruction set is enabled for this function (or
            // is the build's own, for the portable kernels); the caller
            // guarantees the column bound.
            unsafe { generic::get::<W, P, $kernel, COLUMNS>(source, payload, hash) }
        }

        /// The values of `hashes` in a non-empty retrieval structure;
        /// `out.len() == hashes.len()`.
        ///
        /// # Safety
        /// As for `contains`.
        $(#[$attr])*
        pub(crate) unsafe fn get_batch<W: Coeff, P: Probes<W>>(
            source: &P::Source,
            payload: &[u8],
            hashes: &[u64],
            out: &mut [u64],
        ) where
            $kernel: QueryKernel<W>,
        {
            // SAFETY: the instruction set is enabled for this function (or
            // is the build's own, for the portable kernels).
            unsafe { generic::get_batch::<W, P, $kernel>(source, payload, hashes, out) }
        }

        /// Back-substitution into ICML words, as the scalar
        /// `arch/scalar.rs` does.
        ///
        /// # Safety
        /// As for `contains`.
        $(#[$attr])*
        pub(crate) unsafe fn back_substitute<W: Coeff>(
            g: &Geometry,
            free: FreeRows,
            rows: Rows<'_>,
            payload: &mut [u8],
        ) where
            $lanes: SolveLanes<W>,
        {
            // SAFETY (all three): the instruction set is enabled for this
            // function (or is the build's own).
            match generic::state_vectors::<W, $lanes>(g) {
                1 => unsafe { solve_in_frame::<W, 1>(g, free, rows, payload) },
                2 => unsafe { solve_in_frame::<W, 2>(g, free, rows, payload) },
                _ => unsafe {
                    solve_in_frame::<W, { generic::MAX_VECTORS }>(g, free, rows, payload)
                },
            }
        }

        /// One variant of [`generic::solve_vectors`].
        ///
        /// # Safety
        /// As for `contains`.
        $(#[$attr])*
        #[inline(never)]
        unsafe fn solve_in_frame<W: Coeff, const N: usize>(
            g: &Geometry,
            free: FreeRows,
            rows: Rows<'_>,
            payload: &mut [u8],
        ) where
            $lanes: SolveLanes<W>,
        {
            // SAFETY: the instruction set is enabled for this function (or
            // is the build's own, for the portable kernels).
            unsafe { generic::solve_vectors::<W, $lanes, N>(g, free, rows, payload) }
        }
    };
}
pub(crate) use entry_points;

/// The vector twin of the scalar back-substitution (`arch/scalar.rs`) with `N` state
/// vectors (`N * COLUMNS >= columns`): same inputs, same bytes out. SIMD
/// modules pick `N` in the `back_substitute` of [`entry_points`].
///
/// # Safety
/// The CPU supports `L`'s instruction set; `L::COLUMNS >= 2`.
#[inline(always)]
pub(crate) unsafe fn solve_vectors<W: Word, L: SolveLanes<W>, const N: usize>(
    g: &Geometry,
    free: FreeRows,
    rows: Rows<'_>,
    payload: &mut [u8],
) {
    let w = W::BITS as usize;
    let max_columns = g.max_columns().min(64);
    let vectors = max_columns.div_ceil(L::COLUMNS).min(N);
    // SAFETY (all calls below): the caller guarantees the instruction set.
    let mut state = [unsafe { L::zero() }; N];
    let mut words = [W::ZERO; 64 + 8];
    for block in (0..g.num_blocks).rev() {
        for row in (block * w..block * w + w).rev() {
            let c: W = rows.coeff(row);
            let bits = if c.is_zero() {
                free.bits(row as u64)
            } else {
                rows.result::<W>(row)
            };
            for (k, s) in state.iter_mut().enumerate() {
                if N == MAX_VECTORS && k >= vectors {
                    break;
                }
                *s = unsafe { L::step(*s, c, bits >> ((k * L::COLUMNS) & 63)) };
            }
        }
        for (k, s) in state.iter().take(vectors).enumerate() {
            if let Some(out) = words.get_mut(k * L::COLUMNS..(k + 1) * L::COLUMNS) {
                unsafe { L::store(*s, out) };
            }
        }
        let columns = g.block_columns(block) as usize;
        let first = g.block_word_offset(block);
        for (j, word) in words.iter().take(columns).enumerate() {
            word.write_word(payload, first + j);
        }
    }
}
