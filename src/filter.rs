//! `FilterRef`: a zero-copy, validated view over a serialized filter.

use crate::backend::Backend;
use crate::bumped_layout::{self, Buckets, BumpedHeader, BumpedKey, Layers, ThresholdsRef};
use crate::error::Error;
use crate::hash::{Equation, Expander};
use crate::kernels::{self, LayerKernels, QueryKernels, ScanBumpedFn};
use crate::layout::{Geometry, HEADER_BYTES, Header, Kind, Width, exact_length, is_bumped};
use crate::probe::Parts;

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
    /// README gives the measured rate); skipping it opens in a time that
    /// does not grow with the filter (a Bumped filter's threshold lists
    /// are still read once).
    ///
    /// The risk is the caller's: bytes changed since they were written
    /// (a flipped bit in the seed, a torn write) give wrong answers,
    /// false negatives included, silently.
    pub fn from_bytes_unverified(bytes: &'a [u8]) -> Result<FilterRef<'a>, Error> {
        if is_bumped(bytes) {
            // The length from the header and table first, with the errors
            // `serialized_len` gives; then every layer's data and lists.
            exact_length(bumped_layout::serialized_len(bytes)?, bytes.len())?;
            bumped_layout::validate_prefix(bytes)?;
            let state = Validated::for_bumped(bytes, Backend::current())?;
            return Ok(FilterRef::from_validated(state, bytes));
        }
        let header = Header::decode(bytes)?;
        let state = Validated::new(&header, Backend::current())?;
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
    #[inline]
    pub fn contains(&self, hash: u64) -> bool {
        self.state.contains(self.bytes, self.payload, hash)
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
        self.state
            .contains_batch(self.bytes, self.payload, hashes, out);
        Ok(())
    }

    /// The same view, querying with `backend`; fails if this CPU or build
    /// lacks it.
    pub fn with_backend(self, backend: Backend) -> Result<FilterRef<'a>, Error> {
        if self.state.bumped.is_some() {
            // Every layer's kernels.
            let state = Validated::for_bumped(self.bytes, backend)?;
            return Ok(FilterRef { state, ..self });
        }
        let kernels = QueryKernels::for_filter(backend, &self.state.parts.geometry)
            .ok_or(Error::BackendUnavailable)?;
        Ok(FilterRef {
            state: Validated {
                kernels,
                ..self.state
            },
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
        if self.state.bumped.is_some() {
            // Every layer is Standard Ribbon.
            return self.column_fp_ppt();
        }
        crate::fp::estimated_fp_ppt(&self.state.parts.geometry, self.payload)
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
    #[cfg_attr(not(any(feature = "alloc", feature = "capi")), allow(dead_code))]
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

/// A `FilterRef` without its borrow, for the owning `Filter` and the C ABI:
/// the decoded header and the kernels resolved for it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Validated {
    pub(crate) parts: Parts,
    pub(crate) seed: u32,
    pub(crate) num_keys: u64,
    kernels: QueryKernels<Parts>,
    /// A Bumped filter's first layer (`parts` is its geometry and seed)
    /// and what the layers after it need.
    pub(crate) bumped: Option<BumpedTop>,
}

/// Keys a Bumped structure's batch query gathers before the second layer
/// answers them (about 2 KB of stack for them; 128 were no faster).
const BUMPED_BATCH: usize = 64;

/// Keys a Bumped batch query answers from the first layer before it scans
/// their thresholds: 16 KiB of hashes, which the scan finds in L1 or L2.
const SCAN_BLOCK: usize = 2048;

/// Layers after the first whose query state a view keeps (deeper ones are
/// decoded from the bytes when a key reaches them: 1 in 2,000 keys or
/// fewer).
const CACHED_LAYERS: usize = 2;

/// What a view of a Bumped structure keeps besides its first layer's
/// parts and kernels (for a filter, `Validated::parts` and `kernels`):
/// where the first layer's thresholds and payload lie in the bytes (as
/// ranges, so that the state has no borrow), and the next layers' query
/// state. `K` are a layer's kernels: a filter's queries or a retrieval
/// structure's evaluations ([`LayerKernels`]); the layered query is one
/// for both.
#[derive(Clone, Copy, Debug)]
pub(crate) struct BumpedTop<K = QueryKernels<Parts>> {
    num_layers: usize,
    buckets: Buckets,
    first: LayerRanges,
    cached: [Option<CachedLayer<K>>; CACHED_LAYERS],
    /// The backend's scan of the first layer's thresholds for batches.
    scan: ScanBumpedFn,
    backend: Backend,
    /// The serialized length.
    len: usize,
}

/// Where a layer's thresholds and payload lie in the structure's bytes.
#[derive(Clone, Copy, Debug)]
struct LayerRanges {
    groups: (usize, usize),
    listed: (usize, usize),
    payload: (usize, usize),
}

impl LayerRanges {
    fn of(layer: &bumped_layout::LayerRef<'_>) -> LayerRanges {
        let t = &layer.thresholds;
        let groups = (layer.data_at, layer.data_at + t.groups.len());
        let listed = (groups.1, groups.1 + t.listed.len());
        let payload = (listed.1, listed.1 + layer.payload.len());
        LayerRanges {
            groups,
            listed,
            payload,
        }
    }

    /// The layer's thresholds in `bytes`.
    #[inline(always)]
    fn thresholds<'b>(&self, buckets: Buckets, bytes: &'b [u8]) -> ThresholdsRef<'b> {
        // The list follows the groups: one range check for both.
        let both = bytes.get(self.groups.0..self.listed.1).unwrap_or(&[]);
        let (groups, listed) = both
            .split_at_checked(self.groups.1 - self.groups.0)
            .unwrap_or((&[], &[]));
        ThresholdsRef {
            buckets,
            groups,
            listed,
        }
    }
}

/// A later layer's query state.
#[derive(Clone, Copy, Debug)]
struct CachedLayer<K> {
    parts: Parts,
    kernels: K,
    ranges: LayerRanges,
    last: bool,
}

impl<K: LayerKernels> CachedLayer<K> {
    fn new(layer: &bumped_layout::LayerRef<'_>, backend: Backend) -> Result<CachedLayer<K>, Error> {
        let g = layer.geometry;
        Ok(CachedLayer {
            parts: Parts {
                geometry: g,
                expander: Expander::new(&g, layer.seed),
            },
            kernels: K::for_layer(backend, &g).ok_or(Error::BackendUnavailable)?,
            ranges: LayerRanges::of(layer),
            last: layer.last,
        })
    }
}

impl<K: LayerKernels> BumpedTop<K> {
    /// The first layer of the Bumped structure `bytes` (validated) and
    /// what a view keeps of the others, querying with `backend`.
    pub(crate) fn decode(
        bytes: &[u8],
        backend: Backend,
    ) -> Result<(bumped_layout::LayerRef<'_>, BumpedHeader, BumpedTop<K>), Error> {
        let mut layers = Layers::new(bytes)?;
        let header = layers.header();
        let mut keys = header.num_keys;
        let first = layers
            .next_layer(keys, false)
            .ok_or(Error::CorruptHeader)??;
        keys = first.num_keys;
        let mut cached = [None; CACHED_LAYERS];
        for slot in cached.iter_mut() {
            match layers.next_layer(keys, false) {
                Some(layer) => {
                    let layer = layer?;
                    keys = layer.num_keys;
                    *slot = Some(CachedLayer::new(&layer, backend)?);
                }
                None => break,
            }
        }
        let top = BumpedTop {
            scan: kernels::scan_bumped(backend).ok_or(Error::BackendUnavailable)?,
            backend,
            num_layers: header.num_layers,
            buckets: first.thresholds.buckets,
            first: LayerRanges::of(&first),
            cached,
            len: bytes.len(),
        };
        Ok((first, header, top))
    }

    /// The first layer's payload in `bytes`.
    #[inline(always)]
    pub(crate) fn first_payload<'b>(&self, bytes: &'b [u8]) -> &'b [u8] {
        bytes
            .get(self.first.payload.0..self.first.payload.1)
            .unwrap_or(&[])
    }

    /// The serialized length of the structure this was decoded from.
    #[cfg_attr(not(feature = "alloc"), allow(dead_code))]
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// One key's answer: the first layer's (`parts`, `kernels`; `payload`
    /// is [`BumpedTop::first_payload`] of `bytes`) unless the key's bucket
    /// bumped it. Out of line, so that a filter of another kind keeps its
    /// query one predictable branch and one indirect call.
    #[inline(never)]
    pub(crate) fn one(
        &self,
        parts: &Parts,
        kernels: &K,
        bytes: &[u8],
        payload: &[u8],
        hash: u64,
    ) -> K::Answer {
        if self.num_layers > 1 {
            let thresholds = self.first.thresholds(self.buckets, bytes);
            // One branch, taken by about 1 key in 11 at w = 64 (bumped,
            // or its threshold maybe listed): the decoding's other ways
            // are selects.
            if thresholds.maybe_bumped(parts.expander.remix_and_start(hash).1)
                && let Some(answer) = self.bumped_or_listed(parts, bytes, hash)
            {
                return answer;
            }
        }
        kernels.one(parts, payload, hash)
    }

    /// A key of [`BumpedTop::one`] whose first-layer bucket bumped it, or
    /// may list its threshold: its answer from the layers after the first,
    /// or `None` when the first layer answers it after all.
    #[inline(never)]
    fn bumped_or_listed(&self, parts: &Parts, bytes: &[u8], hash: u64) -> Option<K::Answer> {
        let thresholds = self.first.thresholds(self.buckets, bytes);
        let x = bumped_by(parts, &thresholds, hash)?;
        Some(self.deeper(bytes, x))
    }

    /// Every hash's answer into `out`, the first layer's kernels (of
    /// `parts` and `kernels`) first: the keys it bumped (about 1 in 12 at
    /// w = 64) ask the layers after it, gathered [`BUMPED_BATCH`] at a
    /// time so that the next layer's batch kernel answers them too.
    pub(crate) fn batch(
        &self,
        parts: &Parts,
        kernels: &K,
        bytes: &[u8],
        hashes: &[u64],
        out: &mut [K::Answer],
    ) {
        let payload = self.first_payload(bytes);
        if self.num_layers == 1 {
            kernels.batch(parts, payload, hashes, out);
            return;
        }
        // A block at a time, so that the threshold scan reads the hashes
        // while the cache still holds them (a whole batch's hashes, read
        // twice, can come from memory twice).
        for (block, answers) in hashes.chunks(SCAN_BLOCK).zip(out.chunks_mut(SCAN_BLOCK)) {
            kernels.batch(parts, payload, block, answers);
            self.batch_bumped(parts, bytes, block, answers);
        }
    }

    /// The rest of [`BumpedTop::batch`] once the first layer answered.
    #[inline(never)]
    fn batch_bumped(&self, parts: &Parts, bytes: &[u8], hashes: &[u64], out: &mut [K::Answer]) {
        let thresholds = self.first.thresholds(self.buckets, bytes);
        let mut bumped = [BumpedKey::default(); BUMPED_BATCH];
        let unscanned =
            scan_in_pieces(self.scan, parts, &thresholds, hashes, &mut bumped, |keys| {
                self.answer_bumped(bytes, keys, out);
            });
        // Should a scan have taken no key, the rest go one by one (never
        // skipped: that could be a false negative).
        let rest = hashes.get(unscanned..).unwrap_or(&[]);
        let outs = out.get_mut(unscanned..).unwrap_or(&mut []);
        for (&hash, answer) in rest.iter().zip(outs) {
            if let Some(x) = bumped_by(parts, &thresholds, hash) {
                *answer = self.deeper(bytes, x);
            }
        }
    }

    /// Answers the keys the first layer bumped (what it remixed each to,
    /// and where its answer goes): all through the second layer's batch
    /// kernel, then those the second layer bumped in turn (1 in 12 of
    /// them at w = 64, found by the same threshold scan as the first
    /// layer's, without a branch per key) one by one.
    fn answer_bumped(&self, bytes: &[u8], bumped: &[BumpedKey], out: &mut [K::Answer]) {
        let answer_deeper = |key: &BumpedKey, out: &mut [K::Answer]| {
            if let Some(answer) = out.get_mut(key.at) {
                *answer = self.deeper(bytes, key.x);
            }
        };
        let Some(second) = &self.cached[0] else {
            // A structure of more layers than the view keeps, bytes that
            // lost the second: key by key.
            for key in bumped {
                answer_deeper(key, out);
            }
            return;
        };
        let mut xs = [0u64; BUMPED_BATCH];
        for (x, key) in xs.iter_mut().zip(bumped) {
            *x = key.x;
        }
        let mut answers = [K::Answer::default(); BUMPED_BATCH];
        let count = bumped.len().min(BUMPED_BATCH);
        let (Some(xs), Some(answers)) = (xs.get(..count), answers.get_mut(..count)) else {
            return;
        };
        let (from, to) = second.ranges.payload;
        let payload = bytes.get(from..to).unwrap_or(&[]);
        second.kernels.batch(&second.parts, payload, xs, answers);
        for (&answer, key) in answers.iter().zip(bumped) {
            if let Some(out) = out.get_mut(key.at) {
                *out = answer;
            }
        }
        if second.last {
            return;
        }
        // The keys the second layer bumped: `at` is their place in `xs`.
        let thresholds = second.ranges.thresholds(self.buckets, bytes);
        // About 1 in 12 of them, a scan at a time (16 entries, two
        // vectors' worth: the stack batch queries take on 32-bit targets
        // stays what it was when the second layer listed its kept keys).
        let mut deeper = [BumpedKey::default(); 16];
        let unscanned = scan_in_pieces(
            self.scan,
            &second.parts,
            &thresholds,
            xs,
            &mut deeper,
            |keys| {
                for key in keys.iter().filter_map(|d| bumped.get(d.at)) {
                    answer_deeper(key, out);
                }
            },
        );
        // Should a scan have taken no key: the rest one by one.
        for key in bumped.get(unscanned..count).unwrap_or(&[]) {
            answer_deeper(key, out);
        }
    }

    /// The layers after the first, for a key the first bumped (`x`: what
    /// the first layer remixed it to). Bytes that no longer hold a layer
    /// answer [`LayerKernels::MISSING`].
    #[inline]
    fn deeper(&self, bytes: &[u8], mut x: u64) -> K::Answer {
        for layer in self.cached.iter().flatten() {
            if !layer.last {
                let thresholds = layer.ranges.thresholds(self.buckets, bytes);
                if let Some(y) = bumped_by(&layer.parts, &thresholds, x) {
                    x = y;
                    continue;
                }
            }
            let (from, to) = layer.ranges.payload;
            return match bytes.get(from..to) {
                Some(payload) => layer.kernels.one(&layer.parts, payload, x),
                None => K::MISSING,
            };
        }
        self.uncached(bytes, 1 + CACHED_LAYERS, x)
    }

    /// [`BumpedTop::deeper`] from layer `from` on, decoding the layers
    /// from the bytes.
    #[cold]
    #[inline(never)]
    fn uncached(&self, bytes: &[u8], from: usize, x: u64) -> K::Answer {
        walk_layers::<K>(bytes, self.backend, from, x)
    }
}

/// The answer of the layers after the first `from` of the Bumped structure
/// `bytes` (validated) for a key that reached them as `x` (what the layer
/// before remixed it to), with `backend`'s kernels `K`: each layer decoded
/// from the bytes as the key reaches it and nothing kept, so that it needs
/// little stack (a view's layers past those it keeps; the C ABI's one-shot
/// queries). Bytes that no longer hold a layer answer
/// [`LayerKernels::MISSING`].
#[inline(never)]
fn walk_layers<K: LayerKernels>(
    bytes: &[u8],
    backend: Backend,
    from: usize,
    mut x: u64,
) -> K::Answer {
    let Ok(mut layers) = Layers::new(bytes) else {
        return K::MISSING;
    };
    let mut keys = layers.header().num_keys;
    let mut i = 0;
    while let Some(Ok(layer)) = layers.next_layer(keys, false) {
        keys = layer.num_keys;
        i += 1;
        if i <= from {
            continue;
        }
        let g = layer.geometry;
        let parts = Parts {
            geometry: g,
            expander: Expander::new(&g, layer.seed),
        };
        if !layer.last
            && let Some(y) = bumped_by(&parts, &layer.thresholds, x)
        {
            x = y;
            continue;
        }
        let Some(kernels) = K::for_layer(backend, &g) else {
            return K::MISSING;
        };
        return kernels.one(&parts, layer.payload, x);
    }
    K::MISSING
}

/// Scans `hashes` with `scan` for the keys a layer (`parts`,
/// `thresholds`) bumps, a piece at a time into `buffer`, and hands each
/// piece's bumped keys to `each` (`at`: their index in `hashes`). Returns
/// how many hashes were scanned: all of them, unless a scan took none
/// (which a scan with room in `buffer` never does); the caller answers
/// the rest one by one.
#[inline(always)]
fn scan_in_pieces(
    scan: ScanBumpedFn,
    parts: &Parts,
    thresholds: &ThresholdsRef<'_>,
    hashes: &[u64],
    buffer: &mut [BumpedKey],
    mut each: impl FnMut(&[BumpedKey]),
) -> usize {
    let mut scanned = 0;
    while let Some(rest) = hashes.get(scanned..)
        && !rest.is_empty()
    {
        let (n, written) = scan(parts, thresholds, rest, scanned, buffer);
        each(buffer.get(..written).unwrap_or(&[]));
        if n == 0 {
            break;
        }
        scanned += n;
    }
    scanned
}

/// A bumping layer's verdict on a key: `Some(x)`, the value the key
/// carries to the next layer, when the bucket of its start (from `x`, its
/// remix with the layer's seed) bumped it.
#[inline(always)]
fn bumped_by(parts: &Parts, thresholds: &ThresholdsRef<'_>, hash: u64) -> Option<u64> {
    let (x, start) = parts.expander.remix_and_start(hash);
    thresholds.bumped_flag(start).then_some(x)
}

/// One query of the validated filter `bytes` with header `header`, querying
/// with `backend`, with no view: for callers that cannot keep one (the C
/// ABI's `ribbon_contains`, whose struct holds only the header's fields).
/// A view's state is hundreds of bytes to build and copy, many times a
/// query's own work; this reads only what the query needs. For a Bumped
/// filter that is the first layer and, for a key it bumped (1 in 12), the
/// later layers one at a time ([`bumped_once`]).
#[cfg(feature = "capi")]
pub(crate) fn contains_once(
    header: &Header,
    backend: Backend,
    bytes: &[u8],
    hash: u64,
) -> Result<bool, Error> {
    type Kernels = QueryKernels<Parts>;
    if header.geometry.kind != Kind::Bumped {
        let payload = bytes.get(HEADER_BYTES..).unwrap_or(&[]);
        return layer_once::<Kernels>(backend, &header.geometry, header.seed, payload, hash);
    }
    let g = Geometry {
        kind: Kind::Standard,
        ..header.geometry
    };
    bumped_once::<Kernels>(bytes, &g, backend, hash)
}

/// One answer of a layer (geometry `g`, `seed`, `payload`) with
/// `backend`'s kernels `K`, resolved for it alone. The one gate between a
/// one-shot query (no view) and the kernels, which load unchecked: a
/// payload shorter than `g` says is [`Error::Truncated`], whoever paired
/// them (a C view's geometry with bytes changed since it opened, say).
#[cfg(feature = "capi")]
pub(crate) fn layer_once<K: LayerKernels>(
    backend: Backend,
    g: &Geometry,
    seed: u32,
    payload: &[u8],
    hash: u64,
) -> Result<K::Answer, Error> {
    if payload.len() < g.payload_bytes() {
        return Err(Error::Truncated {
            needed: g.payload_bytes(),
            given: payload.len(),
        });
    }
    let parts = Parts {
        geometry: *g,
        expander: Expander::new(g, seed),
    };
    let kernels = K::for_layer(backend, g).ok_or(Error::BackendUnavailable)?;
    Ok(kernels.one(&parts, payload, hash))
}

/// The answer of the validated Bumped structure `bytes` (its first
/// layer's geometry `g`, kept by the caller) for `hash`, with no view:
/// what one query without a view reads, for the C ABI. The first layer's
/// entry, then, for a key it bumped (1 in 12 at w = 64), the later layers
/// one at a time ([`walk_layers`]), never a view's whole state. The two
/// run one after the other, not one inside the other, so that the C single
/// query's stack is the larger of the two. Bytes changed since they were
/// validated give some answer or an error, never a panic.
#[cfg(feature = "capi")]
pub(crate) fn bumped_once<K: LayerKernels>(
    bytes: &[u8],
    g: &Geometry,
    backend: Backend,
    hash: u64,
) -> Result<K::Answer, Error> {
    match first_layer_once::<K>(bytes, g, backend, hash)? {
        Ok(answer) => Ok(answer),
        Err(x) => Ok(walk_layers::<K>(bytes, backend, 1, x)),
    }
}

/// The first layer's part of [`bumped_once`]: its answer, or what it
/// remixed `hash` to (`Err`) when it bumped the key.
#[cfg(feature = "capi")]
#[inline(never)]
fn first_layer_once<K: LayerKernels>(
    bytes: &[u8],
    g: &Geometry,
    backend: Backend,
    hash: u64,
) -> Result<Result<K::Answer, u64>, Error> {
    let first = Layers::first_of_validated(bytes, g).ok_or(Error::CorruptHeader)?;
    let parts = Parts {
        geometry: first.geometry,
        expander: Expander::new(&first.geometry, first.seed),
    };
    if !first.last
        && let Some(x) = bumped_by(&parts, &first.thresholds, hash)
    {
        // Resolved here, so that a backend this CPU lacks is an error
        // for every key, as for the first layer's.
        K::for_layer(backend, &first.geometry).ok_or(Error::BackendUnavailable)?;
        return Ok(Err(x));
    }
    layer_once::<K>(backend, &first.geometry, first.seed, first.payload, hash).map(Ok)
}

impl Validated {
    /// The state of a view of a filter with header `header` (validated),
    /// querying with `backend`; fails if this CPU or build lacks it.
    pub(crate) fn new(header: &Header, backend: Backend) -> Result<Validated, Error> {
        let (g, seed) = (header.geometry, header.seed);
        Validated::of(g, seed, seed, header.num_keys, backend, None)
    }

    /// The state of a view of geometry `g` hashed with `layer_seed` (for a
    /// Bumped filter, its first layer's), querying with `backend`.
    fn of(
        g: Geometry,
        layer_seed: u32,
        seed: u32,
        num_keys: u64,
        backend: Backend,
        bumped: Option<BumpedTop>,
    ) -> Result<Validated, Error> {
        Ok(Validated {
            parts: Parts {
                geometry: g,
                expander: Expander::new(&g, layer_seed),
            },
            seed,
            num_keys,
            kernels: QueryKernels::for_filter(backend, &g).ok_or(Error::BackendUnavailable)?,
            bumped,
        })
    }

    /// The state of a view of the Bumped filter `bytes` (validated),
    /// querying with `backend`.
    pub(crate) fn for_bumped(bytes: &[u8], backend: Backend) -> Result<Validated, Error> {
        let (first, header, top) = BumpedTop::decode(bytes, backend)?;
        let (g, num_keys) = (first.geometry, header.num_keys);
        Validated::of(g, first.seed, header.seed, num_keys, backend, Some(top))
    }

    /// The payload the kernels of `parts` read in `bytes` (the filter this
    /// state was decoded from): the first layer's for a Bumped filter.
    pub(crate) fn payload<'b>(&self, bytes: &'b [u8]) -> &'b [u8] {
        match &self.bumped {
            None => bytes.get(HEADER_BYTES..).unwrap_or(&[]),
            Some(top) => top.first_payload(bytes),
        }
    }

    /// Whether `hash` may be in the filter `bytes` (which this state was
    /// decoded from; `payload` is [`Validated::payload`]).
    #[inline(always)]
    pub(crate) fn contains(&self, bytes: &[u8], payload: &[u8], hash: u64) -> bool {
        match &self.bumped {
            None => self.kernels.contains(&self.parts, payload, hash),
            Some(top) => top.one(&self.parts, &self.kernels, bytes, payload, hash),
        }
    }

    /// Answers every hash into `out` (of the same length).
    pub(crate) fn contains_batch(
        &self,
        bytes: &[u8],
        payload: &[u8],
        hashes: &[u64],
        out: &mut [bool],
    ) {
        match &self.bumped {
            None => self
                .kernels
                .contains_batch(&self.parts, payload, hashes, out),
            Some(top) => top.batch(&self.parts, &self.kernels, bytes, hashes, out),
        }
    }

    /// The backend the kernels belong to.
    pub(crate) fn backend(&self) -> Backend {
        self.kernels.backend()
    }

    /// The serialized length of the filter this state was decoded from.
    #[cfg_attr(not(feature = "alloc"), allow(dead_code))]
    pub(crate) fn filter_bytes(&self) -> usize {
        match &self.bumped {
            Some(top) => top.len(),
            None => self.parts.geometry.filter_bytes(),
        }
    }
}
