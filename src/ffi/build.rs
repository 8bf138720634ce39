//! `ribbon_build`, and the checks every one-call build (filter or
//! retrieval) makes of its buffers before it builds.

use super::plan::{load_plan, ribbon_plan};
use super::pointers::{c_ref, c_scratch, c_slice, c_slice_mut, check_array, overlaps, span};
use super::{RIBBON_ERR_OVERLAP, RIBBON_OK};
use crate::layout::HEADER_BYTES;

/// What a one-call build builds with, checked: the plan, the read-only
/// arrays, the scratch and `out`.
pub(super) type BuildArgs<'a, L, const N: usize> = (L, [&'a [u64]; N], &'a mut [u64], &'a mut [u8]);

/// The checks of a one-call build (filter or retrieval) into `out` (a
/// pointer and a length in bytes) with the plan struct `*plan` (`load`
/// reads it) from `inputs`, `N` arrays of `n` words that are only read
/// (hashes, values), in `scratch` (a pointer and a length in words):
/// checks `out` first (a NULL `out`, an `out_len` past `isize::MAX` or
/// overlapping buffers write nothing), then zeroes the first
/// `min(out_len, HEADER_BYTES)` bytes of `out` before anything else is
/// checked, so that a structure built there before never outlives a
/// failed build. The read-only arrays may overlap each other. Inlined,
/// so that a C build takes no more stack than the Rust build it calls.
///
/// # Safety
/// `plan` is NULL or points to a readable `P`; each pointer is NULL or
/// valid for its stated length, for `'a`: the inputs readable for `n`
/// words, `scratch` writable for its words, `out` writable for its bytes.
#[inline(always)]
pub(super) unsafe fn build_args<'a, P, L, const N: usize>(
    plan: *const P,
    inputs: [*const u64; N],
    n: usize,
    (scratch, scratch_words): (*mut u64, usize),
    (out, out_len): (*mut u8, usize),
    load: impl FnOnce(&P) -> Result<L, i32>,
) -> Result<BuildArgs<'a, L, N>, i32> {
    if out_len > 0 {
        check_array(out, out_len)?;
    }
    let (input_bytes, scratch_bytes) = (span::<u64>(n), span::<u64>(scratch_words));
    let plan_bytes = core::mem::size_of::<P>();
    let input_overlaps = inputs.iter().any(|&input| {
        overlaps(input, input_bytes, scratch, scratch_bytes)
            || overlaps(input, input_bytes, out, out_len)
    });
    if input_overlaps
        || overlaps(scratch, scratch_bytes, out, out_len)
        || overlaps(plan, plan_bytes, scratch, scratch_bytes)
        || overlaps(plan, plan_bytes, out, out_len)
    {
        return Err(RIBBON_ERR_OVERLAP);
    }
    let header = out_len.min(HEADER_BYTES);
    if header > 0 {
        // SAFETY: `out` is non-NULL (`out_len > 0`, checked above) and
        // writable for `out_len >= header` bytes per the contract; it
        // overlaps no other argument, and nothing references it yet.
        unsafe { core::ptr::write_bytes(out, 0, header) };
    }
    // SAFETY: the caller passes NULL or a valid `P`.
    let plan = load(unsafe { c_ref(plan) }?)?;
    let mut slices: [&'a [u64]; N] = [&[]; N];
    for (slice, &input) in slices.iter_mut().zip(&inputs) {
        // SAFETY: readable for `n` words per the contract.
        *slice = unsafe { c_slice(input, n) }?;
    }
    // SAFETY: writable for `scratch_words` words per the contract, and
    // overlapping neither the inputs nor `out` (checked above).
    let scratch = unsafe { c_scratch(scratch, scratch_words) }?;
    // SAFETY: writable for `out_len` bytes per the contract, and
    // overlapping neither the inputs nor the scratch (checked above).
    let out = unsafe { c_slice_mut(out, out_len) }?;
    Ok((plan, slices, scratch, out))
}

/// Builds a filter from `n` hashes into `out` (any alignment).
///
/// Checks `out` first: a NULL `out`, an `out_len` past `isize::MAX` or
/// overlapping buffers write nothing; every other failure zeroes the first
/// `min(out_len, HEADER_BYTES)` bytes of `out` before anything else is
/// checked, so that a filter built there before never outlives a failed
/// build.
///
/// # Safety
/// Each pointer is NULL or valid for its stated length: `hashes` readable
/// for `n` words, `scratch` writable for `scratch_words` words, `out`
/// writable for `out_len` bytes. Overlapping regions are refused.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ribbon_build(
    p: *const ribbon_plan,
    hashes: *const u64,
    n: usize,
    scratch: *mut u64,
    scratch_words: usize,
    out: *mut u8,
    out_len: usize,
) -> i32 {
    // SAFETY: forwarded contract.
    let args = unsafe {
        build_args(
            p,
            [hashes],
            n,
            (scratch, scratch_words),
            (out, out_len),
            load_plan,
        )
    };
    match args {
        Ok((plan, [hashes], scratch, out)) => match plan.build_in_place(hashes, scratch, out) {
            Ok(_) => RIBBON_OK,
            Err(e) => e.code(),
        },
        Err(code) => code,
    }
}
