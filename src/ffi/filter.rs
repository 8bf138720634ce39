//! `ribbon_filter`: a view of a serialized filter, opened once and
//! queried, one hash or a batch at a time.

use super::pointers::c_ref;
use super::view::{ViewSlots, ViewStruct, batch, open_view, serialized_size, stored, stored_in};
use super::{status, value_or_status};
use crate::backend::Backend;
use crate::error::Error;
use crate::filter::{FilterRef, estimated_fp_ppt};
use crate::kernels::QueryKernels;
use crate::layered::Opened;
use crate::probe::Parts;

/// Opaque, caller-allocated filter view (`ribbon_filter` in C).
#[repr(C)]
#[derive(Debug)]
pub struct ribbon_filter {
    /// The filter's bytes, the magic, the view's fields, the check word.
    view: ViewSlots,
}

impl ribbon_filter {
    /// An all-zero struct, as C's `= {0}`: to be filled in by its init
    /// function (Rust users of the C ABI need it for statics).
    pub const fn zeroed() -> ribbon_filter {
        ribbon_filter {
            view: ViewSlots::ZEROED,
        }
    }
}

const FILTER_MAGIC: u64 = 0x5242_4b5f_464c_5401; // "RBK_FLT" v1

impl ViewStruct for ribbon_filter {
    const MAGIC: u64 = FILTER_MAGIC;

    #[inline(always)]
    fn slots(&self) -> &ViewSlots {
        &self.view
    }

    fn slots_mut(&mut self) -> &mut ViewSlots {
        &mut self.view
    }

    #[inline(always)]
    fn opened(bytes: &[u8], verify: bool, backend: Backend) -> Result<Opened, Error> {
        crate::filter::opened(bytes, verify, backend)
    }
}

/// Reads the exact length of the serialized filter starting at `bytes`
/// from its header into `*filter_len` (the header is validated; `len` may
/// exceed the filter, as when it sits in a larger block). `*filter_len` is
/// 0 after an error, except that a `filter_len` inside the bytes is
/// refused without writing it.
///
/// # Safety
/// `bytes` is NULL or readable for `len` bytes; `filter_len` is NULL or
/// writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ribbon_filter_size(
    bytes: *const u8,
    len: usize,
    filter_len: *mut usize,
) -> i32 {
    // SAFETY: the caller's contract is `serialized_size`'s.
    status(unsafe { serialized_size(bytes, len, filter_len, FilterRef::serialized_len) })
}

/// Validates `len` bytes as a filter, its checksum included, and fills
/// in the view `f`. A view inside the bytes it opens is refused before
/// anything is written.
///
/// # Safety
/// `f` is NULL or writable; `bytes` is NULL or readable for `len` bytes.
/// The bytes must stay alive and unchanged while `f` is used.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ribbon_filter_open(
    f: *mut ribbon_filter,
    bytes: *const u8,
    len: usize,
) -> i32 {
    // SAFETY: forwarded contract.
    status(unsafe { open_view(f, bytes, len, true) })
}

/// [`ribbon_filter_open`] without the checksum
/// ([`FilterRef::from_bytes_unverified`]: for bytes the caller verified).
///
/// # Safety
/// As for [`ribbon_filter_open`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ribbon_filter_open_unverified(
    f: *mut ribbon_filter,
    bytes: *const u8,
    len: usize,
) -> i32 {
    // SAFETY: forwarded contract.
    status(unsafe { open_view(f, bytes, len, false) })
}

/// 1 if `hash` may be in the filter, 0 if not, a negative status on error.
///
/// # Safety
/// `f` is NULL or a view filled in by `ribbon_filter_open` whose bytes are
/// still alive and unchanged.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ribbon_contains(f: *const ribbon_filter, hash: u64) -> i32 {
    // SAFETY: the caller passes NULL or a valid view whose bytes are alive.
    let view = unsafe { stored(f) };
    value_or_status(view.and_then(|v| v.answer::<QueryKernels<Parts>>(hash).map(i32::from)))
}

/// Queries `n` hashes, writing 1 or 0 per hash into `out`. An `out`
/// overlapping the hashes, the view's filter bytes or `f` is refused before
/// anything is written.
///
/// # Safety
/// `f` as for `ribbon_contains`; `hashes` NULL or readable for `n` words;
/// `out` NULL or writable for `n` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ribbon_contains_batch(
    f: *const ribbon_filter,
    hashes: *const u64,
    n: usize,
    out: *mut u8,
) -> i32 {
    let contains_batch = |f: &ribbon_filter| {
        // SAFETY: the view's bytes are alive per the contract.
        let view = unsafe { stored_in(f) }?;
        let answer = |hashes: &[u64], bytes: &mut [u8]| {
            // Zero first: every byte is then a valid `false`, so the
            // buffer can be answered in place, with no copy and no
            // chunking that would restart the kernels' prefetch pipeline.
            bytes.fill(0);
            // SAFETY: `bool` has the size and alignment of `u8`, every
            // byte now holds 0 (`false`), and the slice is the only
            // reference to it while `answers` lives; the kernels store
            // only `true` or `false`.
            let answers = unsafe {
                core::slice::from_raw_parts_mut(bytes.as_mut_ptr().cast::<bool>(), bytes.len())
            };
            view.answer_batch(hashes, answers)
        };
        // SAFETY: `hashes` and `out` as the contract says.
        unsafe { batch(f, view.bytes, hashes, n, out, answer) }
    };
    // SAFETY: the caller passes NULL or a valid `ribbon_filter`.
    status(unsafe { c_ref(f) }.and_then(contains_batch))
}

/// The view's kind (`RIBBON_KIND_*`), or a negative status.
///
/// # Safety
/// As for `ribbon_contains`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ribbon_filter_kind(f: *const ribbon_filter) -> i32 {
    // SAFETY: forwarded contract.
    value_or_status(unsafe { stored(f) }.map(|v| v.kind() as i32))
}

/// The view's ribbon width in bits (64 or 128), or a negative status.
///
/// # Safety
/// As for `ribbon_contains`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ribbon_filter_width(f: *const ribbon_filter) -> i32 {
    // SAFETY: forwarded contract.
    value_or_status(unsafe { stored(f) }.map(|v| v.parts().geometry.width.bits() as i32))
}

/// The number of keys the view's filter was built from; 0 for a NULL or
/// bad view.
///
/// # Safety
/// As for `ribbon_contains`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ribbon_filter_keys(f: *const ribbon_filter) -> u64 {
    // SAFETY: forwarded contract.
    unsafe { stored(f) }.map_or(0, |v| v.num_keys())
}

/// The serialized length of the view's filter in bytes; 0 for a NULL or
/// bad view.
///
/// # Safety
/// As for `ribbon_contains`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ribbon_filter_bytes(f: *const ribbon_filter) -> usize {
    // SAFETY: forwarded contract.
    unsafe { stored(f) }.map_or(0, |v| v.bytes.len())
}

/// The FP rate of the view's columns in ppt; 0 for a NULL or bad view.
///
/// # Safety
/// As for `ribbon_contains`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ribbon_filter_column_fp_ppt(f: *const ribbon_filter) -> u64 {
    // SAFETY: forwarded contract.
    unsafe { stored(f) }.map_or(0, |view| view.parts().geometry.column_fp_ppt())
}

/// The view's FP rate measured from its bytes, in ppt; 0 for a NULL or bad
/// view.
///
/// # Safety
/// As for `ribbon_contains`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ribbon_filter_estimated_fp_ppt(f: *const ribbon_filter) -> u64 {
    // SAFETY: forwarded contract.
    unsafe { stored(f) }.map_or(0, |view| {
        estimated_fp_ppt(&view.parts().geometry, view.layered(), view.first_payload())
    })
}
