//! Bumped Ribbon (issue 18): banding one bumping layer into caller scratch.
//!
//! A bumping layer has fewer slots than keys. Its starts are cut into
//! buckets of `2^bits` starts, and keys are banded bucket by bucket, each
//! bucket from its last start down to its first (so a key's `back`, how
//! far its start lies from the bucket's end, ascends). The first key of a
//! bucket that contradicts the rows fixes the bucket's threshold: the
//! standard one when that lies at or below the key's `back`, else the
//! key's own `back` (an *exception*). Every key of the bucket at least
//! that far back is bumped to the next layer; those already in are taken
//! out again. They are the bucket's last insertions, and elimination only
//! ever writes the row a key ends in, so zeroing their rows undoes them
//! exactly.
//!
//! `src/bumped_study.rs` is the reference model this is checked against
//! and explains the choice of parameters. The kind's plan, format and
//! queries come next; until then only tests call this module.
#![cfg_attr(not(test), allow(dead_code))]

use crate::band::insert_row;
use crate::hash::{Coeff, Expander, start};
use crate::word::Rows;

/// Most starts per bucket, as a power of two (thresholds fit 16 bits).
pub(crate) const MAX_BUCKET_BITS: u32 = 9;

/// Rows the keys of one bucket can reach: its starts plus a ribbon width.
const MAX_BUCKET_ROWS: usize = (1 << MAX_BUCKET_BITS) + 128;

/// How a bumping layer cuts its starts into buckets and bumps.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Buckets {
    /// Starts per bucket, as a power of two (at most [`MAX_BUCKET_BITS`]).
    bits: u32,
    /// The standard threshold: in a bucket that bumps, the keys at least
    /// this many starts back from its end (below the bucket's size).
    standard_back: u32,
}

impl Buckets {
    /// Buckets of `2^bits` starts with a standard threshold of
    /// `standard_back` starts; `None` past [`MAX_BUCKET_BITS`] or unless
    /// the threshold lies within the bucket.
    pub(crate) const fn new(bits: u32, standard_back: u32) -> Option<Buckets> {
        if bits > MAX_BUCKET_BITS || standard_back >= 1 << bits {
            return None;
        }
        Some(Buckets {
            bits,
            standard_back,
        })
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

    /// A start's place in banding order: its bucket, then how far back it
    /// lies.
    #[inline(always)]
    const fn order(self, start: u64) -> u64 {
        start ^ ((1u64 << self.bits) - 1)
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
}

/// Counting-sort words [`order_for_banding`] needs for a layer of
/// `num_starts` starts: one per place in banding order.
pub(crate) const fn order_scratch_words(buckets: Buckets, num_starts: u64) -> u64 {
    buckets.count(num_starts) << buckets.bits
}

/// Puts `remixed` (key hashes remixed with the layer's seed; `expander`
/// is the layer's, Standard without smash) into `ordered`
/// in banding order: buckets ascending, each from its last start down.
/// Keys with one start keep their relative order. `counts` needs
/// [`order_scratch_words`] words and `ordered` the length of `remixed`;
/// with less, nothing is written and the answer is `false`.
pub(crate) fn order_for_banding(
    buckets: Buckets,
    expander: &Expander,
    remixed: &[u64],
    counts: &mut [u64],
    ordered: &mut [u64],
) -> bool {
    let places = order_scratch_words(buckets, expander.num_starts);
    let (Ok(places), true) = (usize::try_from(places), ordered.len() == remixed.len()) else {
        return false;
    };
    let Some(counts) = counts.get_mut(..places) else {
        return false;
    };
    let place = |x: u64| buckets.order(start(x, expander.num_starts, 0)) as usize;
    counts.fill(0);
    for &x in remixed {
        if let Some(c) = counts.get_mut(place(x)) {
            *c += 1;
        }
    }
    let mut total = 0;
    for c in counts.iter_mut() {
        let here = *c;
        *c = total;
        total += here;
    }
    for &x in remixed {
        if let Some(next) = counts.get_mut(place(x)) {
            if let Some(slot) = ordered.get_mut(*next as usize) {
                *slot = x;
            }
            *next += 1;
        }
    }
    true
}

/// Bands `ordered` (remixed with the layer's seed, in banding order) into
/// `rows` (zeroed, Standard Ribbon's stride, the layer's slots) and writes
/// every bucket's threshold into `thresholds` (one per bucket;
/// [`Buckets::size`] where nothing was bumped). The bumped keys end up at
/// the front of `ordered`, still remixed with this layer's seed, in their
/// banding order; the answer is how many there are. `Err(())` when
/// `thresholds` has fewer entries than the layer has buckets, or a row
/// lies outside `rows`.
pub(crate) fn band_layer<W: Coeff>(
    buckets: Buckets,
    expander: &Expander,
    rows: &mut [u64],
    ordered: &mut [u64],
    thresholds: &mut [u16],
) -> Result<usize, ()> {
    // The starts below come from the remixed value alone, as a Standard
    // expander without smash makes them.
    debug_assert!(expander.standard && expander.smash == 0);
    let num_buckets = usize::try_from(buckets.count(expander.num_starts)).map_err(|_| ())?;
    let thresholds = thresholds.get_mut(..num_buckets).ok_or(())?;
    thresholds.fill(buckets.size() as u16);
    let stride = Rows::stride::<W>(true);
    let back_of = |x: u64| buckets.locate(start(x, expander.num_starts, 0)).1;
    // The current bucket's keys that went into a row: the row (from the
    // bucket's first start) and `back`, in insertion order. Each has its
    // own row within the bucket's reach, so they fit.
    let mut kept = [(0u16, 0u16); MAX_BUCKET_ROWS];
    let mut kept_len = 0;
    let mut current = u64::MAX;
    // Where the current bucket's keys begin in `ordered`, and its first
    // start (kept rows are counted from there).
    let mut bucket_first = 0;
    let mut first_start = 0;
    // The current bucket's threshold, once it bumps.
    let mut threshold = None;
    let mut bumped = 0;
    for j in 0..ordered.len() {
        let x = ordered[j];
        let (s, c, b) = expander.expand_remixed::<W>(x);
        let (bucket, back) = buckets.locate(s);
        if bucket != current {
            current = bucket;
            bucket_first = j;
            first_start = (bucket << buckets.bits) as usize;
            kept_len = 0;
            threshold = None;
        }
        if threshold.is_some() {
            // Banding order: `back` is at least the threshold.
            ordered[bumped] = x;
            bumped += 1;
            continue;
        }
        match insert_row::<W>(rows, s as usize, c, b) {
            Ok(Some(row)) => {
                let entry = kept.get_mut(kept_len).ok_or(())?;
                *entry = ((row - first_start) as u16, back as u16);
                kept_len += 1;
            }
            // Implied by the rows: answered right without a row of its own.
            Ok(None) => {}
            Err(()) => {
                let t = buckets.threshold_for(back);
                *thresholds.get_mut(bucket as usize).ok_or(())? = t as u16;
                threshold = Some(t);
                while kept_len > 0 && u32::from(kept[kept_len - 1].1) >= t {
                    kept_len -= 1;
                    let at = (first_start + usize::from(kept[kept_len].0)) * stride;
                    rows.get_mut(at..at + stride).ok_or(())?.fill(0);
                }
                // The bucket's keys at or past `t` so far, this one last,
                // join the bumped ones (which all lie before the bucket).
                let mut from = j;
                while from > bucket_first && back_of(ordered[from - 1]) >= t {
                    from -= 1;
                }
                ordered.copy_within(from..=j, bumped);
                bumped += j + 1 - from;
            }
        }
    }
    Ok(bumped)
}

/// Buckets per threshold group.
pub(crate) const GROUP_BUCKETS: u64 = 64;

/// Bytes of a threshold group: 64 codes (bit `i` set: bucket `i` of the
/// group bumped nothing) and a 16-bit exception slot, little-endian.
pub(crate) const GROUP_BYTES: usize = 10;

/// The exception slot's flag: the group has exceptions besides the slot's,
/// listed.
const SLOT_MORE: u16 = 1 << 15;

/// Threshold groups for `num_buckets` buckets.
pub(crate) const fn threshold_groups(num_buckets: u64) -> u64 {
    num_buckets.div_ceil(GROUP_BUCKETS)
}

/// Whether a threshold is neither "nothing bumped" nor the standard one.
const fn is_exception(buckets: Buckets, threshold: u16) -> bool {
    threshold as u32 != buckets.size() && threshold as u32 != buckets.standard_back
}

/// Listed exceptions of exact `thresholds`: those beyond the first of
/// their group.
pub(crate) fn listed_exceptions(buckets: Buckets, thresholds: &[u16]) -> usize {
    thresholds
        .chunks(GROUP_BUCKETS as usize)
        .map(|group| {
            let exceptions = group.iter().filter(|&&t| is_exception(buckets, t)).count();
            exceptions.saturating_sub(1)
        })
        .sum()
}

/// Encodes exact per-bucket `thresholds` (as [`band_layer`] makes them,
/// with `buckets.standard_back` below the bucket size) into `groups`
/// ([`GROUP_BYTES`] per group of 64 buckets) and `listed` (4 bytes per
/// [`listed_exceptions`] entry, little-endian `bucket << bits | threshold`,
/// ascending). The first exception of a group goes into its slot: the
/// bucket within the group in the low 6 bits, the threshold in the next 9.
/// `Err(())` when a buffer is short or a bucket index does not fit a list
/// entry.
pub(crate) fn encode_thresholds(
    buckets: Buckets,
    thresholds: &[u16],
    groups: &mut [u8],
    listed: &mut [u8],
) -> Result<(), ()> {
    let mut listed_at = 0;
    for (g, group) in thresholds.chunks(GROUP_BUCKETS as usize).enumerate() {
        let mut codes = 0u64;
        // No exception: bucket 0 with the standard threshold, which is
        // what it has unless it bumped nothing (and then its code decides).
        let mut slot = (buckets.standard_back as u16) << 6;
        let mut first = true;
        for (i, &t) in group.iter().enumerate() {
            if u32::from(t) == buckets.size() {
                codes |= 1 << i;
            } else if is_exception(buckets, t) {
                if first {
                    slot = (t << 6) | i as u16;
                    first = false;
                } else {
                    slot |= SLOT_MORE;
                    let bucket = (g as u64 * GROUP_BUCKETS + i as u64) << buckets.bits;
                    let entry = u32::try_from(bucket | u64::from(t)).map_err(|_| ())?;
                    let out = listed.get_mut(listed_at..listed_at + 4).ok_or(())?;
                    out.copy_from_slice(&entry.to_le_bytes());
                    listed_at += 4;
                }
            }
        }
        let out = groups
            .get_mut(g * GROUP_BYTES..(g + 1) * GROUP_BYTES)
            .ok_or(())?;
        out[..8].copy_from_slice(&codes.to_le_bytes());
        out[8..].copy_from_slice(&slot.to_le_bytes());
    }
    Ok(())
}

/// Encoded thresholds of one layer, as [`encode_thresholds`] wrote them.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ThresholdsRef<'a> {
    pub(crate) buckets: Buckets,
    pub(crate) groups: &'a [u8],
    pub(crate) listed: &'a [u8],
}

impl ThresholdsRef<'_> {
    /// The threshold of `bucket`: its keys at least this far back from the
    /// bucket's end were bumped. Bytes that [`encode_thresholds`] did not
    /// write give some threshold, never a panic.
    pub(crate) fn threshold(&self, bucket: u64) -> u32 {
        // Checked: a bucket past the groups (or the address space) reads
        // none.
        let group = usize::try_from(bucket / GROUP_BUCKETS)
            .ok()
            .and_then(|g| g.checked_mul(GROUP_BYTES))
            .and_then(|at| self.groups.get(at..at.checked_add(GROUP_BYTES)?));
        let Some(group) = group else {
            return self.buckets.size();
        };
        let mut codes = [0u8; 8];
        codes.copy_from_slice(&group[..8]);
        let within = (bucket % GROUP_BUCKETS) as u32;
        if u64::from_le_bytes(codes) >> within & 1 == 1 {
            return self.buckets.size();
        }
        let slot = u16::from_le_bytes([group[8], group[9]]);
        if u32::from(slot & 63) == within {
            return u32::from(slot >> 6 & 0x1ff);
        }
        if slot & SLOT_MORE != 0
            && let Some(t) = self.listed_threshold(bucket)
        {
            return t;
        }
        self.buckets.standard_back
    }

    /// Binary search of the list for `bucket`.
    fn listed_threshold(&self, bucket: u64) -> Option<u32> {
        let entry = |i: usize| {
            let b = self.listed.get(4 * i..4 * i + 4)?;
            Some(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        };
        let (mut lo, mut hi) = (0, self.listed.len() / 4);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            let e = entry(mid)?;
            match u64::from(e >> self.buckets.bits).cmp(&bucket) {
                core::cmp::Ordering::Less => lo = mid + 1,
                core::cmp::Ordering::Greater => hi = mid,
                core::cmp::Ordering::Equal => {
                    return Some(e & ((1 << self.buckets.bits) - 1));
                }
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bumped_study::{self, Exceptions, Params};
    use crate::hash::{REMIX, remix};
    use crate::layout::{Geometry, Kind, Width};
    use crate::test_kit::splitmix64;
    use std::vec;
    use std::vec::Vec;

    extern crate std;

    /// The inverse of `REMIX` modulo 2^64 (Newton's iteration).
    fn unremix(x: u64, seed_mix: u64) -> u64 {
        let mut inv = REMIX;
        for _ in 0..5 {
            inv = inv.wrapping_mul(2u64.wrapping_sub(REMIX.wrapping_mul(inv)));
        }
        x.wrapping_mul(inv) ^ seed_mix
    }

    /// One bumping layer banded here and in the reference model, for the
    /// same keys, slots and seed: the same thresholds and bumped keys.
    fn check_against_model<W: Coeff>(width: Width, n: usize, bucket: u64, load: u64, bound: u64) {
        let r = 8;
        let mut state = 91 + n as u64;
        let keys: Vec<u64> = (0..n).map(|_| splitmix64(&mut state)).collect();
        let w = width.bits() as u64;
        let num_slots = ((n as u64 * load).div_ceil(1_000_000)).div_ceil(w).max(1) * w;
        let p = Params::one_plus_bit(bucket, load, bound, Exceptions::List, r);
        let seed = 3;
        let (model, model_bumped, model_empty) =
            bumped_study::band_layer::<W>(&p, &keys, num_slots, seed, true).expect("bumps");

        // Every block has `r` columns, as in the model.
        let blocks = (num_slots / w) as usize;
        let g = Geometry::new(Kind::Standard, width, blocks, r, blocks).expect("geometry");
        let expander = Expander::new(&g, seed);
        let buckets =
            Buckets::new(bucket.trailing_zeros(), p.standard_back() as u32).expect("buckets");
        let remixed: Vec<u64> = keys.iter().map(|&k| remix(k, expander.seed_mix)).collect();
        let mut counts = vec![0u64; order_scratch_words(buckets, expander.num_starts) as usize];
        let mut ordered = vec![0u64; n];
        assert!(order_for_banding(
            buckets,
            &expander,
            &remixed,
            &mut counts,
            &mut ordered
        ));
        let mut rows = vec![0u64; num_slots as usize * Rows::stride::<W>(true)];
        let mut thresholds = vec![0u16; buckets.count(expander.num_starts) as usize];
        let bumped = band_layer::<W>(buckets, &expander, &mut rows, &mut ordered, &mut thresholds)
            .expect("scratch fits");

        let model_thresholds: Vec<u16> = model.thresholds.iter().map(|&t| t as u16).collect();
        assert_eq!(thresholds, model_thresholds, "{width:?} n {n}: thresholds");
        check_encoding(buckets, &thresholds);
        let mut ours: Vec<u64> = ordered[..bumped]
            .iter()
            .map(|&x| unremix(x, expander.seed_mix))
            .collect();
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
            // some, and sparse, so that a group's first one lies anywhere.
            // Miri interprets every step: fewer sizes cover the same paths.
            let sizes: &[usize] = if cfg!(miri) {
                &[0, 1, 65, 300]
            } else {
                &[0, 1, 63, 64, 65, 1000, 5000]
            };
            for (n, exceptions) in sizes.iter().flat_map(|&n| [(n, 200u64), (n, 15)]) {
                let thresholds: Vec<u16> = (0..n)
                    .map(|_| {
                        let x = splitmix64(&mut state);
                        (match x % 1000 {
                            e if e < exceptions => (x >> 32) as u32 % standard_back,
                            e if e < 600 => buckets.size(),
                            _ => standard_back,
                        }) as u16
                    })
                    .collect();
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

    #[test]
    fn layers_band_as_the_model_does() {
        let sizes: &[usize] = if cfg!(miri) {
            &[0, 1, 300]
        } else {
            &[0, 1, 2, 65, 1000, 30_000]
        };
        for &n in sizes {
            check_against_model::<u64>(Width::W64, n, 128, 920_000, 800_000);
            check_against_model::<u128>(Width::W128, n, 512, 965_000, 910_000);
            // Low standard thresholds: bumping buckets undo many keys.
            check_against_model::<u64>(Width::W64, n, 128, 900_000, 300_000);
        }
    }
}
