//! The scalar kernels: the query, the evaluation of a retrieval
//! structure's values and back-substitution every backend is checked
//! against, with no special instructions. Always available.
//!
//! Back-substitution solves rows from the last slot to the first. Each
//! column keeps one `w`-bit state word whose bit `k` holds the solution of
//! slot `i + k` for the row `i` being solved: shift the state left by one,
//! take the parity of `coefficients & state`, xor the result bit, and set it
//! as bit 0. After the first row of a block the state words are exactly
//! that block's ICML words.

use super::generic::{self, QueryKernel};
use crate::bumped_layout::{BumpedKey, ThresholdsRef};
use crate::hash::{Coeff, FreeRows};
use crate::layout::Geometry;
use crate::probe::{Parts, Probe, Probes};
use crate::word::{Rows, Word};

/// The scalar kernel: every column of a key without early exit (a data-
/// dependent exit mispredicts on half the queries), no prefetch.
pub(crate) struct Scalar;

/// The result bits of columns `from..to` of `p` (column `j` in bit `j`),
/// or `None` when a word lies outside `payload` (impossible for a
/// validated geometry; callers answer "maybe present" then: a filter must
/// never turn a bug into a false negative). Column `j`'s bit is
/// `parity((lo_j & c_lo) ^ (hi_j & c_hi))` (see `src/probe.rs`).
#[inline(always)]
pub(crate) fn column_bits<W: Coeff>(
    payload: &[u8],
    p: &Probe<W>,
    from: usize,
    to: usize,
) -> Option<u64> {
    // Written for unoptimized builds too, where this is the query
    // (`Backend::detect` picks scalar code there): a `while` loop, words
    // read by `Word::read_chunked` and columns by the concrete type's
    // operators take no function call per column; optimized, the code is
    // the same as a `for` loop over `Word::read_word` with `?`.
    let words = W::chunks(payload);
    let mut bits = 0u64;
    let mut j = from;
    while j < to {
        let (Some(lo), Some(hi)) = (
            W::read_chunked(words, p.lo_word + j),
            W::read_chunked(words, p.hi_word + j),
        ) else {
            return None;
        };
        bits |= W::select_parity(lo, p.c_lo, hi, p.c_hi) << (j & 63);
        j += 1;
    }
    Some(bits)
}

/// Whether column bits computed for `p` match what the probe expects.
#[inline(always)]
pub(crate) fn bits_match<W, P: Probes<W>>(bits: Option<u64>, p: &Probe<W>) -> bool {
    match bits {
        Some(bits) => bits == if P::RESULT { p.expected } else { 0 },
        None => true,
    }
}

/// Whether every column of `p` matches: the scalar evaluation of one key.
#[inline(always)]
fn key_matches<W: Coeff, P: Probes<W>>(payload: &[u8], p: &Probe<W>) -> bool {
    bits_match::<W, P>(column_bits(payload, p, 0, p.columns()), p)
}

/// A key's value from column bits computed for `p` (column `j` in bit
/// `j`, any bits past its columns): the bits xor its expected bits (for
/// probes with result bits), masked to its columns; 0 for `None` (a word
/// outside the payload, impossible for a validated geometry). Every
/// kernel's [`QueryKernel::column_values`] ends here.
#[inline(always)]
pub(crate) fn bits_value<W, P: Probes<W>>(bits: Option<u64>, p: &Probe<W>) -> u64 {
    match bits {
        Some(bits) => (bits ^ if P::RESULT { p.expected } else { 0 }) & p.mask,
        None => 0,
    }
}

/// The value of `p`'s columns (column `j` in bit `j`): the scalar
/// evaluation of one key of a retrieval structure, the definition every
/// kernel's [`QueryKernel::column_values`] matches.
#[inline(always)]
pub(crate) fn key_value<W: Coeff, P: Probes<W>>(payload: &[u8], p: &Probe<W>) -> u64 {
    bits_value::<W, P>(column_bits(payload, p, 0, p.columns()), p)
}

impl<W: Coeff> QueryKernel<W> for Scalar {
    #[inline(always)]
    unsafe fn prefetch(_payload: &[u8], _p: &Probe<W>, _max_columns: usize) {}

    #[inline(always)]
    unsafe fn matches<P: Probes<W>>(payload: &[u8], p: &Probe<W>, _max_columns: usize) -> bool {
        key_matches::<W, P>(payload, p)
    }

    #[inline(always)]
    unsafe fn column_values<P: Probes<W>>(
        payload: &[u8],
        p: &Probe<W>,
        _max_columns: usize,
    ) -> u64 {
        key_value::<W, P>(payload, p)
    }
}

/// Single query of a non-empty filter.
#[inline(never)]
pub(crate) fn contains<W: Coeff, P: Probes<W>>(
    source: &P::Source,
    payload: &[u8],
    hash: u64,
) -> bool {
    key_matches::<W, P>(payload, &P::new(source).probe(hash))
}

/// Batch query of a non-empty filter; `out.len() == hashes.len()`: the
/// ring of [`generic::contains_batch`]. With no prefetch, keys expanded
/// ahead still let the CPU overlap their loads (one key at a time was up
/// to 1.3 times slower at 10^7 keys for w = 128); 32-bit targets answer
/// one key at a time there and keep the ring's stack.
#[inline(never)]
pub(crate) fn contains_batch<W: Coeff, P: Probes<W>>(
    source: &P::Source,
    payload: &[u8],
    hashes: &[u64],
    out: &mut [bool],
) {
    // SAFETY: the scalar kernel uses no special instructions.
    unsafe { generic::contains_batch::<W, P, Scalar>(source, payload, hashes, out) };
}

/// The value of `hash` in a non-empty retrieval structure (column `j` in
/// bit `j`).
#[inline(never)]
pub(crate) fn get<W: Coeff, P: Probes<W>>(source: &P::Source, payload: &[u8], hash: u64) -> u64 {
    key_value::<W, P>(payload, &P::new(source).probe(hash))
}

/// The values of `hashes` in a non-empty retrieval structure;
/// `out.len() == hashes.len()`. As [`contains_batch`]: the ring of
/// [`generic::get_batch`].
#[inline(never)]
pub(crate) fn get_batch<W: Coeff, P: Probes<W>>(
    source: &P::Source,
    payload: &[u8],
    hashes: &[u64],
    out: &mut [u64],
) {
    // SAFETY: the scalar kernel uses no special instructions.
    unsafe { generic::get_batch::<W, P, Scalar>(source, payload, hashes, out) };
}

/// Columns solved per pass. Each keeps a `w`-bit state word, so 64 of
/// them take 1 KiB of stack for w = 128; 32-bit targets (small stacks)
/// solve 8 at a time and read the rows again for each further 8 (a single
/// pass up to 8 bits per key, an FP rate down to 0.4 %). The columns are independent, so the
/// bytes are the same either way.
const STATE_COLUMNS: usize = if cfg!(target_pointer_width = "64") {
    64
} else {
    8
};

/// Solves the banded system in `rows` and writes the ICML payload.
/// `payload.len()` must be `g.payload_bytes()`.
pub(crate) fn back_substitute<W: Word>(
    g: &Geometry,
    free: FreeRows,
    rows: Rows<'_>,
    payload: &mut [u8],
) {
    back_substitute_in_passes::<W, STATE_COLUMNS>(g, free, rows, payload);
}

/// [`back_substitute`], `GROUP` columns per pass.
fn back_substitute_in_passes<W: Word, const GROUP: usize>(
    g: &Geometry,
    free: FreeRows,
    rows: Rows<'_>,
    payload: &mut [u8],
) {
    let columns = g.max_columns().min(64);
    let mut first = 0;
    while first < columns {
        solve_columns::<W, GROUP>(g, free, rows, payload, first);
        first += GROUP;
    }
}

/// Solves columns `first..first + GROUP` (those that exist).
#[inline(always)]
fn solve_columns<W: Word, const GROUP: usize>(
    g: &Geometry,
    free: FreeRows,
    rows: Rows<'_>,
    payload: &mut [u8],
    first: usize,
) {
    let w = W::BITS as usize;
    let mut state = [W::ZERO; GROUP];
    for block in (0..g.num_blocks).rev() {
        // Lower blocks need only their own columns: the extra column's values
        // in lower slots are never stored or read.
        let columns = (g.block_columns(block) as usize)
            .min(64)
            .saturating_sub(first)
            .min(GROUP);
        for row in (block * w..block * w + w).rev() {
            let c: W = rows.coeff(row);
            if c.is_zero() {
                let bits = free.bits(row as u64) >> first;
                for (j, s) in state.iter_mut().take(columns).enumerate() {
                    *s = (*s << 1) | W::from_bit(bits >> j);
                }
            } else {
                let bits = rows.result::<W>(row) >> first;
                for (j, s) in state.iter_mut().take(columns).enumerate() {
                    let shifted = *s << 1;
                    *s = shifted | W::from_bit((c & shifted).parity() ^ (bits >> j));
                }
            }
        }
        let at = g.block_word_offset(block) + first;
        for (j, s) in state.iter().take(columns).enumerate() {
            s.write_word(payload, at + j);
        }
    }
}

/// Scans `hashes` for the keys a Bumped filter's first layer bumped: each
/// goes to `out` as (what it carries on, its index in `hashes` plus
/// `first`), in order, until `out` is full. Returns how many hashes were
/// scanned and how many pairs written. Every key's pair is written and
/// only a bumped one kept (the verdict is
/// `bumped_layout::ThresholdsRef::bumped_flag`), so that the scan does
/// not branch on a flag that is set for about 1 key in 12 at random.
pub(crate) fn scan_bumped(
    parts: &Parts,
    thresholds: &ThresholdsRef<'_>,
    hashes: &[u64],
    first: usize,
    out: &mut [BumpedKey],
) -> (usize, usize) {
    let mut written = 0;
    for (i, &hash) in hashes.iter().enumerate() {
        let Some(slot) = out.get_mut(written) else {
            return (i, written);
        };
        let (x, start) = parts.expander.remix_and_start(hash);
        let bumped = thresholds.bumped_flag(start);
        *slot = BumpedKey { x, at: first + i };
        written += usize::from(bumped);
    }
    (hashes.len(), written)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layout::{Kind, Width};
    use std::vec;
    use std::vec::Vec;

    /// Solving in passes of 8 columns writes the same bytes as one pass
    /// of 64, for widths and column counts that need several passes.
    #[test]
    fn passes_of_columns_give_the_same_bytes() {
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for (width, lower, upper) in [
            (Width::W64, 40, 2),
            (Width::W128, 17, 1),
            (Width::W64, 63, 3),
        ] {
            let g = Geometry::new(Kind::Standard, width, 4, lower, upper).unwrap();
            let stride = Rows::stride_for(width, true);
            let words: Vec<u64> = (0..g.num_slots() * stride).map(|_| next()).collect();
            let rows = Rows::new_for(width, &words, true);
            let free = FreeRows::Pseudorandom(next());
            let mut one = vec![0u8; g.payload_bytes()];
            let mut passes = vec![0u8; g.payload_bytes()];
            match width {
                Width::W64 => {
                    back_substitute_in_passes::<u64, 64>(&g, free, rows, &mut one);
                    back_substitute_in_passes::<u64, 8>(&g, free, rows, &mut passes);
                }
                Width::W128 => {
                    back_substitute_in_passes::<u128, 64>(&g, free, rows, &mut one);
                    back_substitute_in_passes::<u128, 8>(&g, free, rows, &mut passes);
                }
            }
            assert!(one.iter().any(|&b| b != 0));
            assert_eq!(one, passes, "{width:?} {lower} columns");
        }
    }
}
