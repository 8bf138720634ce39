//! Sharded filters (issue 42): every kind and width against the unsharded
//! filter of the same keys, the shard boundaries, the in-place partition,
//! builds on 1 to 8 threads, and hostile bytes.

mod common;

use std::num::NonZeroU32;

use common::{KINDS, WIDTHS, hashes, scaled};
use ribbon_kernel::{
    Error, Filter, FilterRef, Kind, Plan, ShardedFilter, ShardedFilterRef, ShardedPlan, Width,
    shard_of,
};

fn shards(s: u32) -> NonZeroU32 {
    NonZeroU32::new(s).unwrap()
}

fn plan(kind: Kind, width: Width, n: usize, millibits: u32, s: u32) -> ShardedPlan {
    ShardedPlan::new(kind, width, n, millibits)
        .unwrap()
        .with_shards(shards(s))
}

/// The bytes the no_std units give, shards built in reverse order on this
/// thread: what every thread count must reproduce.
fn build_by_units(plan: &ShardedPlan, hashes: &mut [u64]) -> Vec<u8> {
    let mut counts = vec![0u64; plan.shards()];
    let parts = plan.partition(hashes, &mut counts).unwrap();
    let mut out = vec![0u8; plan.filter_bytes(&parts).unwrap()];
    let mut scratch = vec![0u64; plan.scratch_words(&parts).unwrap()];
    let jobs: Vec<_> = plan.jobs(&parts, &mut out).unwrap().collect();
    for job in jobs.into_iter().rev() {
        job.build(&mut scratch).unwrap();
    }
    let len = plan.finish(&mut out).unwrap();
    out.truncate(len);
    out
}

/// Where the directory ends (the first shard starts).
fn directory_end(bytes: &[u8]) -> usize {
    // In u64 and saturated: a hostile count overflows a 32-bit usize.
    let s = u64::from(u32::from_le_bytes(bytes[8..12].try_into().unwrap()));
    usize::try_from(48 + 8 * (s + 1)).unwrap_or(usize::MAX)
}

/// Seals the header's checksum over header and directory, as the format
/// documents it (`xxhash-rust`, not the crate's own code).
fn reseal(bytes: &mut [u8]) {
    let end = directory_end(bytes).min(bytes.len());
    let mut prefix = bytes[..end].to_vec();
    common::seal(&mut prefix);
    bytes[40..48].copy_from_slice(&prefix[40..48]);
}

#[test]
#[cfg_attr(
    miri,
    ignore = "statistics need real key counts; Miri runs the structural tests"
)]
fn every_kind_and_width_answers_as_the_unsharded_filter() {
    let n = scaled(200_000);
    let queries = scaled(1_000_000);
    let others = hashes(999, queries);
    for kind in KINDS {
        for width in WIDTHS {
            let millibits = 7_700;
            // The measured rate of the sharded filter against the rate its
            // shards promise (the mean of their estimates: a uniform query
            // hash lands in each shard with probability 1/S), worst of
            // several key sets: within five binomial standard deviations
            // of the queries (plus, for Homogeneous Ribbon, whose estimate
            // is computed from the payload, 2 % of the rate). A shard gets
            // its keys' hashes unchanged, whose high bits its shard fixes:
            // were they not remixed, its keys would crowd part of its
            // ribbon and this would fail by far. Against the unsharded
            // filter of the same keys, the shards' promise is within 10 %
            // (a filter of n / 8 keys is sized for n / 8: its fractional
            // columns differ a little).
            let slack = if kind == Kind::Homogeneous { 0.02 } else { 0.0 };
            let mut worst: Option<(f64, f64, u64)> = None;
            for set in 1..=3u64 {
                let keys = hashes(set, n);
                let unsharded =
                    Filter::build(&Plan::new(kind, width, n, millibits).unwrap(), &keys).unwrap();
                let p_unsharded =
                    unsharded.view().estimated_fp_rate().parts_per_million() as f64 / 1e6;
                let mut input = keys.clone();
                let sharded =
                    ShardedFilter::build(&plan(kind, width, n, millibits, 8), &mut input, 2)
                        .unwrap();
                let view = sharded.view();
                assert_eq!(view.shards(), 8);
                assert_eq!(view.num_keys(), n as u64);
                assert!(
                    keys.iter().all(|&k| sharded.contains(k)),
                    "{kind:?} {width:?}: a false negative"
                );
                let p = (0..8)
                    .map(|i| view.shard(i).unwrap().estimated_fp_ppt() as f64 / 1e12)
                    .sum::<f64>()
                    / 8.0;
                let hits = others.iter().filter(|&&h| sharded.contains(h)).count();
                let measured = hits as f64 / queries as f64;
                let sigma = (p * (1.0 - p) / queries as f64).sqrt();
                let score = ((measured - p).abs() - slack * p) / sigma;
                if worst.is_none_or(|w| score > w.0) {
                    worst = Some((score, measured, set));
                }
                let promise = p / p_unsharded;
                assert!(
                    (0.9..1.1).contains(&promise),
                    "{kind:?} {width:?}: the shards promise {promise:.3} x the unsharded rate"
                );
                // Space: within 0.5 % of the unsharded filter (the
                // directory and 8 more headers on ~190 KB); Bumped layers
                // of 25,000 keys take about 1 % more than of 200,000 (their
                // last layers' blocks weigh more).
                let ratio = sharded.as_bytes().len() as f64 / unsharded.as_bytes().len() as f64;
                let most = if kind == Kind::Bumped { 1.02 } else { 1.005 };
                assert!(
                    (0.99..most).contains(&ratio),
                    "{kind:?} {width:?}: sharded bytes {ratio:.4} x unsharded"
                );
                println!(
                    "{kind:?} {width:?} set {set}: unsharded estimate {p_unsharded:.6}, shards' estimate {p:.6}, sharded measured {measured:.6}, bytes {ratio:.4} x"
                );
            }
            let (score, measured, set) = worst.unwrap();
            assert!(
                score < 5.0,
                "{kind:?} {width:?}: set {set}: the sharded rate {measured} is {score:.1} sigma off its shards' estimate"
            );
        }
    }
}

#[test]
#[cfg_attr(
    miri,
    ignore = "builds filters: minutes under Miri, where the build code is covered by the rest of the suite"
)]
fn thread_counts_give_identical_bytes() {
    // More than two chunks of 2^16 hashes: on several threads each shard's
    // keys are gathered from the chunks' runs.
    let n = scaled(150_000);
    for kind in KINDS {
        let plan = plan(kind, Width::W64, n, 7_000, 13);
        let keys = hashes(7, n);
        let reference = build_by_units(&plan, &mut keys.clone());
        for threads in 1..=8 {
            let mut input = keys.clone();
            let built = ShardedFilter::build(&plan, &mut input, threads).unwrap();
            assert!(
                built.as_bytes() == reference.as_slice(),
                "{kind:?}: {threads} threads give other bytes"
            );
        }
        let view = ShardedFilterRef::from_bytes(&reference).unwrap();
        assert!(keys.iter().all(|&k| view.contains(k)));
    }
}

#[test]
#[cfg_attr(
    miri,
    ignore = "builds filters: minutes under Miri, where the build code is covered by the rest of the suite"
)]
fn one_shard_is_the_unsharded_filter() {
    let n = scaled(5_000);
    for kind in KINDS {
        for width in WIDTHS {
            let keys = hashes(3, n);
            let unsharded =
                Filter::build(&Plan::new(kind, width, n, 9_000).unwrap(), &keys).unwrap();
            let sharded =
                ShardedFilter::build(&plan(kind, width, n, 9_000, 1), &mut keys.clone(), 3)
                    .unwrap();
            let view = sharded.view();
            assert_eq!(view.shards(), 1);
            assert_eq!(view.shard(0).unwrap().as_bytes(), unsharded.as_bytes());
            assert_eq!(
                sharded.as_bytes().len(),
                unsharded.as_bytes().len() + 48 + 16
            );
        }
    }
}

#[test]
fn the_partition_is_a_permutation_in_shard_order() {
    let cases: Vec<(u32, Vec<u64>)> = vec![
        (1, hashes(1, scaled(1000))),
        (2, hashes(2, scaled(1001) + 1)),
        (7, hashes(3, scaled(5000))),
        (1000, hashes(4, scaled(3000))),
        // All in the last shard, all in the first, and a few shards only.
        (
            8,
            hashes(5, scaled(500))
                .into_iter()
                .map(|h| h | (7 << 61))
                .collect(),
        ),
        (
            8,
            hashes(6, scaled(500)).into_iter().map(|h| h >> 3).collect(),
        ),
        (16, (0..scaled(800) as u64).map(|i| (i % 3) << 62).collect()),
        (5, Vec::new()),
    ];
    for (s, input) in cases {
        let plan = plan(Kind::Homogeneous, Width::W64, input.len(), 8_000, s);
        let mut sorted = input.clone();
        let mut counts = vec![0u64; s as usize];
        let parts = plan.partition(&mut sorted, &mut counts).unwrap();
        let shard_seq: Vec<usize> = parts.hashes().iter().map(|&h| plan.shard_of(h)).collect();
        assert!(shard_seq.is_sorted(), "S = {s}: not in shard order");
        for (i, &c) in parts.counts().iter().enumerate() {
            let expected = input
                .iter()
                .filter(|&&h| shard_of(h, s as usize) == i)
                .count();
            assert_eq!(c, expected as u64, "S = {s}: count of shard {i}");
        }
        let (mut a, mut b) = (input.clone(), sorted.clone());
        a.sort_unstable();
        b.sort_unstable();
        assert_eq!(a, b, "S = {s}: not a permutation");
    }
}

#[test]
#[cfg_attr(miri, ignore = "thousands of keys per case; too slow under Miri")]
fn shard_boundaries_build_correct_filters() {
    let with = |hs: Vec<u64>, s: u32| {
        for kind in KINDS {
            for width in WIDTHS {
                let plan = plan(kind, width, hs.len(), 8_000, s);
                let built = ShardedFilter::build(&plan, &mut hs.clone(), 2).unwrap();
                let view = ShardedFilterRef::from_bytes(built.as_bytes()).unwrap();
                assert_eq!(view.num_keys(), hs.len() as u64);
                assert!(
                    hs.iter().all(|&h| view.contains(h)),
                    "{kind:?} {width:?} S = {s}"
                );
                let mut out = vec![false; hs.len()];
                view.contains_batch(&hs, &mut out).unwrap();
                assert!(out.iter().all(|&a| a));
            }
        }
    };
    // No key: every shard empty.
    with(Vec::new(), 1);
    with(Vec::new(), 9);
    // One key, many empty shards.
    with(vec![0x1234_5678_9abc_def0], 16);
    // Every key in the first shard, or in the last.
    with(hashes(11, 3000).into_iter().map(|h| h >> 4).collect(), 16);
    with(
        hashes(12, 3000)
            .into_iter()
            .map(|h| h | (0xf << 60))
            .collect(),
        16,
    );
    // More shards than keys.
    with(hashes(13, 10), 100);
}

#[test]
#[cfg_attr(
    miri,
    ignore = "builds filters: minutes under Miri, where the build code is covered by the rest of the suite"
)]
fn batch_answers_as_single_queries() {
    let n = scaled(20_000);
    let keys = hashes(21, n);
    let mut queries = hashes(22, n.min(4000));
    queries.extend_from_slice(&keys[..n.min(4000)]);
    // Runs of one shard too: sorted queries.
    let mut sorted = queries.clone();
    sorted.sort_unstable();
    for kind in KINDS {
        let built =
            ShardedFilter::build(&plan(kind, Width::W128, n, 6_000, 6), &mut keys.clone(), 2)
                .unwrap();
        for qs in [&queries, &sorted] {
            let mut out = vec![false; qs.len()];
            built.contains_batch(qs, &mut out).unwrap();
            let single: Vec<bool> = qs.iter().map(|&h| built.contains(h)).collect();
            assert_eq!(out, single, "{kind:?}");
        }
        let mut short = vec![false; 3];
        assert_eq!(
            built.contains_batch(&queries, &mut short),
            Err(Error::LengthMismatch {
                expected: queries.len(),
                given: 3
            })
        );
    }
}

#[test]
#[cfg_attr(
    miri,
    ignore = "builds filters: minutes under Miri, where the build code is covered by the rest of the suite"
)]
fn the_checksum_covers_header_and_directory_as_documented() {
    let built = ShardedFilter::build(
        &plan(Kind::Standard, Width::W64, 1000, 8_000, 3),
        &mut hashes(31, 1000),
        1,
    )
    .unwrap();
    let bytes = built.as_bytes();
    assert_eq!(&bytes[..4], b"RbnS");
    let end = directory_end(bytes);
    let mut prefix = bytes[..end].to_vec();
    common::seal(&mut prefix);
    assert_eq!(&prefix[40..48], &bytes[40..48]);
    // The directory: offsets from its end to the last byte.
    let off = |i: usize| u64::from_le_bytes(bytes[48 + 8 * i..56 + 8 * i].try_into().unwrap());
    assert_eq!(off(0), end as u64);
    assert_eq!(off(3), bytes.len() as u64);
    // Each family refuses the other's bytes by magic.
    assert_eq!(FilterRef::from_bytes(bytes).unwrap_err(), Error::BadMagic);
    let shard = built.view().shard(1).unwrap();
    assert_eq!(
        ShardedFilterRef::from_bytes(shard.as_bytes()).unwrap_err(),
        Error::BadMagic
    );
}

#[test]
#[cfg_attr(miri, ignore = "thousands of keys; too slow under Miri")]
fn inconsistent_containers_are_refused() {
    let keys = hashes(41, 3000);
    let good = ShardedFilter::build(
        &plan(Kind::Homogeneous, Width::W64, 3000, 8_000, 4),
        &mut keys.clone(),
        1,
    )
    .unwrap()
    .into_bytes();
    // Total keys off by one (sealed again): refused.
    let mut b = good.clone();
    let total = u64::from_le_bytes(b[16..24].try_into().unwrap()) + 1;
    b[16..24].copy_from_slice(&total.to_le_bytes());
    reseal(&mut b);
    assert_eq!(
        ShardedFilterRef::from_bytes(&b).unwrap_err(),
        Error::CorruptHeader
    );
    // The header says w = 128: the shards are w = 64.
    let mut b = good.clone();
    b[6] = 128;
    reseal(&mut b);
    assert_eq!(
        ShardedFilterRef::from_bytes(&b).unwrap_err(),
        Error::CorruptHeader
    );
    // The header says Standard: the shards are Homogeneous, which a
    // Standard build falls back to: accepted.
    let mut b = good.clone();
    b[5] = Kind::Standard.code() as u8;
    reseal(&mut b);
    let view = ShardedFilterRef::from_bytes(&b).unwrap();
    assert!(keys.iter().all(|&k| view.contains(k)));
    // Too many shards for the length.
    let mut b = good.clone();
    b[8..12].copy_from_slice(&u32::MAX.to_le_bytes());
    reseal(&mut b);
    // (A directory past the address space: TooLarge on 32-bit targets.)
    assert!(matches!(
        ShardedFilterRef::from_bytes(&b).unwrap_err(),
        Error::Truncated { .. } | Error::TooLarge
    ));
    // Two shards swapped in the directory's order: refused (each shard's
    // own checksum holds, but the shards' hashes are in the wrong shard:
    // not detectable, so the offsets must be consistent instead).
    let mut b = good.clone();
    b.push(0);
    assert_eq!(
        ShardedFilterRef::from_bytes(&b).unwrap_err(),
        Error::CorruptHeader
    );
    assert_eq!(
        ShardedFilterRef::from_bytes(&good[..good.len() - 1]).unwrap_err(),
        Error::CorruptHeader
    );
}

#[test]
#[cfg_attr(
    miri,
    ignore = "builds filters: minutes under Miri, where the build code is covered by the rest of the suite"
)]
fn hostile_headers_and_directories_never_panic() {
    let keys = hashes(51, 300);
    for kind in KINDS {
        let good = ShardedFilter::build(
            &plan(kind, Width::W64, keys.len(), 8_000, 4),
            &mut keys.clone(),
            1,
        )
        .unwrap()
        .into_bytes();
        let end = directory_end(&good);
        let probes = hashes(52, 64);
        for at in 0..end {
            for bit in 0..8 {
                let mut b = good.clone();
                b[at] ^= 1 << bit;
                // As stored: the checksum refuses every flip.
                assert!(
                    ShardedFilterRef::from_bytes(&b).is_err(),
                    "{kind:?} byte {at}"
                );
                // Sealed again (a forger's bytes): refused or answered.
                reseal(&mut b);
                if let Ok(view) = ShardedFilterRef::from_bytes(&b) {
                    let mut out = vec![false; probes.len()];
                    view.contains_batch(&probes, &mut out).unwrap();
                    for &h in &probes {
                        view.contains(h);
                    }
                }
            }
        }
        for len in 0..good.len().min(end + 64) {
            assert!(ShardedFilterRef::from_bytes(&good[..len]).is_err());
        }
    }
}

#[test]
fn planning_picks_shards_from_n_and_checks_lengths() {
    let p = ShardedPlan::new(Kind::Homogeneous, Width::W64, 0, 8_000).unwrap();
    assert_eq!(p.shards(), 1);
    let per = ShardedPlan::DEFAULT_KEYS_PER_SHARD;
    let p = ShardedPlan::new(Kind::Standard, Width::W64, per * 3 + 1, 8_000).unwrap();
    assert_eq!(p.shards(), 4);
    // Bumped shards are twice as large (their last layers cost space).
    let bumped = ShardedPlan::DEFAULT_KEYS_PER_BUMPED_SHARD;
    assert_eq!(bumped, ShardedPlan::default_keys_per_shard(Kind::Bumped));
    assert_eq!(bumped, 2 * per);
    let p = ShardedPlan::new(Kind::Bumped, Width::W64, per * 3 + 1, 8_000).unwrap();
    assert_eq!(p.shards(), 2);
    let p = ShardedPlan::new(Kind::Bumped, Width::W64, bumped * 3 + 1, 8_000).unwrap();
    assert_eq!(p.shards(), 4);
    assert_eq!(
        ShardedPlan::new(Kind::Standard, Width::W64, 10, 10).unwrap_err(),
        Error::InvalidBitsPerKey
    );
    let mut counts = vec![0u64; 3];
    assert_eq!(
        p.count(&[1, 2], &mut counts),
        Err(Error::LengthMismatch {
            expected: 4,
            given: 3
        })
    );
    // An output shorter than the plan's length.
    let mut hs = hashes(61, 100);
    let mut counts = vec![0u64; 4];
    let parts = p.partition(&mut hs, &mut counts).unwrap();
    let needed = p.filter_bytes(&parts).unwrap();
    let mut out = vec![0u8; needed - 1];
    assert_eq!(
        p.jobs(&parts, &mut out).unwrap_err(),
        Error::OutputTooSmall {
            needed,
            given: needed - 1
        }
    );
    // Shards not built: `finish` refuses rather than seal garbage.
    let mut out = vec![0u8; needed];
    let _ = p.jobs(&parts, &mut out).unwrap();
    assert!(p.finish(&mut out).is_err());
}
