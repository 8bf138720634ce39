//! A layered build: [`build`] (filters) and [`build_values`]
//! (retrieval) band, back-substitute and serialize the layers one after
//! another into the caller's scratch and output, each layer retrying
//! seeds until its bumped keys fit the next layer's cap.

use super::{
    BandLimits, Bounds, LayerKey, SIDE_BY_SIDE, Shape, band_layer, key_set_digest,
    order_for_banding, retry_seed,
};
use crate::band::{AddOutcome, insert};
use crate::bumped_layout::{
    Buckets, BumpedHeader, ENTRY_BYTES, GROUP_BYTES, LAST_LAYER_ATTEMPTS, LAST_LAYER_KEYS,
    LAST_LAYER_RETRIES, LayerEntry, MAX_LAYERS, MIN_SEGMENT_BUCKETS, bumping_blocks,
    encode_thresholds, last_blocks, layer_geometry, listed_exceptions, max_listed, next_cap,
    threshold_groups,
};
use crate::error::Error;
use crate::hash::{Coeff, Expander, FreeRows};
use crate::kernels::SolveKernel;
use crate::layout::{Family, Geometry, HEADER_BYTES, Width};
use crate::word::Rows;

/// Builds a Bumped filter of `hashes` into `out` and answers its length;
/// the caller seals it ([`crate::layout::seal`]: its checksum then runs
/// after this build's frames are gone). `scratch` and `out` need what
/// [`Bounds::new`] says for as many keys;
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
        reserved_layers: bounds.layers,
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
    b.finish(n)
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
    /// Entries the layer table before the data has room for; each
    /// layer's entry is written there as the layer is done (not kept in
    /// the frame: 16 of them took 640 bytes of a Cortex-M4's stack).
    reserved_layers: usize,
    layers: usize,
    /// The next seed to try.
    seed: u32,
    /// The most keys this layer may have bumped on to it.
    cap: u64,
    _word: core::marker::PhantomData<W>,
}

impl<W: Coeff> LayerBuilder<'_, W> {
    // Out of line: inlined, its 64-bit sizing's spills stayed in the
    // frame under the banding (32-bit Arm).
    #[inline(never)]
    fn geometry(&self, blocks: u64) -> Result<Geometry, Error> {
        let s = self.shape;
        layer_geometry(s.width, blocks, s.lower_columns, s.upper_millis)
    }

    /// Bands and solves the next layer of `inputs` (`ordered` is scratch
    /// for as many keys): `Some(k)` when it bumped `k` keys, now at the
    /// front of `ordered`; `None` when it was the last. Inlined into the
    /// build: the last layer's frame (and its back-substitution under it)
    /// is then not under a bumping layer's on small stacks.
    #[inline(always)]
    fn layer<K: LayerKey>(
        &mut self,
        inputs: impl ExactSizeIterator<Item = K> + Clone,
        ordered: &mut [K],
    ) -> Result<Option<usize>, Error> {
        if self.layers >= MAX_LAYERS {
            return Err(Error::TooLarge);
        }
        if inputs.len() as u64 <= LAST_LAYER_KEYS {
            self.last_layer(inputs)?;
            return Ok(None);
        }
        self.bumping_layer(inputs, ordered).map(Some)
    }

    /// A layer of more than [`LAST_LAYER_KEYS`] keys `inputs`, banded with
    /// thresholds until a seed bumps few enough keys: how many it bumped,
    /// now at the front of `ordered`.
    #[inline(never)]
    fn bumping_layer<K: LayerKey>(
        &mut self,
        inputs: impl ExactSizeIterator<Item = K> + Clone,
        ordered: &mut [K],
    ) -> Result<usize, Error> {
        let k = inputs.len();
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
                side_by_side: SIDE_BY_SIDE,
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
            // Past a cap the plan's bounds allow for: the next seed.
            if bumped as u64 <= cap_next && self.keep_layer(&g, this_seed, expander.seed_mix, k)? {
                self.cap = cap_next;
                return Ok(bumped);
            }
        }
        Err(Error::ConstructionFailed)
    }

    /// Encodes the thresholds of the bumping layer `g` just banded (of
    /// `k` keys, with `seed`, whose mix is `seed_mix`), solves it and
    /// records it:
    /// `Ok(false)`, with nothing written, when it lists more exceptions
    /// than the plan's bounds allow for.
    // Out of line: its frame is gone while the next attempt bands (on
    // 32-bit Arm, inlined, it added to `band_layer`'s).
    #[inline(never)]
    fn keep_layer(
        &mut self,
        g: &Geometry,
        seed: u32,
        seed_mix: u64,
        k: usize,
    ) -> Result<bool, Error> {
        let buckets = Buckets::for_width(self.shape.width);
        let num_buckets =
            usize::try_from(buckets.count(g.num_starts())).map_err(|_| Error::TooLarge)?;
        let thresholds = self.thresholds.get(..num_buckets).ok_or(Error::TooLarge)?;
        let listed = listed_exceptions(buckets, thresholds);
        if listed as u64 > max_listed(num_buckets as u64) {
            return Ok(false);
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
        let entry = layer_entry(g, seed, listed, k);
        self.solve_and_record(g, seed_mix, listed_end, entry)?;
        Ok(true)
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
        if self.layers >= self.reserved_layers.min(MAX_LAYERS) {
            return Err(Error::TooLarge);
        }
        let at = HEADER_BYTES + ENTRY_BYTES * self.layers;
        let dest = self
            .out
            .get_mut(at..at + ENTRY_BYTES)
            .ok_or(Error::TooLarge)?;
        dest.copy_from_slice(&entry.encode());
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
    // Out of line: inlined into `layer`, its frame added to the bumping
    // layers' banding on 32-bit Arm.
    #[inline(never)]
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

    /// Closes the gap after the layer table (its entries written, room
    /// for `reserved_layers`), writes the header of `n` keys (its checksum
    /// zero: the caller seals), and answers the length.
    fn finish(self, n: u64) -> Result<usize, Error> {
        let (out, layers) = (self.out, self.layers);
        let reserved = HEADER_BYTES + ENTRY_BYTES * self.reserved_layers;
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
        // The header last: until here a failed build leaves none.
        let dest = out.get_mut(..HEADER_BYTES).ok_or(Error::TooLarge)?;
        dest.copy_from_slice(&header.encode());
        Ok(self.data_at - (reserved - table_end))
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
