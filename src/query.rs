//! Query math shared by every backend, and the scalar query: the reference
//! every SIMD kernel is checked against.
//!
//! A key's `w`-bit window of the solution starts at bit `shift` of its start
//! block's words and ends in the next block's words. Instead of shifting
//! every column's two words into place, the coefficient row is split once
//! per key into the bits that fall into the start block (`c << shift`) and
//! those that fall into the next block (`c >> (w - shift)`). Column `j`'s
//! result bit is then `parity((lo_j & c_lo) ^ (hi_j & c_hi))`.

use crate::hash::{Coeff, Expander};
use crate::layout::Geometry;

/// Everything a kernel needs to evaluate one key: where its words are, how
/// many columns, the split coefficient row and the expected result bits.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Probe<W> {
    /// First ICML word of the start block.
    pub(crate) lo_word: usize,
    /// First ICML word of the next block (the start block itself when the
    /// start is the last possible one; its `c_hi` is then 0).
    pub(crate) hi_word: usize,
    /// Coefficient bits that select slots of the start block.
    pub(crate) c_lo: W,
    /// Coefficient bits that select slots of the next block.
    pub(crate) c_hi: W,
    /// Expected result bits (column `j` in bit `j`); 0 for Homogeneous.
    pub(crate) expected: u64,
    /// The low bits set for the start block's columns (the columns to
    /// check).
    pub(crate) mask: u64,
}

impl<W: Coeff> Probe<W> {
    /// A placeholder for arrays of probes; never evaluated.
    pub(crate) const EMPTY: Probe<W> = Probe {
        lo_word: 0,
        hi_word: 0,
        c_lo: W::ZERO,
        c_hi: W::ZERO,
        expected: 0,
        mask: 0,
    };

    /// The number of columns to check (the set bits of `mask`, which are
    /// the low ones).
    #[inline(always)]
    pub(crate) fn columns(&self) -> usize {
        (u64::BITS - self.mask.leading_zeros()) as usize
    }
}

/// Turns key hashes into probes. This crate's filters use [`NativeProbes`];
/// a foreign format with its own hashing over the same ICML layout (the
/// `rocksdb` module) brings its own, and every kernel serves both.
pub(crate) trait Probes<W> {
    /// Whether probes carry result bits (Standard Ribbon). When false,
    /// `expected` is always 0 and kernels skip it.
    const RESULT: bool;
    /// The probe of `hash`.
    fn probe(&self, hash: u64) -> Probe<W>;
    /// The most columns any probe has ([`Geometry::max_columns`]).
    fn max_columns(&self) -> usize;
    /// The geometry and [`Expander`] when `probe` is exactly
    /// [`NativeProbes`]' (this crate's hashing): a kernel may then expand
    /// several keys at once with a vector twin of the same math.
    #[inline(always)]
    #[cfg_attr(not(ribbon_x86_kernels), allow(dead_code))]
    fn native(&self) -> Option<(&Geometry, &Expander)> {
        None
    }
}

/// This crate's hashing ([`Expander`]) over a geometry; `STANDARD` is the
/// filter's kind, fixed at compile time so that Homogeneous probes skip the
/// result bits.
#[derive(Clone, Copy, Debug)]
pub(crate) struct NativeProbes<const STANDARD: bool> {
    geometry: Geometry,
    expander: Expander,
}

impl<const STANDARD: bool> NativeProbes<STANDARD> {
    #[inline(always)]
    pub(crate) fn new(p: &crate::filter::Parts<'_>) -> NativeProbes<STANDARD> {
        NativeProbes {
            geometry: p.geometry,
            expander: p.expander,
        }
    }
}

impl<W: Coeff, const STANDARD: bool> Probes<W> for NativeProbes<STANDARD> {
    const RESULT: bool = STANDARD;
    #[inline(always)]
    fn probe(&self, hash: u64) -> Probe<W> {
        let (start, c, expected, mask) = self.expander.expand_masked::<W, STANDARD>(hash);
        probe_for(&self.geometry, start, c, expected, mask)
    }
    #[inline(always)]
    fn max_columns(&self) -> usize {
        self.geometry.max_columns()
    }
    #[inline(always)]
    fn native(&self) -> Option<(&Geometry, &Expander)> {
        Some((&self.geometry, &self.expander))
    }
}

/// ICML index math for an equation `c · Z[start..start + w] = expected` of
/// a non-empty geometry (`start < num_starts`); `mask` has the low bits of
/// the start block's columns set (callers have it at hand already).
#[inline(always)]
pub(crate) fn probe_for<W: Coeff>(
    g: &Geometry,
    start: u64,
    c: W,
    expected: u64,
    mask: u64,
) -> Probe<W> {
    let block = (start / u64::from(W::BITS)) as usize;
    let shift = (start % u64::from(W::BITS)) as u32;
    let upper = block >= g.upper_start_block;
    let columns = g.lower_columns as usize + usize::from(upper);
    let lo_word = block * g.lower_columns as usize
        + if upper {
            block - g.upper_start_block
        } else {
            0
        };
    let hi_word = if block + 1 < g.num_blocks {
        lo_word + columns
    } else {
        lo_word
    };
    Probe {
        lo_word,
        hi_word,
        c_lo: c << shift,
        // `c >> (w - shift)` without an out-of-range shift when shift is 0.
        c_hi: (c >> 1) >> (W::BITS - 1 - shift),
        expected,
        mask,
    }
}

/// Result bit of one column.
#[inline(always)]
pub(crate) fn column_bit<W: Coeff>(lo: W, hi: W, p: &Probe<W>) -> u64 {
    ((lo & p.c_lo) ^ (hi & p.c_hi)).parity()
}

/// Scalar evaluation of all columns, stopping at the first mismatch.
///
/// A word outside `payload` (impossible for a validated geometry) answers
/// "maybe present": a filter must never turn a bug into a false negative.
#[inline(always)]
pub(crate) fn matches<W: Coeff>(payload: &[u8], p: &Probe<W>) -> bool {
    for j in 0..p.columns() {
        let (Some(lo), Some(hi)) = (
            W::read_word(payload, p.lo_word + j),
            W::read_word(payload, p.hi_word + j),
        ) else {
            return true;
        };
        if column_bit(lo, hi, p) != (p.expected >> j) & 1 {
            return false;
        }
    }
    true
}
