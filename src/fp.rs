//! False-positive math: the rate a filter's columns give, and the extra
//! rate a Homogeneous filter's solution adds, measured from its payload.
//!
//! Integer and fixed point only (no FPU in the core).
//!
//! # Homogeneous excess
//!
//! A Homogeneous filter stores a random solution `Z` of `A·Z = 0`, one
//! column at a time. A non-member whose window starts at slot `s` matches
//! column `j` when `c · Z_j[s..s+w] = 0`. If the projection of the
//! solution space onto the window `[s, s+w)` has dimension `d_s`, a random
//! coefficient row matches every column with probability about
//! `2^-r + 2^-d_s` (paper section 4). Where the ribbon is locally
//! overloaded, `d_s` is small (0 in stretches where the only solution is
//! zero, which match every query), and that second term is the excess this
//! module measures.
//!
//! The measurement: for each start `s` and each column `j`, the window
//! `Z_j[s..s+w]` is zero with probability exactly `2^-d_s`, and so is the
//! xor of the windows of any two columns. Counting the zero windows of
//! single columns and of pairs over all starts therefore estimates
//! `sum_s 2^-d_s` without bias. The count is cheap: for block `b`, the
//! windows of its `w` starts are the `w`-bit slices of the concatenation
//! of block `b+1`'s word and block `b`'s word, so the zero ones are those
//! between the leading zeros of the low word and the trailing zeros of the
//! high word: a leading- and a trailing-zero count per column and per pair
//! of columns, for a block of `w` starts.
//!
//! Measured against the exact rate of the same filters (the rank of every
//! start's `r` window vectors, `examples/calibrate.rs excess`), the
//! estimate follows the exact excess within about 1-2 % of the column rate
//! for excesses up to 20 % (60 key sets of 10^6 keys per setting; see
//! `examples/calibrate.rs`).

use crate::layout::{Geometry, Width};
use crate::word::Word;

/// Parts per trillion in one.
const PPT: u128 = 1_000_000_000_000;
/// Parts per million in one.
const PPM: u128 = 1_000_000;

/// Weights of the starts in the lower and upper blocks (uniform draws, plus
/// the smash clamping onto the first and last start) and their total.
fn start_weights(g: &Geometry) -> (u128, u128) {
    let starts = u128::from(g.num_starts());
    let smash = u128::from(g.kind.smash(g.width));
    let lower_starts = u128::from(g.upper_start_slot()).min(starts);
    let mut lower = lower_starts;
    let mut upper = starts - lower_starts;
    // The first start gets `smash` extra draws, the last start too.
    if lower_starts > 0 {
        lower += smash;
    } else {
        upper += smash;
    }
    if lower_starts == starts {
        lower += smash;
    } else {
        upper += smash;
    }
    (lower, upper)
}

/// Whether the columns' FP rate is at most `den / num`.
pub(crate) fn columns_fp_at_most(g: &Geometry, num: u128, den: u128) -> bool {
    if g.num_blocks == 0 {
        return true;
    }
    let (lower, upper) = start_weights(g);
    // sum w_x 2^-c_x / W <= den / num, scaled by 2^(lc + 1).
    let lc = g.lower_columns;
    let scaled = lower * 2 + upper;
    let lhs = num.saturating_mul(scaled);
    let rhs = shl_saturating(den.saturating_mul(lower + upper), lc + 1);
    lhs <= rhs
}

/// FP rate of the columns in parts per trillion.
pub(crate) fn column_fp_ppt(g: &Geometry) -> u64 {
    if g.num_blocks == 0 {
        return 0;
    }
    let (lower, upper) = start_weights(g);
    let total = lower + upper;
    let one = PPT << 64;
    let lc = g.lower_columns;
    let share = |columns: u32, weight: u128| {
        (one >> columns)
            .checked_div(total)
            .unwrap_or(0)
            .saturating_mul(weight)
    };
    let lower_part = share(lc, lower);
    let upper_part = if upper > 0 { share(lc + 1, upper) } else { 0 };
    ((lower_part + upper_part) >> 64) as u64
}

/// `x << shift`, or `u128::MAX` if bits would be lost.
fn shl_saturating(x: u128, shift: u32) -> u128 {
    if x == 0 {
        0
    } else if shift >= x.leading_zeros() {
        u128::MAX
    } else {
        x << shift
    }
}

/// The Homogeneous excess of a solution: `sum_s 2^-d_s` over the starts,
/// relative to the columns' `sum_s 2^-c_s`, in parts per million
/// (saturating). The filter's FP rate is about the column rate times
/// `1 + excess / 10^6`. `payload` holds the ICML words of `g`.
///
/// Meaningful for Homogeneous filters only: a Standard filter's result bits
/// make its rate exactly the columns' whatever its solution looks like.
pub(crate) fn homogeneous_excess_ppm(g: &Geometry, payload: &[u8]) -> u64 {
    match g.width {
        Width::W64 => excess_ppm::<u64>(g, payload),
        Width::W128 => excess_ppm::<u128>(g, payload),
    }
}

fn excess_ppm<W: Word>(g: &Geometry, payload: &[u8]) -> u64 {
    if g.num_blocks == 0 {
        return 0;
    }
    let zeros = zero_windows::<W>(g, payload);
    let (lower, upper) = start_weights(g);
    let lc = g.lower_columns;
    // Scaled by 2^(lc + 1): each zero window of a block with c columns
    // stands for 2^-d_s / (subsets counted), against 2^-c per start.
    let excess = |zeros: u128, columns: u32, shift: u32| -> u128 {
        match subsets(columns) {
            0 => 0,
            n => shl_saturating(zeros.saturating_mul(PPM), shift) / n,
        }
    };
    let measured = excess(zeros[0], lc, lc + 1).saturating_add(excess(zeros[1], lc + 1, lc + 1));
    let planned = lower * 2 + upper;
    let ppm = measured.checked_div(planned).unwrap_or(0);
    u64::try_from(ppm).unwrap_or(u64::MAX)
}

/// Single columns and pairs of columns: the subsets whose zero windows are
/// counted for a block of `columns` columns.
fn subsets(columns: u32) -> u128 {
    let c = u128::from(columns);
    c * (c + 1) / 2
}

/// Zero windows of single columns and of pairs of columns, summed over the
/// lower blocks (`[0]`) and the upper blocks (`[1]`).
fn zero_windows<W: Word>(g: &Geometry, payload: &[u8]) -> [u128; 2] {
    let w = W::BITS as usize;
    let starts = g.num_starts();
    let mut zeros = [0u128; 2];
    let mut low = [W::ZERO; 64];
    let mut high = [W::ZERO; 64];
    for block in 0..g.num_blocks {
        let columns = (g.block_columns(block) as usize).min(64);
        // Starts in this block: `w`, except one in the last block.
        let offsets = starts.saturating_sub((block * w) as u64).min(w as u64) as u32;
        let first = g.block_word_offset(block);
        let next = (block + 1 < g.num_blocks).then(|| g.block_word_offset(block + 1));
        for (j, (lo, hi)) in low
            .iter_mut()
            .zip(high.iter_mut())
            .take(columns)
            .enumerate()
        {
            *lo = W::read_word(payload, first + j).unwrap_or(W::ZERO);
            *hi = next
                .and_then(|at| W::read_word(payload, at + j))
                .unwrap_or(W::ZERO);
        }
        let mut count = 0u64;
        for j in 0..columns {
            let (lo, hi) = (low[j], high[j]);
            count += u64::from(zero_offsets(lo, hi, offsets));
            for k in j + 1..columns {
                count += u64::from(zero_offsets(lo ^ low[k], hi ^ high[k], offsets));
            }
        }
        zeros[usize::from(block >= g.upper_start_block)] += u128::from(count);
    }
    zeros
}

/// Offsets `o < offsets` at which bits `[o, o + w)` of `hi:lo` are all zero:
/// `lo`'s bits from `o` up and `hi`'s bits below `o` must be zero, so `o`
/// runs from `w - leading_zeros(lo)` to `trailing_zeros(hi)`.
#[inline(always)]
fn zero_offsets<W: Word>(lo: W, hi: W, offsets: u32) -> u32 {
    let from = W::BITS - lo.leading_zeros();
    let end = (hi.trailing_zeros() + 1).min(offsets);
    end.saturating_sub(from)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layout::Kind;

    /// Zero windows counted one start at a time.
    fn zero_offsets_naive(lo: u64, hi: u64, offsets: u32) -> u32 {
        let both = u128::from(lo) | (u128::from(hi) << 64);
        (0..offsets).filter(|&o| (both >> o) as u64 == 0).count() as u32
    }

    #[test]
    fn zero_offsets_match_a_window_by_window_count() {
        let words = [
            0u64,
            1,
            1 << 63,
            u64::MAX,
            0xff00,
            0x00ff_0000_0000_0000,
            0x8000_0000_0000_0001,
        ];
        for &lo in &words {
            for &hi in &words {
                for offsets in [0, 1, 2, 17, 64] {
                    assert_eq!(
                        zero_offsets(lo, hi, offsets),
                        zero_offsets_naive(lo, hi, offsets),
                        "{lo:#x} {hi:#x} {offsets}"
                    );
                }
            }
        }
    }

    #[test]
    fn an_all_zero_solution_is_all_excess() {
        // Every window of every column is zero: each start matches every
        // query (rate 1), 2^c times the column rate.
        for (width, lower) in [(Width::W64, 3), (Width::W128, 7)] {
            let g = Geometry::new(Kind::Homogeneous, width, 10, lower, 4).unwrap();
            let payload = [0u8; 4096];
            let ppm = homogeneous_excess_ppm(&g, &payload[..g.payload_bytes()]);
            let (l, u) = start_weights(&g);
            // sum over starts of 1, relative to sum of 2^-c.
            let expect = (l + u) * PPM * (1 << (lower + 1)) / (2 * l + u);
            assert_eq!(u128::from(ppm), expect, "{width:?}");
        }
    }

    #[test]
    fn distinct_random_columns_have_no_excess() {
        let g = Geometry::new(Kind::Homogeneous, Width::W64, 50, 8, 50).unwrap();
        let mut payload = [0u8; 50 * 8 * 8];
        let mut x = 0x1234_5678_9abc_def1u64;
        for b in payload.iter_mut() {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            *b = x as u8;
        }
        assert_eq!(homogeneous_excess_ppm(&g, &payload), 0);
    }
}
