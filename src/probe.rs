//! Probe math shared by every backend: from a key hash to the words a query
//! reads and the bits it compares (the scalar query in `arch/scalar.rs` is
//! the reference the SIMD kernels are checked against).
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
///
/// # Safety
/// Kernels load without bounds checks on the word of this trait: every
/// probe `probe` returns must read only words inside the payload of the
/// validated geometry it was made for (`lo_word` and `hi_word` plus
/// [`Probe::columns`] words, and plus `max_columns` words where a kernel
/// masks lanes past the key's columns).
pub(crate) unsafe trait Probes<W>: Sized {
    /// What the kernel table's entry points receive, from which they make
    /// the probes (one type for both kinds of native filter, so that one
    /// function pointer type serves every shape).
    type Source;
    /// The probes of `source`.
    fn new(source: &Self::Source) -> Self;
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

/// This crate's hashing ([`Expander`]) over a geometry. The filter's kind
/// is fixed at compile time: `STANDARD` (Standard or StandardSmash) so that
/// Homogeneous probes skip the result bits, `SMASH` (StandardSmash) so
/// that the other kinds skip the start clamping.
#[derive(Clone, Copy, Debug)]
pub(crate) struct NativeProbes<const STANDARD: bool, const SMASH: bool> {
    geometry: Geometry,
    expander: Expander,
}

/// What the native kernels need of a filter besides its payload: the
/// geometry and the hash expansion.
///
/// Plain bytes: `#[repr(C)]` with no padding anywhere (asserted below), so
/// that the C ABI can keep one in a caller's struct, check it as words and
/// hand the kernels a reference to it, as a Rust view does with its own
/// ([`Parts::WORDS`]).
#[derive(Clone, Copy, Debug)]
#[repr(C)]
pub(crate) struct Parts {
    pub(crate) geometry: Geometry,
    pub(crate) expander: Expander,
}

impl Parts {
    /// The 8-byte words a [`Parts`] fills (the last one partly on 32-bit
    /// targets).
    #[cfg(feature = "capi")]
    pub(crate) const WORDS: usize = core::mem::size_of::<Parts>().div_ceil(8);
}

// No padding: every byte of a `Parts` is a field's (so reading one as
// words reads initialized bytes only).
const _: () = {
    use crate::layout::{ColumnMasks, Kind, Width};
    use core::mem::{align_of, size_of};
    assert!(size_of::<Kind>() == 2 && size_of::<Width>() == 2);
    assert!(size_of::<Geometry>() == 2 * size_of::<usize>() + 4 + 2 + 2);
    assert!(size_of::<ColumnMasks>() == 24);
    assert!(size_of::<Expander>() == 24 + 24 + 1 + 7);
    assert!(size_of::<Parts>() == size_of::<Geometry>() + size_of::<Expander>());
    assert!(align_of::<Parts>() <= 8);
};

// SAFETY: `probe_for` keeps every probe inside a validated geometry's
// payload: starts are below `num_starts`, so blocks are below `num_blocks`,
// and `hi_word` falls back to `lo_word` for the last block.
unsafe impl<W: Coeff, const STANDARD: bool, const SMASH: bool> Probes<W>
    for NativeProbes<STANDARD, SMASH>
{
    type Source = Parts;
    #[inline(always)]
    fn new(p: &Parts) -> NativeProbes<STANDARD, SMASH> {
        NativeProbes {
            geometry: p.geometry,
            expander: p.expander,
        }
    }
    const RESULT: bool = STANDARD;
    #[inline(always)]
    fn probe(&self, hash: u64) -> Probe<W> {
        let (start, c, expected, mask) = self.expander.expand_masked::<W, STANDARD, SMASH>(hash);
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
    let lo_word = g.block_word_offset(block);
    let hi_word = if block + 1 < g.num_blocks {
        lo_word + g.block_columns(block) as usize
    } else {
        lo_word
    };
    // `c >> (w - shift)`, without an out-of-range shift when shift is 0.
    let (c_lo, c_hi) = c.split_window(shift);
    Probe {
        lo_word,
        hi_word,
        c_lo,
        c_hi,
        expected,
        mask,
    }
}
