//! `FilterRef`: a zero-copy, validated view over a serialized filter.

use crate::backend::Backend;
use crate::error::Error;
use crate::hash::{Equation, Expander};
use crate::kernels::QueryKernels;
use crate::layout::{HEADER_BYTES, Header, Kind, Width};
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
            .field("kind", &g.kind)
            .field("width", &g.width)
            .field("num_keys", &self.state.num_keys)
            .field("num_slots", &g.num_slots())
            .field("lower_columns", &g.lower_columns)
            .field("upper_start_block", &g.upper_start_block)
            .field("seed", &self.state.seed)
            .field("bytes", &(HEADER_BYTES + self.payload.len()))
            .field("backend", &self.backend())
            .finish()
    }
}

impl<'a> FilterRef<'a> {
    /// Validates `bytes` as a serialized filter and returns a view of it.
    ///
    /// Every header field is checked against the others and against
    /// `bytes.len()`, which must be exactly the filter's length. The payload
    /// bits are not checksummed: storage layers verify their own checksums.
    /// The view uses [`Backend::current`]: the best backend detected on this
    /// CPU unless one was set with [`Backend::force`].
    pub fn from_bytes(bytes: &'a [u8]) -> Result<FilterRef<'a>, Error> {
        let header = Header::decode(bytes)?;
        let state = Validated::new(&header, Backend::current())?;
        Ok(FilterRef::from_validated(state, bytes))
    }

    /// The exact length of the serialized filter that starts `bytes`, read
    /// from its header (validated as [`FilterRef::from_bytes`] does, but for
    /// the length). For filters stored back to back or in a larger block.
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
        let s = &self.state;
        s.kernels.contains(&s.parts, self.payload, hash)
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
        let s = &self.state;
        s.kernels
            .contains_batch(&s.parts, self.payload, hashes, out);
        Ok(())
    }

    /// The same view, querying with `backend`; fails if this CPU or build
    /// lacks it.
    pub fn with_backend(self, backend: Backend) -> Result<FilterRef<'a>, Error> {
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
        self.state.kernels.backend()
    }

    /// The filter's kind.
    pub fn kind(&self) -> Kind {
        self.state.parts.geometry.kind
    }

    /// The filter's ribbon width.
    pub fn width(&self) -> Width {
        self.state.parts.geometry.width
    }

    /// Number of key hashes the filter was built from (duplicates included).
    pub fn num_keys(&self) -> u64 {
        self.state.num_keys
    }

    /// Number of slots `m`.
    pub fn num_slots(&self) -> usize {
        self.state.parts.geometry.num_slots()
    }

    /// The seed the filter was built with.
    pub fn seed(&self) -> u32 {
        self.state.seed
    }

    /// Serialized length in bytes, header included.
    pub fn filter_bytes(&self) -> usize {
        HEADER_BYTES + self.payload.len()
    }

    /// Payload bits (ICML words, header excluded) per key, times 1000, or 0
    /// for a filter of no keys.
    pub fn millibits_per_key(&self) -> u64 {
        let bits = self.payload.len() as u128 * 8 * 1000;
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
        crate::fp::estimated_fp_ppt(&self.state.parts.geometry, self.payload)
    }

    /// The equation `hash` contributes to this filter's system.
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
            payload: bytes.get(HEADER_BYTES..).unwrap_or(&[]),
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
}

impl Validated {
    /// The state of a view of a filter with header `header` (validated),
    /// querying with `backend`; fails if this CPU or build lacks it.
    pub(crate) fn new(header: &Header, backend: Backend) -> Result<Validated, Error> {
        let g = header.geometry;
        Ok(Validated {
            parts: Parts {
                geometry: g,
                expander: Expander::new(&g, header.seed),
            },
            seed: header.seed,
            num_keys: header.num_keys,
            kernels: QueryKernels::for_filter(backend, &g).ok_or(Error::BackendUnavailable)?,
        })
    }

    /// The backend the kernels belong to.
    #[cfg_attr(not(feature = "capi"), allow(dead_code))]
    pub(crate) fn backend(&self) -> Backend {
        self.kernels.backend()
    }
}
