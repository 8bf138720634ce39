//! Bumped Ribbon (issue 18), first step: a reference model of the
//! construction, to choose bucket sizes, thresholds and layer loads by
//! measurement before the kind, its format and its kernels are written.
//!
//! Test-only on purpose: it allocates, keeps one `r`-bit solution value per
//! slot instead of ICML words, and evaluates queries bit by bit. What it
//! settles is the algorithm and its parameters; the product code will be
//! checked against it.
//!
//! The algorithm (after Dillinger, Hübschle-Schneider, Sanders and Walzer,
//! "Fast Succinct Retrieval and Approximate Membership using Ribbon", SEA
//! 2022), in our terms:
//!
//! * A layer has fewer slots than keys (`slots_per_key` below 1). Its
//!   starts are cut into buckets of `bucket` starts.
//! * Keys are banded bucket by bucket, each bucket from its last start
//!   down to its first. A key's `back` is how far its start lies from the
//!   bucket's end, so keys go in with `back` ascending.
//! * When a key fails to insert (its equation reduces to zero), the bucket
//!   gets a threshold `t <= back`: the keys of the bucket with `back >= t`
//!   are *bumped*. Those already in are taken out again by zeroing their
//!   rows, which is exact because they are the last insertions and
//!   elimination only ever writes the row a key ends in. Nothing bumped is
//!   threshold `bucket`.
//! * A query in that bucket with `back >= threshold` was bumped: it goes
//!   to the next layer (another seed, sized for the bumped keys, hashing
//!   the value this layer remixed); otherwise this layer answers. The lowest starts of a bucket compete with the
//!   rows the previous bucket spilled into it; bumping them relieves the
//!   overload where it is.
//! * The last layer has no thresholds: a Standard Ribbon of its keys'
//!   slots, grown by 1/32 of them and reseeded until it builds.
//!
//! What a threshold costs is the scheme's (`Params`): a code per bucket
//! naming a *standard* threshold (or nothing bumped), and, for a failure
//! below every standard threshold, either the whole bucket bumped
//! (`Exceptions::Never`, the paper's 2-bit scheme) or the exact threshold
//! kept out of line (an *exception*: `List`, the paper's 1+-bit scheme, or
//! `Grouped`, one slot per group of buckets with the rest listed). The
//! model keeps exact thresholds; the scheme decides which are possible
//! and prices them. Bumped keys whose rows were freed leave those rows
//! empty (no later bucket reaches that low), so a threshold far below the
//! failure wastes space: a whole bucket bumped at 512 starts frees up to
//! ~500 rows at once.
//!
//! Space: every layer's slots times `r` bits plus its thresholds' bits.
//! Every slot holds one key's row or is empty, so the overhead is the
//! empty slots' bits plus the metadata. A non-member ends in exactly one
//! layer and matches there with probability `2^-r`, so the overhead over
//! the information-theoretic minimum is `bits / (n * r) - 1`.
//!
//! # What the study settled for the kind
//!
//! `chosen_params`, worst overhead of 20 key sets (`tests::chosen`):
//!
//! | | 10^6 keys, 7 / 8 bits | 10^7 keys, 7 / 8 bits |
//! |---|---|---|
//! | w64 | 0.197 % / 0.178 % | 0.172 % / 0.154 % |
//! | w128 | 0.084 % / 0.079 % | 0.056 % / 0.051 % |
//!
//! The FP rate of each worst set, over 4 * 10^6 non-members, is within
//! 0.5 % of `2^-r` (0.7840 % against 0.7812 % at worst).
//!
//! * w64: buckets of 128 starts, layers at 0.92 slots per key, standard
//!   threshold 0.80 (the lowest 20 % of a bucket's starts bumped).
//! * w128: buckets of 512 starts, 0.965 slots per key, threshold 0.91.
//! * Thresholds (`bumped_layout::encode_thresholds`): per group of 128
//!   buckets, two 64-bit words of codes (bit set: nothing bumped) and
//!   three 16-bit exception slots (bucket within the group and exact
//!   threshold; a group with more says so by the order of its slots);
//!   the rest of a group's exceptions in a sorted list of 32-bit entries
//!   (bucket index, threshold). A query decodes in a few branch-free
//!   steps; only a bucket of a group with four or more exceptions
//!   searches the list (under 2 % of queries). The metadata is small
//!   (about 12 KB per 10^7 keys at w64) and stays in cache, so it can
//!   live in its own
//!   arrays rather than beside the blocks.
//! * Output size: each layer is sized for the keys the previous one
//!   actually bumped, so the filter's size is known after the build. A
//!   plan can bound it (each layer's keys capped a little above the
//!   expected count; a build over a cap retries with the next seed) and
//!   the header's layer table says the real sizes. Sizing every layer from
//!   `n` alone would need slack in the last layer for the spread of the
//!   bumped counts; a few hundred slots at 10^6 keys (an estimate, not
//!   measured) would already cost 0.03 %, much of the 0.1 % target.
//! * Undo needs the row a key ended in: `band::step` ends a chain there,
//!   and `src/bump.rs` bands a layer with it (checked against this model).
//! * Large layers are banded in segments whose chains may not reach the
//!   next segment's rows (`bumped_layout::boundary_buckets`); the model
//!   refuses a key whose chain would, by `Buckets::chain_limit`.

extern crate std;

use std::vec;
use std::vec::Vec;

use crate::bumped_layout::{Buckets, MIN_SEGMENT_BUCKETS};
use crate::hash::{Coeff, coeff, free_row, remix, result, seed_mix, start};

/// The parameters under study.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Params {
    /// Starts per bucket.
    pub(crate) bucket: u64,
    /// Slots per key of the bumping layers, in millionths (below 10^6:
    /// overloaded).
    pub(crate) slots_per_key_ppm: u64,
    /// The standard thresholds, as starts back from the bucket's end in
    /// millionths of `bucket`, descending (the first bumps the fewest
    /// keys); only the first `num_bounds` count.
    pub(crate) bounds_ppm: [u64; 3],
    pub(crate) num_bounds: usize,
    /// Where a bucket whose first failure lies below every standard
    /// threshold keeps its exact threshold (an *exception*), if anywhere.
    pub(crate) exceptions: Exceptions,
    /// Metadata bits per bucket (the threshold code).
    pub(crate) bucket_bits: u64,
    /// Result bits per key.
    pub(crate) r: u32,
    /// A layer with at most this many keys is the last one.
    pub(crate) last_layer_keys: usize,
}

/// Where exact thresholds go.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Exceptions {
    /// Nowhere: such a bucket is bumped whole.
    Never,
    /// In a list of 32-bit entries (bucket index and threshold), without
    /// limit.
    List,
    /// In `slots` 16-bit slots per group of `group` buckets (bucket within
    /// the group, threshold, and a flag: the group has more); the rest are
    /// listed as with `List`.
    Grouped { group: u64, slots: u64 },
}

/// Bits a listed exception costs: the bucket's index in its layer and its
/// threshold, in 32 bits (bucket indexes up to 2^22 at 512 starts per
/// bucket, 2^24 at 128).
const LISTED_EXCEPTION_BITS: u64 = 32;
/// Bits of one exception slot of a group.
const GROUP_SLOT_BITS: u64 = 16;

impl Params {
    /// The 2-bit scheme with class boundaries from the overload
    /// `eps = slots_per_key - 1` as in the paper's code for w >= 64:
    /// `lower = (0.78 + 1.30 eps) B`, `upper = (0.91 + 0.75 eps) B` (in
    /// integers, millionths); below `lower` the whole bucket is bumped.
    pub(crate) fn with_paper_classes(bucket: u64, slots_per_key_ppm: u64, r: u32) -> Params {
        let eps = slots_per_key_ppm as i64 - 1_000_000;
        let lower = (780_000 + 130 * eps / 100) as u64;
        let upper = (910_000 + 75 * eps / 100) as u64;
        Params::two_bit(
            bucket,
            slots_per_key_ppm,
            [upper, lower],
            Exceptions::Never,
            r,
        )
    }

    /// Two standard thresholds `[upper, lower]`; with `exceptions` the
    /// fourth code marks an exception, else it bumps the whole bucket.
    pub(crate) fn two_bit(
        bucket: u64,
        slots_per_key_ppm: u64,
        [upper, lower]: [u64; 2],
        exceptions: Exceptions,
        r: u32,
    ) -> Params {
        let num_bounds = if exceptions == Exceptions::Never {
            3
        } else {
            2
        };
        let bounds = ([upper, lower, 0], num_bounds, 2);
        Params::scheme(bucket, slots_per_key_ppm, bounds, exceptions, r)
    }

    /// One bit per bucket (nothing bumped, or the starts from `bound` on
    /// bumped) and exceptions out of line, after the paper's 1+-bit
    /// scheme. With `Exceptions::List`, queries in a bumping bucket below
    /// `bound` must search the list, and what would make that cheap is not
    /// counted; `Grouped` counts its slots.
    pub(crate) fn one_plus_bit(
        bucket: u64,
        slots_per_key_ppm: u64,
        bound: u64,
        exceptions: Exceptions,
        r: u32,
    ) -> Params {
        let bounds = ([bound, 0, 0], 1, 1);
        Params::scheme(bucket, slots_per_key_ppm, bounds, exceptions, r)
    }

    /// A scheme from its standard thresholds, how many count, and the code
    /// bits per bucket.
    fn scheme(
        bucket: u64,
        slots_per_key_ppm: u64,
        (bounds_ppm, num_bounds, bucket_bits): ([u64; 3], usize, u64),
        exceptions: Exceptions,
        r: u32,
    ) -> Params {
        Params {
            bucket,
            slots_per_key_ppm,
            bounds_ppm,
            num_bounds,
            exceptions,
            bucket_bits,
            r,
            last_layer_keys: 2048,
        }
    }

    /// How far `start` lies back from its bucket's end (keys are banded
    /// from the bucket's last start down to its first, so the ones bumped
    /// are those at or past the threshold: the lowest starts).
    fn back(&self, start: u64) -> u64 {
        self.bucket - 1 - start % self.bucket
    }

    /// The first standard threshold in starts back from the bucket's end
    /// (the bucket's size when there is none).
    pub(crate) fn standard_back(&self) -> u64 {
        self.bounds().next().unwrap_or(self.bucket)
    }

    /// The standard thresholds in starts back from the bucket's end.
    fn bounds(&self) -> impl Iterator<Item = u64> + '_ {
        self.bounds_ppm[..self.num_bounds]
            .iter()
            .map(|&b| (b * self.bucket).div_ceil(1_000_000))
    }

    /// The threshold a bucket gets when a key `back` starts from its end
    /// is the first that cannot stay: the highest standard threshold at or
    /// below it, else (with exceptions) `back` itself, else 0 (the whole
    /// bucket).
    fn threshold_for(&self, back: u64) -> u64 {
        match self.bounds().find(|&t| t <= back) {
            Some(t) => t,
            None if self.exceptions != Exceptions::Never => back,
            None => 0,
        }
    }

    /// Whether a bucket's threshold is stored out of line.
    fn is_exception(&self, threshold: u64) -> bool {
        self.exceptions != Exceptions::Never
            && threshold != self.bucket
            && !self.bounds().any(|b| b == threshold)
    }

    /// Metadata bits of a layer with these thresholds.
    fn threshold_bits(&self, thresholds: &[u64]) -> u64 {
        let codes = self.bucket_bits * thresholds.len() as u64;
        let exceptions =
            |buckets: &[u64]| buckets.iter().filter(|&&t| self.is_exception(t)).count() as u64;
        match self.exceptions {
            Exceptions::Never => codes,
            Exceptions::List => codes + LISTED_EXCEPTION_BITS * exceptions(thresholds),
            Exceptions::Grouped { group, slots } => {
                let listed: u64 = thresholds
                    .chunks(group as usize)
                    .map(|g| exceptions(g).saturating_sub(slots))
                    .sum();
                codes
                    + (thresholds.len() as u64).div_ceil(group) * slots * GROUP_SLOT_BITS
                    + LISTED_EXCEPTION_BITS * listed
            }
        }
    }
}

/// One layer: its slots, seed, thresholds and solution.
#[derive(Debug)]
pub(crate) struct Layer {
    pub(crate) seed: u32,
    pub(crate) num_slots: u64,
    w: u64,
    /// Per bucket, exact: the keys at least this many starts back from
    /// the bucket's end were bumped (`bucket`: none). Empty for the last
    /// layer; `Params::threshold_bits` says what storing them costs.
    pub(crate) thresholds: Vec<u64>,
    /// One `r`-bit value per slot.
    solution: Vec<u64>,
}

impl Layer {
    fn num_starts(&self) -> u64 {
        self.num_slots - self.w + 1
    }
}

/// A built model: its layers and what construction saw.
#[derive(Debug)]
pub(crate) struct Model {
    pub(crate) params: Params,
    pub(crate) layers: Vec<Layer>,
    /// Keys per layer (the first is `n`).
    pub(crate) keys: Vec<usize>,
    /// Empty slots per layer after banding.
    pub(crate) empty: Vec<u64>,
}

impl Model {
    /// Bits of solution plus thresholds.
    pub(crate) fn bits(&self) -> u64 {
        self.layers
            .iter()
            .map(|l| l.num_slots * u64::from(self.params.r))
            .sum::<u64>()
            + self.metadata_bits()
    }

    /// Space over the information-theoretic minimum for the first layer's
    /// keys, in millionths (`bits / (n * r) - 1`; 0 for no keys).
    pub(crate) fn overhead_ppm(&self) -> i64 {
        let minimum = self.keys[0] as u64 * u64::from(self.params.r);
        if minimum == 0 {
            return 0;
        }
        (self.bits() * 1_000_000 / minimum) as i64 - 1_000_000
    }

    /// Bits of thresholds and exceptions.
    pub(crate) fn metadata_bits(&self) -> u64 {
        self.layers
            .iter()
            .map(|l| self.params.threshold_bits(&l.thresholds))
            .sum()
    }

    /// Buckets with an exception, over all layers.
    pub(crate) fn exceptions(&self) -> u64 {
        let p = &self.params;
        self.layers
            .iter()
            .flat_map(|l| &l.thresholds)
            .filter(|&&t| p.is_exception(t))
            .count() as u64
    }

    /// Whether `hash` may be a member.
    pub(crate) fn contains(&self, hash: u64) -> bool {
        match self.layers[0].w {
            64 => self.contains_as::<u64>(hash),
            _ => self.contains_as::<u128>(hash),
        }
    }

    fn contains_as<W: Coeff>(&self, hash: u64) -> bool {
        let rmask = (1u64 << self.params.r) - 1;
        // Each layer hashes what the layer before remixed.
        let mut carried = hash;
        for (i, layer) in self.layers.iter().enumerate() {
            if layer.num_slots == 0 {
                return false;
            }
            let x = remix(carried, seed_mix(layer.seed));
            let s = start(x, layer.num_starts(), 0);
            let last = i + 1 == self.layers.len();
            if !last {
                let t = layer.thresholds[(s / self.params.bucket) as usize];
                if self.params.back(s) >= t {
                    carried = x;
                    continue;
                }
            }
            let c: W = coeff(x);
            let mut v = 0;
            for k in 0..W::BITS {
                if c.bit(k) == 1 {
                    v ^= layer.solution[(s + u64::from(k)) as usize];
                }
            }
            return v == result(x) & rmask;
        }
        false
    }
}

/// Inserts `(c, b)` from row `i` on: `Ok(Some(row))` with the row it ends
/// in, `Ok(None)` when the rows imply it (it stays, without a row),
/// `Err(())` when they contradict it.
fn insert<W: Coeff>(
    rows: &mut [(W, u64)],
    mut i: usize,
    mut c: W,
    mut b: u64,
    limit: usize,
) -> Result<Option<usize>, ()> {
    loop {
        if i >= limit {
            return Err(());
        }
        let (rc, rb) = rows[i];
        if rc.is_zero() {
            rows[i] = (c, b);
            return Ok(Some(i));
        }
        c = c ^ rc;
        b ^= rb;
        if c.is_zero() {
            return if b == 0 { Ok(None) } else { Err(()) };
        }
        let (shift, rest) = c.drop_trailing_zeros();
        i += shift as usize;
        c = rest;
    }
}

/// Slots for `n` keys at `ppm` millionths per key, whole blocks of `w`,
/// at least one block.
fn slots_for(n: usize, ppm: u64, w: u64) -> u64 {
    let slots = (n as u64 * ppm).div_ceil(1_000_000);
    slots.div_ceil(w).max(1) * w
}

/// Bands `keys` into a layer of `num_slots` slots with seed `seed`;
/// with `bump`, per-bucket thresholds and the bumped keys, else `None`
/// when some key fails. Layers are cut into banding segments of at least
/// `min_segment_buckets` buckets, as the product's are.
pub(crate) fn band_layer<W: Coeff>(
    p: &Params,
    keys: &[u64],
    num_slots: u64,
    seed: u32,
    bump: bool,
    min_segment_buckets: u64,
) -> Option<(Layer, Vec<u64>, u64)> {
    let w = u64::from(W::BITS);
    let mix = seed_mix(seed);
    let num_starts = num_slots - w + 1;
    let mut items: Vec<(u64, u64, u64)> = keys
        .iter()
        .map(|&k| {
            let x = remix(k, mix);
            (start(x, num_starts, 0), x, k)
        })
        .collect();
    // Buckets in order, each from its last start down to its first.
    debug_assert!(p.bucket.is_power_of_two());
    items.sort_unstable_by_key(|&(s, _, k)| (s ^ (p.bucket - 1), k));
    let rmask = (1u64 << p.r) - 1;
    let mut rows = vec![(W::ZERO, 0u64); num_slots as usize];
    let buckets = if bump {
        num_starts.div_ceil(p.bucket) as usize
    } else {
        0
    };
    let mut thresholds = vec![p.bucket; buckets];
    // The product's rules (where chains stop, what a bucket's kept list
    // holds), for the buckets it takes.
    let rules = Buckets::new(p.bucket.trailing_zeros(), p.standard_back() as u32)
        .filter(|_| bump && p.bucket.is_power_of_two());
    let limit = |s: u64| {
        rules
            .and_then(|b| b.chain_limit(W::BITS, buckets as u64, min_segment_buckets, s))
            .map_or(usize::MAX, |l| l as usize)
    };
    let mut bumped = Vec::new();
    // The current bucket's keys that are in, in insertion order (`back`
    // ascending), with their rows (none for a key the rows implied).
    let mut bucket_rows: Vec<(u64, Option<usize>, u64)> = Vec::new();
    let mut current = u64::MAX;
    for &(s, x, _) in &items {
        let b = s / p.bucket;
        let back = p.back(s);
        if bump && b != current {
            bucket_rows.clear();
            current = b;
        }
        if bump && back >= thresholds[b as usize] {
            bumped.push(x);
            continue;
        }
        let inserted = insert::<W>(&mut rows, s as usize, coeff(x), result(x) & rmask, limit(s));
        let kept = bucket_rows.iter().filter(|r| r.1.is_some()).count();
        let inserted = match (inserted, rules) {
            (Ok(Some(row)), Some(rules))
                if !rules.kept_fits(W::BITS, kept, row - (b * p.bucket) as usize) =>
            {
                rows[row] = (W::ZERO, 0);
                Err(())
            }
            (other, _) => other,
        };
        match inserted {
            Ok(row) => {
                if bump {
                    bucket_rows.push((back, row, x));
                }
            }
            Err(()) if bump => {
                // Taking out the keys past the threshold undoes a suffix of
                // the insertions: no key that stays passed through their
                // rows.
                let t = p.threshold_for(back);
                thresholds[b as usize] = t;
                while let Some(&(kb, row, key)) = bucket_rows.last() {
                    if kb < t {
                        break;
                    }
                    if let Some(row) = row {
                        rows[row] = (W::ZERO, 0);
                    }
                    bumped.push(key);
                    bucket_rows.pop();
                }
                bumped.push(x);
            }
            Err(()) => return None,
        }
    }
    let empty = rows.iter().filter(|r| r.0.is_zero()).count() as u64;
    // Back-substitution, one r-bit value per slot; empty rows get
    // pseudo-random values (the FP rate needs them).
    let mut solution = vec![0u64; num_slots as usize];
    for i in (0..num_slots as usize).rev() {
        let (c, b) = rows[i];
        solution[i] = if c.is_zero() {
            free_row(i as u64, mix) & rmask
        } else {
            let mut v = b;
            for k in 1..W::BITS {
                if c.bit(k) == 1 {
                    v ^= solution[i + k as usize];
                }
            }
            v
        };
    }
    let layer = Layer {
        seed,
        num_slots,
        w,
        thresholds,
        solution,
    };
    Some((layer, bumped, empty))
}

/// Builds the layers for `keys` (distinct hashes) with ribbon width `w`
/// (64 or 128).
pub(crate) fn build(w: u32, p: &Params, keys: &[u64]) -> Model {
    if w == 64 {
        build_as::<u64>(p, keys)
    } else {
        build_as::<u128>(p, keys)
    }
}

fn build_as<W: Coeff>(p: &Params, keys: &[u64]) -> Model {
    let w = u64::from(W::BITS);
    let mut model = Model {
        params: *p,
        layers: Vec::new(),
        keys: Vec::new(),
        empty: Vec::new(),
    };
    let mut keys = keys.to_vec();
    let mut seed = 0u32;
    loop {
        model.keys.push(keys.len());
        if keys.len() <= p.last_layer_keys {
            // The last layer: no thresholds; attempt `a` has `n (1 + a /
            // 32)` slots in whole blocks, each with the next seed.
            for attempt in 0.. {
                let n = keys.len() as u64;
                let slots = (n + n * attempt / 32).div_ceil(w) * w;
                if slots == 0 {
                    model.layers.push(Layer {
                        seed,
                        num_slots: 0,
                        w,
                        thresholds: Vec::new(),
                        solution: Vec::new(),
                    });
                    model.empty.push(0);
                    return model;
                }
                let layer = band_layer::<W>(p, &keys, slots, seed, false, MIN_SEGMENT_BUCKETS);
                if let Some((layer, _, empty)) = layer {
                    model.layers.push(layer);
                    model.empty.push(empty);
                    return model;
                }
                seed += 1;
            }
        }
        let slots = slots_for(keys.len(), p.slots_per_key_ppm, w);
        let (layer, bumped, empty) =
            band_layer::<W>(p, &keys, slots, seed, true, MIN_SEGMENT_BUCKETS)
                .expect("bumping layers always build");
        model.layers.push(layer);
        model.empty.push(empty);
        keys = bumped;
        seed += 1;
    }
}

/// The parameters the study chose (see `tests::chosen`).
///
/// Both widths: one bit per bucket (nothing bumped, or the starts from
/// the standard threshold on), and three 16-bit exception slots per 128
/// buckets, the rest of a group's exceptions listed (one slot per 64
/// buckets costs a little less, but 3-6 % of queries then search the list,
/// and that search cost them 2-3 ns each on average). The 2-bit schemes
/// cost too much at 128 starts per bucket (0.22 % at 7 bits/key for the
/// codes alone) or, without exceptions, bump whole buckets now and then
/// (at 512 starts that frees up to ~500 rows at once, and the worst key
/// set shows it).
pub(crate) fn chosen_params(w: u32, r: u32) -> Params {
    let three_exceptions_per_128 = Exceptions::Grouped {
        group: 128,
        slots: 3,
    };
    if w == 64 {
        Params::one_plus_bit(128, 920_000, 800_000, three_exceptions_per_128, r)
    } else {
        Params::one_plus_bit(512, 965_000, 910_000, three_exceptions_per_128, r)
    }
}

#[cfg(test)]
mod tests;
