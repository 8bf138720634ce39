//! The structure-aware fuzz case (issue 38), shared by the cargo-fuzz
//! target `mutated_structure` and by `tests/fuzz_regressions.rs`: a valid
//! filter (any kind) or retrieval structure (Standard Ribbon or Bumped
//! layers) built from the input, then its fields set to arbitrary values
//! (header fields, layer table entries, bytes of the data, its length),
//! with the checksum left as it was or computed again. Byte-level fuzzing
//! rarely gets past the header's checks and never past the checksum;
//! this case reaches the layers' validation and the queries with every
//! field wrong in turn. Both include this file by path beside `cases.rs`
//! and `retrieval_cases.rs` (as `super::cases` and
//! `super::retrieval_cases`). A case's `Debug` output is a ready
//! reproducer.

use arbitrary::Arbitrary;
use ribbon_kernel::{
    Error, Filter, FilterRef, Kind, Plan, Retrieval, RetrievalPlan, RetrievalRef, Width,
};

use super::cases::answers_on_every_backend;
use super::retrieval_cases::values_on_every_backend;

/// A structure to build, and what to do to it.
#[derive(Arbitrary, Debug)]
pub struct MutatedCase {
    /// A retrieval structure rather than a filter.
    pub retrieval: bool,
    /// Filters: Homogeneous, Standard, StandardSmash, Bumped (by `kind %
    /// 4`); retrieval: Standard Ribbon or Bumped layers (`kind % 2`).
    pub kind: u8,
    pub wide: bool,
    /// Columns (filters) or value bits (retrieval): 1 + `bits % 16`.
    pub bits: u8,
    /// Keys: `keys % 6000` (Bumped layers bump from 2,049 on).
    pub keys: u16,
    pub seed: u64,
    /// Compute the checksum again after the mutations, as a forger would:
    /// then only the structure's own checks stand between the bytes and
    /// the queries.
    pub reseal: bool,
    pub mutations: Vec<Mutation>,
}

/// One change to the structure's bytes.
#[derive(Arbitrary, Debug)]
pub enum Mutation {
    /// A header field (version, kind, width, columns, seed, reserved, keys,
    /// blocks or layers, upper blocks, checksum: `field % 10`) set to
    /// `value` (its low bytes).
    Header { field: u8, value: u64 },
    /// A field of a layer table entry (seed, listed, keys, blocks, upper
    /// blocks: `field % 5`) of layer `layer % 16` set to `value`.
    Layer { layer: u8, field: u8, value: u64 },
    /// A byte after the header, at `at` modulo the rest, xored with `xor`.
    Byte { at: u32, xor: u8 },
    /// The bytes cut short or extended (with `by` zeros) by `by`.
    Length { cut: bool, by: u8 },
}

/// (offset, size) of the header fields of `src/layout.rs`.
const HEADER_FIELDS: [(usize, usize); 10] = [
    (4, 1),
    (5, 1),
    (6, 1),
    (7, 1),
    (8, 4),
    (12, 4),
    (16, 8),
    (24, 8),
    (32, 8),
    (40, 8),
];

/// (offset, size) of a layer table entry's fields
/// (`src/bumped_layout.rs`), which start after the 48-byte header.
const ENTRY_FIELDS: [(usize, usize); 5] = [(0, 4), (4, 4), (8, 8), (16, 8), (24, 8)];

fn set(bytes: &mut [u8], (at, size): (usize, usize), value: u64) {
    if let Some(field) = bytes.get_mut(at..at + size) {
        field.copy_from_slice(&value.to_le_bytes()[..size]);
    }
}

fn splitmix(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The checksum of `src/layout.rs`, computed with `xxhash-rust`.
fn seal(bytes: &mut [u8]) {
    use xxhash_rust::xxh3::{xxh3_64, xxh3_64_with_seed};
    if bytes.len() >= 48 {
        let sum = xxh3_64_with_seed(&bytes[48..], xxh3_64(&bytes[..40]));
        bytes[40..48].copy_from_slice(&sum.to_le_bytes());
    }
}

/// The structure `case` describes: its bytes, keys and (retrieval)
/// values.
fn build(case: &MutatedCase) -> (Vec<u8>, Vec<u64>, Vec<u64>) {
    let width = if case.wide { Width::W128 } else { Width::W64 };
    let bits = 1 + u32::from(case.bits % 16);
    let n = usize::from(case.keys % 6000);
    let mut state = case.seed;
    let keys: Vec<u64> = (0..n).map(|_| splitmix(&mut state)).collect();
    let values: Vec<u64> = keys.iter().map(|k| k >> (64 - bits)).collect();
    if case.retrieval {
        let kind = [Kind::Standard, Kind::Bumped][usize::from(case.kind % 2)];
        let plan = RetrievalPlan::new(width, n, bits)
            .and_then(|p| p.with_kind(kind))
            .expect("a retrieval plan");
        let r = Retrieval::build(&plan, &keys, &values).expect("a retrieval build");
        (r.into_bytes(), keys, values)
    } else {
        let kind = [
            Kind::Homogeneous,
            Kind::Standard,
            Kind::StandardSmash,
            Kind::Bumped,
        ][usize::from(case.kind % 4)];
        let plan = Plan::new(kind, width, n, bits * 1000).expect("a plan");
        let f = Filter::build(&plan, &keys).expect("a filter build");
        (f.into_bytes(), keys, Vec::new())
    }
}

/// Builds the structure, mutates it, and checks: unchanged bytes open
/// and keep every key; changed bytes are refused when the checksum is
/// verified (unless resealed); the two opens differ by the checksum
/// alone; whatever opens answers alike on every backend, single and
/// batch, without panic.
pub fn check_mutated(case: &MutatedCase) {
    let (original, keys, values) = build(case);
    let mut bytes = original.clone();
    for m in &case.mutations {
        match *m {
            Mutation::Header { field, value } => {
                set(&mut bytes, HEADER_FIELDS[usize::from(field % 10)], value);
            }
            Mutation::Layer {
                layer,
                field,
                value,
            } => {
                let (at, size) = ENTRY_FIELDS[usize::from(field % 5)];
                let entry = 48 + 32 * usize::from(layer % 16);
                set(&mut bytes, (entry + at, size), value);
            }
            Mutation::Byte { at, xor } => {
                let rest = bytes.len().saturating_sub(48);
                if rest > 0 {
                    bytes[48 + at as usize % rest] ^= xor;
                }
            }
            Mutation::Length { cut, by } => {
                let len = if cut {
                    bytes.len().saturating_sub(usize::from(by))
                } else {
                    bytes.len() + usize::from(by)
                };
                bytes.resize(len, 0);
            }
        }
    }
    if case.reseal {
        seal(&mut bytes);
    }
    let changed = bytes != original;
    let probes: Vec<u64> = {
        let mut state = case.seed ^ 0x5eed;
        let mut p: Vec<u64> = keys.iter().take(64).copied().collect();
        p.extend((0..64).map(|_| splitmix(&mut state)));
        p
    };
    // Both opens' errors first, then the unverified view's answers (the
    // members' must be what was built, if nothing changed).
    let members = keys.len().min(64);
    let opens = if case.retrieval {
        (
            RetrievalRef::from_bytes(&bytes).err(),
            RetrievalRef::from_bytes_unverified(&bytes).err(),
        )
    } else {
        (
            FilterRef::from_bytes(&bytes).err(),
            FilterRef::from_bytes_unverified(&bytes).err(),
        )
    };
    check_opens(opens.0.as_ref(), opens.1.as_ref(), changed, case.reseal);
    if case.retrieval {
        if let Ok(view) = RetrievalRef::from_bytes_unverified(&bytes) {
            let got = values_on_every_backend(view, &probes);
            assert!(
                changed || got[..members] == values[..members],
                "lost a value"
            );
        }
    } else if let Ok(view) = FilterRef::from_bytes_unverified(&bytes) {
        let got = answers_on_every_backend(view, &probes);
        assert!(changed || got[..members].iter().all(|&a| a), "lost a key");
    }
}

/// The verified and unverified opens' errors, against what the case did.
fn check_opens(verified: Option<&Error>, unverified: Option<&Error>, changed: bool, reseal: bool) {
    if !changed {
        assert_eq!((verified, unverified), (None, None), "the built bytes");
        return;
    }
    if !reseal {
        assert!(verified.is_some(), "changed bytes opened verified");
    }
    match (verified, unverified) {
        (None, None) | (Some(Error::ChecksumMismatch), None) => {}
        (Some(a), Some(b)) => assert_eq!(a, b),
        (a, b) => panic!("verified {a:?}, unverified {b:?}"),
    }
}
