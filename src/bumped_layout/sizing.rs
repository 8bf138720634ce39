//! Bumped Ribbon's layer sizing: the last layer's and the bumping layers'
//! blocks, each layer's cap, upper blocks, and the bounds (layers, bytes,
//! scratch) of a build whatever its keys.

use super::{Buckets, ENTRY_BYTES, GROUP_BYTES, order_scratch_words, threshold_groups};
use crate::error::Error;
use crate::layout::{Geometry, HEADER_BYTES, Kind, Width};
use crate::word::Rows;

/// A layer with at most this many keys is the last one: a Standard Ribbon
/// without thresholds, grown until it builds.
pub(crate) const LAST_LAYER_KEYS: u64 = 2048;

/// Sizes the last layer tries, each with the next seed: attempt `a` has
/// `keys * (1 + a / 32)` slots, rounded up to whole blocks, so at most
/// 47/32 of its keys (it needs about 1.04-1.15 of them).
pub(crate) const LAST_LAYER_ATTEMPTS: u64 = 16;

/// Seeds a bumping layer tries before its bumped keys fit the next layer's
/// cap ([`next_cap`]); with the caps' margin the first one does unless the
/// hashes are crafted. The first is the plan's next seed, the others come
/// from a digest of the layer's keys (`bump::key_set_digest`), which
/// hashes crafted against the plan's seeds cannot foresee.
pub(crate) const BUMPING_SEEDS: u32 = 16;

/// Attempts the last layer makes at its largest size
/// ([`LAST_LAYER_ATTEMPTS`]` - 1`) after those, with seeds from a digest
/// of its keys, as a bumping layer retries: hashes crafted to contradict
/// each other under the plan's seeds do not under these.
pub(crate) const LAST_LAYER_RETRIES: u64 = 16;

/// Most layers a filter may have. The caps shrink by at least 8x per layer
/// from at most 2^40 keys, so plans need at most 13.
pub(crate) const MAX_LAYERS: usize = 16;

/// Slots per key of a bumping layer, in millionths: 0.92 for w = 64, 0.965
/// for w = 128 (`bumped_study::chosen_params`).
const fn slots_per_key_ppm(width: Width) -> u64 {
    match width {
        Width::W64 => 920_000,
        Width::W128 => 965_000,
    }
}

/// Blocks of a bumping layer for `keys` keys: `keys` times the width's
/// slots per key, rounded up to whole blocks, at least one.
pub(crate) const fn bumping_blocks(width: Width, keys: u64) -> u64 {
    let w = width.bits() as u64;
    // `ceil(keys * ppm / 10^6)` without overflow for any `keys`.
    let ppm = slots_per_key_ppm(width);
    let slots = keys / 1_000_000 * ppm + (keys % 1_000_000 * ppm).div_ceil(1_000_000);
    let blocks = slots.div_ceil(w);
    if blocks == 0 { 1 } else { blocks }
}

/// Whether `blocks` are [`bumping_blocks`]`(width, keys)`, by products
/// where that divides: it is `max(1, ceil(keys * ppm / (10^6 * w)))`
/// (ceilings of positive divisors compose), so `blocks` are it exactly
/// when `(blocks - 1) * 10^6 * w < keys * ppm <= blocks * 10^6 * w`, or
/// `blocks` is 1 for no keys. A layer table's check: on 32-bit targets
/// each 64-bit division is a call three frames deep (88 bytes of a
/// Cortex-M4's stack under an open). Keys past 2^40, which no header
/// holds, are compared by division.
pub(crate) const fn is_bumping_blocks(width: Width, keys: u64, blocks: u64) -> bool {
    let Some(x) = keys.checked_mul(slots_per_key_ppm(width)) else {
        return blocks == bumping_blocks(width, keys);
    };
    if x == 0 {
        return blocks == 1;
    }
    let per_block = 1_000_000 * width.bits() as u64;
    let below = match blocks.checked_sub(1) {
        Some(b) => match b.checked_mul(per_block) {
            Some(low) => low < x,
            None => false,
        },
        None => false,
    };
    let within = match blocks.checked_mul(per_block) {
        Some(high) => x <= high,
        None => true,
    };
    below && within
}

/// Blocks of the last layer for `keys` keys at attempt `attempt`
/// ([`LAST_LAYER_ATTEMPTS`]); 0 for no keys.
pub(crate) const fn last_blocks(width: Width, keys: u64, attempt: u64) -> u64 {
    let slots = keys + keys * attempt / 32;
    slots.div_ceil(width.bits() as u64)
}

/// The most keys the layer after one capped at `cap` keys may receive: a
/// bumping layer that bumps more retries with its next seed. Bumping
/// layers of 10^6 keys bump 8.02-8.06 % of them at w = 64 and 3.50-3.51 %
/// at w = 128 (6 key sets each; smaller layers a little more, 8.6 % of
/// 6,400 keys), so the caps, 8.5 % and 3.8 % plus 512, are practically
/// never met by honest keys, and the plan's bound on the filter's size
/// stays within about 0.5 % of what builds write.
pub(crate) const fn next_cap(width: Width, cap: u64) -> u64 {
    let ppm = match width {
        Width::W64 => 85_000,
        Width::W128 => 38_000,
    };
    cap / 1_000_000 * ppm + (cap % 1_000_000) * ppm / 1_000_000 + 512
}

/// Upper blocks (one column more) of a layer of `blocks` blocks: the
/// fewest last blocks whose starts are at least `upper_millis / 1000` of
/// the layer's, so that the layer's FP rate is at most the columns' (the
/// last block has a single start); none at 64 lower columns or without
/// a fraction.
pub(crate) const fn upper_blocks(
    width: Width,
    blocks: u64,
    lower_columns: u32,
    upper_millis: u32,
) -> u64 {
    if lower_columns >= crate::layout::MAX_COLUMNS || upper_millis == 0 || blocks == 0 {
        return 0;
    }
    let w = width.bits() as u128;
    let millis = if upper_millis > 1000 {
        1000
    } else {
        upper_millis
    } as u128;
    // `k` upper blocks hold `(k - 1) w + 1` of the `(blocks - 1) w + 1`
    // starts.
    let need = millis * ((blocks as u128 - 1) * w + 1);
    let k = if need > 1000 {
        1 + (need - 1000).div_ceil(1000 * w)
    } else {
        1
    };
    if k > blocks as u128 { blocks } else { k as u64 }
}

/// A layer's geometry: `blocks` blocks of `lower_columns` columns,
/// [`upper_blocks`] of them with one more.
pub(crate) fn layer_geometry(
    width: Width,
    blocks: u64,
    lower_columns: u32,
    upper_millis: u32,
) -> Result<Geometry, Error> {
    let upper = upper_blocks(width, blocks, lower_columns, upper_millis);
    let blocks = usize::try_from(blocks).map_err(|_| Error::TooLarge)?;
    let upper = usize::try_from(upper).map_err(|_| Error::TooLarge)?;
    let columns = columns_of(blocks, lower_columns);
    Geometry::new(Kind::Standard, width, blocks, columns, blocks - upper)
}

/// Payload bytes of a layer of `blocks` blocks ([`layer_geometry`]'s).
// Out of line: inlined twice into `layer_bounds`, its 128-bit arithmetic
// made that frame a third of a plan's stack on 32-bit Arm.
#[inline(never)]
const fn payload_bytes(width: Width, blocks: u64, lower_columns: u32, upper_millis: u32) -> u128 {
    if blocks == 0 {
        return 0;
    }
    let words = blocks as u128 * lower_columns as u128
        + upper_blocks(width, blocks, lower_columns, upper_millis) as u128;
    words * width.word_bytes() as u128
}

/// Starts of a layer of `blocks` blocks (at least one).
const fn starts_of(width: Width, blocks: u64) -> u64 {
    let w = width.bits() as u64;
    blocks * w - w + 1
}

/// The most listed exceptions a bumping layer of `num_buckets` buckets
/// keeps: one per group of [`GROUP_BUCKETS`](super::GROUP_BUCKETS)
/// buckets and 16 more (a build that lists more retries the layer with
/// its next seed). Layers of 10^6 keys list none or one: a group lists
/// only its fourth exception on, and there is about one exception per 75
/// to 130 buckets.
pub(crate) const fn max_listed(num_buckets: u64) -> u64 {
    threshold_groups(num_buckets) + 16
}

/// What a build of `num_keys` keys needs at most, whatever the keys, as
/// [`layer_bounds`] computes it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct LayerBounds {
    /// Layers.
    pub(crate) layers: usize,
    /// Serialized bytes.
    pub(crate) filter_bytes: u128,
    /// Slots of the largest layer.
    pub(crate) max_slots: u128,
    /// Starts of the first layer when it bumps (0 when it is the last).
    pub(crate) first_starts: u64,
}

/// The bounds of a build of `num_keys` keys with `lower_columns` columns
/// (`upper_millis / 1000` of the blocks one more): each layer's keys are
/// capped at [`next_cap`] of the one before (a build that bumps more
/// retries the layer), each layer sized for its cap, as a bumping layer
/// (with [`max_listed`] exceptions) or as the last one (with its largest
/// attempt), whichever is larger. `None` past [`MAX_LAYERS`] (not for
/// up to 2^40 keys). `const` for `crate::bounds` (and the same as the C
/// header's macros).
pub(crate) const fn layer_bounds(
    width: Width,
    num_keys: u64,
    lower_columns: u32,
    upper_millis: u32,
) -> Option<LayerBounds> {
    let w = width.bits() as u128;
    let mut cap = num_keys;
    let mut b = LayerBounds {
        layers: 0,
        filter_bytes: HEADER_BYTES as u128,
        max_slots: 0,
        first_starts: 0,
    };
    loop {
        b.layers += 1;
        if b.layers > MAX_LAYERS {
            return None;
        }
        let last_keys = if cap < LAST_LAYER_KEYS {
            cap
        } else {
            LAST_LAYER_KEYS
        };
        let last = last_blocks(width, last_keys, LAST_LAYER_ATTEMPTS - 1);
        let last_bytes = payload_bytes(width, last, lower_columns, upper_millis);
        b.max_slots = max(b.max_slots, last as u128 * w);
        b.filter_bytes += ENTRY_BYTES as u128;
        if cap <= LAST_LAYER_KEYS {
            b.filter_bytes += last_bytes;
            return Some(b);
        }
        let blocks = bumping_blocks(width, cap);
        let num_buckets = Buckets::for_width(width).count(starts_of(width, blocks));
        let metadata = threshold_groups(num_buckets) as u128 * GROUP_BYTES as u128
            + 4 * max_listed(num_buckets) as u128;
        let bumping_bytes = metadata + payload_bytes(width, blocks, lower_columns, upper_millis);
        if b.layers == 1 {
            b.first_starts = starts_of(width, blocks);
        }
        b.max_slots = max(b.max_slots, blocks as u128 * w);
        b.filter_bytes += max(last_bytes, bumping_bytes);
        cap = next_cap(width, cap);
    }
}

/// Scratch words of a build with these bounds ([`layer_bounds`]) whose
/// keys take `key_words` words each (a filter's 1, a retrieval key's 2):
/// `(rows, next layer's keys, ordered keys, counting sort, thresholds)`.
/// The rows also hold the keys sorted by bucket.
pub(crate) const fn scratch_parts(
    width: Width,
    num_keys: u64,
    key_words: u64,
    b: &LayerBounds,
) -> [u128; 5] {
    let buckets = Buckets::for_width(width);
    let bumps = num_keys > LAST_LAYER_KEYS;
    let key_words = key_words as u128;
    let rows = b.max_slots * Rows::stride_for(width, true) as u128;
    let sorted = if bumps {
        num_keys as u128 * key_words
    } else {
        0
    };
    [
        max(rows, sorted),
        if bumps {
            next_cap(width, num_keys) as u128 * key_words
        } else {
            0
        },
        num_keys as u128 * key_words,
        if bumps {
            order_scratch_words(buckets, width, b.first_starts) as u128
        } else {
            0
        },
        buckets.count(b.first_starts).div_ceil(4) as u128,
    ]
}

const fn max(a: u128, b: u128) -> u128 {
    if a > b { a } else { b }
}

/// A layer's lower columns: the filter's, but none without blocks (an
/// empty last layer).
pub(super) fn columns_of(blocks: usize, lower_columns: u32) -> u32 {
    if blocks == 0 { 0 } else { lower_columns }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_kit::splitmix64;

    /// [`is_bumping_blocks`] answers as a comparison with
    /// [`bumping_blocks`] does, for the blocks next to the right ones:
    /// every key count to 200,000, counts around multiples of 10^6, and
    /// random ones to past 2^40.
    #[test]
    fn bumping_blocks_checked_by_products() {
        // Miri checks a sample: the full sweep is minutes of interpretation.
        let scale = if cfg!(miri) { 1000 } else { 1 };
        let mut state = 3;
        let mut keys: std::vec::Vec<u64> = (0..200_000 / scale).collect();
        for m in 1..2_000 / scale {
            keys.extend([m * 1_000_000 - 1, m * 1_000_000, m * 1_000_000 + 1]);
        }
        for _ in 0..20_000 / scale {
            let x = splitmix64(&mut state);
            keys.extend([x >> 24, x >> 40, x, u64::MAX - (x >> 50)]);
        }
        for width in [Width::W64, Width::W128] {
            for &k in &keys {
                let right = bumping_blocks(width, k);
                for b in [
                    right.wrapping_sub(1),
                    right,
                    right.wrapping_add(1),
                    0,
                    u64::MAX,
                ] {
                    assert_eq!(
                        is_bumping_blocks(width, k, b),
                        b == right,
                        "{width:?}: {k} keys, {b} blocks (bumping_blocks {right})"
                    );
                }
            }
        }
    }
}
