//! Sharded filters (issue 42): keys go to shards by their hash, each shard
//! is an ordinary serialized filter of its keys, and a small directory in
//! front says where each lies. Shards build independently, so a caller can
//! build them on as many threads as it has.
//!
//! The `no_std` units, none of which allocates: [`ShardedPlan::partition`]
//! puts the caller's hashes into shard order in place,
//! [`ShardedPlan::jobs`] writes the header and directory and hands out one
//! [`ShardJob`] per shard (its hashes and its slice of the output), each
//! built with [`ShardJob::build`] into caller scratch on any thread, and
//! [`ShardedPlan::finish`] closes the gaps a Bumped shard leaves and seals
//! the header. With `alloc`, [`ShardedFilterRef`] queries the bytes; with
//! `std`, [`ShardedFilter::build`] runs the whole build on threads.
//!
//! The format is `docs/format.md`'s "A sharded filter".

use crate::error::Error;
use crate::filter::FilterRef;
use crate::layout::{self, HEADER_BYTES, Kind, Width};
use crate::plan::Plan;

#[cfg(feature = "alloc")]
use crate::filter::Validated;
#[cfg(feature = "alloc")]
use crate::key_hash::hash_key;
#[cfg(feature = "alloc")]
use alloc::vec::Vec;

/// Magic of a sharded filter: distinct from a filter's `RbnK` and a
/// retrieval structure's `RbnR`, so that neither open takes the other.
const MAGIC: [u8; 4] = *b"RbnS";
/// Bytes of one directory entry (a little-endian `u64` offset).
const ENTRY_BYTES: usize = 8;

/// The shard of the 64-bit key hash `hash` among `shards`: the high word of
/// `hash * shards`, so that shard `i` holds the hashes in
/// `[i * 2^64 / shards, (i + 1) * 2^64 / shards)`. The one place this
/// formula lives: the partition, the builds and every query call it. The
/// shard's filter gets `hash` unchanged (its own hash expansion remixes it,
/// so the high bits chosen here are not wasted).
#[inline(always)]
pub fn shard_of(hash: u64, shards: usize) -> usize {
    ((u128::from(hash) * shards as u128) >> 64) as usize
}

/// Reorders `hashes` in place so that bucket 0's come first, then bucket
/// 1's, and so on, where `counts[b]` is how many of them `bucket` puts in
/// bucket `b` (each below `counts.len()`); `counts` is the same after. An
/// American flag sort of one digit: each misplaced hash is swapped into
/// the next free place of its bucket, so each moves at most once, then one
/// pass finds where each bucket ends. The order within a bucket is
/// unspecified.
fn flag_sort(hashes: &mut [u64], counts: &mut [u64], bucket: impl Fn(u64) -> usize) {
    let s = counts.len();
    // counts[b] becomes the end of bucket b's free places: bucket b is
    // filled from its end down.
    let mut end = 0u64;
    for c in counts.iter_mut() {
        end += *c;
        *c = end;
    }
    let mut start = 0usize;
    for r in 0..s {
        // Buckets before r are complete; bucket r's free places are
        // [start, counts[r]), and every hash there is yet to be placed.
        while counts[r] as usize > start {
            let hole = counts[r] as usize - 1;
            let mut x = hashes[hole];
            loop {
                let b = bucket(x);
                counts[b] -= 1;
                let at = counts[b] as usize;
                if b == r {
                    // `at` is `hole`: nothing else moved bucket r's end.
                    hashes[at] = x;
                    break;
                }
                core::mem::swap(&mut x, &mut hashes[at]);
            }
        }
        // Bucket r is complete, and no later place holds one of its
        // hashes: it ends at the first hash of another bucket.
        while start < hashes.len() && bucket(hashes[start]) == r {
            start += 1;
        }
    }
    // counts[b] is bucket b's start now: back to counts.
    for b in 0..s {
        let next = if b + 1 < s {
            counts[b + 1]
        } else {
            hashes.len() as u64
        };
        counts[b] = next - counts[b];
    }
}

/// The decoded 48-byte header of a sharded filter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct ShardedHeader {
    kind: Kind,
    width: Width,
    shards: u32,
    num_keys: u64,
}

impl ShardedHeader {
    /// The header's bytes, the checksum (40..48) zero until sealed.
    fn encode(&self) -> [u8; HEADER_BYTES] {
        let mut h = [0u8; HEADER_BYTES];
        h[..4].copy_from_slice(&MAGIC);
        h[4] = layout::VERSION;
        h[5] = self.kind.code() as u8;
        h[6] = self.width.bits() as u8;
        h[8..12].copy_from_slice(&self.shards.to_le_bytes());
        h[16..24].copy_from_slice(&self.num_keys.to_le_bytes());
        h
    }

    /// The header at the start of `bytes`: [`Error::Truncated`],
    /// [`Error::BadMagic`], [`Error::UnsupportedVersion`], then
    /// [`Error::CorruptHeader`] for an unknown kind or width, reserved
    /// bytes set or no shard.
    fn decode(bytes: &[u8]) -> Result<ShardedHeader, Error> {
        let h = bytes
            .first_chunk::<HEADER_BYTES>()
            .ok_or(Error::Truncated {
                needed: HEADER_BYTES,
                given: bytes.len(),
            })?;
        if h[..4] != MAGIC {
            return Err(Error::BadMagic);
        }
        if h[4] != layout::VERSION {
            return Err(Error::UnsupportedVersion);
        }
        let word = |at: usize| {
            let mut w = [0u8; 8];
            w.copy_from_slice(&h[at..at + 8]);
            u64::from_le_bytes(w)
        };
        let kind = Kind::from_code(u32::from(h[5])).ok_or(Error::CorruptHeader)?;
        let width = Width::from_bits(u32::from(h[6])).ok_or(Error::CorruptHeader)?;
        let mut shards = [0u8; 4];
        shards.copy_from_slice(&h[8..12]);
        let shards = u32::from_le_bytes(shards);
        if h[7] != 0 || h[12..16] != [0; 4] || word(24) != 0 || word(32) != 0 || shards == 0 {
            return Err(Error::CorruptHeader);
        }
        Ok(ShardedHeader {
            kind,
            width,
            shards,
            num_keys: word(16),
        })
    }
}

/// Where the directory of `shards` shards ends and the first shard starts:
/// `48 + 8 * (shards + 1)`; `None` past `usize`.
fn directory_end(shards: usize) -> Option<usize> {
    shards
        .checked_add(1)?
        .checked_mul(ENTRY_BYTES)?
        .checked_add(HEADER_BYTES)
}

/// Directory entry `i` of `bytes` (whose directory is in bounds).
fn entry(bytes: &[u8], i: usize) -> Option<u64> {
    let at = HEADER_BYTES.checked_add(i.checked_mul(ENTRY_BYTES)?)?;
    let e = bytes.get(at..at.checked_add(ENTRY_BYTES)?)?;
    let mut w = [0u8; ENTRY_BYTES];
    w.copy_from_slice(e);
    Some(u64::from_le_bytes(w))
}

/// Writes directory entry `i` of `out`.
fn put_entry(out: &mut [u8], i: usize, offset: usize) -> Result<(), Error> {
    let at = i
        .checked_mul(ENTRY_BYTES)
        .and_then(|a| a.checked_add(HEADER_BYTES))
        .ok_or(Error::TooLarge)?;
    let given = out.len();
    let slot = out
        .get_mut(at..at + ENTRY_BYTES)
        .ok_or(Error::OutputTooSmall {
            needed: at + ENTRY_BYTES,
            given,
        })?;
    slot.copy_from_slice(&(offset as u64).to_le_bytes());
    Ok(())
}

/// The bytes of every shard of the sharded filter `bytes`, validated as
/// far as the container goes: header, directory (offsets from the
/// directory's end to the last byte, never decreasing) and, when
/// `verify`, the checksum of header and directory. `each(header, shard)`
/// is called for every shard's bytes in order.
#[cfg(feature = "alloc")]
fn check_container(
    bytes: &[u8],
    verify: bool,
    mut each: impl FnMut(&ShardedHeader, &[u8]) -> Result<(), Error>,
) -> Result<ShardedHeader, Error> {
    let header = ShardedHeader::decode(bytes)?;
    // `shards` is at most `u32::MAX`: the directory's end fits in a u64.
    let dir_end = 8 * (u64::from(header.shards) + 1) + HEADER_BYTES as u64;
    let dir_end = match usize::try_from(dir_end) {
        Ok(end) if end <= bytes.len() => end,
        // The shard count is bounded by the length: a directory past the
        // bytes is refused before any of it is read.
        Ok(end) => {
            return Err(Error::Truncated {
                needed: end,
                given: bytes.len(),
            });
        }
        Err(_) => return Err(Error::TooLarge),
    };
    let shards = header.shards as usize;
    if verify {
        layout::verify(&bytes[..dir_end])?;
    }
    if entry(bytes, 0) != Some(dir_end as u64) || entry(bytes, shards) != Some(bytes.len() as u64) {
        return Err(Error::CorruptHeader);
    }
    let mut start = dir_end;
    for i in 0..shards {
        let end = entry(bytes, i + 1).ok_or(Error::CorruptHeader)?;
        let end = usize::try_from(end).map_err(|_| Error::CorruptHeader)?;
        if end < start || end > bytes.len() {
            return Err(Error::CorruptHeader);
        }
        each(&header, &bytes[start..end])?;
        start = end;
    }
    Ok(header)
}

/// The size of a sharded filter: its kind, width, bits per key and number
/// of shards. A build follows it through the `no_std` units
/// ([`ShardedPlan::partition`], [`ShardedPlan::jobs`], [`ShardJob::build`],
/// [`ShardedPlan::finish`]) or, with `std`, in one call
/// ([`ShardedFilter::build`]).
///
/// Each shard is planned with [`Plan::new`] for the keys it actually gets,
/// with the same `millibits_per_key`, so the output's length is known
/// only once the hashes are partitioned ([`ShardedPlan::filter_bytes`] of
/// the counts).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ShardedPlan {
    kind: Kind,
    width: Width,
    num_keys: usize,
    millibits_per_key: u32,
    shards: u32,
    seed: u32,
}

impl ShardedPlan {
    /// Keys per shard [`ShardedPlan::new`] plans for a Homogeneous,
    /// Standard or StandardSmash filter: `n` keys get
    /// `ceil(n / DEFAULT_KEYS_PER_SHARD)` shards.
    ///
    /// Measured at 4 x 10^6 keys over 20 key sets
    /// (`examples/sharded_space.rs`): the directory and the shards' headers
    /// take at most 0.022 % more than one Homogeneous filter; at 10^8 keys
    /// (`examples/sharded.rs`) builds and batches were as fast as one
    /// filter's or faster. See `docs/guide.md`, "Sharded filters and
    /// parallel builds".
    pub const DEFAULT_KEYS_PER_SHARD: usize = 1 << 18;

    /// Keys per shard [`ShardedPlan::new`] plans for a Bumped filter:
    /// twice [`ShardedPlan::DEFAULT_KEYS_PER_SHARD`], because each Bumped
    /// shard's last layers are small and cost more per key. Measured over
    /// 20 key sets of 4 x 10^6 keys: shards of 2^18 keys took up to
    /// 0.124 % more than one Bumped filter, shards of 2^19 up to 0.067 %.
    pub const DEFAULT_KEYS_PER_BUMPED_SHARD: usize = 1 << 19;

    /// Keys per shard [`ShardedPlan::new`] plans for `kind`.
    pub const fn default_keys_per_shard(kind: Kind) -> usize {
        match kind {
            Kind::Bumped => Self::DEFAULT_KEYS_PER_BUMPED_SHARD,
            _ => Self::DEFAULT_KEYS_PER_SHARD,
        }
    }

    /// Plans a sharded filter of `num_keys` keys at `millibits_per_key`
    /// (the meaning of [`Plan::new`]'s), with
    /// [`ShardedPlan::default_keys_per_shard`] keys per shard (at least
    /// one shard). Refuses what [`Plan::new`] refuses for a shard.
    pub fn new(
        kind: Kind,
        width: Width,
        num_keys: usize,
        millibits_per_key: u32,
    ) -> Result<ShardedPlan, Error> {
        let per = Self::default_keys_per_shard(kind);
        let shards = num_keys.div_ceil(per).max(1);
        let shards = u32::try_from(shards).map_err(|_| Error::TooLarge)?;
        // A shard's plan of the expected size: the errors of `Plan::new`.
        Plan::new(kind, width, num_keys.min(per), millibits_per_key)?;
        Ok(ShardedPlan {
            kind,
            width,
            num_keys,
            millibits_per_key,
            shards,
            seed: 0,
        })
    }

    /// The same plan with `shards` shards.
    pub fn with_shards(self, shards: core::num::NonZeroU32) -> ShardedPlan {
        ShardedPlan {
            shards: shards.get(),
            ..self
        }
    }

    /// The same plan, each shard's build starting at `seed`
    /// ([`Plan::with_seed`]).
    pub fn with_seed(self, seed: u32) -> ShardedPlan {
        ShardedPlan { seed, ..self }
    }

    /// The number of shards.
    pub fn shards(&self) -> usize {
        self.shards as usize
    }

    /// The kind of every shard.
    pub fn kind(&self) -> Kind {
        self.kind
    }

    /// The ribbon width of every shard.
    pub fn width(&self) -> Width {
        self.width
    }

    /// The keys the plan was made for (which chose the shard count).
    pub fn num_keys(&self) -> usize {
        self.num_keys
    }

    /// Thousandths of a payload bit per key, in every shard.
    pub fn millibits_per_key(&self) -> u32 {
        self.millibits_per_key
    }

    /// The shard `hash` goes to ([`shard_of`]).
    #[inline]
    pub fn shard_of(&self, hash: u64) -> usize {
        shard_of(hash, self.shards())
    }

    /// The plan of a shard of `count` keys.
    pub fn shard_plan(&self, count: u64) -> Result<Plan, Error> {
        let n = usize::try_from(count).map_err(|_| Error::TooLarge)?;
        Ok(Plan::new(self.kind, self.width, n, self.millibits_per_key)?.with_seed(self.seed))
    }

    /// Counts the hashes of each shard into `counts` (one entry per shard,
    /// else [`Error::LengthMismatch`]).
    pub fn count(&self, hashes: &[u64], counts: &mut [u64]) -> Result<(), Error> {
        let s = self.check_counts(counts)?;
        counts.fill(0);
        for &h in hashes {
            counts[shard_of(h, s)] += 1;
        }
        Ok(())
    }

    fn check_counts(&self, counts: &[u64]) -> Result<usize, Error> {
        if counts.len() != self.shards() {
            return Err(Error::LengthMismatch {
                expected: self.shards(),
                given: counts.len(),
            });
        }
        Ok(self.shards())
    }

    /// Reorders `hashes` in place into shard order (shard 0's first; within
    /// a shard in no particular order) and writes each shard's count into
    /// `counts` (one entry per shard). No copy of the hashes: a counting
    /// pass, then an in-place American flag sort by shard.
    /// The result says which hashes each [`ShardJob`] builds from.
    ///
    /// The order within a shard does not change the shard's bytes (each
    /// build orders its keys itself), so a caller may also partition in
    /// parallel, as [`ShardedFilter::build`] does on several threads.
    pub fn partition<'h>(
        &self,
        hashes: &'h mut [u64],
        counts: &'h mut [u64],
    ) -> Result<Partitioned<'h>, Error> {
        self.count(hashes, counts)?;
        let s = self.shards();
        flag_sort(hashes, counts, |h| shard_of(h, s));
        Ok(Partitioned { hashes, counts })
    }

    /// The sharded filter's length for these shard counts: the header, the
    /// directory and each shard's [`Plan::filter_bytes`]. For
    /// [`Kind::Bumped`] the most a build writes ([`ShardedPlan::finish`]
    /// returns the exact length).
    pub fn filter_bytes(&self, parts: &Partitioned<'_>) -> Result<usize, Error> {
        self.filter_bytes_of(parts.counts)
    }

    /// [`ShardedPlan::filter_bytes`] of shard counts.
    fn filter_bytes_of(&self, counts: &[u64]) -> Result<usize, Error> {
        let mut total = directory_end(self.shards()).ok_or(Error::TooLarge)?;
        for &c in counts {
            total = total
                .checked_add(self.shard_plan(c)?.filter_bytes())
                .ok_or(Error::TooLarge)?;
        }
        Ok(total)
    }

    /// The `u64` words of scratch one shard's build needs: the most any
    /// shard's plan needs ([`Plan::scratch_words`]). A caller building on
    /// `t` threads needs `t` such scratches.
    pub fn scratch_words(&self, parts: &Partitioned<'_>) -> Result<usize, Error> {
        self.scratch_words_of(parts.counts)
    }

    /// [`ShardedPlan::scratch_words`] of shard counts.
    fn scratch_words_of(&self, counts: &[u64]) -> Result<usize, Error> {
        let mut words = 0;
        for &c in counts {
            words = self.shard_plan(c)?.scratch_words().max(words);
        }
        Ok(words)
    }

    /// Writes the header and the directory of the largest shards into
    /// `out` (at least [`ShardedPlan::filter_bytes`] long), and returns the
    /// shards' builds in order: each with its hashes and its slice of
    /// `out`. Build every one ([`ShardJob::build`], on any thread, in any
    /// order), then call [`ShardedPlan::finish`] on `out`.
    pub fn jobs<'a>(
        &self,
        parts: &Partitioned<'a>,
        out: &'a mut [u8],
    ) -> Result<ShardJobs<'a>, Error> {
        Ok(ShardJobs {
            slots: self.slots(parts.counts, out)?,
            hashes: parts.hashes,
        })
    }

    /// What [`ShardedPlan::jobs`] does without the hashes: the header and
    /// directory for shards of `counts` keys written into `out`, and each
    /// shard's plan and slice of `out`, in order.
    fn slots<'a>(&self, counts: &'a [u64], out: &'a mut [u8]) -> Result<ShardSlots<'a>, Error> {
        if counts.len() != self.shards() {
            return Err(Error::LengthMismatch {
                expected: self.shards(),
                given: counts.len(),
            });
        }
        let needed = self.filter_bytes_of(counts)?;
        if out.len() < needed {
            return Err(Error::OutputTooSmall {
                needed,
                given: out.len(),
            });
        }
        layout::clear_header(out);
        let mut num_keys = 0u64;
        for &c in counts {
            num_keys = num_keys.checked_add(c).ok_or(Error::TooLarge)?;
        }
        let header = ShardedHeader {
            kind: self.kind,
            width: self.width,
            shards: self.shards,
            num_keys,
        };
        let dir_end = directory_end(self.shards()).ok_or(Error::TooLarge)?;
        let mut offset = dir_end;
        put_entry(out, 0, offset)?;
        for (i, &c) in counts.iter().enumerate() {
            offset += self.shard_plan(c)?.filter_bytes();
            put_entry(out, i + 1, offset)?;
        }
        // The header last: a build that stops before `finish` leaves no
        // checksum that matches.
        out[..HEADER_BYTES].copy_from_slice(&header.encode());
        let (_, rest) = out.split_at_mut(dir_end);
        Ok(ShardSlots {
            plan: *self,
            index: 0,
            counts,
            out: rest,
        })
    }

    /// Closes a build whose every [`ShardJob`] succeeded: moves each shard
    /// to the end of the one before (a Bumped shard may be shorter than its
    /// slot), rewrites the directory with the actual offsets and seals the
    /// header's checksum. Returns the sharded filter's length: its bytes
    /// are `out[..len]`. The bytes depend only on the plan and the hashes,
    /// not on which thread built which shard.
    pub fn finish(&self, out: &mut [u8]) -> Result<usize, Error> {
        let header = ShardedHeader::decode(out)?;
        if header.shards != self.shards || header.kind != self.kind || header.width != self.width {
            return Err(Error::CorruptHeader);
        }
        let s = self.shards();
        let dir_end = directory_end(s).ok_or(Error::TooLarge)?;
        let mut write = dir_end;
        let mut slot_start = dir_end;
        for i in 0..s {
            let slot_end = entry(out, i + 1).ok_or(Error::CorruptHeader)?;
            let slot_end = usize::try_from(slot_end).map_err(|_| Error::CorruptHeader)?;
            let slot = out.get(slot_start..slot_end).ok_or(Error::CorruptHeader)?;
            let len = FilterRef::serialized_len(slot)?;
            if len > slot.len() {
                return Err(Error::CorruptHeader);
            }
            if write != slot_start {
                out.copy_within(slot_start..slot_start + len, write);
            }
            write += len;
            put_entry(out, i + 1, write)?;
            slot_start = slot_end;
        }
        layout::seal(&mut out[..dir_end]);
        Ok(write)
    }
}

/// Hashes in shard order and each shard's count, as
/// [`ShardedPlan::partition`] leaves them (the only way to make one, so
/// that a build's shards always get exactly their hashes).
#[derive(Debug)]
pub struct Partitioned<'h> {
    hashes: &'h [u64],
    counts: &'h [u64],
}

impl<'h> Partitioned<'h> {
    /// The hashes, shard 0's first.
    pub fn hashes(&self) -> &'h [u64] {
        self.hashes
    }

    /// The number of hashes of each shard.
    pub fn counts(&self) -> &'h [u64] {
        self.counts
    }
}

/// The shards' builds of a sharded filter, in shard order
/// ([`ShardedPlan::jobs`]): an iterator of [`ShardJob`]s.
#[derive(Debug)]
pub struct ShardJobs<'a> {
    slots: ShardSlots<'a>,
    hashes: &'a [u64],
}

impl<'a> Iterator for ShardJobs<'a> {
    type Item = ShardJob<'a>;

    fn next(&mut self) -> Option<ShardJob<'a>> {
        let slot = self.slots.next()?;
        let (hashes, rest) = self.hashes.split_at(slot.count as usize);
        self.hashes = rest;
        Some(ShardJob {
            index: slot.index,
            plan: slot.plan,
            hashes,
            out: slot.out,
        })
    }
}

/// One shard's place in a build: its index, key count, plan and slice of
/// the output.
#[derive(Debug)]
struct ShardSlot<'a> {
    index: usize,
    count: u64,
    plan: Result<Plan, Error>,
    out: &'a mut [u8],
}

/// The shards' slots in order ([`ShardedPlan::slots`]).
#[derive(Debug)]
struct ShardSlots<'a> {
    plan: ShardedPlan,
    index: usize,
    counts: &'a [u64],
    out: &'a mut [u8],
}

impl<'a> Iterator for ShardSlots<'a> {
    type Item = ShardSlot<'a>;

    fn next(&mut self) -> Option<ShardSlot<'a>> {
        let (&count, counts) = self.counts.split_first()?;
        self.counts = counts;
        let index = self.index;
        self.index += 1;
        // `slots` planned every shard already: this plan is the same.
        let plan = self.plan.shard_plan(count);
        let len = plan.as_ref().map_or(0, |p| p.filter_bytes());
        let out = core::mem::take(&mut self.out);
        let (out, rest) = out.split_at_mut(len.min(out.len()));
        self.out = rest;
        Some(ShardSlot {
            index,
            count,
            plan,
            out,
        })
    }
}

/// The build of one shard: its plan, its hashes and its slice of the
/// output. `Send`: hand it to any thread.
#[derive(Debug)]
pub struct ShardJob<'a> {
    index: usize,
    plan: Result<Plan, Error>,
    hashes: &'a [u64],
    out: &'a mut [u8],
}

impl ShardJob<'_> {
    /// The shard's index.
    pub fn index(&self) -> usize {
        self.index
    }

    /// The shard's hashes.
    pub fn hashes(&self) -> &[u64] {
        self.hashes
    }

    /// Builds the shard into its slice with `scratch` (at least
    /// [`ShardedPlan::scratch_words`] words): [`Plan::build`] with the
    /// shard's plan, its seed retries and fallbacks. Returns the bytes
    /// written.
    pub fn build(self, scratch: &mut [u64]) -> Result<usize, Error> {
        self.plan?.build_in_place(self.hashes, scratch, self.out)
    }
}

#[cfg(feature = "alloc")]
mod view;
#[cfg(feature = "alloc")]
pub use view::{ShardedFilter, ShardedFilterRef};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shard_of_splits_the_hash_range_evenly() {
        assert_eq!(shard_of(0, 7), 0);
        assert_eq!(shard_of(u64::MAX, 7), 6);
        assert_eq!(shard_of(u64::MAX, 1), 0);
        // Shard i starts at ceil(i * 2^64 / S).
        let s = 3usize;
        let first_of_1 = ((1u128 << 64) / 3 + 1) as u64;
        assert_eq!(shard_of(first_of_1 - 1, s), 0);
        assert_eq!(shard_of(first_of_1, s), 1);
    }

    #[test]
    fn header_round_trips_and_refuses_reserved_bytes() {
        let h = ShardedHeader {
            kind: Kind::Standard,
            width: Width::W128,
            shards: 5,
            num_keys: 1234,
        };
        let bytes = h.encode();
        assert_eq!(ShardedHeader::decode(&bytes), Ok(h));
        for at in [7usize, 12, 24, 33, 39] {
            let mut b = bytes;
            b[at] = 1;
            assert_eq!(ShardedHeader::decode(&b), Err(Error::CorruptHeader), "{at}");
        }
        let mut b = bytes;
        b[8..12].copy_from_slice(&0u32.to_le_bytes());
        assert_eq!(ShardedHeader::decode(&b), Err(Error::CorruptHeader));
        assert_eq!(
            ShardedHeader::decode(&bytes[..47]).unwrap_err(),
            Error::Truncated {
                needed: 48,
                given: 47
            }
        );
    }
}
