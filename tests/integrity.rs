//! Integrity (issue 38): every serialized filter and retrieval structure
//! carries a checksum of its header and payload, and opening verifies it.
//! Every single-bit flip, every cut and extension by 1 to 64 bytes, and
//! another structure's bytes under a header are refused when verified;
//! without the checksum the structure's own checks still refuse what could
//! be read out of bounds, and what they accept queries safely.

mod common;

use common::{KINDS, WIDTHS, hashes};
use ribbon_kernel::{
    Error, Filter, FilterRef, HEADER_BYTES, Kind, Plan, Retrieval, RetrievalPlan, RetrievalRef,
    Width,
};

/// Small filters of every kind and width, Bumped ones with bumping layers
/// too (natively).
fn filters() -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    for kind in KINDS {
        for width in WIDTHS {
            let mut sizes = vec![0, if cfg!(miri) { 20 } else { 200 }];
            if kind == Kind::Bumped && !cfg!(miri) {
                sizes.push(3000);
            }
            for n in sizes {
                let plan = Plan::new(kind, width, n, 7_700).unwrap();
                let f = Filter::build(&plan, &hashes(n as u64 + 1, n)).unwrap();
                out.push((format!("{kind:?} {width:?} {n} keys"), f.into_bytes()));
            }
        }
    }
    out
}

/// Retrieval structures of both forms (Standard Ribbon and Bumped
/// layers) and both widths.
fn retrievals() -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    for kind in [Kind::Standard, Kind::Bumped] {
        for width in WIDTHS {
            let n = match (kind, cfg!(miri)) {
                (_, true) => 20,
                (Kind::Bumped, false) => 3000,
                _ => 200,
            };
            let keys = hashes(n as u64 + 7, n);
            let values: Vec<u64> = (0..n as u64).map(|i| i % 128).collect();
            let plan = RetrievalPlan::new(width, n, 7)
                .unwrap()
                .with_kind(kind)
                .unwrap();
            let r = Retrieval::build(&plan, &keys, &values).unwrap();
            out.push((
                format!("retrieval {kind:?} {width:?} {n} keys"),
                r.into_bytes(),
            ));
        }
    }
    out
}

/// How `bytes` open: verified (`Ok(())` or the error), and whether they
/// open unverified; the unverified view, if any, is queried (single and
/// batch must agree, nothing may panic or read out of bounds).
type Opened = (Result<(), Error>, bool);

fn check_filter(bytes: &[u8]) -> Opened {
    let verified = FilterRef::from_bytes(bytes).map(|_| ());
    let unverified = FilterRef::from_bytes_unverified(bytes);
    if let Ok(view) = unverified {
        let probes = hashes(bytes.len() as u64, 16);
        let mut batch = vec![false; probes.len()];
        view.contains_batch(&probes, &mut batch).unwrap();
        for (h, b) in probes.iter().zip(&batch) {
            assert_eq!(view.contains(*h), *b);
        }
    }
    (verified, unverified.is_ok())
}

fn check_retrieval(bytes: &[u8]) -> Opened {
    let verified = RetrievalRef::from_bytes(bytes).map(|_| ());
    let unverified = RetrievalRef::from_bytes_unverified(bytes);
    if let Ok(view) = unverified {
        let probes = hashes(bytes.len() as u64, 16);
        let mut batch = vec![0; probes.len()];
        view.get_batch(&probes, &mut batch).unwrap();
        for (h, v) in probes.iter().zip(&batch) {
            assert_eq!(view.get(*h), *v);
        }
    }
    (verified, unverified.is_ok())
}

/// Flips every bit of `bytes` (a sample under Miri), cuts and extends
/// them by 1 to 64 bytes: every form refused when verified. Prints how
/// many the structure's checks alone refused.
fn refuse_every_corruption(name: &str, bytes: &[u8], check: fn(&[u8]) -> Opened) {
    assert_eq!(check(bytes), (Ok(()), true), "{name}: the original");
    // Under Miri a sample of the bits (it checks the opens for undefined
    // behaviour, not the checksum's coverage).
    let step = if cfg!(miri) { 401 } else { 1 };
    let (mut flips, mut structurally) = (0, 0);
    let mut corrupted = bytes.to_vec();
    for bit in (0..bytes.len() * 8).step_by(step) {
        corrupted[bit / 8] ^= 1 << (bit % 8);
        let (verified, unverified_ok) = check(&corrupted);
        assert!(verified.is_err(), "{name}: flip of bit {bit} accepted");
        if unverified_ok {
            assert_eq!(verified, Err(Error::ChecksumMismatch), "{name}: bit {bit}");
        } else {
            structurally += 1;
        }
        flips += 1;
        corrupted[bit / 8] ^= 1 << (bit % 8);
    }
    let lengths = if cfg!(miri) { 9 } else { 1 };
    for cut in (1..=64.min(bytes.len())).step_by(lengths) {
        let (verified, _) = check(&bytes[..bytes.len() - cut]);
        assert!(verified.is_err(), "{name}: cut by {cut} accepted");
    }
    let mut state = bytes.len() as u64;
    for extra in (1..=64).step_by(lengths) {
        let mut longer = bytes.to_vec();
        longer.extend((0..extra).map(|_| common::splitmix64(&mut state) as u8));
        let (verified, unverified_ok) = check(&longer);
        assert!(
            matches!(verified, Err(Error::TrailingBytes { .. })) && !unverified_ok,
            "{name}: extended by {extra}: {verified:?}"
        );
    }
    println!(
        "{name}: {} bytes, {flips} flips refused ({structurally} by the structure's checks \
         alone), cuts and extensions by 1 to 64 bytes refused",
        bytes.len()
    );
}

#[test]
fn every_flipped_bit_cut_and_extension_of_a_filter_is_refused() {
    for (name, bytes) in filters() {
        refuse_every_corruption(&name, &bytes, check_filter);
    }
}

#[test]
fn every_flipped_bit_cut_and_extension_of_a_retrieval_structure_is_refused() {
    for (name, bytes) in retrievals() {
        refuse_every_corruption(&name, &bytes, check_retrieval);
    }
}

/// The header of one structure over another's payload (same shape, other
/// keys): refused, by the checksum alone.
#[test]
fn another_structures_bytes_under_a_header_are_refused() {
    let n = if cfg!(miri) { 20 } else { 500 };
    for kind in KINDS {
        for width in WIDTHS {
            let plan = Plan::new(kind, width, n, 8_000).unwrap();
            let a = Filter::build(&plan, &hashes(1, n)).unwrap().into_bytes();
            let b = Filter::build(&plan, &hashes(2, n)).unwrap().into_bytes();
            if a.len() != b.len() {
                // Bumped layers of other keys may take other sizes.
                continue;
            }
            let mut spliced = a[..HEADER_BYTES].to_vec();
            spliced.extend_from_slice(&b[HEADER_BYTES..]);
            assert_eq!(
                FilterRef::from_bytes(&spliced).err(),
                Some(Error::ChecksumMismatch),
                "{kind:?} {width:?}"
            );
        }
    }
    // A retrieval structure is not a filter, nor the other way round.
    let keys = hashes(3, n);
    let values = vec![1; n];
    let r = Retrieval::build(
        &RetrievalPlan::new(Width::W64, n, 4).unwrap(),
        &keys,
        &values,
    )
    .unwrap();
    assert_eq!(
        FilterRef::from_bytes(r.as_bytes()).err(),
        Some(Error::BadMagic)
    );
    let f = Filter::build(
        &Plan::new(Kind::Standard, Width::W64, n, 8_000).unwrap(),
        &keys,
    )
    .unwrap();
    assert_eq!(
        RetrievalRef::from_bytes(f.as_bytes()).err(),
        Some(Error::BadMagic)
    );
}

/// Format version 1 (before checksums) is refused with its own error, by
/// both opens: its 40-byte header would be read wrongly otherwise.
#[test]
fn version_1_is_refused() {
    let plan = Plan::new(Kind::Homogeneous, Width::W64, 100, 8_000).unwrap();
    let f = Filter::build(&plan, &hashes(4, 100)).unwrap();
    let v1 = common::as_version_1(f.as_bytes());
    assert_eq!(
        FilterRef::from_bytes(&v1).err(),
        Some(Error::UnsupportedVersion)
    );
    assert_eq!(
        FilterRef::from_bytes_unverified(&v1).err(),
        Some(Error::UnsupportedVersion)
    );
    assert_eq!(
        FilterRef::from_bytes(&common::upgrade_v1(&v1))
            .ok()
            .map(|v| v.num_keys()),
        Some(100)
    );
}
