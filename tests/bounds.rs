//! The compile-time size bounds (`ribbon_kernel::bounds`) against the
//! exact sizes of `Plan::new`: never below, at most 10 % above from 1,000
//! keys on, and the filter size exact there.

mod common;

use common::{KINDS, WIDTHS};
use ribbon_kernel::bounds::{max_banding_scratch_words, max_filter_bytes, max_scratch_words};
use ribbon_kernel::{Error, Kind, Plan, Width};

const MILLIBITS: [u32; 11] = [
    500, 1_000, 2_000, 4_000, 7_700, 10_000, 12_000, 16_000, 24_000, 40_000, 64_000,
];

/// Checks one point; returns the largest ratio of bound to exact size of
/// the three (1.0 for an empty plan).
fn check(kind: Kind, width: Width, n: usize, millibits: u32) -> f64 {
    let plan = match Plan::new(kind, width, n, millibits) {
        Ok(plan) => plan,
        // Too many columns per slot: nothing to bound.
        Err(Error::InvalidBitsPerKey) => return 1.0,
        // Sizes past the address space (filter or scratch over
        // `isize::MAX` bytes, as on i686): an error, and the bounds, which
        // saturate rather than wrap, say so too.
        Err(Error::TooLarge) => {
            assert!(
                max_scratch_words(kind, width, n, millibits) > isize::MAX as usize / 8
                    || max_filter_bytes(kind, width, n, millibits) > isize::MAX as usize,
                "{kind:?} {width:?} {n} {millibits}"
            );
            return 1.0;
        }
        Err(e) => panic!("{kind:?} {width:?} {n} {millibits}: {e:?}"),
    };
    let pairs = [
        (
            "filter bytes",
            plan.filter_bytes(),
            max_filter_bytes(kind, width, n, millibits),
        ),
        (
            "scratch words",
            plan.scratch_words(),
            max_scratch_words(kind, width, n, millibits),
        ),
        (
            "banding scratch words",
            plan.banding_scratch_words(),
            max_banding_scratch_words(kind, width, n, millibits),
        ),
    ];
    let mut worst = 1.0f64;
    for (what, exact, bound) in pairs {
        assert!(
            bound >= exact,
            "{kind:?} {width:?} {n} keys {millibits} millibits: {what} bound {bound} < exact {exact}"
        );
        if exact > 0 {
            worst = worst.max(bound as f64 / exact as f64);
        }
        if n >= 1000 {
            assert!(
                bound as f64 <= 1.10 * exact as f64,
                "{kind:?} {width:?} {n} keys {millibits} millibits: {what} bound {bound} > 1.1 x {exact}"
            );
        }
    }
    if n >= 1000 {
        assert_eq!(
            plan.filter_bytes(),
            max_filter_bytes(kind, width, n, millibits),
            "{kind:?} {width:?} {n} {millibits}"
        );
    }
    worst
}

/// Every key count up to a few thousand, then a geometric sweep to 2^40
/// (sizes only: no filter is built).
#[test]
fn bounds_hold_over_a_sweep() {
    let dense: u64 = if cfg!(miri) { 40 } else { 5_000 };
    let mut counts: Vec<u64> = (0..=dense).collect();
    let top: u64 = if cfg!(miri) { 1 << 24 } else { 1 << 40 };
    let mut n = dense as f64;
    let step = if cfg!(miri) { 1.5 } else { 1.003 };
    while (n as u64) < top {
        counts.push(n as u64);
        n *= step;
    }
    counts.push(top);
    let millibits: &[u32] = if cfg!(miri) {
        &[4_000, 7_700]
    } else {
        &MILLIBITS
    };
    for kind in KINDS {
        for width in WIDTHS {
            let mut worst_small = (1.0f64, 0);
            let mut worst_large = (1.0f64, 0);
            for &mb in millibits {
                for &n in &counts {
                    // Past a 32-bit address space.
                    let Ok(n) = usize::try_from(n) else {
                        continue;
                    };
                    let r = check(kind, width, n, mb);
                    let slot = if n >= 1000 {
                        &mut worst_large
                    } else {
                        &mut worst_small
                    };
                    if r > slot.0 {
                        *slot = (r, n);
                    }
                }
            }
            println!(
                "{kind:?} {width:?}: worst bound / exact {:.3} below 1000 keys (n = {}), {:.3} from 1000 keys (n = {})",
                worst_small.0, worst_small.1, worst_large.0, worst_large.1
            );
        }
    }
}

/// The bounds are usable where Rust needs constants.
#[test]
fn bounds_size_static_arrays() {
    const KEYS: usize = 1_000;
    const BYTES: usize = max_filter_bytes(Kind::StandardSmash, Width::W64, KEYS, 8_000);
    const WORDS: usize = max_scratch_words(Kind::StandardSmash, Width::W64, KEYS, 8_000);
    static mut UNUSED: [u8; BYTES] = [0; BYTES];
    let _ = &raw const UNUSED;
    let mut scratch = [0u64; WORDS];
    let mut out = [0u8; BYTES];
    let keys: Vec<u64> = common::hashes(1, KEYS);
    let plan = Plan::new(Kind::StandardSmash, Width::W64, KEYS, 8_000).unwrap();
    let filter = plan.build(&keys, &mut scratch, &mut out).unwrap();
    assert!(keys.iter().all(|&k| filter.contains(k)));
}

/// Issue 38, defect 6: any key count a caller can pass (the C functions
/// take a `uint64_t`) gives a bound or `usize::MAX`, never a panic (this
/// profile checks overflow) nor a wrapped, smaller value: the bounds grow
/// with the keys, and past `MAX_KEYS` (no plan) they are `usize::MAX`.
#[test]
fn bounds_saturate_for_every_key_count() {
    let mut counts: Vec<u64> = (10..64).step_by(3).map(|s| 1u64 << s).collect();
    counts.extend([ribbon_kernel::MAX_KEYS as u64 + 1, u64::MAX]);
    for kind in [
        Kind::Bumped,
        Kind::Homogeneous,
        Kind::Standard,
        Kind::StandardSmash,
    ] {
        for width in WIDTHS {
            for millibits in [1_000, 8_000, 64_000] {
                let mut previous = [0usize; 3];
                for &n in &counts {
                    let Ok(n) = usize::try_from(n) else {
                        continue;
                    };
                    let bounds = [
                        max_filter_bytes(kind, width, n, millibits),
                        max_scratch_words(kind, width, n, millibits),
                        max_banding_scratch_words(kind, width, n, millibits),
                    ];
                    for (i, (&b, &p)) in bounds.iter().zip(&previous).enumerate() {
                        assert!(
                            b >= p,
                            "{kind:?} {width:?} {millibits}: bound {i} fell from {p} to {b} at {n} keys"
                        );
                    }
                    if n > ribbon_kernel::MAX_KEYS {
                        assert_eq!(bounds[0], usize::MAX, "{kind:?} {width:?} {n}");
                        assert_eq!(bounds[1], usize::MAX, "{kind:?} {width:?} {n}");
                    }
                    previous = bounds;
                }
            }
        }
    }
}
