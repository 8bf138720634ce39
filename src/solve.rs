//! Back-substitution into ICML words (scalar reference).
//!
//! Rows are solved from the last slot to the first. Each column keeps one
//! `w`-bit state word whose bit `k` holds the solution of slot `i + k` for
//! the row `i` being solved: shift the state left by one, take the parity of
//! `coefficients & state`, xor the result bit, and set it as bit 0. After the
//! first row of a block the state words are exactly that block's ICML words.

use crate::hash::FreeRows;
use crate::layout::Geometry;
use crate::word::{Rows, Word};

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hash::FreeRows;
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
            let stride = width.bits() as usize / 64 + 1;
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
