//! `FilterRef`: a zero-copy, validated view over a serialized filter.

use crate::backend::Backend;
use crate::bumped_layout;
use crate::error::Error;
use crate::fp::FpRate;
use crate::hash::Equation;
use crate::key_hash::hash_key;
#[cfg(feature = "capi")]
use crate::layered::Opened;
use crate::layered::ViewState;
use crate::layout::{HEADER_BYTES, Header, Kind, Width, exact_length, is_bumped};

/// A borrowed Ribbon filter: the serialized bytes (any alignment) plus the
/// header decoded and validated once.
///
/// It is `Copy` and cheap to pass around. A `FilterRef` can be queried with
/// any hash without reading out of bounds, whatever bytes it was made from.
///
/// ```
/// use ribbon_kernel::{FilterRef, Kind, Plan, Width};
///
/// let hashes: Vec<u64> = (1..=1000u64).map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15)).collect();
/// let plan = Plan::new(Kind::Homogeneous, Width::W64, hashes.len(), 8000)?;
/// let mut scratch = vec![0u64; plan.scratch_words()];
/// let mut bytes = vec![0u8; plan.filter_bytes()];
/// plan.build(&hashes, &mut scratch, &mut bytes)?;
///
/// // Later, maybe after reading `bytes` back from disk:
/// let filter = FilterRef::from_bytes(&bytes)?;
/// assert!(hashes.iter().all(|&h| filter.contains(h)));
/// let mut answers = vec![false; hashes.len()];
/// filter.contains_batch(&hashes, &mut answers)?;
/// assert!(answers.iter().all(|&a| a));
/// # Ok::<(), ribbon_kernel::Error>(())
/// ```
#[derive(Clone, Copy)]
pub struct FilterRef<'a> {
    state: Validated,
    bytes: &'a [u8],
    payload: &'a [u8],
}

impl core::fmt::Debug for FilterRef<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        let g = &self.state.parts.geometry;
        f.debug_struct("FilterRef")
            .field("kind", &self.kind())
            .field("width", &g.width)
            .field("num_keys", &self.state.num_keys)
            .field("num_slots", &self.num_slots())
            .field("lower_columns", &g.lower_columns)
            .field("upper_start_block", &g.upper_start_block)
            .field("seed", &self.state.seed)
            .field("bytes", &self.bytes.len())
            .field("backend", &self.backend())
            .finish()
    }
}

impl<'a> FilterRef<'a> {
    /// Validates `bytes` as a serialized filter and returns a view of it.
    ///
    /// Every header field is checked against the others and against
    /// `bytes.len()`, which must be exactly the filter's length, and the
    /// checksum in the header against every other byte
    /// ([`Error::ChecksumMismatch`]): a flipped bit anywhere, a truncated
    /// or extended filter, or the header of one filter with another's
    /// payload is refused, never answered from.
    /// [`FilterRef::from_bytes_unverified`] skips the checksum for bytes the
    /// caller has verified already.
    /// The view uses [`Backend::current`]: the best backend detected on this
    /// CPU unless one was set with [`Backend::force`].
    pub fn from_bytes(bytes: &'a [u8]) -> Result<FilterRef<'a>, Error> {
        let view = FilterRef::from_bytes_unverified(bytes)?;
        crate::layout::verify(bytes)?;
        Ok(view)
    }

    /// [`FilterRef::from_bytes`] without the checksum: every header field,
    /// a Bumped filter's layer table and thresholds are validated, so that
    /// no query reads outside the bytes or panics, but the bytes are not
    /// hashed. For bytes the caller has verified already (a storage
    /// engine's block checksum, RocksDB-style), where the one pass over
    /// them that [`FilterRef::from_bytes`] makes would be paid twice.
    /// That pass costs about a tenth of a millisecond per megabyte (the
    /// "Opening" table of `docs/performance/` gives the measured rate);
    /// skipping it opens in a time that does not grow with the filter (a
    /// Bumped filter's threshold lists are still read once).
    ///
    /// The risk is the caller's: bytes changed since they were written
    /// (a flipped bit in the seed, a torn write) give wrong answers,
    /// false negatives included, silently.
    pub fn from_bytes_unverified(bytes: &'a [u8]) -> Result<FilterRef<'a>, Error> {
        let backend = Backend::current();
        let state = match checked(bytes)? {
            Checked::Single(header) => Validated::new(&header, backend)?,
            Checked::Layered => Validated::for_bumped(bytes, backend)?,
        };
        Ok(FilterRef::from_validated(state, bytes))
    }

    /// Bytes from a filter's start that always suffice for
    /// [`FilterRef::serialized_len`]: the 48-byte header, and for
    /// [`Kind::Bumped`] its layer table (32 bytes per layer, at most 16
    /// layers). A reader that streams filters from disk can read this
    /// many (or the rest of the block, if less), ask for the length, and
    /// then read the rest. C: `RIBBON_SIZE_PREFIX_BYTES`.
    pub const SIZE_PREFIX_BYTES: usize =
        HEADER_BYTES + bumped_layout::MAX_LAYERS * bumped_layout::ENTRY_BYTES;

    /// The exact length of the serialized filter that starts `bytes`, read
    /// from its header (validated as [`FilterRef::from_bytes`] does, but for
    /// the length; a Bumped filter's thresholds are checked when it opens).
    /// For filters stored back to back or in a larger block.
    /// `bytes` needs the 48-byte header and, for [`Kind::Bumped`], the
    /// layer table after it (else [`Error::Truncated`]);
    /// [`FilterRef::SIZE_PREFIX_BYTES`] always suffice.
    ///
    /// ```
    /// use ribbon_kernel::{Filter, FilterRef, Kind, Plan, Width};
    ///
    /// let plan = Plan::new(Kind::Homogeneous, Width::W64, 3, 8_000)?;
    /// let mut block = Filter::build(&plan, &[1, 2, 3])?.as_bytes().to_vec();
    /// let len = block.len();
    /// block.extend_from_slice(b"the next record");
    /// assert_eq!(FilterRef::serialized_len(&block)?, len);
    /// let (filter, rest) = FilterRef::from_prefix(&block)?;
    /// assert!(filter.contains(2));
    /// assert_eq!(rest, b"the next record");
    /// # Ok::<(), ribbon_kernel::Error>(())
    /// ```
    pub fn serialized_len(bytes: &[u8]) -> Result<usize, Error> {
        if is_bumped(bytes) {
            return bumped_layout::serialized_len(bytes);
        }
        Ok(Header::decode_prefix(bytes)?.geometry.filter_bytes())
    }

    /// Validates the serialized filter at the start of `bytes` and returns
    /// it with the bytes that follow it.
    pub fn from_prefix(bytes: &'a [u8]) -> Result<(FilterRef<'a>, &'a [u8]), Error> {
        let len = FilterRef::serialized_len(bytes)?;
        if bytes.len() < len {
            return Err(Error::Truncated {
                needed: len,
                given: bytes.len(),
            });
        }
        let (filter, rest) = bytes.split_at(len);
        Ok((FilterRef::from_bytes(filter)?, rest))
    }

    /// Whether `hash` may be in the set: always `true` for a key the filter
    /// was built from, `true` with the filter's FP rate otherwise.
    // Compiled in this crate where debug assertions are on (see
    // `owned::contains_in`), inlined into the caller in release builds.
    #[cfg_attr(not(debug_assertions), inline)]
    pub fn contains(&self, hash: u64) -> bool {
        self.state.one(self.bytes, self.payload, hash)
    }

    /// Whether `key` may be in the set: [`FilterRef::contains`] of
    /// [`hash_key`]`(key)`, for filters built from keys hashed with
    /// [`hash_key`] (as `Filter::from_keys` and [`crate::Banding::add_key`]
    /// hash them). `key` is anything that is bytes: `&[u8]`, `&str`,
    /// `&[u8; N]`, `&Vec<u8>`, `&String`.
    ///
    /// ```
    /// use ribbon_kernel::{FilterRef, Kind, Plan, Width, hash_keys};
    ///
    /// let keys = ["apple", "banana", "cherry"];
    /// let mut hashes = [0u64; 3];
    /// hash_keys(&keys, &mut hashes)?; // no allocator needed
    /// let plan = Plan::new(Kind::Homogeneous, Width::W64, keys.len(), 10_000)?;
    /// let (mut scratch, mut out) = (vec![0u64; plan.scratch_words()], vec![0u8; plan.filter_bytes()]);
    /// let filter: FilterRef<'_> = plan.build(&hashes, &mut scratch, &mut out)?;
    /// assert!(keys.iter().all(|k| filter.contains_key(k)));
    /// assert!(filter.contains_key(b"banana"));
    /// # Ok::<(), ribbon_kernel::Error>(())
    /// ```
    #[inline]
    pub fn contains_key<K: AsRef<[u8]> + ?Sized>(&self, key: &K) -> bool {
        self.contains(hash_key(key.as_ref()))
    }

    /// Queries every hash, writing one answer per hash into `out`, which must
    /// have the same length as `hashes`.
    pub fn contains_batch(&self, hashes: &[u64], out: &mut [bool]) -> Result<(), Error> {
        if hashes.len() != out.len() {
            return Err(Error::LengthMismatch {
                expected: hashes.len(),
                given: out.len(),
            });
        }
        self.state.batch(self.bytes, self.payload, hashes, out);
        Ok(())
    }

    /// The same view, querying with `backend`; fails if this CPU or build
    /// lacks it.
    pub fn with_backend(self, backend: Backend) -> Result<FilterRef<'a>, Error> {
        Ok(FilterRef {
            state: self.state.with_backend(self.bytes, backend)?,
            ..self
        })
    }

    /// The backend queries use.
    pub fn backend(&self) -> Backend {
        self.state.backend()
    }

    /// The filter's kind.
    pub fn kind(&self) -> Kind {
        match self.state.bumped {
            Some(_) => Kind::Bumped,
            None => self.state.parts.geometry.kind,
        }
    }

    /// The filter's ribbon width.
    pub fn width(&self) -> Width {
        self.state.parts.geometry.width
    }

    /// Number of key hashes the filter was built from (duplicates included).
    pub fn num_keys(&self) -> u64 {
        self.state.num_keys
    }

    /// The number of keys the filter was built from, repeats included: the
    /// same count as [`FilterRef::num_keys`], as a `usize` (saturated on 32-bit
    /// targets, whose headers may state up to 2^40 keys).
    pub fn len(&self) -> usize {
        usize::try_from(self.num_keys()).unwrap_or(usize::MAX)
    }

    /// Whether the filter was built from no keys (it then matches no hash).
    pub fn is_empty(&self) -> bool {
        self.num_keys() == 0
    }

    /// Number of slots `m` (for [`Kind::Bumped`], of all layers).
    pub fn num_slots(&self) -> usize {
        if self.state.bumped.is_some() {
            return self.layers().map(|l| l.geometry.num_slots()).sum();
        }
        self.state.parts.geometry.num_slots()
    }

    /// A Bumped filter's layers (none for the other kinds, or for bytes
    /// that changed since they were validated).
    fn layers(&self) -> impl Iterator<Item = bumped_layout::LayerRef<'a>> {
        let bytes = if self.state.bumped.is_some() {
            self.bytes
        } else {
            &[]
        };
        bumped_layout::layers_of(bytes)
    }

    /// Bumped Ribbon only: the number of layers and, per layer, the keys it
    /// holds or bumped on and its slots (`None` for the other kinds). For
    /// reports; queries never need it.
    pub fn bumped_layers(&self) -> Option<(usize, [(u64, usize); bumped_layout::MAX_LAYERS])> {
        self.state.bumped?;
        let mut out = [(0, 0); bumped_layout::MAX_LAYERS];
        let mut count = 0;
        for (slot, layer) in out.iter_mut().zip(self.layers()) {
            *slot = (layer.num_keys, layer.geometry.num_slots());
            count += 1;
        }
        Some((count, out))
    }

    /// The seed the filter was built with.
    pub fn seed(&self) -> u32 {
        self.state.seed
    }

    /// Serialized length in bytes, header included.
    pub fn filter_bytes(&self) -> usize {
        self.bytes.len()
    }

    /// Payload bits (ICML words, header excluded) per key, times 1000, or 0
    /// for a filter of no keys. For [`Kind::Bumped`] everything after the
    /// header counts: the layer table, the thresholds and the ICML words.
    pub fn millibits_per_key(&self) -> u64 {
        let payload = self.bytes.len().saturating_sub(HEADER_BYTES);
        let bits = payload as u128 * 8 * 1000;
        match u128::from(self.state.num_keys) {
            0 => 0,
            n => (bits / n) as u64,
        }
    }

    /// The false-positive rate the filter's columns give, in parts per
    /// trillion (10^-12), from integer math: exact for the Standard kinds,
    /// a lower bound for Homogeneous Ribbon (whose rate is slightly higher).
    /// 0 for an empty filter, which matches nothing.
    pub fn column_fp_ppt(&self) -> u64 {
        self.state.parts.geometry.column_fp_ppt()
    }

    /// The filter's FP rate as measured from its bytes, in parts per
    /// trillion: [`FilterRef::column_fp_ppt`] for the Standard kinds, whose
    /// rate is exactly the columns'; for Homogeneous Ribbon the column rate
    /// plus the excess measured in the stored solution (stretches where the
    /// ribbon was locally overloaded match more non-members; see
    /// `src/fp.rs`). [`crate::Plan::build`] retries with another seed
    /// when the excess passes [`crate::HOMOGENEOUS_EXCESS_LIMIT_PPM`].
    ///
    /// An unbiased estimate, not a bound; it reads the whole payload, so
    /// call it once per filter (about as long as reading the filter).
    ///
    /// ```
    /// use ribbon_kernel::{Filter, Kind, Plan, Width};
    ///
    /// let hashes: Vec<u64> = (0..10_000u64).map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15)).collect();
    /// let plan = Plan::new(Kind::Homogeneous, Width::W64, hashes.len(), 8000)?;
    /// let filter = Filter::build(&plan, &hashes)?;
    /// let view = filter.view();
    /// // Builds keep it within 1.075 x the column rate (the FP promise is
    /// // 1.10 x; see HOMOGENEOUS_EXCESS_LIMIT_PPM).
    /// assert!(view.estimated_fp_ppt() <= view.column_fp_ppt() / 1000 * 1075);
    /// # Ok::<(), ribbon_kernel::Error>(())
    /// ```
    pub fn estimated_fp_ppt(&self) -> u64 {
        estimated_fp_ppt(
            &self.state.parts.geometry,
            self.state.bumped.is_some(),
            self.payload,
        )
    }

    /// The false-positive rate the filter's columns give, as an
    /// [`FpRate`] (its accessors name their unit): exact for the Standard
    /// kinds and [`Kind::Bumped`], a lower bound for Homogeneous Ribbon
    /// (whose rate is slightly higher: [`FilterRef::estimated_fp_rate`]);
    /// zero for an empty filter, which matches nothing. Unlike
    /// [`FilterRef::column_fp_ppt`], rates below 10^-12 are not rounded
    /// to zero.
    pub fn column_fp_rate(&self) -> FpRate {
        FpRate::from_scaled(self.state.parts.geometry.column_fp_scaled())
    }

    /// The filter's FP rate as measured from its bytes, as an [`FpRate`]:
    /// [`FilterRef::estimated_fp_ppt`] in finer units (it reads the whole
    /// payload too, so call it once per filter).
    ///
    /// ```
    /// use ribbon_kernel::{Filter, FpRate};
    ///
    /// let hashes: Vec<u64> = (0..10_000u64).map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15)).collect();
    /// let filter = Filter::from_hashes(&hashes, 100)?;
    /// let rate = filter.view().estimated_fp_rate();
    /// assert!(rate <= FpRate::from_one_in(100));
    /// println!("{rate} ({} ppm)", rate.parts_per_million()); // "1 in 1xx (...)"
    /// # Ok::<(), ribbon_kernel::Error>(())
    /// ```
    pub fn estimated_fp_rate(&self) -> FpRate {
        if self.state.bumped.is_some() {
            return self.column_fp_rate();
        }
        let scaled = crate::fp::estimated_fp_scaled(&self.state.parts.geometry, self.payload);
        FpRate::from_scaled(scaled)
    }

    /// The equation `hash` contributes to this filter's system (for
    /// [`Kind::Bumped`], to the first layer's).
    pub fn equation(&self, hash: u64) -> Equation {
        let p = &self.state.parts;
        p.expander.equation(&p.geometry, hash)
    }

    /// The serialized bytes this view covers.
    pub fn as_bytes(&self) -> &'a [u8] {
        self.bytes
    }

    /// The decoded state, to rebuild a view over the same bytes cheaply.
    #[cfg_attr(not(feature = "alloc"), allow(dead_code))]
    pub(crate) fn validated(&self) -> Validated {
        self.state
    }

    /// A view over `bytes`, which `state` was decoded from.
    pub(crate) fn from_validated(state: Validated, bytes: &'a [u8]) -> FilterRef<'a> {
        FilterRef {
            state,
            bytes,
            payload: state.payload(bytes),
        }
    }
}

impl AsRef<[u8]> for FilterRef<'_> {
    /// The serialized bytes, so that a view can be written out as it is:
    /// `std::fs::write(path, view)`.
    fn as_ref(&self) -> &[u8] {
        self.bytes
    }
}

impl<'a> TryFrom<&'a [u8]> for FilterRef<'a> {
    type Error = Error;

    /// [`FilterRef::from_bytes`].
    fn try_from(bytes: &'a [u8]) -> Result<FilterRef<'a>, Error> {
        FilterRef::from_bytes(bytes)
    }
}

/// [`FilterRef::estimated_fp_ppt`] of a filter whose (first) layer has
/// geometry `g` and payload `payload`; `layered` for Bumped layers.
pub(crate) fn estimated_fp_ppt(g: &crate::layout::Geometry, layered: bool, payload: &[u8]) -> u64 {
    if layered {
        // Every layer is Standard Ribbon.
        return g.column_fp_ppt();
    }
    crate::fp::estimated_fp_ppt(g, payload)
}

/// A filter's bytes once [`checked`]: one layer, with its header, or
/// Bumped layers.
enum Checked {
    Single(Header),
    Layered,
}

/// The checks of [`FilterRef::from_bytes_unverified`], before anything is
/// decoded for queries.
fn checked(bytes: &[u8]) -> Result<Checked, Error> {
    if is_bumped(bytes) {
        // The length from the header and table first, with the errors
        // `serialized_len` gives; then every layer's data and lists.
        exact_length(bumped_layout::serialized_len(bytes)?, bytes.len())?;
        bumped_layout::validate_prefix(bytes)?;
        return Ok(Checked::Layered);
    }
    Ok(Checked::Single(Header::decode(bytes)?))
}

/// What a C view keeps of the filter `bytes`, checked as
/// [`FilterRef::from_bytes_unverified`] checks them (and with the
/// checksum when `verify`) for `backend`'s kernels.
#[cfg(feature = "capi")]
#[inline(always)]
pub(crate) fn opened(bytes: &[u8], verify: bool, backend: Backend) -> Result<Opened, Error> {
    let checked = checked(bytes)?;
    // The checksum before the decoding, which then writes its state
    // straight into the caller's result (on a Cortex-M4 a copy of it in
    // the open's frame took the open over 1 KiB of stack). The same
    // errors as the Rust view's: once the bytes are checked, the
    // decoding fails only for a backend without kernels, and the C ABI
    // opens with the current one, which has them.
    if verify {
        crate::layout::verify(bytes)?;
    }
    match checked {
        Checked::Single(h) => Opened::single::<bool>(h.geometry, h.seed, h.num_keys, 0, backend),
        Checked::Layered => Opened::layered::<bool>(bytes, 0, backend),
    }
}

/// A `FilterRef` without its borrow, for the owning `Filter` and the C ABI:
/// the decoded header and the kernels resolved for it, a view state that
/// answers `bool` ([`ViewState`], which retrieval shares).
pub(crate) type Validated = ViewState<bool>;

impl ViewState<bool> {
    /// The state of a view of a filter with header `header` (validated),
    /// querying with `backend`; fails if this CPU or build lacks it.
    pub(crate) fn new(header: &Header, backend: Backend) -> Result<Validated, Error> {
        let (g, seed) = (header.geometry, header.seed);
        Validated::single(g, seed, header.num_keys, 0, backend)
    }

    /// The state of a view of the Bumped filter `bytes` (validated),
    /// querying with `backend`.
    pub(crate) fn for_bumped(bytes: &[u8], backend: Backend) -> Result<Validated, Error> {
        Validated::layered(bytes, 0, backend)
    }

    /// The serialized length of the filter this state was decoded from.
    #[cfg_attr(not(feature = "alloc"), allow(dead_code))]
    pub(crate) fn filter_bytes(&self) -> usize {
        self.len()
    }
}
