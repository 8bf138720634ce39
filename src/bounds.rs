//! Upper bounds on a plan's sizes, as `const fn`s, for buffers sized at
//! compile time (`static` arrays in firmware, stack arrays).
//!
//! For `(kind, width, num_keys, millibits)` each bound is at least what
//! [`Plan::new`](crate::Plan::new) with the same arguments asks for, and
//! (checked by `tests/bounds.rs` over a sweep) at most 10 % more once
//! `num_keys >= 1000`, but for one case: with w = 128 below 1,300 keys,
//! where a filter has only 8 to 10 blocks, the scratch bounds may count
//! one block more than the plan has (up to 12.5 %). The filter size is
//! exact for 1,000 keys or more: a plan for bits per key spends exactly its
//! budget, rounded up to a word.
//!
//! The same formulas are the `RIBBON_*_MAX` macros of
//! `include/ribbon_kernel.h` (and `ribbon_max_*` in the C ABI); the C test
//! checks that both give the same numbers. They are closed forms so that a
//! C preprocessor can evaluate them: the exact sizing iterates, these bound
//! each step instead (the overhead `epsilon` from above, the columns per
//! slot by the bits per key).
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
//! fail); results that do not fit saturate at `usize::MAX`.

use crate::band;
use crate::layout::{HEADER_BYTES, Kind, Width};

const PPM: i128 = 1_000_000;

/// Bytes [`Plan::filter_bytes`](crate::Plan::filter_bytes) is at most for
/// a plan of these arguments (exact for 1,000 keys or more).
pub const fn max_filter_bytes(kind: Kind, width: Width, num_keys: usize, millibits: u32) -> usize {
    let _ = kind;
    // The plan's own payload rule with the columns at their most, the bits
    // per key (it takes the larger of the budget and one block of them).
    let words = crate::plan::budget_words(width, num_keys as u64, millibits, millibits as u64);
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
    saturate(max_slots(kind, width, num_keys as i128, millibits as i128) * row_words(kind, width))
}

/// `u64` words [`Plan::scratch_words`](crate::Plan::scratch_words) is at
/// most for a plan of these arguments: the banded system, one word per key
/// and one per start bucket.
pub const fn max_scratch_words(kind: Kind, width: Width, num_keys: usize, millibits: u32) -> usize {
    let n = num_keys as i128;
    let slots = max_slots(kind, width, n, millibits as i128);
    // Buckets of 16 KiB of rows (`band::bucket_bits`): at most 2^20, a
    // power of two at most twice their count, and fewer than 2n + 256
    // slots (epsilon < 1 in the valid range) fill them.
    let slots_per_bucket = band::slots_per_bucket_of(band::row_words_of(kind, width)) as i128;
    let buckets = min(1 << 20, 2 * div_ceil(2 * n + 256, slots_per_bucket));
    saturate(slots * row_words(kind, width) + n + buckets)
}

/// `u64` words per slot of the banded system.
const fn row_words(kind: Kind, width: Width) -> i128 {
    band::row_words_of(kind, width) as i128
}

/// Most slots a plan gets (`plan::blocks_for`), from an upper bound of
/// the overhead.
const fn max_slots(kind: Kind, width: Width, n: i128, millibits: i128) -> i128 {
    let w = width.bits() as i128;
    let eps = max_epsilon_ppm(kind, width, n, millibits);
    let slots = div_ceil(n * (PPM + eps), PPM);
    // At least one block for one key or more: Standard rounds up, and
    // Homogeneous keeps at least 9 free slots.
    let blocks = match kind {
        Kind::Standard | Kind::StandardSmash => div_ceil(slots, w),
        // The nearest block, or enough for the least free slots.
        Kind::Homogeneous => {
            let least_slack = div_ceil(3 * n * eps, 4 * PPM);
            let least_free = 8 + div_ceil(millibits, 1000);
            let nearest = (slots + w / 2) / w;
            max(nearest, div_ceil(n + max(least_slack, least_free), w))
        }
    };
    blocks * w
}

/// The overhead `epsilon` in ppm is at most this (`plan::epsilon_ppm`).
const fn max_epsilon_ppm(kind: Kind, width: Width, n: i128, millibits: i128) -> i128 {
    // The C macros sum 41 comparisons: exact to 2^41 keys.
    let log2_keys = min(ceil_log2(n), 41);
    match kind {
        Kind::Homogeneous => {
            // `plan::homogeneous_epsilon_w_milli` grows with the columns
            // and with log2 of the keys. The columns are the bits per key
            // over `1 + epsilon`, and epsilon is at least eq. 7 at zero
            // columns.
            let (eq7_percent, per_column, least_eps) = match width {
                Width::W64 => (110, 300, 68_750),
                Width::W128 => (105, 200, 32_812),
            };
            let r = millibits * PPM / (PPM + least_eps);
            let eq7 = (16_000 + r) / 4 * eq7_percent / 100;
            let log10_keys = log2_keys * 30_103 / 100;
            let l = min(log10_keys, 301 * r / 1000 + 3_900);
            let tail = 6_600 + per_column * (r - 7_000) / 1000 + 1_300 * (l - 6_000) / 1000;
            max(eq7, tail) * 1000 / width.bits() as i128
        }
        // Lines above the measured tables (`plan::standard_epsilon_table`):
        // the last segment's growth per doubling of the keys, at least the
        // table's first points; 1.6 % above them at most.
        Kind::Standard | Kind::StandardSmash => {
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

/// `ceil(log2(n))`, 0 for `n <= 1`.
const fn ceil_log2(n: i128) -> i128 {
    if n <= 1 {
        0
    } else {
        128 - (n - 1).leading_zeros() as i128
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
