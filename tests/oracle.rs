//! Banding and back-substitution checked against a dense GF(2) solver.
//!
//! For small systems, every `Banding::add` outcome must match what plain
//! Gaussian elimination over the full `m`-bit rows says (independent row ->
//! inserted; dependent and consistent -> redundant; dependent and
//! inconsistent -> inconsistent), until the banding's capacity is reached
//! (then full, and nothing changes). The finished filter is then decoded from
//! its documented serialized layout and every added key's equation is
//! checked bit by bit against the solution matrix.

mod common;

use common::dense::{DenseRow, DenseSolver, check_solution};
use common::{Hashes, KINDS, WIDTHS};
use ribbon_kernel::{AddOutcome, Equation, Kind, Plan, Width};

fn check_against_oracle(kind: Kind, width: Width, n: usize, millibits: u32, seed: u64) {
    let plan = Plan::new(kind, width, n, millibits).unwrap();
    if kind == Kind::Bumped {
        // No incremental banding; its layers are checked against the
        // reference model in `src/bump.rs`.
        assert!(plan.banding(&mut []).is_err());
        return;
    }
    let m = plan.num_slots();
    let mut scratch = vec![0u64; plan.scratch_words()];
    let mut out = vec![0u8; plan.filter_bytes()];
    let mut banding = plan.banding(&mut scratch).unwrap();
    let mut dense = DenseSolver::new(m);
    let mut added = Vec::new();
    // Add more keys than planned so that full bandings and (Standard)
    // inconsistencies are exercised too.
    for hash in Hashes::new(seed).take(n + n / 4 + 3) {
        let e = banding.equation(hash);
        assert_eq!(e.coeff & 1, 1);
        let expect = if banding.added() == banding.capacity() {
            AddOutcome::Full
        } else {
            dense.add(DenseRow::from_equation(&e, m))
        };
        let got = banding.add(hash);
        assert_eq!(got, expect, "{kind:?} {width:?} n={n} hash={hash:#x}");
        if matches!(got, AddOutcome::Inserted | AddOutcome::Redundant) {
            added.push((hash, e));
        }
    }
    assert_eq!(banding.added(), added.len() as u64);
    assert!(banding.capacity() <= n as u64);
    assert_eq!(banding.inserted() as usize, dense.rank());
    let filter = banding.finish(&mut out).unwrap();
    for (hash, e) in &added {
        assert!(filter.contains(*hash));
        assert_eq!(filter.equation(*hash), *e);
    }
    let equations: Vec<Equation> = added.iter().map(|(_, e)| *e).collect();
    check_solution(filter.as_bytes(), &equations);
}

#[test]
fn banding_matches_dense_gaussian_elimination() {
    let sizes: &[usize] = if cfg!(miri) {
        &[1, 40]
    } else {
        &[1, 2, 10, 40, 100, 300]
    };
    for kind in KINDS {
        for width in WIDTHS {
            for &n in sizes {
                let settings: &[u32] = if cfg!(miri) {
                    &[3_500]
                } else {
                    &[1_000, 3_500, 8_000]
                };
                for &millibits in settings {
                    check_against_oracle(kind, width, n, millibits, n as u64 * 31 + 7);
                }
            }
        }
    }
}

#[test]
fn duplicates_are_redundant() {
    for kind in KINDS {
        for width in WIDTHS {
            let plan = Plan::new(kind, width, 100, 8000).unwrap();
            let mut scratch = vec![0u64; plan.scratch_words()];
            if kind == Kind::Bumped {
                // Duplicates in a build: `no_false_negatives`.
                continue;
            }
            let mut banding = plan.banding(&mut scratch).unwrap();
            assert_eq!(banding.add(42), AddOutcome::Inserted);
            for _ in 0..10 {
                assert_eq!(banding.add(42), AddOutcome::Redundant);
            }
        }
    }
}
