//! Measured false-positive rates against the rate the columns give, with a
//! tolerance of five binomial standard deviations over 10^6 queries.
//!
//! For the Standard kinds every non-member matches with probability exactly
//! `2^-columns` of its start block (its fingerprint is independent of the
//! solution), so the count of false positives is binomial. Homogeneous
//! Ribbon can only be worse than the columns (paper Lemma 4.2: `f = p +
//! (1 - p) 2^-r`): it must not be below the column rate by more than the
//! binomial tolerance, and may exceed it by the degradation `p`, which this
//! crate's sizing keeps within a few percent (we allow 10 %).

mod common;

use common::{KINDS, WIDTHS, hashes, scaled};
use ribbon_kernel::{Filter, Kind, Plan};

#[test]
fn fp_rate_matches_the_columns() {
    let n = scaled(100_000);
    let queries = scaled(1_000_000);
    let keys = hashes(1, n);
    let others = hashes(2, queries);
    for kind in KINDS {
        for width in WIDTHS {
            let settings: &[u32] = if cfg!(miri) {
                &[4_500]
            } else {
                &[2_000, 4_500, 7_700, 10_000]
            };
            for &millibits in settings {
                let plan = Plan::new(kind, width, n, millibits).unwrap();
                let filter = Filter::build(&plan, &keys).unwrap();
                let hits = others.iter().filter(|&&h| filter.contains(h)).count();
                let measured = hits as f64 / queries as f64;
                let p = filter.view().column_fp_ppt() as f64 / 1e12;
                let sigma = (p * (1.0 - p) / queries as f64).sqrt();
                let tolerance = 5.0 * sigma;
                let upper = if kind == Kind::Homogeneous {
                    p * 1.10 + tolerance
                } else {
                    p + tolerance
                };
                assert!(
                    measured >= p - tolerance && measured <= upper,
                    "{kind:?} {width:?} {millibits}: measured {measured:.6}, columns give {p:.6} \
                     (sigma {sigma:.6})"
                );
            }
        }
    }
}
