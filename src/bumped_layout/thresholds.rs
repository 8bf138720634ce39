//! Bumped Ribbon's thresholds: their encoding (1 bit per bucket, three
//! exception slots per 128 buckets, the rest listed), the decoder and a
//! layer's verdict on a key (`ThresholdsRef::bumped_flag`,
//! `ThresholdsRef::maybe_bumped`), and the validation of untrusted
//! threshold bytes.

use super::Buckets;
use crate::error::Error;

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
