//! Upper bounds on a plan's sizes, as `const fn`s, for buffers sized at
//! compile time (`static` arrays in firmware, stack arrays).
//!
//! For `(kind, width, num_keys, millibits)` each bound is at least what
//! [`Plan::new`](crate::Plan::new) with the same arguments asks for, and
//! (checked by `tests/bounds.rs` over a sweep up to 64 bits per key) at
//! most 10 % more once `num_keys >= 1000`. The filter size is exact for
//! 1,000 keys or more: a plan for bits per key spends exactly its budget,
//! rounded up to a word, and a Bumped plan's size is its layers' bound.
//!
//! The same formulas are the `RIBBON_*_MAX` macros of
//! `include/ribbon_kernel.h` (and `ribbon_max_*` in the C ABI); the C test
//! checks that both give the same numbers. They are shaped so that a C
//! preprocessor can evaluate them in little text: where the exact sizing
//! interpolates in log2 of the keys, these use a line above it (or, for
//! w = 128 filters of 4 to 16 blocks, the same table, linear in the keys
//! there); a Homogeneous filter of up to 2^15 keys gets the plan's own
//! overhead and rounding, a larger one the overhead at the bits per key
//! (an upper bound of the columns) and its slots rounded up to a block.
//!
//! ```
//! use ribbon_kernel::{Kind, Plan, Width, bounds};
//!
//! const KEYS: usize = 10_000;
//! const MILLIBITS: u32 = 7_700;
//! const BYTES: usize = bounds::max_filter_bytes(Kind::Homogeneous, Width::W64, KEYS, MILLIBITS);
//! const WORDS: usize = bounds::max_scratch_words(Kind::Homogeneous, Width::W64, KEYS, MILLIBITS);
//! static FILTER: std::sync::Mutex<[u8; BYTES]> = std::sync::Mutex::new([0; BYTES]);
//!
//! let plan = Plan::new(Kind::Homogeneous, Width::W64, KEYS, MILLIBITS)?;
//! assert!(plan.filter_bytes() <= BYTES && plan.scratch_words() <= WORDS);
//! let mut scratch = [0u64; WORDS];
//! let keys: Vec<u64> = (0..KEYS as u64).map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15)).collect();
//! let mut out = FILTER.lock().unwrap();
//! let filter = plan.build(&keys, &mut scratch, &mut out[..])?;
//! assert!(filter.contains(keys[0]));
//! # Ok::<(), ribbon_kernel::Error>(())
//! ```
//!
//! Valid for `num_keys <= 2^40` and `millibits <=`
//! [`MAX_MILLIBITS_PER_KEY`](crate::MAX_MILLIBITS_PER_KEY) (plans beyond
//! fail); results that do not fit saturate at `usize::MAX`, and so does
//! every bound past [`MAX_KEYS`](crate::MAX_KEYS) keys, and every bound of
//! [`Kind::Bumped`] past 64 bits per key (no plan has that many): none
//! panics or wraps, for any key count.

use crate::band;
use crate::bumped_layout;
use crate::layout::{HEADER_BYTES, Kind, MAX_KEYS_U64, Width};
use crate::sizing;

const PPM: i128 = 1_000_000;

/// The most bits per key of a Bumped plan (64 columns).
const MAX_BUMPED_MILLIBITS: u32 = 64_000;

/// Up to this many keys a Homogeneous bound has the plan's own overhead
/// and rounding (above, a block more is at most 1/256 of the slots).
const HOMOGENEOUS_EXACT_KEYS: i128 = 1 << 15;

/// Bytes [`Plan::filter_bytes`](crate::Plan::filter_bytes) is at most for
/// a plan of these arguments (exact for 1,000 keys or more).
pub const fn max_filter_bytes(kind: Kind, width: Width, num_keys: usize, millibits: u32) -> usize {
    if past_any_plan(num_keys) {
        return usize::MAX;
    }
    if let Kind::Bumped = kind {
        return match bumped(width, num_keys, millibits) {
            Some(b) => saturate(b.filter_bytes as i128),
            None => usize::MAX,
        };
    }
    // The plan's own payload rule with the columns at their most, the bits
    // per key (it takes the larger of the budget and one block of them).
    let words = sizing::budget_words(width, num_keys as u64, millibits, millibits as u64);
    saturate(HEADER_BYTES as i128 + words as i128 * (width.bits() as i128 / 8))
}

/// `u64` words [`Plan::banding_scratch_words`](crate::Plan::banding_scratch_words)
/// is at most for a plan of these arguments.
pub const fn max_banding_scratch_words(
    kind: Kind,
    width: Width,
    num_keys: usize,
    millibits: u32,
) -> usize {
    if let Kind::Bumped = kind {
        // No incremental banding: `Plan::banding_scratch_words` is 0.
        return 0;
    }
    if past_any_plan(num_keys) {
        return usize::MAX;
    }
    saturate(max_slots(kind, width, num_keys as i128, millibits as i128) * row_words(kind, width))
}

/// `u64` words [`Plan::scratch_words`](crate::Plan::scratch_words) is at
/// most for a plan of these arguments: the banded system, one word per key
/// and one per start bucket.
pub const fn max_scratch_words(kind: Kind, width: Width, num_keys: usize, millibits: u32) -> usize {
    if past_any_plan(num_keys) {
        return usize::MAX;
    }
    if let Kind::Bumped = kind {
        let Some(b) = bumped(width, num_keys, millibits) else {
            return usize::MAX;
        };
        let [rows, next, ordered, counts, thresholds] =
            bumped_layout::scratch_parts(width, num_keys as u64, 1, &b);
        return saturate((rows + next + ordered + counts + thresholds) as i128);
    }
    let n = num_keys as i128;
    let slots = max_slots(kind, width, n, millibits as i128);
    // Buckets of 16 KiB of rows (`band::bucket_bits`): at most 2^20, a
    // power of two at most twice their count, and fewer than 2n + 256
    // slots (epsilon < 1 in the valid range) fill them.
    let slots_per_bucket = band::slots_per_bucket_of(band::row_words_of(kind, width)) as i128;
    let buckets = min(1 << 20, 2 * div_ceil(2 * n + 256, slots_per_bucket));
    saturate(slots * row_words(kind, width) + n + buckets)
}

/// Whether no plan takes `num_keys` keys (more than `MAX_KEYS`): its
/// bounds are `usize::MAX`, and the formulas below, written for at most
/// 2^40 keys, are not asked.
const fn past_any_plan(num_keys: usize) -> bool {
    num_keys as u64 > MAX_KEYS_U64
}

/// A Bumped plan's own bounds: they follow from the keys and the columns
/// alone (`millibits / 1000` columns per slot), so they are exact. `None`
/// past 64 columns, where no Bumped plan exists.
const fn bumped(
    width: Width,
    num_keys: usize,
    millibits: u32,
) -> Option<bumped_layout::LayerBounds> {
    if millibits > MAX_BUMPED_MILLIBITS {
        return None;
    }
    let (lower, upper) = if num_keys == 0 {
        (0, 0)
    } else {
        (millibits / 1000, millibits % 1000)
    };
    bumped_layout::layer_bounds(width, num_keys as u64, lower, upper)
}

/// `u64` words per slot of the banded system.
const fn row_words(kind: Kind, width: Width) -> i128 {
    band::row_words_of(kind, width) as i128
}

/// Most slots a plan gets (`sizing::blocks_for`), from an upper bound of
/// the overhead.
const fn max_slots(kind: Kind, width: Width, n: i128, millibits: i128) -> i128 {
    let w = width.bits() as i128;
    let eps = max_epsilon_ppm(kind, width, n, millibits);
    let z = n * eps;
    let blocks = match kind {
        Kind::Homogeneous if n <= HOMOGENEOUS_EXACT_KEYS => {
            // The plan's rule: the nearest block for `n (1 + eps)` slots,
            // or, if more, enough for `n + max(3/4 n eps, least_free)`
            // slots, the least free slots as extra overhead `z_free` (with
            // `ceil(3 z_free / (4 PPM)) = least_free`). Nearest and the
            // second line both grow with the overhead, so taking the larger
            // overhead in both is the plan's rule whenever nearest is below
            // the free slots' blocks at `z_free` (fewer than `1.5 w - 3`
            // free slots: up to 84 bits per key at w = 64, every count at
            // w = 128), and above it otherwise. As one floor over
            // `D = 4 PPM w` (what the C macro computes): nearest is
            // `(4 z + a) / D`, the second line `(3 z + a + k) / D`.
            let least_free = 8 + div_ceil(millibits, 1000);
            let z = max(z, 4 * PPM * least_free / 3);
            let a = 4 * (PPM * (n + w / 2) + PPM - 1);
            let k = 2 * PPM * w - 4 * PPM + 3;
            (3 * z + a + max(z, k)) / (4 * PPM * w)
        }
        // Rounded up to whole blocks: at least the nearest block and the
        // least slack and free slots the plan keeps (n eps is over 1,000
        // slots past 2^15 keys).
        _ => div_ceil(n * PPM + z, PPM * w),
    };
    blocks * w
}

/// The overhead `epsilon` in ppm is at most this (`sizing::epsilon_ppm`).
const fn max_epsilon_ppm(kind: Kind, width: Width, n: i128, millibits: i128) -> i128 {
    // The C macros sum 41 comparisons: exact to 2^41 keys.
    let log2_keys = min(ceil_log2(n), 41);
    match kind {
        Kind::Homogeneous => {
            let eps_w_milli = if n <= HOMOGENEOUS_EXACT_KEYS && millibits <= 70_000 {
                // The plan's columns: four steps r = bits / (1 + eq7(r))
                // from r = bits (up to 2^15 keys and 70 bits per key the
                // tail term is below eq. 7 for every r the steps meet, so
                // these are the plan's own steps and overhead).
                let mut r = millibits;
                let mut step = 0;
                while step < 4 {
                    r = homogeneous_step(
                        width,
                        millibits,
                        sizing::homogeneous_eq7_w_milli(width, r as u64),
                    );
                    step += 1;
                }
                sizing::homogeneous_eq7_w_milli(width, (r + (millibits == 1) as i128) as u64)
            } else if n <= HOMOGENEOUS_EXACT_KEYS {
                // Past 70 bits per key: eq. 7 at 6 columns more than the bits
                // per key, which is above both terms at the bits per key
                // (the plan's columns are fewer) and log10 of 2^15 keys, up
                // to 139 bits per key.
                sizing::homogeneous_eq7_w_milli(width, (millibits + 6_000) as u64)
            } else {
                // The same with log10 of the keys from above.
                homogeneous_eps_w_milli(width, millibits, log2_keys * 30_103 / 100)
            };
            sizing::per_width(width, eps_w_milli) as i128
        }
        // Where a w = 128 filter has 4 to 16 blocks, one block more would
        // be 6-25 %: the plan's own table there (log2 of the keys in
        // 1/256 units is linear in the keys between powers of two, which
        // the C macros use). Elsewhere lines above the measured tables
        // (`sizing::standard_epsilon_table`): the last segment's growth per
        // doubling of the keys, at least the table's first points; 1.6 %
        // above them at most.
        Kind::Standard | Kind::StandardSmash | Kind::Bumped => {
            if matches!(width, Width::W128) && n >= 512 && n < 2048 {
                return sizing::standard_epsilon_ppm(kind, width, n as u64) as i128;
            }
            let (floor, base, per_doubling) = match (kind, width) {
                (Kind::Standard, Width::W64) => (61_900, -46_707, 8_300),
                (Kind::Standard, Width::W128) => (24_000, -26_022, 3_800),
                (_, Width::W64) => (26_700, -47_432, 8_300),
                (_, Width::W128) => (19_900, -26_322, 3_800),
            };
            max(floor, base + per_doubling * log2_keys)
        }
    }
}

/// `bits / (1 + epsilon)`, the plan's step, for `epsilon * w` in
/// thousandths.
const fn homogeneous_step(width: Width, millibits: i128, eps_w_milli: u64) -> i128 {
    div(
        millibits * PPM,
        PPM + sizing::per_width(width, eps_w_milli) as i128,
    )
}

/// The plan's `epsilon * w` in thousandths at `r` columns, with
/// `log10_keys` (thousandths) in place of its own.
const fn homogeneous_eps_w_milli(width: Width, r: i128, log10_keys: i128) -> u64 {
    let eq7 = sizing::homogeneous_eq7_w_milli(width, r as u64);
    let tail = sizing::homogeneous_tail_w_milli(width, r as i64, log10_keys as i64);
    if tail > eq7 as i64 { tail as u64 } else { eq7 }
}

/// `ceil(log2(n))`, 0 for `n <= 1`.
const fn ceil_log2(n: i128) -> i128 {
    if n <= 1 {
        0
    } else {
        128 - (n - 1).leading_zeros() as i128
    }
}

/// `a / b`, or 0 when `b` is 0 (never, for these arguments; spelled so that
/// the C ABI has no panic path).
const fn div(a: i128, b: i128) -> i128 {
    match a.checked_div(b) {
        Some(q) => q,
        None => 0,
    }
}

const fn div_ceil(a: i128, b: i128) -> i128 {
    (a + b - 1) / b
}

const fn max(a: i128, b: i128) -> i128 {
    if a > b { a } else { b }
}

const fn min(a: i128, b: i128) -> i128 {
    if a < b { a } else { b }
}

const fn saturate(x: i128) -> usize {
    if x > usize::MAX as i128 {
        usize::MAX
    } else {
        x as usize
    }
}
