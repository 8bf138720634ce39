//! Key hashes crafted against a Bumped build's first layer (issue 38),
//! from the public hashing constants of `src/hash.rs` alone: the remix is
//! `x = (hash ^ seed * SEED_SPREAD) * REMIX`, a key starts at
//! `mulhi(x, starts)`, its w = 64 coefficients are `x * COEFF | 1` (w =
//! 128: the whole 128-bit product) and its result bits
//! `fold(x * RESULT)`.
//!
//! A bucket's keys are banded from its last start back, and the first key
//! that contradicts the rows bumps every key at least as far back. Keys at
//! the last start whose coefficients are linearly dependent and whose
//! results are not make the bucket bump all its keys:
//! * [`four_dependent`]: four keys, the fewest possible (w = 64; each
//!   costs a search of about half the layer's starts);
//! * [`dense`]: `w + 8` keys at one start, dependent whatever their
//!   coefficients (any width, no search).
//!
//! Used by `tests/hostile.rs` and `examples/crafted_keys.rs`.
#![allow(dead_code)]

use super::kit::splitmix64;

pub const SEED_SPREAD: u64 = 0x91d9_3080_f9b4_39fd;
pub const REMIX: u64 = 0x3cea_af30_8142_c8eb;
pub const COEFF: u64 = 0x6276_55da_a05f_1119;
pub const RESULT: u64 = 0x6301_bbfc_a0c5_154f;

/// `x` with `x * odd == 1 (mod 2^64)`.
pub fn inverse(odd: u64) -> u64 {
    // Newton's iteration doubles the correct low bits each step.
    let mut x = odd;
    for _ in 0..6 {
        x = x.wrapping_mul(2u64.wrapping_sub(odd.wrapping_mul(x)));
    }
    x
}

fn folded(x: u64, k: u64) -> u64 {
    let p = u128::from(x) * u128::from(k);
    p as u64 ^ (p >> 64) as u64
}

/// The hash whose remix under `seed` is `x`.
pub fn hash_of(x: u64, seed: u32) -> u64 {
    x.wrapping_mul(inverse(REMIX)) ^ u64::from(seed).wrapping_mul(SEED_SPREAD)
}

/// The first layer of a Bumped build of `n` keys of width `w` (64 or 128):
/// its starts and the starts per bucket (`src/bumped_layout.rs`: 0.92 or
/// 0.965 slots per key in whole blocks, buckets of 128 or 512 starts).
pub fn first_layer(w: u64, n: u64) -> (u64, u64) {
    let (ppm, bucket) = if w == 64 {
        (920_000, 128)
    } else {
        (965_000, 512)
    };
    let blocks = (n * ppm).div_ceil(1_000_000).div_ceil(w).max(1);
    (blocks * w - w + 1, bucket)
}

/// The remixed values that start at `s` of `starts`: `lo..hi`.
fn start_range(s: u64, starts: u64) -> (u64, u64) {
    let at =
        |s: u64| ((u128::from(s) << 64).div_ceil(u128::from(starts))).min(u128::from(u64::MAX));
    (at(s) as u64, at(s + 1) as u64)
}

/// Four remixed values starting at `s` whose w = 64 coefficients are
/// linearly dependent and whose result bits (the low `columns`) are not:
/// whichever is banded last contradicts the other three.
pub fn four_dependent(s: u64, starts: u64, columns: u32, state: &mut u64) -> [u64; 4] {
    let (lo, hi) = start_range(s, starts);
    let span = hi - lo;
    let unmul = inverse(COEFF);
    let mask = if columns >= 64 {
        u64::MAX
    } else {
        (1 << columns) - 1
    };
    let pick = |state: &mut u64| lo + splitmix64(state) % span;
    loop {
        let (x1, x2) = (pick(state), pick(state));
        let pair = x1.wrapping_mul(COEFF) ^ x2.wrapping_mul(COEFF);
        // For a third value, the fourth whose product completes the XOR
        // (bit 0 either way: every coefficient has it set) lies in the
        // range about once in `starts` tries.
        for _ in 0..64 * starts {
            let x3 = pick(state);
            let target = pair ^ x3.wrapping_mul(COEFF);
            for low in [0, 1] {
                let x4 = (target ^ low).wrapping_mul(unmul);
                if !(lo..hi).contains(&x4) || [x1, x2, x3].contains(&x4) || x1 == x2 {
                    continue;
                }
                let xs = [x1, x2, x3, x4];
                let c = xs.iter().fold(0, |a, &x| a ^ (x.wrapping_mul(COEFF) | 1));
                let b = xs.iter().fold(0, |a, &x| a ^ folded(x, RESULT)) & mask;
                if c == 0 && b != 0 {
                    return xs;
                }
            }
        }
    }
}

/// `count` distinct remixed values starting at `s` (more than the ribbon
/// width: their coefficients are dependent, whatever they are).
pub fn dense(s: u64, starts: u64, count: usize, state: &mut u64) -> Vec<u64> {
    let (lo, hi) = start_range(s, starts);
    let mut xs: Vec<u64> = Vec::with_capacity(count);
    while xs.len() < count {
        let x = lo + splitmix64(state) % (hi - lo);
        if !xs.contains(&x) {
            xs.push(x);
        }
    }
    xs
}

/// How the crafted keys of each bucket are made.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sets {
    /// [`four_dependent`] (w = 64 only).
    Four,
    /// [`dense`], `w + 8` keys.
    Dense,
}

/// About `count` hashes crafted against the first layer of a Bumped build
/// of `n` keys (these included) of width `w` and `columns` columns, under
/// each of `seeds` (a share each), `back` starts before the last start of
/// buckets spread over the layer: under its seed, each set makes its
/// bucket bump every key at least `back` starts from its end (all of them
/// at `back` 0; a build gives up on a seed at once when buckets
/// contradict themselves in the last quarter of their starts, so an
/// attacker who knows it aims further back).
#[allow(clippy::too_many_arguments)]
pub fn against_first_layer(
    w: u64,
    n: u64,
    columns: u32,
    seeds: std::ops::Range<u32>,
    count: usize,
    sets: Sets,
    back: u64,
    state: &mut u64,
) -> Vec<u64> {
    let (starts, bucket) = first_layer(w, n);
    let per_set = match sets {
        Sets::Four => 4,
        Sets::Dense => w as usize + 8,
    };
    let whole_buckets = starts / bucket;
    let seeds_len = seeds.len().max(1);
    let per_seed = (count / per_set).div_ceil(seeds_len).max(1) as u64;
    let mut out = Vec::with_capacity(count);
    for seed in seeds {
        for i in 0..per_seed.min(whole_buckets) {
            let b = i * whole_buckets / per_seed.min(whole_buckets);
            let s = (b + 1) * bucket - 1 - back.min(bucket - 1);
            let xs = match sets {
                Sets::Four => four_dependent(s, starts, columns, state).to_vec(),
                Sets::Dense => dense(s, starts, per_set, state),
            };
            out.extend(xs.into_iter().map(|x| hash_of(x, seed)));
        }
    }
    out
}
