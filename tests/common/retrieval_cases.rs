//! Retrieval fuzz cases and their checks (issue 19), shared by the
//! cargo-fuzz targets `retrieval_from_bytes` and `retrieval_build_get` in
//! `fuzz/` and by `tests/fuzz_regressions.rs`, which replays saved inputs
//! under plain `cargo test`. Both include this file by path (it is not a
//! module of `tests/common/mod.rs`). A case's `Debug` output is a ready
//! reproducer.

use std::collections::HashMap;

use arbitrary::Arbitrary;
use ribbon_kernel::{
    Backend, Error, FilterRef, MAX_VALUE_BITS, Retrieval, RetrievalPlan, RetrievalRef, Width,
};

fn backends() -> impl Iterator<Item = Backend> {
    Backend::ALL.into_iter().filter(|b| b.is_available())
}

/// The values of `bits` bits: `2^bits - 1`.
fn mask(bits: u32) -> u64 {
    if bits >= 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    }
}

/// SplitMix64 step: probes beyond those a case names.
fn splitmix(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Queries `view` on every available backend, single and batch: every
/// answer below `2^value_bits`, every backend equal to the scalar single
/// answers, which are returned.
pub fn values_on_every_backend(view: RetrievalRef<'_>, probes: &[u64]) -> Vec<u64> {
    let bits = view.value_bits();
    assert!((1..=MAX_VALUE_BITS).contains(&bits), "value_bits {bits}");
    let scalar = view.with_backend(Backend::Scalar).unwrap();
    let expect: Vec<u64> = probes.iter().map(|&h| scalar.get(h)).collect();
    if let Some(v) = expect.iter().find(|&&v| v & !mask(bits) != 0) {
        panic!("value {v:#x} wider than {bits} bits");
    }
    for backend in backends() {
        let v = view.with_backend(backend).unwrap();
        assert_eq!(v.backend(), backend);
        let mut batch = vec![0u64; probes.len()];
        v.get_batch(probes, &mut batch).unwrap();
        assert_eq!(
            batch,
            expect,
            "{} batch differs from scalar",
            backend.name()
        );
        for (i, (&h, &e)) in probes.iter().zip(&expect).enumerate() {
            assert_eq!(
                v.get(h),
                e,
                "{} single differs from scalar at probe {i}",
                backend.name()
            );
        }
    }
    let mut short = vec![0u64; probes.len() + 1];
    assert_eq!(
        view.get_batch(probes, &mut short),
        Err(Error::LengthMismatch {
            expected: probes.len(),
            given: probes.len() + 1
        })
    );
    expect
}

/// Arbitrary bytes as a serialized retrieval structure: refused with an
/// error, or a structure of exactly these bytes that every backend
/// evaluates identically, single and batch, below `2^value_bits`.
pub fn check_retrieval_bytes(data: &[u8]) {
    // The structure's checks first, then the checksum: verified and
    // unverified opens refuse alike but for the checksum.
    match (
        RetrievalRef::from_bytes(data),
        RetrievalRef::from_bytes_unverified(data),
    ) {
        (Ok(_), Ok(_)) | (Err(Error::ChecksumMismatch), Ok(_)) => {}
        (Err(verified), Err(unverified)) => assert_eq!(verified, unverified),
        (verified, unverified) => panic!("{verified:?} against {unverified:?} unverified"),
    }
    let view = match RetrievalRef::from_bytes_unverified(data) {
        Ok(view) => view,
        Err(e) => {
            // The owning twin refuses alike.
            assert_eq!(
                Retrieval::from_bytes_unverified(data.to_vec()).err(),
                Some(e)
            );
            return;
        }
    };
    assert_eq!(view.retrieval_bytes(), data.len());
    assert_eq!(view.as_bytes(), data);
    assert!(view.num_keys() <= view.num_slots() as u64);
    // The exact length only: one byte less or more is refused, and the
    // magic keeps it from opening as a filter.
    assert!(RetrievalRef::from_bytes_unverified(&data[..data.len() - 1]).is_err());
    let mut longer = data.to_vec();
    longer.push(0);
    assert!(RetrievalRef::from_bytes_unverified(&longer).is_err());
    assert!(FilterRef::from_bytes_unverified(data).is_err());

    let mut probes = vec![0, 1, u64::MAX, 1 << 63, data.len() as u64];
    probes.extend(data.chunks(8).map(|c| {
        let mut b = [0u8; 8];
        b[..c.len()].copy_from_slice(c);
        u64::from_le_bytes(b)
    }));
    let mut state = data.len() as u64;
    probes.extend((0..40).map(|_| splitmix(&mut state)));
    let values = values_on_every_backend(view, &probes);
    // The owning twin answers the same.
    let owned = Retrieval::from_bytes_unverified(data.to_vec()).unwrap();
    assert_eq!(owned.value_bits(), view.value_bits());
    assert_eq!(owned.num_keys(), view.num_keys());
    for (&h, &v) in probes.iter().zip(&values) {
        assert_eq!(owned.get(h), v);
    }
}

/// A retrieval structure built from arbitrary keys, values and plan.
#[derive(Arbitrary, Debug)]
pub struct RetrievalBuildCase {
    pub wide: bool,
    /// Bits per value as given to the plan: 0 and 65 and more must be
    /// refused.
    pub value_bits: u8,
    /// The plan's key count minus the number of keys (negative: fewer
    /// than the keys, which the build refuses).
    pub slack: i8,
    pub seed: u32,
    /// Try 1 to 3 seeds instead of the plan's 64, where a consistent key
    /// set may fail to build (about 1 seed in 20 does).
    pub few_seeds: bool,
    /// Keep the values as given instead of cutting them to `value_bits`
    /// (most are then too wide).
    pub raw_values: bool,
    /// Leave the last value out (a length mismatch).
    pub drop_value: bool,
    /// 1: `out` one byte short; 2: scratch one word short; else exact.
    pub shortfall: u8,
    /// Build on Bumped layers whatever the key count (a plan takes them
    /// from 10,000 keys on).
    pub bumped: bool,
    pub keys: Vec<(u64, u64)>,
    /// `(from, to, same)`: key `to` (modulo the count) takes key `from`'s
    /// hash, and its value too if `same` (otherwise a value differing in
    /// bit 0): duplicates and conflicts, which random hashes never make.
    pub duplicates: Vec<(u16, u16, bool)>,
    pub probes: Vec<u64>,
}

/// Builds the case and checks the outcome: every error is one of the
/// documented ones and its condition holds (`ConflictingValues` exactly
/// when two equal hashes have different values, `ValueTooWide` exactly
/// when a value is too wide, ...), with `out`'s header zeroed; a success
/// means no condition holds, every backend builds the same bytes, and
/// every key gets its value back on every backend, single and batch.
pub fn check_retrieval_build(case: &RetrievalBuildCase) {
    let bits = u32::from(case.value_bits);
    let width = if case.wide { Width::W128 } else { Width::W64 };
    let mut keys = case.keys.clone();
    let n = keys.len();
    if n > 0 {
        for &(from, to, same) in &case.duplicates {
            let (from, to) = (usize::from(from) % n, usize::from(to) % n);
            let (hash, value) = keys[from];
            keys[to] = (hash, if same { value } else { value ^ 1 });
        }
    }
    let hashes: Vec<u64> = keys.iter().map(|&(h, _)| h).collect();
    let mut values: Vec<u64> = keys.iter().map(|&(_, v)| v).collect();
    if !case.raw_values {
        for v in &mut values {
            *v &= mask(bits);
        }
    }
    if case.drop_value {
        values.pop();
    }
    let planned = usize::try_from((n as i64 + i64::from(case.slack)).max(0)).unwrap();

    let plan = match RetrievalPlan::new(width, planned, bits) {
        Ok(plan) => {
            assert!(
                (1..=MAX_VALUE_BITS).contains(&bits),
                "{bits} value bits planned"
            );
            plan
        }
        Err(e) => {
            assert_eq!(e, Error::InvalidValueBits, "plan refused");
            assert!(
                !(1..=MAX_VALUE_BITS).contains(&bits),
                "{bits} value bits refused"
            );
            return;
        }
    };
    assert_eq!(plan.value_bits(), bits);
    assert_eq!(plan.num_keys(), planned);
    let seeds = if case.few_seeds {
        1 + case.seed % 3
    } else {
        64
    };
    let plan = if case.bumped {
        plan.with_kind(ribbon_kernel::Kind::Bumped).unwrap()
    } else {
        plan
    };
    let plan = plan.with_seed(case.seed).with_max_seeds(seeds);
    let len = plan.retrieval_bytes();
    let words = plan.scratch_words();
    let out_len = if case.shortfall == 1 { len - 1 } else { len };
    let scratch_words = if case.shortfall == 2 && words > 0 {
        words - 1
    } else {
        words
    };

    // Every condition the documented errors stand for, as its error.
    let mut conditions = Vec::new();
    if values.len() != hashes.len() {
        conditions.push(Error::LengthMismatch {
            expected: hashes.len(),
            given: values.len(),
        });
    }
    if hashes.len() > planned {
        conditions.push(Error::TooManyKeys {
            limit: planned as u64,
            given: hashes.len() as u64,
        });
    }
    let too_wide: Vec<usize> = (0..values.len())
        .filter(|&i| values[i] & !mask(bits) != 0)
        .collect();
    if out_len < len {
        conditions.push(Error::OutputTooSmall {
            needed: len,
            given: out_len,
        });
    }
    if scratch_words < words {
        conditions.push(Error::ScratchTooSmall {
            needed: words,
            given: scratch_words,
        });
    }
    let mut first_value = HashMap::new();
    let conflicting = hashes
        .iter()
        .zip(&values)
        .any(|(&h, &v)| *first_value.entry(h).or_insert(v) != v);

    let mut scratch = vec![0u64; scratch_words];
    let mut out = vec![0xa5u8; out_len];
    let result = plan
        .with_backend(Backend::Scalar)
        .unwrap()
        .build(&hashes, &values, &mut scratch, &mut out)
        .map(|view| view.retrieval_bytes());
    let built = match result {
        Ok(built) => built,
        Err(e) => {
            match e {
                Error::ValueTooWide { index } => {
                    assert!(
                        too_wide.contains(&index),
                        "{e:?}: value {:#x}",
                        values[index]
                    );
                }
                Error::ConflictingValues => assert!(conflicting, "{e:?} without a conflict"),
                Error::ConstructionFailed => assert!(
                    case.few_seeds && plan.kind() == ribbon_kernel::Kind::Standard,
                    "no seed of {seeds} built a consistent key set"
                ),
                e => assert!(conditions.contains(&e), "{e:?}; conditions {conditions:?}"),
            }
            // No structure survives in `out`.
            let header = out_len.min(ribbon_kernel::HEADER_BYTES);
            assert!(
                out[..header].iter().all(|&b| b == 0),
                "{e:?}: header not zeroed"
            );
            assert!(RetrievalRef::from_bytes(&out).is_err());
            return;
        }
    };
    assert!(
        conditions.is_empty() && too_wide.is_empty() && !conflicting,
        "built despite {conditions:?}, too wide {too_wide:?}, conflicting {conflicting}"
    );
    // Bumped layers write what their keys need, within the plan's bound.
    match plan.kind() {
        ribbon_kernel::Kind::Bumped => assert!(built <= len, "{built} > {len} bytes"),
        _ => assert_eq!(built, len),
    }
    let out = &out[..built];

    // Every backend builds the same bytes, and so does the owning twin.
    for backend in backends() {
        let mut bytes = vec![0u8; len];
        let plan = plan.with_backend(backend).unwrap();
        let view = plan
            .build(&hashes, &values, &mut scratch, &mut bytes)
            .unwrap();
        assert_eq!(view.backend(), backend);
        assert_eq!(
            &bytes[..built],
            out,
            "{} builds different bytes",
            backend.name()
        );
    }
    let owned = Retrieval::build(&plan, &hashes, &values).unwrap();
    assert_eq!(owned.as_bytes(), out);

    let view = RetrievalRef::from_bytes(out).unwrap();
    assert_eq!(view.kind(), plan.kind());
    assert_eq!(view.value_bits(), bits);
    assert_eq!(view.num_keys(), n as u64);
    assert_eq!(view.width(), width);
    let mut probes = hashes.clone();
    probes.extend_from_slice(&case.probes);
    let got = values_on_every_backend(view, &probes);
    for (i, (&want, &got)) in values.iter().zip(&got).enumerate() {
        assert_eq!(got, want, "key {i} (hash {:#x}) lost its value", hashes[i]);
    }
}
