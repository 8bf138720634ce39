//! Bumped Ribbon's layers (issue 18): sizing, the thresholds' encoding and
//! the serialized layer table, with the validation of untrusted bytes.
//!
//! A Bumped filter is a stack of Standard Ribbon layers over one ribbon
//! width and one column split. Every layer but the last has fewer slots
//! than keys; its starts are cut into buckets ([`Buckets`]) and each bucket
//! has a threshold: the bucket's keys at least that far back from its end
//! were *bumped* to the next layer. Layer `i + 1` hashes the value layer
//! `i` remixed (a chain of remixes), so a query carries one 64-bit value
//! from layer to layer. The last layer has no thresholds.
//!
//! Serialized (all little-endian): the 48-byte header of
//! [`crate::layout`] with kind 3, whose bytes 24..32 hold the number of
//! layers and 32..40 are zero; then one 32-byte entry per layer; then
//! each layer's data in turn: its threshold groups, its listed exceptions
//! and its ICML payload (a Standard payload of the layer's geometry).
//!
//! | entry offset | size | field |
//! |---|---|---|
//! | 0 | 4 | seed (u32) |
//! | 4 | 4 | listed exceptions (u32) |
//! | 8 | 8 | keys banded into the layer (u64) |
//! | 16 | 8 | `num_blocks` (u64) |
//! | 24 | 8 | `upper_start_block` (u64) |
//!
//! `src/bumped_study.rs` explains the parameters; `src/bump.rs` builds.

use crate::error::Error;
use crate::layout::{Family, Geometry, HEADER_BYTES, Kind, RawHeader, Width};
use crate::word::Rows;

/// Most starts per bucket, as a power of two (thresholds fit 9 bits).
#[cfg(test)]
pub(crate) const MAX_BUCKET_BITS: u32 = 9;

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

/// Bytes of one layer table entry.
pub(crate) const ENTRY_BYTES: usize = 32;

/// How a bumping layer cuts its starts into buckets and bumps.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Buckets {
    /// Starts per bucket, as a power of two (at most [`MAX_BUCKET_BITS`]).
    pub(crate) bits: u32,
    /// The standard threshold: in a bucket that bumps, the keys at least
    /// this many starts back from its end (below the bucket's size).
    pub(crate) standard_back: u32,
}

impl Buckets {
    /// Buckets of `2^bits` starts with a standard threshold of
    /// `standard_back` starts; `None` past [`MAX_BUCKET_BITS`] or unless
    /// the threshold lies within the bucket (tests try other buckets than
    /// [`Buckets::for_width`]'s).
    #[cfg(test)]
    pub(crate) const fn new(bits: u32, standard_back: u32) -> Option<Buckets> {
        if bits > MAX_BUCKET_BITS || standard_back >= 1 << bits {
            return None;
        }
        Some(Buckets {
            bits,
            standard_back,
        })
    }

    /// The buckets of a width, as `bumped_study::chosen_params` settled
    /// them: 128 starts with the lowest 20 % bumped for w = 64, 512 starts
    /// with the lowest 9 % for w = 128 (`ceil(0.80 * 128)` and
    /// `ceil(0.91 * 512)` starts back).
    pub(crate) const fn for_width(width: Width) -> Buckets {
        match width {
            Width::W64 => Buckets {
                bits: 7,
                standard_back: 103,
            },
            Width::W128 => Buckets {
                bits: 9,
                standard_back: 466,
            },
        }
    }

    /// Starts per bucket; also the threshold of a bucket that bumped
    /// nothing (no key lies that far back).
    pub(crate) const fn size(self) -> u32 {
        1 << self.bits
    }

    /// Buckets covering `num_starts` starts.
    pub(crate) const fn count(self, num_starts: u64) -> u64 {
        num_starts.div_ceil(1 << self.bits)
    }

    /// A start's bucket, and how far back from the bucket's end it lies.
    #[inline(always)]
    pub(crate) const fn locate(self, start: u64) -> (u64, u32) {
        let last = (1u64 << self.bits) - 1;
        (start >> self.bits, (!start & last) as u32)
    }

    /// The threshold of a bucket whose first key that cannot go in lies
    /// `back` starts from its end.
    #[inline(always)]
    pub(crate) const fn threshold_for(self, back: u32) -> u32 {
        if self.standard_back <= back {
            self.standard_back
        } else {
            back
        }
    }

    /// Whether a bucket that has kept `kept` keys (each in a row of its
    /// own) may keep one more in `row` (counted from the bucket's first
    /// start): the list that records them, to take them out again, holds
    /// [`kept_entries`] rows below 2^16. A key past it is refused, as one
    /// that contradicts the rows is. A bucket keeps about as many keys as
    /// it has starts before its first refusal, so honest keys never meet
    /// this; it bounds the list whatever the keys. The reference model
    /// asks this; `bump::Lane::settle` gets the same answer from its list,
    /// which is [`kept_entries`] long.
    #[cfg(test)]
    pub(crate) const fn kept_fits(self, w: u32, kept: usize, row: usize) -> bool {
        kept < kept_entries(self, w) && row <= 0xffff
    }

    /// How far back a boundary bucket's low keys lie ([`boundary_buckets`]):
    /// they start in its first half.
    pub(crate) const fn low_back(self) -> u32 {
        self.size() / 2
    }

    /// The first row the elimination chain of a key at `start` may not
    /// reach in a bumping layer of `num_buckets` buckets of width `w`, cut
    /// into segments of at least `min_segment_buckets` buckets
    /// ([`boundary_buckets`]); `None` where none is forbidden. The
    /// reference model and the dense oracle follow it; `bump::band_layer`
    /// gives each lane the rows below it.
    #[cfg(test)]
    pub(crate) fn chain_limit(
        self,
        w: u32,
        num_buckets: u64,
        min_segment_buckets: u64,
        start: u64,
    ) -> Option<u64> {
        let (bucket, back) = self.locate(start);
        for b in boundary_buckets(self, w, num_buckets, min_segment_buckets)? {
            if bucket < b {
                return Some((b << self.bits) + u64::from(self.low_back()));
            }
            if bucket == b {
                return (back >= self.low_back()).then_some((b + 1) << self.bits);
            }
        }
        None
    }

    /// Whether a threshold is neither "nothing bumped" nor the standard
    /// one.
    const fn is_exception(self, threshold: u16) -> bool {
        threshold as u32 != self.size() && threshold as u32 != self.standard_back
    }
}

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
/// keeps: one per group of [`GROUP_BUCKETS`] buckets and 16 more (a build
/// that lists more retries the layer with its next seed). Layers of 10^6
/// keys list none or one: a group lists only its fourth exception on, and
/// there is about one exception per 75 to 130 buckets.
pub(crate) const fn max_listed(num_buckets: u64) -> u64 {
    threshold_groups(num_buckets) + 16
}

/// Segments a bumping layer is banded in, side by side (a chain step is a
/// dependent load, so one chain in flight leaves the core idle).
pub(crate) const BANDING_SEGMENTS: usize = 4;

/// Buckets a layer needs per segment to be banded in [`BANDING_SEGMENTS`]
/// of them; smaller layers are one segment. Each boundary costs about
/// a quarter bucket of empty rows (its low keys may not spill into the
/// next bucket), so only large layers are cut: w = 64 filters of 10^6
/// keys measured 0.225 % over the minimum with their first layer cut,
/// 0.233 % with every layer of 32 buckets or more cut, against 0.218 %
/// uncut (worst of 20 sets, 7 bits per key); w = 128 layers are first cut
/// at about 2.2 x 10^6 keys. The unit tests that compare one layer with
/// the reference model cut from 32 buckets ([`boundary_buckets`] takes
/// the minimum), so that they and the dense oracle see boundaries;
/// `tests/no_false_negatives.rs` builds filters large enough to be cut at
/// this setting.
pub(crate) const MIN_SEGMENT_BUCKETS: u64 = 1024;

/// The boundary buckets of a layer of `num_buckets` buckets of width `w`
/// when it is banded in segments of at least `min_segment_buckets`
/// buckets ([`MIN_SEGMENT_BUCKETS`] but in tests), ascending: segment `k`
/// is the buckets strictly between boundaries `k - 1` and `k` (from the
/// first bucket, to the last). `None`: one segment.
///
/// An elimination chain can reach any row above its start (each row it
/// passes may extend it), so segments are cut by rule, one the reference
/// model follows too ([`Buckets::chain_limit`]): a segment's keys may not
/// reach the middle of the next boundary bucket, and that bucket's keys
/// that start in its first half (its *low* keys, [`Buckets::low_back`])
/// may not reach the next bucket. A key that would is refused, as one
/// that contradicts the rows is. Segment keys seldom meet their wall, but
/// low keys often would have spilled into the next bucket: that is the
/// cost of a boundary ([`MIN_SEGMENT_BUCKETS`]). Under this
/// rule `bump::band_layer` may band a boundary bucket's high keys first,
/// then the segments side by side, then the low keys, and still get what
/// banding bucket by bucket gets: these touch disjoint rows, except that
/// low keys read what the segment before wrote, and high keys' chains
/// run into rows that the segment after reads, both in bucket order.
/// Taking keys out again stays exact: a low key fixes a threshold of at
/// least `size / 2` (the standard one lies there or above), so it never
/// takes out a high key, whose row may lie in the segment after.
pub(crate) const fn boundary_buckets(
    buckets: Buckets,
    w: u32,
    num_buckets: u64,
    min_segment_buckets: u64,
) -> Option<[u64; BANDING_SEGMENTS - 1]> {
    let size = buckets.size();
    if size < 2 * w
        || buckets.standard_back < buckets.low_back()
        || num_buckets < min_segment_buckets * BANDING_SEGMENTS as u64
    {
        return None;
    }
    let mut at = [0; BANDING_SEGMENTS - 1];
    let mut k = 0;
    while k < BANDING_SEGMENTS - 1 {
        at[k] = num_buckets * (k as u64 + 1) / BANDING_SEGMENTS as u64;
        k += 1;
    }
    Some(at)
}

/// Lanes `bump::band_layer` keeps: one per segment, one per boundary
/// bucket.
pub(crate) const BANDING_LANES: usize = 2 * BANDING_SEGMENTS - 1;

/// Entries a lane's list of the current bucket's kept keys has in
/// `bump::band_layer`: one per start of the bucket and a ribbon width
/// more, two per word ([`Buckets::kept_fits`]).
pub(crate) const fn kept_entries(buckets: Buckets, w: u32) -> usize {
    (1 << buckets.bits) + w as usize
}

/// Counters the counting sorts of `bump::order_for_banding` need for a
/// layer of `num_starts` starts: one per bucket (the sort by bucket), or
/// per place in a bucket (each bucket's sort by place) if that is more.
pub(crate) const fn sort_counters(buckets: Buckets, num_starts: u64) -> u64 {
    let num_buckets = buckets.count(num_starts);
    let size = buckets.size() as u64;
    if num_buckets > size {
        num_buckets
    } else {
        size
    }
}

/// Scratch words `bump` needs for a layer of `num_starts` starts, first
/// for [`sort_counters`], then, in the same place, for each banding
/// lane's kept list ([`kept_entries`], two per word).
pub(crate) const fn order_scratch_words(buckets: Buckets, width: Width, num_starts: u64) -> u64 {
    let counters = sort_counters(buckets, num_starts);
    let kept = (BANDING_LANES * kept_entries(buckets, width.bits())).div_ceil(2) as u64;
    if counters > kept { counters } else { kept }
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
fn columns_of(blocks: usize, lower_columns: u32) -> u32 {
    if blocks == 0 { 0 } else { lower_columns }
}

/// Buckets per threshold group.
pub(crate) const GROUP_BUCKETS: u64 = 128;

/// Exception slots per threshold group.
const GROUP_SLOTS: usize = 3;

/// Bytes of a threshold group, little-endian: 128 codes in two 64-bit
/// words (bit `i` of word `j` set: bucket `64 j + i` of the group bumped
/// nothing), then [`GROUP_SLOTS`] 16-bit exception slots (the bucket
/// within the group in the low 7 bits, its threshold in the high 9).
pub(crate) const GROUP_BYTES: usize = 16 + 2 * GROUP_SLOTS;

/// Threshold groups for `num_buckets` buckets.
pub(crate) const fn threshold_groups(num_buckets: u64) -> u64 {
    num_buckets.div_ceil(GROUP_BUCKETS)
}

/// Listed exceptions of exact `thresholds`: those past the slots of
/// their group.
pub(crate) fn listed_exceptions(buckets: Buckets, thresholds: &[u16]) -> usize {
    thresholds
        .chunks(GROUP_BUCKETS as usize)
        .map(|group| {
            let exceptions = group.iter().filter(|&&t| buckets.is_exception(t)).count();
            exceptions.saturating_sub(GROUP_SLOTS)
        })
        .sum()
}

/// A group's slots for its exceptions `first` (in bucket order, as
/// `(bucket within the group, threshold)`; at most [`GROUP_SLOTS`]), and
/// whether it lists more:
/// * none: every slot holds bucket 0 with the standard threshold, which is
///   what that bucket has unless it bumped nothing (and then its code
///   decides);
/// * one to three: in order, the last repeated into the slots left;
/// * more than three: the first three with the second and third swapped,
///   so that a query tells "more are listed" from the slots alone (a
///   later slot naming an earlier bucket), and the listed ones lie past
///   the bucket the middle slot names.
fn group_slots(buckets: Buckets, first: &[(u16, u16)], more: bool) -> [u16; GROUP_SLOTS] {
    let slot = |(bucket, t): (u16, u16)| t << 7 | bucket;
    let mut slots = [slot((0, buckets.standard_back as u16)); GROUP_SLOTS];
    for (i, out) in slots.iter_mut().enumerate() {
        if let Some(&e) = first.get(i).or(first.last()) {
            *out = slot(e);
        }
    }
    if more {
        slots.swap(1, 2);
    }
    slots
}

/// Encodes exact per-bucket `thresholds` (as `bump::band_layer` makes
/// them, with `buckets.standard_back` below the bucket size) into `groups`
/// ([`GROUP_BYTES`] per group of [`GROUP_BUCKETS`] buckets, slots as
/// [`group_slots`] fills them) and `listed` (4 bytes per
/// [`listed_exceptions`] entry, little-endian `bucket << bits | threshold`,
/// ascending). `Err(())` when a buffer is short or a bucket index does not
/// fit a list entry.
pub(crate) fn encode_thresholds(
    buckets: Buckets,
    thresholds: &[u16],
    groups: &mut [u8],
    listed: &mut [u8],
) -> Result<(), ()> {
    let mut listed_at = 0;
    for (g, group) in thresholds.chunks(GROUP_BUCKETS as usize).enumerate() {
        let mut codes = [0u64; 2];
        let mut first = [(0u16, 0u16); GROUP_SLOTS];
        let mut exceptions = 0;
        for (i, &t) in group.iter().enumerate() {
            if u32::from(t) == buckets.size() {
                if let Some(word) = codes.get_mut(i / 64) {
                    *word |= 1 << (i % 64);
                }
            } else if buckets.is_exception(t) {
                if let Some(slot) = first.get_mut(exceptions) {
                    *slot = (i as u16, t);
                } else {
                    let bucket = (g as u64 * GROUP_BUCKETS + i as u64) << buckets.bits;
                    let entry = u32::try_from(bucket | u64::from(t)).map_err(|_| ())?;
                    let out = listed.get_mut(listed_at..listed_at + 4).ok_or(())?;
                    out.copy_from_slice(&entry.to_le_bytes());
                    listed_at += 4;
                }
                exceptions += 1;
            }
        }
        let in_slots = first.get(..exceptions.min(GROUP_SLOTS)).unwrap_or(&first);
        let slots = group_slots(buckets, in_slots, exceptions > GROUP_SLOTS);
        let out = groups
            .get_mut(g * GROUP_BYTES..(g + 1) * GROUP_BYTES)
            .ok_or(())?;
        out[..8].copy_from_slice(&codes[0].to_le_bytes());
        out[8..16].copy_from_slice(&codes[1].to_le_bytes());
        for (i, slot) in slots.iter().enumerate() {
            out[16 + 2 * i..18 + 2 * i].copy_from_slice(&slot.to_le_bytes());
        }
    }
    Ok(())
}

/// A key a layer bumped, as a batch query gathers it: what the key carries
/// to the next layer (its remix with the layer's seed) and where its
/// answer goes. `repr(C)`, so that vector code stores whole pairs.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct BumpedKey {
    pub(crate) x: u64,
    pub(crate) at: usize,
}

/// Encoded thresholds of one layer, as [`encode_thresholds`] wrote them.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ThresholdsRef<'a> {
    pub(crate) buckets: Buckets,
    pub(crate) groups: &'a [u8],
    pub(crate) listed: &'a [u8],
}

/// Selects `a` where `yes` is 1 and `b` where it is 0, with masks: the
/// query's threshold decoding takes each way often and at random, and a
/// mispredicted branch there holds back the loads of the queries after it.
#[inline(always)]
const fn pick(yes: u32, a: u32, b: u32) -> u32 {
    let mask = yes.wrapping_neg();
    (a & mask) | (b & !mask)
}

impl ThresholdsRef<'_> {
    /// Whether this layer bumped the key that starts at `start` (its
    /// remix with the layer's seed through `hash::start`, unsmashed:
    /// `Expander::remix_and_start`): its place in its bucket is at least
    /// the bucket's threshold back from the bucket's end. The reference
    /// that the vector scans (`arch/x86_64/bumped.rs`) match bit for bit;
    /// `bump::band_layer` bumps exactly these keys.
    #[inline(always)]
    pub(crate) fn bumped_flag(&self, start: u64) -> bool {
        let (bucket, back) = self.buckets.locate(start);
        back >= self.threshold(bucket)
    }

    /// Whether [`ThresholdsRef::bumped_flag`] may say bumped: true for
    /// every key the layer bumped and for the few others whose bucket may
    /// have a listed threshold (under 2 %), from the group's codes and
    /// slots alone, without a branch, so that a single query takes one
    /// rare branch instead of the list's and the comparison's.
    #[inline(always)]
    pub(crate) fn maybe_bumped(&self, start: u64) -> bool {
        let (bucket, back) = self.buckets.locate(start);
        let (t, maybe_listed) = self.slotted_threshold(bucket);
        (back >= t) | maybe_listed
    }

    /// The threshold of `bucket`: its keys at least this far back from the
    /// bucket's end were bumped. Bytes that [`encode_thresholds`] did not
    /// write give some threshold, never a panic.
    #[inline]
    pub(crate) fn threshold(&self, bucket: u64) -> u32 {
        let (t, maybe_listed) = self.slotted_threshold(bucket);
        if maybe_listed {
            return self.listed_threshold(bucket).unwrap_or(t);
        }
        t
    }

    /// The threshold of `bucket` as its group's codes and slots give it,
    /// and whether the list may hold another (then the list's, if it has
    /// one, is [`ThresholdsRef::threshold`]). Free of branches, so that a
    /// query can fold its one rare branch (bumped, or maybe listed) into
    /// the comparison with the key's place.
    #[inline(always)]
    pub(crate) fn slotted_threshold(&self, bucket: u64) -> (u32, bool) {
        // Checked: a bucket past the groups (or the address space) reads
        // none.
        let group = usize::try_from(bucket / GROUP_BUCKETS)
            .ok()
            .and_then(|g| g.checked_mul(GROUP_BYTES))
            .and_then(|at| self.groups.get(at..at.checked_add(GROUP_BYTES)?));
        let Some(group) = group else {
            return (self.buckets.size(), false);
        };
        // Two loads: the 64 codes holding the bucket's, and the slots.
        let u64_at = |at: usize| {
            let mut b = [0u8; 8];
            b.copy_from_slice(&group[at..at + 8]);
            u64::from_le_bytes(b)
        };
        let within = (bucket % GROUP_BUCKETS) as u32;
        let codes = u64_at((within / 64) as usize * 8);
        let nothing_bumped = (codes >> (within % 64) & 1) as u32;
        let slots = u64_at(GROUP_BYTES - 8) >> 16;
        let slot_bucket = |i: u32| (slots >> (16 * i)) as u32 & 127;
        let mut t = self.buckets.standard_back;
        for i in 0..GROUP_SLOTS as u32 {
            let slot = (slots >> (16 * i)) as u32 & 0xffff;
            t = pick(u32::from(slot & 127 == within), slot >> 7, t);
        }
        let t = pick(nothing_bumped, self.buckets.size(), t);
        // Only a bumping bucket of a group that lists exceptions (its
        // second slot names a later bucket than its third), past the
        // second slot's bucket, may be listed: one comparison of computed
        // values decides, as separate conditions would become separate
        // branches, one of them taken by half the queries at random.
        let more = u32::from(slot_bucket(1) > slot_bucket(2));
        let listed_past = pick(more, slot_bucket(1), GROUP_BUCKETS as u32);
        let bumping_within = within as i32 - ((nothing_bumped as i32) << 8);
        (t, bumping_within > listed_past as i32)
    }

    /// Binary search of the list for `bucket`, free of branches but for
    /// the loop's, whose trip count depends on the list's length alone
    /// (a bucket's place in the list is random: each branch of a plain
    /// search would be a coin toss). Out of line: under 2 % of queries
    /// get here.
    #[inline(never)]
    fn listed_threshold(&self, bucket: u64) -> Option<u32> {
        let bits = self.buckets.bits;
        let (mut base, mut len) = (0, self.listed.len() / 4);
        if len == 0 {
            return None;
        }
        // The entry sought, if listed, lies in `base..base + len`.
        while len > 1 {
            let half = len / 2;
            let e = listed_entry(self.listed, base + half - 1).unwrap_or(u32::MAX);
            let below = u64::from(e >> bits) < bucket;
            base += half & usize::from(below).wrapping_neg();
            len -= half;
        }
        let e = listed_entry(self.listed, base)?;
        (u64::from(e >> bits) == bucket).then_some(e & ((1 << bits) - 1))
    }

    /// [`Error::CorruptHeader`] unless the groups and the list are what
    /// [`encode_thresholds`] writes for `num_buckets` buckets: each group's
    /// slots are [`group_slots`]' for its exceptions (in bucket order,
    /// below the standard threshold, in the layer, not coded "nothing
    /// bumped"), buckets past the layer have no code set, and the list
    /// holds, in strictly ascending order, only exceptions of groups whose
    /// slots say so, past their slots, with at least one per such group.
    pub(crate) fn validate(&self, num_buckets: u64) -> Result<(), Error> {
        let std_back = self.buckets.standard_back;
        let bad = Error::CorruptHeader;
        let mut next_listed = 0;
        for (g, group) in self.groups.chunks_exact(GROUP_BYTES).enumerate() {
            let codes = |i: u16| {
                let byte = group.get(usize::from(i / 8)).copied().unwrap_or(0xff);
                byte >> (i % 8) & 1
            };
            // Buckets past the layer have no code set.
            let here = num_buckets.saturating_sub(g as u64 * GROUP_BUCKETS);
            if (0..GROUP_BUCKETS as u16).any(|i| u64::from(i) >= here && codes(i) != 0) {
                return Err(bad);
            }
            let mut raw = [0u8; 2 * GROUP_SLOTS];
            raw.copy_from_slice(&group[16..]);
            let slots = [0, 1, 2].map(|i| u16::from_le_bytes([raw[2 * i], raw[2 * i + 1]]));
            let decoded = slots.map(|s| (s & 127, s >> 7));
            let more = decoded[1].0 > decoded[2].0;
            let mut in_order = decoded;
            if more {
                in_order.swap(1, 2);
            }
            // The distinct exceptions the slots hold, in order.
            let mut first = [(0u16, 0u16); GROUP_SLOTS];
            let mut exceptions = 0;
            if u32::from(decoded[0].1) != std_back {
                let mut last = None;
                for (b, t) in in_order {
                    if last.is_none_or(|l| b > l) {
                        if let Some(kept) = first.get_mut(exceptions) {
                            *kept = (b, t);
                        }
                        exceptions += 1;
                        last = Some(b);
                    }
                }
            }
            let first = first.get(..exceptions).unwrap_or(&[]);
            for &(b, t) in first {
                let bucket = g as u64 * GROUP_BUCKETS + u64::from(b);
                if u32::from(t) >= std_back || bucket >= num_buckets || codes(b) != 0 {
                    return Err(bad);
                }
            }
            if (more && exceptions < GROUP_SLOTS) || group_slots(self.buckets, first, more) != slots
            {
                return Err(bad);
            }
            // The listed exceptions of this group: past the slots' and
            // ascending.
            let (mut previous, mut listed_here) = (in_order[GROUP_SLOTS - 1].0, 0);
            while let Some(e) = listed_entry(self.listed, next_listed) {
                let bucket = u64::from(e >> self.buckets.bits);
                if bucket / GROUP_BUCKETS != g as u64 {
                    break;
                }
                let within = (bucket % GROUP_BUCKETS) as u16;
                let t = e & ((1 << self.buckets.bits) - 1);
                if !more
                    || within <= previous
                    || bucket >= num_buckets
                    || t >= std_back
                    || codes(within) != 0
                {
                    return Err(bad);
                }
                (previous, listed_here) = (within, listed_here + 1);
                next_listed += 1;
            }
            if more && listed_here == 0 {
                return Err(bad);
            }
        }
        // Entries the groups did not take: out of order or past the last
        // group.
        if next_listed != self.listed.len() / 4 {
            return Err(bad);
        }
        Ok(())
    }
}

/// List entry `i` of `listed`.
fn listed_entry(listed: &[u8], i: usize) -> Option<u32> {
    let b = listed.get(4 * i..4 * i + 4)?;
    Some(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
}

/// One layer's entry in the layer table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct LayerEntry {
    pub(crate) seed: u32,
    pub(crate) listed: u32,
    pub(crate) num_keys: u64,
    pub(crate) num_blocks: u64,
    pub(crate) upper_start_block: u64,
}

impl LayerEntry {
    pub(crate) fn encode(&self) -> [u8; ENTRY_BYTES] {
        let mut e = [0u8; ENTRY_BYTES];
        e[..4].copy_from_slice(&self.seed.to_le_bytes());
        e[4..8].copy_from_slice(&self.listed.to_le_bytes());
        e[8..16].copy_from_slice(&self.num_keys.to_le_bytes());
        e[16..24].copy_from_slice(&self.num_blocks.to_le_bytes());
        e[24..32].copy_from_slice(&self.upper_start_block.to_le_bytes());
        e
    }

    fn decode(e: &[u8]) -> Option<LayerEntry> {
        let u32_at = |i: usize| Some(u32::from_le_bytes(e.get(i..i + 4)?.try_into().ok()?));
        let u64_at = |i: usize| Some(u64::from_le_bytes(e.get(i..i + 8)?.try_into().ok()?));
        Some(LayerEntry {
            seed: u32_at(0)?,
            listed: u32_at(4)?,
            num_keys: u64_at(8)?,
            num_blocks: u64_at(16)?,
            upper_start_block: u64_at(24)?,
        })
    }
}

/// Bytes of a layer's threshold groups and listed exceptions (none for
/// the last layer).
fn threshold_bytes(
    buckets: Buckets,
    g: &Geometry,
    listed: u32,
    last: bool,
) -> Option<(usize, usize)> {
    if last {
        return Some((0, 0));
    }
    let groups = usize::try_from(threshold_groups(buckets.count(g.num_starts()))).ok()?;
    Some((
        groups.checked_mul(GROUP_BYTES)?,
        usize::try_from(listed).ok()?.checked_mul(4)?,
    ))
}

/// The fields of a Bumped filter's header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct BumpedHeader {
    /// Filter or retrieval layers (by the magic).
    pub(crate) family: Family,
    pub(crate) width: Width,
    pub(crate) lower_columns: u32,
    pub(crate) seed: u32,
    pub(crate) num_keys: u64,
    pub(crate) num_layers: usize,
}

impl BumpedHeader {
    pub(crate) fn encode(&self) -> [u8; HEADER_BYTES] {
        RawHeader {
            family: self.family,
            kind: Kind::Bumped,
            width: self.width,
            lower_columns: self.lower_columns,
            seed: self.seed,
            num_keys: self.num_keys,
            blocks_or_layers: self.num_layers as u64,
            upper_start_block: 0,
        }
        .encode()
    }

    /// The header that starts `bytes`, of either family:
    /// [`RawHeader::decode`]'s checks, then [`Error::CorruptHeader`]
    /// unless it is a Bumped one as builds make them. A retrieval
    /// structure has 1 to 64 value bits (its `lower_columns`), keys or
    /// not; a filter of no keys, no columns.
    fn decode(bytes: &[u8]) -> Result<BumpedHeader, Error> {
        let raw = RawHeader::decode(bytes, None)?;
        let (lower_columns, layers) = (raw.lower_columns, raw.blocks_or_layers);
        // No keys, no columns (as for the other kinds without blocks).
        let columns_ok = match raw.family {
            Family::Filter => raw.num_keys != 0 || lower_columns == 0,
            Family::Retrieval => lower_columns != 0,
        };
        if raw.kind != Kind::Bumped
            || raw.upper_start_block != 0
            || !columns_ok
            || !(1..=MAX_LAYERS as u64).contains(&layers)
        {
            return Err(Error::CorruptHeader);
        }
        Ok(BumpedHeader {
            family: raw.family,
            width: raw.width,
            lower_columns,
            seed: raw.seed,
            num_keys: raw.num_keys,
            num_layers: layers as usize,
        })
    }
}

/// One layer of a validated Bumped filter.
#[derive(Clone, Copy, Debug)]
pub(crate) struct LayerRef<'a> {
    /// The layer's Standard geometry.
    pub(crate) geometry: Geometry,
    pub(crate) seed: u32,
    pub(crate) num_keys: u64,
    /// Empty for the last layer.
    pub(crate) thresholds: ThresholdsRef<'a>,
    pub(crate) payload: &'a [u8],
    /// Whether this is the last layer (no thresholds: its keys stay).
    pub(crate) last: bool,
    /// Where the layer's data (threshold groups, list, payload) starts in
    /// the filter's bytes.
    pub(crate) data_at: usize,
}

/// Where a layer lies, before its bytes are read.
struct Extent {
    entry: LayerEntry,
    geometry: Geometry,
    last: bool,
    groups_len: usize,
    listed_len: usize,
    end: usize,
}

/// The layers of a Bumped filter's bytes, one after another.
#[derive(Clone, Debug)]
pub(crate) struct Layers<'a> {
    header: BumpedHeader,
    bytes: &'a [u8],
    /// The next layer's index and where its data starts.
    next: usize,
    data_at: usize,
    /// The most keys the next layer may have: the header's for the first,
    /// then [`next_cap`] of the one before's, as builds cap them. With
    /// it, any accepted bytes have at most [`layer_bounds`]' layers for
    /// their keys (4 for 10^6 keys, 10 for 2^40), which bounds a query's
    /// walk.
    cap: u64,
}

impl<'a> Layers<'a> {
    /// The layers of `bytes` (a Bumped filter's header, table and data;
    /// trailing bytes are not looked at).
    pub(crate) fn new(bytes: &'a [u8]) -> Result<Layers<'a>, Error> {
        let header = BumpedHeader::decode(bytes)?;
        let data_at = HEADER_BYTES + ENTRY_BYTES * header.num_layers;
        if bytes.len() < data_at {
            return Err(Error::Truncated {
                needed: data_at,
                given: bytes.len(),
            });
        }
        Ok(Layers {
            header,
            bytes,
            next: 0,
            data_at,
            cap: header.num_keys,
        })
    }

    pub(crate) fn header(&self) -> BumpedHeader {
        self.header
    }

    /// The first layer of a filter validated before (a view's bytes,
    /// which its contract keeps unchanged), whose geometry the caller kept
    /// (`g`, Standard): its table entry is read, not checked again, so
    /// that one query of a view that cannot keep its state (the C ABI's
    /// `ribbon_contains`) costs little more than the layer's probe. Bytes
    /// that changed since give some layer or `None`, never a panic.
    #[cfg_attr(not(feature = "capi"), allow(dead_code))]
    pub(crate) fn first_of_validated(bytes: &'a [u8], g: &Geometry) -> Option<LayerRef<'a>> {
        let num_layers = usize::try_from(RawHeader::read(bytes)?.blocks_or_layers).ok()?;
        let entry = LayerEntry::decode(bytes.get(HEADER_BYTES..HEADER_BYTES + ENTRY_BYTES)?)?;
        let last = num_layers == 1;
        let buckets = Buckets::for_width(g.width);
        let (groups_len, listed_len) = threshold_bytes(buckets, g, entry.listed, last)?;
        let data_at = HEADER_BYTES.checked_add(ENTRY_BYTES.checked_mul(num_layers)?)?;
        let groups_end = data_at.checked_add(groups_len)?;
        let listed_end = groups_end.checked_add(listed_len)?;
        Some(LayerRef {
            geometry: *g,
            seed: entry.seed,
            num_keys: entry.num_keys,
            thresholds: ThresholdsRef {
                buckets,
                groups: bytes.get(data_at..groups_end)?,
                listed: bytes.get(groups_end..listed_end)?,
            },
            payload: bytes.get(listed_end..listed_end.checked_add(g.payload_bytes())?)?,
            last,
            data_at,
        })
    }

    /// The first layer's geometry read from a structure validated before
    /// (its header's width and columns and its table entry), for
    /// [`Layers::first_of_validated`]: `None` where the bytes no longer
    /// make one.
    #[cfg_attr(not(feature = "capi"), allow(dead_code))]
    pub(crate) fn first_geometry_of_validated(bytes: &[u8]) -> Option<Geometry> {
        let RawHeader {
            width,
            lower_columns,
            ..
        } = RawHeader::read(bytes)?;
        let entry = LayerEntry::decode(bytes.get(HEADER_BYTES..HEADER_BYTES + ENTRY_BYTES)?)?;
        let blocks = usize::try_from(entry.num_blocks).ok()?;
        let upper = usize::try_from(entry.upper_start_block).ok()?;
        let columns = columns_of(blocks, lower_columns);
        Geometry::new(Kind::Standard, width, blocks, columns, upper).ok()
    }

    /// The next layer, checked against the header, the layer before it and
    /// the bytes: `None` after the last, [`Error::CorruptHeader`] or
    /// [`Error::Truncated`] when the bytes do not hold it. Its threshold
    /// slots and list are checked only with `check_lists` (they cost a
    /// pass over the list; a filter validated once needs no second check).
    pub(crate) fn next_layer(
        &mut self,
        previous_keys: u64,
        check_lists: bool,
    ) -> Option<Result<LayerRef<'a>, Error>> {
        let i = self.next;
        if i >= self.header.num_layers {
            return None;
        }
        self.next += 1;
        Some(self.layer(i, previous_keys, check_lists))
    }

    /// Layer `i`'s entry and geometry, checked against the header and the
    /// layer before (which had `previous_keys` keys), and where its data
    /// ends: threshold groups and list lengths, then the end offset.
    fn extent(&self, i: usize, previous_keys: u64) -> Result<Extent, Error> {
        let h = self.header;
        let last = i + 1 == h.num_layers;
        let at = HEADER_BYTES + ENTRY_BYTES * i;
        let e = self
            .bytes
            .get(at..at + ENTRY_BYTES)
            .and_then(LayerEntry::decode)
            .ok_or(Error::CorruptHeader)?;
        // Keys: the first layer has them all, each later one at most the
        // one before and its cap. A layer is the last exactly when it has
        // at most `LAST_LAYER_KEYS` keys. Each layer has the blocks a build
        // gives its keys: a bumping layer `bumping_blocks`, the last one
        // one of its attempts' `last_blocks` (at least a slot per key;
        // none without keys). Nothing lists exceptions but a bumping
        // layer, and none lists more than its buckets.
        let keys_ok = if i == 0 {
            e.num_keys == h.num_keys
        } else {
            e.num_keys <= previous_keys && e.num_keys <= self.cap
        };
        let blocks_ok = if last {
            e.num_keys <= LAST_LAYER_KEYS
                && (0..LAST_LAYER_ATTEMPTS)
                    .any(|a| e.num_blocks == last_blocks(h.width, e.num_keys, a))
        } else {
            e.num_keys > LAST_LAYER_KEYS && e.num_blocks == bumping_blocks(h.width, e.num_keys)
        };
        // Retrieval layers have no upper blocks: every value has its bits.
        let upper_ok = match h.family {
            Family::Filter => e.upper_start_block <= e.num_blocks,
            Family::Retrieval => e.upper_start_block == e.num_blocks,
        };
        if !keys_ok || !blocks_ok || !upper_ok || (last && e.listed != 0) {
            return Err(Error::CorruptHeader);
        }
        let blocks = usize::try_from(e.num_blocks).map_err(|_| Error::TooLarge)?;
        let upper = usize::try_from(e.upper_start_block).map_err(|_| Error::CorruptHeader)?;
        let columns = columns_of(blocks, h.lower_columns);
        let geometry =
            Geometry::new(Kind::Standard, h.width, blocks, columns, upper)?.check_native()?;
        let buckets = Buckets::for_width(h.width);
        if u64::from(e.listed) > buckets.count(geometry.num_starts()) {
            return Err(Error::CorruptHeader);
        }
        let (groups_len, listed_len) =
            threshold_bytes(buckets, &geometry, e.listed, last).ok_or(Error::TooLarge)?;
        let end = self
            .data_at
            .checked_add(groups_len)
            .and_then(|x| x.checked_add(listed_len))
            .and_then(|x| x.checked_add(geometry.payload_bytes()))
            .filter(|&end| end <= isize::MAX as usize)
            .ok_or(Error::TooLarge)?;
        Ok(Extent {
            entry: e,
            geometry,
            last,
            groups_len,
            listed_len,
            end,
        })
    }

    fn layer(
        &mut self,
        i: usize,
        previous_keys: u64,
        check_lists: bool,
    ) -> Result<LayerRef<'a>, Error> {
        let x = self.extent(i, previous_keys)?;
        let data = self
            .bytes
            .get(self.data_at..x.end)
            .ok_or(Error::Truncated {
                needed: x.end,
                given: self.bytes.len(),
            })?;
        let (groups, rest) = data.split_at_checked(x.groups_len).ok_or(Error::TooLarge)?;
        let (listed, payload) = rest.split_at_checked(x.listed_len).ok_or(Error::TooLarge)?;
        let thresholds = ThresholdsRef {
            buckets: Buckets::for_width(self.header.width),
            groups,
            listed,
        };
        if check_lists && !x.last {
            thresholds.validate(thresholds.buckets.count(x.geometry.num_starts()))?;
        }
        let data_at = self.data_at;
        self.advance(&x);
        Ok(LayerRef {
            geometry: x.geometry,
            seed: x.entry.seed,
            num_keys: x.entry.num_keys,
            thresholds,
            payload,
            last: x.last,
            data_at,
        })
    }

    /// Moves past the layer `x`: its data, and the next layer's cap.
    fn advance(&mut self, x: &Extent) {
        self.data_at = x.end;
        self.cap = next_cap(self.header.width, self.cap);
    }

    /// Where the data read so far ends.
    pub(crate) fn end(&self) -> usize {
        self.data_at
    }
}

/// The layers of a Bumped structure validated before, one after another,
/// each checked against the one before as [`Layers::next_layer`] does
/// (not its threshold list); none for bytes that no longer hold a Bumped
/// header, and the iteration ends at a layer they no longer hold. For
/// reports (slots per layer); queries never need it.
pub(crate) fn layers_of(bytes: &[u8]) -> impl Iterator<Item = LayerRef<'_>> {
    let mut layers = Layers::new(bytes).ok();
    let mut keys = layers.as_ref().map_or(0, |l| l.header().num_keys);
    core::iter::from_fn(move || {
        let layer = layers.as_mut()?.next_layer(keys, false)?.ok()?;
        keys = layer.num_keys;
        Some(layer)
    })
}

/// Validates every layer of a Bumped filter that starts `bytes` and
/// returns its header and its length (which may be less than
/// `bytes.len()`).
pub(crate) fn validate_prefix(bytes: &[u8]) -> Result<(BumpedHeader, usize), Error> {
    let mut layers = Layers::new(bytes)?;
    let mut keys = layers.header().num_keys;
    while let Some(layer) = layers.next_layer(keys, true) {
        keys = layer?.num_keys;
    }
    Ok((layers.header(), layers.end()))
}

/// The length of the Bumped filter that starts `bytes`, from its header and
/// layer table alone (checked as [`validate_prefix`] checks them, but for
/// the threshold lists and the data's presence).
pub(crate) fn serialized_len(bytes: &[u8]) -> Result<usize, Error> {
    let mut layers = Layers::new(bytes)?;
    let mut keys = layers.header.num_keys;
    for i in 0..layers.header.num_layers {
        let x = layers.extent(i, keys)?;
        keys = x.entry.num_keys;
        layers.advance(&x);
    }
    Ok(layers.data_at)
}

#[cfg(test)]
pub(crate) mod test_support {
    use super::Buckets;
    use crate::test_kit::splitmix64;
    use std::vec::Vec;

    /// Exact thresholds of `n` buckets as banding makes them: about
    /// `exceptions_per_1000` per thousand below the standard threshold
    /// (exceptions), then to 60 % "nothing bumped", the rest standard.
    pub(crate) fn random_thresholds(
        buckets: Buckets,
        n: usize,
        exceptions_per_1000: u64,
        state: &mut u64,
    ) -> Vec<u16> {
        let std_back = buckets.standard_back;
        (0..n)
            .map(|_| {
                let x = splitmix64(state);
                (match x % 1000 {
                    e if e < exceptions_per_1000 => (x >> 32) as u32 % std_back,
                    e if e < 600 => buckets.size(),
                    _ => std_back,
                }) as u16
            })
            .collect()
    }
}
