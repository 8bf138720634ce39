//! Every backend against the scalar reference: identical filter bytes from
//! back-substitution, identical single and batch answers.
//!
//! A backend this CPU or build lacks is skipped with a message on stderr,
//! unless `RIBBON_REQUIRE_BACKENDS` (comma-separated names, as `.ci/run` sets
//! from the machine's CPU flags) lists it: then the test fails.
//!
//! AVX-512 runs natively where the CPU has it, and under Miri anywhere:
//! `RUSTFLAGS="-C target-feature=+avx512f,+avx512vpopcntdq" cargo +nightly miri test avx512`.
//! NEON runs under QEMU: `cargo test --target aarch64-unknown-linux-gnu neon`.

mod common;

use common::{KINDS, WIDTHS, hashes};
use ribbon_kernel::{Backend, Filter, FilterRef, Kind, Plan, Width};

/// Returns false (after saying why) when the backend cannot run here.
fn available(backend: Backend) -> bool {
    common::runnable(backend.name(), backend.is_available())
}

/// Vector lanes (columns per vector) of a backend, for batch-length sweeps.
fn lanes(backend: Backend) -> usize {
    match backend {
        Backend::Scalar => 1,
        Backend::Avx2 => 4,
        Backend::Avx512 => 8,
        Backend::Neon => 2,
        Backend::Portable => 4,
        // `Backend` is non_exhaustive: until a new backend gets its arm,
        // sweep batch lengths around the widest vector known (8 lanes).
        _ => 8,
    }
}

/// Column settings (thousandths per slot) covering 0 lower columns, whole
/// and fractional counts around the vector widths, and the 64-column limit.
fn column_settings() -> Vec<u32> {
    if cfg!(miri) {
        vec![500, 9_400]
    } else {
        vec![
            500, 1_000, 1_700, 2_000, 3_000, 4_000, 4_500, 7_000, 7_700, 8_000, 8_300, 9_000,
            12_700, 16_000, 17_500, 31_300, 33_000, 63_500, 64_000,
        ]
    }
}

fn compare(backend: Backend, kind: Kind, width: Width, keys: &[u64], plan: Plan) {
    let scalar = Filter::build(&plan.with_backend(Backend::Scalar).unwrap(), keys).unwrap();
    let other = Filter::build(&plan.with_backend(backend).unwrap(), keys).unwrap();
    assert_eq!(
        scalar.as_bytes(),
        other.as_bytes(),
        "{} back-substitution differs: {kind:?} {width:?} {plan:?}",
        backend.name()
    );
    // Misaligned copies of the bytes, queried by the backend under test.
    let mut probes: Vec<u64> = keys.to_vec();
    probes.extend(hashes(keys.len() as u64 ^ 0xabc, keys.len().max(50)));
    if cfg!(miri) {
        // Miri interprets every query: the first 300 keys (a Bumped filter
        // of 2,100 keys bumps about 25 of them) and 300 others.
        let half = keys.len().min(300);
        probes.drain(half..keys.len());
        probes.truncate(half + 300);
    }
    let reference = scalar.view().with_backend(Backend::Scalar).unwrap();
    let expect: Vec<bool> = probes.iter().map(|&h| reference.contains(h)).collect();
    let offsets: &[usize] = if cfg!(miri) { &[1] } else { &[0, 1, 3, 7] };
    for &offset in offsets {
        let mut buffer = vec![0u8; offset];
        buffer.extend_from_slice(other.as_bytes());
        let view = FilterRef::from_bytes(&buffer[offset..])
            .unwrap()
            .with_backend(backend)
            .unwrap();
        assert_eq!(view.backend(), backend);
        for (h, e) in probes.iter().zip(&expect) {
            assert_eq!(
                view.contains(*h),
                *e,
                "{} single: {kind:?} {width:?}",
                backend.name()
            );
        }
        // Batch lengths 0 ..= 70 (every lane and chunk remainder, several
        // chunks in flight) and larger, from several start offsets in the
        // hash slice; under Miri 0 ..= 3 x lanes + 1.
        let lengths: Vec<usize> = if cfg!(miri) {
            (0..=3 * lanes(backend) + 1).collect()
        } else {
            (0..=70).chain([100, 257, 1000]).collect()
        };
        for len in lengths {
            let starts: &[usize] = if cfg!(miri) { &[1] } else { &[0, 1, 5] };
            for &start in starts {
                if start + len > probes.len() {
                    continue;
                }
                let mut out = vec![false; len];
                view.contains_batch(&probes[start..start + len], &mut out)
                    .unwrap();
                assert_eq!(
                    out,
                    expect[start..start + len],
                    "{} batch of {len} at {start}: {kind:?} {width:?}",
                    backend.name()
                );
            }
        }
        let mut all = vec![false; probes.len()];
        view.contains_batch(&probes, &mut all).unwrap();
        assert_eq!(all, expect);
    }
}

fn check_backend(backend: Backend) {
    if !available(backend) {
        return;
    }
    check_retrieval(backend);
    let n = if cfg!(miri) { 40 } else { 700 };
    let keys = hashes(backend.code().into(), n);
    for kind in KINDS {
        for width in WIDTHS {
            for millicolumns in column_settings() {
                if kind == Kind::Bumped {
                    // No fixed-size plans: enough keys for bumping layers
                    // (more than 2048) at the same columns per slot. Under
                    // Miri (minutes per such filter) once, in the run with
                    // the AVX-512 kernels (`.ci/run`), whose unchecked
                    // loads then read every layer.
                    let once =
                        millicolumns == column_settings()[0] && cfg!(target_feature = "avx512f");
                    let count = match (cfg!(miri), once) {
                        (false, _) => 6000,
                        (true, true) => 2100,
                        (true, false) => n,
                    };
                    let many = hashes(backend.code().into(), count);
                    let plan = Plan::new(kind, width, many.len(), millicolumns.max(1_000)).unwrap();
                    compare(backend, kind, width, &many, plan);
                    continue;
                }
                // Fixed slot counts give exact column splits; 1.25 slots per
                // key keeps Standard builds easy.
                let slots = n * 5 / 4;
                let plan = Plan::with_slots(kind, width, slots, millicolumns).unwrap();
                compare(backend, kind, width, &keys, plan);
            }
            let seeds: &[u32] = if cfg!(miri) { &[] } else { &[1, 0xdead_beef] };
            for &seed in seeds {
                let plan = Plan::new(kind, width, n, 7_700).unwrap().with_seed(seed);
                compare(backend, kind, width, &keys, plan);
            }
            // The last block (a start at the very end) and tiny filters.
            let smalls: &[usize] = if cfg!(miri) { &[2] } else { &[1, 2, 5] };
            for &small in smalls {
                let plan = Plan::new(kind, width, small, 9_000).unwrap();
                compare(backend, kind, width, &keys[..small], plan);
            }
        }
    }
}

/// What the standard library's own detection says of a backend (and the
/// build: kernels compiled in), independent of the crate's `cpuid` code.
fn std_says_available(b: Backend) -> bool {
    match b {
        Backend::Scalar => true,
        #[cfg(ribbon_x86_kernels)]
        Backend::Avx2 => std::is_x86_feature_detected!("avx2"),
        #[cfg(ribbon_avx512_kernels)]
        Backend::Avx512 => {
            std::is_x86_feature_detected!("avx2")
                && std::is_x86_feature_detected!("avx512f")
                && std::is_x86_feature_detected!("avx512vpopcntdq")
        }
        #[cfg(ribbon_neon_kernels)]
        Backend::Neon => std::arch::is_aarch64_feature_detected!("neon"),
        Backend::Portable => true,
        _ => false,
    }
}

#[test]
fn detection_agrees_with_the_standard_library() {
    for b in Backend::ALL {
        eprintln!("backend {}: available = {}", b.name(), b.is_available());
        assert_eq!(b.is_available(), std_says_available(b), "{}", b.name());
    }
    // The widest available one, in the crate's order of preference; the
    // portable backend where the build gives `wide` vector registers.
    let portable_vectors = cfg!(all(
        not(miri),
        any(
            all(target_arch = "x86_64", target_feature = "sse2"),
            all(target_arch = "wasm32", target_feature = "simd128")
        )
    ));
    let best = [Backend::Avx512, Backend::Avx2, Backend::Neon]
        .into_iter()
        .find(|&b| std_says_available(b))
        .unwrap_or(if portable_vectors {
            Backend::Portable
        } else {
            Backend::Scalar
        });
    // Unoptimized (`build.rs`), scalar code is the fastest.
    let best = if cfg!(ribbon_unoptimized) {
        Backend::Scalar
    } else {
        best
    };
    assert_eq!(Backend::detect(), best);
    eprintln!("detected backend: {}", best.name());
}

/// Views and plans refuse backends the CPU lacks. (Forcing the global
/// backend is tested in `tests/force_backend.rs`, a process of its own.)
#[test]
fn unavailable_backends_are_refused() {
    let keys = hashes(1, 100);
    let plan = Plan::new(Kind::Homogeneous, Width::W64, keys.len(), 8000).unwrap();
    let filter = Filter::build(&plan, &keys).unwrap();
    for b in Backend::ALL {
        let view = filter.view().with_backend(b);
        assert_eq!(view.is_ok(), b.is_available(), "{}", b.name());
        assert_eq!(plan.with_backend(b).is_ok(), b.is_available());
    }
}

#[test]
#[cfg_attr(not(target_arch = "x86_64"), ignore = "AVX2 exists on x86_64 only")]
fn avx2_matches_scalar() {
    check_backend(Backend::Avx2);
}

#[test]
#[cfg_attr(not(target_arch = "x86_64"), ignore = "AVX-512 exists on x86_64 only")]
fn avx512_matches_scalar() {
    check_backend(Backend::Avx512);
}

#[test]
#[cfg_attr(
    not(target_arch = "aarch64"),
    ignore = "NEON exists on aarch64 only (run under QEMU by .ci/run)"
)]
fn neon_matches_scalar() {
    check_backend(Backend::Neon);
}

/// The portable backend (`wide` lanes with the build's own target
/// features) against scalar. Always available, so it runs everywhere the
/// suite does: natively, under QEMU (aarch64, big-endian s390x), under a
/// WASI runtime (wasm32 with simd128), under Miri.
#[test]
fn portable_matches_scalar() {
    check_backend(Backend::Portable);
}

#[test]
fn scalar_batch_matches_single() {
    check_backend(Backend::Scalar);
}

/// Retrieval (issue 19) on `backend` against scalar: the same bytes from
/// back-substitution, the same values from `get` and `get_batch` for keys
/// and other hashes, at every value width the sweep covers and at
/// misaligned offsets.
fn check_retrieval(backend: Backend) {
    use ribbon_kernel::Kind;
    // Standard Ribbon, and Bumped layers (several of them natively: more
    // keys than the last layer takes).
    let runs = if cfg!(miri) {
        [(Kind::Standard, 30), (Kind::Bumped, 30)]
    } else {
        [(Kind::Standard, 700), (Kind::Bumped, 9000)]
    };
    for (kind, n) in runs {
        check_retrieval_of(backend, kind, n);
    }
}

fn check_retrieval_of(backend: Backend, kind: ribbon_kernel::Kind, n: usize) {
    use ribbon_kernel::{Kind, Retrieval, RetrievalPlan};
    let keys = hashes(u64::from(backend.code()) ^ 0x7e7, n);
    // Under Miri the Bumped run (one layer of 30 keys: the layered view
    // around the same kernels) takes one value width.
    let bits_set: &[u32] = if cfg!(miri) && kind == Kind::Bumped {
        &[3]
    } else if cfg!(miri) {
        &[3, 64]
    } else {
        &[1, 2, 3, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64]
    };
    for width in WIDTHS {
        for &bits in bits_set {
            let mask = if bits == 64 {
                u64::MAX
            } else {
                (1 << bits) - 1
            };
            let vals: Vec<u64> = hashes(u64::from(bits), n)
                .iter()
                .map(|&v: &u64| v & mask)
                .collect();
            let plan = RetrievalPlan::new(width, n, bits)
                .unwrap()
                .with_kind(kind)
                .unwrap();
            let scalar =
                Retrieval::build(&plan.with_backend(Backend::Scalar).unwrap(), &keys, &vals)
                    .unwrap();
            let other =
                Retrieval::build(&plan.with_backend(backend).unwrap(), &keys, &vals).unwrap();
            assert_eq!(
                scalar.as_bytes(),
                other.as_bytes(),
                "{} retrieval back-substitution differs: {kind:?} {width:?} {bits} bits",
                backend.name()
            );
            let mut probes = keys.clone();
            probes.extend(hashes(
                u64::from(bits) ^ 0x99,
                if cfg!(miri) { 30 } else { 700 },
            ));
            let reference = scalar.view().with_backend(Backend::Scalar).unwrap();
            let expect: Vec<u64> = probes.iter().map(|&h| reference.get(h)).collect();
            assert!(keys.iter().zip(&vals).all(|(&k, &v)| reference.get(k) == v));
            for offset in [0usize, 3] {
                let mut buffer = vec![0u8; offset];
                buffer.extend_from_slice(other.as_bytes());
                let view = ribbon_kernel::RetrievalRef::from_bytes(&buffer[offset..])
                    .unwrap()
                    .with_backend(backend)
                    .unwrap();
                for (h, e) in probes.iter().zip(&expect) {
                    assert_eq!(
                        view.get(*h),
                        *e,
                        "{} get: {kind:?} {width:?} {bits} bits",
                        backend.name()
                    );
                }
                let lengths: Vec<usize> = if cfg!(miri) {
                    (0..=2 * lanes(backend) + 1).collect()
                } else {
                    (0..=40).chain([257, probes.len()]).collect()
                };
                for len in lengths {
                    let mut out = vec![0u64; len];
                    view.get_batch(&probes[..len], &mut out).unwrap();
                    assert_eq!(
                        out,
                        expect[..len],
                        "{} get_batch of {len}: {kind:?} {width:?} {bits} bits",
                        backend.name()
                    );
                }
            }
        }
    }
}
