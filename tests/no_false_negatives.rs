//! Every key a filter was built from is found, for every kind, width, bits
//! per key and a range of key counts around the block size.

mod common;

use common::{KINDS, WIDTHS, hashes};
use ribbon_kernel::{Filter, Plan};

#[test]
fn every_member_is_found() {
    let counts: &[usize] = if cfg!(miri) {
        &[0, 2, 65]
    } else {
        &[0, 1, 2, 63, 64, 65, 1000, 30000]
    };
    for kind in KINDS {
        for width in WIDTHS {
            let settings: &[u32] = if cfg!(miri) {
                &[1000, 16000]
            } else {
                &[1000, 3000, 7700, 16000]
            };
            for &millibits in settings {
                for &n in counts {
                    let keys = hashes(n as u64 ^ u64::from(millibits), n);
                    let plan = Plan::new(kind, width, n, millibits).unwrap();
                    let filter = Filter::build(&plan, &keys).unwrap();
                    let view = filter.view();
                    assert_eq!(view.num_keys(), n as u64);
                    assert!(
                        keys.iter().all(|&h| view.contains(h)),
                        "false negative: {kind:?} {width:?} {millibits} mbits n={n}"
                    );
                    let mut answers = vec![false; n];
                    view.contains_batch(&keys, &mut answers).unwrap();
                    assert!(answers.iter().all(|&a| a));
                }
            }
        }
    }
}

/// Bumped filters large enough that their first layer is banded in
/// segments (`bumped_layout::boundary_buckets`; the unit tests check
/// segments against the reference model and dense elimination on smaller
/// layers, cut there from 32 buckets).
#[test]
#[cfg_attr(miri, ignore = "millions of keys")]
fn bumped_layers_banded_in_segments_keep_every_key() {
    use ribbon_kernel::{Kind, Width};
    for (width, n) in [(Width::W64, 700_000), (Width::W128, 2_300_000)] {
        for millibits in [1000, 8000] {
            let keys = hashes(n as u64 + u64::from(millibits), n);
            let plan = Plan::new(Kind::Bumped, width, n, millibits).unwrap();
            let filter = Filter::build(&plan, &keys).unwrap();
            let view = filter.view();
            assert!(
                keys.iter().all(|&h| view.contains(h)),
                "false negative: {width:?} {millibits} mbits n={n}"
            );
            let mut answers = vec![false; n];
            view.contains_batch(&keys, &mut answers).unwrap();
            assert!(answers.iter().all(|&a| a), "{width:?} {millibits} batch");
        }
    }
}

#[test]
fn empty_filter_matches_nothing() {
    for kind in KINDS {
        for width in WIDTHS {
            let plan = Plan::new(kind, width, 0, 8000).unwrap();
            assert_eq!(plan.num_slots(), 0);
            let filter = Filter::build(&plan, &[]).unwrap();
            assert!(hashes(5, 100).iter().all(|&h| !filter.contains(h)));
        }
    }
}

#[test]
fn special_hash_values_and_duplicates() {
    let mut keys = vec![0, u64::MAX, 1, 1 << 63, 0x5555_5555_5555_5555];
    let copies = if cfg!(miri) { 20 } else { 500 };
    keys.extend(std::iter::repeat_n(7u64, copies));
    keys.extend(std::iter::repeat_n(0u64, copies));
    for kind in KINDS {
        for width in WIDTHS {
            let plan = Plan::new(kind, width, keys.len(), 8000).unwrap();
            let filter = Filter::build(&plan, &keys).unwrap();
            assert!(keys.iter().all(|&h| filter.contains(h)));
            // All duplicates of one hash.
            let same = vec![0xdead_beef_u64; keys.len()];
            let filter = Filter::build(&plan, &same).unwrap();
            assert!(filter.contains(0xdead_beef));
        }
    }
}
