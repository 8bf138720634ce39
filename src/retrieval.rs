//! Retrieval: static functions from key hashes to `value_bits`-bit values
//! (1 to 64 bits), stored in about `value_bits` bits per key.
//!
//! A Ribbon filter is the retrieval structure whose values are
//! fingerprints: each key's equation `coeff · Z[start..start + w] = b`
//! gets the key's value as `b` instead of bits derived from its hash, and
//! a query returns the columns' parities instead of comparing them. The
//! banding, back-substitution and ICML layout are the filters'; the
//! evaluation is the filter kernels' without the comparison
//! (`kernels::EvalKernels`).
//!
//! Large sets are built on Bumped Ribbon (`src/bump.rs`): each key
//! carries its value through the layers' sorts and bumps, and a query
//! evaluates the layer its key stayed in (the filter's layered query,
//! `filter::BumpedTop`, with evaluation kernels). Small sets, where the
//! Bumped layers' slack would cost more, use one Standard Ribbon.
//!
//! Serialized form: a 48-byte header laid out as a filter's (magic
//! `RbnR`, version 2, kind code, width in bits, value bits, seed, and the
//! checksum in its last 8 bytes). Kind
//! code 1, Standard Ribbon: four zero bytes, key count, blocks, eight zero
//! bytes, then the ICML payload of `value_bits` columns per block. Kind
//! code 3, Bumped Ribbon: the Bumped filters' layer table and layers
//! (`src/bumped_layout.rs`), every block with `value_bits` columns. The
//! distinct magic keeps a filter from opening as a retrieval structure and
//! the other way round.

use crate::backend::Backend;
use crate::band::{self, AddOutcome, insert};
use crate::bump::{self, Bounds, Shape};
use crate::bumped_layout::{self, LAST_LAYER_KEYS};
use crate::error::Error;
use crate::hash::{Coeff, Expander, FreeRows};
use crate::kernels::SolveKernel;
use crate::layered::ViewState;
use crate::layout::{
    self, Family, Geometry, HEADER_BYTES, Kind, MAX_COLUMNS, RawHeader, Width, column_mask,
    is_bumped_of,
};
use crate::plan::MAX_SEEDS;
use crate::sizing::{check_keys, standard_blocks};
use crate::word::Rows;

/// The most bits a value may have.
pub const MAX_VALUE_BITS: u32 = MAX_COLUMNS;

/// A sized retrieval structure: slots and value columns for a number of
/// keys. `Copy`; allocation-free; integer math only.
///
/// ```
/// use ribbon_kernel::{RetrievalPlan, Width};
///
/// let hashes: Vec<u64> = (0..1000u64).map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ 3).collect();
/// let values: Vec<u64> = (0..1000u64).map(|i| i % 100).collect();
/// let plan = RetrievalPlan::new(Width::W128, hashes.len(), 7)?;
/// let mut scratch = vec![0u64; plan.scratch_words()];
/// let mut out = vec![0u8; plan.retrieval_bytes()];
/// let map = plan.build(&hashes, &values, &mut scratch, &mut out)?;
/// assert_eq!(map.get(hashes[42]), 42);
/// let mut got = vec![0u64; hashes.len()];
/// map.get_batch(&hashes, &mut got)?;
/// assert_eq!(got, values);
/// # Ok::<(), ribbon_kernel::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct RetrievalPlan {
    geometry: Geometry,
    value_bits: u32,
    num_keys: usize,
    seed: u32,
    max_seeds: u32,
    /// Backend for back-substitution and the returned view; `None` means
    /// [`Backend::current`].
    backend: Option<Backend>,
    /// The Bumped layers' bounds, for a plan on Bumped Ribbon.
    bumped: Option<Bounds>,
}

impl RetrievalPlan {
    /// Plans a structure that maps up to `num_keys` key hashes to values
    /// of `value_bits` bits (1 to [`MAX_VALUE_BITS`]), with ribbons of
    /// width `width`, on the kind that writes fewer bytes for that many
    /// keys ([`RetrievalPlan::with_kind`] picks one): Bumped Ribbon from
    /// 10,000 keys at w = 64 and 30,000 at w = 128 (0.1-0.4 % over
    /// `value_bits` bits per key at w = 128 and 10^6 keys), Standard
    /// Ribbon below (its slots get the
    /// overhead for which about 19 builds in 20 succeed with the first
    /// seed; a failed seed is retried with the next, up to
    /// [`MAX_SEEDS`]).
    ///
    /// [`Error::InvalidValueBits`] outside 1..=64, [`Error::TooManyKeys`]
    /// past [`MAX_KEYS`](crate::MAX_KEYS), [`Error::TooLarge`] where the buffers would not
    /// fit this platform's address space.
    pub fn new(width: Width, num_keys: usize, value_bits: u32) -> Result<RetrievalPlan, Error> {
        if !(1..=MAX_VALUE_BITS).contains(&value_bits) {
            return Err(Error::InvalidValueBits);
        }
        check_keys(num_keys)?;
        let geometry = geometry_for(width, num_keys, value_bits)?;
        let plan = RetrievalPlan {
            geometry,
            value_bits,
            num_keys,
            seed: 0,
            max_seeds: MAX_SEEDS,
            backend: None,
            bumped: None,
        };
        // The scratch must fit too.
        scratch_parts(&geometry, num_keys)
            .and_then(|(rows, sort)| rows.checked_add(sort)?.checked_mul(8))
            .filter(|&bytes| bytes <= isize::MAX as usize)
            .ok_or(Error::TooLarge)?;
        if num_keys < bumped_from(width) {
            return Ok(plan);
        }
        plan.with_kind(Kind::Bumped)
    }

    /// The same plan on `kind`: [`Kind::Standard`] or [`Kind::Bumped`]
    /// ([`Error::Unsupported`] for the others, which have no right sides
    /// to carry values).
    pub fn with_kind(self, kind: Kind) -> Result<RetrievalPlan, Error> {
        let bumped = match kind {
            Kind::Standard => None,
            Kind::Bumped => Some(Bounds::new(&self.shape(), self.num_keys as u64)?),
            Kind::Homogeneous | Kind::StandardSmash => return Err(Error::Unsupported),
        };
        Ok(RetrievalPlan { bumped, ..self })
    }

    /// The kind the structure is built on.
    pub fn kind(&self) -> Kind {
        match self.bumped {
            Some(_) => Kind::Bumped,
            None => Kind::Standard,
        }
    }

    /// The Bumped layers' shape: every block with `value_bits` columns.
    fn shape(&self) -> Shape {
        Shape {
            width: self.geometry.width,
            lower_columns: self.value_bits,
            upper_millis: 0,
            seed: self.seed,
            retries: Shape::retries_for(self.max_seeds),
            family: Family::Retrieval,
        }
    }

    /// The same plan with a different first seed (see
    /// [`crate::Plan::with_seed`] for why untrusted keys call for a secret
    /// one).
    pub fn with_seed(self, seed: u32) -> RetrievalPlan {
        RetrievalPlan { seed, ..self }
    }

    /// The first seed builds try (0 unless set with
    /// [`RetrievalPlan::with_seed`]).
    pub fn seed(&self) -> u32 {
        self.seed
    }

    /// The same plan trying at most `seeds` seeds (at least 1): on
    /// Standard Ribbon the plan's seed, then seeds from a digest of the
    /// keys and values; on Bumped layers at most 16 per layer, chosen alike
    /// (see [`crate::Plan::with_max_seeds`]). With the default
    /// ([`crate::MAX_SEEDS`]), a build fails only for a hash given two
    /// values ([`Error::ConflictingValues`]), or for hashes crafted against
    /// seeds that depend on the keys themselves (SECURITY.md).
    pub fn with_max_seeds(self, seeds: u32) -> RetrievalPlan {
        RetrievalPlan {
            max_seeds: seeds.max(1),
            ..self
        }
    }

    /// The same plan building and querying with `backend`;
    /// [`Error::BackendUnavailable`] where this CPU or build lacks it.
    pub fn with_backend(self, backend: Backend) -> Result<RetrievalPlan, Error> {
        Ok(RetrievalPlan {
            backend: Some(backend.available()?),
            ..self
        })
    }

    /// The backend builds use.
    pub fn backend(&self) -> Backend {
        self.backend.unwrap_or_else(Backend::current)
    }

    /// Bits per value.
    pub fn value_bits(&self) -> u32 {
        self.value_bits
    }

    /// The ribbon width.
    pub fn width(&self) -> Width {
        self.geometry.width
    }

    /// Keys the plan was sized for: the most a build accepts.
    pub fn num_keys(&self) -> usize {
        self.num_keys
    }

    /// Slots (rows of the solution; each holds `value_bits` bits) of a
    /// Standard plan; 0 for a Bumped one (whose layers are sized as its
    /// keys bump: [`RetrievalRef::num_slots`] tells).
    pub fn num_slots(&self) -> usize {
        match self.bumped {
            Some(_) => 0,
            None => self.geometry.num_slots(),
        }
    }

    /// `u64` words of scratch [`RetrievalPlan::build`] needs: the banded
    /// system, and the keys with their values in start order (two words
    /// per planned key) with one counter per start bucket; for Bumped
    /// layers, also the keys the first layer bumps.
    pub fn scratch_words(&self) -> usize {
        if let Some(bounds) = self.bumped {
            return bounds.scratch_words().unwrap_or(usize::MAX);
        }
        scratch_parts(&self.geometry, self.num_keys)
            .and_then(|(rows, sort)| rows.checked_add(sort))
            .unwrap_or(usize::MAX)
    }

    /// Bytes of the serialized structure, header included: the most
    /// [`RetrievalPlan::build`] writes (for Bumped layers, builds write
    /// what their keys need, within about 0.5 % of this).
    pub fn retrieval_bytes(&self) -> usize {
        match self.bumped {
            Some(bounds) => bounds.filter_bytes,
            None => self.geometry.filter_bytes(),
        }
    }

    /// Builds the structure that maps `hashes[i]` to `values[i]` into
    /// `out` (at least [`RetrievalPlan::retrieval_bytes`] long; only that
    /// many bytes are written) using `scratch` (at least
    /// [`RetrievalPlan::scratch_words`] words), and returns a view of it.
    ///
    /// Equal hashes with equal values are one key; equal hashes with
    /// different values are [`Error::ConflictingValues`]. A value with
    /// bits at or above `value_bits` is [`Error::ValueTooWide`] (nothing
    /// is cut off silently). More hashes than planned are
    /// [`Error::TooManyKeys`]; `values` shorter or longer than `hashes`,
    /// [`Error::LengthMismatch`]. An inconsistent system (a linear
    /// dependency among the keys' rows, about 1 Standard build in 20) is
    /// retried with a seed from a digest of the keys and values (Bumped
    /// layers alike, per layer); [`Error::ConstructionFailed`] only after
    /// the plan's seeds all fail, which takes hashes crafted against those
    /// digest seeds (see [`RetrievalPlan::with_max_seeds`]). On every error
    /// the header bytes are zeroed, so that a structure built earlier in
    /// `out` does not survive as if it were this one.
    pub fn build<'o>(
        &self,
        hashes: &[u64],
        values: &[u64],
        scratch: &mut [u64],
        out: &'o mut [u8],
    ) -> Result<RetrievalRef<'o>, Error> {
        let len = self.build_in_place(hashes, values, scratch, out)?;
        let out: &'o [u8] = out;
        // Sealed just now: its checksum need not be computed again.
        RetrievalRef::from_bytes_unverified(out.get(..len).unwrap_or(&[]))?
            .with_backend(self.backend())
    }

    /// [`RetrievalPlan::build`] without the view: the structure's length.
    pub(crate) fn build_in_place(
        &self,
        hashes: &[u64],
        values: &[u64],
        scratch: &mut [u64],
        out: &mut [u8],
    ) -> Result<usize, Error> {
        let len = self.build_unsealed(hashes, values, scratch, out)?;
        // Sealed once, after the build's frames are gone (the checksum's
        // is deep on small stacks).
        layout::seal(out.get_mut(..len).ok_or(Error::TooLarge)?);
        Ok(len)
    }

    /// [`RetrievalPlan::build_in_place`] without the seal (the header's
    /// checksum field zero).
    #[inline(never)]
    fn build_unsealed(
        &self,
        hashes: &[u64],
        values: &[u64],
        scratch: &mut [u64],
        out: &mut [u8],
    ) -> Result<usize, Error> {
        layout::clear_header(out);
        if values.len() != hashes.len() {
            return Err(Error::LengthMismatch {
                expected: hashes.len(),
                given: values.len(),
            });
        }
        if hashes.len() > self.num_keys {
            return Err(Error::TooManyKeys {
                limit: self.num_keys as u64,
                given: hashes.len() as u64,
            });
        }
        let wide = !column_mask(self.value_bits);
        if let Some(index) = values.iter().position(|&v| v & wide != 0) {
            return Err(Error::ValueTooWide { index });
        }
        let len = self.retrieval_bytes();
        let out_given = out.len();
        let out_too_small = Error::OutputTooSmall {
            needed: len,
            given: out_given,
        };
        let out = out.get_mut(..len).ok_or(out_too_small)?;
        let needed = self.scratch_words();
        let short = Error::ScratchTooSmall {
            needed,
            given: scratch.len(),
        };
        let scratch = scratch.get_mut(..needed).ok_or(short)?;
        let backend = self.backend();
        let solve =
            SolveKernel::new(backend, self.geometry.width).ok_or(Error::BackendUnavailable)?;
        if self.bumped.is_some() {
            return match bump::build_values(&self.shape(), hashes, values, &solve, scratch, out) {
                Err(Error::ConstructionFailed) if has_conflict(hashes, values, scratch) => {
                    Err(Error::ConflictingValues)
                }
                result => result,
            };
        }
        // Standard Ribbon: the banded rows, then the sort's part.
        let (rows, sort) = scratch_parts(&self.geometry, self.num_keys)
            .and_then(|(rows, _)| scratch.split_at_mut_checked(rows))
            .ok_or(short)?;
        // The plan's seed first, then seeds from a digest of the keys and
        // values: hashes crafted to contradict each other under the plan's
        // seed (or the ones after it) do not under these.
        let mut digest = None;
        for attempt in 0..self.max_seeds {
            let seed = match attempt {
                0 => self.seed,
                _ => {
                    let keys = hashes.iter().zip(values).map(|(&h, &v)| [h, v]);
                    let salt = u64::from(self.seed) << 32 | u64::from(u32::MAX);
                    let d = *digest.get_or_insert_with(|| bump::key_set_digest(keys, salt));
                    bump::retry_seed(d, u64::from(attempt))
                }
            };
            let banded = match self.geometry.width {
                Width::W64 => band_values::<u64>(&self.geometry, seed, hashes, values, rows, sort),
                Width::W128 => {
                    band_values::<u128>(&self.geometry, seed, hashes, values, rows, sort)
                }
            };
            match banded {
                Ok(()) => {
                    let (head, payload) = out
                        .split_at_mut_checked(HEADER_BYTES)
                        .ok_or(out_too_small)?;
                    solve.run(
                        &self.geometry,
                        FreeRows::Pseudorandom(crate::hash::seed_mix(seed)),
                        Rows::new_for(self.geometry.width, rows, true),
                        payload,
                    );
                    let h = RetrievalHeader {
                        geometry: self.geometry,
                        value_bits: self.value_bits,
                        seed,
                        num_keys: hashes.len() as u64,
                    };
                    head.copy_from_slice(&h.encode());
                    return Ok(len);
                }
                Err((x, value)) => {
                    if conflicts(hashes, values, seed, x, value) {
                        return Err(Error::ConflictingValues);
                    }
                }
            }
        }
        Err(Error::ConstructionFailed)
    }
}

/// Keys from which a plan takes Bumped layers: where they write fewer
/// bytes than Standard Ribbon (measured over 1, 8 and 64 value bits:
/// from about 6,000-10,000 keys at w = 64 and 20,000-30,000 at w = 128,
/// whose Standard Ribbon needs less slack). Below, the Bumped layers'
/// last one, sized for up to [`LAST_LAYER_KEYS`] keys with slack for
/// retries, and their thresholds cost more than Standard's overhead.
const fn bumped_from(width: Width) -> usize {
    const { assert!(LAST_LAYER_KEYS < 10_000) };
    match width {
        Width::W64 => 10_000,
        Width::W128 => 30_000,
    }
}

/// The geometry for `num_keys` values of `value_bits` bits: Standard
/// Ribbon's slots for that many keys, every block with `value_bits`
/// columns (none for no keys).
fn geometry_for(width: Width, num_keys: usize, value_bits: u32) -> Result<Geometry, Error> {
    if num_keys == 0 {
        return Geometry::new(Kind::Standard, width, 0, 0, 0);
    }
    let blocks = standard_blocks(width, num_keys, value_bits);
    Geometry::new(Kind::Standard, width, blocks, value_bits, blocks)
}

/// Scratch words of a build: the banded system's rows, and the sort's
/// part (each key's remixed hash and value in start order, and the
/// counters of the start buckets).
fn scratch_parts(g: &Geometry, num_keys: usize) -> Option<(usize, usize)> {
    let rows = band::scratch_words(g)?;
    let sort = num_keys
        .checked_mul(2)?
        .checked_add(1 << band::bucket_bits(g))?;
    Some((rows, sort))
}

/// Bands every key with its value as the equation's right side, in start
/// order (the rows touched then move through memory in order; the
/// solution does not depend on the order); `Err((x, value))` for the
/// first key (remixed hash `x`) that contradicts the keys before it.
fn band_values<W: Coeff>(
    g: &Geometry,
    seed: u32,
    hashes: &[u64],
    values: &[u64],
    rows: &mut [u64],
    sort: &mut [u64],
) -> Result<(), (u64, u64)> {
    rows.fill(0);
    if g.num_blocks == 0 {
        return Ok(());
    }
    let expander = Expander::new(g, seed);
    let n = hashes.len();
    let bits = band::bucket_bits(g);
    let (ordered, rest) = sort.split_at_mut(n.min(sort.len()));
    let (ordered_values, counts) = rest.split_at_mut(n.min(rest.len()));
    band::sort_pairs_by_start(
        hashes,
        values,
        expander.seed_mix,
        bits,
        counts,
        ordered,
        ordered_values,
    );
    for (&x, &value) in ordered.iter().zip(ordered_values.iter()) {
        // The hash's own result bits are not used: the value is the
        // right side.
        let (start, c, _) = expander.expand_remixed::<W>(x);
        match insert::<W, true>(rows, start as usize, c, value) {
            AddOutcome::Inserted | AddOutcome::Redundant => {}
            AddOutcome::Inconsistent | AddOutcome::Full => return Err((x, value)),
        }
    }
    Ok(())
}

/// Whether a key whose hash remixes to `x` under `seed` is given with
/// another value than `value`. The second of two such keys to be banded
/// is an inconsistency whatever the order (its row reduces to the
/// first's, its right side to the two values' xor), and the first one
/// ends a build, so checking the key that failed finds every conflict
/// that makes a build fail.
fn conflicts(hashes: &[u64], values: &[u64], seed: u32, x: u64, value: u64) -> bool {
    let seed_mix = crate::hash::seed_mix(seed);
    hashes
        .iter()
        .zip(values)
        .any(|(&h, &v)| v != value && crate::hash::remix(h, seed_mix) == x)
}

/// Whether some hash comes with two values: the pairs sorted in
/// `scratch` (a heapsort: no allocation, and no worse than n log n
/// whatever the hashes), then neighbours compared. For a Bumped build that
/// failed, where a conflict can crowd the layers before the last one
/// (whose own check names it). `scratch` holds at least two words per key
/// (the plans' scratch does); without them, `false`.
fn has_conflict(hashes: &[u64], values: &[u64], scratch: &mut [u64]) -> bool {
    let words = scratch.len() / 2 * 2;
    let Some(Ok(pairs)) = scratch
        .get_mut(..words)
        .map(bytemuck::try_cast_slice_mut::<u64, [u64; 2]>)
    else {
        return false;
    };
    let Some(pairs) = pairs.get_mut(..hashes.len()) else {
        return false;
    };
    for ((pair, &h), &v) in pairs.iter_mut().zip(hashes).zip(values) {
        *pair = [h, v];
    }
    heapsort(pairs);
    pairs
        .windows(2)
        .any(|w| w[0][0] == w[1][0] && w[0][1] != w[1][1])
}

/// Sorts `v` ascending, in place, with checked indexing only (no panic
/// path for the C ABI).
fn heapsort(v: &mut [[u64; 2]]) {
    fn swap(v: &mut [[u64; 2]], a: usize, b: usize) {
        if let (Some(&x), Some(&y)) = (v.get(a), v.get(b)) {
            if let Some(p) = v.get_mut(a) {
                *p = y;
            }
            if let Some(p) = v.get_mut(b) {
                *p = x;
            }
        }
    }
    // Moves `v[root]` down the heap of `v[..end]`.
    fn sift(v: &mut [[u64; 2]], mut root: usize, end: usize) {
        loop {
            let mut child = 2 * root + 1;
            if child >= end {
                return;
            }
            if child + 1 < end && v.get(child) < v.get(child + 1) {
                child += 1;
            }
            if v.get(root) >= v.get(child) {
                return;
            }
            swap(v, root, child);
            root = child;
        }
    }
    let n = v.len();
    for root in (0..n / 2).rev() {
        sift(v, root, n);
    }
    for end in (1..n).rev() {
        swap(v, 0, end);
        sift(v, 0, end);
    }
}

/// The decoded header of a serialized retrieval structure.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct RetrievalHeader {
    geometry: Geometry,
    value_bits: u32,
    seed: u32,
    num_keys: u64,
}

impl RetrievalHeader {
    fn encode(&self) -> [u8; HEADER_BYTES] {
        RawHeader {
            family: Family::Retrieval,
            kind: Kind::Standard,
            width: self.geometry.width,
            lower_columns: self.value_bits,
            seed: self.seed,
            num_keys: self.num_keys,
            blocks_or_layers: self.geometry.num_blocks as u64,
            upper_start_block: 0,
        }
        .encode()
    }

    /// Decodes and checks the header of `bytes` (the whole structure):
    /// every field against the others and the length against the header.
    fn decode(bytes: &[u8]) -> Result<RetrievalHeader, Error> {
        let h = RetrievalHeader::decode_prefix(bytes)?;
        crate::layout::exact_length(h.geometry.filter_bytes(), bytes.len())?;
        Ok(h)
    }

    /// [`RetrievalHeader::decode`] of a structure that starts `bytes`
    /// (which may go on past it): [`RawHeader::decode`]'s checks, then a
    /// retrieval structure's own.
    fn decode_prefix(bytes: &[u8]) -> Result<RetrievalHeader, Error> {
        let raw = RawHeader::decode(bytes, Some(Family::Retrieval))?;
        let (width, value_bits) = (raw.width, raw.lower_columns);
        let (num_keys, blocks) = (raw.num_keys, raw.blocks_or_layers);
        // What no plan makes, refused before any conversion to usize so
        // that every target answers alike: another kind, values of no
        // bits, bytes 32..40 set, keys without blocks, more keys than
        // slots. (Blocks without keys are a build of fewer keys than
        // planned, none included.)
        let slots = u128::from(blocks) * u128::from(width.bits());
        if raw.kind != Kind::Standard
            || !(1..=MAX_VALUE_BITS).contains(&value_bits)
            || raw.upper_start_block != 0
            || blocks == 0 && num_keys != 0
            || u128::from(num_keys) > slots
        {
            return Err(Error::CorruptHeader);
        }
        let num_blocks = usize::try_from(blocks).map_err(|_| Error::TooLarge)?;
        let columns = if num_blocks == 0 { 0 } else { value_bits };
        let geometry = Geometry::new(Kind::Standard, width, num_blocks, columns, num_blocks)?;
        Ok(RetrievalHeader {
            geometry,
            value_bits,
            seed: raw.seed,
            num_keys,
        })
    }
}

/// A retrieval structure's bytes once [`checked`]: one layer, with its
/// header, or Bumped layers of `value_bits`.
enum Checked {
    Single(RetrievalHeader),
    Layered { value_bits: u32 },
}

/// The checks of [`RetrievalState::decode`], before anything is decoded
/// for queries: for Bumped layers, the whole table and every layer's
/// thresholds, the length exact.
fn checked(bytes: &[u8]) -> Result<Checked, Error> {
    if is_bumped_of(Family::Retrieval, bytes) {
        crate::layout::exact_length(bumped_layout::serialized_len(bytes)?, bytes.len())?;
        let (header, _) = bumped_layout::validate_prefix(bytes)?;
        return Ok(Checked::Layered {
            value_bits: header.lower_columns,
        });
    }
    Ok(Checked::Single(RetrievalHeader::decode(bytes)?))
}

/// What a C view keeps of the retrieval structure `bytes`, checked as
/// [`RetrievalRef::from_bytes_unverified`] checks them (and with the
/// checksum when `verify`) for `backend`'s kernels.
#[cfg(feature = "capi")]
#[inline(always)]
pub(crate) fn opened(
    bytes: &[u8],
    verify: bool,
    backend: Backend,
) -> Result<crate::layered::Opened, Error> {
    use crate::layered::Opened;
    let checked = checked(bytes)?;
    // The checksum before the decoding, as for filters
    // ([`crate::filter::opened`] says why).
    if verify {
        crate::layout::verify(bytes)?;
    }
    match checked {
        Checked::Single(h) => {
            Opened::single::<u64>(h.geometry, h.seed, h.num_keys, h.value_bits, backend)
        }
        Checked::Layered { value_bits } => Opened::layered::<u64>(bytes, value_bits, backend),
    }
}

/// A validated, zero-copy view of a serialized retrieval structure: the
/// value of every key it was built from, an arbitrary value of
/// `value_bits` bits for any other hash.
///
/// ```
/// use ribbon_kernel::{RetrievalPlan, RetrievalRef, Width};
///
/// let hashes = [11u64, 22, 33];
/// let values = [1u64, 0, 1];
/// let plan = RetrievalPlan::new(Width::W64, 3, 1)?;
/// let mut scratch = vec![0u64; plan.scratch_words()];
/// let mut bytes = vec![0u8; plan.retrieval_bytes()];
/// plan.build(&hashes, &values, &mut scratch, &mut bytes)?;
/// // Store the bytes; open them again later, at any alignment.
/// let map = RetrievalRef::from_bytes(&bytes)?;
/// assert_eq!(map.get(22), 0);
/// assert_eq!(map.get(33), 1);
/// assert!(RetrievalRef::from_bytes(&bytes[..10]).is_err());
/// # Ok::<(), ribbon_kernel::Error>(())
/// ```
#[derive(Clone, Copy)]
pub struct RetrievalRef<'a> {
    bytes: &'a [u8],
    state: RetrievalState,
}

/// What a view decodes from its header, everything but the bytes: a view
/// state that answers `u64` values ([`ViewState`], which filters share).
pub(crate) type RetrievalState = ViewState<u64>;

impl ViewState<u64> {
    /// The state of the structure `bytes` (validated here), evaluating
    /// with `backend`.
    pub(crate) fn decode(bytes: &[u8], backend: Backend) -> Result<RetrievalState, Error> {
        match checked(bytes)? {
            Checked::Single(h) => {
                RetrievalState::single(h.geometry, h.seed, h.num_keys, h.value_bits, backend)
            }
            Checked::Layered { value_bits } => RetrievalState::layered(bytes, value_bits, backend),
        }
    }

    /// The value of `hash` in `bytes` (which this state was decoded from).
    #[inline(always)]
    pub(crate) fn get(&self, bytes: &[u8], hash: u64) -> u64 {
        self.one(bytes, self.payload(bytes), hash)
    }

    /// Every hash's value into `out` (of the same length).
    pub(crate) fn get_batch(&self, bytes: &[u8], hashes: &[u64], out: &mut [u64]) {
        self.batch(bytes, self.payload(bytes), hashes, out);
    }

    /// The kind of the layers.
    fn kind(&self) -> Kind {
        match self.bumped {
            Some(_) => Kind::Bumped,
            None => Kind::Standard,
        }
    }
}

impl core::fmt::Debug for RetrievalRef<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        let g = &self.state.parts.geometry;
        f.debug_struct("RetrievalRef")
            .field("kind", &self.state.kind())
            .field("width", &g.width)
            .field("value_bits", &self.state.value_bits)
            .field("num_keys", &self.state.num_keys)
            .field("num_slots", &self.num_slots())
            .field("seed", &self.state.seed)
            .field("bytes", &self.bytes.len())
            .field("backend", &self.backend())
            .finish()
    }
}

impl<'a> RetrievalRef<'a> {
    /// Validates `bytes` as a serialized retrieval structure (exactly its
    /// length, at any alignment) and returns a view of it that evaluates
    /// with [`Backend::current`]. Untrusted bytes get an error, never a
    /// panic, and bytes whose checksum does not match them
    /// [`Error::ChecksumMismatch`].
    pub fn from_bytes(bytes: &'a [u8]) -> Result<RetrievalRef<'a>, Error> {
        let view = RetrievalRef::from_bytes_unverified(bytes)?;
        layout::verify(bytes)?;
        Ok(view)
    }

    /// [`RetrievalRef::from_bytes`] without the checksum: every header
    /// field, the layer table and the thresholds are validated (no value
    /// read from the view can be outside the bytes, nor can any call
    /// panic), but the bytes are not hashed. For bytes the caller has
    /// verified already (a storage engine's block checksum), where the
    /// pass over them (see [`crate::FilterRef::from_bytes_unverified`]
    /// for its cost) would be paid twice. The risk is the caller's: bytes
    /// changed since they were written give wrong values, silently.
    pub fn from_bytes_unverified(bytes: &'a [u8]) -> Result<RetrievalRef<'a>, Error> {
        let state = RetrievalState::decode(bytes, Backend::current())?;
        Ok(RetrievalRef { bytes, state })
    }

    /// The exact length of the serialized structure that starts `bytes`,
    /// read from its header (validated as [`RetrievalRef::from_bytes`]
    /// does, but for the length; Bumped layers' thresholds are checked
    /// when it opens): how much a build wrote, or where a structure
    /// stored among other records ends. `bytes` needs the 48-byte header
    /// and, on Bumped layers, the layer table after it (else
    /// [`Error::Truncated`]); [`crate::FilterRef::SIZE_PREFIX_BYTES`]
    /// always suffice.
    ///
    /// ```
    /// use ribbon_kernel::{Kind, RetrievalPlan, RetrievalRef, Width};
    ///
    /// let hashes: Vec<u64> = (0..3000u64).map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15)).collect();
    /// let values: Vec<u64> = (0..3000u64).map(|i| i % 4).collect();
    /// let plan = RetrievalPlan::new(Width::W64, hashes.len(), 2)?.with_kind(Kind::Bumped)?;
    /// let mut scratch = vec![0u64; plan.scratch_words()];
    /// let mut out = vec![0u8; plan.retrieval_bytes()];
    /// plan.build(&hashes, &values, &mut scratch, &mut out)?;
    /// // Bumped layers write at most the planned bytes.
    /// let len = RetrievalRef::serialized_len(&out)?;
    /// assert!(len <= out.len());
    /// assert_eq!(RetrievalRef::from_bytes(&out[..len])?.get(hashes[7]), 3);
    /// # Ok::<(), ribbon_kernel::Error>(())
    /// ```
    pub fn serialized_len(bytes: &[u8]) -> Result<usize, Error> {
        if is_bumped_of(Family::Retrieval, bytes) {
            return bumped_layout::serialized_len(bytes);
        }
        Ok(RetrievalHeader::decode_prefix(bytes)?
            .geometry
            .filter_bytes())
    }

    /// The value of `hash`: the one it was built with for a key of the
    /// set, an arbitrary value below `2^value_bits` for any other hash.
    // Compiled in this crate where debug assertions are on (see
    // `owned::contains_in`), inlined into the caller in release builds.
    #[cfg_attr(not(debug_assertions), inline)]
    pub fn get(&self, hash: u64) -> u64 {
        self.state.get(self.bytes, hash)
    }

    /// The value of `key`: [`RetrievalRef::get`] of
    /// [`crate::hash_key`]`(key)`, for structures built from keys hashed
    /// with it (as `Retrieval::from_keys` hashes them). `key` is anything
    /// that is bytes (`&[u8]`, `&str`, `&[u8; N]`, ...).
    ///
    /// ```
    /// use ribbon_kernel::{RetrievalPlan, RetrievalRef, Width, hash_keys};
    ///
    /// let keys = ["red", "green", "blue"];
    /// let mut hashes = [0u64; 3];
    /// hash_keys(&keys, &mut hashes)?;
    /// let plan = RetrievalPlan::new(Width::W64, 3, 2)?;
    /// let (mut scratch, mut out) = (vec![0u64; plan.scratch_words()], vec![0u8; plan.retrieval_bytes()]);
    /// let map: RetrievalRef<'_> = plan.build(&hashes, &[0, 1, 2], &mut scratch, &mut out)?;
    /// assert_eq!(map.get_key("green"), 1);
    /// assert_eq!(map.get_key(b"blue"), 2);
    /// # Ok::<(), ribbon_kernel::Error>(())
    /// ```
    #[inline]
    pub fn get_key<K: AsRef<[u8]> + ?Sized>(&self, key: &K) -> u64 {
        self.get(crate::key_hash::hash_key(key.as_ref()))
    }

    /// The value of every hash into `out`, which must be as long as
    /// `hashes` ([`Error::LengthMismatch`] otherwise).
    pub fn get_batch(&self, hashes: &[u64], out: &mut [u64]) -> Result<(), Error> {
        if hashes.len() != out.len() {
            return Err(Error::LengthMismatch {
                expected: hashes.len(),
                given: out.len(),
            });
        }
        self.state.get_batch(self.bytes, hashes, out);
        Ok(())
    }

    /// The same view, evaluating with `backend`; fails if this CPU or
    /// build lacks it.
    pub fn with_backend(self, backend: Backend) -> Result<RetrievalRef<'a>, Error> {
        Ok(RetrievalRef {
            state: self.state.with_backend(self.bytes, backend)?,
            ..self
        })
    }

    /// The backend evaluations use.
    pub fn backend(&self) -> Backend {
        self.state.backend()
    }

    /// Bits per value.
    pub fn value_bits(&self) -> u32 {
        self.state.value_bits
    }

    /// Keys the structure was built from (equal hashes counted each time).
    pub fn num_keys(&self) -> u64 {
        self.state.num_keys
    }

    /// The number of keys the structure was built from, repeats included: the
    /// same count as [`RetrievalRef::num_keys`], as a `usize` (saturated on 32-bit
    /// targets, whose headers may state up to 2^40 keys).
    pub fn len(&self) -> usize {
        usize::try_from(self.num_keys()).unwrap_or(usize::MAX)
    }

    /// Whether the structure was built from no keys (every hash then has the value 0).
    pub fn is_empty(&self) -> bool {
        self.num_keys() == 0
    }

    /// The ribbon width.
    pub fn width(&self) -> Width {
        self.state.parts.geometry.width
    }

    /// Slots of the solution (each holds `value_bits` bits), of every
    /// layer.
    pub fn num_slots(&self) -> usize {
        match self.state.bumped {
            Some(_) => bumped_layout::layers_of(self.bytes)
                .map(|l| l.geometry.num_slots())
                .sum(),
            None => self.state.parts.geometry.num_slots(),
        }
    }

    /// The kind the structure is built on: [`Kind::Standard`] or
    /// [`Kind::Bumped`].
    pub fn kind(&self) -> Kind {
        self.state.kind()
    }

    /// The seed the build settled on.
    pub fn seed(&self) -> u32 {
        self.state.seed
    }

    /// The serialized bytes (header included).
    pub fn as_bytes(&self) -> &'a [u8] {
        self.bytes
    }

    /// The serialized length.
    pub fn retrieval_bytes(&self) -> usize {
        self.bytes.len()
    }

    /// The decoded state, for the owning twin.
    #[cfg_attr(not(feature = "alloc"), allow(dead_code))]
    pub(crate) fn state(&self) -> RetrievalState {
        self.state
    }

    /// A view of `bytes` with a state decoded from them before.
    #[cfg_attr(not(feature = "alloc"), allow(dead_code))]
    pub(crate) fn from_state(state: RetrievalState, bytes: &'a [u8]) -> RetrievalRef<'a> {
        RetrievalRef { bytes, state }
    }
}

impl<'a> TryFrom<&'a [u8]> for RetrievalRef<'a> {
    type Error = Error;

    fn try_from(bytes: &'a [u8]) -> Result<RetrievalRef<'a>, Error> {
        RetrievalRef::from_bytes(bytes)
    }
}

impl AsRef<[u8]> for RetrievalRef<'_> {
    fn as_ref(&self) -> &[u8] {
        self.bytes
    }
}
