//! The conveniences over the core API (issue 40): queries and builds by
//! key (`hash_key` inside), conversions, counts and FP rates. Each is
//! checked against the hash-level call it stands for.

mod common;

use common::KINDS;
use ribbon_kernel::{
    AddOutcome, Error, Filter, FilterRef, Kind, Plan, Retrieval, RetrievalPlan, RetrievalRef,
    Width, hash_key, hash_keys,
};

/// `native` items natively, `miri` under Miri (which interprets every
/// build and query).
fn sized(native: usize, miri: usize) -> usize {
    if cfg!(miri) { miri } else { native }
}

/// `n` distinct keys of several lengths (1 to 40 bytes, so that the key
/// hash takes each of its short paths).
fn keys(n: usize) -> Vec<Vec<u8>> {
    (0..n)
        .map(|i| {
            let len = 1 + i % 40;
            let mut key = format!("key-{i}-").into_bytes();
            key.resize(len.max(key.len()), b'.');
            key
        })
        .collect()
}

fn hashed(keys: &[Vec<u8>]) -> Vec<u64> {
    keys.iter().map(|k| hash_key(k)).collect()
}

/// Keys that are not among [`keys`].
fn others(n: usize) -> Vec<Vec<u8>> {
    (0..n).map(|i| format!("other {i}").into_bytes()).collect()
}

#[test]
fn contains_key_is_contains_of_hash_key() {
    let members = keys(sized(600, 60));
    let hashes = hashed(&members);
    for kind in KINDS {
        let plan = Plan::new(kind, Width::W64, hashes.len(), 6_000).unwrap();
        let filter = Filter::build(&plan, &hashes).unwrap();
        let view = filter.view();
        assert!(members.iter().all(|k| filter.contains_key(k)), "{kind:?}");
        assert!(members.iter().all(|k| view.contains_key(k)), "{kind:?}");
        // Non-members: the same answer as the hash query, yes or no (some
        // of both at 6 bits per key).
        let mut yes = 0;
        for k in others(sized(2_000, 100)) {
            let expected = filter.contains(hash_key(&k));
            assert_eq!(filter.contains_key(&k), expected, "{kind:?}");
            assert_eq!(view.contains_key(k.as_slice()), expected, "{kind:?}");
            yes += usize::from(expected);
        }
        // About 1.6 % of them (a few under Miri, maybe none).
        assert!(yes < sized(200, 100), "{kind:?}: {yes}");
        assert!(yes > 0 || cfg!(miri), "{kind:?}: {yes}");
    }
}

#[test]
fn keys_of_every_byte_type() {
    let filter = Filter::from_keys(["apple", "banana"], 1000).unwrap();
    let owned = String::from("apple");
    let bytes: Vec<u8> = b"banana".to_vec();
    assert!(filter.contains_key("apple"));
    assert!(filter.contains_key(&owned));
    assert!(filter.contains_key(b"banana"));
    assert!(filter.contains_key(&bytes));
    assert!(filter.contains_key(&bytes[..]));
    assert_eq!(
        filter.contains_key("cherry"),
        filter.contains(hash_key(b"cherry"))
    );
}

#[test]
fn from_keys_is_from_hashes_of_hash_key() {
    let members = keys(sized(1_000, 60));
    let hashes = hashed(&members);
    // Any iterator of byte strings: borrowed, owned, `&str`.
    let a = Filter::from_keys(&members, 256).unwrap();
    let b = Filter::from_keys(members.clone(), 256).unwrap();
    let strings: Vec<String> = members
        .iter()
        .map(|k| String::from_utf8(k.clone()).unwrap())
        .collect();
    let c = Filter::from_keys(strings.iter().map(String::as_str), 256).unwrap();
    let expected = Filter::from_hashes(&hashes, 256).unwrap();
    assert_eq!(a, expected);
    assert_eq!(b, expected);
    assert_eq!(c, expected);

    for kind in KINDS {
        let plan = Plan::new(kind, Width::W128, members.len(), 9_000).unwrap();
        let by_keys = Filter::build_keys(&plan, &members).unwrap();
        assert_eq!(by_keys, Filter::build(&plan, &hashes).unwrap(), "{kind:?}");
        assert!(members.iter().all(|k| by_keys.contains_key(k)));
    }
}

#[test]
fn repeated_keys_take_one_place() {
    // Every key three times: every one answers yes, and the count is of
    // the keys given (as for repeated hashes).
    let members = keys(sized(300, 30));
    let repeated: Vec<&Vec<u8>> = members.iter().chain(&members).chain(&members).collect();
    for kind in KINDS {
        let plan = Plan::new(kind, Width::W64, repeated.len(), 8_000).unwrap();
        let filter = Filter::build_keys(&plan, &repeated).unwrap();
        assert!(members.iter().all(|k| filter.contains_key(k)), "{kind:?}");
        assert_eq!(filter.num_keys(), 3 * members.len() as u64);
    }
    // Streamed: the repeats are redundant.
    let plan = Plan::new(Kind::Standard, Width::W64, repeated.len(), 8_000).unwrap();
    let mut scratch = vec![0u64; plan.banding_scratch_words()];
    let mut banding = plan.banding(&mut scratch).unwrap();
    let outcomes: Vec<AddOutcome> = repeated.iter().map(|k| banding.add_key(k)).collect();
    let repeats = &outcomes[members.len()..];
    assert!(repeats.iter().all(|&o| o == AddOutcome::Redundant));
}

#[test]
fn add_key_is_add_of_hash_key() {
    let members = keys(sized(500, 50));
    let hashes = hashed(&members);
    for kind in [Kind::Homogeneous, Kind::Standard, Kind::StandardSmash] {
        let plan = Plan::new(kind, Width::W64, hashes.len(), 7_000).unwrap();
        let mut out_keys = vec![0u8; plan.filter_bytes()];
        let mut out_hashes = vec![0u8; plan.filter_bytes()];
        let mut scratch = vec![0u64; plan.banding_scratch_words()];
        let mut banding = plan.banding(&mut scratch).unwrap();
        for k in &members {
            banding.add_key(k);
        }
        let by_keys = banding.finish(&mut out_keys).unwrap().as_bytes().to_vec();
        let mut banding = plan.banding(&mut scratch).unwrap();
        banding.add_all(&hashes).unwrap();
        banding.finish(&mut out_hashes).unwrap();
        assert_eq!(by_keys, out_hashes, "{kind:?}");
    }
}

#[test]
fn hash_keys_then_build_needs_no_allocator() {
    // The no-allocation path from keys: hash into a caller buffer.
    let members = ["red", "green", "blue", "cyan"];
    let mut hashes = [0u64; 4];
    hash_keys(&members, &mut hashes).unwrap();
    let plan = Plan::new(Kind::Homogeneous, Width::W64, 4, 10_000).unwrap();
    let mut scratch = [0u64; 512];
    assert!(plan.scratch_words() <= scratch.len());
    let mut out = [0u8; 256];
    let filter = plan.build(&hashes, &mut scratch, &mut out).unwrap();
    assert!(members.iter().all(|k| filter.contains_key(k)));
}

#[test]
fn get_key_is_get_of_hash_key() {
    let members = keys(sized(2_000, 60));
    let values: Vec<u64> = (0..members.len() as u64).map(|i| i * 7 % 32).collect();
    let pairs = members.iter().zip(values.iter().copied());
    let map = Retrieval::from_keys(pairs.clone(), 5).unwrap();
    let expected = Retrieval::from_hashes(&hashed(&members), &values, 5).unwrap();
    assert_eq!(map, expected);
    let view: RetrievalRef<'_> = map.view();
    for (k, v) in pairs {
        assert_eq!(map.get_key(k), v);
        assert_eq!(view.get_key(k.as_slice()), v);
    }
    for k in others(sized(100, 10)) {
        assert_eq!(map.get_key(&k), map.get(hash_key(&k)));
    }
    for kind in [Kind::Standard, Kind::Bumped] {
        let plan = RetrievalPlan::new(Width::W64, members.len(), 5)
            .unwrap()
            .with_kind(kind)
            .unwrap();
        let pairs = members.iter().zip(values.iter().copied());
        let built = Retrieval::build_keys(&plan, pairs).unwrap();
        assert_eq!(
            built,
            Retrieval::build(&plan, &hashed(&members), &values).unwrap()
        );
    }
}

#[test]
fn retrieval_keys_repeat_or_conflict_as_hashes_do() {
    let same = Retrieval::from_keys([("a", 1), ("b", 2), ("a", 1)], 2).unwrap();
    assert_eq!((same.get_key("a"), same.get_key("b")), (1, 2));
    assert_eq!(
        Retrieval::from_keys([("a", 1), ("b", 2), ("a", 3)], 2),
        Err(Error::ConflictingValues)
    );
    assert_eq!(
        Retrieval::from_keys([("a", 4)], 2),
        Err(Error::ValueTooWide { index: 0 })
    );
}

#[test]
fn views_answer_keys_without_an_owner() {
    let filter = Filter::from_keys(["x", "y"], 100).unwrap();
    let bytes = filter.as_bytes().to_vec();
    let view = FilterRef::from_bytes(&bytes).unwrap();
    assert!(view.contains_key("x") && view.contains_key("y"));
}

#[test]
fn try_from_hashes_builds_for_one_in_256() {
    let hashes = common::hashes(1, sized(20_000, 500));
    let filter = Filter::try_from(hashes.as_slice()).unwrap();
    assert_eq!(filter, Filter::from_hashes(&hashes, 256).unwrap());
    assert_eq!(Filter::DEFAULT_ONE_IN, 256);
    let from_vec: Filter = (&hashes).try_into().unwrap();
    assert_eq!(from_vec, filter);
    assert!(hashes.iter().all(|&h| filter.contains(h)));
    // The planned rate: the columns give at most 1 in 256 (Homogeneous
    // keeps a margin), in about 9 bits per key.
    let view = filter.view();
    assert!(view.column_fp_ppt() <= 1_000_000_000_000 / 256);
    if !cfg!(miri) {
        assert!((8_500..9_700).contains(&view.millibits_per_key()));
    }
    // An empty set is a filter too, which matches nothing.
    let empty = Filter::try_from(&[][..]).unwrap();
    assert!(!empty.contains(7));
}

#[test]
fn owners_and_views_convert() {
    let filter = Filter::from_keys(["a", "b", "c"], 100).unwrap();
    let view: FilterRef<'_> = (&filter).into();
    assert_eq!(view.as_bytes(), filter.as_bytes());
    let boxed: Box<[u8]> = filter.as_bytes().into();
    let from_box = Filter::try_from(boxed).unwrap();
    let shared: std::sync::Arc<[u8]> = filter.as_bytes().into();
    let from_arc = Filter::try_from(shared.clone()).unwrap();
    assert!(from_box.contains_key("b") && from_arc.contains_key("c"));
    assert_eq!(from_box, from_arc);
    let bytes: Vec<u8> = filter.clone().into();
    assert_eq!(bytes, filter.as_bytes());
    // Bad bytes are refused by every owner.
    let cut: Box<[u8]> = bytes[..bytes.len() - 1].into();
    assert!(Filter::try_from(cut).is_err());
    let cut: std::sync::Arc<[u8]> = bytes[..bytes.len() - 1].into();
    assert!(Filter::try_from(cut).is_err());

    let map = Retrieval::from_keys([("a", 1u64), ("b", 0)], 1).unwrap();
    let view: RetrievalRef<'_> = (&map).into();
    assert_eq!(view.get_key("a"), 1);
    let boxed: Box<[u8]> = map.as_bytes().into();
    assert_eq!(Retrieval::try_from(boxed).unwrap().get_key("a"), 1);
    let shared: std::sync::Arc<[u8]> = map.as_bytes().into();
    assert_eq!(Retrieval::try_from(shared).unwrap().get_key("b"), 0);
    let bytes: Vec<u8> = map.clone().into();
    assert_eq!(bytes, map.as_bytes());
    let cut: Box<[u8]> = bytes[1..].into();
    assert!(Retrieval::try_from(cut).is_err());
}

#[test]
fn len_counts_the_keys_given() {
    for n in [0usize, 1, 5, sized(1_000, 100)] {
        let hashes = common::hashes(2, n);
        for kind in KINDS {
            let plan = Plan::new(kind, Width::W64, n, 8_000).unwrap();
            let filter = Filter::build(&plan, &hashes).unwrap();
            assert_eq!(filter.len(), n, "{kind:?}");
            assert_eq!(filter.view().len(), n);
            assert_eq!(filter.is_empty(), n == 0);
            assert_eq!(filter.view().is_empty(), n == 0);
            assert_eq!(filter.len() as u64, filter.num_keys());
        }
        let values: Vec<u64> = hashes.iter().map(|h| h & 1).collect();
        for kind in [Kind::Standard, Kind::Bumped] {
            let plan = RetrievalPlan::new(Width::W128, n, 1)
                .unwrap()
                .with_kind(kind)
                .unwrap();
            let map = Retrieval::build(&plan, &hashes, &values).unwrap();
            assert_eq!((map.len(), map.view().len()), (n, n), "{kind:?}");
            assert_eq!(map.is_empty(), n == 0);
            assert_eq!(map.view().is_empty(), n == 0);
            if n == 0 {
                assert_eq!(map.get(12345), 0);
            }
        }
    }
    // Repeats count, as the header records them.
    let filter = Filter::from_keys(["a", "a", "b"], 100).unwrap();
    assert_eq!(filter.len(), 3);
    let empty = Filter::from_keys(Vec::<&str>::new(), 100).unwrap();
    assert!(empty.is_empty() && !empty.contains_key(""));
}

#[test]
fn fp_rate_agrees_with_the_ppt_accessors() {
    use ribbon_kernel::FpRate;
    let hashes = common::hashes(3, sized(3_000, 100));
    let budgets: &[u32] = if cfg!(miri) {
        &[13_700]
    } else {
        &[1_500, 6_300, 8_000, 13_700]
    };
    for kind in KINDS {
        for &millibits in budgets {
            let plan = Plan::new(kind, Width::W64, hashes.len(), millibits).unwrap();
            let close = |a: u64, b: u64| a.abs_diff(b) <= 2 + b / 1_000_000_000;
            let rate = plan.column_fp_rate();
            assert!(
                close(rate.parts_per_trillion(), plan.column_fp_ppt()),
                "{kind:?} {millibits}: {rate:?}"
            );
            let filter = Filter::build(&plan, &hashes).unwrap();
            let view = filter.view();
            let (column, estimated) = (view.column_fp_rate(), view.estimated_fp_rate());
            assert!(
                close(column.parts_per_trillion(), view.column_fp_ppt()),
                "{kind:?} {millibits}"
            );
            assert!(
                close(estimated.parts_per_trillion(), view.estimated_fp_ppt()),
                "{kind:?} {millibits}"
            );
            assert!(estimated >= column);
            // The units agree with each other.
            let ppm = column.parts_per_million();
            assert_eq!(ppm, (column.parts_per_trillion() + 500_000) / 1_000_000);
            let one_in = column.one_in().unwrap();
            assert!(
                FpRate::from_one_in(one_in + 1) <= column
                    && column <= FpRate::from_one_in(one_in - 1)
            );
        }
    }
}

#[test]
fn fp_rate_resolves_what_ppt_rounds_to_zero() {
    use ribbon_kernel::FpRate;
    // 50 columns: 2^-50, below one part per trillion.
    let plan = Plan::for_fp_rate(Kind::Standard, Width::W128, 1_000, 1 << 50).unwrap();
    assert_eq!(plan.column_fp_ppt(), 0);
    let rate = plan.column_fp_rate();
    assert!(rate > FpRate::ZERO);
    assert!(rate <= FpRate::from_one_in(1 << 50));
    assert_eq!(rate.parts_per_trillion(), 0);
    // 64 columns in every block: 2^-64, the finest rate, still not zero.
    let plan = Plan::for_fp_rate(Kind::Standard, Width::W128, 1_000, u64::MAX).unwrap();
    assert_eq!(plan.lower_columns(), 64);
    assert_eq!(plan.column_fp_rate().per_2_pow_64(), 1);
    assert_eq!(plan.column_fp_rate().one_in(), Some(u64::MAX));
    // No keys: zero, which matches nothing.
    let empty = Filter::from_hashes(&[], 100).unwrap();
    assert_eq!(empty.view().column_fp_rate(), FpRate::ZERO);
    assert_eq!(empty.view().estimated_fp_rate().one_in(), None);
    assert_eq!(FpRate::ZERO.to_string(), "0");
}

#[test]
fn fp_rate_units() {
    use ribbon_kernel::FpRate;
    assert_eq!(FpRate::from_one_in(256).per_2_pow_64(), 1 << 56);
    assert_eq!(FpRate::from_one_in(256).one_in(), Some(256));
    assert_eq!(FpRate::from_one_in(100).parts_per_million(), 10_000);
    assert_eq!(
        FpRate::from_one_in(100).parts_per_trillion(),
        10_000_000_000
    );
    assert_eq!(
        FpRate::from_parts_per_trillion(7_500_000_000).one_in(),
        Some(133)
    );
    assert_eq!(
        FpRate::from_parts_per_trillion(7_500_000_000).to_string(),
        "1 in 133"
    );
    // Rates of one saturate rather than wrap.
    assert_eq!(FpRate::from_one_in(1), FpRate::from_one_in(0));
    assert_eq!(FpRate::from_one_in(1).one_in(), Some(1));
    assert_eq!(FpRate::from_parts_per_trillion(u64::MAX).one_in(), Some(1));
    assert_eq!(FpRate::from_one_in(u64::MAX).one_in(), Some(u64::MAX));
    assert!(FpRate::from_one_in(1000) < FpRate::from_one_in(999));
    let debug = format!("{:?}", FpRate::from_one_in(8));
    assert!(
        debug.contains("one_in: Some(8)") && debug.contains("125000000000"),
        "{debug}"
    );
}

/// The `serde` feature: a JSON round trip of the owning twins, borrowed
/// views from bytes a deserializer lends, and errors (never panics) for
/// bytes that do not validate or cannot be borrowed.
#[cfg(feature = "serde")]
mod serde_support {
    use super::*;
    use serde::Deserialize;
    use serde::de::value::{BorrowedBytesDeserializer, BytesDeserializer, Error as ValueError};

    fn filter() -> Filter {
        Filter::from_keys(keys(500), 100).unwrap()
    }

    fn retrieval() -> Retrieval {
        let pairs = keys(500).into_iter().zip(0u64..);
        Retrieval::from_keys(pairs.map(|(k, v)| (k, v % 8)), 3).unwrap()
    }

    #[test]
    fn json_round_trip_of_the_owners() {
        let filter = filter();
        let json = serde_json::to_string(&filter).unwrap();
        let back: Filter = serde_json::from_str(&json).unwrap();
        assert_eq!(back, filter);
        assert!(keys(500).iter().all(|k| back.contains_key(k)));
        // The bytes, whichever owner or view serializes them.
        assert_eq!(serde_json::to_string(&filter.view()).unwrap(), json);
        let shared = Filter::try_from(std::sync::Arc::<[u8]>::from(filter.as_bytes())).unwrap();
        assert_eq!(serde_json::to_string(&shared).unwrap(), json);
        assert_eq!(json, serde_json::to_string(filter.as_bytes()).unwrap());

        let map = retrieval();
        let json = serde_json::to_string(&map).unwrap();
        let back: Retrieval = serde_json::from_str(&json).unwrap();
        assert_eq!(back, map);
        assert_eq!(back.get_key(&keys(500)[42]), 42 % 8);
        assert_eq!(serde_json::to_string(&map.view()).unwrap(), json);

        // Inside a larger structure, as a storage engine would keep it.
        let pair = (filter.clone(), map.clone());
        let json = serde_json::to_string(&pair).unwrap();
        let back: (Filter, Retrieval) = serde_json::from_str(&json).unwrap();
        assert_eq!(back, pair);
    }

    #[test]
    fn views_borrow_the_bytes_at_any_alignment() {
        let filter = filter();
        // One byte in: the view's bytes start at an odd address.
        let mut buffer = vec![0u8];
        buffer.extend_from_slice(filter.as_bytes());
        let bytes = &buffer[1..];
        let view =
            FilterRef::deserialize(BorrowedBytesDeserializer::<ValueError>::new(bytes)).unwrap();
        assert_eq!(view.as_bytes().as_ptr(), bytes.as_ptr(), "no copy");
        assert!(keys(500).iter().all(|k| view.contains_key(k)));

        let map = retrieval();
        let mut buffer = vec![0u8; 3];
        buffer.extend_from_slice(map.as_bytes());
        let bytes = &buffer[3..];
        let view =
            RetrievalRef::deserialize(BorrowedBytesDeserializer::<ValueError>::new(bytes)).unwrap();
        assert_eq!(view.as_bytes().as_ptr(), bytes.as_ptr());
        assert_eq!(view.get_key(&keys(500)[7]), 7);

        // The owners take borrowed bytes too (copied).
        let owned = Filter::deserialize(BorrowedBytesDeserializer::<ValueError>::new(
            filter.as_bytes(),
        ))
        .unwrap();
        assert_eq!(owned, filter);
    }

    #[test]
    fn views_refuse_bytes_they_cannot_borrow() {
        let filter = filter();
        let json = serde_json::to_string(&filter).unwrap();
        // JSON has no bytes to lend (a sequence of numbers).
        let err = serde_json::from_str::<FilterRef<'_>>(&json).unwrap_err();
        assert!(err.to_string().contains("borrowed"), "{err}");
        let err = serde_json::from_str::<RetrievalRef<'_>>(&json).unwrap_err();
        assert!(err.to_string().contains("borrowed"), "{err}");
        // Bytes that live only for the call: the owner copies them.
        let passing = || BytesDeserializer::<ValueError>::new(filter.as_bytes());
        assert!(FilterRef::deserialize(passing()).is_err());
        assert_eq!(Filter::deserialize(passing()).unwrap(), filter);
    }

    #[test]
    fn bad_bytes_are_serde_errors() {
        let filter = filter();
        let mut flipped = filter.as_bytes().to_vec();
        let last = flipped.len() - 1;
        flipped[last] ^= 1;
        let cut = &filter.as_bytes()[..100];
        for bytes in [&flipped[..], cut, &[][..], &[0xff; 300][..]] {
            let expected = FilterRef::from_bytes(bytes).unwrap_err();
            let err = FilterRef::deserialize(BorrowedBytesDeserializer::<ValueError>::new(bytes))
                .unwrap_err();
            assert_eq!(err.to_string(), expected.to_string());
            let err = Filter::deserialize(BorrowedBytesDeserializer::<ValueError>::new(bytes))
                .unwrap_err();
            assert_eq!(err.to_string(), expected.to_string());
            let json = serde_json::to_string(bytes).unwrap();
            assert!(serde_json::from_str::<Filter>(&json).is_err());
            assert!(serde_json::from_str::<Retrieval>(&json).is_err());
            assert!(
                RetrievalRef::deserialize(BorrowedBytesDeserializer::<ValueError>::new(bytes))
                    .is_err()
            );
        }
        // A filter's bytes are no retrieval structure, and the reverse.
        let json = serde_json::to_string(&filter).unwrap();
        assert!(serde_json::from_str::<Retrieval>(&json).is_err());
        let json = serde_json::to_string(&retrieval()).unwrap();
        assert!(serde_json::from_str::<Filter>(&json).is_err());
        // Not bytes at all.
        assert!(serde_json::from_str::<Filter>("[1, 2, 300]").is_err());
        assert!(serde_json::from_str::<Filter>("{\"a\": 1}").is_err());
    }
}

/// Batches answer as single queries, for filters and retrieval of every
/// kind and width. Also run unoptimized (`.ci/run`'s `unoptimized` step),
/// where both take the scalar kernel's plain loops.
#[test]
fn batches_answer_as_single_queries() {
    let members = common::hashes(4, sized(3_000, 60));
    let queries: Vec<u64> = members
        .iter()
        .copied()
        .chain(common::hashes(5, sized(3_000, 60)))
        .collect();
    for width in common::WIDTHS {
        for kind in KINDS {
            let plan = Plan::new(kind, width, members.len(), 7_000).unwrap();
            let filter = Filter::build(&plan, &members).unwrap();
            let mut answers = vec![false; queries.len()];
            filter.contains_batch(&queries, &mut answers).unwrap();
            for (&h, &a) in queries.iter().zip(&answers) {
                assert_eq!(a, filter.contains(h), "{kind:?} {width:?}");
            }
            assert!(answers[..members.len()].iter().all(|&a| a));
        }
        let values: Vec<u64> = members.iter().map(|h| h >> 59).collect();
        for kind in [Kind::Standard, Kind::Bumped] {
            let plan = RetrievalPlan::new(width, members.len(), 5)
                .unwrap()
                .with_kind(kind)
                .unwrap();
            let map = Retrieval::build(&plan, &members, &values).unwrap();
            let mut got = vec![0u64; queries.len()];
            map.get_batch(&queries, &mut got).unwrap();
            for (&h, &v) in queries.iter().zip(&got) {
                assert_eq!(v, map.get(h), "{kind:?} {width:?}");
            }
            assert_eq!(&got[..members.len()], &values[..]);
        }
    }
}
