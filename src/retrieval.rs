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
//! Serialized form: a 40-byte header laid out as a filter's (magic
//! `RbnR`, version 1, kind code 1 for Standard Ribbon, width in bits,
//! value bits, seed, four zero bytes, key count, blocks, eight zero
//! bytes), then the ICML payload of `value_bits` columns per block. The
//! distinct magic keeps a filter from opening as a retrieval structure and
//! the other way round.

use crate::backend::Backend;
use crate::band::{self, AddOutcome, insert};
use crate::error::Error;
use crate::hash::{Coeff, Expander, FreeRows};
use crate::kernels::{EvalKernels, SolveKernel};
use crate::layout::{Geometry, HEADER_BYTES, Kind, MAX_COLUMNS, MAX_KEYS_U64, Width, column_mask};
use crate::plan::{MAX_KEYS, MAX_SEEDS, standard_blocks};
use crate::probe::Parts;
use crate::word::Rows;

/// The most bits a value may have.
pub const MAX_VALUE_BITS: u32 = MAX_COLUMNS;

/// Magic of a serialized retrieval structure.
const MAGIC: [u8; 4] = *b"RbnR";
/// Its format version.
const VERSION: u8 = 1;

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
}

impl RetrievalPlan {
    /// Plans a structure that maps up to `num_keys` key hashes to values
    /// of `value_bits` bits (1 to [`MAX_VALUE_BITS`]), on Standard Ribbon
    /// of width `width`: its slots get the overhead for which about 19
    /// builds in 20 succeed with the first seed (a failed seed is retried
    /// with the next, up to [`MAX_SEEDS`]).
    ///
    /// [`Error::InvalidValueBits`] outside 1..=64, [`Error::TooManyKeys`]
    /// past [`MAX_KEYS`], [`Error::TooLarge`] where the buffers would not
    /// fit this platform's address space.
    pub fn new(width: Width, num_keys: usize, value_bits: u32) -> Result<RetrievalPlan, Error> {
        if !(1..=MAX_VALUE_BITS).contains(&value_bits) {
            return Err(Error::InvalidValueBits);
        }
        // Always false where usize is narrower than 41 bits.
        #[allow(clippy::absurd_extreme_comparisons)]
        if num_keys > MAX_KEYS {
            return Err(Error::TooManyKeys {
                limit: MAX_KEYS as u64,
                given: num_keys as u64,
            });
        }
        let geometry = geometry_for(width, num_keys, value_bits)?;
        let plan = RetrievalPlan {
            geometry,
            value_bits,
            num_keys,
            seed: 0,
            max_seeds: MAX_SEEDS,
            backend: None,
        };
        // The scratch must fit too.
        scratch_parts(&geometry, num_keys)
            .and_then(|(rows, sort)| rows.checked_add(sort)?.checked_mul(8))
            .filter(|&bytes| bytes <= isize::MAX as usize)
            .ok_or(Error::TooLarge)?;
        Ok(plan)
    }

    /// The same plan with a different first seed (see
    /// [`crate::Plan::with_seed`] for why untrusted keys call for a secret
    /// one).
    pub fn with_seed(self, seed: u32) -> RetrievalPlan {
        RetrievalPlan { seed, ..self }
    }

    /// The same plan trying at most `seeds` seeds (at least 1).
    pub fn with_max_seeds(self, seeds: u32) -> RetrievalPlan {
        RetrievalPlan {
            max_seeds: seeds.max(1),
            ..self
        }
    }

    /// The same plan building and querying with `backend`;
    /// [`Error::BackendUnavailable`] where this CPU or build lacks it.
    pub fn with_backend(self, backend: Backend) -> Result<RetrievalPlan, Error> {
        if !backend.is_available() {
            return Err(Error::BackendUnavailable);
        }
        Ok(RetrievalPlan {
            backend: Some(backend),
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

    /// Slots (rows of the solution; each holds `value_bits` bits).
    pub fn num_slots(&self) -> usize {
        self.geometry.num_slots()
    }

    /// `u64` words of scratch [`RetrievalPlan::build`] needs: the banded
    /// system, and the keys with their values in start order (two words
    /// per planned key) with one counter per start bucket.
    pub fn scratch_words(&self) -> usize {
        scratch_parts(&self.geometry, self.num_keys)
            .and_then(|(rows, sort)| rows.checked_add(sort))
            .unwrap_or(usize::MAX)
    }

    /// Bytes of the serialized structure, header included: what
    /// [`RetrievalPlan::build`] writes.
    pub fn retrieval_bytes(&self) -> usize {
        self.geometry.filter_bytes()
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
    /// dependency among the keys' rows, about 1 build in 20) is retried
    /// with the next seed; [`Error::ConstructionFailed`] after the plan's
    /// seeds. On every error the header bytes are zeroed, so that a
    /// structure built earlier in `out` does not survive as if it were
    /// this one.
    pub fn build<'o>(
        &self,
        hashes: &[u64],
        values: &[u64],
        scratch: &mut [u64],
        out: &'o mut [u8],
    ) -> Result<RetrievalRef<'o>, Error> {
        let len = self.build_in_place(hashes, values, scratch, out)?;
        let out: &'o [u8] = out;
        RetrievalRef::from_bytes(out.get(..len).unwrap_or(&[]))?.with_backend(self.backend())
    }

    /// [`RetrievalPlan::build`] without the view: the structure's length.
    pub(crate) fn build_in_place(
        &self,
        hashes: &[u64],
        values: &[u64],
        scratch: &mut [u64],
        out: &mut [u8],
    ) -> Result<usize, Error> {
        let header = out.len().min(HEADER_BYTES);
        if let Some(header) = out.get_mut(..header) {
            header.fill(0);
        }
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
        let given = scratch.len();
        let (rows, sort) = scratch
            .get_mut(..needed)
            .and_then(|s| s.split_at_mut_checked(scratch_parts(&self.geometry, self.num_keys)?.0))
            .ok_or(Error::ScratchTooSmall { needed, given })?;
        let backend = self.backend();
        let solve =
            SolveKernel::new(backend, self.geometry.width).ok_or(Error::BackendUnavailable)?;
        for attempt in 0..self.max_seeds {
            let seed = self.seed.wrapping_add(attempt);
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
        let mut h = [0u8; HEADER_BYTES];
        h[..4].copy_from_slice(&MAGIC);
        h[4] = VERSION;
        h[5] = Kind::Standard.code() as u8;
        h[6] = self.geometry.width.bits() as u8;
        h[7] = self.value_bits as u8;
        h[8..12].copy_from_slice(&self.seed.to_le_bytes());
        h[16..24].copy_from_slice(&self.num_keys.to_le_bytes());
        h[24..32].copy_from_slice(&(self.geometry.num_blocks as u64).to_le_bytes());
        h
    }

    /// Decodes and checks the header of `bytes` (the whole structure):
    /// every field against the others and the length against the header.
    fn decode(bytes: &[u8]) -> Result<RetrievalHeader, Error> {
        let h: &[u8; HEADER_BYTES] = bytes
            .get(..HEADER_BYTES)
            .and_then(|h| h.try_into().ok())
            .ok_or(Error::Truncated {
                needed: HEADER_BYTES,
                given: bytes.len(),
            })?;
        let u32_at = |i: usize| {
            let mut b = [0u8; 4];
            b.copy_from_slice(&h[i..i + 4]);
            u32::from_le_bytes(b)
        };
        let u64_at = |i: usize| {
            let mut b = [0u8; 8];
            b.copy_from_slice(&h[i..i + 8]);
            u64::from_le_bytes(b)
        };
        if h[..4] != MAGIC {
            return Err(Error::BadMagic);
        }
        if h[4] != VERSION {
            return Err(Error::UnsupportedVersion);
        }
        let width = Width::from_bits(u32::from(h[6])).ok_or(Error::CorruptHeader)?;
        let value_bits = u32::from(h[7]);
        let (num_keys, blocks) = (u64_at(16), u64_at(24));
        // What no plan makes, refused before any conversion to usize so
        // that every target answers alike: another kind, values of no bits
        // or more than 64, reserved bytes set, too many keys, keys without
        // blocks, more keys than slots. (Blocks without keys are a build
        // of fewer keys than planned, none included.)
        let slots = u128::from(blocks) * u128::from(width.bits());
        if h[5] != Kind::Standard.code() as u8
            || !(1..=MAX_VALUE_BITS).contains(&value_bits)
            || u32_at(12) != 0
            || u64_at(32) != 0
            || num_keys > MAX_KEYS_U64
            || blocks == 0 && num_keys != 0
            || u128::from(num_keys) > slots
        {
            return Err(Error::CorruptHeader);
        }
        let num_blocks = usize::try_from(blocks).map_err(|_| Error::TooLarge)?;
        let columns = if num_blocks == 0 { 0 } else { value_bits };
        let geometry = Geometry::new(Kind::Standard, width, num_blocks, columns, num_blocks)?;
        crate::layout::exact_length(geometry.filter_bytes(), bytes.len())?;
        Ok(RetrievalHeader {
            geometry,
            value_bits,
            seed: u32_at(8),
            num_keys,
        })
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

/// What a view decodes from its header: everything but the bytes.
#[derive(Clone, Copy, Debug)]
pub(crate) struct RetrievalState {
    parts: Parts,
    value_bits: u32,
    seed: u32,
    num_keys: u64,
    kernels: EvalKernels<Parts>,
}

impl RetrievalState {
    /// The state of the structure `bytes` (validated here), evaluating
    /// with `backend`.
    pub(crate) fn decode(bytes: &[u8], backend: Backend) -> Result<RetrievalState, Error> {
        let h = RetrievalHeader::decode(bytes)?;
        let g = h.geometry;
        Ok(RetrievalState {
            parts: Parts {
                geometry: g,
                expander: Expander::new(&g, h.seed),
            },
            value_bits: h.value_bits,
            seed: h.seed,
            num_keys: h.num_keys,
            kernels: EvalKernels::for_retrieval(backend, &g).ok_or(Error::BackendUnavailable)?,
        })
    }

    /// The value of `hash` in `bytes` (which this state was decoded from).
    #[inline(always)]
    pub(crate) fn get(&self, bytes: &[u8], hash: u64) -> u64 {
        self.kernels.get(&self.parts, payload(bytes), hash)
    }

    /// Every hash's value into `out` (of the same length).
    pub(crate) fn get_batch(&self, bytes: &[u8], hashes: &[u64], out: &mut [u64]) {
        self.kernels
            .get_batch(&self.parts, payload(bytes), hashes, out);
    }

    /// The same state evaluating with `backend`.
    pub(crate) fn with_backend(self, backend: Backend) -> Result<RetrievalState, Error> {
        let kernels = EvalKernels::for_retrieval(backend, &self.parts.geometry)
            .ok_or(Error::BackendUnavailable)?;
        Ok(RetrievalState { kernels, ..self })
    }

    /// The serialized length.
    #[cfg_attr(not(feature = "alloc"), allow(dead_code))]
    pub(crate) fn len(&self) -> usize {
        self.parts.geometry.filter_bytes()
    }
}

/// The payload of a structure's bytes.
#[inline(always)]
fn payload(bytes: &[u8]) -> &[u8] {
    bytes.get(HEADER_BYTES..).unwrap_or(&[])
}

impl core::fmt::Debug for RetrievalRef<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        let g = &self.state.parts.geometry;
        f.debug_struct("RetrievalRef")
            .field("width", &g.width)
            .field("value_bits", &self.state.value_bits)
            .field("num_keys", &self.state.num_keys)
            .field("num_slots", &g.num_slots())
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
    /// panic; the values themselves are not checksummed.
    pub fn from_bytes(bytes: &'a [u8]) -> Result<RetrievalRef<'a>, Error> {
        let state = RetrievalState::decode(bytes, Backend::current())?;
        Ok(RetrievalRef { bytes, state })
    }

    /// The value of `hash`: the one it was built with for a key of the
    /// set, an arbitrary value below `2^value_bits` for any other hash.
    #[inline]
    pub fn get(&self, hash: u64) -> u64 {
        self.state.get(self.bytes, hash)
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
            state: self.state.with_backend(backend)?,
            ..self
        })
    }

    /// The backend evaluations use.
    pub fn backend(&self) -> Backend {
        self.state.kernels.backend()
    }

    /// Bits per value.
    pub fn value_bits(&self) -> u32 {
        self.state.value_bits
    }

    /// Keys the structure was built from (equal hashes counted each time).
    pub fn num_keys(&self) -> u64 {
        self.state.num_keys
    }

    /// The ribbon width.
    pub fn width(&self) -> Width {
        self.state.parts.geometry.width
    }

    /// Slots of the solution (each holds `value_bits` bits).
    pub fn num_slots(&self) -> usize {
        self.state.parts.geometry.num_slots()
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
