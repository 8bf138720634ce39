//! `Retrieval`: the owning twin of [`RetrievalRef`] (feature `alloc`).

use alloc::boxed::Box;
#[cfg(target_has_atomic = "ptr")]
use alloc::sync::Arc;
use alloc::vec;
use alloc::vec::Vec;

use crate::backend::Backend;
use crate::error::Error;
use crate::key_hash::hash_key;
use crate::layout::Width;
use crate::retrieval::{RetrievalPlan, RetrievalRef, RetrievalState};

/// A retrieval structure that owns its serialized bytes, validated once:
/// the value of every key hash it was built from.
///
/// The owner `B` is anything that holds the bytes (a `Vec<u8>`, the
/// default, an `Arc<[u8]>`, a memory map), at any alignment, without a
/// copy; [`Retrieval::view`] gives the borrowed [`RetrievalRef`].
///
/// ```
/// use ribbon_kernel::Retrieval;
///
/// // Which of 16 shards holds each key: 4 bits per key.
/// let hashes: Vec<u64> = (0..1000u64).map(|i| ribbon_kernel::hash_key(&i.to_le_bytes())).collect();
/// let shards: Vec<u64> = (0..1000u64).map(|i| i % 16).collect();
/// let map = Retrieval::from_hashes(&hashes, &shards, 4)?;
/// // About 4.4 bits per key (and the 48-byte header).
/// assert!(map.as_bytes().len() < 1000 * 45 / 80 + 40);
/// assert_eq!(map.get(hashes[123]), 123 % 16);
///
/// let reloaded = Retrieval::from_bytes(map.into_bytes())?;
/// assert_eq!(reloaded.get(hashes[999]), 999 % 16);
/// # Ok::<(), ribbon_kernel::Error>(())
/// ```
#[derive(Clone)]
pub struct Retrieval<B = Vec<u8>> {
    bytes: B,
    state: RetrievalState,
}

impl<B: AsRef<[u8]>> core::fmt::Debug for Retrieval<B> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_tuple("Retrieval").field(&self.view()).finish()
    }
}

impl Retrieval {
    /// Builds the structure mapping `hashes[i]` to `values[i]` with `plan`,
    /// allocating the scratch (freed before returning) and the bytes.
    /// Errors as [`RetrievalPlan::build`].
    pub fn build(plan: &RetrievalPlan, hashes: &[u64], values: &[u64]) -> Result<Retrieval, Error> {
        let mut scratch = vec![0u64; plan.scratch_words()];
        let mut bytes = vec![0u8; plan.retrieval_bytes()];
        let view = plan.build(hashes, values, &mut scratch, &mut bytes)?;
        let (state, len) = (view.state(), view.retrieval_bytes());
        // Bumped layers take what their keys need, within the plan's bound.
        bytes.truncate(len);
        Ok(Retrieval { bytes, state })
    }

    /// Builds with the default width (w = 128: about 0.1-0.5 % over
    /// `value_bits` bits per key on Bumped layers where w = 64 takes
    /// about 0.3 %, and 5 % against 12 % on Standard Ribbon, for a few
    /// thousand keys or fewer) for exactly these
    /// keys: [`RetrievalPlan::new`], then [`Retrieval::build`].
    pub fn from_hashes(
        hashes: &[u64],
        values: &[u64],
        value_bits: u32,
    ) -> Result<Retrieval, Error> {
        let plan = RetrievalPlan::new(Width::W128, hashes.len(), value_bits)?;
        Retrieval::build(&plan, hashes, values)
    }

    /// [`Retrieval::from_hashes`] of `(key, value)` pairs: each key is
    /// hashed with [`hash_key`]. Read it back with [`Retrieval::get_key`].
    ///
    /// Keys are byte strings of any type (`&str`, `String`, `&[u8]`,
    /// `Vec<u8>`, ...), so a `HashMap<String, u64>` or a `BTreeMap`
    /// iterated by reference serves as it is. As for hashes, the same key
    /// twice with the same value is one key, and with different values
    /// [`Error::ConflictingValues`]; a value of `value_bits` bits or more,
    /// [`Error::ValueTooWide`].
    ///
    /// ```
    /// use std::collections::BTreeMap;
    /// use ribbon_kernel::Retrieval;
    ///
    /// let shard_of: BTreeMap<&str, u64> = [("alice", 3), ("bob", 0), ("carol", 7)].into();
    /// let map = Retrieval::from_keys(shard_of.iter().map(|(k, &v)| (k, v)), 3)?;
    /// assert_eq!(map.get_key("carol"), 7);
    ///
    /// let clash = Retrieval::from_keys([("bob", 1), ("bob", 2)], 3);
    /// assert!(matches!(clash, Err(ribbon_kernel::Error::ConflictingValues)));
    /// # Ok::<(), ribbon_kernel::Error>(())
    /// ```
    pub fn from_keys<I, K>(pairs: I, value_bits: u32) -> Result<Retrieval, Error>
    where
        I: IntoIterator<Item = (K, u64)>,
        K: AsRef<[u8]>,
    {
        let (hashes, values) = hash_pairs(pairs);
        Retrieval::from_hashes(&hashes, &values, value_bits)
    }

    /// [`Retrieval::build`] of `(key, value)` pairs, each key hashed with
    /// [`hash_key`] (see [`Retrieval::from_keys`]), for a plan of another
    /// width or kind.
    pub fn build_keys<I, K>(plan: &RetrievalPlan, pairs: I) -> Result<Retrieval, Error>
    where
        I: IntoIterator<Item = (K, u64)>,
        K: AsRef<[u8]>,
    {
        let (hashes, values) = hash_pairs(pairs);
        Retrieval::build(plan, &hashes, &values)
    }
}

/// The hashes ([`hash_key`]) and the values of `pairs`, in order.
fn hash_pairs<I, K>(pairs: I) -> (Vec<u64>, Vec<u64>)
where
    I: IntoIterator<Item = (K, u64)>,
    K: AsRef<[u8]>,
{
    pairs
        .into_iter()
        .map(|(k, v)| (hash_key(k.as_ref()), v))
        .unzip()
}

impl<B: AsRef<[u8]>> Retrieval<B> {
    /// Takes ownership of serialized bytes after validating them as
    /// [`RetrievalRef::from_bytes`] does (any alignment, no copy).
    pub fn from_bytes(bytes: B) -> Result<Retrieval<B>, Error> {
        let state = RetrievalRef::from_bytes(bytes.as_ref())?.state();
        Ok(Retrieval { bytes, state })
    }

    /// [`Retrieval::from_bytes`] without the checksum, as
    /// [`RetrievalRef::from_bytes_unverified`] (for bytes the caller has
    /// verified already; its risk is the caller's).
    pub fn from_bytes_unverified(bytes: B) -> Result<Retrieval<B>, Error> {
        let state = RetrievalRef::from_bytes_unverified(bytes.as_ref())?.state();
        Ok(Retrieval { bytes, state })
    }

    /// The borrowed view.
    ///
    /// # Panics
    ///
    /// If the owner's `as_ref` returns a slice of another length than the
    /// one validated (an `AsRef` implementation that changes its answer);
    /// `Vec`, `Box`, `Arc` and memory maps never do.
    #[inline]
    pub fn view(&self) -> RetrievalRef<'_> {
        RetrievalRef::from_state(self.state, self.checked_bytes())
    }

    #[inline(always)]
    fn checked_bytes(&self) -> &[u8] {
        let bytes = self.bytes.as_ref();
        if bytes.len() != self.state.len() {
            owner_changed_length();
        }
        bytes
    }

    /// The value of `hash` (see [`RetrievalRef::get`]).
    #[inline]
    pub fn get(&self, hash: u64) -> u64 {
        get_in(&self.state, self.bytes.as_ref(), hash)
    }

    /// The value of `key`: [`Retrieval::get`] of [`hash_key`]`(key)`
    /// (see [`RetrievalRef::get_key`]).
    #[inline]
    pub fn get_key<K: AsRef<[u8]> + ?Sized>(&self, key: &K) -> u64 {
        self.get(hash_key(key.as_ref()))
    }

    /// Every hash's value into `out` (see [`RetrievalRef::get_batch`]).
    pub fn get_batch(&self, hashes: &[u64], out: &mut [u64]) -> Result<(), Error> {
        self.view().get_batch(hashes, out)
    }

    /// Switches the backend evaluations use; fails if this CPU lacks it.
    pub fn set_backend(&mut self, backend: Backend) -> Result<(), Error> {
        self.state = self.state.with_backend(self.checked_bytes(), backend)?;
        Ok(())
    }

    /// The backend evaluations use.
    pub fn backend(&self) -> Backend {
        self.view().backend()
    }

    /// Bits per value.
    pub fn value_bits(&self) -> u32 {
        self.view().value_bits()
    }

    /// Keys the structure was built from.
    pub fn num_keys(&self) -> u64 {
        self.view().num_keys()
    }

    /// The number of keys the structure was built from, repeats included: the
    /// same count as [`Retrieval::num_keys`], as a `usize` (saturated on 32-bit
    /// targets, whose headers may state up to 2^40 keys).
    pub fn len(&self) -> usize {
        usize::try_from(self.num_keys()).unwrap_or(usize::MAX)
    }

    /// Whether the structure was built from no keys (every hash then has the value 0).
    pub fn is_empty(&self) -> bool {
        self.num_keys() == 0
    }

    /// The serialized bytes.
    pub fn as_bytes(&self) -> &[u8] {
        self.checked_bytes()
    }

    /// Gives back the owner of the serialized bytes.
    pub fn into_bytes(self) -> B {
        self.bytes
    }
}

/// [`Retrieval::get`] once the owner has lent its bytes: not generic, so
/// that it is compiled in this crate at its own opt-level (see
/// `owned::contains_in`); inlined where debug assertions are off.
#[cfg_attr(not(debug_assertions), inline)]
fn get_in(state: &RetrievalState, bytes: &[u8], hash: u64) -> u64 {
    if bytes.len() != state.len() {
        owner_changed_length();
    }
    state.get(bytes, hash)
}

#[cold]
#[inline(never)]
fn owner_changed_length() -> ! {
    panic!("Retrieval: the owner's AsRef<[u8]> changed the length of the bytes")
}

impl<B: AsRef<[u8]>> AsRef<[u8]> for Retrieval<B> {
    fn as_ref(&self) -> &[u8] {
        self.as_bytes()
    }
}

impl TryFrom<Vec<u8>> for Retrieval {
    type Error = Error;

    /// [`Retrieval::from_bytes`].
    fn try_from(bytes: Vec<u8>) -> Result<Retrieval, Error> {
        Retrieval::from_bytes(bytes)
    }
}

impl TryFrom<Box<[u8]>> for Retrieval<Box<[u8]>> {
    type Error = Error;

    /// [`Retrieval::from_bytes`].
    fn try_from(bytes: Box<[u8]>) -> Result<Retrieval<Box<[u8]>>, Error> {
        Retrieval::from_bytes(bytes)
    }
}

#[cfg(target_has_atomic = "ptr")]
impl TryFrom<Arc<[u8]>> for Retrieval<Arc<[u8]>> {
    type Error = Error;

    /// [`Retrieval::from_bytes`]: bytes shared with other owners, no copy.
    fn try_from(bytes: Arc<[u8]>) -> Result<Retrieval<Arc<[u8]>>, Error> {
        Retrieval::from_bytes(bytes)
    }
}

impl<'a, B: AsRef<[u8]>> From<&'a Retrieval<B>> for RetrievalRef<'a> {
    /// [`Retrieval::view`].
    fn from(map: &'a Retrieval<B>) -> RetrievalRef<'a> {
        map.view()
    }
}

impl From<Retrieval> for Vec<u8> {
    /// [`Retrieval::into_bytes`]: the serialized bytes, no copy.
    fn from(map: Retrieval) -> Vec<u8> {
        map.into_bytes()
    }
}

impl<B: AsRef<[u8]>, C: AsRef<[u8]>> PartialEq<Retrieval<C>> for Retrieval<B> {
    /// Equal when their serialized bytes are.
    fn eq(&self, other: &Retrieval<C>) -> bool {
        self.as_bytes() == other.as_bytes()
    }
}

impl<B: AsRef<[u8]>> Eq for Retrieval<B> {}
