//! Sizing: the formulas and measured tables that turn keys, columns and
//! a space or FP budget into slots, blocks and words, for filters
//! ([`crate::plan`]), retrieval ([`crate::retrieval`]) and the
//! compile-time bounds ([`crate::bounds`]).
//!
//! All math here is integer or fixed point (ppm = parts per million),
//! because kernel callers cannot use the FPU. Nothing here builds: the
//! plans call these functions and check what they give.

use crate::arith::{div, div_ceil};
use crate::error::Error;
use crate::layout::{Geometry, Kind, MAX_COLUMNS, MAX_KEYS_U64, Width};

/// Most key hashes one plan accepts: 2^40 (or `usize::MAX` where that is
/// smaller), which keeps every sizing product far from `u128` overflow.
/// Plans whose buffers would not fit in this platform's address space are
/// [`Error::TooLarge`] well before this on 32-bit targets.
pub const MAX_KEYS: usize = if (usize::MAX as u64) < MAX_KEYS_U64 {
    usize::MAX
} else {
    MAX_KEYS_U64 as usize
};

pub(crate) const PPM: u64 = 1_000_000;

/// [`Error::TooManyKeys`] past [`MAX_KEYS`].
pub(crate) fn check_keys(num_keys: usize) -> Result<(), Error> {
    // Always false where usize is narrower than 41 bits.
    #[allow(clippy::absurd_extreme_comparisons)]
    if num_keys > MAX_KEYS {
        Err(Error::TooManyKeys {
            limit: MAX_KEYS as u64,
            given: num_keys as u64,
        })
    } else {
        Ok(())
    }
}

/// Space overhead `epsilon = (m - n) / n` in ppm that the slots get, for
/// `keys` keys at `r_milli / 1000` columns.
///
/// Standard: overhead for about a 5 % chance that the first seed fails, as a
/// function of `log2(m)`, measured with this crate's hashing (see
/// `examples/calibrate.rs`).
///
/// Homogeneous: see [`homogeneous_epsilon_w_milli`].
fn epsilon_ppm(kind: Kind, width: Width, r_milli: u64, keys: u64) -> u64 {
    match kind {
        Kind::Homogeneous => per_width(width, homogeneous_epsilon_w_milli(width, r_milli, keys)),
        // A Bumped plan sizes its layers itself (`Plan::bumped` in `plan`).
        Kind::Standard | Kind::StandardSmash | Kind::Bumped => {
            standard_epsilon_ppm(kind, width, keys)
        }
    }
}

/// `epsilon` in ppm from `epsilon * w` in thousandths.
pub(crate) const fn per_width(width: Width, eps_w_milli: u64) -> u64 {
    (eps_w_milli * 1000) >> width.bits().trailing_zeros()
}

/// Homogeneous overhead times the width, `epsilon * w`, in thousandths:
/// the larger of the paper's eq. 7 and a term sized from the tail of the
/// FP rate over key sets.
///
/// Eq. 7, `epsilon = (4 + r/4) / w` (with 110 % for w = 64 and 105 % for
/// w = 128), was fitted to the *mean* FP rate. Over many key sets the rate
/// has a tail: a key set that overloads a stretch of the ribbon forces the
/// solution there towards zero, and queries in that stretch match. One such
/// stretch of `S` slots raises the rate by about `S 2^r / n` relative to
/// `2^-r`, and their frequency falls exponentially in `epsilon * w`.
/// [`Plan::build`](crate::Plan::build) measures each filter and retries with another seed past
/// [`HOMOGENEOUS_EXCESS_LIMIT_PPM`](crate::HOMOGENEOUS_EXCESS_LIMIT_PPM); this term keeps those retries rare
/// (about 5 % of builds or fewer at their most frequent):
///
/// `epsilon * w = 6.6 + b (r - 7) + 1.3 (L - 6)`, `L = min(log10 n,
/// 0.301 r + 3.9)`, `b = 0.3` (w = 64) or `0.2` (w = 128).
///
/// `L` grows with the keys because more keys hold more stretches, until a
/// single stretch no longer breaks the promise (`n > 2^r * 8000`, past
/// which only the mean counts). The constants come from
/// `examples/calibrate.rs homogeneous --eps`: single-seed builds of 1,000
/// key sets at n = 10^5, 300 at 10^6 and 40 at 10^7 for 4, 7.7, 12, 16 and
/// 20 bits per key and 100-135 % of the former slots, counting the key sets
/// whose measured excess passes the limit. At 7.7 bits per key this costs
/// about 0.4 points of overhead over eq. 7 alone.
fn homogeneous_epsilon_w_milli(width: Width, r_milli: u64, keys: u64) -> u64 {
    let r = r_milli.min(1 << 20) as i64;
    // log10(n) in thousandths from log2 in 1/256 units.
    let log10_keys = i64::from(log2_q8(keys.max(1))) * 30_103 / 25_600;
    let tail = homogeneous_tail_w_milli(width, r, log10_keys);
    homogeneous_eq7_w_milli(width, r_milli).max(tail.max(0) as u64)
}

/// Eq. 7 of [`homogeneous_epsilon_w_milli`]: `4 + r/4` in thousandths, with
/// 110 % for w = 64 and 105 % for w = 128. [`crate::bounds`] uses it too.
pub(crate) const fn homogeneous_eq7_w_milli(width: Width, r_milli: u64) -> u64 {
    let percent = match width {
        Width::W64 => 110,
        Width::W128 => 105,
    };
    (16_000 + r_milli) / 4 * percent / 100
}

/// The tail term of [`homogeneous_epsilon_w_milli`] at `r` columns and
/// `log10_keys` (both in thousandths); may be negative. [`crate::bounds`]
/// uses it too.
pub(crate) const fn homogeneous_tail_w_milli(width: Width, r: i64, log10_keys: i64) -> i64 {
    let per_column = match width {
        Width::W64 => 300,
        Width::W128 => 200,
    };
    let tail_limit = 301 * r / 1000 + 3_900;
    let l = if log10_keys < tail_limit {
        log10_keys
    } else {
        tail_limit
    };
    6_600 + per_column * (r - 7_000) / 1000 + 1_300 * (l - 6_000) / 1000
}

/// (log2(m) in 1/256 units, epsilon ppm) points, increasing in log2(m);
/// extrapolated linearly past the last two points, flat before the first.
const fn standard_epsilon_table(kind: Kind, width: Width) -> &'static [(u32, u64)] {
    match (kind, width) {
        (Kind::StandardSmash, Width::W64) => &STANDARD_SMASH_W64,
        (Kind::StandardSmash, Width::W128) => &STANDARD_SMASH_W128,
        (_, Width::W64) => &STANDARD_W64,
        (_, Width::W128) => &STANDARD_W128,
    }
}

// `cargo run --release --example calibrate 400` (400 trials per point, 200
// at m ~ 2^21; 16 columns), 5 % quantile of the failure point. The last
// point extrapolates with the growth per doubling of m the paper's Table 1
// reports for large m (+0.83 % for w = 64, +0.38 % for w = 128).
const STANDARD_W64: [(u32, u64); 9] = [
    (1940, 49_200),
    (2348, 47_300),
    (2839, 53_800),
    (3354, 61_900),
    (3868, 78_700),
    (4385, 92_900),
    (4902, 111_400),
    (5420, 128_100),
    (7680, 201_373),
];
const STANDARD_W128: [(u32, u64); 9] = [
    (2048, 24_000),
    (2386, 24_000),
    (2839, 20_200),
    (3338, 22_900),
    (3850, 28_400),
    (4365, 38_100),
    (4879, 46_400),
    (5394, 51_400),
    (7680, 85_332),
];
const STANDARD_SMASH_W64: [(u32, u64); 9] = [
    (1940, 26_700),
    (2348, 19_500),
    (2839, 43_600),
    (3348, 56_800),
    (3866, 75_600),
    (4383, 93_100),
    (4902, 111_500),
    (5420, 126_900),
    (7680, 200_173),
];
const STANDARD_SMASH_W128: [(u32, u64); 9] = [
    (2048, 19_900),
    (2386, 7900),
    (2839, 4600),
    (3338, 18_000),
    (3850, 27_100),
    (4365, 37_700),
    (4879, 46_100),
    (5394, 51_200),
    (7680, 85_132),
];

const fn interpolate(table: &[(u32, u64)], x: u32) -> u64 {
    let [(x0, y0), rest @ ..] = table else {
        return 0;
    };
    if x <= *x0 {
        return *y0;
    }
    // The segment containing x, or the last one to extrapolate.
    let (mut xa, mut ya) = (*x0, *y0);
    let mut rest = rest;
    while let [(xb, yb), tail @ ..] = rest {
        if x <= *xb || tail.is_empty() {
            let dx = x as i128 - xa as i128;
            let dy = *yb as i128 - ya as i128;
            let step = match (dy * dx).checked_div(*xb as i128 - xa as i128) {
                Some(step) => step,
                None => 0,
            };
            let y = ya as i128 + step;
            return if y > 0 { y as u64 } else { 0 };
        }
        (xa, ya) = (*xb, *yb);
        rest = tail;
    }
    *y0
}

/// The Standard kinds' overhead `epsilon` in ppm for `keys` keys (the
/// measured table at log2 of the keys); [`crate::bounds`] uses it where a
/// w = 128 filter has few blocks.
pub(crate) const fn standard_epsilon_ppm(kind: Kind, width: Width, keys: u64) -> u64 {
    let keys = if keys > 1 { keys } else { 1 };
    interpolate(standard_epsilon_table(kind, width), log2_q8(keys))
}

/// log2(x) in 1/256 units: integer part exact, fraction linear in the
/// mantissa (within 0.09 of the true value, plenty for sizing).
const fn log2_q8(x: u64) -> u32 {
    let int = 63 - x.leading_zeros();
    let frac = if int >= 8 {
        ((x >> (int - 8)) & 0xff) as u32
    } else {
        ((x << (8 - int)) & 0xff) as u32
    };
    (int << 8) | frac
}

/// Extra `epsilon * w` (thousandths) a Homogeneous [`Plan::banding`](crate::Plan::banding)
/// keeps beyond the planned overhead. A stream cannot be retried with
/// another seed, so its single seed must keep the promise: with this much
/// more room, overloaded stretches are about 50 times rarer than at the
/// planned overhead (the rate falls about 10-fold per 1.3 of `epsilon * w`
/// in the calibration of [`homogeneous_epsilon_w_milli`]): 3.9 % more
/// slots for w = 64, 2 % for w = 128, so a stream holds about 96-98 % of
/// the planned keys.
const STREAM_MARGIN_W_MILLI: u64 = 2_500;

/// Keys a Homogeneous banding over `g` accepts: `m / (1 + eps + margin)`
/// with `eps` the overhead planned for the geometry's columns and `keys`
/// keys (the slots, for a plan of no key count).
pub(crate) fn homogeneous_stream_capacity(g: &Geometry, keys: u64) -> usize {
    let slots = g.num_slots() as u128;
    if slots == 0 {
        return 0;
    }
    let r_milli = div(
        g.total_words().unwrap_or(0) as u128 * 1000,
        g.num_blocks as u128,
    ) as u64;
    let eps_w = homogeneous_epsilon_w_milli(g.width, r_milli, keys) + STREAM_MARGIN_W_MILLI;
    let eps = per_width(g.width, eps_w);
    div(slots * u128::from(PPM), u128::from(PPM + eps)) as usize
}

/// Homogeneous Ribbon's FP rate sits slightly above `2^-r` (paper
/// Lemma 4.2); [`Plan::for_fp_rate`](crate::Plan::for_fp_rate) aims this much lower, in ppm.
pub(crate) fn homogeneous_fp_margin_ppm(width: Width) -> u64 {
    match width {
        Width::W64 => 30_000,
        Width::W128 => 20_000,
    }
}

/// Solves `r * (1 + epsilon(r)) = bits per key` for the columns per slot,
/// in thousandths.
pub(crate) fn columns_for_bits(kind: Kind, width: Width, num_keys: usize, millibits: u32) -> u64 {
    let mut r = u64::from(millibits);
    for _ in 0..4 {
        let eps = epsilon_ppm(kind, width, r, num_keys as u64);
        r = div(
            u128::from(millibits) * u128::from(PPM),
            u128::from(PPM + eps),
        ) as u64;
    }
    r.max(1)
}

/// Columns per slot, in thousandths rounded up, whose FP rate
/// `2^-lc * (1 - u/2)` (a fraction `u` of slots with `lc + 1` columns) is
/// at most `den / num`. `None` if more than 64 columns would be needed.
/// `num >= den > 0` (a rate below one).
#[inline(never)]
pub(crate) fn columns_for_fp(num: u128, den: u128) -> Option<u64> {
    if den == 0 || num < den {
        return None;
    }
    // lc = floor(log2(num / den)): the largest shift with den << lc <= num,
    // from the bit lengths (a shift loop unrolls into a large frame on
    // 32-bit targets).
    let shift = den.leading_zeros() - num.leading_zeros();
    let lc = if (den << shift) > num {
        shift - 1
    } else {
        shift
    };
    if lc >= MAX_COLUMNS {
        return None;
    }
    // u = 2 (N - 2^lc) / N with N = num / den.
    let low = den << lc;
    let u_milli = div_ceil(2 * (num - low) * 1000, num);
    Some(u64::from(lc) * 1000 + u_milli as u64)
}

/// Blocks of a Standard Ribbon system for `num_keys` keys of
/// `columns` columns: the filters' sizing, which retrieval shares.
pub(crate) fn standard_blocks(width: Width, num_keys: usize, columns: u32) -> usize {
    blocks_for(Kind::Standard, width, num_keys, u64::from(columns) * 1000)
}

/// Blocks of `w` slots for `num_keys` keys at `r_milli` columns per slot.
///
/// Standard kinds round `num_keys * (1 + epsilon)` slots up to whole
/// blocks (fewer slots raise the failure rate quickly). Homogeneous Ribbon
/// rounds to the nearest block, unless rounding down would keep less than
/// three quarters of the slack: in filters of a few blocks the free slots
/// gather at the top of the ribbon, and too few of them leave the lower
/// blocks' solution space smaller than their columns
/// (`examples/calibrate.rs homogeneous --keys 1000`: with 1,024 slots for
/// 1,000 keys, w = 128, most key sets matched 10 to 1000 times more
/// non-members than the columns allow). It also always keeps
/// [`MIN_FREE_SLOTS`] plus one per column free.
#[inline(never)]
pub(crate) fn blocks_for(kind: Kind, width: Width, num_keys: usize, r_milli: u64) -> usize {
    let eps = epsilon_ppm(kind, width, r_milli, num_keys as u64);
    let n = num_keys as u128;
    let slots = div_ceil(n * u128::from(PPM + eps), u128::from(PPM));
    let w = u128::from(width.bits());
    let blocks = if kind.is_standard() {
        div_ceil(slots, w)
    } else {
        let nearest = div(slots + w / 2, w);
        let least_slack = div_ceil(n * u128::from(eps) * 3, u128::from(PPM) * 4);
        let least_free = MIN_FREE_SLOTS + div_ceil(u128::from(r_milli), 1000);
        nearest.max(div_ceil(n + least_slack.max(least_free), w))
    };
    (blocks as usize).max(1)
}

/// Payload words of a plan for `millibits / 1000` bits per key: the
/// budget `num_keys * millibits / 1000` rounded up to whole words, so that
/// a filter's size follows from its key count alone (the rounding of the
/// slots to whole blocks moves columns, not bits), but no fewer than one
/// block of `r_milli / 1000` columns (filters of a handful of keys keep
/// their FP rate and take more space than the budget).
///
/// [`crate::bounds::max_filter_bytes`] calls it with the most columns.
pub(crate) const fn budget_words(
    width: Width,
    num_keys: u64,
    millibits: u32,
    r_milli: u64,
) -> u128 {
    let bits = div_ceil(num_keys as u128 * millibits as u128, 1000);
    let words = div_ceil(bits, width.bits() as u128);
    let one_block = div_ceil(r_milli as u128, 1000);
    if words > one_block { words } else { one_block }
}

/// The geometry of `blocks` blocks with the most of at most `words` words
/// (and 64 columns per slot) whose columns these blocks can hold `num_keys`
/// keys at ([`blocks_for`]), if any.
pub(crate) fn densest_within(
    kind: Kind,
    width: Width,
    num_keys: usize,
    blocks: usize,
    words: usize,
) -> Option<Geometry> {
    let fits = |w: usize| {
        let r_milli = div(w as u128 * 1000, blocks as u128) as u64;
        blocks_for(kind, width, num_keys, r_milli) <= blocks
    };
    // Binary search: more words need at least as many blocks.
    let (mut lo, mut hi) = (blocks, words.min(blocks.checked_mul(MAX_COLUMNS as usize)?));
    if lo > hi || !fits(lo) {
        return None;
    }
    while lo < hi {
        let mid = lo + (hi - lo).div_ceil(2);
        if fits(mid) { lo = mid } else { hi = mid - 1 }
    }
    split_words(kind, width, blocks, lo).ok()
}

/// See [`blocks_for`]: `examples/calibrate.rs homogeneous --keys 100`
/// (and up to 10^4) shows key sets of filters of one to a few blocks.
const MIN_FREE_SLOTS: u128 = 8;

/// Spreads `words` ICML words over `blocks` blocks: `lower` columns each,
/// and the last `words % blocks` blocks one more. More than 64 columns per
/// slot is [`Error::InvalidBitsPerKey`] (a budget too large for the keys);
/// a geometry past the address space is [`Error::TooLarge`].
pub(crate) fn split_words(
    kind: Kind,
    width: Width,
    blocks: usize,
    words: usize,
) -> Result<Geometry, Error> {
    let (Some(lower), Some(upper)) = (words.checked_div(blocks), words.checked_rem(blocks)) else {
        return Err(Error::TooLarge);
    };
    if lower > MAX_COLUMNS as usize || (lower == MAX_COLUMNS as usize && upper > 0) {
        return Err(Error::InvalidBitsPerKey);
    }
    Geometry::new(kind, width, blocks, lower as u32, blocks - upper)?
        .check_native()
        .map_err(|_| Error::InvalidBitsPerKey)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log2_fixed_point() {
        assert_eq!(log2_q8(1), 0);
        assert_eq!(log2_q8(1 << 20), 20 << 8);
        assert_eq!(log2_q8(3 << 19), (20 << 8) + 128);
        assert_eq!(log2_q8(3), (1 << 8) + 128);
    }

    #[test]
    fn columns_for_fp_rates() {
        // 1 in 128: exactly 7 columns.
        assert_eq!(columns_for_fp(128, 1), Some(7000));
        // 1 in 100: 6 columns plus u = 2 * 36 / 100 = 0.72.
        assert_eq!(columns_for_fp(100, 1), Some(6720));
        assert_eq!(columns_for_fp(u128::from(u64::MAX), 1), Some(64_000));
        assert_eq!(columns_for_fp(1 << 65, 1), None);
        assert_eq!(columns_for_fp(1 << 64, 1), None);
        assert_eq!(columns_for_fp((1 << 64) - 1, 1), Some(64_000));
        assert_eq!(columns_for_fp(2_000_000, 1_000_000), Some(1000));
        assert_eq!(columns_for_fp(3_999_999, 1_000_000), Some(2000));
        assert_eq!(columns_for_fp(999, 1000), None);
        assert_eq!(columns_for_fp(5, 0), None);
    }

    #[test]
    fn interpolation_extrapolates() {
        let t = [(0u32, 0u64), (256, 100)];
        assert_eq!(interpolate(&t, 128), 50);
        assert_eq!(interpolate(&t, 512), 200);
    }
}
