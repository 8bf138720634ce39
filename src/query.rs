//! Scalar query: the reference every SIMD kernel is checked against.

use crate::hash::{Coeff, Expander};
use crate::layout::Geometry;

/// Where a key's query reads: the first word of its start block, the first
/// word of the next block (the same block when the start is the last
/// possible one, where the offset is 0 and those words are shifted out), the
/// number of columns, and the bit offset of the start in its block.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Probe {
    pub(crate) lo_word: usize,
    pub(crate) hi_word: usize,
    pub(crate) columns: usize,
    pub(crate) shift: u32,
}

/// ICML index math for a start slot: the one place every backend uses.
#[inline(always)]
pub(crate) fn probe(g: &Geometry, w: u32, start: u64) -> Probe {
    let block = (start / u64::from(w)) as usize;
    let shift = (start % u64::from(w)) as u32;
    let columns = g.block_columns(block) as usize;
    let lo_word = g.block_word_offset(block);
    let hi_word = if block + 1 < g.num_blocks {
        lo_word + columns
    } else {
        lo_word
    };
    Probe {
        lo_word,
        hi_word,
        columns,
        shift,
    }
}

/// Combines the words of the start block and the next one into the `w` bits
/// starting at the start slot. `(hi << 1) << (w - 1 - shift)` is `hi << (w -
/// shift)` without an out-of-range shift when `shift` is 0.
#[inline(always)]
pub(crate) fn window<W: Coeff>(lo: W, hi: W, shift: u32) -> W {
    (lo >> shift) | ((hi << 1) << (W::BITS - 1 - shift))
}

/// Whether `hash` may be in the filter. `payload` holds the ICML words of a
/// validated, non-empty geometry.
#[inline(always)]
pub(crate) fn contains<W: Coeff>(g: &Geometry, ex: &Expander, payload: &[u8], hash: u64) -> bool {
    let (start, c, expected) = ex.expand::<W>(hash);
    let p = probe(g, W::BITS, start);
    let bytes = W::BYTES;
    let lo = &payload[p.lo_word * bytes..(p.lo_word + p.columns) * bytes];
    let hi = &payload[p.hi_word * bytes..(p.hi_word + p.columns) * bytes];
    for (j, (lo, hi)) in lo
        .chunks_exact(bytes)
        .zip(hi.chunks_exact(bytes))
        .enumerate()
    {
        let z = window(W::read_le(lo), W::read_le(hi), p.shift);
        if (z & c).parity() != (expected >> j) & 1 {
            return false;
        }
    }
    true
}
