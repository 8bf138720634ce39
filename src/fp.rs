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
//! The exact rate of the start `s` is `2^-rank` of the `r` column windows
//! `Z_j[s..s+w]`; computing that for every start costs `r^2` per start,
//! far more than a build. [`measure`] combines two cheap views instead, in
//! one pass over the payload: the exact rate at sampled starts (the rank of
//! a block's own words, refined where it is deficient), and the zero
//! windows of single columns over every start (a window is zero with
//! probability `2^-d_s`, and the zero ones of a block are found with one
//! trailing-zero count and one shift per column). The pass costs 1-3 % of
//! a build at 4-16 bits per key. On 300 key sets of 10^6 keys (w = 64, 7.7
//! bits per key, `examples/calibrate.rs homogeneous --seeds 1 --list`) the
//! measurement was never more than 0.018 of the column rate below the
//! exact rate of the filter, nor more than 0.036 above it.

use crate::arith::div;
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

impl Geometry {
    /// FP rate of the columns in parts per trillion (in its own frame: see
    /// [`excess_of`]).
    #[inline(never)]
    pub(crate) fn column_fp_ppt(&self) -> u64 {
        let g = self;
        if g.num_blocks == 0 {
            return 0;
        }
        let (lower, upper) = start_weights(g);
        let total = lower + upper;
        let one = PPT << 64;
        let lc = g.lower_columns;
        let share = |columns: u32, weight: u128| div(one >> columns, total).saturating_mul(weight);
        let lower_part = share(lc, lower);
        let upper_part = if upper > 0 { share(lc + 1, upper) } else { 0 };
        ((lower_part + upper_part) >> 64) as u64
    }
}

impl Geometry {
    /// The columns' FP rate in units of 2^-64, rounded down (saturating
    /// at a rate of one, which only a block of no columns gives): exact
    /// where [`Geometry::column_fp_ppt`] rounds rates below 10^-12 to 0.
    #[inline(never)]
    pub(crate) fn column_fp_scaled(&self) -> u64 {
        let g = self;
        if g.num_blocks == 0 {
            return 0;
        }
        // (lower * 2^-lc + upper * 2^-(lc + 1)) / total
        //   = (2 * lower + upper) * 2^(63 - lc) / total  (in 2^-64 units).
        let (lower, upper) = start_weights(g);
        let total = lower + upper;
        let weighted = lower * 2 + upper;
        let scaled = match 63u32.checked_sub(g.lower_columns) {
            Some(shift) => div(shl_saturating(weighted, shift), total),
            // 64 columns in every block: 2^-64 exactly, one unit.
            None => div(weighted, total * 2),
        };
        u64::try_from(scaled).unwrap_or(u64::MAX)
    }
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

/// Inlined into [`homogeneous_excess_ppm`]: a frame of its own under it
/// held only the measurement's result, which [`measure`]'s frame (one
/// per width) holds too.
#[inline(always)]
fn excess_ppm<W: Word>(g: &Geometry, payload: &[u8]) -> u64 {
    if g.num_blocks == 0 {
        return 0;
    }
    excess_of(g, &measure::<W>(g, payload))
}

/// The excess in ppm that measurement `m` of `g`'s payload finds. Not
/// inlined, like [`measure`]: 128-bit arithmetic takes many stack slots on
/// 32-bit targets, and a frame of its own keeps them off the measurement's
/// call chain.
#[inline(never)]
fn excess_of(g: &Geometry, m: &Measured) -> u64 {
    let (lower, upper) = start_weights(g);
    // Everything per start, scaled by 2^(lc + 1): the columns' rate is
    // 2 per lower start and 1 per upper start.
    let lc = g.lower_columns;
    let planned = lower * 2 + upper;
    let per_zero = |zeros: u128, columns: u32| -> u128 {
        div(shl_saturating(zeros, lc + 1), u128::from(columns))
    };
    let zero_excess =
        per_zero(m.zero_windows[0], lc).saturating_add(per_zero(m.zero_windows[1], lc + 1));
    let excess = zero_excess.max(m.rank_excess);
    let ppm = div(excess.saturating_mul(PPM), planned);
    u64::try_from(ppm).unwrap_or(u64::MAX)
}

/// The FP rate of a filter with `g`'s geometry and payload in parts per
/// trillion: the columns' rate, times one plus the Homogeneous excess.
pub(crate) fn estimated_fp_ppt(g: &Geometry, payload: &[u8]) -> u64 {
    let columns = g.column_fp_ppt();
    if g.kind.is_standard() {
        return columns;
    }
    scale_by_excess(columns, homogeneous_excess_ppm(g, payload))
}

/// [`estimated_fp_ppt`] in units of 2^-64 (see [`FpRate`]).
pub(crate) fn estimated_fp_scaled(g: &Geometry, payload: &[u8]) -> u64 {
    let columns = g.column_fp_scaled();
    if g.kind.is_standard() {
        return columns;
    }
    let excess = homogeneous_excess_ppm(g, payload);
    let rate = div(
        u128::from(columns).saturating_mul(PPM.saturating_add(u128::from(excess))),
        PPM,
    );
    u64::try_from(rate).unwrap_or(u64::MAX)
}

/// A false-positive rate: the share of non-members a filter answers yes
/// for, with accessors that name their unit.
///
/// Integer only: it holds the rate in units of 2^-64, so the rates of
/// filters of up to 64 columns (2^-64) are all distinct and none reads as
/// zero; only a filter of no keys has a rate of zero. Rates compare as
/// numbers (a smaller one is better), and print as "1 in N".
///
/// ```
/// use ribbon_kernel::{FpRate, Kind, Plan, Width};
///
/// let plan = Plan::for_fp_rate(Kind::Standard, Width::W128, 10_000, 256)?;
/// let rate = plan.column_fp_rate();
/// assert_eq!(rate.one_in(), Some(256)); // 8 columns: 2^-8 exactly
/// assert_eq!(rate.parts_per_million(), 3_906);
/// assert_eq!(rate.parts_per_trillion(), 3_906_250_000);
/// assert!(rate <= FpRate::from_one_in(200));
/// assert_eq!(rate.to_string(), "1 in 256");
/// # Ok::<(), ribbon_kernel::Error>(())
/// ```
#[derive(Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct FpRate {
    /// The rate times 2^64 (saturating at `u64::MAX` for a rate of one).
    scaled: u64,
}

/// 2^64, the rate one in [`FpRate`]'s units.
const ONE: u128 = 1 << 64;

impl FpRate {
    /// The rate zero: a filter of no keys, which matches nothing.
    pub const ZERO: FpRate = FpRate { scaled: 0 };

    /// The rate `1 / n` (to within 2^-64; `n` of 0 or 1 is the rate one).
    pub const fn from_one_in(n: u64) -> FpRate {
        let n = if n == 0 { 1 } else { n as u128 };
        FpRate::saturating((ONE + n / 2) / n)
    }

    /// The rate `ppt / 10^12` (at most one).
    pub const fn from_parts_per_trillion(ppt: u64) -> FpRate {
        const T: u128 = 1_000_000_000_000;
        let ppt = if ppt as u128 > T { T } else { ppt as u128 };
        FpRate::saturating((ppt * ONE + T / 2) / T)
    }

    /// A rate from units of 2^-64.
    pub(crate) const fn from_scaled(scaled: u64) -> FpRate {
        FpRate { scaled }
    }

    const fn saturating(scaled: u128) -> FpRate {
        FpRate {
            scaled: if scaled > u64::MAX as u128 {
                u64::MAX
            } else {
                scaled as u64
            },
        }
    }

    /// `N` such that the rate is 1 in `N`, rounded to the nearest whole
    /// number (`Some(256)` for 2^-8, `Some(133)` for 0.75 %); `None` for
    /// the rate zero.
    pub const fn one_in(&self) -> Option<u64> {
        if self.scaled == 0 {
            return None;
        }
        let x = self.scaled as u128;
        let n = (ONE + x / 2) / x;
        Some(if n > u64::MAX as u128 {
            u64::MAX
        } else {
            n as u64
        })
    }

    /// The rate in parts per trillion (10^-12), rounded to the nearest:
    /// the unit of the older `*_fp_ppt` accessors (which round down).
    pub const fn parts_per_trillion(&self) -> u64 {
        self.per(1_000_000_000_000)
    }

    /// The rate in parts per million (10^-6), rounded to the nearest
    /// (1 % is 10,000).
    pub const fn parts_per_million(&self) -> u64 {
        self.per(1_000_000)
    }

    /// The rate in units of 2^-64 (rounded down): the exact value this
    /// type holds.
    pub const fn per_2_pow_64(&self) -> u64 {
        self.scaled
    }

    /// The rate times `unit`, rounded to the nearest.
    const fn per(&self, unit: u64) -> u64 {
        ((self.scaled as u128 * unit as u128 + ONE / 2) >> 64) as u64
    }
}

impl core::fmt::Display for FpRate {
    /// "1 in N" (rounded), or "0" for the rate zero.
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self.one_in() {
            Some(n) => write!(f, "1 in {n}"),
            None => f.write_str("0"),
        }
    }
}

impl core::fmt::Debug for FpRate {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("FpRate")
            .field("one_in", &self.one_in())
            .field("parts_per_trillion", &self.parts_per_trillion())
            .finish()
    }
}

/// `rate * (1 + excess_ppm / 10^6)`, at most one, in its own frame (see
/// [`excess_of`]).
#[inline(never)]
fn scale_by_excess(rate_ppt: u64, excess_ppm: u64) -> u64 {
    let rate = div(
        u128::from(rate_ppt).saturating_mul(PPM.saturating_add(u128::from(excess_ppm))),
        PPM,
    );
    rate.min(PPT) as u64
}

/// What [`measure`] finds in a payload.
struct Measured {
    /// Zero windows of single columns, over the lower blocks (`[0]`) and
    /// the upper blocks (`[1]`).
    zero_windows: [u128; 2],
    /// The excess of the stretches whose sampled start has a deficient
    /// rank: the rate measured at starts [`REFINE_STEP`] apart, less the
    /// columns' rate, times the starts each stands for; scaled by
    /// `2^(lower_columns + 1)` (saturating).
    rank_excess: u128,
}

/// Blocks whose rank a measurement samples, at most (see [`measure`]).
const RANK_SAMPLES: usize = 2048;

/// Starts between the rank samples of a stretch found deficient.
const REFINE_STEP: usize = 8;

/// One pass over the payload, block by block, with two estimates of the
/// excess that fail in different places:
///
/// * zero windows of single columns ([`zero_offsets`]) see every start,
///   and find deep dips (`d_s` of a few bits) however short; but the
///   columns are fixed, so where a long stretch shares one shallow
///   projection (typically a small filter with few free slots) they are
///   too few samples of it and can miss it entirely;
/// * the rank of a block's `c` words is the exact rate of the block's
///   first start ([`rank`]). Every block of a small filter, and about
///   [`RANK_SAMPLES`] evenly spaced blocks of a large one, are sampled;
///   where a sample is deficient, the blocks it stands for are measured
///   every [`REFINE_STEP`] starts. This finds shallow stretches, which are
///   long, and does not charge a short deep dip to a whole group of
///   blocks; it can step over a short dip between samples.
///
/// Measured against the exact rate of every start (`examples/calibrate.rs
/// homogeneous`), the larger of the two follows it within about 1 % of the
/// column rate at 10^3 to 10^7 keys.
///
/// Its stack is that of [`window_rank`]: words are read from the payload
/// where they are used rather than copied block by block, so that builds
/// fit small stacks (`tests/embedded`).
#[inline(never)]
fn measure<W: Word>(g: &Geometry, payload: &[u8]) -> Measured {
    let mut m = Measured {
        zero_windows: [0; 2],
        rank_excess: 0,
    };
    let stride = g.num_blocks.div_ceil(RANK_SAMPLES).max(1);
    for block in 0..g.num_blocks {
        let columns = (g.block_columns(block) as usize).min(64);
        let zeros = block_zero_windows::<W>(g, payload, block, columns);
        m.zero_windows[usize::from(block >= g.upper_start_block)] += u128::from(zeros);
        if block % stride == 0
            && window_rank(columns, |column| word::<W>(g, payload, block, column)) < columns as u32
        {
            let group = block..(block + stride).min(g.num_blocks);
            let excess = refine::<W>(g, payload, group);
            m.rank_excess = m.rank_excess.saturating_add(excess);
        }
    }
    m
}

/// Zero windows of `block`'s first `columns` columns ([`zero_offsets`]).
#[inline(never)]
fn block_zero_windows<W: Word>(g: &Geometry, payload: &[u8], block: usize, columns: usize) -> u32 {
    let offsets = block_starts(g, block, W::BITS as usize);
    let mut zeros = 0u32;
    for column in 0..columns {
        zeros += column_zero_windows::<W>(g, payload, block, column, offsets);
    }
    zeros
}

/// Zero windows of `column` of `block` ([`zero_offsets`]). Out of line on
/// 32-bit targets: unrolled into [`block_zero_windows`], the 128-bit words
/// of several columns took 384 bytes of a Cortex-M4's stack.
#[cfg_attr(target_pointer_width = "32", inline(never))]
fn column_zero_windows<W: Word>(
    g: &Geometry,
    payload: &[u8],
    block: usize,
    column: usize,
    offsets: u32,
) -> u32 {
    let (lo, hi): (W, W) = (
        word(g, payload, block, column),
        word(g, payload, block + 1, column),
    );
    zero_offsets(lo, hi, offsets)
}

/// Starts in `block`: `w`, except one in the last block.
fn block_starts(g: &Geometry, block: usize, w: usize) -> u32 {
    g.num_starts()
        .saturating_sub(block.saturating_mul(w) as u64)
        .min(w as u64) as u32
}

/// Word `column` of `block` (zero past the last block or the payload).
#[inline(always)]
fn word<W: Word>(g: &Geometry, payload: &[u8], block: usize, column: usize) -> W {
    if block >= g.num_blocks {
        return W::ZERO;
    }
    let index = g.block_word_offset(block).saturating_add(column);
    W::read_word(payload, index).unwrap_or(W::ZERO)
}

/// The excess of `blocks` from the exact rate at every [`REFINE_STEP`]-th
/// start, scaled as [`Measured::rank_excess`].
#[inline(never)]
fn refine<W: Word>(g: &Geometry, payload: &[u8], blocks: core::ops::Range<usize>) -> u128 {
    let w = W::BITS as usize;
    let lc = g.lower_columns;
    let mut excess = 0u128;
    for block in blocks {
        let columns = (g.block_columns(block) as usize).min(64);
        let starts = block_starts(g, block, w) as usize;
        let planned = lc + 1 - columns as u32;
        for offset in (0..starts).step_by(REFINE_STEP) {
            let window = |column: usize| {
                let lo = word::<W>(g, payload, block, column);
                match offset as u32 {
                    0 => lo,
                    o => (lo >> o) | (word::<W>(g, payload, block + 1, column) << (W::BITS - o)),
                }
            };
            let rank = window_rank(columns, window);
            let weight = REFINE_STEP.min(starts - offset) as u32;
            excess = excess.saturating_add(rank_excess(weight, lc + 1 - rank, planned));
        }
    }
    excess
}

/// `weight` starts at `2^-rank` less the same at the planned rate, both
/// scaled by `2^(lc + 1)` (as `shift = lc + 1 - rank` and `planned`). In a
/// frame of its own: 128-bit shifts take stack slots on 32-bit targets,
/// and [`refine`] holds its frame while a rank is computed.
#[inline(never)]
fn rank_excess(weight: u32, shift: u32, planned: u32) -> u128 {
    let weight = u128::from(weight);
    shl_saturating(weight, shift) - shl_saturating(weight, planned)
}

/// The rank over GF(2) of the words `window(0..columns)` (at most 64 are
/// read). 64-bit targets copy them into one array and eliminate
/// ([`rank`]); 32-bit targets, whose stacks are small, eliminate the
/// transposed matrix instead ([`rank_transposed`]: a quarter of the stack
/// for w = 64, an eighth for w = 128, when there are at most 32 columns).
/// Both give the same rank, so the filter bytes are the same everywhere.
#[inline(always)]
fn window_rank<W: Word>(columns: usize, window: impl Fn(usize) -> W) -> u32 {
    if cfg!(target_pointer_width = "64") {
        rank_of_copies(columns, window)
    } else {
        rank_transposed(columns, window)
    }
}

/// [`rank`] of copies of the words, in a frame of its own.
#[inline(never)]
fn rank_of_copies<W: Word>(columns: usize, window: impl Fn(usize) -> W) -> u32 {
    let mut words = [W::ZERO; 64];
    let Some(words) = words.get_mut(..columns) else {
        return 0;
    };
    for (column, x) in words.iter_mut().enumerate() {
        *x = window(column);
    }
    rank(words)
}

/// The rank of the words `window(0..columns)` (`columns <= 64`) as that
/// of their transpose: bit position `i` of the words gives a vector of
/// `columns` bits (bit `j` from word `j`), several positions per pass over
/// the words, each reduced against a basis indexed by lowest set bit.
/// Stops at full rank, which random words reach within the first
/// `columns` positions. Up to 32 columns the basis is 32 words of 32 bits;
/// beyond, [`rank_transposed_wide`].
#[inline(always)]
fn rank_transposed<W: Word>(columns: usize, window: impl Fn(usize) -> W) -> u32 {
    if columns <= 32 {
        rank_transposed_u32(columns, window)
    } else {
        rank_transposed_wide(columns, window)
    }
}

/// [`rank_transposed`] up to 32 columns: a basis of 32 vectors of 32 bits,
/// eight positions per pass.
#[inline(never)]
fn rank_transposed_u32<W: Word>(columns: usize, window: impl Fn(usize) -> W) -> u32 {
    let columns = columns.min(32);
    let mut basis = [0u32; 32];
    let mut rank = 0;
    let mut first = 0;
    while first < W::BITS && rank < columns as u32 {
        for v in transposed_bits::<W, u32, 8>(columns, &window, first) {
            rank += u32::from(insert_u32(&mut basis, v));
        }
        first += 8;
    }
    rank
}

/// [`rank_transposed`] for 33 to 64 columns: the vectors are 64 bits, and
/// the basis is split by where a vector's lowest set bit lies. Pivots in
/// the low half keep the whole vector; pivots in the high half need only
/// the high half (their low half is zero after reduction): 384 bytes
/// rather than 512. Four positions per pass, which keeps them in
/// registers on 32-bit targets.
#[inline(never)]
fn rank_transposed_wide<W: Word>(columns: usize, window: impl Fn(usize) -> W) -> u32 {
    let columns = columns.min(64);
    let mut low = [0u64; 32];
    let mut high = [0u32; 32];
    let mut rank = 0;
    let mut first = 0;
    while first < W::BITS && rank < columns as u32 {
        for mut v in transposed_bits::<W, u64, 4>(columns, &window, first) {
            // Reduce on the low half; a vector whose low half is zero
            // indexes past `low` and goes on to the high half.
            let mut independent = false;
            while let Some(b) = low.get_mut((v as u32).trailing_zeros() as usize) {
                if *b == 0 {
                    *b = v;
                    independent = true;
                    break;
                }
                v ^= *b;
            }
            if !independent {
                independent = insert_u32(&mut high, (v >> 32) as u32);
            }
            rank += u32::from(independent);
        }
        first += 4;
    }
    rank
}

/// Bits `first..first + K` of the words `window(0..columns)`, transposed:
/// entry `k` holds bit `first + k` of word `j` at bit `j`.
#[inline(always)]
fn transposed_bits<W, V, const K: usize>(
    columns: usize,
    window: &impl Fn(usize) -> W,
    first: u32,
) -> [V; K]
where
    W: Word,
    V: Copy + Default + From<bool> + core::ops::Shl<usize, Output = V> + core::ops::BitOrAssign,
{
    let mut positions = [V::default(); K];
    for j in 0..columns {
        let bits = window(j).checked_shr(first).to_u128() as u32;
        for (k, v) in positions.iter_mut().enumerate() {
            *v |= V::from((bits >> k) & 1 != 0) << j;
        }
    }
    positions
}

/// Reduces `v` against `basis` (entry `p`: zero, or a vector whose lowest
/// set bit is `p`) and adds what is left; whether `v` was independent. A
/// zero vector indexes past the basis and stops.
#[inline(always)]
fn insert_u32(basis: &mut [u32; 32], mut v: u32) -> bool {
    while let Some(b) = basis.get_mut(v.trailing_zeros() as usize) {
        if *b == 0 {
            *b = v;
            return true;
        }
        v ^= *b;
    }
    false
}

/// The rank of `words` over GF(2), which it clobbers: Gaussian elimination
/// on each word's lowest set bit, branch-free, so that the common full-rank
/// case costs `c^2 / 2` simple steps and no unpredictable branch.
///
/// A non-member starting at the block's first slot matches every column
/// with probability `2^-rank` (its coefficient row is uniform with the
/// lowest bit set; the one case that differs, the unit vector in the span,
/// only lowers the rate).
fn rank<W: Word>(words: &mut [W]) -> u32 {
    let mut rank = 0;
    for k in 0..words.len() {
        let Some((pivot, rest)) = words.get_mut(k..).and_then(|w| w.split_first_mut()) else {
            break;
        };
        let pivot = *pivot;
        if pivot.is_zero() {
            continue;
        }
        rank += 1;
        let bit = pivot.trailing_zeros();
        for word in rest.iter_mut() {
            *word = *word ^ (pivot & W::mask_from_bit(word.bit(bit)));
        }
    }
    rank
}

/// Offsets `o < offsets` at which bits `[o, o + w)` of `hi:lo` are all zero:
/// `hi`'s bits below `o` must be zero (`o <= trailing_zeros(hi)`) and
/// `lo`'s bits from `o` up (`o >= bit length of lo`). For random words
/// there are none, which one trailing-zero count and one shift tell.
#[inline(always)]
fn zero_offsets<W: Word>(lo: W, hi: W, offsets: u32) -> u32 {
    let end = (hi.trailing_zeros() + 1).min(offsets);
    if lo.checked_shr(end).is_zero() {
        end - (W::BITS - lo.leading_zeros())
    } else {
        0
    }
}

#[cfg(test)]
mod tests;
