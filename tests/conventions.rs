//! The conventions Rust users reach for: `AsRef<[u8]>`, `TryFrom`,
//! `Default`, owners other than `Vec<u8>`, the one-line build, and errors
//! that say what was needed and what was given.

use std::sync::Arc;

use ribbon_kernel::{Error, Filter, FilterRef, Kind, Plan, Width};

mod common;
use common::hashes;

#[test]
fn defaults_are_the_recommended_kind_and_width() {
    assert_eq!(Kind::default(), Kind::Homogeneous);
    assert_eq!(Width::default(), Width::W64);
}

#[test]
fn one_line_build_meets_its_fp_rate() {
    let n = if cfg!(miri) { 500 } else { 20_000 };
    let keys = hashes(1, n);
    let filter = Filter::from_hashes(&keys, 100).unwrap();
    let view = filter.view();
    assert_eq!((view.kind(), view.width()), (Kind::Homogeneous, Width::W64));
    assert!(keys.iter().all(|&h| filter.contains(h)));
    // The plan's own FP rate is at most 1 %.
    assert!(view.column_fp_ppt() <= 10_000_000_000);
    assert_eq!(filter.num_keys(), n as u64);
    assert_eq!(
        Filter::from_hashes(&keys, 1).err(),
        Some(Error::InvalidFpRate)
    );
    // No keys: an empty filter that matches nothing.
    let empty = Filter::from_hashes(&[], 100).unwrap();
    assert!(!empty.contains(keys[0]));
}

#[test]
fn bytes_round_trip_through_every_owner() {
    let keys = hashes(2, if cfg!(miri) { 300 } else { 3_000 });
    let filter = Filter::from_hashes(&keys, 1000).unwrap();
    let bytes: &[u8] = filter.as_ref();
    assert_eq!(bytes, filter.as_bytes());
    assert_eq!(FilterRef::try_from(bytes).unwrap().as_ref(), bytes);

    let arc: Arc<[u8]> = Arc::from(bytes);
    let from_arc = Filter::from_bytes(Arc::clone(&arc)).unwrap();
    let boxed: Box<[u8]> = bytes.into();
    let from_box = Filter::from_bytes(boxed).unwrap();
    let from_slice = Filter::from_bytes(bytes).unwrap();
    let from_vec = Filter::try_from(bytes.to_vec()).unwrap();
    // No copy: the Arc's bytes are the filter's.
    assert_eq!(from_arc.as_bytes().as_ptr(), arc.as_ptr());
    assert!(from_arc == filter && from_box == filter && from_slice == filter);
    assert!(from_vec == filter);
    for &h in &keys {
        assert!(from_arc.contains(h) && from_box.contains(h) && from_slice.contains(h));
    }
    let other = Filter::from_hashes(&hashes(3, keys.len()), 1000).unwrap();
    assert!(other != filter);
}

#[test]
#[cfg_attr(miri, ignore = "writes a file")]
fn misaligned_bytes_and_files() {
    let keys = hashes(4, 5_000);
    let filter = Filter::from_hashes(&keys, 500).unwrap();
    // Cargo's folder for test files (inside target/, which WASI runs see).
    let path = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("conventions-{}.filter", std::env::consts::ARCH));
    std::fs::write(&path, &filter).unwrap();
    let read = std::fs::read(&path).unwrap();
    std::fs::remove_file(&path).unwrap();
    assert_eq!(read, filter.as_bytes());
    for offset in 1..8 {
        let mut buf = vec![0u8; offset];
        buf.extend_from_slice(&read);
        let view = FilterRef::try_from(&buf[offset..]).unwrap();
        assert!(keys.iter().all(|&h| view.contains(h)));
    }
}

#[test]
fn conversions_validate() {
    let filter = Filter::from_hashes(&hashes(5, 100), 100).unwrap();
    let mut bytes = filter.as_bytes().to_vec();
    bytes.push(0);
    let len = filter.as_bytes().len();
    let trailing = Error::TrailingBytes {
        expected: len,
        given: len + 1,
    };
    assert_eq!(FilterRef::try_from(&bytes[..]).err(), Some(trailing));
    assert_eq!(Filter::try_from(bytes.clone()).err(), Some(trailing));
    let truncated = Error::Truncated {
        needed: len,
        given: len - 1,
    };
    assert_eq!(Filter::from_bytes(&bytes[..len - 1]).err(), Some(truncated));
    assert_eq!(
        FilterRef::try_from(&bytes[..3]).err(),
        Some(Error::Truncated {
            needed: ribbon_kernel::HEADER_BYTES,
            given: 3
        })
    );
}

#[test]
fn errors_say_what_was_needed_and_given() {
    fn is_copy<T: Copy>() {}
    is_copy::<Error>();
    let keys = hashes(6, 1000);
    let plan = Plan::new(Kind::Standard, Width::W128, 1000, 8000).unwrap();
    let mut scratch = vec![0u64; 10];
    let mut out = vec![0u8; plan.filter_bytes()];
    let err = plan.build(&keys, &mut scratch, &mut out).unwrap_err();
    assert_eq!(
        err,
        Error::ScratchTooSmall {
            needed: plan.scratch_words(),
            given: 10
        }
    );
    let text = err.to_string();
    assert!(text.contains("10 u64 words given"), "{text}");
    assert!(
        text.contains(&format!("{} needed", plan.scratch_words())),
        "{text}"
    );
    let err = Plan::new(Kind::Standard, Width::W128, usize::MAX, 8000).unwrap_err();
    if usize::BITS == 64 {
        assert_eq!(
            err.to_string(),
            format!(
                "too many keys: {} given, at most {} accepted",
                usize::MAX,
                1u64 << 40
            )
        );
    }
    let err = Plan::for_bytes(Kind::Homogeneous, Width::W64, 1000, 100).unwrap_err();
    assert_eq!(
        err,
        Error::BudgetTooSmall {
            needed: 48 + 16 * 8,
            given: 100
        }
    );
    assert!(err.to_string().contains("100 bytes given, at least 176"));
    // Every error has a code and a static message for C.
    for e in Error::ALL {
        assert!(e.code() < 0 && !e.as_str().is_empty());
        let first_word = |t: &str| t.split(' ').next().unwrap().to_string();
        assert_eq!(first_word(&e.to_string()), first_word(e.as_str()));
    }
}

#[test]
fn nonsensical_budgets_are_refused() {
    // 1 millibit per key once made a 48-byte filter answering "maybe" to
    // almost every hash.
    for millibits in [1, 999] {
        assert_eq!(
            Plan::new(Kind::Homogeneous, Width::W64, 1000, millibits).err(),
            Some(Error::InvalidBitsPerKey)
        );
    }
    let plan = Plan::new(Kind::Homogeneous, Width::W64, 1000, 1000).unwrap();
    // One bit per key: about half of all hashes match, but no more.
    let keys = hashes(7, 1000);
    let filter = Filter::build(&plan, &keys).unwrap();
    let probes = if cfg!(miri) { 2_000 } else { 100_000 };
    let others = hashes(8, probes);
    let matched = others.iter().filter(|&&h| filter.contains(h)).count();
    assert!(matched < probes * 3 / 4, "{matched} of {probes}");
}
