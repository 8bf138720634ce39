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
//!   down to its first. A key's *class* is how far its start lies from the
//!   bucket's end: 0 within `lower` starts, 1 within `upper`, 2 beyond
//!   (the lowest starts). When a key of class `k`
//!   fails to insert (its equation reduces to zero), the keys of class `k`
//!   inserted before it in the same bucket are taken out again (their rows
//!   zeroed: elimination only ever writes the row a key ends in), and it
//!   and every later key of the bucket (class `k` or more) are *bumped*.
//!   The bucket's 2-bit threshold records `k` (3: nothing bumped).
//! * A query in that bucket with class `>= threshold` was bumped: it goes
//!   to the next layer (another seed, sized for the bumped keys); otherwise
//!   this layer answers. The lowest starts of a bucket compete with the
//!   rows the previous bucket spilled into it; bumping them relieves the
//!   overload where it is.
//! * The last layer has no thresholds: a Standard Ribbon sized with slack,
//!   grown and reseeded until it builds.
//!
//! Space: every layer's slots times `r` bits, plus 2 bits per bucket of
//! every layer but the last. A non-member ends in exactly one layer and
//! matches there with probability `2^-r`, so the overhead over the
//! information-theoretic minimum is `bits / (n * r) - 1`.

extern crate std;

use std::vec;
use std::vec::Vec;

use crate::hash::{Coeff, coeff, free_row, remix, result, seed_mix, start};

/// Threshold meaning "nothing in this bucket was bumped".
const NOTHING_BUMPED: u8 = 3;

/// The parameters under study.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Params {
    /// Starts per bucket.
    pub(crate) bucket: u64,
    /// Slots per key of the bumping layers, in millionths (below 10^6:
    /// overloaded).
    pub(crate) slots_per_key_ppm: u64,
    /// Class boundaries as starts back from the bucket's end, in
    /// millionths of `bucket`: class 0 below `lower`, 1 below `upper`, 2
    /// above.
    pub(crate) lower_ppm: u64,
    pub(crate) upper_ppm: u64,
    /// Result bits per key.
    pub(crate) r: u32,
    /// A layer with at most this many keys is the last one.
    pub(crate) last_layer_keys: usize,
}

impl Params {
    /// Class boundaries from the overload `eps = slots_per_key - 1` as in
    /// the paper's code for w >= 64: `lower = (0.78 + 1.30 eps) B`,
    /// `upper = (0.91 + 0.75 eps) B` (in integers, millionths).
    pub(crate) fn with_paper_classes(bucket: u64, slots_per_key_ppm: u64, r: u32) -> Params {
        let eps = slots_per_key_ppm as i64 - 1_000_000;
        Params {
            bucket,
            slots_per_key_ppm,
            lower_ppm: (780_000 + 130 * eps / 100) as u64,
            upper_ppm: (910_000 + 75 * eps / 100) as u64,
            r,
            last_layer_keys: 2048,
        }
    }

    /// The class of a start: by its distance from the *end* of its bucket
    /// (keys are banded from the bucket's last start down to its first, so
    /// the ones bumped are those with the lowest starts).
    fn class(&self, start: u64) -> u8 {
        let into = (self.bucket - 1 - start % self.bucket) * 1_000_000;
        if into >= self.upper_ppm * self.bucket {
            2
        } else if into >= self.lower_ppm * self.bucket {
            1
        } else {
            0
        }
    }
}

/// One layer: its slots, seed, thresholds and solution.
#[derive(Debug)]
pub(crate) struct Layer {
    pub(crate) seed: u32,
    pub(crate) num_slots: u64,
    w: u64,
    /// Per bucket; empty for the last layer.
    pub(crate) thresholds: Vec<u8>,
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
            .map(|l| l.num_slots * u64::from(self.params.r) + 2 * l.thresholds.len() as u64)
            .sum()
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

    /// Whether `hash` may be a member.
    pub(crate) fn contains(&self, hash: u64) -> bool {
        match self.layers[0].w {
            64 => self.contains_as::<u64>(hash),
            _ => self.contains_as::<u128>(hash),
        }
    }

    fn contains_as<W: Coeff>(&self, hash: u64) -> bool {
        let rmask = (1u64 << self.params.r) - 1;
        for (i, layer) in self.layers.iter().enumerate() {
            let x = remix(hash, seed_mix(layer.seed));
            let s = start(x, layer.num_starts(), 0);
            let last = i + 1 == self.layers.len();
            if !last {
                let t = layer.thresholds[(s / self.params.bucket) as usize];
                if self.params.class(s) >= t {
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

/// Inserts `(c, b)` from row `i` on; the row it ends in, or `None` when
/// the equation reduces to zero (redundant or inconsistent: either way the
/// key cannot stay).
fn insert<W: Coeff>(rows: &mut [(W, u64)], mut i: usize, mut c: W, mut b: u64) -> Option<usize> {
    loop {
        let (rc, rb) = rows[i];
        if rc.is_zero() {
            rows[i] = (c, b);
            return Some(i);
        }
        c = c ^ rc;
        b ^= rb;
        if c.is_zero() {
            return None;
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
/// when some key fails.
fn band_layer<W: Coeff>(
    p: &Params,
    keys: &[u64],
    num_slots: u64,
    seed: u32,
    bump: bool,
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
    let mut thresholds = vec![NOTHING_BUMPED; buckets];
    let mut bumped = Vec::new();
    // Keys of the current bucket and class that are in, with their rows.
    let mut class_rows: Vec<(usize, u64)> = Vec::new();
    let mut current = (u64::MAX, NOTHING_BUMPED);
    for &(s, x, k) in &items {
        let b = s / p.bucket;
        let class = p.class(s);
        if bump && (b, class) != current {
            class_rows.clear();
            current = (b, class);
        }
        if bump && thresholds[b as usize] != NOTHING_BUMPED {
            bumped.push(k);
            continue;
        }
        match insert::<W>(&mut rows, s as usize, coeff(x), result(x) & rmask) {
            Some(row) => {
                if bump {
                    class_rows.push((row, k));
                }
            }
            None if bump => {
                thresholds[b as usize] = class;
                for &(row, key) in &class_rows {
                    rows[row] = (W::ZERO, 0);
                    bumped.push(key);
                }
                class_rows.clear();
                bumped.push(k);
            }
            None => return None,
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
            // The last layer: no thresholds; grow by 1/16 and reseed until
            // it builds.
            let mut slots = slots_for(keys.len(), 1_000_000, w);
            loop {
                if let Some((layer, _, empty)) = band_layer::<W>(p, &keys, slots, seed, false) {
                    model.layers.push(layer);
                    model.empty.push(empty);
                    return model;
                }
                seed += 1;
                slots = (slots + slots / 16).div_ceil(w) * w;
            }
        }
        let slots = slots_for(keys.len(), p.slots_per_key_ppm, w);
        let (layer, bumped, empty) =
            band_layer::<W>(p, &keys, slots, seed, true).expect("bumping layers always build");
        model.layers.push(layer);
        model.empty.push(empty);
        keys = bumped;
        seed += 1;
    }
}

/// The parameters the study chose (see `tests::chosen`).
pub(crate) fn chosen_params(w: u32, r: u32) -> Params {
    if w == 64 {
        Params::with_paper_classes(128, 920_000, r)
    } else {
        Params {
            lower_ppm: 850_000,
            upper_ppm: 920_000,
            ..Params::with_paper_classes(512, 970_000, r)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_kit::splitmix64;

    fn keys(n: usize, seed: u64) -> Vec<u64> {
        let mut state = seed;
        (0..n).map(|_| splitmix64(&mut state)).collect()
    }

    /// A study setting from the environment, or `default`.
    fn study_setting(name: &str, default: u64) -> u64 {
        std::env::var(name)
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(default)
    }

    fn check_members(w: u32, p: &Params, n: usize) {
        let ks = keys(n, 7 + n as u64);
        let model = build(w, p, &ks);
        for &k in &ks {
            assert!(model.contains(k), "w {w}, n {n}: member {k:#x} missing");
        }
    }

    #[test]
    fn every_member_is_found() {
        // Miri interprets every row operation: the small sizes cover the
        // same paths there.
        let sizes: &[usize] = if cfg!(miri) {
            &[0, 1, 2, 65, 200]
        } else {
            &[0, 1, 2, 63, 64, 65, 1000, 30_000]
        };
        for &n in sizes {
            check_members(64, &Params::with_paper_classes(128, 965_000, 8), n);
            check_members(128, &Params::with_paper_classes(512, 980_000, 7), n);
        }
    }

    /// The chosen parameters over 20 fresh key sets: worst overhead, and the
    /// FP rate of the worst set over 4 * 10^6 non-members.
    /// `cargo test --release --lib bumped_study::tests::chosen -- --ignored --nocapture`
    #[test]
    #[ignore]
    fn chosen() {
        let n = study_setting("RIBBON_STUDY_KEYS", 1_000_000) as usize;
        for r in [7u32, 8] {
            for w in [64u32, 128] {
                let p = chosen_params(w, r);
                let mut worst = (i64::MIN, 0u64);
                for set in 0..20u64 {
                    let ppm = build(w, &p, &keys(n, 1000 + set)).overhead_ppm();
                    worst = worst.max((ppm, set));
                }
                let model = build(w, &p, &keys(n, 1000 + worst.1));
                let probes = 4_000_000u64;
                let non_members = keys(probes as usize, u64::MAX - worst.1);
                let fp = non_members.iter().filter(|&&k| model.contains(k)).count() as u64;
                std::println!(
                    "w {w} r {r} {p:?}: worst overhead of 20 sets {:.3} % (set {}); its FP {fp} / {probes} = {:.4} % (2^-r = {:.4} %)",
                    worst.0 as f64 / 1e4,
                    worst.1,
                    fp as f64 * 100.0 / probes as f64,
                    100.0 / f64::from(1u32 << r)
                );
            }
        }
    }

    /// Class boundaries around the paper's, for one width and bucket size:
    /// `RIBBON_STUDY_W` (64), `RIBBON_STUDY_B` (128), `RIBBON_STUDY_LOAD`
    /// (slots per key in millionths, 950000).
    #[test]
    #[ignore]
    fn classes() {
        let n = study_setting("RIBBON_STUDY_KEYS", 1_000_000) as usize;
        let (w, bucket, load) = (
            study_setting("RIBBON_STUDY_W", 64),
            study_setting("RIBBON_STUDY_B", 128),
            study_setting("RIBBON_STUDY_LOAD", 950_000),
        );
        let r = 8;
        // Overheads vary with the key set (a bucket that bumps a whole
        // class frees its rows): the worst of four sets decides.
        let sets: Vec<Vec<u64>> = (0..4).map(|s| keys(n, 2000 + s)).collect();
        for lower in [750_000u64, 850_000, 900_000] {
            for upper in [920_000u64, 950_000] {
                if upper <= lower {
                    continue;
                }
                let p = Params {
                    lower_ppm: lower,
                    upper_ppm: upper,
                    ..Params::with_paper_classes(bucket, load, r)
                };
                let overheads: Vec<f64> = sets
                    .iter()
                    .map(|ks| build(w as u32, &p, ks).overhead_ppm() as f64 / 1e4)
                    .collect();
                let worst = overheads.iter().cloned().fold(f64::MIN, f64::max);
                std::println!(
                    "w {w} B {bucket} load {load} lower {lower} upper {upper}: worst overhead {worst:.3} % of {overheads:.3?}"
                );
            }
        }
    }

    /// The parameter sweep: `cargo test --release --lib bumped_study::tests::sweep -- --ignored --nocapture`
    /// (n from `RIBBON_STUDY_KEYS`, default 10^6).
    #[test]
    #[ignore]
    fn sweep() {
        let n = study_setting("RIBBON_STUDY_KEYS", 1_000_000) as usize;
        let r = 8;
        std::println!("n = {n}, r = {r}");
        for (w, buckets, loads) in [
            (
                64u32,
                &[128u64][..],
                &[920_000u64, 935_000, 950_000, 960_000][..],
            ),
            (
                128,
                &[256, 512][..],
                &[950_000, 960_000, 970_000, 975_000][..],
            ),
        ] {
            for &bucket in buckets {
                for &load in loads {
                    let p = Params::with_paper_classes(bucket, load, r);
                    let model = build(w, &p, &keys(n, 1));
                    std::println!(
                        "w {w} B {bucket} slots/key {load} lower {} upper {}: overhead {:.3} %, keys per layer {:?}, empty {:?}",
                        p.lower_ppm,
                        p.upper_ppm,
                        model.overhead_ppm() as f64 / 1e4,
                        model.keys,
                        model.empty
                    );
                }
            }
        }
    }
}
