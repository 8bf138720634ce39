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

/// Solves the banded system in `rows` and writes the ICML payload.
/// `payload.len()` must be `g.payload_bytes()`.
pub(crate) fn back_substitute<W: Word>(
    g: &Geometry,
    free: FreeRows,
    rows: Rows<'_>,
    payload: &mut [u8],
) {
    let w = W::BITS as usize;
    let mut state = [W::ZERO; 64];
    for block in (0..g.num_blocks).rev() {
        // Lower blocks need only their own columns: the extra column's values
        // in lower slots are never stored or read.
        let columns = (g.block_columns(block) as usize).min(64);
        for row in (block * w..block * w + w).rev() {
            let c: W = rows.coeff(row);
            if c.is_zero() {
                let bits = free.bits(row as u64);
                for (j, s) in state.iter_mut().take(columns).enumerate() {
                    *s = (*s << 1) | W::from_bit(bits >> j);
                }
            } else {
                let bits = rows.result::<W>(row);
                for (j, s) in state.iter_mut().take(columns).enumerate() {
                    let shifted = *s << 1;
                    *s = shifted | W::from_bit((c & shifted).parity() ^ (bits >> j));
                }
            }
        }
        let first = g.block_word_offset(block);
        for (j, s) in state.iter().take(columns).enumerate() {
            s.write_word(payload, first + j);
        }
    }
}
