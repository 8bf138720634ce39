//! `Filter`: the owning twin of [`FilterRef`] (feature `alloc`).

use alloc::boxed::Box;
#[cfg(target_has_atomic = "ptr")]
use alloc::sync::Arc;
use alloc::vec;
use alloc::vec::Vec;

use crate::backend::Backend;
use crate::error::Error;
use crate::filter::{FilterRef, Validated};
use crate::key_hash::hash_key;
use crate::layout::{Kind, Width};
use crate::plan::Plan;

/// A Ribbon filter that owns its serialized bytes, validated once.
///
/// The owner `B` is anything that holds the bytes: a `Vec<u8>` (the
/// default, what [`Filter::build`] makes), an `Arc<[u8]>`, a `Box<[u8]>`,
/// a `bytes::Bytes` or a memory map. No copy is made, and the bytes may
/// have any alignment. [`Filter::view`] gives the zero-copy [`FilterRef`]
/// with every query method; `Filter` implements `AsRef<[u8]>`, so it can
/// be written out as it is.
///
/// ```
/// use std::sync::Arc;
/// use ribbon_kernel::{Filter, FilterRef};
///
/// // One line: the recommended kind and width for an FP rate of 1 in 100.
/// let hashes: Vec<u64> = (0..1000u64).map(|i| ribbon_kernel::hash_key(&i.to_le_bytes())).collect();
/// let filter = Filter::from_hashes(&hashes, 100)?;
/// assert!(hashes.iter().all(|&h| filter.contains(h)));
///
/// // Bytes at any alignment, for example inside a larger record.
/// let mut record = vec![0xAB];
/// record.extend_from_slice(filter.as_ref());
/// let view = FilterRef::try_from(&record[1..])?;
/// assert_eq!(view.num_keys(), 1000);
/// # if cfg!(miri) || cfg!(target_os = "wasi") { return Ok(()); } // no temp folder there
///
/// // Store it, and load it back without copying.
/// let path = std::env::temp_dir().join(format!("ribbon-doc-{}.filter", std::process::id()));
/// std::fs::write(&path, &filter).unwrap();
/// let shared: Arc<[u8]> = std::fs::read(&path).unwrap().into();
/// let loaded = Filter::from_bytes(shared)?;
/// assert!(loaded.contains(hashes[7]));
/// # std::fs::remove_file(&path).unwrap();
/// # Ok::<(), ribbon_kernel::Error>(())
/// ```
#[derive(Clone)]
pub struct Filter<B = Vec<u8>> {
    bytes: B,
    validated: Validated,
}

impl<B: AsRef<[u8]>> core::fmt::Debug for Filter<B> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_tuple("Filter").field(&self.view()).finish()
    }
}

impl Filter {
    /// The FP rate `TryFrom<&[u64]>` builds for: at most 1 in 256, the
    /// rate of an 8-bit fingerprint (as `xorf`'s `BinaryFuse8`, whose
    /// `TryFrom<&[u64]>` this mirrors), at about 9 bits per key.
    pub const DEFAULT_ONE_IN: u64 = 256;

    /// Builds a filter from `hashes` with `plan`, allocating the scratch
    /// (freed before returning) and the filter bytes.
    ///
    /// ```
    /// use ribbon_kernel::{Filter, Kind, Plan, Width};
    ///
    /// let hashes: Vec<u64> = (0..500u64).map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ 7).collect();
    /// let plan = Plan::new(Kind::Standard, Width::W128, hashes.len(), 10_000)?;
    /// let filter = Filter::build(&plan, &hashes)?;
    /// assert!(hashes.iter().all(|&h| filter.contains(h)));
    /// let reloaded = Filter::from_bytes(filter.into_bytes())?;
    /// assert!(reloaded.contains(hashes[0]));
    /// # Ok::<(), ribbon_kernel::Error>(())
    /// ```
    pub fn build(plan: &Plan, hashes: &[u64]) -> Result<Filter, Error> {
        let words = plan
            .scratch_words()
            .max(plan.scratch_words_for(hashes.len()));
        let mut scratch = vec![0u64; words];
        let mut bytes = vec![0u8; plan.filter_bytes()];
        let view = plan.build(hashes, &mut scratch, &mut bytes)?;
        let (validated, len) = (view.validated(), view.filter_bytes());
        // A Bumped build writes at most the plan's bytes.
        bytes.truncate(len);
        bytes.shrink_to_fit();
        Ok(Filter { bytes, validated })
    }

    /// Builds the smallest filter of the default kind and width
    /// (Homogeneous, w = 64: never fails, fast queries, about 10 % over
    /// the minimum space) whose FP rate is at most `1 / one_in`.
    ///
    /// The same as [`Plan::for_fp_rate`] with [`Kind::default()`] and
    /// [`Width::default()`], then [`Filter::build`]. `one_in = 100` takes
    /// about 7.6 bits per key; each halving of the rate adds about 1.1.
    pub fn from_hashes(hashes: &[u64], one_in: u64) -> Result<Filter, Error> {
        let plan = Plan::for_fp_rate(Kind::default(), Width::default(), hashes.len(), one_in)?;
        Filter::build(&plan, hashes)
    }

    /// [`Filter::from_hashes`] of keys: each key is hashed with
    /// [`hash_key`], then the smallest filter of the default kind and
    /// width with an FP rate of at most `1 / one_in` is built. Query it
    /// with [`Filter::contains_key`].
    ///
    /// `keys` is any iterator of byte strings (`&str`, `String`, `&[u8]`,
    /// `Vec<u8>`, `[u8; N]`, ...). Repeats are allowed: a key given twice
    /// takes one place in the filter (its second equation is redundant),
    /// but the plan is sized for every key given and
    /// [`Filter::len`] counts them all; remove repeats first where
    /// they are many. The hashes take 8 bytes per key until the build returns;
    /// without an allocator, hash into a buffer of your own
    /// ([`crate::hash_keys`]) and [`Plan::build`], or stream keys into a
    /// [`Plan::banding`] with [`crate::Banding::add_key`].
    ///
    /// ```
    /// use ribbon_kernel::Filter;
    ///
    /// let filter = Filter::from_keys(["apple", "banana", "cherry"], 100)?;
    /// assert!(filter.contains_key("banana"));
    ///
    /// let lines = "first line\nsecond line\n";
    /// let filter = Filter::from_keys(lines.lines(), 1000)?;
    /// assert!(filter.contains_key("second line"));
    /// # Ok::<(), ribbon_kernel::Error>(())
    /// ```
    pub fn from_keys<I>(keys: I, one_in: u64) -> Result<Filter, Error>
    where
        I: IntoIterator,
        I::Item: AsRef<[u8]>,
    {
        Filter::from_hashes(&hash_all(keys), one_in)
    }

    /// [`Filter::build`] of keys, each hashed with [`hash_key`] (see
    /// [`Filter::from_keys`]): for a plan of another kind, width or
    /// budget. At most [`Plan::num_keys`] keys, repeats counted.
    ///
    /// ```
    /// use ribbon_kernel::{Filter, Kind, Plan, Width};
    ///
    /// let keys: Vec<String> = (0..1000).map(|i| format!("user:{i}")).collect();
    /// let plan = Plan::new(Kind::Bumped, Width::W64, keys.len(), 8_000)?;
    /// let filter = Filter::build_keys(&plan, &keys)?;
    /// assert!(keys.iter().all(|k| filter.contains_key(k)));
    /// # Ok::<(), ribbon_kernel::Error>(())
    /// ```
    pub fn build_keys<I>(plan: &Plan, keys: I) -> Result<Filter, Error>
    where
        I: IntoIterator,
        I::Item: AsRef<[u8]>,
    {
        Filter::build(plan, &hash_all(keys))
    }
}

/// [`hash_key`] of every key, in order.
pub(crate) fn hash_all<I>(keys: I) -> Vec<u64>
where
    I: IntoIterator,
    I::Item: AsRef<[u8]>,
{
    keys.into_iter().map(|k| hash_key(k.as_ref())).collect()
}

impl<B: AsRef<[u8]>> Filter<B> {
    /// Takes ownership of serialized bytes after validating them exactly as
    /// [`FilterRef::from_bytes`] does (any alignment, no copy).
    pub fn from_bytes(bytes: B) -> Result<Filter<B>, Error> {
        let validated = FilterRef::from_bytes(bytes.as_ref())?.validated();
        Ok(Filter { bytes, validated })
    }

    /// [`Filter::from_bytes`] without the checksum, as
    /// [`FilterRef::from_bytes_unverified`] (for bytes the caller has
    /// verified already; its risk is the caller's).
    pub fn from_bytes_unverified(bytes: B) -> Result<Filter<B>, Error> {
        let validated = FilterRef::from_bytes_unverified(bytes.as_ref())?.validated();
        Ok(Filter { bytes, validated })
    }

    /// The borrowed view, with every query method.
    ///
    /// # Panics
    ///
    /// If the owner's `as_ref` returns a slice of another length than the
    /// one validated (an `AsRef` implementation that changes its answer);
    /// `Vec`, `Box`, `Arc`, `Bytes` and memory maps never do.
    #[inline]
    pub fn view(&self) -> FilterRef<'_> {
        FilterRef::from_validated(self.validated, self.checked_bytes())
    }

    /// The owner's bytes, of the length validated (else a panic: see
    /// [`Filter::view`]).
    #[inline(always)]
    fn checked_bytes(&self) -> &[u8] {
        let bytes = self.bytes.as_ref();
        if bytes.len() != self.validated.filter_bytes() {
            owner_changed_length();
        }
        bytes
    }

    /// Whether `hash` may be in the set.
    #[inline]
    pub fn contains(&self, hash: u64) -> bool {
        // Not through `view`: no copy of the decoded state per query.
        contains_in(&self.validated, self.bytes.as_ref(), hash)
    }

    /// Whether `key` may be in the set: [`Filter::contains`] of
    /// [`hash_key`]`(key)` (see [`FilterRef::contains_key`]).
    #[inline]
    pub fn contains_key<K: AsRef<[u8]> + ?Sized>(&self, key: &K) -> bool {
        self.contains(hash_key(key.as_ref()))
    }

    /// Queries every hash into `out` (same length as `hashes`).
    pub fn contains_batch(&self, hashes: &[u64], out: &mut [bool]) -> Result<(), Error> {
        self.view().contains_batch(hashes, out)
    }

    /// Switches the backend queries use; fails if this CPU lacks it.
    pub fn set_backend(&mut self, backend: Backend) -> Result<(), Error> {
        self.validated = self.view().with_backend(backend)?.validated();
        Ok(())
    }

    /// The backend queries use.
    pub fn backend(&self) -> Backend {
        self.validated.backend()
    }

    /// Number of key hashes the filter was built from (duplicates included).
    pub fn num_keys(&self) -> u64 {
        self.validated.num_keys
    }

    /// The number of keys the filter was built from, repeats included: the
    /// same count as [`Filter::num_keys`], as a `usize` (saturated on 32-bit
    /// targets, whose headers may state up to 2^40 keys).
    pub fn len(&self) -> usize {
        usize::try_from(self.num_keys()).unwrap_or(usize::MAX)
    }

    /// Whether the filter was built from no keys (it then matches no hash).
    pub fn is_empty(&self) -> bool {
        self.num_keys() == 0
    }

    /// The serialized bytes.
    pub fn as_bytes(&self) -> &[u8] {
        self.view().as_bytes()
    }

    /// Gives back the owner of the serialized bytes.
    pub fn into_bytes(self) -> B {
        self.bytes
    }
}

/// [`Filter::contains`] once the owner has lent its bytes. Not generic,
/// so that it is compiled in this crate, at this crate's opt-level:
/// generic and `#[inline]` code is compiled in the caller's crate, so in
/// a debug build with `[profile.dev.package.ribbon-kernel] opt-level = 3`
/// the query would otherwise stay unoptimized. Inlined where debug
/// assertions are off (release builds), as before.
#[cfg_attr(not(debug_assertions), inline)]
fn contains_in(v: &Validated, bytes: &[u8], hash: u64) -> bool {
    if bytes.len() != v.filter_bytes() {
        owner_changed_length();
    }
    v.one(bytes, v.payload(bytes), hash)
}

#[cold]
#[inline(never)]
fn owner_changed_length() -> ! {
    panic!("Filter: the owner's AsRef<[u8]> changed the length of the filter bytes")
}

impl<B: AsRef<[u8]>> AsRef<[u8]> for Filter<B> {
    /// The serialized bytes: `std::fs::write(path, &filter)` stores the
    /// filter as it is.
    fn as_ref(&self) -> &[u8] {
        self.as_bytes()
    }
}

impl TryFrom<Vec<u8>> for Filter {
    type Error = Error;

    /// [`Filter::from_bytes`].
    fn try_from(bytes: Vec<u8>) -> Result<Filter, Error> {
        Filter::from_bytes(bytes)
    }
}

impl TryFrom<Box<[u8]>> for Filter<Box<[u8]>> {
    type Error = Error;

    /// [`Filter::from_bytes`].
    fn try_from(bytes: Box<[u8]>) -> Result<Filter<Box<[u8]>>, Error> {
        Filter::from_bytes(bytes)
    }
}

#[cfg(target_has_atomic = "ptr")]
impl TryFrom<Arc<[u8]>> for Filter<Arc<[u8]>> {
    type Error = Error;

    /// [`Filter::from_bytes`]: bytes shared with other owners, no copy.
    fn try_from(bytes: Arc<[u8]>) -> Result<Filter<Arc<[u8]>>, Error> {
        Filter::from_bytes(bytes)
    }
}

impl TryFrom<&[u64]> for Filter {
    type Error = Error;

    /// Builds a filter of these key hashes with an FP rate of at most
    /// 1 in [`Filter::DEFAULT_ONE_IN`] (256):
    /// [`Filter::from_hashes`]`(hashes, 256)`.
    ///
    /// ```
    /// use ribbon_kernel::Filter;
    ///
    /// let hashes: Vec<u64> = (0..1000u64).map(|i| ribbon_kernel::hash_key(&i.to_le_bytes())).collect();
    /// let filter = Filter::try_from(hashes.as_slice())?;
    /// assert!(hashes.iter().all(|&h| filter.contains(h)));
    /// let same: Filter = (&hashes).try_into()?;
    /// assert_eq!(filter, same);
    /// # Ok::<(), ribbon_kernel::Error>(())
    /// ```
    fn try_from(hashes: &[u64]) -> Result<Filter, Error> {
        Filter::from_hashes(hashes, Filter::DEFAULT_ONE_IN)
    }
}

impl TryFrom<&Vec<u64>> for Filter {
    type Error = Error;

    /// `Filter::try_from(hashes.as_slice())`.
    fn try_from(hashes: &Vec<u64>) -> Result<Filter, Error> {
        Filter::try_from(hashes.as_slice())
    }
}

impl<'a, B: AsRef<[u8]>> From<&'a Filter<B>> for FilterRef<'a> {
    /// [`Filter::view`].
    fn from(filter: &'a Filter<B>) -> FilterRef<'a> {
        filter.view()
    }
}

impl From<Filter> for Vec<u8> {
    /// [`Filter::into_bytes`]: the serialized bytes, no copy.
    fn from(filter: Filter) -> Vec<u8> {
        filter.into_bytes()
    }
}

impl<B: AsRef<[u8]>, C: AsRef<[u8]>> PartialEq<Filter<C>> for Filter<B> {
    /// Filters are equal when their serialized bytes are, whatever owns
    /// them and whichever backend queries them.
    fn eq(&self, other: &Filter<C>) -> bool {
        self.as_bytes() == other.as_bytes()
    }
}

impl<B: AsRef<[u8]>> Eq for Filter<B> {}
