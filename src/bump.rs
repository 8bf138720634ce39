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
//! A chain step is a dependent load, so banding one key at a time leaves
//! the core waiting. Large layers are therefore cut into segments whose
//! keys may not reach the next segment's rows, and [`band_layer`] keeps
//! one chain in flight per segment, a step of each in turn
//! ([`boundary_buckets`] has the rule and why it bands as bucket order
//! does).
//!
//! Layer `i + 1` takes the values layer `i` remixed as its hashes, so a
//! query carries one value from layer to layer. [`build`] bands the
//! layers one after another into the caller's scratch, back-substitutes
//! each into the caller's output as soon as it is banded, and writes the
//! layer table last (`src/bumped_layout.rs` has the format and sizing).
//!
//! `src/bumped_study.rs` is the reference model this is checked against
//! and explains the choice of parameters.

use crate::arith::folded_product;
use crate::band::{AddOutcome, Chain, chain_to_end, insert, step};
use crate::bumped_layout::{
    BANDING_LANES, BANDING_SEGMENTS, BUMPING_SEEDS, Buckets, BumpedHeader, ENTRY_BYTES,
    GROUP_BYTES, LAST_LAYER_ATTEMPTS, LAST_LAYER_KEYS, LAST_LAYER_RETRIES, LayerEntry, MAX_LAYERS,
    MIN_SEGMENT_BUCKETS, boundary_buckets, bumping_blocks, encode_thresholds, kept_entries,
    last_blocks, layer_bounds, layer_geometry, listed_exceptions, max_listed, next_cap,
    scratch_parts, sort_counters, threshold_groups,
};
use crate::error::Error;
use crate::hash::{Coeff, Expander, FreeRows, remix, start};
use crate::kernels::{SolveKernel, prefetch_for_write};
use crate::layout::{Family, Geometry, HEADER_BYTES, Width};
use crate::word::Rows;

/// A key as the layers band it: its hash (remixed from layer to layer)
/// and the right side of its equation. A filter's key is its hash alone
/// (`u64`), whose result bits are the right side; a retrieval key carries
/// its value beside the hash (`[hash, value]`).
pub(crate) trait LayerKey: Copy + bytemuck::Pod {
    /// The key's hash (as the layer it is in received it).
    fn hash(self) -> u64;
    /// The same key with hash `x` (its remix with a layer's seed).
    fn with_hash(self, x: u64) -> Self;
    /// The right side of the key's equation, given the result bits its
    /// hash expands to.
    fn right_side(self, hash_bits: u64) -> u64;
    /// Whether `self` and `other` are the same hash with different right
    /// sides (never for filters: their right side is the hash's).
    fn contradicts(self, other: Self) -> bool;
    /// `acc` with the key mixed in: a step of [`key_set_digest`] (the
    /// hash, and a retrieval key's value too).
    fn mix_into(self, acc: u64) -> u64;
}

impl LayerKey for u64 {
    #[inline(always)]
    fn hash(self) -> u64 {
        self
    }
    #[inline(always)]
    fn with_hash(self, x: u64) -> u64 {
        x
    }
    #[inline(always)]
    fn right_side(self, hash_bits: u64) -> u64 {
        hash_bits
    }
    fn contradicts(self, _: u64) -> bool {
        false
    }
    #[inline(always)]
    fn mix_into(self, acc: u64) -> u64 {
        folded_product(acc ^ self, DIGEST_MIX)
    }
}

impl LayerKey for [u64; 2] {
    #[inline(always)]
    fn hash(self) -> u64 {
        self[0]
    }
    #[inline(always)]
    fn with_hash(self, x: u64) -> [u64; 2] {
        [x, self[1]]
    }
    #[inline(always)]
    fn right_side(self, _: u64) -> u64 {
        self[1]
    }
    fn contradicts(self, other: [u64; 2]) -> bool {
        self[0] == other[0] && self[1] != other[1]
    }
    #[inline(always)]
    fn mix_into(self, acc: u64) -> u64 {
        folded_product(
            folded_product(acc ^ self[0], DIGEST_MIX) ^ self[1],
            DIGEST_MIX,
        )
    }
}

/// The multiplier of [`key_set_digest`]'s steps (odd, from the digits of
/// e, as the hashing constants of `src/hash.rs` are arbitrary odd ones).
const DIGEST_MIX: u64 = 0xb7e1_5162_8aed_2a6b;

/// A digest of a layer's keys (every key, in their order), from which the
/// layer's retries draw their seeds ([`retry_seed`]): a layer's first
/// seed is the plan's sequence, public, so hashes can be crafted to
/// crowd its buckets (four per bucket, linearly dependent at one start,
/// make the bucket bump all its keys); its later seeds depend on the keys
/// themselves, crafted ones included. Two passes, the second seeded with
/// the first's result, so that a key changed anywhere changes the whole
/// second pass: aiming keys at the seed they will get means searching
/// the 2^32 seeds with two passes over all the keys per candidate.
/// `salt` separates plans' seeds and layers.
pub(crate) fn key_set_digest<K: LayerKey>(keys: impl Iterator<Item = K> + Clone, salt: u64) -> u64 {
    let first = keys.clone().fold(salt, |acc, k| k.mix_into(acc));
    keys.fold(first ^ salt.rotate_left(32), |acc, k| k.mix_into(acc))
}

/// The seed of retry `attempt` (1 on) of a layer whose keys have
/// [`key_set_digest`] `digest`.
pub(crate) fn retry_seed(digest: u64, attempt: u64) -> u32 {
    folded_product(digest ^ attempt, DIGEST_MIX) as u32
}

/// Remixes the keys of `inputs` with the layer's seed (`expander` is the
/// layer's, Standard without smash) into `ordered`, in banding order:
/// buckets ascending, each from its last start down. Keys with one start
/// keep their relative order. A stable counting sort by bucket into
/// `temp` (its counters, `counts`, [`sort_counters`], stay in cache,
/// where one counter per start, about 8 MB per 10^6 keys, did not), then
/// each bucket's keys, by place within the bucket (how far back from its
/// end), into the same places of `ordered`: a bucket's keys and its
/// counters are in cache then, where a second sort of all the keys had
/// read and written them all again from memory. `temp` and `ordered` need
/// as many keys as `inputs` has; with fewer, nothing is written and the
/// answer is `false`.
pub(crate) fn order_for_banding<K: LayerKey>(
    buckets: Buckets,
    expander: &Expander,
    inputs: impl ExactSizeIterator<Item = K> + Clone,
    counts: &mut [u64],
    temp: &mut [K],
    ordered: &mut [K],
) -> bool {
    let n = inputs.len();
    let words = sort_counters(buckets, expander.num_starts);
    let (Ok(words), true) = (usize::try_from(words), ordered.len() == n) else {
        return false;
    };
    let (Some(counts), Some(temp)) = (counts.get_mut(..words), temp.get_mut(..n)) else {
        return false;
    };
    let mix = expander.seed_mix;
    let locate = |x: u64| buckets.locate(start(x, expander.num_starts, 0));
    // By bucket, remixing.
    counting_sort(inputs, temp, counts, |key: K| {
        let x = remix(key.hash(), mix);
        (locate(x).0 as usize, key.with_hash(x))
    });
    // Each bucket's keys (a run in `temp`), by place, stable: the order is
    // that of sorting all keys by place and then, stably, by bucket.
    let within = counts.get_mut(..buckets.size() as usize).unwrap_or(&mut []);
    let mut from = 0;
    while let Some(&first) = temp.get(from) {
        let bucket = locate(first.hash()).0;
        let run = temp
            .get(from..)
            .unwrap_or(&[])
            .iter()
            .take_while(|key| locate(key.hash()).0 == bucket)
            .count();
        let (Some(keys), Some(to)) = (
            temp.get(from..from + run),
            ordered.get_mut(from..from + run),
        ) else {
            return false;
        };
        counting_sort(keys.iter().copied(), to, within, |key: K| {
            (locate(key.hash()).1 as usize, key)
        });
        from += run;
    }
    true
}

/// A stable counting sort of `from` into `to` (as long) by `key`, which
/// also gives the value to store: keys at or past `counts.len()` are
/// dropped (none are: the callers' keys fit).
#[inline(always)]
fn counting_sort<K: Copy>(
    from: impl Iterator<Item = K> + Clone,
    to: &mut [K],
    counts: &mut [u64],
    key: impl Fn(K) -> (usize, K),
) {
    counts.fill(0);
    for v in from.clone() {
        if let Some(c) = counts.get_mut(key(v).0) {
            *c += 1;
        }
    }
    let mut total = 0;
    for c in counts.iter_mut() {
        let here = *c;
        *c = total;
        total += here;
    }
    for v in from {
        let (k, value) = key(v);
        if let Some(next) = counts.get_mut(k) {
            if let Some(slot) = to.get_mut(*next as usize) {
                *slot = value;
            }
            *next += 1;
        }
    }
}

/// Bands `ordered` (remixed with the layer's seed, in banding order) into
/// `rows` (zeroed, Standard Ribbon's stride, the layer's slots) and writes
/// every bucket's threshold into `thresholds` (one per bucket;
/// [`Buckets::size`] where nothing was bumped). The bumped keys end up at
/// the front of `ordered`, still remixed with this layer's seed, in their
/// banding order; the answer is how many there are. `kept` is scratch of
/// [`BANDING_LANES`] times [`kept_entries`] entries. `Err(())` when
/// `thresholds` has fewer entries than the layer has buckets, `kept` is
/// short, or `rows` is not the layer's.
///
/// Buckets that contradict themselves in the last quarter of their
/// starts after which a layer gives up (keys crafted against its seed:
/// [`Lane::bump`]).
const CRAFTED_BUCKETS: u32 = 2;

/// How [`band_layer`] cuts a layer and when it gives up.
#[derive(Clone, Copy, Debug)]
pub(crate) struct BandLimits {
    /// The fewest buckets a layer is cut into segments from (builds:
    /// [`MIN_SEGMENT_BUCKETS`]).
    pub(crate) min_segment_buckets: u64,
    /// The most bumped keys the caller can use (the next layer's cap).
    pub(crate) bumped: usize,
}

/// Large layers are banded in [`BANDING_SEGMENTS`] segments, one step of
/// each in turn, under the rule of [`boundary_buckets`] (which says why
/// the outcome is that of banding bucket by bucket under the rule).
///
/// Once its buckets have bumped more than `limits.bumped` keys (bumped
/// keys are never taken back; a bucket's are counted when it bumps, those
/// still to come included), each lane stops at its next bump and the
/// answer is that count: the layer is unusable and the caller retries it
/// with another seed without banding the rest, so keys crafted against
/// its seed cost a build the share banded before the limit fell. The
/// count is kept in the lanes' rare bump path: a look at it in every
/// round of the banding loop cost 4 % of a w = 64 build.
// Out of line: inlined into the layered build, it banded w = 128 layers
// 6-7 % slower (182 against 171 ns per key at 10^6, side by side).
#[inline(never)]
pub(crate) fn band_layer<W: Coeff, K: LayerKey>(
    buckets: Buckets,
    expander: &Expander,
    rows: &mut [u64],
    ordered: &mut [K],
    thresholds: &mut [u16],
    kept: &mut [u32],
    limits: BandLimits,
) -> Result<usize, ()> {
    let BandLimits {
        min_segment_buckets,
        bumped: limit,
    } = limits;
    // The starts below come from the remixed value alone, as a Standard
    // expander without smash makes them.
    debug_assert!(expander.standard && expander.smash == 0);
    const { assert!(BANDING_SEGMENTS == 4 && BANDING_LANES == 7) };
    let stride = Rows::stride::<W>(true);
    let num_slots = usize::try_from(expander.num_starts)
        .ok()
        .and_then(|starts| starts.checked_add(W::BITS as usize - 1))
        .ok_or(())?;
    if num_slots.checked_mul(stride) != Some(rows.len()) {
        return Err(());
    }
    let num_buckets = buckets.count(expander.num_starts);
    let thresholds = thresholds
        .get_mut(..usize::try_from(num_buckets).map_err(|_| ())?)
        .ok_or(())?;
    thresholds.fill(buckets.size() as u16);
    let entries = kept_entries(buckets, W::BITS);
    let kept = kept.get_mut(..entries * BANDING_LANES).ok_or(())?;
    // The lanes' buckets, in banding order: segment, boundary bucket,
    // segment, ..., segment.
    let mut spans = [(num_buckets, num_buckets); BANDING_LANES];
    match boundary_buckets(buckets, W::BITS, num_buckets, min_segment_buckets) {
        None => spans[0] = (0, num_buckets),
        Some(at) => {
            let mut first = 0;
            for (k, &b) in at.iter().enumerate() {
                spans[2 * k] = (first, b);
                spans[2 * k + 1] = (b, b + 1);
                first = b + 1;
            }
            spans[BANDING_LANES - 1] = (first, num_buckets);
        }
    }
    // Keys the lanes' buckets bump, counted as each bucket bumps (in the
    // lanes' cold path, so the banding loop pays nothing for it).
    let bumped_total = &core::cell::Cell::new(0usize);
    let crafted = &core::cell::Cell::new(0u32);
    let row_of = |bucket: u64| {
        usize::try_from(bucket << buckets.bits).map_or(num_slots, |r| r.min(num_slots))
    };
    // Each lane's keys, thresholds and kept list, split off in turn.
    let (mut keys_rest, mut thresholds_rest, mut kept_rest) = (&mut *ordered, thresholds, kept);
    let mut lane = |index: usize| -> Result<Lane<'_, W, K>, ()> {
        let (first, end) = *spans.get(index).ok_or(())?;
        let keys = keys_rest
            .partition_point(|k| buckets.locate(start(k.hash(), expander.num_starts, 0)).0 < end);
        let (lane_keys, k) = core::mem::take(&mut keys_rest)
            .split_at_mut_checked(keys)
            .ok_or(())?;
        let (lane_thresholds, t) = core::mem::take(&mut thresholds_rest)
            .split_at_mut_checked(usize::try_from(end - first).map_err(|_| ())?)
            .ok_or(())?;
        let (lane_kept, kr) = core::mem::take(&mut kept_rest)
            .split_at_mut_checked(entries)
            .ok_or(())?;
        (keys_rest, thresholds_rest, kept_rest) = (k, t, kr);
        Ok(Lane {
            buckets,
            expander,
            first_row: row_of(first),
            first_bucket: first,
            keys: lane_keys,
            thresholds: lane_thresholds,
            kept: lane_kept,
            kept_len: 0,
            next: 0,
            bumped: 0,
            bucket: u64::MAX,
            bucket_first: 0,
            bucket_row: 0,
            threshold: buckets.size(),
            chain: None,
            back: 0,
            // A boundary bucket's low keys wait for the segments.
            pause_back: if index % 2 == 1 {
                buckets.low_back()
            } else {
                u32::MAX
            },
            bumped_total,
            limit,
            crafted,
        })
    };
    let mut s0 = lane(0)?;
    if spans[0].1 == num_buckets {
        // One segment.
        s0.run(rows)?;
        return Ok(match bumped_total.get() {
            past if past > limit => past,
            _ => s0.bumped,
        });
    }
    let (mut b1, mut s1, mut b2, mut s2, mut b3, mut s3) =
        (lane(1)?, lane(2)?, lane(3)?, lane(4)?, lane(5)?, lane(6)?);
    // Boundary buckets' high keys.
    for lane in [&mut b1, &mut b2, &mut b3] {
        let lane_rows = rows.get_mut(lane.first_row * stride..).ok_or(())?;
        lane.run(lane_rows)?;
    }
    // The segments, side by side, each in its own rows: up to the middle
    // of the next boundary bucket (a chain that reaches past is refused).
    let mut row_spans = [(0, 0); BANDING_SEGMENTS];
    for (k, span) in row_spans.iter_mut().enumerate() {
        let (first, end) = spans[2 * k];
        let end_row = if k + 1 == BANDING_SEGMENTS {
            num_slots
        } else {
            (row_of(end) + buckets.low_back() as usize).min(num_slots)
        };
        *span = (row_of(first) * stride, end_row * stride);
    }
    let [r0, r1, r2, r3] = carve(rows, row_spans).ok_or(())?;
    loop {
        let more0 = s0.advance(r0)?;
        let more1 = s1.advance(r1)?;
        let more2 = s2.advance(r2)?;
        let more3 = s3.advance(r3)?;
        if !(more0 || more1 || more2 || more3) {
            break;
        }
    }
    // Boundary buckets' low keys, in their bucket's rows.
    for lane in [&mut b1, &mut b2, &mut b3] {
        let end = (lane.first_row + buckets.size() as usize).min(num_slots);
        let lane_rows = rows
            .get_mut(lane.first_row * stride..end * stride)
            .ok_or(())?;
        lane.pause_back = u32::MAX;
        lane.run(lane_rows)?;
    }
    // Past the limit: the layer is lost (its lanes stopped early).
    if bumped_total.get() > limit {
        return Ok(bumped_total.get());
    }
    // Each lane's bumped keys lie at the front of its keys: moved down
    // behind those of the lanes before it.
    let counts = [s0, b1, s1, b2, s2, b3, s3].map(|lane| (lane.keys.len(), lane.bumped));
    let (mut begin, mut bumped) = (0, 0);
    for (keys, count) in counts {
        // `bumped <= begin`: an element-wise copy down (no panic path).
        for i in begin..begin + count {
            *ordered.get_mut(bumped).ok_or(())? = *ordered.get(i).ok_or(())?;
            bumped += 1;
        }
        begin += keys;
    }
    Ok(bumped)
}

/// Disjoint parts of `rows`: `spans` (word ranges, ascending and apart).
fn carve<const N: usize>(rows: &mut [u64], spans: [(usize, usize); N]) -> Option<[&mut [u64]; N]> {
    let mut parts: [&mut [u64]; N] = core::array::from_fn(|_| Default::default());
    let (mut rest, mut at) = (rows, 0);
    for (part, (from, to)) in parts.iter_mut().zip(spans) {
        let (_, r) = rest.split_at_mut_checked(from.checked_sub(at)?)?;
        let (mine, r) = r.split_at_mut_checked(to.checked_sub(from)?)?;
        (*part, rest, at) = (mine, r, to);
    }
    Some(parts)
}

/// One lane of [`band_layer`]: a run of buckets (a segment, or a boundary
/// bucket), with its keys, thresholds and kept list, and the key whose
/// chain is in flight.
struct Lane<'a, W: Coeff, K: LayerKey> {
    buckets: Buckets,
    expander: &'a Expander,
    /// The first start of the lane's first bucket: the row `advance`'s
    /// `rows` begin at.
    first_row: usize,
    /// The lane's first bucket (its `thresholds[0]`).
    first_bucket: u64,
    /// The lane's keys: the bumped ones are moved to the front (`bumped`
    /// of them).
    keys: &'a mut [K],
    thresholds: &'a mut [u16],
    /// The current bucket's keys that went into a row: the row (from the
    /// bucket's first start, `bucket_row` in `rows`) and `back` << 16, in
    /// insertion order; [`kept_entries`] long (a key past that is refused,
    /// [`Lane::settle`]).
    kept: &'a mut [u32],
    kept_len: usize,
    /// The next key to take.
    next: usize,
    bumped: usize,
    bucket: u64,
    /// Where the current bucket's keys begin in `keys`.
    bucket_first: usize,
    bucket_row: usize,
    /// The current bucket's threshold ([`Buckets::size`] until it bumps).
    threshold: u32,
    /// The key in flight (`keys[next - 1]`) and its `back`.
    chain: Option<Chain<W>>,
    back: u32,
    /// Keys this far back wait (`take` answers [`Taken::Done`]) until it
    /// is raised: a boundary bucket's low keys.
    pause_back: u32,
    /// Keys every lane's buckets bump, shared by the lanes, and the most
    /// the caller can use: past it, each lane stops at its next bump.
    bumped_total: &'a core::cell::Cell<usize>,
    limit: usize,
    /// Buckets of every lane that contradicted themselves where honest
    /// keys never do (see [`Lane::bump`]).
    crafted: &'a core::cell::Cell<u32>,
}

/// What [`Lane::take`] did.
enum Taken<W> {
    /// No key left (or the next one waits).
    Done,
    /// Bumped by its bucket's threshold.
    Bumped,
    /// To band: its chain, in the lane's rows.
    Band(Chain<W>),
}

impl<W: Coeff, K: LayerKey> Lane<'_, W, K> {
    /// One elimination step of the key in flight, taking the next key
    /// first if none is; `Ok(false)` once every key is done (or waits).
    /// `rows` begin at `first_row`. Checked indexing throughout (the C ABI
    /// links no panic path); the errors cannot happen: `bumped < next <=
    /// keys.len()`.
    #[inline(always)]
    fn advance(&mut self, rows: &mut [u64]) -> Result<bool, ()> {
        let mut chain = match self.chain {
            Some(chain) => chain,
            None => match self.take(rows)? {
                Taken::Done => return Ok(false),
                Taken::Bumped => return Ok(true),
                Taken::Band(chain) => chain,
            },
        };
        let Some(outcome) = step::<W, true>(rows, &mut chain) else {
            self.chain = Some(chain);
            return Ok(true);
        };
        self.chain = None;
        if self.settle(&chain, outcome, rows)? {
            self.bump_cold(rows)?;
        }
        Ok(true)
    }

    /// Bands the lane's keys one after another, each chain to its end
    /// (with one lane in flight, [`Lane::advance`]'s keeping the chain
    /// in the lane costs time). `rows` as for `advance`.
    #[inline(always)]
    fn run(&mut self, rows: &mut [u64]) -> Result<(), ()> {
        loop {
            match self.take(rows)? {
                Taken::Done => return Ok(()),
                Taken::Bumped => {}
                Taken::Band(mut chain) => {
                    let outcome = chain_to_end::<W, true>(rows, &mut chain);
                    if self.settle(&chain, outcome, rows)? {
                        self.bump(rows)?;
                    }
                }
            }
        }
    }

    /// Takes the next key: bumps it if its bucket's threshold says so.
    #[inline(always)]
    fn take(&mut self, rows: &[u64]) -> Result<Taken<W>, ()> {
        let Some(&key) = self.keys.get(self.next) else {
            return Ok(Taken::Done);
        };
        let (s, c, b) = self.expander.expand_remixed::<W>(key.hash());
        let (bucket, back) = self.buckets.locate(s);
        if back >= self.pause_back {
            return Ok(Taken::Done);
        }
        self.next += 1;
        let i = (s as usize).wrapping_sub(self.first_row);
        // The same place two buckets further on: those rows are cold
        // (zeroed long ago), and each key fetches its share of them in
        // time. w = 64 only: at 10^6 keys, 8 bits per key, builds took
        // 93-94 instead of 104 ns per key with it, w = 128 178 instead of
        // 173 (bucket of 512 starts, 3-word rows; one segment).
        if W::BITS == 64 {
            let ahead = 2 * self.buckets.size() as usize;
            prefetch_for_write(rows, (i + ahead) * Rows::stride::<W>(true));
        }
        if bucket != self.bucket {
            self.bucket = bucket;
            self.bucket_first = self.next - 1;
            self.bucket_row = ((bucket << self.buckets.bits) as usize).wrapping_sub(self.first_row);
            self.kept_len = 0;
            self.threshold = self.buckets.size();
        }
        if back >= self.threshold {
            // Banding order: `back` is at least the threshold.
            *self.keys.get_mut(self.bumped).ok_or(())? = key;
            self.bumped += 1;
            return Ok(Taken::Bumped);
        }
        self.back = back;
        Ok(Taken::Band(Chain {
            i,
            c,
            b: key.right_side(b),
        }))
    }

    /// Records how the key just taken ended: its row, or nothing (implied
    /// by the rows); `true` when it contradicts them (or reaches past the
    /// lane's rows), and its bucket bumps. A key the bucket's kept list
    /// cannot record (full, or the row past 2^16 rows from the bucket's
    /// first start: neither happens with honest keys, whose buckets bump
    /// long before) is taken out again at once and bumps it too, as
    /// [`Buckets::kept_fits`] says.
    #[inline(always)]
    fn settle(
        &mut self,
        chain: &Chain<W>,
        outcome: AddOutcome,
        rows: &mut [u64],
    ) -> Result<bool, ()> {
        match outcome {
            AddOutcome::Inserted => {
                let offset = chain.i.wrapping_sub(self.bucket_row);
                // `Buckets::kept_fits`, with the list as long as it says.
                debug_assert_eq!(self.kept.len(), kept_entries(self.buckets, W::BITS));
                if let Some(entry) = self.kept.get_mut(self.kept_len)
                    && offset <= 0xffff
                {
                    *entry = offset as u32 | self.back << 16;
                    self.kept_len += 1;
                    return Ok(false);
                }
                let stride = Rows::stride::<W>(true);
                let at = chain.i * stride;
                rows.get_mut(at..at + stride).ok_or(())?.fill(0);
                Ok(true)
            }
            AddOutcome::Redundant => Ok(false),
            AddOutcome::Inconsistent | AddOutcome::Full => Ok(true),
        }
    }

    /// [`Lane::bump`] out of line, for lanes side by side (inlined into
    /// each, it made them slower; [`Lane::run`] inlines it, keeping the
    /// lane in registers).
    #[cold]
    fn bump_cold(&mut self, rows: &mut [u64]) -> Result<(), ()> {
        self.bump(rows)
    }

    /// The key just taken contradicts the rows: its `back` fixes the
    /// bucket's threshold, and the bucket's keys at or past it are bumped
    /// (those in taken out again).
    #[inline(always)]
    fn bump(&mut self, rows: &mut [u64]) -> Result<(), ()> {
        let t = self.buckets.threshold_for(self.back);
        let at = usize::try_from(self.bucket - self.first_bucket).map_err(|_| ())?;
        *self.thresholds.get_mut(at).ok_or(())? = t as u16;
        self.threshold = t;
        let stride = Rows::stride::<W>(true);
        while let Some(&entry) = self.kept_len.checked_sub(1).and_then(|i| self.kept.get(i))
            && entry >> 16 >= t
        {
            self.kept_len -= 1;
            let at = (self.bucket_row + (entry & 0xffff) as usize) * stride;
            rows.get_mut(at..at + stride).ok_or(())?.fill(0);
        }
        // The bucket's keys at or past `t` so far, this one last, join the
        // bumped ones (which all lie before the bucket).
        let (buckets, num_starts) = (self.buckets, self.expander.num_starts);
        let back_of = |k: K| buckets.locate(start(k.hash(), num_starts, 0)).1;
        let j = self.next - 1;
        let mut from = j;
        while from > self.bucket_first && self.keys.get(from - 1).is_some_and(|&y| back_of(y) >= t)
        {
            from -= 1;
        }
        for i in from..=j {
            let y = *self.keys.get(i).ok_or(())?;
            *self.keys.get_mut(self.bumped).ok_or(())? = y;
            self.bumped += 1;
        }
        // The bucket's keys still to come lie at least as far back
        // (banding order) and are bumped too: counted now, with those just
        // taken out, so that every lane knows the total as buckets bump.
        let (bucket, rest) = (self.bucket, self.keys.get(self.next..).unwrap_or(&[]));
        let rest = rest
            .iter()
            .take_while(|k| buckets.locate(start(k.hash(), num_starts, 0)).0 == bucket)
            .count();
        let mut total = self.bumped_total.get() + (j + 1 - from) + rest;
        // A bucket that contradicts itself in the last quarter of its
        // starts (banded first, into empty rows): keys crafted against
        // this seed. Honest keys never do (none in 143,760 buckets of 20
        // layers of 10^6 keys at w = 64, whose lowest threshold was 64,
        // nor in 37,700 at w = 128); the second such bucket gives the
        // layer up as if past the limit, long before its cap would.
        if t < buckets.size() / 4 {
            self.crafted.set(self.crafted.get() + 1);
            if self.crafted.get() >= CRAFTED_BUCKETS {
                total = total.max(self.limit.saturating_add(1));
            }
        }
        self.bumped_total.set(total);
        if total > self.limit {
            // The layer is lost: this lane takes no more keys.
            self.next = self.keys.len();
        }
        Ok(())
    }
}

/// A Bumped filter's shape, besides its keys: width, columns (every
/// layer's blocks have `lower_columns`, about `upper_millis / 1000` of
/// them one more) and the first layer's seed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct Shape {
    pub(crate) width: Width,
    pub(crate) lower_columns: u32,
    pub(crate) upper_millis: u32,
    pub(crate) seed: u32,
    /// Retries of a layer whose first seed fails, each with a seed from
    /// the layer's keys' digest: at most [`BUMPING_SEEDS`]` - 1` for a
    /// bumping layer and [`LAST_LAYER_RETRIES`] for the last one, fewer
    /// if the plan tries fewer seeds ([`Shape::retries_for`]).
    pub(crate) retries: u32,
    /// Filter (the keys' right sides come from their hashes) or
    /// retrieval (each key carries its value): the header's magic, and
    /// the keys' size in scratch.
    pub(crate) family: Family,
}

impl Shape {
    /// The retries of a plan that tries at most `max_seeds` seeds (at
    /// least one) per layer.
    pub(crate) const fn retries_for(max_seeds: u32) -> u32 {
        let seeds = if max_seeds < BUMPING_SEEDS {
            max_seeds
        } else {
            BUMPING_SEEDS
        };
        seeds.saturating_sub(1)
    }
}

/// The most a build of some number of keys needs, whatever the keys: its
/// layers, output bytes and scratch words (each part of the scratch too).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct Bounds {
    pub(crate) layers: usize,
    pub(crate) filter_bytes: usize,
    row_words: usize,
    next_words: usize,
    ordered_words: usize,
    count_words: usize,
    threshold_words: usize,
}

impl Bounds {
    /// The bounds for `num_keys` keys of `shape` ([`layer_bounds`]);
    /// [`Error::TooLarge`] past the address space.
    pub(crate) fn new(shape: &Shape, num_keys: u64) -> Result<Bounds, Error> {
        let width = shape.width;
        let b = layer_bounds(width, num_keys, shape.lower_columns, shape.upper_millis)
            .ok_or(Error::TooLarge)?;
        let words = |x: u128| usize::try_from(x).map_err(|_| Error::TooLarge);
        let filter_bytes = words(b.filter_bytes)?;
        let key_words = match shape.family {
            Family::Filter => 1,
            Family::Retrieval => 2,
        };
        let [rows, next, ordered, counts, thresholds] =
            scratch_parts(width, num_keys, key_words, &b);
        let bounds = Bounds {
            layers: b.layers,
            filter_bytes,
            row_words: words(rows)?,
            next_words: words(next)?,
            ordered_words: words(ordered)?,
            count_words: words(counts)?,
            threshold_words: words(thresholds)?,
        };
        let scratch = bounds.scratch_words().ok_or(Error::TooLarge)?;
        if filter_bytes > isize::MAX as usize || scratch > isize::MAX as usize / 8 {
            return Err(Error::TooLarge);
        }
        Ok(bounds)
    }

    /// Scratch words of a build.
    pub(crate) fn scratch_words(&self) -> Option<usize> {
        self.row_words
            .checked_add(self.next_words)?
            .checked_add(self.ordered_words)?
            .checked_add(self.count_words)?
            .checked_add(self.threshold_words)
    }
}

/// Builds a Bumped filter of `hashes` into `out` and answers its length.
/// `scratch` and `out` need what [`Bounds::new`] says for as many keys;
/// `solve` is the back-substitution kernel for the shape's width.
/// [`Error::ConstructionFailed`] when a layer found no seed (crafted
/// hashes).
pub(crate) fn build(
    shape: &Shape,
    hashes: &[u64],
    solve: &SolveKernel,
    scratch: &mut [u64],
    out: &mut [u8],
) -> Result<usize, Error> {
    let keys = hashes.iter().copied();
    match shape.width {
        Width::W64 => build_as::<u64, u64>(shape, keys, solve, scratch, out),
        Width::W128 => build_as::<u128, u64>(shape, keys, solve, scratch, out),
    }
}

/// Builds Bumped retrieval layers mapping `hashes[i]` to `values[i]` (as
/// long; the shape's family is [`Family::Retrieval`]) into `out`, as
/// [`build`] does. [`Error::ConflictingValues`] when the last layer holds
/// one hash with two values (every such pair travels there together: the
/// second of them always contradicts the first, so their bucket bumps
/// both).
pub(crate) fn build_values(
    shape: &Shape,
    hashes: &[u64],
    values: &[u64],
    solve: &SolveKernel,
    scratch: &mut [u64],
    out: &mut [u8],
) -> Result<usize, Error> {
    let keys = hashes.iter().zip(values).map(|(&h, &v)| [h, v]);
    match shape.width {
        Width::W64 => build_as::<u64, [u64; 2]>(shape, keys, solve, scratch, out),
        Width::W128 => build_as::<u128, [u64; 2]>(shape, keys, solve, scratch, out),
    }
}

/// `words` as keys of `K` (a word left over is left out).
fn keys_of<K: LayerKey>(words: &mut [u64]) -> Option<&mut [K]> {
    let per_key = size_of::<K>() / 8;
    let len = words.len() / per_key * per_key;
    bytemuck::try_cast_slice_mut(words.get_mut(..len)?).ok()
}

fn build_as<W: Coeff, K: LayerKey>(
    shape: &Shape,
    keys: impl ExactSizeIterator<Item = K> + Clone,
    solve: &SolveKernel,
    scratch: &mut [u64],
    out: &mut [u8],
) -> Result<usize, Error> {
    let n = keys.len() as u64;
    let bounds = Bounds::new(shape, n)?;
    let need = bounds.scratch_words().ok_or(Error::TooLarge)?;
    if scratch.len() < need {
        return Err(Error::ScratchTooSmall {
            needed: need,
            given: scratch.len(),
        });
    }
    if out.len() < bounds.filter_bytes {
        return Err(Error::OutputTooSmall {
            needed: bounds.filter_bytes,
            given: out.len(),
        });
    }
    let short = Error::ScratchTooSmall {
        needed: need,
        given: scratch.len(),
    };
    let (rows, rest) = scratch
        .split_at_mut_checked(bounds.row_words)
        .ok_or(short)?;
    let (next, rest) = rest.split_at_mut_checked(bounds.next_words).ok_or(short)?;
    let (ordered, rest) = rest
        .split_at_mut_checked(bounds.ordered_words)
        .ok_or(short)?;
    let (counts, rest) = rest.split_at_mut_checked(bounds.count_words).ok_or(short)?;
    let thresholds = rest.get_mut(..bounds.threshold_words).ok_or(short)?;
    let mut b = LayerBuilder::<W> {
        shape,
        solve,
        rows,
        counts,
        thresholds: bytemuck::cast_slice_mut(thresholds),
        out,
        // Layer data goes after a table of the most layers there can be;
        // the gap is closed once the layers are known.
        data_at: HEADER_BYTES + ENTRY_BYTES * bounds.layers,
        entries: [None; MAX_LAYERS],
        layers: 0,
        seed: shape.seed,
        cap: n,
        _word: core::marker::PhantomData,
    };
    let ordered = keys_of::<K>(ordered).ok_or(short)?;
    let next = keys_of::<K>(next).ok_or(short)?;
    // The first layer takes the keys as given, each later one those the
    // layer before bumped (kept in `next`).
    let mut bumped = b.layer(keys, ordered)?;
    while let Some(k) = bumped {
        let moved = ordered.get(..k).ok_or(Error::TooLarge)?;
        next.get_mut(..k)
            .ok_or(Error::TooLarge)?
            .copy_from_slice(moved);
        let inputs = next.get(..k).ok_or(Error::TooLarge)?;
        bumped = b.layer(inputs.iter().copied(), ordered)?;
    }
    b.finish(n, bounds.layers)
}

/// The state of a layered build between layers: the scratch parts, the
/// output and the layer table so far.
struct LayerBuilder<'a, W> {
    shape: &'a Shape,
    solve: &'a SolveKernel,
    rows: &'a mut [u64],
    counts: &'a mut [u64],
    thresholds: &'a mut [u16],
    out: &'a mut [u8],
    /// Where the next layer's data goes.
    data_at: usize,
    entries: [Option<LayerEntry>; MAX_LAYERS],
    layers: usize,
    /// The next seed to try.
    seed: u32,
    /// The most keys this layer may have bumped on to it.
    cap: u64,
    _word: core::marker::PhantomData<W>,
}

impl<W: Coeff> LayerBuilder<'_, W> {
    fn geometry(&self, blocks: u64) -> Result<Geometry, Error> {
        let s = self.shape;
        layer_geometry(s.width, blocks, s.lower_columns, s.upper_millis)
    }

    /// Bands and solves the next layer of `inputs` (`ordered` is scratch
    /// for as many keys): `Some(k)` when it bumped `k` keys, now at the
    /// front of `ordered`; `None` when it was the last.
    fn layer<K: LayerKey>(
        &mut self,
        inputs: impl ExactSizeIterator<Item = K> + Clone,
        ordered: &mut [K],
    ) -> Result<Option<usize>, Error> {
        let k = inputs.len();
        if self.layers >= MAX_LAYERS {
            return Err(Error::TooLarge);
        }
        if k as u64 <= LAST_LAYER_KEYS {
            self.last_layer(inputs)?;
            return Ok(None);
        }
        let (width, stride) = (self.shape.width, Rows::stride::<W>(true));
        let buckets = Buckets::for_width(width);
        let cap_next = next_cap(width, self.cap);
        let ordered = ordered.get_mut(..k).ok_or(Error::TooLarge)?;
        // The plan's next seed first; retries from the keys' digest.
        let first_seed = self.seed;
        self.seed = self.seed.wrapping_add(1);
        let mut digest = None;
        for attempt in 0..=self.shape.retries {
            let this_seed = match attempt {
                0 => first_seed,
                _ => {
                    let salt = self.retry_salt();
                    let d = *digest.get_or_insert_with(|| key_set_digest(inputs.clone(), salt));
                    retry_seed(d, u64::from(attempt))
                }
            };
            let g = self.geometry(bumping_blocks(width, k as u64))?;
            let expander = Expander::new(&g, this_seed);
            // The rows hold the sort's intermediate order (they are
            // sized for it), and are zeroed after.
            let temp = keys_of::<K>(self.rows).ok_or(Error::TooLarge)?;
            let counts = &mut *self.counts;
            if !order_for_banding(buckets, &expander, inputs.clone(), counts, temp, ordered) {
                return Err(Error::TooLarge);
            }
            let rows = self
                .rows
                .get_mut(..g.num_slots() * stride)
                .ok_or(Error::TooLarge)?;
            rows.fill(0);
            let kept: &mut [u32] = bytemuck::cast_slice_mut(&mut *self.counts);
            let limits = BandLimits {
                min_segment_buckets: MIN_SEGMENT_BUCKETS,
                bumped: usize::try_from(cap_next).unwrap_or(usize::MAX),
            };
            let bumped = band_layer::<W, K>(
                buckets,
                &expander,
                rows,
                ordered,
                self.thresholds,
                kept,
                limits,
            )
            .map_err(|()| Error::TooLarge)?;
            let num_buckets =
                usize::try_from(buckets.count(g.num_starts())).map_err(|_| Error::TooLarge)?;
            let thresholds = self.thresholds.get(..num_buckets).ok_or(Error::TooLarge)?;
            let listed = listed_exceptions(buckets, thresholds);
            // Past a cap the plan's bounds allow for: the next seed.
            if bumped as u64 > cap_next || listed as u64 > max_listed(num_buckets as u64) {
                continue;
            }
            let data_at = self.data_at;
            let groups_end = data_at + threshold_groups(num_buckets as u64) as usize * GROUP_BYTES;
            let listed_end = groups_end + 4 * listed;
            let data = self
                .out
                .get_mut(data_at..listed_end)
                .ok_or(Error::TooLarge)?;
            let (groups, list) = data
                .split_at_mut_checked(groups_end - data_at)
                .ok_or(Error::TooLarge)?;
            encode_thresholds(buckets, thresholds, groups, list)
                .map_err(|()| Error::ConstructionFailed)?;
            let listed = u32::try_from(listed).map_err(|_| Error::TooLarge)?;
            let entry = layer_entry(&g, this_seed, listed, k);
            self.solve_and_record(&g, expander.seed_mix, listed_end, entry)?;
            self.cap = cap_next;
            return Ok(Some(bumped));
        }
        Err(Error::ConstructionFailed)
    }

    /// Back-substitutes the banded rows of layer `g` (its seed's mix
    /// `seed_mix` fills the free rows) into the output at `payload_at`, and
    /// records the layer: its table entry, and the next layer's data after
    /// its payload.
    fn solve_and_record(
        &mut self,
        g: &Geometry,
        seed_mix: u64,
        payload_at: usize,
        entry: LayerEntry,
    ) -> Result<(), Error> {
        let payload_end = payload_at + g.payload_bytes();
        let rows = self
            .rows
            .get_mut(..g.num_slots() * Rows::stride::<W>(true))
            .ok_or(Error::TooLarge)?;
        let payload = self
            .out
            .get_mut(payload_at..payload_end)
            .ok_or(Error::TooLarge)?;
        let rows = Rows::new_for(self.shape.width, rows, true);
        self.solve
            .run(g, FreeRows::Pseudorandom(seed_mix), rows, payload);
        *self.entries.get_mut(self.layers).ok_or(Error::TooLarge)? = Some(entry);
        self.layers += 1;
        self.data_at = payload_end;
        Ok(())
    }

    /// What separates [`key_set_digest`]s: the plan's seed and the layer.
    fn retry_salt(&self) -> u64 {
        u64::from(self.shape.seed) << 32 | self.layers as u64
    }

    /// The last layer: no thresholds; grown until it builds, each size
    /// with the plan's next seed ([`LAST_LAYER_ATTEMPTS`], which honest
    /// keys need: its first sizes have little slack), then at its largest
    /// size with seeds from the keys' digest ([`LAST_LAYER_RETRIES`], as a
    /// bumping layer retries).
    fn last_layer<K: LayerKey>(
        &mut self,
        inputs: impl ExactSizeIterator<Item = K> + Clone,
    ) -> Result<(), Error> {
        let k = inputs.len();
        let (width, stride) = (self.shape.width, Rows::stride::<W>(true));
        let mut digest = None;
        let retries = LAST_LAYER_RETRIES.min(u64::from(self.shape.retries));
        for attempt in 0..LAST_LAYER_ATTEMPTS + retries {
            let size = attempt.min(LAST_LAYER_ATTEMPTS - 1);
            let g = self.geometry(last_blocks(width, k as u64, size))?;
            if attempt >= LAST_LAYER_ATTEMPTS {
                let salt = self.retry_salt();
                let d = *digest.get_or_insert_with(|| key_set_digest(inputs.clone(), salt));
                self.seed = retry_seed(d, attempt);
            }
            let expander = Expander::new(&g, self.seed);
            let rows = self
                .rows
                .get_mut(..g.num_slots() * stride)
                .ok_or(Error::TooLarge)?;
            rows.fill(0);
            let banded = g.num_blocks > 0 || k == 0;
            let consistent = banded
                && inputs.clone().all(|key| {
                    let (s, c, b) = expander.expand::<W>(key.hash());
                    let b = key.right_side(b);
                    insert::<W, true>(rows, s as usize, c, b) != AddOutcome::Inconsistent
                });
            if consistent {
                let entry = layer_entry(&g, self.seed, 0, k);
                return self.solve_and_record(&g, expander.seed_mix, self.data_at, entry);
            }
            self.seed = self.seed.wrapping_add(1);
        }
        // At most `LAST_LAYER_KEYS` keys: a pass per key finds a hash
        // given two values.
        let conflict = inputs
            .clone()
            .enumerate()
            .any(|(i, a)| inputs.clone().skip(i + 1).any(|b| a.contradicts(b)));
        Err(if conflict {
            Error::ConflictingValues
        } else {
            Error::ConstructionFailed
        })
    }

    /// Closes the gap after the layer table (reserved for `reserved_layers`
    /// layers), writes the table and then the header of `n` keys, and
    /// answers the length.
    fn finish(self, n: u64, reserved_layers: usize) -> Result<usize, Error> {
        let (out, layers) = (self.out, self.layers);
        let reserved = HEADER_BYTES + ENTRY_BYTES * reserved_layers;
        let table_end = HEADER_BYTES + ENTRY_BYTES * layers;
        close_gap(out, table_end, reserved, self.data_at).ok_or(Error::TooLarge)?;
        let shape = self.shape;
        let header = BumpedHeader {
            family: shape.family,
            width: shape.width,
            // A filter of no keys has no columns (its layer has no
            // blocks); a retrieval structure keeps its value bits.
            lower_columns: if n == 0 && shape.family == Family::Filter {
                0
            } else {
                shape.lower_columns
            },
            seed: shape.seed,
            num_keys: n,
            num_layers: layers,
        };
        for (i, entry) in self.entries.iter().take(layers).enumerate() {
            let at = HEADER_BYTES + ENTRY_BYTES * i;
            let entry = entry.ok_or(Error::ConstructionFailed)?;
            let dest = out.get_mut(at..at + ENTRY_BYTES).ok_or(Error::TooLarge)?;
            dest.copy_from_slice(&entry.encode());
        }
        // The header last: until here a failed build leaves none.
        let dest = out.get_mut(..HEADER_BYTES).ok_or(Error::TooLarge)?;
        dest.copy_from_slice(&header.encode());
        let len = self.data_at - (reserved - table_end);
        crate::layout::seal(out.get_mut(..len).ok_or(Error::TooLarge)?);
        Ok(len)
    }
}

/// Moves `out[from..end]` down to `to` (`to <= from`), in pieces no longer
/// than the gap so that each is a copy between disjoint slices (no panic
/// path for the C ABI). `None` if the ranges lie outside `out`.
fn close_gap(out: &mut [u8], to: usize, from: usize, end: usize) -> Option<()> {
    let gap = from.checked_sub(to)?;
    if gap == 0 {
        return Some(());
    }
    let mut at = from;
    while at < end {
        let len = gap.min(end - at);
        let (left, right) = out.split_at_mut_checked(at)?;
        let dest = left.get_mut(at - gap..at - gap + len)?;
        dest.copy_from_slice(right.get(..len)?);
        at += len;
    }
    Some(())
}

/// The table entry of a layer of geometry `g`.
fn layer_entry(g: &Geometry, seed: u32, listed: u32, keys: usize) -> LayerEntry {
    LayerEntry {
        seed,
        listed,
        num_keys: keys as u64,
        num_blocks: g.num_blocks as u64,
        upper_start_block: g.upper_start_block as u64,
    }
}

#[cfg(test)]
mod tests;
