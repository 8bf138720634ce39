//! `ribbon_plan`: a filter's plan and its questions, the word packing and
//! check word the plan and banding structs share, and the
//! `ribbon_max_*` bounds.

use super::pointers::{c_mut, c_ref};
use super::{RIBBON_ERR_INVALID_ARGUMENT, RIBBON_ERR_UNINITIALIZED, status};
use crate::backend::Backend;
use crate::bounds;
use crate::error::Error;
use crate::layout::{Geometry, Kind, Width};
use crate::plan::Plan;

/// Opaque, caller-allocated plan (`ribbon_plan` in C).
#[repr(C)]
#[derive(Debug)]
pub struct ribbon_plan {
    opaque: [u64; 8],
}

impl ribbon_plan {
    /// An all-zero struct, as C's `= {0}`: to be filled in by its init
    /// function (Rust users of the C ABI need it for statics).
    pub const fn zeroed() -> ribbon_plan {
        ribbon_plan { opaque: [0; 8] }
    }
}

const PLAN_MAGIC: u64 = 0x5242_4b5f_504c_4e01; // "RBK_PLN" v1

/// A cheap fold over every struct word but the last, which holds it:
/// catches structs never initialized.
pub(super) fn check_word(words: &[u64]) -> u64 {
    let mut acc = 0x6a09_e667_f3bc_c908u64;
    for (i, w) in words.iter().take(words.len().saturating_sub(1)).enumerate() {
        acc = acc.rotate_left(17) ^ w ^ (i as u64);
    }
    acc
}

/// [`check_word`] of a struct that also keeps a pointer: its address
/// (not the pointer: no provenance is exposed) is folded in too.
pub(super) fn check_word_with(words: &[u64], ptr: *const u8) -> u64 {
    check_word(words) ^ (ptr.addr() as u64).rotate_left(29)
}

/// Packs kind, width, lower columns, backend and seed into one word.
pub(super) fn pack(g: &Geometry, backend: Option<Backend>, seed: u32) -> u64 {
    let backend = backend.map_or(0, |b| u64::from(b.code()) + 1);
    u64::from(g.kind.code())
        | (u64::from(g.width.bits()) << 8)
        | (u64::from(g.lower_columns) << 16)
        | (backend << 24)
        | (u64::from(seed) << 32)
}

/// Unpacks [`pack`]: geometry (re-validated), backend, seed.
pub(super) fn unpack(
    word: u64,
    num_blocks: u64,
    upper_start_block: u64,
) -> Option<(Geometry, Option<Backend>, u32)> {
    let kind = Kind::from_code((word & 0xff) as u32)?;
    let width = Width::from_bits(((word >> 8) & 0xff) as u32)?;
    let lower = ((word >> 16) & 0xff) as u32;
    let backend = match (word >> 24) & 0xff {
        0 => None,
        code => Some(Backend::from_code(code as u32 - 1)?),
    };
    let geometry = Geometry::new(
        kind,
        width,
        usize::try_from(num_blocks).ok()?,
        lower,
        usize::try_from(upper_start_block).ok()?,
    )
    .ok()?;
    Some((geometry, backend, (word >> 32) as u32))
}

fn store_plan(p: &mut ribbon_plan, plan: &Plan) {
    let (g, num_keys, seed, backend, max_seeds, upper_millis) = plan.raw_parts();
    let mut words = [0u64; 8];
    words[0] = PLAN_MAGIC;
    words[1] = g.num_blocks as u64;
    words[2] = g.upper_start_block as u64;
    words[3] = num_keys.map_or(u64::MAX, |n| n as u64);
    words[4] = pack(&g, backend, seed);
    words[5] = u64::from(max_seeds);
    words[6] = u64::from(upper_millis);
    words[7] = check_word(&words);
    p.opaque = words;
}

/// What [`store_plan`] stored in `p`, checked and made a plan again.
pub(super) fn load_plan(p: &ribbon_plan) -> Result<Plan, i32> {
    let w = &p.opaque;
    if w[0] != PLAN_MAGIC || w[7] != check_word(w) {
        return Err(RIBBON_ERR_UNINITIALIZED);
    }
    let (geometry, backend, seed) = unpack(w[4], w[1], w[2]).ok_or(RIBBON_ERR_UNINITIALIZED)?;
    let num_keys = match w[3] {
        u64::MAX => None,
        n => Some(usize::try_from(n).map_err(|_| RIBBON_ERR_UNINITIALIZED)?),
    };
    let max_seeds = u32::try_from(w[5]).map_err(|_| RIBBON_ERR_UNINITIALIZED)?;
    let upper_millis = u32::try_from(w[6]).map_err(|_| RIBBON_ERR_UNINITIALIZED)?;
    Plan::from_raw_parts(geometry, num_keys, seed, backend, max_seeds, upper_millis)
        .map_err(Error::code)
}

/// The plan `p` points to: NULL is `RIBBON_ERR_NULL`, a struct no init
/// filled in `RIBBON_ERR_UNINITIALIZED`.
///
/// # Safety
/// `p` is NULL or points to a readable `ribbon_plan`.
pub(super) unsafe fn plan_at(p: *const ribbon_plan) -> Result<Plan, i32> {
    // SAFETY: forwarded contract.
    load_plan(unsafe { c_ref(p) }?)
}

/// A C key count as a `usize`: one past the address space is more keys
/// than any plan takes.
pub(super) fn key_count(num_keys: u64) -> Result<usize, i32> {
    usize::try_from(num_keys).map_err(|_| {
        Error::TooManyKeys {
            limit: crate::MAX_KEYS as u64,
            given: num_keys,
        }
        .code()
    })
}

/// A `Plan` constructor: kind, width, keys and one argument of its own
/// (`Plan::new`, `Plan::for_fp_rate`, `Plan::for_bytes`).
type MakePlan<A> = fn(Kind, Width, usize, A) -> Result<Plan, Error>;

/// Zeroes `*p`, then fills it in with the plan `make` makes of the C
/// kind, width and key count and its own argument `arg`.
///
/// # Safety
/// `p` is NULL or points to a writable `ribbon_plan`.
#[inline(always)]
unsafe fn plan_from<A>(
    p: *mut ribbon_plan,
    kind: u32,
    width: u32,
    num_keys: u64,
    (make, arg): (MakePlan<A>, A),
) -> i32 {
    let init = |p: &mut ribbon_plan| {
        p.opaque = [0; 8];
        let (Some(kind), Some(width)) = (Kind::from_code(kind), Width::from_bits(width)) else {
            return Err(RIBBON_ERR_INVALID_ARGUMENT);
        };
        let plan = make(kind, width, key_count(num_keys)?, arg).map_err(Error::code)?;
        store_plan(p, &plan);
        Ok(())
    };
    // SAFETY: forwarded contract.
    status(unsafe { c_mut(p) }.and_then(init))
}

/// Plans a filter for `num_keys` keys at `millibits_per_key / 1000` bits
/// per key. See `include/ribbon_kernel.h`.
///
/// # Safety
/// `p` is NULL or points to a writable `ribbon_plan`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ribbon_plan_init(
    p: *mut ribbon_plan,
    kind: u32,
    width: u32,
    num_keys: u64,
    millibits_per_key: u32,
) -> i32 {
    // SAFETY: forwarded contract.
    unsafe { plan_from(p, kind, width, num_keys, (Plan::new, millibits_per_key)) }
}

/// Plans the smallest filter with FP rate at most `1 / one_in`.
///
/// # Safety
/// `p` is NULL or points to a writable `ribbon_plan`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ribbon_plan_init_fp_rate(
    p: *mut ribbon_plan,
    kind: u32,
    width: u32,
    num_keys: u64,
    one_in: u64,
) -> i32 {
    // SAFETY: forwarded contract.
    unsafe { plan_from(p, kind, width, num_keys, (Plan::for_fp_rate, one_in)) }
}

/// Plans the best filter of at most `filter_bytes` bytes.
///
/// # Safety
/// `p` is NULL or points to a writable `ribbon_plan`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ribbon_plan_init_bytes(
    p: *mut ribbon_plan,
    kind: u32,
    width: u32,
    num_keys: u64,
    filter_bytes: usize,
) -> i32 {
    // SAFETY: forwarded contract.
    unsafe { plan_from(p, kind, width, num_keys, (Plan::for_bytes, filter_bytes)) }
}

/// Sets the first seed builds with `p` try ([`Plan::with_seed`]): where
/// key hashes come from untrusted parties, a seed drawn from a secret
/// random source keeps hashes crafted for the default seeds from landing
/// where they were aimed.
///
/// # Safety
/// `p` is NULL or points to a writable `ribbon_plan`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ribbon_plan_set_seed(p: *mut ribbon_plan, seed: u32) -> i32 {
    let set = |p: &mut ribbon_plan| {
        let plan = load_plan(p)?;
        store_plan(p, &plan.with_seed(seed));
        Ok(())
    };
    // SAFETY: the caller passes NULL or a valid, writable `ribbon_plan`.
    status(unsafe { c_mut(p) }.and_then(set))
}

/// `uint64_t` words of scratch `ribbon_build` needs; 0 for a NULL or
/// uninitialized plan.
///
/// # Safety
/// `p` is NULL or points to a readable `ribbon_plan`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ribbon_plan_scratch_words(p: *const ribbon_plan) -> usize {
    // SAFETY: forwarded contract.
    unsafe { plan_at(p) }.map_or(0, |plan| plan.scratch_words())
}

/// Exact serialized filter length (for Bumped Ribbon the most a build
/// writes); 0 for a NULL or uninitialized plan.
///
/// # Safety
/// `p` is NULL or points to a readable `ribbon_plan`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ribbon_plan_filter_bytes(p: *const ribbon_plan) -> usize {
    // SAFETY: forwarded contract.
    unsafe { plan_at(p) }.map_or(0, |plan| plan.filter_bytes())
}

/// `uint64_t` words of scratch a streaming build (`ribbon_banding_init`)
/// needs; 0 for a NULL or uninitialized plan.
///
/// # Safety
/// `p` is NULL or points to a readable `ribbon_plan`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ribbon_plan_banding_scratch_words(p: *const ribbon_plan) -> usize {
    // SAFETY: forwarded contract.
    unsafe { plan_at(p) }.map_or(0, |plan| plan.banding_scratch_words())
}

/// The most keys a streaming build accepts before `RIBBON_ADD_FULL`; 0 for
/// a NULL or uninitialized plan.
///
/// # Safety
/// `p` is NULL or points to a readable `ribbon_plan`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ribbon_plan_banding_capacity(p: *const ribbon_plan) -> u64 {
    // SAFETY: forwarded contract.
    unsafe { plan_at(p) }.map_or(0, |plan| plan.banding_capacity() as u64)
}

/// A [`crate::bounds`] function for C codes; 0 for an unknown kind or
/// width or millibits past [`crate::MAX_MILLIBITS_PER_KEY`]; `SIZE_MAX`
/// for a key count past `size_t` (as past 2^40 keys).
fn bound(
    kind: u32,
    width: u32,
    num_keys: u64,
    millibits: u32,
    f: fn(Kind, Width, usize, u32) -> usize,
) -> usize {
    match (Kind::from_code(kind), Width::from_bits(width)) {
        (Some(kind), Some(width)) if millibits <= crate::MAX_MILLIBITS_PER_KEY => {
            match usize::try_from(num_keys) {
                Ok(n) => f(kind, width, n, millibits),
                // Keys past `usize` (32-bit targets): no plan takes them,
                // as past `MAX_KEYS`, so the bound saturates (but for a
                // kind that needs none of it).
                Err(_) => match f(kind, width, usize::MAX, millibits) {
                    0 => 0,
                    _ => usize::MAX,
                },
            }
        }
        _ => 0,
    }
}

/// `RIBBON_FILTER_BYTES_MAX` at run time ([`crate::bounds::max_filter_bytes`]).
#[unsafe(no_mangle)]
pub extern "C" fn ribbon_max_filter_bytes(
    kind: u32,
    width: u32,
    num_keys: u64,
    millibits: u32,
) -> usize {
    bound(kind, width, num_keys, millibits, bounds::max_filter_bytes)
}

/// `RIBBON_SCRATCH_WORDS_MAX` at run time ([`crate::bounds::max_scratch_words`]).
#[unsafe(no_mangle)]
pub extern "C" fn ribbon_max_scratch_words(
    kind: u32,
    width: u32,
    num_keys: u64,
    millibits: u32,
) -> usize {
    bound(kind, width, num_keys, millibits, bounds::max_scratch_words)
}

/// `RIBBON_BANDING_SCRATCH_WORDS_MAX` at run time
/// ([`crate::bounds::max_banding_scratch_words`]).
#[unsafe(no_mangle)]
pub extern "C" fn ribbon_max_banding_scratch_words(
    kind: u32,
    width: u32,
    num_keys: u64,
    millibits: u32,
) -> usize {
    bound(
        kind,
        width,
        num_keys,
        millibits,
        bounds::max_banding_scratch_words,
    )
}
