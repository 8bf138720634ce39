//! Bumped Ribbon's buckets ([`Buckets`]: a start's bucket, thresholds,
//! where a chain must stop) and the banding segments and lanes they cut
//! a layer into, with the scratch their sorts and kept lists need.

use crate::layout::Width;

/// Most starts per bucket, as a power of two (thresholds fit 9 bits).
#[cfg(test)]
pub(crate) const MAX_BUCKET_BITS: u32 = 9;

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
    pub(super) const fn is_exception(self, threshold: u16) -> bool {
        threshold as u32 != self.size() && threshold as u32 != self.standard_back
    }
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
