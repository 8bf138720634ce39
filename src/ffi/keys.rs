//! Key hashing from C: `ribbon_hash_key`, with a seed, and a batch.

use super::pointers::{c_slice, c_slice_mut, overlaps, span};
use super::{RIBBON_ERR_NULL, RIBBON_ERR_OVERLAP, status};
use crate::error::Error;

/// The bytes of one key from C. NULL is the empty key, whatever `len`
/// says, and so is a length no object can have (over `PTRDIFF_MAX`): a
/// hash cannot report an error.
///
/// # Safety
/// When non-NULL, `key` points to `len` readable bytes.
unsafe fn key_bytes<'a>(key: *const u8, len: usize) -> &'a [u8] {
    if key.is_null() || len == 0 || len > isize::MAX as usize {
        return &[];
    }
    // SAFETY: non-NULL, at most `isize::MAX` bytes, readable per the
    // contract.
    unsafe { core::slice::from_raw_parts(key, len) }
}

/// XXH3-64 of `len` bytes at `key` with seed 0 ([`crate::hash_key`]).
/// NULL is the empty key. Never fails.
///
/// # Safety
/// `key` is NULL or readable for `len` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ribbon_hash_key(key: *const u8, len: usize) -> u64 {
    // SAFETY: forwarded contract.
    crate::key_hash::hash_key(unsafe { key_bytes(key, len) })
}

/// XXH3-64 of `len` bytes at `key` with `seed`
/// ([`crate::hash_key_with_seed`]). NULL is the empty key. Never fails.
///
/// # Safety
/// `key` is NULL or readable for `len` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ribbon_hash_key_with_seed(key: *const u8, len: usize, seed: u64) -> u64 {
    // SAFETY: forwarded contract.
    crate::key_hash::hash_key_with_seed(unsafe { key_bytes(key, len) }, seed)
}

/// `out[i] = ribbon_hash_key(keys[i], lens[i])` for `i < n`. Checks every
/// key before it writes: a NULL array (with `n > 0`) or a NULL key with a
/// nonzero length is `RIBBON_ERR_NULL`, and an `out` overlapping `keys`,
/// `lens` or a key's bytes `RIBBON_ERR_OVERLAP`; both leave `out`
/// untouched. Keys may overlap each other and the two arrays.
///
/// # Safety
/// `keys` and `lens` are NULL or readable for `n` entries, `out` NULL or
/// writable for `n` words; each `keys[i]` is NULL or readable for
/// `lens[i]` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ribbon_hash_keys(
    keys: *const *const u8,
    lens: *const usize,
    n: usize,
    out: *mut u64,
) -> i32 {
    // SAFETY: forwarded contract.
    status(unsafe { hash_keys(keys, lens, n, out) })
}

/// [`ribbon_hash_keys`]'s work.
///
/// # Safety
/// As for [`ribbon_hash_keys`].
unsafe fn hash_keys(
    keys: *const *const u8,
    lens: *const usize,
    n: usize,
    out: *mut u64,
) -> Result<(), i32> {
    // SAFETY: readable for `n` entries per the contract.
    let (keys, lens) = unsafe { (c_slice(keys, n)?, c_slice(lens, n)?) };
    let out_bytes = span::<u64>(n);
    if overlaps(out, out_bytes, keys.as_ptr(), size_of_val(keys))
        || overlaps(out, out_bytes, lens.as_ptr(), size_of_val(lens))
    {
        return Err(RIBBON_ERR_OVERLAP);
    }
    // SAFETY: writable for `n` words per the contract, and apart from the
    // two arrays (checked above); no key's bytes are referenced before the
    // loop below has checked them against it.
    let out = unsafe { c_slice_mut(out, n) }?;
    for (&key, &len) in keys.iter().zip(lens) {
        if key.is_null() && len > 0 {
            return Err(RIBBON_ERR_NULL);
        }
        if len > isize::MAX as usize {
            return Err(Error::TooLarge.code());
        }
        if overlaps(key, len, out.as_ptr(), size_of_val(out)) {
            return Err(RIBBON_ERR_OVERLAP);
        }
    }
    for ((hash, &key), &len) in out.iter_mut().zip(keys).zip(lens) {
        // SAFETY: `key` is NULL only with length 0, else readable for
        // `len` bytes per the contract and apart from `out` (checked
        // above).
        *hash = crate::key_hash::hash_key(unsafe { key_bytes(key, len) });
    }
    Ok(())
}
