//! `Filter`: the owning twin of [`FilterRef`] (feature `alloc`).

use alloc::vec;
use alloc::vec::Vec;

use crate::backend::Backend;
use crate::error::Error;
use crate::filter::{FilterRef, Validated};
use crate::plan::Plan;

/// An owned Ribbon filter: the serialized bytes in a `Vec<u8>`.
///
/// Use it when an allocator is at hand; [`Filter::as_ref`] gives the
/// zero-copy [`FilterRef`] with every query method.
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
#[derive(Clone)]
pub struct Filter {
    bytes: Vec<u8>,
    validated: Validated,
}

impl core::fmt::Debug for Filter {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_tuple("Filter").field(&self.as_ref()).finish()
    }
}

impl Filter {
    /// Builds a filter from `hashes` with `plan`, allocating the scratch
    /// (freed before returning) and the filter bytes.
    pub fn build(plan: &Plan, hashes: &[u64]) -> Result<Filter, Error> {
        let words = plan
            .scratch_words()
            .max(plan.scratch_words_for(hashes.len()));
        let mut scratch = vec![0u64; words];
        let mut bytes = vec![0u8; plan.filter_bytes()];
        let validated = plan.build(hashes, &mut scratch, &mut bytes)?.validated();
        Ok(Filter { bytes, validated })
    }

    /// Takes ownership of serialized bytes after validating them exactly as
    /// [`FilterRef::from_bytes`] does.
    pub fn from_bytes(bytes: Vec<u8>) -> Result<Filter, Error> {
        let validated = FilterRef::from_bytes(&bytes)?.validated();
        Ok(Filter { bytes, validated })
    }

    /// The borrowed view, with every query method.
    #[inline]
    pub fn as_ref(&self) -> FilterRef<'_> {
        FilterRef::from_validated(self.validated, &self.bytes)
    }

    /// Whether `hash` may be in the set.
    #[inline]
    pub fn contains(&self, hash: u64) -> bool {
        self.as_ref().contains(hash)
    }

    /// Queries every hash into `out` (same length as `hashes`).
    pub fn contains_batch(&self, hashes: &[u64], out: &mut [bool]) -> Result<(), Error> {
        self.as_ref().contains_batch(hashes, out)
    }

    /// Switches the backend queries use; fails if this CPU lacks it.
    pub fn set_backend(&mut self, backend: Backend) -> Result<(), Error> {
        self.validated = self.as_ref().with_backend(backend)?.validated();
        Ok(())
    }

    /// The serialized bytes.
    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// Gives back the serialized bytes.
    pub fn into_bytes(self) -> Vec<u8> {
        self.bytes
    }
}
