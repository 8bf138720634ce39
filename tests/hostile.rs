//! Hostile and extreme inputs to planning and building (issue 20): generous
//! budgets, hashes crafted against the public seeds, stale filters after a
//! failed build, sizes past a platform's address space, and headers that
//! claim vast filters in a few bytes.

mod common;

use common::{KINDS, WIDTHS, hashes};
use ribbon_kernel::{
    Error, Filter, FilterRef, HEADER_BYTES, Kind, MAX_SEEDS, Plan, Retrieval, RetrievalPlan, Width,
};

/// A generous byte budget plans the best filter within it (at most 64
/// columns per slot), never an error.
#[test]
fn generous_budgets_plan_the_best_filter_within_them() {
    // The cases the review found refused.
    for (kind, width, n, budget) in [
        (Kind::Homogeneous, Width::W64, 1, 552),
        (Kind::Homogeneous, Width::W64, 1, 560),
        (Kind::Homogeneous, Width::W128, 100, 4096),
        (Kind::Homogeneous, Width::W128, 100, usize::MAX),
    ] {
        let plan = Plan::for_bytes(kind, width, n, budget)
            .unwrap_or_else(|e| panic!("{kind:?} {width:?} {n} keys in {budget} bytes: {e}"));
        assert!(plan.filter_bytes() <= budget);
    }
    let keys_sweep: &[usize] = if cfg!(miri) {
        &[1, 100]
    } else {
        &[1, 2, 10, 100, 1000]
    };
    for kind in KINDS {
        for width in WIDTHS {
            for &n in keys_sweep {
                let least = Plan::for_bytes(kind, width, n, usize::MAX).unwrap();
                // 64 columns in every block: the most a filter can use.
                assert_eq!(least.lower_columns(), 64, "{kind:?} {width:?} {n}");
                let mut last_fp = u64::MAX;
                let mut last_bytes = 0;
                let step = if cfg!(miri) { 997 } else { 61 };
                let start = HEADER_BYTES + n.div_ceil(64) * 16;
                for budget in (start..least.filter_bytes() + 600)
                    .step_by(step)
                    .chain([isize::MAX as usize, usize::MAX])
                {
                    let plan = match Plan::for_bytes(kind, width, n, budget) {
                        Ok(plan) => plan,
                        Err(Error::BudgetTooSmall { .. }) if budget < least.filter_bytes() => {
                            continue;
                        }
                        Err(e) => panic!("{kind:?} {width:?} {n} keys, {budget} bytes: {e}"),
                    };
                    assert!(plan.filter_bytes() <= budget);
                    // More budget never gives a worse filter.
                    assert!(
                        plan.column_fp_ppt() <= last_fp,
                        "{kind:?} {width:?} {n} {budget}"
                    );
                    assert!(plan.filter_bytes() >= last_bytes);
                    last_fp = plan.column_fp_ppt();
                    last_bytes = plan.filter_bytes();
                }
                assert_eq!(last_bytes, least.filter_bytes());
            }
        }
    }
}

/// `x` with `x * REMIX == 1 (mod 2^64)`.
fn inverse(odd: u64) -> u64 {
    // Newton's iteration doubles the correct low bits each step.
    let mut x = odd;
    for _ in 0..6 {
        x = x.wrapping_mul(2u64.wrapping_sub(odd.wrapping_mul(x)));
    }
    x
}

/// `per_seed` hashes that start at slot 0 under each of the `seeds` seeds
/// from `first` on, crafted with the public hashing constants (the crate's
/// `src/hash.rs`): the remix is `(hash ^ seed * SPREAD) * REMIX`, and small
/// remixed values start at slot 0.
fn crafted(first: u32, seeds: u32, per_seed: u64) -> Vec<u64> {
    const SEED_SPREAD: u64 = 0x91d9_3080_f9b4_39fd;
    const REMIX: u64 = 0x3cea_af30_8142_c8eb;
    let unmix = inverse(REMIX);
    let mut out = Vec::new();
    for s in 0..seeds {
        let seed_mix = u64::from(first.wrapping_add(s)).wrapping_mul(SEED_SPREAD);
        for x in 1..=per_seed {
            out.push(x.wrapping_mul(unmix) ^ seed_mix);
        }
    }
    out
}

/// Hashes crafted against the 64 seeds a Standard build tries make every
/// seed fail; the build falls back to a Homogeneous filter over the same
/// slots, which keeps every key. With a secret seed they are ordinary keys.
#[test]
#[cfg_attr(miri, ignore = "64 failed bandings of 20,000 keys: minutes under Miri")]
fn crafted_hashes_cannot_make_a_standard_build_fail() {
    let n = 20_000;
    for kind in [Kind::Standard, Kind::StandardSmash] {
        for width in WIDTHS {
            for first_seed in [0, u32::MAX - 10] {
                let per_seed = 150;
                let mut keys = crafted(first_seed, MAX_SEEDS, per_seed);
                let honest = n - keys.len();
                keys.extend(hashes(0xadd, honest));
                let plan = Plan::new(kind, width, n, 8000)
                    .unwrap()
                    .with_seed(first_seed);
                // The crafting works: under each seed, the crafted hashes
                // all start at slot 0.
                let mut scratch = vec![0u64; plan.scratch_words()];
                for s in 0..MAX_SEEDS {
                    let seeded = plan.with_seed(first_seed.wrapping_add(s));
                    let banding = seeded.banding(&mut scratch).unwrap();
                    let at = (s as usize) * per_seed as usize;
                    for &h in &keys[at..at + per_seed as usize] {
                        assert_eq!(banding.equation(h).start, 0);
                    }
                }
                // Every Standard seed fails (one seed per build shows it) ...
                let mut out = vec![0u8; plan.filter_bytes()];
                for s in [0, MAX_SEEDS - 1] {
                    let single = plan.with_seed(first_seed.wrapping_add(s)).with_max_seeds(1);
                    let view = single.build(&keys, &mut scratch, &mut out).unwrap();
                    assert_eq!(view.kind(), Kind::Homogeneous, "seed {s} fell back");
                }
                // ... and the build still succeeds: a Homogeneous filter of
                // the planned length that holds every key.
                let view = plan.build(&keys, &mut scratch, &mut out).unwrap();
                assert_eq!(view.kind(), Kind::Homogeneous);
                assert_eq!(view.as_bytes().len(), plan.filter_bytes());
                assert!(keys.iter().all(|&h| view.contains(h)));
                let fp = view.estimated_fp_ppt() as f64 / 1e10;
                let planned = plan.column_fp_ppt() as f64 / 1e10;
                println!(
                    "{kind:?} {width:?} seeds {first_seed}..: fallback FP {fp:.3} % (columns {planned:.3} %)"
                );
                // A secret seed defeats the crafting: a Standard filter.
                let secret = plan.with_seed(first_seed.wrapping_add(0x5eed_0000));
                let view = secret.build(&keys, &mut scratch, &mut out).unwrap();
                assert_eq!(view.kind(), kind);
                assert!(keys.iter().all(|&h| view.contains(h)));
            }
        }
    }
}

/// A Homogeneous build is immune to the same crafting (it cannot fail),
/// and a fixed-size Standard plan overloaded beyond what Homogeneous
/// Ribbon holds still reports `ConstructionFailed`.
#[test]
fn homogeneous_builds_hold_crafted_hashes() {
    let n = if cfg!(miri) { 600 } else { 5_000 };
    for width in WIDTHS {
        let mut keys = crafted(0, 8, 150);
        keys.extend(hashes(0xadd, n - keys.len().min(n)));
        let plan = Plan::new(Kind::Homogeneous, width, keys.len(), 8000).unwrap();
        let mut scratch = vec![0u64; plan.scratch_words()];
        let mut out = vec![0u8; plan.filter_bytes()];
        let view = plan.build(&keys, &mut scratch, &mut out).unwrap();
        assert!(keys.iter().all(|&h| view.contains(h)));
    }
    let fixed = Plan::with_slots(Kind::Standard, Width::W64, 128, 8000).unwrap();
    let overfull = hashes(9, 200);
    let mut scratch = vec![0u64; fixed.scratch_words()];
    let mut out = vec![0u8; fixed.filter_bytes()];
    assert_eq!(
        fixed.build(&overfull, &mut scratch, &mut out).err(),
        Some(Error::ConstructionFailed)
    );
}

/// After a good build, every failed build into the same buffer leaves no
/// filter behind: the header bytes are zeroed whatever the error.
#[test]
fn failed_builds_leave_no_stale_filter() {
    let keys = hashes(3, if cfg!(miri) { 100 } else { 1000 });
    for kind in KINDS {
        let plan = Plan::new(kind, Width::W64, keys.len(), 8000).unwrap();
        let words = plan.scratch_words();
        let len = plan.filter_bytes();
        let mut scratch = vec![0u64; words];
        let mut out = vec![0u8; len];
        // A Bumped build writes at most `len` bytes: a filter is then a
        // prefix of `out`.
        let fresh = |out: &mut Vec<u8>, scratch: &mut Vec<u64>| {
            let written = plan.build(&keys, scratch, out).unwrap().filter_bytes();
            assert!(FilterRef::from_bytes(&out[..written]).is_ok());
            assert!(FilterRef::from_prefix(out).is_ok());
        };
        // One word of scratch too little.
        fresh(&mut out, &mut scratch);
        let err = plan.build(&keys, &mut scratch[..words - 1], &mut out).err();
        assert!(
            matches!(err, Some(Error::ScratchTooSmall { .. })),
            "{err:?}"
        );
        assert!(
            FilterRef::from_prefix(&out).is_err(),
            "{kind:?}: stale filter"
        );
        assert!(out[..HEADER_BYTES].iter().all(|&b| b == 0));
        // More keys than planned.
        fresh(&mut out, &mut scratch);
        let more = hashes(4, keys.len() + 1);
        let err = plan.build(&more, &mut scratch, &mut out).err();
        assert!(matches!(err, Some(Error::TooManyKeys { .. })), "{err:?}");
        assert!(
            FilterRef::from_prefix(&out).is_err(),
            "{kind:?}: stale filter"
        );
        // An output one byte short: its header is zeroed too.
        fresh(&mut out, &mut scratch);
        let err = plan.build(&keys, &mut scratch, &mut out[..len - 1]).err();
        assert!(matches!(err, Some(Error::OutputTooSmall { .. })), "{err:?}");
        assert!(out[..HEADER_BYTES].iter().all(|&b| b == 0));
    }
}

/// The payload's bit count never overflows: plans whose payload bits
/// would not fit in a `u64` are `TooLarge`.
#[test]
fn payload_bits_never_overflow() {
    if usize::BITS == 64 {
        let slots = (1u64 << 58) as usize;
        assert_eq!(
            Plan::with_slots(Kind::Homogeneous, Width::W64, slots, 64_000).err(),
            Some(Error::TooLarge)
        );
    }
    for slots in [1usize << 20, 1 << 30, usize::MAX / 2, usize::MAX] {
        for millicolumns in [500, 8000, 64_000] {
            if let Ok(plan) = Plan::with_slots(Kind::Homogeneous, Width::W128, slots, millicolumns)
            {
                let bytes = (plan.filter_bytes() - HEADER_BYTES) as u64;
                assert_eq!(plan.payload_bits(), bytes * 8);
            }
        }
    }
}

/// Sizes a platform cannot hold are `TooLarge` (or `TooManyKeys`) when
/// planning, never another error and never a plan whose scratch bytes
/// wrap `size_t`.
#[test]
fn plans_fit_the_address_space() {
    let big = [
        usize::MAX,
        usize::MAX / 2,
        usize::MAX / 7,
        1 << 31,
        1 << 30,
        1 << 28,
        1 << 26,
    ];
    let fits = |plan: &Plan| {
        let max = isize::MAX as usize;
        plan.filter_bytes() <= max
            && plan.scratch_words() <= max / 8
            && plan.banding_scratch_words() <= max / 8
    };
    for kind in KINDS {
        for width in WIDTHS {
            for &n in &big {
                let plans = [
                    Plan::new(kind, width, n, 1000),
                    Plan::new(kind, width, n, 8000),
                    Plan::new(kind, width, n, 64_000),
                    Plan::for_fp_rate(kind, width, n, 100),
                    Plan::for_fp_rate(kind, width, n, 1 << 40),
                    Plan::for_bytes(kind, width, n, usize::MAX),
                ];
                for (i, result) in plans.into_iter().enumerate() {
                    match result {
                        Ok(plan) => assert!(fits(&plan), "{kind:?} {width:?} {n} #{i}"),
                        Err(Error::TooLarge | Error::TooManyKeys { .. }) => {}
                        Err(e) => panic!("{kind:?} {width:?} {n} keys, plan #{i}: {e:?}"),
                    }
                }
            }
        }
    }
    // The review's cases on 32-bit targets: 2^28 Standard w128 keys need
    // 1,137,388,544 scratch words (9.1 GB).
    if usize::BITS == 32 {
        for n in [1 << 28, 1 << 30, usize::MAX] {
            assert_eq!(
                Plan::new(Kind::Standard, Width::W128, n, 8000).err(),
                Some(Error::TooLarge),
                "{n}"
            );
        }
    }
}

/// Builds a 48-byte header (no payload, a zero checksum) from raw fields,
/// the layout of `src/layout.rs` (little-endian).
fn header(kind: u8, width: u8, lower: u8, keys: u64, blocks: u64, upper_start: u64) -> Vec<u8> {
    let mut h = Vec::with_capacity(HEADER_BYTES);
    h.extend_from_slice(b"RbnK");
    h.extend_from_slice(&[2, kind, width, lower]);
    h.extend_from_slice(&0u32.to_le_bytes()); // seed
    h.extend_from_slice(&0u32.to_le_bytes()); // reserved
    h.extend_from_slice(&keys.to_le_bytes());
    h.extend_from_slice(&blocks.to_le_bytes());
    h.extend_from_slice(&upper_start.to_le_bytes());
    h.extend_from_slice(&[0; 8]); // checksum
    h
}

/// A few bytes cannot claim a vast filter, and what loads does not depend
/// on the platform's pointer width.
#[test]
fn headers_cannot_claim_vast_filters() {
    // The review's 40 bytes: 2^58 - 1 blocks of no columns, u64::MAX keys.
    let blocks = (1u64 << 58) - 1;
    let bytes = header(0, 64, 0, u64::MAX, blocks, blocks);
    assert_eq!(
        FilterRef::from_bytes(&bytes).err(),
        Some(Error::CorruptHeader)
    );
    // The same with a plausible key count.
    let bytes = header(0, 64, 0, 1000, blocks, blocks);
    assert_eq!(
        FilterRef::from_bytes(&bytes).err(),
        Some(Error::CorruptHeader)
    );
    // 48 bytes (one payload word) claiming 2^26 blocks: refused on every
    // target alike.
    for width in [64u8, 128] {
        let mut bytes = header(0, width, 0, 1000, 1 << 26, (1 << 26) - 1);
        bytes.extend_from_slice(&[0; 16][..usize::from(width) / 8]);
        assert_eq!(
            FilterRef::from_bytes(&bytes).err(),
            Some(Error::CorruptHeader),
            "w{width}"
        );
    }
    // Key counts past 2^40 are refused everywhere.
    let mut bytes = header(0, 64, 1, 1 << 41, 1, 1);
    bytes.extend_from_slice(&[0; 8]);
    assert_eq!(
        FilterRef::from_bytes(&bytes).err(),
        Some(Error::CorruptHeader)
    );
    // A legitimate header of the same shape loads (sealed as a build would).
    let mut bytes = header(0, 64, 1, 10, 1, 1);
    bytes.extend_from_slice(&[0; 8]);
    common::seal(&mut bytes);
    assert!(FilterRef::from_bytes(&bytes).is_ok());
    // Half a column per block is the least a header may state.
    let mut bytes = header(0, 64, 0, 10, 2, 1);
    bytes.extend_from_slice(&[0; 8]);
    common::seal(&mut bytes);
    assert!(FilterRef::from_bytes(&bytes).is_ok());
    let mut bytes = header(0, 64, 0, 10, 3, 2);
    bytes.extend_from_slice(&[0; 8]);
    assert_eq!(
        FilterRef::from_bytes(&bytes).err(),
        Some(Error::CorruptHeader)
    );
}

/// Fixed-size Homogeneous plans take at most the keys their slots are
/// sized for: an empty plan takes none, an overloaded one is refused
/// rather than built into a filter that matches every key.
#[test]
fn fixed_size_homogeneous_plans_refuse_overloads() {
    let empty = Plan::with_slots(Kind::Homogeneous, Width::W64, 0, 8000).unwrap();
    let mut scratch = vec![0u64; 64];
    let mut out = vec![0u8; 64];
    assert_eq!(
        empty.build(&[1, 2, 3], &mut scratch, &mut out).err(),
        Some(Error::TooManyKeys { limit: 0, given: 3 })
    );
    assert!(empty.build(&[], &mut scratch, &mut out).is_ok());

    let plan = Plan::with_slots(Kind::Homogeneous, Width::W64, 64, 8000).unwrap();
    let keys = hashes(5, 1000);
    let mut scratch = vec![0u64; plan.scratch_words() + 2000];
    let mut out = vec![0u8; plan.filter_bytes()];
    let err = plan.build(&keys, &mut scratch, &mut out).err();
    assert_eq!(
        err,
        Some(Error::TooManyKeys {
            limit: 64,
            given: 1000
        })
    );
    // Up to one key per slot the filter keeps every key, and its measured
    // rate tells how overloaded it is; within the sizing of `Plan::new`
    // it keeps the FP promise.
    let full = plan.build(&keys[..64], &mut scratch, &mut out).unwrap();
    assert!(keys[..64].iter().all(|&h| full.contains(h)));
    assert!(full.estimated_fp_ppt() > 10 * plan.column_fp_ppt());
    let sized = Plan::new(Kind::Homogeneous, Width::W64, 1000, 8000).unwrap();
    let fixed = Plan::with_slots(Kind::Homogeneous, Width::W64, sized.num_slots(), 8000).unwrap();
    let mut scratch = vec![0u64; fixed.scratch_words() + 2000];
    let mut out = vec![0u8; fixed.filter_bytes()];
    let view = fixed.build(&keys, &mut scratch, &mut out).unwrap();
    assert!(keys.iter().all(|&h| view.contains(h)));
    assert!(view.estimated_fp_ppt() < fixed.column_fp_ppt() * 11 / 10);

    assert_eq!(
        Plan::with_slots(Kind::Homogeneous, Width::W64, 640, 499).err(),
        Some(Error::InvalidBitsPerKey)
    );
    assert!(Plan::with_slots(Kind::Homogeneous, Width::W64, 640, 500).is_ok());
}

/// A Bumped filter's layer table entry (`src/bumped_layout.rs`).
fn layer_entry(seed: u32, listed: u32, keys: u64, blocks: u64, upper_start: u64) -> Vec<u8> {
    let mut e = Vec::with_capacity(32);
    e.extend_from_slice(&seed.to_le_bytes());
    e.extend_from_slice(&listed.to_le_bytes());
    e.extend_from_slice(&keys.to_le_bytes());
    e.extend_from_slice(&blocks.to_le_bytes());
    e.extend_from_slice(&upper_start.to_le_bytes());
    e
}

/// Issue 38, defect 5: 1.9 KB of valid-looking Bumped layers, 16 layers
/// of one block each whose one bucket bumps every key (an exception of
/// threshold 0 in its group's slots), made each query walk all 16 layers
/// (3.5-4.9 us a query, 25-70x a real filter). Layers must shrink as
/// builds cap them and have the blocks a build gives their keys, so
/// accepted bytes have at most the layers their keys need (4 at 10^6).
#[test]
#[cfg_attr(miri, ignore = "a Bumped build of 3,000 keys; safe code")]
fn bumped_layers_must_shrink_as_builds_cap_them() {
    let (keys, layers, columns) = (100u64, 16usize, 8u8);
    let mut bytes = header(3, 64, columns, keys, 0, 0);
    bytes[24..32].copy_from_slice(&(layers as u64).to_le_bytes());
    for _ in 0..layers {
        bytes.extend(layer_entry(0, 0, keys, 1, 1));
    }
    for i in 0..layers {
        if i + 1 < layers {
            // One threshold group: bucket 0 bumps (code 0), its threshold
            // 0 in all three slots (an exception: every key is bumped).
            bytes.extend_from_slice(&[0; 16 + 6]);
        }
        bytes.extend_from_slice(&vec![0x5a; usize::from(columns) * 8]);
    }
    assert_eq!(bytes.len(), 1914);
    // With the checksum it would have if a build had written it: refused
    // by the layers' own checks, also without the checksum.
    common::seal(&mut bytes);
    for open in [FilterRef::from_bytes, FilterRef::from_bytes_unverified] {
        assert_eq!(open(&bytes).err(), Some(Error::CorruptHeader));
    }
    // A real filter with its second layer's keys raised past the cap
    // (8.5 % of the first's plus 512) is refused too.
    let hashes: Vec<u64> = (0..3000u64)
        .map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15))
        .collect();
    let plan = Plan::new(Kind::Bumped, Width::W64, hashes.len(), 8000).unwrap();
    let mut scratch = vec![0u64; plan.scratch_words()];
    let mut out = vec![0u8; plan.filter_bytes()];
    let len = plan
        .build(&hashes, &mut scratch, &mut out)
        .unwrap()
        .filter_bytes();
    let mut bytes = out[..len].to_vec();
    assert_eq!(u64::from_le_bytes(bytes[24..32].try_into().unwrap()), 2);
    let second_keys = HEADER_BYTES + 32 + 8;
    for keys in [3000u64, 2999, 768] {
        bytes[second_keys..second_keys + 8].copy_from_slice(&keys.to_le_bytes());
        common::seal(&mut bytes);
        assert_eq!(
            FilterRef::from_bytes(&bytes).err(),
            Some(Error::CorruptHeader),
            "{keys} keys"
        );
    }
}

/// Issue 38, defect 4: four hashes per bucket with linearly dependent
/// coefficients at its last start make the bucket bump all its keys.
/// Aimed at the 16 seeds a Bumped layer tried from the plan's on, 0.41 %
/// of 10^6 keys made every default build fail (`ConstructionFailed`), and
/// w = 128 fell at 2.89 % (denser sets). A layer now retries with seeds
/// drawn from a digest of its keys, which crafted keys cannot foresee: the
/// builds succeed, with every key, the planned FP rate, and Bumped layers
/// (not the Homogeneous fallback). The first layer's seed shows that the
/// attack did defeat the plan's seed.
#[test]
#[cfg_attr(miri, ignore = "builds of 10^5 to 10^6 keys")]
fn crafted_keys_cannot_make_a_bumped_build_fail() {
    use common::crafted::{Sets, against_first_layer};
    // Under QEMU (s390x, aarch64) and wasm a tenth of the keys.
    let n: usize = if cfg!(target_arch = "x86_64") {
        1_000_000
    } else {
        100_000
    };
    let others = hashes(0x0dd, n);
    // The attacks (the 16 seeds from the plan's), then all the
    // crafted keys aimed at the plan's seed, the one a layer still tries
    // first.
    // The sets at the buckets' last start (back 0), or a quarter of the
    // bucket back, where builds do not tell them at once.
    let cases = [
        (Width::W64, 0.0041, Sets::Four, 16, 0),
        (Width::W64, 0.006, Sets::Four, 16, 32),
        (Width::W64, 0.02, Sets::Dense, 1, 0),
        (Width::W64, 0.10, Sets::Dense, 16, 0),
        (Width::W64, 0.10, Sets::Dense, 1, 32),
        (Width::W128, 0.0289, Sets::Dense, 16, 0),
        (Width::W128, 0.10, Sets::Dense, 1, 128),
    ];
    // The key sets in order (each continues the last one's random
    // state), then the builds, the longest part, on two threads.
    let mut state = 38;
    let cases: Vec<_> = cases
        .into_iter()
        .map(|(width, fraction, sets, seeds, back)| {
            let w = u64::from(width.bits());
            // A tenth of the keys: caps have the same 512 keys of slack,
            // so it takes a larger share of crafted keys to pass them.
            let fraction = match n {
                1_000_000 => fraction,
                _ => f64::min(fraction * 3.0, 0.10),
            };
            let count = (n as f64 * fraction) as usize;
            let mut keys =
                against_first_layer(w, n as u64, 8, 0..seeds, count, sets, back, &mut state);
            keys.extend(hashes(state, n - keys.len()));
            (width, fraction, sets, seeds, back, count, keys)
        })
        .collect();
    common::on_two_threads(&cases, |case| {
        let (width, fraction, sets, seeds, back, count, ref keys) = *case;
        let plan = Plan::new(Kind::Bumped, width, n, 8_000).unwrap();
        let f = Filter::build(&plan, keys).unwrap_or_else(|e| {
            panic!("{width:?} {fraction}: {e}");
        });
        assert_eq!(f.view().kind(), Kind::Bumped, "{width:?} {fraction}");
        let first_seed = u32::from_le_bytes(f.as_bytes()[48..52].try_into().unwrap());
        assert_ne!(
            first_seed,
            plan.seed(),
            "{width:?} {fraction}: not an attack"
        );
        assert!(keys.iter().all(|&k| f.contains(k)), "false negative");
        let fp = others.iter().filter(|&&h| f.contains(h)).count() as f64 / n as f64;
        let planned = plan.column_fp_ppt() as f64 * 1e-12;
        println!(
            "{width:?}, {:.2} % crafted ({sets:?} sets, {seeds} seeds, back {back}): built, \
             FP {:.4} % against {:.4} % planned",
            count as f64 * 100.0 / n as f64,
            fp * 100.0,
            planned * 100.0
        );
        assert!(
            fp <= 1.1 * planned,
            "{width:?} {fraction}: FP {fp} against {planned}"
        );
    });
    // Retrieval on Bumped layers, the same attack.
    let mut keys = against_first_layer(64, n as u64, 8, 0..16, n / 244, Sets::Four, 0, &mut state);
    keys.extend(hashes(state, n - keys.len()));
    let values: Vec<u64> = (0..n as u64)
        .map(|i| i.wrapping_mul(0x9e37) & 0xff)
        .collect();
    let plan = RetrievalPlan::new(Width::W64, n, 8)
        .unwrap()
        .with_kind(Kind::Bumped)
        .unwrap();
    let r = Retrieval::build(&plan, &keys, &values).unwrap();
    assert!(keys.iter().zip(&values).all(|(&k, &v)| r.get(k) == v));
}

/// A Bumped filter build never fails: a layer that finds no seed (here a
/// plan of one seed against keys crafted for it) falls back to the
/// densest Homogeneous filter within the plan's bytes, which holds every
/// key at about 2^(-r / 1.09) (w = 64) or 2^(-r / 1.05) (w = 128).
#[test]
#[cfg_attr(miri, ignore = "builds of 10^5 keys")]
fn a_bumped_build_that_finds_no_seed_falls_back_to_homogeneous() {
    use common::crafted::{Sets, against_first_layer};
    let n = 100_000;
    let others = hashes(0xfa11, n);
    let mut state = 0xfa11;
    for width in [Width::W64, Width::W128] {
        let w = u64::from(width.bits());
        let mut keys =
            against_first_layer(w, n as u64, 8, 0..1, n / 10, Sets::Dense, 0, &mut state);
        keys.extend(hashes(state, n - keys.len()));
        let plan = Plan::new(Kind::Bumped, width, n, 8_000)
            .unwrap()
            .with_max_seeds(1);
        let f = Filter::build(&plan, &keys).unwrap();
        assert_eq!(f.view().kind(), Kind::Homogeneous, "{width:?}");
        assert!(f.as_bytes().len() <= plan.filter_bytes());
        assert!(keys.iter().all(|&k| f.contains(k)), "false negative");
        let fp = others.iter().filter(|&&h| f.contains(h)).count() as f64 / n as f64;
        let bound = match width {
            Width::W64 => 2f64.powf(-8.0 / 1.09),
            Width::W128 => 2f64.powf(-8.0 / 1.05),
        };
        println!("{width:?}: fell back to Homogeneous, FP {fp:.5} (bound {bound:.5})");
        assert!(fp <= 1.1 * bound, "{width:?}: FP {fp}");
        // With the default seeds, the same keys build Bumped layers.
        let plan = Plan::new(Kind::Bumped, width, n, 8_000).unwrap();
        assert_eq!(
            Filter::build(&plan, &keys).unwrap().view().kind(),
            Kind::Bumped
        );
    }
}

/// Retrieval on one Standard ribbon (fewer than 10,000 / 30,000 keys)
/// tried the plan's seed and the 63 after it: four keys with dependent
/// coefficients at one start and values that do not add up, per seed,
/// made every build fail (`ConstructionFailed`). Retries now take seeds
/// from a digest of the keys and values: the build succeeds, the same
/// bytes every time, with every value.
#[test]
#[cfg_attr(miri, ignore = "64 crafted sets and builds of 10^4 keys")]
fn crafted_keys_cannot_make_a_standard_retrieval_build_fail() {
    use common::crafted::{dense, four_dependent, hash_of};
    let mut state = 0x5eed;
    for (width, n) in [(Width::W64, 9_000usize), (Width::W128, 20_000)] {
        let w = u64::from(width.bits());
        let plan = RetrievalPlan::new(width, n, 8)
            .unwrap()
            .with_kind(Kind::Standard)
            .unwrap();
        let blocks = (plan.retrieval_bytes() - HEADER_BYTES) as u64 / (w / 8 * 8);
        let starts = blocks * w - w + 1;
        let (mut keys, mut values) = (Vec::new(), Vec::new());
        for seed in 0..MAX_SEEDS {
            let s = common::splitmix64(&mut state) % starts;
            let xs = match width {
                Width::W64 => four_dependent(s, starts, 64, &mut state).to_vec(),
                Width::W128 => dense(s, starts, w as usize + 8, &mut state),
            };
            let count = xs.len();
            keys.extend(xs.into_iter().map(|x| hash_of(x, seed)));
            // Values that do not add up over the dependent coefficients.
            values.extend((0..count).map(|i| u64::from(i + 1 == count) | (i as u64 & 0x7e)));
        }
        let crafted = keys.len();
        keys.extend(hashes(state, n - crafted));
        values.extend((crafted..n).map(|i| i as u64 & 0xff));
        let r = Retrieval::build(&plan, &keys, &values).unwrap_or_else(|e| {
            panic!("{width:?}, {crafted} crafted keys: {e}");
        });
        assert_ne!(r.view().seed(), plan.seed(), "{width:?}: not an attack");
        assert!(keys.iter().zip(&values).all(|(&k, &v)| r.get(k) == v));
        let again = Retrieval::build(&plan, &keys, &values).unwrap();
        assert_eq!(again.as_bytes(), r.as_bytes());
        println!(
            "{width:?}: {crafted} crafted keys of {n}, built with seed {:#x}",
            r.view().seed()
        );
    }
}
