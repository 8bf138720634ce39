//! Unit tests of `kernels` (`src/kernels.rs`), in a file of their own: see
//! "Tests" in ARCHITECTURE.md.

use super::*;
use crate::hash::Expander;
use crate::layout::Kind;
use crate::probe::Probe;
use crate::test_kit::{runnable, splitmix64};
use std::vec;
use std::vec::Vec;

/// The table holds a backend exactly when the CPU runs it, for every
/// width and kind, empty filters included: filter queries, retrieval
/// evaluations, back-substitution and the Bumped threshold scan (a
/// backend added without its arm in one of them fails here).
#[test]
fn tables_exist_exactly_for_available_backends() {
    for backend in Backend::ALL {
        assert_eq!(
            scan_bumped(backend).is_some(),
            backend.is_available(),
            "{backend:?} scan"
        );
        for width in [Width::W64, Width::W128] {
            assert_eq!(
                SolveKernel::new(backend, width).is_some(),
                backend.is_available(),
                "{backend:?} {width:?}"
            );
            let g = Geometry::new(Kind::Standard, width, 3, 7, 1).unwrap();
            let table = EvalKernels::for_retrieval(backend, &g);
            assert_eq!(table.is_some(), backend.is_available(), "{backend:?} {g:?}");
            if let Some(table) = table {
                assert_eq!(table.backend(), backend);
            }
            for kind in [Kind::Homogeneous, Kind::Standard, Kind::StandardSmash] {
                for (blocks, lower, upper) in [(0, 0, 0), (3, 7, 1)] {
                    let g = Geometry::new(kind, width, blocks, lower, upper).unwrap();
                    let table = QueryKernels::for_filter(backend, &g);
                    assert_eq!(table.is_some(), backend.is_available(), "{backend:?} {g:?}");
                    if let Some(table) = table {
                        assert_eq!(table.backend(), backend);
                    }
                }
            }
        }
    }
}

/// An empty filter's kernels answer "absent" without reading.
#[test]
fn empty_filters_answer_absent() {
    let g = Geometry::new(Kind::Standard, Width::W64, 0, 0, 0).unwrap();
    let parts = Parts {
        geometry: g,
        expander: Expander::new(&g, 0),
    };
    let table = QueryKernels::for_filter(Backend::Scalar, &g).unwrap();
    assert!(!table.one(&parts, &[], 42));
    let mut out = [true; 3];
    table.batch(&parts, &[], &[1, 2, 3], &mut out);
    assert_eq!(out, [false; 3]);
}

/// A key's value by the definition: its column bits
/// (`scalar::column_bits`) xor its expected bits where the probes
/// carry them, masked to its columns.
fn defined_value<W: Coeff, P: Probes<W>>(payload: &[u8], p: &Probe<W>) -> u64 {
    let bits = scalar::column_bits(payload, p, 0, p.columns()).unwrap_or(0);
    let expected = if P::RESULT { p.expected } else { 0 };
    (bits ^ expected) & p.mask
}

/// `kernels` against [`defined_value`] on `payload` (pseudo-random
/// bytes in `g`'s layout): `get` of every hash, `get_batch` of its
/// first `lengths` (those at most as long as `hashes`, and all of
/// them).
fn check_values<W: Coeff, P: Probes<W, Source = Parts>>(
    kernels: &EvalKernels<Parts>,
    parts: &Parts,
    payload: &[u8],
    hashes: &[u64],
    lengths: &[usize],
) {
    let probes = P::new(parts);
    let defined: Vec<u64> = hashes
        .iter()
        .map(|&h| defined_value::<W, P>(payload, &probes.probe(h)))
        .collect();
    let g = &parts.geometry;
    let what = |h: u64| {
        std::format!(
            "{:?} {:?}, {} blocks, {} lower columns, upper from block {}, result bits {}, hash {h:#x}",
            kernels.backend(),
            g.width,
            g.num_blocks,
            g.lower_columns,
            g.upper_start_block,
            P::RESULT
        )
    };
    for (&h, &want) in hashes.iter().zip(&defined) {
        assert_eq!(kernels.one(parts, payload, h), want, "get: {}", what(h));
    }
    let all = [hashes.len()];
    for &n in lengths.iter().filter(|&&n| n <= hashes.len()).chain(&all) {
        // Entries the batch leaves unwritten keep a value no key has.
        let mut out = vec![u64::MAX; n];
        kernels.batch(parts, payload, &hashes[..n], &mut out);
        for (i, (&got, &want)) in out.iter().zip(&defined).enumerate() {
            assert_eq!(got, want, "get_batch of {n}, key {i}: {}", what(hashes[i]));
        }
    }
}

/// `count` pseudo-random hashes, then up to `count / 4` more whose
/// start lies in the last block (where vector reads reach the
/// payload's end and kernels fall back to scalar code).
fn eval_hashes<W: Coeff>(parts: &Parts, state: &mut u64, count: usize) -> Vec<u64> {
    let mut hashes: Vec<u64> = (0..count).map(|_| splitmix64(state)).collect();
    let g = &parts.geometry;
    let last = g.block_word_offset(g.num_blocks - 1);
    let probes = <NativeProbes<false, false> as Probes<W>>::new(parts);
    let mut near_end = 0;
    for _ in 0..count * 64 {
        if near_end >= count / 4 {
            break;
        }
        let h = splitmix64(state);
        let p: Probe<W> = probes.probe(h);
        if p.lo_word == last {
            hashes.push(h);
            near_end += 1;
        }
    }
    hashes
}

/// Every geometry of the sweep for words `W` on `backend`: column
/// counts around the vector widths up to 64, blocks of one count and
/// of two (lower and upper), a few block counts, retrieval probes
/// (no result bits, through [`EvalKernels::for_retrieval`]) and
/// Standard probes (result bits xored in).
fn eval_sweep<W: KernelWord>(backend: Backend, width: Width) {
    // Miri interprets every lane operation: three blocks (lower and
    // upper ones, keys at the payload's end), a column count that
    // leaves a partial vector and the most columns, a dozen keys.
    let (columns, blocks, count, lengths): (&[u32], &[usize], usize, &[usize]) = if cfg!(miri) {
        (&[9, 64], &[3], 12, &[0, 9])
    } else {
        (
            &[1, 2, 7, 8, 9, 16, 17, 31, 32, 33, 63, 64],
            &[1, 2, 3, 50],
            2000,
            &[0, 1, 7, 8, 9, 33, 1000],
        )
    };
    let mut state = 0x5eed ^ u64::from(width.bits()) ^ (backend.code() as u64) << 32;
    for &c in columns {
        for &b in blocks {
            // All blocks with `c` columns; then `c - 1` columns below
            // block `b / 2` and `c` from there on.
            for (lower, upper_start) in [(c, b), (c - 1, b / 2)] {
                let g = Geometry::new(Kind::Standard, width, b, lower, upper_start).unwrap();
                assert_eq!(g.max_columns(), c as usize);
                let parts = Parts {
                    geometry: g,
                    expander: Expander::new(&g, splitmix64(&mut state) as u32),
                };
                // Any bytes are a valid payload.
                let payload: Vec<u8> = (0..g.payload_bytes())
                    .map(|_| splitmix64(&mut state) as u8)
                    .collect();
                let hashes = eval_hashes::<W>(&parts, &mut state, count);
                let kernels = EvalKernels::for_retrieval(backend, &g).unwrap();
                assert_eq!(kernels.backend(), backend);
                check_values::<W, NativeProbes<false, false>>(
                    &kernels, &parts, &payload, &hashes, lengths,
                );
                // The same reads with result bits: natively only (under
                // Miri they would add no memory access to check).
                if !cfg!(miri) {
                    let standard =
                        EvalKernels::new::<W, NativeProbes<true, false>>(backend, c as usize)
                            .unwrap();
                    check_values::<W, NativeProbes<true, false>>(
                        &standard, &parts, &payload, &hashes, lengths,
                    );
                }
            }
        }
    }
}

/// [`eval_sweep`] for both widths, or a message (and a failure where
/// `RIBBON_REQUIRE_BACKENDS` lists it) when `backend` cannot run here.
fn eval_matches_scalar(backend: Backend) {
    assert_eq!(
        EvalKernels::for_retrieval(
            backend,
            &Geometry::new(Kind::Standard, Width::W64, 1, 8, 1).unwrap()
        )
        .is_some(),
        backend.is_available()
    );
    if !runnable(backend.name(), backend.is_available()) {
        return;
    }
    eval_sweep::<u64>(backend, Width::W64);
    eval_sweep::<u128>(backend, Width::W128);
}

/// The scalar kernels' batch (the ring, on 64-bit targets) and single
/// evaluation equal the definition.
#[test]
fn eval_scalar_batch_matches_single() {
    eval_matches_scalar(Backend::Scalar);
}

/// The AVX-512 evaluation kernels equal the scalar definition (also
/// under Miri with the AVX-512 target features).
#[test]
fn eval_avx512_matches_scalar() {
    eval_matches_scalar(Backend::Avx512);
}

/// The AVX2 evaluation kernels equal the scalar definition.
#[test]
fn eval_avx2_matches_scalar() {
    eval_matches_scalar(Backend::Avx2);
}

/// The NEON evaluation kernels equal the scalar definition.
#[test]
fn eval_neon_matches_scalar() {
    eval_matches_scalar(Backend::Neon);
}

/// The portable evaluation kernels equal the scalar definition.
#[test]
fn eval_portable_matches_scalar() {
    eval_matches_scalar(Backend::Portable);
}

/// An empty retrieval structure's kernels return 0 without reading,
/// for every available backend.
#[test]
fn eval_empty_returns_zero() {
    let g = Geometry::new(Kind::Standard, Width::W64, 0, 0, 0).unwrap();
    let parts = Parts {
        geometry: g,
        expander: Expander::new(&g, 0),
    };
    for backend in Backend::ALL {
        let Some(table) = EvalKernels::for_retrieval(backend, &g) else {
            assert!(!backend.is_available());
            continue;
        };
        assert_eq!(table.one(&parts, &[], 42), 0);
        let mut out = [7u64; 3];
        table.batch(&parts, &[], &[1, 2, 3], &mut out);
        assert_eq!(out, [0; 3]);
    }
}
