//! One bumping layer banded in bucket order with per-bucket exact
//! thresholds ([`band_layer`]): large layers in segments side by side,
//! one [`Lane`] each, with one chain in flight per lane.

use super::LayerKey;
use crate::band::{AddOutcome, Chain, chain_to_end, step};
use crate::bumped_layout::{
    BANDING_LANES, BANDING_SEGMENTS, Buckets, boundary_buckets, kept_entries,
};
use crate::hash::{Coeff, Expander, start};
use crate::kernels::prefetch_for_write;
use crate::word::Rows;

/// Buckets that contradict themselves in the last quarter of their
/// starts after which a layer gives up (keys crafted against its seed:
/// [`Lane::bump`]).
const CRAFTED_BUCKETS: u32 = 2;

/// How [`band_layer`] cuts a layer and when it gives up.
#[derive(Clone, Copy, Debug)]
pub(crate) struct BandLimits {
    /// The fewest buckets a layer is cut into segments from (builds:
    /// [`MIN_SEGMENT_BUCKETS`](crate::bumped_layout::MIN_SEGMENT_BUCKETS)).
    pub(crate) min_segment_buckets: u64,
    /// The most bumped keys the caller can use (the next layer's cap).
    pub(crate) bumped: usize,
    /// Whether a layer cut into segments bands them side by side
    /// ([`SIDE_BY_SIDE`] for builds; tests ask for both schedules), or
    /// one lane after another in bucket order. Both give the same rows,
    /// thresholds and bumped keys.
    pub(crate) side_by_side: bool,
}

/// Whether builds band a layer's segments side by side: on 64-bit
/// targets, where the lanes' chains overlap their loads. On 32-bit ones
/// the lanes go one after another in bucket order, so that one lane's
/// state is in the frame at a time (seven of them took 2 KiB of a
/// Cortex-M4's stack).
pub(crate) const SIDE_BY_SIDE: bool = cfg!(target_pointer_width = "64");

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
        side_by_side,
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
    // Lane `index`'s buckets, in banding order: segment, boundary bucket,
    // segment, ..., segment (with no boundaries, one segment and empty
    // lanes).
    let boundaries = boundary_buckets(buckets, W::BITS, num_buckets, min_segment_buckets);
    let segmented = boundaries.is_some();
    let span = |index: usize| -> (u64, u64) {
        let at = boundaries.unwrap_or([num_buckets; BANDING_SEGMENTS - 1]);
        let boundary = |k: usize| at.get(k).copied().unwrap_or(num_buckets);
        match (index / 2, index % 2) {
            _ if !segmented => (if index == 0 { 0 } else { num_buckets }, num_buckets),
            (0, 0) => (0, boundary(0)),
            (k, 0) => (boundary(k - 1) + 1, boundary(k)),
            (k, _) => (boundary(k), boundary(k) + 1),
        }
    };
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
        let (first, end) = span(index);
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
    // The rows of segment `k` (words): up to the middle of the next
    // boundary bucket (a chain that reaches past is refused).
    let segment_rows = |k: usize| {
        let (first, end) = span(2 * k);
        let end_row = if end == num_buckets {
            num_slots
        } else {
            (row_of(end) + buckets.low_back() as usize).min(num_slots)
        };
        (row_of(first) * stride, end_row * stride)
    };
    if !(segmented && side_by_side && SIDE_BY_SIDE) {
        // One lane at a time, in bucket order: a boundary bucket's high
        // keys (their chains may run into the next segment's rows), then
        // its low keys in its own rows.
        let mut counts = [(0, 0); BANDING_LANES];
        let lanes = if segmented { BANDING_LANES } else { 1 };
        for (index, count) in counts.iter_mut().enumerate().take(lanes) {
            let mut lane = lane(index)?;
            if index % 2 == 1 {
                let lane_rows = rows.get_mut(lane.first_row * stride..).ok_or(())?;
                lane.run(lane_rows)?;
                lane.pause_back = u32::MAX;
            }
            let (from, to) = match index % 2 {
                1 => (
                    lane.first_row * stride,
                    (lane.first_row + buckets.size() as usize).min(num_slots) * stride,
                ),
                _ => segment_rows(index / 2),
            };
            lane.run(rows.get_mut(from..to).ok_or(())?)?;
            *count = (lane.keys.len(), lane.bumped);
            // Past the limit: the layer is lost.
            if bumped_total.get() > limit {
                return Ok(bumped_total.get());
            }
        }
        return gather_bumped(ordered, &counts);
    }
    let (mut s0, mut b1, mut s1, mut b2, mut s2, mut b3, mut s3) = (
        lane(0)?,
        lane(1)?,
        lane(2)?,
        lane(3)?,
        lane(4)?,
        lane(5)?,
        lane(6)?,
    );
    // Boundary buckets' high keys.
    for lane in [&mut b1, &mut b2, &mut b3] {
        let lane_rows = rows.get_mut(lane.first_row * stride..).ok_or(())?;
        lane.run(lane_rows)?;
    }
    // The segments, side by side, each in its own rows.
    let row_spans = core::array::from_fn(segment_rows);
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
    let counts = [s0, b1, s1, b2, s2, b3, s3].map(|lane| (lane.keys.len(), lane.bumped));
    gather_bumped(ordered, &counts)
}

/// Moves each lane's bumped keys (at the front of its keys) down behind
/// those of the lanes before it; `counts` are the lanes' keys and bumped
/// keys, in order. Answers how many there are.
fn gather_bumped<K: LayerKey>(
    ordered: &mut [K],
    counts: &[(usize, usize); BANDING_LANES],
) -> Result<usize, ()> {
    let (mut begin, mut bumped) = (0, 0);
    for &(keys, count) in counts {
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
/// chain is in flight. `pub(super)` with its fields, as it was to the
/// whole module before the split: `src/bump/tests.rs` builds one.
pub(super) struct Lane<'a, W: Coeff, K: LayerKey> {
    pub(super) buckets: Buckets,
    pub(super) expander: &'a Expander,
    /// The first start of the lane's first bucket: the row `advance`'s
    /// `rows` begin at.
    pub(super) first_row: usize,
    /// The lane's first bucket (its `thresholds[0]`).
    pub(super) first_bucket: u64,
    /// The lane's keys: the bumped ones are moved to the front (`bumped`
    /// of them).
    pub(super) keys: &'a mut [K],
    pub(super) thresholds: &'a mut [u16],
    /// The current bucket's keys that went into a row: the row (from the
    /// bucket's first start, `bucket_row` in `rows`) and `back` << 16, in
    /// insertion order; [`kept_entries`] long (a key past that is refused,
    /// [`Lane::settle`]).
    pub(super) kept: &'a mut [u32],
    pub(super) kept_len: usize,
    /// The next key to take.
    pub(super) next: usize,
    pub(super) bumped: usize,
    pub(super) bucket: u64,
    /// Where the current bucket's keys begin in `keys`.
    pub(super) bucket_first: usize,
    pub(super) bucket_row: usize,
    /// The current bucket's threshold ([`Buckets::size`] until it bumps).
    pub(super) threshold: u32,
    /// The key in flight (`keys[next - 1]`) and its `back`.
    pub(super) chain: Option<Chain<W>>,
    pub(super) back: u32,
    /// Keys this far back wait (`take` answers [`Taken::Done`]) until it
    /// is raised: a boundary bucket's low keys.
    pub(super) pause_back: u32,
    /// Keys every lane's buckets bump, shared by the lanes, and the most
    /// the caller can use: past it, each lane stops at its next bump.
    pub(super) bumped_total: &'a core::cell::Cell<usize>,
    pub(super) limit: usize,
    /// Buckets of every lane that contradicted themselves where honest
    /// keys never do (see [`Lane::bump`]).
    pub(super) crafted: &'a core::cell::Cell<u32>,
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
    pub(super) fn settle(
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
