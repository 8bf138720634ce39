//! The serialized format: pinned bytes, and untrusted input.

mod common;

use common::{KINDS, WIDTHS, fnv1a, hashes};
use ribbon_kernel::{Error, Filter, FilterRef, HEADER_BYTES, Kind, Plan, Width};

/// Digests of the exact bytes of one filter per kind and width, built from
/// fixed hashes: the same on every platform and endianness. Hashing,
/// solving and serializing must never change them. A deliberate change of
/// sizing (how many slots a plan gets) does, and then the filters written
/// before must still read back: see `filters_of_an_earlier_sizing_still_read`.
/// Each entry: kind, width, length, digest, and the digest of the same
/// filter in format version 1 (its header without the checksum, version
/// byte 1): the pinned digests of before checksums, which pin everything
/// but the checksum and the version byte.
const PINNED: [(Kind, Width, usize, u64, u64); 8] = [
    // Plans for bits per key spend exactly the budget (rounded up to a
    // word) since the static size bounds; before, the W128 Homogeneous
    // filter had 1,024 slots (digest 0x72bb73fea97e7370), then 1,152 slots
    // in 984 bytes (0x36f3f2530efcae16).
    (
        Kind::Homogeneous,
        Width::W64,
        1016,
        0x9db3b715b7e0d6e7,
        0x3513ee1133f1a7ec,
    ),
    (
        Kind::Homogeneous,
        Width::W128,
        1024,
        0x68cbcfea724f3f2b,
        0xae5f6b4e07986cd0,
    ),
    (
        Kind::Standard,
        Width::W64,
        1016,
        0x0084e00c5843be21,
        0xbbb0f42dbb3aaf90,
    ),
    (
        Kind::Standard,
        Width::W128,
        1024,
        0x6ea981e0d61ea90f,
        0xe47a1648345e400b,
    ),
    (
        Kind::StandardSmash,
        Width::W64,
        1016,
        0xfbc9de96d4902cad,
        0xe5700f06bdb27f38,
    ),
    (
        Kind::StandardSmash,
        Width::W128,
        1024,
        0x120f62e7de06bbd8,
        0x647b4282147c3d4b,
    ),
    // 5,000 keys: two bumping layers and the last one. Threshold groups
    // were 64 buckets with one exception slot before (4,994 bytes,
    // 0xbb456a892924571c, and 5,058 bytes, 0x8f7644a92a87b801).
    (
        Kind::Bumped,
        Width::W64,
        5014,
        0x2280c30ecbea5350,
        0xff399d6001915b96,
    ),
    (
        Kind::Bumped,
        Width::W128,
        5078,
        0x45be3a6afafaa3ad,
        0x02a9b638068bc75a,
    ),
];

fn pinned_filter(kind: Kind, width: Width) -> Filter {
    // Bumped Ribbon bumps from more than 2,048 keys on.
    let n = if kind == Kind::Bumped { 5000 } else { 1000 };
    let keys = hashes(42, n);
    let plan = Plan::new(kind, width, keys.len(), 7700).unwrap();
    Filter::build(&plan, &keys).unwrap()
}

#[test]
#[cfg_attr(
    miri,
    ignore = "bytes are pinned natively and under QEMU; Miri runs smaller builds"
)]
fn pinned_bytes_are_stable() {
    let mut mismatches = Vec::new();
    for (kind, width, len, digest, v1_digest) in PINNED {
        let f = pinned_filter(kind, width);
        let bytes = f.as_bytes();
        let got = (
            bytes.len(),
            fnv1a(bytes),
            fnv1a(&common::as_version_1(bytes)),
        );
        println!(
            "(Kind::{kind:?}, Width::{width:?}, {}, {:#018x}, {:#018x}),",
            got.0, got.1, got.2
        );
        if got != (len, digest, v1_digest) {
            mismatches.push((kind, width));
        }
        assert_eq!(common::checksum(bytes).to_le_bytes(), bytes[40..48]);
    }
    assert!(
        mismatches.is_empty(),
        "filter bytes changed: {mismatches:?}"
    );
}

/// A filter written before the Homogeneous sizing changed (the W128 entry
/// of `PINNED` had 1,024 slots then), in format version 1 (a 40-byte
/// header without checksum), is refused as such; its header given a
/// checksum (version 2), it opens and answers for every key on every
/// backend: only the plans and the header changed, not the payload.
#[test]
#[cfg_attr(miri, ignore = "reads a file")]
fn filters_of_an_earlier_sizing_still_read() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/homogeneous_w128_1000_keys_before_tail_sizing.bin"
    );
    let v1 = std::fs::read(path).unwrap();
    assert_eq!(fnv1a(&v1), 0x72bb73fea97e7370);
    for open in [FilterRef::from_bytes, FilterRef::from_bytes_unverified] {
        assert_eq!(open(&v1).err(), Some(Error::UnsupportedVersion));
    }
    let bytes = common::upgrade_v1(&v1);
    let view = FilterRef::from_bytes(&bytes).unwrap();
    assert_eq!(view.num_slots(), 1024);
    let keys = hashes(42, 1000);
    for backend in ribbon_kernel::Backend::ALL {
        if let Ok(v) = view.with_backend(backend) {
            assert!(keys.iter().all(|&k| v.contains(k)), "{backend:?}");
        }
    }
}

fn sample_filters() -> Vec<Filter> {
    let mut v = Vec::new();
    for kind in KINDS {
        for width in WIDTHS {
            let sizes: &[(usize, u32)] = if cfg!(miri) {
                &[(0, 8000), (40, 7700)]
            } else {
                &[(0, 8000), (1, 1000), (300, 7700), (300, 2500)]
            };
            // Bumped Ribbon: also a filter with bumping layers.
            let bumping: &[(usize, u32)] = match (kind, cfg!(miri)) {
                (Kind::Bumped, false) => &[(5000, 7700)],
                _ => &[],
            };
            for &(n, millibits) in sizes.iter().chain(bumping) {
                let plan = Plan::new(kind, width, n, millibits).unwrap();
                v.push(Filter::build(&plan, &hashes(n as u64, n)).unwrap());
            }
        }
    }
    v
}

/// Queries an accepted view broadly: single and batch must agree, and
/// nothing may panic or read out of bounds.
fn exercise(view: FilterRef<'_>) {
    let probes: Vec<u64> = hashes(99, if cfg!(miri) { 8 } else { 300 })
        .into_iter()
        .chain([0, u64::MAX, 1, 1 << 63])
        .collect();
    let mut batch = vec![false; probes.len()];
    view.contains_batch(&probes, &mut batch).unwrap();
    for (h, b) in probes.iter().zip(&batch) {
        assert_eq!(view.contains(*h), *b);
    }
}

#[test]
fn every_truncation_and_extension_is_refused() {
    for f in sample_filters() {
        let bytes = f.as_bytes();
        // Under Miri (slow): every length up to the header, a sample after.
        let step = if cfg!(miri) { 13 } else { 1 };
        for len in (0..bytes.len()).filter(|&l| l <= HEADER_BYTES || l % step == 0) {
            assert!(
                FilterRef::from_bytes(&bytes[..len]).is_err(),
                "accepted {len} of {}",
                bytes.len()
            );
        }
        let mut longer = bytes.to_vec();
        longer.push(0);
        assert_eq!(
            FilterRef::from_bytes(&longer).err(),
            Some(Error::TrailingBytes {
                expected: bytes.len(),
                given: longer.len()
            })
        );
        exercise(FilterRef::from_bytes(bytes).unwrap());
    }
}

/// Every header bit flipped alone: refused (the checksum covers the
/// header); without the checksum, refused by the header's checks or
/// harmless (a consistent header that queries safely).
#[test]
fn header_bit_flips_are_refused_or_harmless() {
    for f in sample_filters() {
        let original = f.as_bytes();
        // Under Miri (slow) a sample of the bits, every field still hit.
        let step = if cfg!(miri) { 7 } else { 1 };
        for bit in (0..HEADER_BYTES * 8).step_by(step) {
            let mut bytes = original.to_vec();
            bytes[bit / 8] ^= 1 << (bit % 8);
            assert!(FilterRef::from_bytes(&bytes).is_err(), "flip of bit {bit}");
            match FilterRef::from_bytes_unverified(&bytes) {
                Err(_) => {}
                // Some flips (seed, key count) leave a consistent header:
                // it must then be queryable like any filter.
                Ok(view) => {
                    let byte = bit / 8;
                    assert!(
                        (8..12).contains(&byte)
                            || (16..24).contains(&byte)
                            || byte == 5
                            || (40..48).contains(&byte),
                        "flip of header bit {bit} accepted"
                    );
                    exercise(view);
                }
            }
        }
    }
}

/// Bumped Ribbon: every bit of the layer table and of the first layer's
/// threshold groups and list, flipped alone, is refused or leaves a filter
/// that queries without panic, single equal to batch.
#[test]
#[cfg_attr(
    miri,
    ignore = "minutes under Miri; safe code, and tests/backends.rs runs a Bumped filter through the kernels there"
)]
fn bumped_table_and_threshold_bit_flips_are_refused_or_harmless() {
    let n = 5000;
    for width in WIDTHS {
        let plan = Plan::new(Kind::Bumped, width, n, 7700).unwrap();
        let f = Filter::build(&plan, &hashes(n as u64, n)).unwrap();
        let original = f.as_bytes();
        let layers = u64::from_le_bytes(original[24..32].try_into().unwrap()) as usize;
        assert!(layers >= 2, "{width:?}: {layers} layers");
        // Header, table, and the first layer's thresholds (its groups and
        // list come first in its data; 64 bytes cover both here).
        let end = HEADER_BYTES + 32 * layers + 64;
        let mut accepted = 0;
        for bit in 0..end * 8 {
            let mut bytes = original.to_vec();
            bytes[bit / 8] ^= 1 << (bit % 8);
            assert!(FilterRef::from_bytes(&bytes).is_err(), "flip of bit {bit}");
            if let Ok(view) = FilterRef::from_bytes_unverified(&bytes) {
                accepted += 1;
                exercise(view);
            }
        }
        println!(
            "{width:?}: {accepted} of {} flips accepted without the checksum, none with it",
            end * 8
        );
    }
}

#[test]
fn random_bytes_never_panic() {
    let mut state = common::Hashes::new(7);
    let mut accepted = 0;
    let mut shapes = std::collections::BTreeSet::new();
    let rounds = if cfg!(miri) { 100 } else { 50_000 };
    for round in 0..rounds {
        let len = (state.next().unwrap() % 200) as usize;
        let mut bytes: Vec<u8> = (0..len).map(|_| state.next().unwrap() as u8).collect();
        // Half the time start from a plausible header so that deeper
        // checks are reached.
        if round % 2 == 0 && len >= HEADER_BYTES {
            bytes[..5].copy_from_slice(b"RbnK\x02");
            bytes[5] %= 4;
            bytes[6] = if bytes[6] & 1 == 0 { 64 } else { 128 };
            bytes[7] %= 70;
            bytes[12..16].fill(0);
            // At most 2^40 keys.
            bytes[21..24].fill(0);
            let blocks = bytes[24] % 8;
            let upper_start = bytes[32] % 10;
            bytes[24..40].fill(0);
            bytes[24] = blocks;
            bytes[32] = upper_start;
            // Usually give it the length the header implies.
            if upper_start <= blocks && round % 4 == 0 {
                let words =
                    usize::from(blocks) * usize::from(bytes[7]) + usize::from(blocks - upper_start);
                let word_bytes = usize::from(bytes[6]) / 8;
                bytes.resize(HEADER_BYTES + words * word_bytes, 0xa5);
            }
        }
        // The structure's checks (random bytes carry no valid checksum:
        // verified, every buffer is refused).
        if let Ok(view) = FilterRef::from_bytes_unverified(&bytes) {
            accepted += 1;
            shapes.insert(format!("{:?} {:?}", view.kind(), view.width()));
            exercise(view);
            assert_eq!(
                FilterRef::from_bytes(&bytes).err(),
                Some(Error::ChecksumMismatch)
            );
        }
    }
    println!(
        "accepted {accepted} of {rounds} random buffers, {} kinds and widths",
        shapes.len()
    );
    // The plausible headers must reach the queries: enough buffers pass
    // validation, of every kind and width (3,159 of 50,000 when written).
    assert!(
        accepted * 50 >= rounds,
        "only {accepted} of {rounds} accepted"
    );
    if !cfg!(miri) {
        assert_eq!(shapes.len(), 6, "{shapes:?}");
    }
}

#[test]
fn any_alignment_reads_the_same() {
    for f in sample_filters() {
        let bytes = f.as_bytes();
        let probes = hashes(3, if cfg!(miri) { 20 } else { 500 });
        let expect: Vec<bool> = probes.iter().map(|&h| f.contains(h)).collect();
        let offsets = if cfg!(miri) { 1..3 } else { 1..8 };
        for offset in offsets {
            let mut shifted = vec![0u8; offset];
            shifted.extend_from_slice(bytes);
            let view = FilterRef::from_bytes(&shifted[offset..]).unwrap();
            let got: Vec<bool> = probes.iter().map(|&h| view.contains(h)).collect();
            assert_eq!(got, expect);
        }
    }
}

/// `FilterRef::SIZE_PREFIX_BYTES` (C: `RIBBON_SIZE_PREFIX_BYTES`, 560)
/// bytes from a filter's start give its length, whatever the kind; a
/// Bumped filter's header alone does not (its layer table follows).
#[test]
#[cfg_attr(miri, ignore = "a Bumped build of 10^5 keys takes minutes under Miri")]
fn the_size_prefix_gives_the_length() {
    assert_eq!(FilterRef::SIZE_PREFIX_BYTES, 560);
    for kind in KINDS {
        let keys = hashes(7, 100_000);
        let plan = Plan::new(kind, Width::W64, keys.len(), 8_000).unwrap();
        let mut block = Filter::build(&plan, &keys).unwrap().as_bytes().to_vec();
        let len = block.len();
        block.extend_from_slice(&[0xa5; 64]);
        let prefix = &block[..FilterRef::SIZE_PREFIX_BYTES];
        assert_eq!(FilterRef::serialized_len(prefix), Ok(len), "{kind:?}");
        let header_only = FilterRef::serialized_len(&block[..HEADER_BYTES]);
        match kind {
            Kind::Bumped => assert!(
                matches!(header_only, Err(Error::Truncated { .. })),
                "{header_only:?}"
            ),
            _ => assert_eq!(header_only, Ok(len), "{kind:?}"),
        }
    }
}
