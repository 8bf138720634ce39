//! `ribbon_banding`: a streaming build, key by key, whose rows live in the
//! caller's scratch.

use super::plan::{check_word_with, pack, plan_at, ribbon_plan, unpack};
use super::pointers::{PtrSlot, c_bytes_mut, c_mut, c_ref, c_scratch, check_bytes, overlaps, span};
use super::{
    RIBBON_ERR_NULL, RIBBON_ERR_OVERLAP, RIBBON_ERR_UNINITIALIZED, status, value_or_status,
};
use crate::band::{AddOutcome, Banding, BandingParts};
use crate::error::Error;
use crate::plan::Plan;

/// Opaque, caller-allocated streaming build (`ribbon_banding` in C): the
/// state of a [`Banding`] whose rows live in the caller's scratch.
#[repr(C)]
#[derive(Debug)]
pub struct ribbon_banding {
    /// The caller's scratch, which holds the rows.
    scratch: PtrSlot,
    /// The magic, the banding's fields, the check word.
    words: [u64; 15],
}

impl ribbon_banding {
    /// An all-zero struct, as C's `= {0}`: to be filled in by its init
    /// function (Rust users of the C ABI need it for statics).
    pub const fn zeroed() -> ribbon_banding {
        ribbon_banding {
            scratch: PtrSlot::NULL,
            words: [0; 15],
        }
    }
}

const BANDING_MAGIC: u64 = 0x5242_4b5f_424e_4401; // "RBK_BND" v1

fn store_banding(b: &mut ribbon_banding, banding: &Banding<'_>, scratch: *mut u64, words: usize) {
    let parts = banding.raw_parts();
    let g = &parts.geometry;
    let scratch = scratch.cast_const().cast::<u8>();
    let mut state = [0u64; 15];
    state[0] = BANDING_MAGIC;
    state[1] = g.num_blocks as u64;
    state[2] = g.upper_start_block as u64;
    state[3] = pack(g, Some(parts.backend), parts.seed);
    state[4] = words as u64;
    state[5] = parts.inserted;
    state[6] = parts.redundant;
    state[7] = parts.capacity;
    state[14] = check_word_with(&state, scratch);
    b.scratch = PtrSlot::new(scratch);
    b.words = state;
}

/// Resumes the banding stored by [`store_banding`]; also returns its
/// scratch pointer and length, to store it again. The rows live in the
/// caller's scratch, not in `b`, hence the free lifetime `'s`.
///
/// # Safety
/// The scratch the banding was started on is still alive and untouched by
/// anything but these functions (the contract of `ribbon_banding_init`) for
/// `'s`, and no other reference to it exists meanwhile.
unsafe fn load_banding<'s>(b: &ribbon_banding) -> Result<(Banding<'s>, *mut u64, usize), i32> {
    let (w, scratch) = (&b.words, b.scratch.get());
    if w[0] != BANDING_MAGIC || w[14] != check_word_with(w, scratch) {
        return Err(RIBBON_ERR_UNINITIALIZED);
    }
    let (geometry, backend, seed) = unpack(w[3], w[1], w[2]).ok_or(RIBBON_ERR_UNINITIALIZED)?;
    let backend = backend.ok_or(RIBBON_ERR_UNINITIALIZED)?;
    // The caller's writable pointer, as `ribbon_banding_init` was given it.
    let ptr = scratch.cast_mut().cast::<u64>();
    let words = usize::try_from(w[4]).map_err(|_| RIBBON_ERR_UNINITIALIZED)?;
    if ptr.is_null() || !ptr.addr().is_multiple_of(core::mem::align_of::<u64>()) {
        return Err(RIBBON_ERR_UNINITIALIZED);
    }
    if words > isize::MAX as usize / 8 {
        return Err(RIBBON_ERR_UNINITIALIZED);
    }
    // SAFETY: `ptr` and `words` were checked by `ribbon_banding_init` (non
    // NULL, aligned, writable for `words` words per its contract), and the
    // caller keeps that scratch alive and leaves it to these functions.
    let rows = unsafe { core::slice::from_raw_parts_mut(ptr, words) };
    let parts = BandingParts {
        geometry,
        seed,
        backend,
        inserted: w[5],
        redundant: w[6],
        capacity: w[7],
    };
    let banding = Banding::from_raw_parts(parts, rows).map_err(Error::code)?;
    Ok((banding, ptr, words))
}

/// Starts a streaming build of plan `p` over the caller's scratch.
/// `b`, `p` and the scratch must not overlap: that is refused before
/// anything is written.
///
/// # Safety
/// `b` is NULL or writable; `p` is NULL or readable; `scratch` is NULL or
/// writable for `scratch_words` words. The scratch must stay alive and be
/// left to the `ribbon_banding_*` functions until `ribbon_banding_finish`
/// succeeds or the banding is abandoned.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ribbon_banding_init(
    b: *mut ribbon_banding,
    p: *const ribbon_plan,
    scratch: *mut u64,
    scratch_words: usize,
) -> i32 {
    // SAFETY: forwarded contract.
    status(unsafe { banding_init(b, p, scratch, scratch_words) })
}

/// [`ribbon_banding_init`]'s work.
///
/// # Safety
/// As for [`ribbon_banding_init`].
unsafe fn banding_init(
    b: *mut ribbon_banding,
    p: *const ribbon_plan,
    scratch: *mut u64,
    scratch_words: usize,
) -> Result<(), i32> {
    let (banding_bytes, plan_bytes) = (
        core::mem::size_of::<ribbon_banding>(),
        core::mem::size_of::<ribbon_plan>(),
    );
    let scratch_bytes = span::<u64>(scratch_words);
    if overlaps(b, banding_bytes, scratch, scratch_bytes)
        || overlaps(b, banding_bytes, p, plan_bytes)
        || overlaps(p, plan_bytes, scratch, scratch_bytes)
    {
        return Err(RIBBON_ERR_OVERLAP);
    }
    // SAFETY: the caller passes NULL or a valid, writable `ribbon_banding`.
    let b = unsafe { c_mut(b) }?;
    *b = ribbon_banding::zeroed();
    // SAFETY: the caller passes NULL or a valid `ribbon_plan`.
    let plan = unsafe { plan_at(p) }?;
    if scratch.is_null() {
        return Err(RIBBON_ERR_NULL);
    }
    // SAFETY: writable for `scratch_words` words per the contract, and
    // apart from `b` and `p` (checked above).
    let rows = unsafe { c_scratch(scratch, scratch_words) }?;
    start_banding(b, &plan, rows, scratch, scratch_words)
}

/// Starts `plan`'s banding over `rows` (the caller's `scratch_words` words
/// at `scratch`) and stores it in `b`. Out of line: the banding's state is
/// then not in the frame under the plan's checks, which on a Cortex-M4
/// took `ribbon_banding_init` over 1 KiB of stack (a Bumped plan's bounds,
/// before it is refused).
#[inline(never)]
fn start_banding(
    b: &mut ribbon_banding,
    plan: &Plan,
    rows: &mut [u64],
    scratch: *mut u64,
    scratch_words: usize,
) -> Result<(), i32> {
    let banding = plan.banding(rows).map_err(Error::code)?;
    store_banding(b, &banding, scratch, scratch_words);
    Ok(())
}

/// Adds one key hash: `RIBBON_ADD_*` (0 or more), or a negative status.
///
/// # Safety
/// `b` is NULL or a banding started by `ribbon_banding_init` whose scratch
/// is still alive (its contract).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ribbon_banding_add(b: *mut ribbon_banding, hash: u64) -> i32 {
    let add = |b: &mut ribbon_banding| {
        // SAFETY: the banding's scratch is alive per the contract.
        let (mut banding, scratch, words) = unsafe { load_banding(b) }?;
        let outcome = banding.add(hash);
        if matches!(outcome, AddOutcome::Inserted | AddOutcome::Redundant) {
            store_banding(b, &banding, scratch, words);
        }
        Ok(outcome.code() as i32)
    };
    // SAFETY: the caller passes NULL or a valid, writable `ribbon_banding`.
    value_or_status(unsafe { c_mut(b) }.and_then(add))
}

/// Keys added so far (0 for a NULL or uninitialized banding).
///
/// # Safety
/// `b` is NULL or a banding started by `ribbon_banding_init` whose scratch
/// is still alive.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ribbon_banding_added(b: *const ribbon_banding) -> u64 {
    // SAFETY: the caller passes NULL or a valid `ribbon_banding`, whose
    // scratch is alive per the contract.
    let loaded = unsafe { c_ref(b).and_then(|b| load_banding(b)) };
    loaded.map_or(0, |(banding, _, _)| banding.added())
}

/// Back-substitutes the banding into `out` (any alignment): writes exactly
/// `ribbon_plan_filter_bytes` bytes. On success the banding is spent (its
/// struct reads as uninitialized) and the scratch free; on error nothing
/// is written, neither `out` nor `b`, so a larger `out` may be passed
/// again. An `out` overlapping the banding's scratch or `b` is refused.
///
/// # Safety
/// `b` as for `ribbon_banding_add`; `out` is NULL or writable for
/// `out_len` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ribbon_banding_finish(
    b: *mut ribbon_banding,
    out: *mut u8,
    out_len: usize,
) -> i32 {
    // SAFETY: forwarded contract.
    status(unsafe { banding_finish(b, out, out_len) })
}

/// [`ribbon_banding_finish`]'s work.
///
/// # Safety
/// As for [`ribbon_banding_finish`].
unsafe fn banding_finish(b: *mut ribbon_banding, out: *mut u8, out_len: usize) -> Result<(), i32> {
    // SAFETY: the caller passes NULL or a valid, writable `ribbon_banding`.
    let b = unsafe { c_mut(b) }?;
    // SAFETY: the banding's scratch is alive per the contract.
    let (banding, scratch, words) = unsafe { load_banding(b) }?;
    check_bytes(out, out_len)?;
    let struct_bytes = core::mem::size_of::<ribbon_banding>();
    if overlaps(out, out_len, scratch, span::<u64>(words))
        || overlaps(out, out_len, core::ptr::from_ref(b), struct_bytes)
    {
        return Err(RIBBON_ERR_OVERLAP);
    }
    // SAFETY: writable for `out_len` bytes per the contract, and apart
    // from the scratch and `b` (checked above).
    let out = unsafe { c_bytes_mut(out, out_len) }?;
    // `solve_into` fails only before it writes (`out` too short), which
    // keeps "on error nothing is written" exact.
    banding.solve_into(out).map_err(Error::code)?;
    *b = ribbon_banding::zeroed();
    Ok(())
}
