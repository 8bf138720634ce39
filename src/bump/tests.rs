//! Unit tests of `bump` (`src/bump.rs`), in a file of their own: see
//! "Tests" in ARCHITECTURE.md.

use super::*;

/// The segment minimum of the layer-level tests: layers from 32 buckets
/// are cut, so that the comparisons with the model and the dense
/// oracle meet boundaries (builds cut from [`MIN_SEGMENT_BUCKETS`]).
pub(crate) const TEST_SEGMENT_BUCKETS: u64 = 8;
use super::lanes::Lane;
use crate::backend::Backend;
use crate::band::{AddOutcome, Chain};
use crate::bumped_layout::test_support::random_thresholds;
use crate::bumped_layout::{
    Buckets, GROUP_BYTES, Layers, MIN_SEGMENT_BUCKETS, ThresholdsRef, encode_thresholds,
    kept_entries, listed_exceptions, order_scratch_words, threshold_groups,
};
use crate::bumped_study::{self, Exceptions, Params};
use crate::filter::FilterRef;
use crate::hash::{Coeff, Expander, remix, start};
use crate::kernels::SolveKernel;
use crate::layout::{Family, Geometry, HEADER_BYTES, Kind, Width};
use crate::test_kit::splitmix64;
use crate::word::Rows;
use std::vec;
use std::vec::Vec;

extern crate std;

/// One bumping layer banded here and in the reference model, for the
/// same keys, slots and seed: the same thresholds and bumped keys.
fn check_against_model<W: Coeff>(width: Width, n: usize, bucket: u64, load: u64, bound: u64) {
    check_crowded_against_model::<W>(width, n, 0, bucket, load, bound);
}

/// [`check_against_model`] with `crowd` keys more, crafted to start in
/// the middle bucket, a few at each of its starts.
fn check_crowded_against_model<W: Coeff>(
    width: Width,
    n: usize,
    crowd: usize,
    bucket: u64,
    load: u64,
    bound: u64,
) {
    let r = 8;
    let mut state = 91 + n as u64;
    let mut keys: Vec<u64> = (0..n).map(|_| splitmix64(&mut state)).collect();
    let w = width.bits() as u64;
    let num_slots = ((n as u64 * load).div_ceil(1_000_000)).div_ceil(w).max(1) * w;
    let p = Params::one_plus_bit(bucket, load, bound, Exceptions::List, r);
    let seed = 3;
    if crowd > 0 {
        // Remixed values that start at `t`: the lowest, plus a random
        // part of the width of one start; the hash that remixes to it
        // inverts the remix (an odd multiplier).
        let num_starts = num_slots - w + 1;
        let middle = num_starts / bucket / 2 * bucket;
        let per_start = (1u128 << 64) / u128::from(num_starts);
        let mut unremix = crate::hash::REMIX;
        for _ in 0..6 {
            unremix =
                unremix.wrapping_mul(2u64.wrapping_sub(crate::hash::REMIX.wrapping_mul(unremix)));
        }
        for i in 0..crowd as u64 {
            let t = middle + i % bucket;
            let x = ((u128::from(t) << 64).div_ceil(u128::from(num_starts))
                + u128::from(splitmix64(&mut state)) % (per_start - 1)) as u64;
            assert_eq!(start(x, num_starts, 0), t);
            keys.push(x.wrapping_mul(unremix) ^ crate::hash::seed_mix(seed));
        }
    }
    let n = keys.len();
    let (model, model_bumped, model_empty) =
        bumped_study::band_layer::<W>(&p, &keys, num_slots, seed, true, TEST_SEGMENT_BUCKETS)
            .expect("bumps");

    // Every block has `r` columns, as in the model.
    let blocks = (num_slots / w) as usize;
    let g = Geometry::new(Kind::Standard, width, blocks, r, blocks).expect("geometry");
    let expander = Expander::new(&g, seed);
    let buckets = Buckets::new(bucket.trailing_zeros(), p.standard_back() as u32).expect("buckets");
    // The layer sorted and banded under a limit of bumped keys: the
    // count, the banding order (bumped keys first), rows, thresholds.
    let band = |limit: usize, side_by_side: bool| {
        let words = order_scratch_words(buckets, width, expander.num_starts);
        let mut counts = vec![0u64; words as usize];
        let (mut ordered, mut temp) = (vec![0u64; n], vec![0u64; n]);
        let keys = keys.iter().copied();
        let sorted = order_for_banding(
            buckets,
            &expander,
            keys,
            &mut counts,
            &mut temp,
            &mut ordered,
        );
        assert!(sorted);
        let mut rows = vec![0u64; num_slots as usize * Rows::stride::<W>(true)];
        let mut thresholds = vec![0u16; buckets.count(expander.num_starts) as usize];
        let kept: &mut [u32] = bytemuck::cast_slice_mut(&mut counts);
        let limits = BandLimits {
            min_segment_buckets: TEST_SEGMENT_BUCKETS,
            bumped: limit,
            side_by_side,
        };
        let bumped = band_layer::<W, u64>(
            buckets,
            &expander,
            &mut rows,
            &mut ordered,
            &mut thresholds,
            kept,
            limits,
        )
        .expect("scratch fits");
        (bumped, ordered, rows, thresholds)
    };
    let (bumped, ordered, rows, thresholds) = band(usize::MAX, true);
    // The lanes one after another (the schedule of 32-bit targets) band
    // the same layer. (Natively: under Miri it doubles the test's time.)
    if !cfg!(miri) {
        let one_by_one = band(usize::MAX, false);
        assert!(
            one_by_one == (bumped, ordered.clone(), rows.clone(), thresholds.clone()),
            "{width:?} n {n}: lanes one after another band another layer"
        );
    }

    let model_thresholds: Vec<u16> = model.thresholds.iter().map(|&t| t as u16).collect();
    assert_eq!(thresholds, model_thresholds, "{width:?} n {n}: thresholds");
    check_encoding(buckets, &thresholds);
    let mut ours = ordered[..bumped].to_vec();
    let mut theirs = model_bumped;
    ours.sort_unstable();
    theirs.sort_unstable();
    assert_eq!(ours, theirs, "{width:?} n {n}: bumped keys");
    // Undone keys leave no row behind.
    let stride = Rows::stride::<W>(true);
    let empty = rows
        .chunks(stride)
        .filter(|row| row[..Rows::coeff_words::<W>()].iter().all(|&w| w == 0))
        .count() as u64;
    assert_eq!(empty, model_empty, "{width:?} n {n}: empty rows");
    // More keys than rows: at least the excess cannot stay.
    let excess = (n as u64).saturating_sub(num_slots) as usize;
    assert!(bumped >= excess, "{width:?} n {n}: {bumped} bumped");
    // Dense elimination agrees, on systems small enough for it (20,000
    // keys: cut into segments).
    if (n <= 3000 || n == 20_000) && !cfg!(miri) {
        let context = std::format!("{width:?} n {n} bucket {bucket} bound {bound}");
        let (bumping, exceptions, _) = check_dense(
            (buckets, TEST_SEGMENT_BUCKETS),
            &g,
            &expander,
            &keys,
            &thresholds,
            Some(&ordered[..bumped]),
            &context,
        );
        // A high standard threshold leaves more buckets exceptions.
        if n == 3000 && bound >= 950_000 {
            assert!(
                bumping > 0 && exceptions > 0,
                "{context}: {bumping} bumping, {exceptions} exceptions"
            );
        }
    }
    // Under a limit below what the layer bumps, the banding answers a
    // count above the limit (its lanes stop at their next bump past
    // it): never a count the caller would take for a layer.
    // (Natively: under Miri a second banding doubles the test's time.)
    if bumped > 1 && !cfg!(miri) {
        let limit = bumped / 2;
        for side_by_side in [true, false] {
            let stopped = band(limit, side_by_side).0;
            assert!(
                stopped > limit,
                "{width:?} n {n}: {stopped} of {bumped} bumped, limit {limit}"
            );
        }
    }
}

/// Encodes `thresholds` and decodes every bucket's back.
fn check_encoding(buckets: Buckets, thresholds: &[u16]) {
    let groups = threshold_groups(thresholds.len() as u64) as usize;
    let mut group_bytes = vec![0xa5u8; groups * GROUP_BYTES];
    let mut listed = vec![0x5au8; 4 * listed_exceptions(buckets, thresholds)];
    encode_thresholds(buckets, thresholds, &mut group_bytes, &mut listed).expect("fits");
    let view = ThresholdsRef {
        buckets,
        groups: &group_bytes,
        listed: &listed,
    };
    for (bucket, &t) in thresholds.iter().enumerate() {
        assert_eq!(
            view.threshold(bucket as u64),
            u32::from(t),
            "{buckets:?} bucket {bucket} of {}",
            thresholds.len()
        );
    }
    // What the encoder writes, the validation accepts; and it accepts
    // nothing else: a one-bit change is refused, or is what the
    // encoder writes for the thresholds it now decodes to.
    let n = thresholds.len() as u64;
    view.validate(n).expect("the encoding validates");
    if thresholds.len() <= 1000 && !cfg!(miri) {
        let (mut g2, mut l2) = (group_bytes.clone(), listed.clone());
        for bit in 0..8 * (g2.len() + l2.len()) {
            let flip = |g: &mut Vec<u8>, l: &mut Vec<u8>| match bit / 8 < g.len() {
                true => g[bit / 8] ^= 1 << (bit % 8),
                false => l[bit / 8 - g.len()] ^= 1 << (bit % 8),
            };
            flip(&mut g2, &mut l2);
            let changed = ThresholdsRef {
                buckets,
                groups: &g2,
                listed: &l2,
            };
            if changed.validate(n).is_ok() {
                let decoded: Vec<u16> = (0..n).map(|b| changed.threshold(b) as u16).collect();
                let mut g3 = vec![0u8; g2.len()];
                let mut l3 = vec![0u8; 4 * listed_exceptions(buckets, &decoded)];
                encode_thresholds(buckets, &decoded, &mut g3, &mut l3).expect("fits");
                assert!(
                    g3 == g2 && l3 == l2,
                    "{buckets:?} n {n}: bit {bit} flipped validates but is not canonical"
                );
            }
            flip(&mut g2, &mut l2);
        }
    }
    // One byte short anywhere is refused, not overrun.
    if groups > 0 {
        let short = &mut group_bytes[..groups * GROUP_BYTES - 1];
        assert!(encode_thresholds(buckets, thresholds, short, &mut listed).is_err());
    }
    if !listed.is_empty() {
        let n = listed.len();
        let short = &mut listed[..n - 1];
        assert!(encode_thresholds(buckets, thresholds, &mut group_bytes, short).is_err());
    }
}

#[test]
fn thresholds_decode_as_encoded() {
    let mut state = 5u64;
    for (bits, standard_back) in [(7u32, 102u32), (9, 466), (3, 1)] {
        let buckets = Buckets::new(bits, standard_back).expect("buckets");
        // Exceptions per 1000 buckets: dense, so that groups list
        // some, and sparse, so that a group's slots are partly
        // filled.
        // Miri interprets every step: fewer sizes cover the same paths.
        let sizes: &[usize] = if cfg!(miri) {
            &[0, 1, 65, 300]
        } else {
            &[0, 1, 63, 64, 65, 127, 128, 129, 257, 1000, 5000]
        };
        for (n, exceptions) in sizes.iter().flat_map(|&n| [(n, 200u64), (n, 15)]) {
            let thresholds = random_thresholds(buckets, n, exceptions, &mut state);
            check_encoding(buckets, &thresholds);
        }
    }
}

#[test]
fn hostile_threshold_bytes_give_some_threshold() {
    let buckets = Buckets::new(9, 466).expect("buckets");
    let mut state = 17u64;
    for len in [0usize, 9, 10, 31, 64] {
        let bytes: Vec<u8> = (0..len).map(|_| splitmix64(&mut state) as u8).collect();
        let view = ThresholdsRef {
            buckets,
            groups: &bytes,
            listed: &bytes[..len / 3],
        };
        for bucket in [0u64, 1, 63, 64, 65, 1 << 40, u64::MAX] {
            assert!(view.threshold(bucket) <= buckets.size());
        }
    }
}

/// A whole filter built here and by the reference model from the same
/// keys: the same layers (seeds, slots, thresholds), and the same
/// answer to every member and non-member on every backend.
fn check_filter_against_model(width: Width, n: usize, r: u32, non_members: usize) {
    let w = width.bits();
    let mut state = 7 + n as u64 + u64::from(w);
    let keys: Vec<u64> = (0..n).map(|_| splitmix64(&mut state)).collect();
    let model = bumped_study::build(w, &bumped_study::chosen_params(w, r), &keys);
    let (out, bounds) = build_for_test(width, r, &keys, Backend::Scalar);
    let (bytes, len) = (&out[..], out.len());
    let what = std::format!("{width:?} n {n} r {r}");

    let mut layers = Layers::new(bytes).expect("header");
    assert_eq!(
        layers.header().num_layers,
        model.layers.len(),
        "{what}: layers"
    );
    assert!(
        model.layers.len() <= bounds.layers,
        "{what}: bound on layers"
    );
    assert!(len <= bounds.filter_bytes, "{what}: bound on bytes");
    if n == 20_000 && width == Width::W64 {
        // Fewer layers than the bound: the table's gap was closed.
        assert!(model.layers.len() < bounds.layers, "{what}: layers");
    }
    let mut prev = n as u64;
    for (i, theirs) in model.layers.iter().enumerate() {
        let ours = layers
            .next_layer(prev, true)
            .expect("layer")
            .expect("valid");
        prev = ours.num_keys;
        assert_eq!(
            ours.num_keys, model.keys[i] as u64,
            "{what}: layer {i} keys"
        );
        assert_eq!(ours.seed, theirs.seed, "{what}: layer {i} seed");
        assert_eq!(
            ours.geometry.num_slots() as u64,
            theirs.num_slots,
            "{what}: layer {i} slots"
        );
        for (bucket, &t) in theirs.thresholds.iter().enumerate() {
            let got = ours.thresholds.threshold(bucket as u64);
            assert_eq!(u64::from(got), t, "{what}: layer {i} bucket {bucket}");
        }
    }
    assert!(layers.next_layer(prev, true).is_none());
    if n == 1_000_000 {
        assert!(model.layers.len() >= 4, "{what}: layers");
    }

    let probes: Vec<u64> = keys
        .iter()
        .copied()
        .chain((0..non_members).map(|_| splitmix64(&mut state)))
        .collect();
    let expected: Vec<bool> = probes.iter().map(|&h| model.contains(h)).collect();
    assert!(
        expected[..n].iter().all(|&a| a),
        "{what}: the model lost a key"
    );
    for backend in Backend::ALL {
        if !backend.is_available() {
            std::println!("{what}: {backend:?} skipped: not available on this CPU or build");
            continue;
        }
        let filter = FilterRef::from_bytes(bytes)
            .expect("validates")
            .with_backend(backend)
            .expect("available");
        let single: Vec<bool> = probes.iter().map(|&h| filter.contains(h)).collect();
        assert!(
            single == expected,
            "{what} {backend:?}: contains differs from the model"
        );
        let mut batch = vec![false; probes.len()];
        filter.contains_batch(&probes, &mut batch).expect("lengths");
        assert!(
            batch == expected,
            "{what} {backend:?}: contains_batch differs from the model"
        );
    }
}

/// A filter of `keys` at `r` columns (seed 0) built with `backend`'s
/// back-substitution, and the bounds of its size.
fn build_for_test(width: Width, r: u32, keys: &[u64], backend: Backend) -> (Vec<u8>, Bounds) {
    let shape = Shape {
        width,
        lower_columns: r,
        upper_millis: 0,
        seed: 0,
        retries: Shape::retries_for(crate::plan::MAX_SEEDS),
        family: Family::Filter,
    };
    let bounds = Bounds::new(&shape, keys.len() as u64).expect("bounds");
    let mut scratch = vec![0u64; bounds.scratch_words().expect("fits")];
    let mut out = vec![0u8; bounds.filter_bytes];
    let solve = SolveKernel::new(backend, width).expect("available");
    let len = build(&shape, keys, &solve, &mut scratch, &mut out).expect("builds");
    out.truncate(len);
    // Sealed as the plan's build seals it.
    crate::layout::seal(&mut out);
    (out, bounds)
}

/// Dense GF(2) elimination over all `m` slots, one basis row per pivot:
/// the oracle for the layers' banding below.
#[derive(Clone)]
struct Dense {
    basis: Vec<Option<(Vec<u64>, u64)>>,
}

#[derive(Debug, PartialEq)]
enum Added {
    Independent,
    Redundant,
    Inconsistent,
}

impl Dense {
    fn new(m: usize) -> Dense {
        Dense {
            basis: vec![None; m],
        }
    }

    /// Adds `e` unless it contradicts the rows or its elimination
    /// reaches `limit` (`Buckets::chain_limit`): then `Inconsistent`.
    fn add(&mut self, e: &crate::hash::Equation, limit: Option<u64>) -> Added {
        let limit = limit.map_or(usize::MAX, |l| l as usize);
        let m = self.basis.len();
        let mut bits = vec![0u64; m.div_ceil(64)];
        for k in 0..128 {
            if e.coeff >> k & 1 == 1 {
                let slot = e.start as usize + k;
                bits[slot / 64] |= 1 << (slot % 64);
            }
        }
        let mut result = e.result;
        loop {
            let Some(p) = bits
                .iter()
                .position(|&w| w != 0)
                .map(|i| i * 64 + bits[i].trailing_zeros() as usize)
            else {
                return if result == 0 {
                    Added::Redundant
                } else {
                    Added::Inconsistent
                };
            };
            if p >= limit {
                return Added::Inconsistent;
            }
            match &self.basis[p] {
                Some((row, r)) => {
                    for (a, b) in bits.iter_mut().zip(row) {
                        *a ^= b;
                    }
                    result ^= r;
                }
                None => {
                    self.basis[p] = Some((bits, result));
                    return Added::Independent;
                }
            }
        }
    }
}

/// A bumping layer's banding (its buckets, cut into segments of at
/// least the given number) against dense elimination: `inputs` are
/// the values the layer hashes (its keys, or what the layer before
/// remixed), `thresholds` and `bumped` (remixed with the layer's seed)
/// what banding made of them. In banding order (buckets ascending,
/// each from its last start down, equal starts in input order) the
/// keys a bucket keeps are consistent with those kept before; in a
/// bucket that bumps, going on past its threshold meets an
/// inconsistent key, the first of which fixes the threshold
/// (`Buckets::threshold_for` of how far back it lies); and `bumped`,
/// when given, holds exactly the keys past the thresholds, in banding
/// order. Returns how many buckets bumped, how many of them had an
/// exception (a threshold below the standard one), and the keys past
/// the thresholds (the next layer's).
fn check_dense(
    (buckets, min_segment_buckets): (Buckets, u64),
    g: &Geometry,
    e: &Expander,
    inputs: &[u64],
    thresholds: &[u16],
    bumped: Option<&[u64]>,
    context: &str,
) -> (usize, usize, Vec<u64>) {
    let mut dense = Dense::new(g.num_slots());
    let num_buckets = buckets.count(g.num_starts());
    let w = g.width.bits();
    let add = |dense: &mut Dense, i: usize| {
        let eq = e.equation(g, inputs[i]);
        dense.add(
            &eq,
            buckets.chain_limit(w, num_buckets, min_segment_buckets, eq.start),
        )
    };
    let mut order: Vec<(u64, u32, usize)> = inputs
        .iter()
        .enumerate()
        .map(|(i, &h)| {
            let (bucket, back) = buckets.locate(e.equation(g, h).start);
            (bucket, back, i)
        })
        .collect();
    order.sort_by_key(|&(bucket, back, _)| (bucket, back));
    let (mut bumping, mut exceptions) = (0, 0);
    let mut expected_bumped = Vec::new();
    for bucket_keys in order.chunk_by(|a, b| a.0 == b.0) {
        let bucket = bucket_keys[0].0;
        let t = u32::from(thresholds[bucket as usize]);
        let (kept, past): (Vec<_>, Vec<_>) =
            bucket_keys.iter().partition(|&&(_, back, _)| back < t);
        for &(_, _, i) in &kept {
            let added = add(&mut dense, i);
            assert_ne!(
                added,
                Added::Inconsistent,
                "{context}: kept key, bucket {bucket}"
            );
        }
        if t == buckets.size() {
            continue;
        }
        bumping += 1;
        exceptions += usize::from(t < buckets.standard_back);
        let mut trial = dense.clone();
        let first_failure = past
            .iter()
            .find(|&&(_, _, i)| add(&mut trial, i) == Added::Inconsistent)
            .unwrap_or_else(|| panic!("{context}: bucket {bucket} bumps, yet all fit"));
        assert_eq!(
            buckets.threshold_for(first_failure.1),
            t,
            "{context}: bucket {bucket}"
        );
        expected_bumped.extend(past.iter().map(|&(_, _, i)| remix(inputs[i], e.seed_mix)));
    }
    if let Some(bumped) = bumped {
        assert_eq!(bumped, expected_bumped, "{context}: bumped keys");
    }
    (bumping, exceptions, expected_bumped)
}

/// Every layer of small filters, as serialized, against dense
/// elimination ([`check_dense`]); the last layer's keys are
/// consistent. `layers_band_as_the_model_does` checks more layer
/// shapes the same way.
#[test]
#[cfg_attr(miri, ignore = "dense elimination of thousands of rows")]
fn layers_match_dense_elimination() {
    for width in [Width::W64, Width::W128] {
        for (n, r) in [(2100usize, 8u32), (3000, 1), (6000, 7)] {
            let mut state = n as u64 ^ 0xde5e;
            let keys: Vec<u64> = (0..n).map(|_| splitmix64(&mut state)).collect();
            let (bytes, _) = build_for_test(width, r, &keys, Backend::Scalar);
            let mut layers = Layers::new(&bytes).expect("valid");
            let mut inputs = keys.clone();
            let mut previous = n as u64;
            let mut bumping = 0;
            let mut layer_list = Vec::new();
            while let Some(layer) = layers.next_layer(previous, true) {
                let layer = layer.expect("valid");
                previous = layer.num_keys;
                layer_list.push(layer);
            }
            for (i, layer) in layer_list.iter().enumerate() {
                let context = std::format!("{width:?} n {n} r {r} layer {i}");
                assert_eq!(layer.num_keys, inputs.len() as u64, "{context}");
                let g = layer.geometry;
                let e = Expander::new(&g, layer.seed);
                if layer.last {
                    let mut dense = Dense::new(g.num_slots());
                    for &h in &inputs {
                        assert_ne!(
                            dense.add(&e.equation(&g, h), None),
                            Added::Inconsistent,
                            "{context}"
                        );
                    }
                    assert_eq!(i + 1, layer_list.len());
                    break;
                }
                let buckets = layer.thresholds.buckets;
                let thresholds: Vec<u16> = (0..buckets.count(g.num_starts()))
                    .map(|b| layer.thresholds.threshold(b) as u16)
                    .collect();
                // The keys past the thresholds are the next layer's
                // (checked against its table entry here, and against its
                // banding on the next round).
                let (bumped_buckets, _, next) = check_dense(
                    (buckets, MIN_SEGMENT_BUCKETS),
                    &g,
                    &e,
                    &inputs,
                    &thresholds,
                    None,
                    &context,
                );
                let next_keys = layer_list[i + 1].num_keys as usize;
                assert_eq!(next.len(), next_keys, "{context}: keys bumped");
                bumping += bumped_buckets;
                inputs = next;
            }
            assert!(bumping > 0, "{width:?} n {n}: no bucket bumped");
        }
    }
}

#[test]
#[cfg_attr(miri, ignore = "safe code: minutes under Miri")]
fn filters_answer_as_the_model_does() {
    // Miri interprets every step (a filter with bumping layers takes it
    // minutes): `tests/backends.rs` runs one through the kernels there.
    let (sizes, columns): (&[usize], &[u32]) = if cfg!(miri) {
        (&[0, 1, 300], &[8])
    } else {
        (
            &[
                0, 1, 2, 63, 64, 65, 1000, 2048, 2049, 20_000, 30_000, 200_000,
            ],
            &[1, 7, 8],
        )
    };
    let non_members = if cfg!(miri) { 100 } else { 20_000 };
    for &n in sizes {
        for &r in columns {
            check_filter_against_model(Width::W64, n, r, non_members);
            check_filter_against_model(Width::W128, n, r, non_members);
        }
    }
    // Four layers: queries reach one past those a view keeps decoded.
    if !cfg!(miri) {
        check_filter_against_model(Width::W64, 1_000_000, 7, non_members);
    }
}

/// The product's space overhead over the information-theoretic
/// minimum (everything after the 48-byte header counted: layer table,
/// thresholds, payload) and its FP rate (over 4 * 10^6 non-members),
/// the worst of `RIBBON_STUDY_SETS` (20) fresh key sets of
/// `RIBBON_STUDY_KEYS` (10^6) keys each; `RIBBON_STUDY_VERBOSE=1` lists
/// every set's layers:
/// `cargo test --release --lib bump::tests::overhead -- --ignored --nocapture`
#[test]
#[ignore]
fn overhead() {
    let setting = |name: &str, default: u64| {
        std::env::var(name)
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(default)
    };
    let n = setting("RIBBON_STUDY_KEYS", 1_000_000) as usize;
    let sets = setting("RIBBON_STUDY_SETS", 20);
    let probes = 4_000_000usize;
    for width in [Width::W64, Width::W128] {
        for r in [7u32, 8] {
            let (mut worst_len, mut worst_fp, mut scratch_bytes) = (0, 0, 0);
            for set in 0..sets {
                let mut state = 0x5eed_0000 + set;
                let keys: Vec<u64> = (0..n).map(|_| splitmix64(&mut state)).collect();
                let (out, bounds) = build_for_test(width, r, &keys, Backend::detect());
                scratch_bytes = 8 * bounds.scratch_words().expect("fits");
                let filter = FilterRef::from_bytes(&out).expect("valid");
                let mut state = u64::MAX - set;
                let fp = (0..probes)
                    .filter(|_| filter.contains(splitmix64(&mut state)))
                    .count();
                worst_len = worst_len.max(out.len());
                worst_fp = worst_fp.max(fp);
                if setting("RIBBON_STUDY_VERBOSE", 0) == 1 {
                    let mut line = std::format!("  set {set}: {} bytes, FP {fp};", out.len());
                    let (count, layers) = filter.bumped_layers().expect("bumped");
                    for (keys, slots) in &layers[..count] {
                        line += &std::format!(" {keys} keys in {slots} slots;");
                    }
                    std::println!("{line}");
                }
            }
            // Bits per key as `FilterRef::millibits_per_key` counts them.
            let bits = (worst_len - HEADER_BYTES) as f64 * 8.0;
            let planned = 1.0 / f64::from(1u32 << r);
            std::println!(
                "{width:?} r {r} n {n}, worst of {sets} sets: {worst_len} bytes, {:.4} bits/key, overhead {:.3} %; FP {worst_fp} / {probes} = {:.4} % ({:.3} x 2^-r); scratch {:.1} bytes/key",
                bits / n as f64,
                (bits / (n as f64 * f64::from(r)) - 1.0) * 100.0,
                worst_fp as f64 * 100.0 / probes as f64,
                worst_fp as f64 / probes as f64 / planned,
                scratch_bytes as f64 / n as f64,
            );
        }
    }
}

#[test]
#[cfg_attr(miri, ignore = "safe code: minutes under Miri")]
fn layers_band_as_the_model_does() {
    let sizes: &[usize] = if cfg!(miri) {
        &[0, 1, 300]
    } else {
        &[0, 1, 2, 65, 1000, 3000, 20_000, 30_000]
    };
    for &n in sizes {
        check_against_model::<u64>(Width::W64, n, 128, 920_000, 800_000);
        check_against_model::<u128>(Width::W128, n, 512, 965_000, 910_000);
        // Low standard thresholds: bumping buckets undo many keys.
        check_against_model::<u64>(Width::W64, n, 128, 900_000, 300_000);
        // High ones: many buckets need exact thresholds (exceptions).
        check_against_model::<u64>(Width::W64, n, 128, 920_000, 970_000);
    }
}

/// A key a bucket's full kept list cannot record is taken out of its row
/// again and bumps the bucket; one it can is recorded. (Honest and
/// crowded buckets alike bump long before: this is the bound's own
/// test.)
#[test]
fn a_full_kept_list_refuses_the_key() {
    let buckets = Buckets::for_width(Width::W64);
    let g = Geometry::new(Kind::Standard, Width::W64, 8, 8, 8).expect("geometry");
    let expander = Expander::new(&g, 1);
    let entries = kept_entries(buckets, 64);
    let stride = Rows::stride::<u64>(true);
    for (kept_len, row, refused) in [
        (entries - 1, 300, false),
        (entries, 300, true),
        (0, 0x1_0000 + 130, true),
    ] {
        let mut rows = vec![0u64; (0x1_0000 + 200) * stride];
        let mut keys = [0u64; 1];
        let mut thresholds = [0u16; 1];
        let mut kept = vec![0u32; entries];
        let mut lane = Lane::<u64, u64> {
            buckets,
            expander: &expander,
            first_row: 0,
            first_bucket: 1,
            keys: &mut keys,
            thresholds: &mut thresholds,
            kept: &mut kept,
            kept_len,
            next: 1,
            bumped: 0,
            bucket: 1,
            bucket_first: 0,
            bucket_row: 128,
            threshold: buckets.size(),
            chain: None,
            back: 7,
            pause_back: u32::MAX,
            bumped_total: &core::cell::Cell::new(0),
            limit: usize::MAX,
            crafted: &core::cell::Cell::new(0),
        };
        // The key's equation, as the chain wrote it into `row`.
        let chain = Chain {
            i: row,
            c: 5u64,
            b: 3,
        };
        rows[row * stride] = 5;
        rows[row * stride + 1] = 3;
        let bumps = lane.settle(&chain, AddOutcome::Inserted, &mut rows);
        assert_eq!(bumps, Ok(refused), "{kept_len} {row}");
        let left = rows[row * stride..(row + 1) * stride]
            .iter()
            .any(|&w| w != 0);
        assert_eq!(left, !refused, "{kept_len} {row}");
        assert_eq!(lane.kept_len, kept_len + usize::from(!refused));
    }
}

/// A bucket crowded with crafted keys (several at each start) against
/// the model: bumping still takes out exactly what the model does, and
/// the kept list's bound (`Buckets::kept_fits`) is the model's too.
#[test]
#[cfg_attr(miri, ignore = "thousands of keys")]
fn crowded_buckets_band_as_the_model_does() {
    for crowd in [400, 2000] {
        check_crowded_against_model::<u64>(Width::W64, 30_000, crowd, 128, 920_000, 800_000);
        check_crowded_against_model::<u128>(Width::W128, 30_000, crowd, 512, 965_000, 910_000);
    }
}
