//! `ribbon_retrieval_plan` and `ribbon_retrieval`: a retrieval structure
//! (a value of a few bits for each key of a set) planned, built, opened
//! and queried, as filters are.

use super::build::build_args;
use super::plan::{check_word, key_count};
use super::pointers::{c_mut, c_ref};
use super::view::{ViewSlots, ViewStruct, batch, open_view, serialized_size, stored, stored_in};
use super::{RIBBON_ERR_INVALID_ARGUMENT, RIBBON_ERR_UNINITIALIZED, RIBBON_OK, status};
use crate::backend::Backend;
use crate::error::Error;
use crate::kernels::EvalKernels;
use crate::layered::Opened;
use crate::layout::Width;
use crate::probe::Parts;
use crate::retrieval::{RetrievalPlan, RetrievalRef};

/// Opaque, caller-allocated retrieval plan (`ribbon_retrieval_plan` in C).
#[repr(C)]
#[derive(Debug)]
pub struct ribbon_retrieval_plan {
    opaque: [u64; 8],
}

impl ribbon_retrieval_plan {
    /// An all-zero struct, as C's `= {0}`: to be filled in by its init
    /// function (Rust users of the C ABI need it for statics).
    pub const fn zeroed() -> ribbon_retrieval_plan {
        ribbon_retrieval_plan { opaque: [0; 8] }
    }
}

/// Opaque, caller-allocated retrieval view (`ribbon_retrieval` in C).
#[repr(C)]
#[derive(Debug)]
pub struct ribbon_retrieval {
    /// The structure's bytes, the magic, the view's fields, the check word.
    view: ViewSlots,
}

impl ribbon_retrieval {
    /// An all-zero struct, as C's `= {0}`: to be filled in by its open
    /// function (Rust users of the C ABI need it for statics).
    pub const fn zeroed() -> ribbon_retrieval {
        ribbon_retrieval {
            view: ViewSlots::ZEROED,
        }
    }
}

const RETRIEVAL_PLAN_MAGIC: u64 = 0x5242_4b5f_5250_4c01; // "RBK_RPL" v1
const RETRIEVAL_MAGIC: u64 = 0x5242_4b5f_5254_5601; // "RBK_RTV" v1

/// Packs a retrieval structure's width, value bits, backend and seed into
/// one word.
fn pack_retrieval(width: Width, value_bits: u32, backend: Option<Backend>, seed: u32) -> u64 {
    let backend = backend.map_or(0, |b| u64::from(b.code()) + 1);
    u64::from(width.bits())
        | (u64::from(value_bits & 0xff) << 8)
        | (backend << 16)
        | (u64::from(seed) << 32)
}

/// Unpacks [`pack_retrieval`]: width, value bits (1 to 64), backend, seed.
fn unpack_retrieval(word: u64) -> Option<(Width, u32, Option<Backend>, u32)> {
    let width = Width::from_bits((word & 0xff) as u32)?;
    let value_bits = ((word >> 8) & 0xff) as u32;
    if !(1..=crate::MAX_VALUE_BITS).contains(&value_bits) || (word >> 24) & 0xff != 0 {
        return None;
    }
    let backend = match (word >> 16) & 0xff {
        0 => None,
        code => Some(Backend::from_code(code as u32 - 1)?),
    };
    Some((width, value_bits, backend, (word >> 32) as u32))
}

/// Stores what [`load_retrieval_plan`] makes the plan from again: its
/// arguments and seed (the plan's sizing is integer math, the same on
/// every call).
fn store_retrieval_plan(
    p: &mut ribbon_retrieval_plan,
    width: Width,
    num_keys: usize,
    value_bits: u32,
    seed: u32,
) {
    let mut words = [0u64; 8];
    words[0] = RETRIEVAL_PLAN_MAGIC;
    words[1] = num_keys as u64;
    words[2] = pack_retrieval(width, value_bits, None, seed);
    words[7] = check_word(&words);
    p.opaque = words;
}

fn load_retrieval_plan(p: &ribbon_retrieval_plan) -> Result<RetrievalPlan, i32> {
    let w = &p.opaque;
    if w[0] != RETRIEVAL_PLAN_MAGIC || w[7] != check_word(w) || w[3..7] != [0; 4] {
        return Err(RIBBON_ERR_UNINITIALIZED);
    }
    let (width, value_bits, backend, seed) =
        unpack_retrieval(w[2]).ok_or(RIBBON_ERR_UNINITIALIZED)?;
    let num_keys = usize::try_from(w[1]).map_err(|_| RIBBON_ERR_UNINITIALIZED)?;
    if backend.is_some() {
        return Err(RIBBON_ERR_UNINITIALIZED);
    }
    RetrievalPlan::new(width, num_keys, value_bits)
        .map(|plan| plan.with_seed(seed))
        .map_err(Error::code)
}

/// The retrieval plan `p` points to, as [`super::plan::plan_at`] reads a
/// filter's.
///
/// # Safety
/// `p` is NULL or points to a readable `ribbon_retrieval_plan`.
unsafe fn retrieval_plan_at(p: *const ribbon_retrieval_plan) -> Result<RetrievalPlan, i32> {
    // SAFETY: forwarded contract.
    load_retrieval_plan(unsafe { c_ref(p) }?)
}

impl ViewStruct for ribbon_retrieval {
    const MAGIC: u64 = RETRIEVAL_MAGIC;

    #[inline(always)]
    fn slots(&self) -> &ViewSlots {
        &self.view
    }

    fn slots_mut(&mut self) -> &mut ViewSlots {
        &mut self.view
    }

    #[inline(always)]
    fn opened(bytes: &[u8], verify: bool, backend: Backend) -> Result<Opened, Error> {
        crate::retrieval::opened(bytes, verify, backend)
    }
}

/// Plans a retrieval structure for up to `num_keys` key hashes with values
/// of `value_bits` bits. See `include/ribbon_kernel.h`.
///
/// # Safety
/// `p` is NULL or points to a writable `ribbon_retrieval_plan`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ribbon_retrieval_plan_init(
    p: *mut ribbon_retrieval_plan,
    width: u32,
    num_keys: u64,
    value_bits: u32,
) -> i32 {
    let init = |p: &mut ribbon_retrieval_plan| {
        p.opaque = [0; 8];
        let width = Width::from_bits(width).ok_or(RIBBON_ERR_INVALID_ARGUMENT)?;
        let num_keys = key_count(num_keys)?;
        RetrievalPlan::new(width, num_keys, value_bits).map_err(Error::code)?;
        store_retrieval_plan(p, width, num_keys, value_bits, 0);
        Ok(())
    };
    // SAFETY: the caller passes NULL or a valid, writable
    // `ribbon_retrieval_plan`.
    status(unsafe { c_mut(p) }.and_then(init))
}

/// Sets the first seed builds with `p` try
/// ([`RetrievalPlan::with_seed`]), as [`super::ribbon_plan_set_seed`]
/// does.
///
/// # Safety
/// `p` is NULL or points to a writable `ribbon_retrieval_plan`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ribbon_retrieval_plan_set_seed(
    p: *mut ribbon_retrieval_plan,
    seed: u32,
) -> i32 {
    let set = |p: &mut ribbon_retrieval_plan| {
        load_retrieval_plan(p)?;
        // Loaded: the words hold a valid width and value bits.
        let (num_keys, packed) = (p.opaque[1], p.opaque[2]);
        match (usize::try_from(num_keys), unpack_retrieval(packed)) {
            (Ok(n), Some((width, bits, _, _))) => {
                store_retrieval_plan(p, width, n, bits, seed);
                Ok(())
            }
            _ => Err(RIBBON_ERR_UNINITIALIZED),
        }
    };
    // SAFETY: the caller passes NULL or a valid, writable
    // `ribbon_retrieval_plan`.
    status(unsafe { c_mut(p) }.and_then(set))
}

/// `uint64_t` words of scratch `ribbon_retrieval_build` needs; 0 for a
/// NULL or uninitialized plan.
///
/// # Safety
/// `p` is NULL or points to a readable `ribbon_retrieval_plan`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ribbon_retrieval_plan_scratch_words(
    p: *const ribbon_retrieval_plan,
) -> usize {
    // SAFETY: forwarded contract.
    unsafe { retrieval_plan_at(p) }.map_or(0, |plan| plan.scratch_words())
}

/// Serialized length of the structure a build writes (exact on Standard
/// Ribbon, the most on Bumped layers); 0 for a NULL or uninitialized plan.
///
/// # Safety
/// `p` is NULL or points to a readable `ribbon_retrieval_plan`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ribbon_retrieval_plan_bytes(p: *const ribbon_retrieval_plan) -> usize {
    // SAFETY: forwarded contract.
    unsafe { retrieval_plan_at(p) }.map_or(0, |plan| plan.retrieval_bytes())
}

/// Builds the retrieval structure mapping `hashes[i]` to `values[i]` for
/// `i < n` into `out` (any alignment).
///
/// As `ribbon_build`: checks `out` first (a NULL `out`, an `out_len` past
/// `isize::MAX` or overlapping buffers write nothing); every other
/// failure zeroes the first `min(out_len, HEADER_BYTES)` bytes of `out`
/// before anything else is checked.
///
/// # Safety
/// Each pointer is NULL or valid for its stated length: `hashes` and
/// `values` readable for `n` words, `scratch` writable for
/// `scratch_words` words, `out` writable for `out_len` bytes. Overlapping
/// regions (but for `hashes` and `values`, which are only read) are
/// refused.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ribbon_retrieval_build(
    p: *const ribbon_retrieval_plan,
    hashes: *const u64,
    values: *const u64,
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
            [hashes, values],
            n,
            (scratch, scratch_words),
            (out, out_len),
            load_retrieval_plan,
        )
    };
    match args {
        Ok((plan, [hashes, values], scratch, out)) => {
            match plan.build_in_place(hashes, values, scratch, out) {
                Ok(_) => RIBBON_OK,
                Err(e) => e.code(),
            }
        }
        Err(code) => code,
    }
}

/// The exact length of the serialized retrieval structure at `bytes` into
/// `*retrieval_len`, as `ribbon_filter_size` does for filters.
///
/// # Safety
/// `bytes` is NULL or readable for `len` bytes; `retrieval_len` is NULL
/// or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ribbon_retrieval_size(
    bytes: *const u8,
    len: usize,
    retrieval_len: *mut usize,
) -> i32 {
    // SAFETY: the caller's contract is `serialized_size`'s.
    status(unsafe { serialized_size(bytes, len, retrieval_len, RetrievalRef::serialized_len) })
}

/// Validates `len` bytes as a retrieval structure and fills in the view
/// `r`. A view inside the bytes it opens is refused before anything is
/// written.
///
/// # Safety
/// `r` is NULL or writable; `bytes` is NULL or readable for `len` bytes.
/// The bytes must stay alive and unchanged while `r` is used.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ribbon_retrieval_open(
    r: *mut ribbon_retrieval,
    bytes: *const u8,
    len: usize,
) -> i32 {
    // SAFETY: forwarded contract.
    status(unsafe { open_view(r, bytes, len, true) })
}

/// [`ribbon_retrieval_open`] without the checksum
/// ([`RetrievalRef::from_bytes_unverified`]: for bytes the caller
/// verified).
///
/// # Safety
/// As for [`ribbon_retrieval_open`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ribbon_retrieval_open_unverified(
    r: *mut ribbon_retrieval,
    bytes: *const u8,
    len: usize,
) -> i32 {
    // SAFETY: forwarded contract.
    status(unsafe { open_view(r, bytes, len, false) })
}

/// The value of `hash`: the one it was built with for a key of the set,
/// an arbitrary value below `2^value_bits` for any other hash; 0 for a
/// NULL or bad view (which a value cannot tell apart: the status of
/// `ribbon_retrieval_open`, or `ribbon_retrieval_get_batch`, says).
///
/// # Safety
/// `r` is NULL or a view filled in by `ribbon_retrieval_open` whose bytes
/// are still alive and unchanged.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ribbon_retrieval_get(r: *const ribbon_retrieval, hash: u64) -> u64 {
    // SAFETY: the caller passes NULL or a valid view whose bytes are alive.
    let view = unsafe { stored(r) };
    view.and_then(|v| v.answer::<EvalKernels<Parts>>(hash))
        .unwrap_or(0)
}

/// Writes the value of each of `n` hashes into `out`. An `out`
/// overlapping the hashes, the view's bytes or `r` is refused before
/// anything is written.
///
/// # Safety
/// `r` as for `ribbon_retrieval_get`; `hashes` NULL or readable for `n`
/// words; `out` NULL or writable for `n` words.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ribbon_retrieval_get_batch(
    r: *const ribbon_retrieval,
    hashes: *const u64,
    n: usize,
    out: *mut u64,
) -> i32 {
    let get_batch = |r: &ribbon_retrieval| {
        // SAFETY: the view's bytes are alive per the contract.
        let view = unsafe { stored_in(r) }?;
        let answer = |hashes: &[u64], out: &mut [u64]| view.answer_batch(hashes, out);
        // SAFETY: `hashes` and `out` as the contract says.
        unsafe { batch(r, view.bytes, hashes, n, out, answer) }
    };
    // SAFETY: the caller passes NULL or a valid `ribbon_retrieval`.
    status(unsafe { c_ref(r) }.and_then(get_batch))
}

/// Bits per value of the view (1 to 64); 0 for a NULL or bad view.
///
/// # Safety
/// As for `ribbon_retrieval_get`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ribbon_retrieval_value_bits(r: *const ribbon_retrieval) -> u32 {
    // SAFETY: forwarded contract.
    unsafe { stored(r) }.map_or(0, |v| v.value_bits())
}

/// The number of keys the view's structure was built from; 0 for a NULL
/// or bad view.
///
/// # Safety
/// As for `ribbon_retrieval_get`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ribbon_retrieval_keys(r: *const ribbon_retrieval) -> u64 {
    // SAFETY: forwarded contract.
    unsafe { stored(r) }.map_or(0, |v| v.num_keys())
}

/// The serialized length of the view's structure in bytes; 0 for a NULL or
/// bad view.
///
/// # Safety
/// As for `ribbon_retrieval_get`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ribbon_retrieval_bytes(r: *const ribbon_retrieval) -> usize {
    // SAFETY: forwarded contract.
    unsafe { stored(r) }.map_or(0, |v| v.bytes.len())
}
