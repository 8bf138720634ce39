//! The C ABI (feature `capi`): the functions of `include/ribbon_kernel.h`,
//! which is shown in full at the end of this page.
#![allow(non_camel_case_types)]
//!
//! Every function validates its pointers and lengths, refuses a written
//! buffer that overlaps another argument (`RIBBON_ERR_OVERLAP`, before it
//! writes anything), returns a status code and never panics or unwinds.
//! Plans, filter views, streaming bandings, retrieval plans and retrieval
//! views live in caller-owned opaque structs of `uint64_t`; their contents
//! are this module's business and carry a magic word and a check word, so
//! that a struct that was never initialized is refused rather than
//! trusted.
//!
//! # The header: `include/ribbon_kernel.h`
#![doc = concat!("```c\n", include_str!("../include/ribbon_kernel.h"), "```")]

use core::ffi::c_char;

use crate::backend::Backend;
use crate::band::{AddOutcome, Banding, BandingParts};
use crate::error::Error;
use crate::filter::{FilterRef, Validated};
use crate::kernels::{EvalKernels, QueryKernels};
use crate::kernels::{LayerKernels, kernel_choice};
use crate::layered::{FirstLayer, LayerSpan, first_layer_answer};
use crate::layout::{Geometry, HEADER_BYTES, Header, Kind, Width};
use crate::plan::Plan;
use crate::probe::Parts;
use crate::retrieval::{RetrievalPlan, RetrievalRef, RetrievalState};

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

/// A pointer an opaque struct keeps (a view's bytes, a banding's
/// scratch): a pointer-typed field, so that the pointer keeps the
/// provenance the caller gave it (which Miri checks) and is never rebuilt
/// from an integer, in a slot of the 8 bytes of a C `uint64_t` on every
/// target.
#[repr(C)]
#[derive(Clone, Copy)]
union PtrSlot {
    ptr: *const u8,
    word: u64,
}

impl PtrSlot {
    const NULL: PtrSlot = PtrSlot { word: 0 };

    fn new(ptr: *const u8) -> PtrSlot {
        // The whole slot first (a pointer may be narrower), then the
        // pointer over it.
        let mut slot = PtrSlot::NULL;
        slot.ptr = ptr;
        slot
    }

    fn get(self) -> *const u8 {
        // SAFETY: every bit pattern is a raw pointer; one that C garbage
        // made has no provenance, and the struct's check word refuses it
        // before anything is read through it.
        unsafe { self.ptr }
    }
}

impl core::fmt::Debug for PtrSlot {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "{:p}", self.get())
    }
}

/// Opaque, caller-allocated filter view (`ribbon_filter` in C).
#[repr(C)]
#[derive(Debug)]
pub struct ribbon_filter {
    /// The filter's bytes.
    bytes: PtrSlot,
    /// The magic, the view's fields, the check word ([`view_words`]).
    words: [u64; VIEW_WORDS],
}

impl ribbon_filter {
    /// An all-zero struct, as C's `= {0}`: to be filled in by its init
    /// function (Rust users of the C ABI need it for statics).
    pub const fn zeroed() -> ribbon_filter {
        ribbon_filter {
            bytes: PtrSlot::NULL,
            words: [0; VIEW_WORDS],
        }
    }
}

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
    /// The structure's bytes.
    bytes: PtrSlot,
    /// The magic, the view's fields, the check word ([`view_words`]).
    words: [u64; VIEW_WORDS],
}

impl ribbon_retrieval {
    /// An all-zero struct, as C's `= {0}`: to be filled in by its open
    /// function (Rust users of the C ABI need it for statics).
    pub const fn zeroed() -> ribbon_retrieval {
        ribbon_retrieval {
            bytes: PtrSlot::NULL,
            words: [0; VIEW_WORDS],
        }
    }
}

// The structs are ABI: the header's `uint64_t opaque[N]` arrays, checked
// by the C test's static assertions too.
const _: () = {
    use core::mem::{align_of, size_of};
    assert!(size_of::<ribbon_plan>() == 64 && align_of::<ribbon_plan>() == align_of::<u64>());
    assert!(size_of::<ribbon_filter>() == 160 && align_of::<ribbon_filter>() == align_of::<u64>());
    assert!(
        size_of::<ribbon_banding>() == 128 && align_of::<ribbon_banding>() == align_of::<u64>()
    );
    assert!(
        size_of::<ribbon_retrieval_plan>() == 64
            && align_of::<ribbon_retrieval_plan>() == align_of::<u64>()
    );
    assert!(
        size_of::<ribbon_retrieval>() == 160 && align_of::<ribbon_retrieval>() == align_of::<u64>()
    );
};

/// Success.
pub const RIBBON_OK: i32 = 0;
/// A required pointer was NULL.
pub const RIBBON_ERR_NULL: i32 = -1;
/// An unknown kind, width or backend code.
pub const RIBBON_ERR_INVALID_ARGUMENT: i32 = -17;
/// A `uint64_t` pointer that is not 8-byte aligned.
pub const RIBBON_ERR_MISALIGNED: i32 = -18;
/// A plan, filter, banding or retrieval struct that no init/open call
/// filled in.
pub const RIBBON_ERR_UNINITIALIZED: i32 = -19;
/// Two buffers (or a buffer and a struct) given to one call overlap and one
/// of them is written; nothing was written.
pub const RIBBON_ERR_OVERLAP: i32 = -20;
/// `ribbon_set_backend` argument: return to the detected best backend.
pub const RIBBON_BACKEND_AUTO: u32 = 0xffff_ffff;

const PLAN_MAGIC: u64 = 0x5242_4b5f_504c_4e01; // "RBK_PLN" v1
const FILTER_MAGIC: u64 = 0x5242_4b5f_464c_5401; // "RBK_FLT" v1
const BANDING_MAGIC: u64 = 0x5242_4b5f_424e_4401; // "RBK_BND" v1
const RETRIEVAL_PLAN_MAGIC: u64 = 0x5242_4b5f_5250_4c01; // "RBK_RPL" v1
const RETRIEVAL_MAGIC: u64 = 0x5242_4b5f_5254_5601; // "RBK_RTV" v1

/// A cheap fold over every struct word but the last, which holds it:
/// catches structs never initialized.
fn check_word(words: &[u64]) -> u64 {
    let mut acc = 0x6a09_e667_f3bc_c908u64;
    for (i, w) in words.iter().take(words.len().saturating_sub(1)).enumerate() {
        acc = acc.rotate_left(17) ^ w ^ (i as u64);
    }
    acc
}

/// [`check_word`] of a struct that also keeps a pointer: its address
/// (not the pointer: no provenance is exposed) is folded in too.
fn check_word_with(words: &[u64], ptr: *const u8) -> u64 {
    check_word(words) ^ (ptr.addr() as u64).rotate_left(29)
}

/// Packs kind, width, lower columns, backend and seed into one word.
fn pack(g: &Geometry, backend: Option<Backend>, seed: u32) -> u64 {
    let backend = backend.map_or(0, |b| u64::from(b.code()) + 1);
    u64::from(g.kind.code())
        | (u64::from(g.width.bits()) << 8)
        | (u64::from(g.lower_columns) << 16)
        | (backend << 24)
        | (u64::from(seed) << 32)
}

/// Unpacks [`pack`]: geometry (re-validated), backend, seed.
fn unpack(
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

fn load_plan(p: &ribbon_plan) -> Result<Plan, i32> {
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

/// Words of a C view struct (filter or retrieval) after its bytes
/// pointer ([`view_words`] lays them out); the last is the check word.
const VIEW_WORDS: usize = 19;
/// Where a view struct's words hold the first layer's [`Parts`].
const PARTS_AT: usize = 8;
const CHECK_AT: usize = VIEW_WORDS - 1;
const _: () = assert!(PARTS_AT + Parts::WORDS <= CHECK_AT);

/// What an open decodes and a view struct keeps, filters and retrieval
/// alike: the bytes, the backend, the first layer (its [`Parts`] ready for
/// the kernels, so that a query builds nothing and costs what a Rust
/// view's query costs), and the view's own fields, which its accessors
/// read.
struct ViewFields<'a> {
    bytes: &'a [u8],
    backend: Backend,
    first: FirstLayer,
    /// The structure's `Kind` code.
    kind: u32,
    /// The header's seed (a Bumped structure's first layer has its own).
    seed: u32,
    /// Bits per value of a retrieval structure; 0 for a filter.
    value_bits: u32,
    num_keys: u64,
}

/// The words a view struct keeps for `view`, whose bytes the caller passed
/// as `ptr` (kept: it carries the caller's provenance, where the view's
/// slice carries a shared borrow's):
///
/// | word | holds |
/// |---|---|
/// | 0 | the struct's magic |
/// | 1 | the bytes' length |
/// | 2 | backend + 1 (bits 0-3), last-layer flag (4), kind (5-7), value bits (8-15), kernel choice (16-31), seed (high half) |
/// | 3 | keys |
/// | 4 to 7 | where the first layer's threshold groups, listed thresholds and payload start, where its payload ends |
/// | 8 to 17 | the first layer's [`Parts`], as its bytes (zero past them) |
/// | 18 | the check word ([`view_check`]) |
fn view_words(magic: u64, view: &ViewFields<'_>, ptr: *const u8) -> [u64; VIEW_WORDS] {
    let span = &view.first.span;
    let mut w = [0u64; VIEW_WORDS];
    w[0] = magic;
    w[1] = view.bytes.len() as u64;
    let choice = kernel_choice(view.backend, &view.first.parts.geometry);
    w[2] = (u64::from(view.backend.code() & 0x7) + 1)
        | (u64::from(span.last) << 4)
        | (u64::from(view.kind & 0x7) << 5)
        | (u64::from(view.value_bits & 0xff) << 8)
        | (u64::from(choice & 0xffff) << 16)
        | (u64::from(view.seed) << 32);
    w[3] = view.num_keys;
    w[4] = span.groups_at as u64;
    w[5] = span.listed_at as u64;
    w[6] = span.payload_at as u64;
    w[7] = span.payload_end as u64;
    // SAFETY: words `PARTS_AT..PARTS_AT + Parts::WORDS` lie inside `w`
    // (asserted with the constants), and `u64` is aligned for `Parts`
    // (its fields are at most 8-byte aligned). `Parts` has no padding, so
    // every byte written is initialized.
    unsafe {
        w.as_mut_ptr()
            .add(PARTS_AT)
            .cast::<Parts>()
            .write(view.first.parts)
    };
    w[CHECK_AT] = view_check(&w, ptr);
    w
}

/// The check word of a view struct's words and bytes pointer: the words
/// but the last xored together, with the pointer's address and a constant
/// (no chain and no rotation, so that the processor folds them a vector at
/// a time: a query checks its struct in a few instructions). A struct no
/// open filled in fails it but for one chance in 2^64; any change to one
/// word of a struct an open filled in fails it always.
#[inline(always)]
fn view_check(w: &[u64; VIEW_WORDS], ptr: *const u8) -> u64 {
    let folded = w[..CHECK_AT].iter().fold(0, |acc, word| acc ^ word);
    folded ^ 0x6a09_e667_f3bc_c908 ^ (ptr.addr() as u64).rotate_left(29)
}

/// A view struct's words, checked: what [`view_words`] stored.
struct CheckedView<'a> {
    bytes: &'a [u8],
    words: &'a [u64; VIEW_WORDS],
}

impl<'a> CheckedView<'a> {
    /// The first layer's parts, in the struct itself.
    #[inline(always)]
    fn parts(&self) -> &'a Parts {
        // SAFETY: the check word says an open wrote a `Parts` there
        // ([`view_words`]; inside the words and aligned as shown there), and
        // `CheckedView` is made only after checking it.
        unsafe { &*self.words.as_ptr().add(PARTS_AT).cast::<Parts>() }
    }

    #[inline(always)]
    fn backend(&self) -> Option<Backend> {
        Backend::from_code(((self.words[2] & 0xf) as u32).wrapping_sub(1))
    }

    /// The first layer's place in the bytes.
    #[inline(always)]
    fn span(&self) -> LayerSpan {
        let w = self.words;
        // The words were `usize` values when stored on this target.
        LayerSpan {
            groups_at: w[4] as usize,
            listed_at: w[5] as usize,
            payload_at: w[6] as usize,
            payload_end: w[7] as usize,
            last: (w[2] >> 4) & 1 == 1,
        }
    }

    fn kind(&self) -> u32 {
        ((self.words[2] >> 5) & 0x7) as u32
    }

    fn value_bits(&self) -> u32 {
        ((self.words[2] >> 8) & 0xff) as u32
    }

    /// The first layer's kernel choice ([`kernel_choice`]).
    #[inline(always)]
    fn choice(&self) -> u32 {
        ((self.words[2] >> 16) & 0xffff) as u32
    }

    fn seed(&self) -> u32 {
        (self.words[2] >> 32) as u32
    }

    fn num_keys(&self) -> u64 {
        self.words[3]
    }

    /// The answer for `hash`, through kernels `K`: the first layer's, or
    /// the later layers' for a key it bumped.
    #[inline(always)]
    fn answer<K: LayerKernels>(&self, hash: u64) -> Result<K::Answer, Error> {
        let backend = self.backend().ok_or(Error::CorruptHeader)?;
        first_layer_answer::<K>(
            self.choice(),
            self.parts(),
            self.span(),
            self.bytes,
            backend,
            hash,
        )
    }
}

/// The words of a view struct (`slot` and `w`) with magic `magic`, checked
/// against their check word (which refuses a struct no open filled in,
/// and any change to one that an open did); the first layer's ranges are
/// checked against the bytes by each query ([`first_layer_answer`]).
///
/// # Safety
/// The bytes the view was opened on are still alive (the documented
/// contract of the opens).
#[inline(always)]
unsafe fn load_view(
    magic: u64,
    slot: PtrSlot,
    w: &[u64; VIEW_WORDS],
) -> Result<CheckedView<'_>, i32> {
    let ptr = slot.get();
    if w[0] != magic || w[CHECK_AT] != view_check(w, ptr) || ptr.is_null() {
        return Err(RIBBON_ERR_UNINITIALIZED);
    }
    // A length past `isize::MAX` was never stored (an open refuses it).
    let len = w[1] as usize;
    if len > isize::MAX as usize {
        return Err(RIBBON_ERR_UNINITIALIZED);
    }
    // SAFETY: `ptr` and `len` were taken from a slice that an open
    // validated (the check word says this struct holds what that open
    // stored); the caller keeps those bytes alive.
    let bytes = unsafe { core::slice::from_raw_parts(ptr, len) };
    Ok(CheckedView { bytes, words: w })
}

/// Fills in `f` for `view`, whose bytes the caller passed as `bytes`.
fn store_filter(
    f: &mut ribbon_filter,
    view: &FilterRef<'_>,
    bytes: *const u8,
) -> Result<(), Error> {
    let v = view.validated();
    let fields = ViewFields {
        bytes: view.as_bytes(),
        backend: v.backend(),
        first: view.first_layer()?,
        kind: view.kind().code(),
        seed: v.seed,
        value_bits: 0,
        num_keys: v.num_keys,
    };
    f.words = view_words(FILTER_MAGIC, &fields, bytes);
    f.bytes = PtrSlot::new(bytes);
    Ok(())
}

/// What [`store_filter`] stored in `f`, checked.
///
/// # Safety
/// As for [`load_view`].
#[inline(always)]
unsafe fn load_stored_filter(f: &ribbon_filter) -> Result<CheckedView<'_>, i32> {
    // SAFETY: forwarded contract.
    unsafe { load_view(FILTER_MAGIC, f.bytes, &f.words) }
}

/// The whole view [`store_filter`] stored (for batches and the FP
/// accessors): its state made again from the struct's first layer, and
/// for a Bumped filter from the bytes.
///
/// # Safety
/// The bytes the view was opened on are still alive and unchanged (the
/// documented contract of `ribbon_filter_open`).
unsafe fn load_filter(f: &ribbon_filter) -> Result<FilterRef<'_>, i32> {
    // SAFETY: forwarded contract.
    let view = unsafe { load_stored_filter(f) }?;
    let kind = Kind::from_code(view.kind()).ok_or(RIBBON_ERR_UNINITIALIZED)?;
    let backend = view.backend().ok_or(RIBBON_ERR_UNINITIALIZED)?;
    let validated = if kind == Kind::Bumped {
        Validated::for_bumped(view.bytes, backend).map_err(|_| RIBBON_ERR_UNINITIALIZED)?
    } else {
        let header = Header {
            geometry: view.parts().geometry,
            seed: view.seed(),
            num_keys: view.num_keys(),
        };
        if header.geometry.kind != kind || view.bytes.len() != header.geometry.filter_bytes() {
            return Err(RIBBON_ERR_UNINITIALIZED);
        }
        // Never runs a kernel this CPU lacks, whatever the struct says:
        // the kernel table checks the backend again.
        Validated::new(&header, backend).map_err(Error::code)?
    };
    Ok(FilterRef::from_validated(validated, view.bytes))
}

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

/// Fills in `r` for `view`, whose bytes the caller passed as `bytes`.
fn store_retrieval(
    r: &mut ribbon_retrieval,
    view: &RetrievalRef<'_>,
    bytes: *const u8,
) -> Result<(), Error> {
    let fields = ViewFields {
        bytes: view.as_bytes(),
        backend: view.backend(),
        first: view.first_layer()?,
        kind: view.kind().code(),
        seed: view.seed(),
        value_bits: view.value_bits(),
        num_keys: view.num_keys(),
    };
    r.words = view_words(RETRIEVAL_MAGIC, &fields, bytes);
    r.bytes = PtrSlot::new(bytes);
    Ok(())
}

/// What [`store_retrieval`] stored in `r`, checked.
///
/// # Safety
/// As for [`load_view`].
#[inline(always)]
unsafe fn load_stored_retrieval(r: &ribbon_retrieval) -> Result<CheckedView<'_>, i32> {
    // SAFETY: forwarded contract.
    unsafe { load_view(RETRIEVAL_MAGIC, r.bytes, &r.words) }
}

/// The whole view [`store_retrieval`] stored (for batches): the bytes'
/// header decoded again, which must state what the struct does.
///
/// # Safety
/// The bytes the view was opened on are still alive and unchanged (the
/// documented contract of `ribbon_retrieval_open`).
unsafe fn load_retrieval(r: &ribbon_retrieval) -> Result<RetrievalRef<'_>, i32> {
    // SAFETY: forwarded contract.
    let stored = unsafe { load_stored_retrieval(r) }?;
    let backend = stored.backend().ok_or(RIBBON_ERR_UNINITIALIZED)?;
    let bytes = stored.bytes;
    // Never runs a kernel this CPU lacks, whatever the struct says: the
    // kernel table checks the backend again. Bytes that no longer decode
    // are a view gone bad.
    let state = RetrievalState::decode(bytes, backend).map_err(|e| match e {
        Error::BackendUnavailable => e.code(),
        _ => RIBBON_ERR_UNINITIALIZED,
    })?;
    let view = RetrievalRef::from_state(state, bytes);
    if view.width() != stored.parts().geometry.width
        || view.value_bits() != stored.value_bits()
        || view.num_keys() != stored.num_keys()
        || view.seed() != stored.seed()
    {
        return Err(RIBBON_ERR_UNINITIALIZED);
    }
    Ok(view)
}

/// A `&[T]` from C, refusing NULL (unless empty) and misalignment.
///
/// # Safety
/// When non-NULL, `ptr` points to `n` readable, initialized `T`.
unsafe fn c_slice<'a, T>(ptr: *const T, n: usize) -> Result<&'a [T], i32> {
    if n == 0 {
        return Ok(&[]);
    }
    check_array(ptr, n)?;
    // SAFETY: non-NULL, aligned, size checked; readable per the contract.
    Ok(unsafe { core::slice::from_raw_parts(ptr, n) })
}

/// A `&mut [T]` from C, with the checks of [`c_slice`], made from the
/// caller's pointer itself (whose provenance allows the writes).
///
/// # Safety
/// When non-NULL, `ptr` points to `n` writable, initialized `T` that
/// nothing else references while the slice lives.
unsafe fn c_slice_mut<'a, T>(ptr: *mut T, n: usize) -> Result<&'a mut [T], i32> {
    if n == 0 {
        return Ok(&mut []);
    }
    check_array(ptr.cast_const(), n)?;
    // SAFETY: non-NULL, aligned, size checked; writable and unaliased per
    // the contract.
    Ok(unsafe { core::slice::from_raw_parts_mut(ptr, n) })
}

/// The checks of a non-empty C array of `n` `T` at `ptr`, before a slice
/// is made of it: not NULL, aligned, at most `isize::MAX` bytes. Compares
/// the address only.
fn check_array<T>(ptr: *const T, n: usize) -> Result<(), i32> {
    if ptr.is_null() {
        return Err(RIBBON_ERR_NULL);
    }
    if !ptr.addr().is_multiple_of(core::mem::align_of::<T>()) {
        return Err(RIBBON_ERR_MISALIGNED);
    }
    if n > isize::MAX as usize / core::mem::size_of::<T>().max(1) {
        return Err(Error::TooLarge.code());
    }
    Ok(())
}

/// Whether the byte ranges `[a, a + a_bytes)` and `[b, b + b_bytes)`
/// share an address. Empty ranges and NULL pointers never overlap (NULL is
/// refused, or stands for an empty buffer, elsewhere); an end past the
/// address space counts as its top. Compares addresses only: nothing is
/// read and no reference is formed.
fn overlaps<A, B>(a: *const A, a_bytes: usize, b: *const B, b_bytes: usize) -> bool {
    if a.is_null() || b.is_null() || a_bytes == 0 || b_bytes == 0 {
        return false;
    }
    let (a, b) = (a.addr(), b.addr());
    a < b.saturating_add(b_bytes) && b < a.saturating_add(a_bytes)
}

/// The bytes `n` values of `T` take, for [`overlaps`]; 0 for a count no
/// object can have (past `isize::MAX` bytes), which the caller refuses as
/// too large before it makes a slice.
fn span<T>(n: usize) -> usize {
    match n.checked_mul(core::mem::size_of::<T>()) {
        Some(bytes) if bytes <= isize::MAX as usize => bytes,
        _ => 0,
    }
}

fn status(r: Result<(), Error>) -> i32 {
    match r {
        Ok(()) => RIBBON_OK,
        Err(e) => e.code(),
    }
}

fn plan_from(
    p: *mut ribbon_plan,
    kind: u32,
    width: u32,
    num_keys: u64,
    make: impl FnOnce(Kind, Width, usize) -> Result<Plan, Error>,
) -> i32 {
    // SAFETY: the caller passes NULL or a valid, writable `ribbon_plan`.
    let Some(p) = (unsafe { p.as_mut() }) else {
        return RIBBON_ERR_NULL;
    };
    p.opaque = [0; 8];
    let (Some(kind), Some(width)) = (Kind::from_code(kind), Width::from_bits(width)) else {
        return RIBBON_ERR_INVALID_ARGUMENT;
    };
    let Ok(num_keys) = usize::try_from(num_keys) else {
        return Error::TooManyKeys {
            limit: crate::MAX_KEYS as u64,
            given: num_keys,
        }
        .code();
    };
    match make(kind, width, num_keys) {
        Ok(plan) => {
            store_plan(p, &plan);
            RIBBON_OK
        }
        Err(e) => e.code(),
    }
}

/// `read` of the plan `p`, or 0 for a NULL or uninitialized plan.
///
/// # Safety
/// `p` is NULL or points to a readable `ribbon_plan`.
unsafe fn plan_value<T: Default>(p: *const ribbon_plan, read: impl FnOnce(Plan) -> T) -> T {
    // SAFETY: the caller passes NULL or a valid `ribbon_plan`.
    match unsafe { p.as_ref() }.map(load_plan) {
        Some(Ok(plan)) => read(plan),
        _ => T::default(),
    }
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
    plan_from(p, kind, width, num_keys, |k, w, n| {
        Plan::new(k, w, n, millibits_per_key)
    })
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
    plan_from(p, kind, width, num_keys, |k, w, n| {
        Plan::for_fp_rate(k, w, n, one_in)
    })
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
    plan_from(p, kind, width, num_keys, |k, w, n| {
        Plan::for_bytes(k, w, n, filter_bytes)
    })
}

/// `uint64_t` words of scratch `ribbon_build` needs; 0 for a NULL or
/// uninitialized plan.
///
/// # Safety
/// `p` is NULL or points to a readable `ribbon_plan`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ribbon_plan_scratch_words(p: *const ribbon_plan) -> usize {
    // SAFETY: forwarded contract.
    unsafe { plan_value(p, |plan| plan.scratch_words()) }
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
    // SAFETY: the caller passes NULL or a valid, writable `ribbon_plan`.
    let Some(p) = (unsafe { p.as_mut() }) else {
        return RIBBON_ERR_NULL;
    };
    match load_plan(p) {
        Ok(plan) => {
            store_plan(p, &plan.with_seed(seed));
            RIBBON_OK
        }
        Err(code) => code,
    }
}

/// Exact serialized filter length (for Bumped Ribbon the most a build
/// writes); 0 for a NULL or uninitialized plan.
///
/// # Safety
/// `p` is NULL or points to a readable `ribbon_plan`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ribbon_plan_filter_bytes(p: *const ribbon_plan) -> usize {
    // SAFETY: forwarded contract.
    unsafe { plan_value(p, |plan| plan.filter_bytes()) }
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
    bound(
        kind,
        width,
        num_keys,
        millibits,
        crate::bounds::max_filter_bytes,
    )
}

/// `RIBBON_SCRATCH_WORDS_MAX` at run time ([`crate::bounds::max_scratch_words`]).
#[unsafe(no_mangle)]
pub extern "C" fn ribbon_max_scratch_words(
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
        crate::bounds::max_scratch_words,
    )
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
        crate::bounds::max_banding_scratch_words,
    )
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
    if out.is_null() && out_len > 0 {
        return RIBBON_ERR_NULL;
    }
    if out_len > isize::MAX as usize {
        return Error::TooLarge.code();
    }
    let (hashes_bytes, scratch_bytes) = (span::<u64>(n), span::<u64>(scratch_words));
    let plan_bytes = core::mem::size_of::<ribbon_plan>();
    if overlaps(hashes, hashes_bytes, scratch, scratch_bytes)
        || overlaps(hashes, hashes_bytes, out, out_len)
        || overlaps(scratch, scratch_bytes, out, out_len)
        || overlaps(p, plan_bytes, scratch, scratch_bytes)
        || overlaps(p, plan_bytes, out, out_len)
    {
        return RIBBON_ERR_OVERLAP;
    }
    let header = out_len.min(HEADER_BYTES);
    if header > 0 {
        // SAFETY: `out` is non-NULL (`out_len > 0`) and writable for
        // `out_len >= header` bytes per the contract; it overlaps no other
        // argument, and nothing references it yet.
        unsafe { core::ptr::write_bytes(out, 0, header) };
    }
    // SAFETY: the caller passes NULL or a valid `ribbon_plan`.
    let Some(p) = (unsafe { p.as_ref() }) else {
        return RIBBON_ERR_NULL;
    };
    let plan = match load_plan(p) {
        Ok(plan) => plan,
        Err(code) => return code,
    };
    // SAFETY: readable for `n` words per the contract.
    let hashes = match unsafe { c_slice(hashes, n) } {
        Ok(h) => h,
        Err(code) => return code,
    };
    if scratch.is_null() && scratch_words > 0 {
        return RIBBON_ERR_NULL;
    }
    if !scratch.addr().is_multiple_of(core::mem::align_of::<u64>()) {
        return RIBBON_ERR_MISALIGNED;
    }
    if scratch_words > isize::MAX as usize / 8 {
        return Error::TooLarge.code();
    }
    let scratch: &mut [u64] = if scratch_words == 0 {
        &mut []
    } else {
        // SAFETY: non-NULL, aligned, at most `isize::MAX` bytes, writable
        // for `scratch_words` words per the contract, and overlapping
        // neither the hashes nor `out` (checked above).
        unsafe { core::slice::from_raw_parts_mut(scratch, scratch_words) }
    };
    let out: &mut [u8] = if out_len == 0 {
        &mut []
    } else {
        // SAFETY: non-NULL, at most `isize::MAX` bytes, writable for
        // `out_len` bytes per the contract, overlapping neither the hashes
        // nor the scratch (checked above).
        unsafe { core::slice::from_raw_parts_mut(out, out_len) }
    };
    status(plan.build_in_place(hashes, scratch, out).map(|_| ()))
}

/// `uint64_t` words of scratch a streaming build (`ribbon_banding_init`)
/// needs; 0 for a NULL or uninitialized plan.
///
/// # Safety
/// `p` is NULL or points to a readable `ribbon_plan`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ribbon_plan_banding_scratch_words(p: *const ribbon_plan) -> usize {
    // SAFETY: forwarded contract.
    unsafe { plan_value(p, |plan| plan.banding_scratch_words()) }
}

/// The most keys a streaming build accepts before `RIBBON_ADD_FULL`; 0 for
/// a NULL or uninitialized plan.
///
/// # Safety
/// `p` is NULL or points to a readable `ribbon_plan`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ribbon_plan_banding_capacity(p: *const ribbon_plan) -> u64 {
    // SAFETY: forwarded contract.
    unsafe { plan_value(p, |plan| plan.banding_capacity() as u64) }
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
    let (banding_bytes, plan_bytes) = (
        core::mem::size_of::<ribbon_banding>(),
        core::mem::size_of::<ribbon_plan>(),
    );
    let scratch_bytes = span::<u64>(scratch_words);
    if overlaps(b, banding_bytes, scratch, scratch_bytes)
        || overlaps(b, banding_bytes, p, plan_bytes)
        || overlaps(p, plan_bytes, scratch, scratch_bytes)
    {
        return RIBBON_ERR_OVERLAP;
    }
    // SAFETY: the caller passes NULL or a valid, writable `ribbon_banding`.
    let Some(b) = (unsafe { b.as_mut() }) else {
        return RIBBON_ERR_NULL;
    };
    *b = ribbon_banding::zeroed();
    // SAFETY: the caller passes NULL or a valid `ribbon_plan`.
    let Some(p) = (unsafe { p.as_ref() }) else {
        return RIBBON_ERR_NULL;
    };
    let plan = match load_plan(p) {
        Ok(plan) => plan,
        Err(code) => return code,
    };
    if scratch.is_null() {
        return RIBBON_ERR_NULL;
    }
    if !scratch.addr().is_multiple_of(core::mem::align_of::<u64>()) {
        return RIBBON_ERR_MISALIGNED;
    }
    if scratch_words > isize::MAX as usize / 8 {
        return Error::TooLarge.code();
    }
    // SAFETY: non-NULL, aligned and writable for `scratch_words` words per
    // the contract, and apart from `b` and `p` (checked above).
    let rows = unsafe { core::slice::from_raw_parts_mut(scratch, scratch_words) };
    match plan.banding(rows) {
        Ok(banding) => {
            store_banding(b, &banding, scratch, scratch_words);
            RIBBON_OK
        }
        Err(e) => e.code(),
    }
}

/// Adds one key hash: `RIBBON_ADD_*` (0 or more), or a negative status.
///
/// # Safety
/// `b` is NULL or a banding started by `ribbon_banding_init` whose scratch
/// is still alive (its contract).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ribbon_banding_add(b: *mut ribbon_banding, hash: u64) -> i32 {
    // SAFETY: the caller passes NULL or a valid, writable `ribbon_banding`.
    let Some(b) = (unsafe { b.as_mut() }) else {
        return RIBBON_ERR_NULL;
    };
    // SAFETY: the banding's scratch is alive per the contract.
    let (mut banding, scratch, words) = match unsafe { load_banding(b) } {
        Ok(loaded) => loaded,
        Err(code) => return code,
    };
    let outcome = banding.add(hash);
    if matches!(outcome, AddOutcome::Inserted | AddOutcome::Redundant) {
        store_banding(b, &banding, scratch, words);
    }
    outcome.code() as i32
}

/// Keys added so far (0 for a NULL or uninitialized banding).
///
/// # Safety
/// `b` is NULL or a banding started by `ribbon_banding_init` whose scratch
/// is still alive.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ribbon_banding_added(b: *const ribbon_banding) -> u64 {
    // SAFETY: the caller passes NULL or a valid `ribbon_banding`.
    let Some(b) = (unsafe { b.as_ref() }) else {
        return 0;
    };
    // SAFETY: the banding's scratch is alive per the contract.
    match unsafe { load_banding(b) } {
        Ok((banding, _, _)) => banding.added(),
        Err(_) => 0,
    }
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
    // SAFETY: the caller passes NULL or a valid, writable `ribbon_banding`.
    let Some(b) = (unsafe { b.as_mut() }) else {
        return RIBBON_ERR_NULL;
    };
    // SAFETY: the banding's scratch is alive per the contract.
    let (banding, scratch, words) = match unsafe { load_banding(b) } {
        Ok(loaded) => loaded,
        Err(code) => return code,
    };
    if out.is_null() {
        return RIBBON_ERR_NULL;
    }
    if out_len > isize::MAX as usize {
        return Error::TooLarge.code();
    }
    let struct_bytes = core::mem::size_of::<ribbon_banding>();
    if overlaps(out, out_len, scratch, span::<u64>(words))
        || overlaps(out, out_len, core::ptr::from_ref(b), struct_bytes)
    {
        return RIBBON_ERR_OVERLAP;
    }
    // SAFETY: non-NULL, at most `isize::MAX` bytes, writable for `out_len`
    // bytes per the contract, and apart from the scratch and `b` (checked
    // above).
    let out = unsafe { core::slice::from_raw_parts_mut(out, out_len) };
    // `solve_into` fails only before it writes (`out` too short), which
    // keeps "on error nothing is written" exact.
    match banding.solve_into(out) {
        Ok(()) => {
            *b = ribbon_banding::zeroed();
            RIBBON_OK
        }
        Err(e) => e.code(),
    }
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
    unsafe { open_view(f, bytes, len, true) }
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
    unsafe { open_view(f, bytes, len, false) }
}

/// The view structs an open fills in, each with its validation.
trait OpenedView {
    /// The struct before an open fills it in.
    const ZEROED: Self;
    /// Validates `bytes` (which the caller passed as `ptr`; with the
    /// checksum when `verify`) and fills in `self`.
    fn fill(&mut self, bytes: &[u8], ptr: *const u8, verify: bool) -> Result<(), Error>;
}

impl OpenedView for ribbon_filter {
    const ZEROED: ribbon_filter = ribbon_filter::zeroed();
    fn fill(&mut self, bytes: &[u8], ptr: *const u8, verify: bool) -> Result<(), Error> {
        let view = match verify {
            true => FilterRef::from_bytes(bytes)?,
            false => FilterRef::from_bytes_unverified(bytes)?,
        };
        store_filter(self, &view, ptr)
    }
}

impl OpenedView for ribbon_retrieval {
    const ZEROED: ribbon_retrieval = ribbon_retrieval::zeroed();
    fn fill(&mut self, bytes: &[u8], ptr: *const u8, verify: bool) -> Result<(), Error> {
        let view = match verify {
            true => RetrievalRef::from_bytes(bytes)?,
            false => RetrievalRef::from_bytes_unverified(bytes)?,
        };
        store_retrieval(self, &view, ptr)
    }
}

/// The four opens (filter and retrieval, verified or not): a struct
/// inside the bytes it opens is refused before anything is written;
/// otherwise `view` is zeroed, then filled in if the bytes validate.
///
/// # Safety
/// `view` is NULL or writable; `bytes` is NULL or readable for `len`
/// bytes.
unsafe fn open_view<V: OpenedView>(
    view: *mut V,
    bytes: *const u8,
    len: usize,
    verify: bool,
) -> i32 {
    if overlaps(view, core::mem::size_of::<V>(), bytes, span::<u8>(len)) {
        return RIBBON_ERR_OVERLAP;
    }
    // SAFETY: the caller passes NULL or a valid, writable struct.
    let Some(view) = (unsafe { view.as_mut() }) else {
        return RIBBON_ERR_NULL;
    };
    *view = V::ZEROED;
    if bytes.is_null() {
        return RIBBON_ERR_NULL;
    }
    if len > isize::MAX as usize {
        return Error::TooLarge.code();
    }
    // SAFETY: non-NULL and readable for `len` bytes per the contract.
    let slice = unsafe { core::slice::from_raw_parts(bytes, len) };
    status(view.fill(slice, bytes, verify))
}

/// 1 if `hash` may be in the filter, 0 if not, a negative status on error.
///
/// # Safety
/// `f` is NULL or a view filled in by `ribbon_filter_open` whose bytes are
/// still alive and unchanged.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ribbon_contains(f: *const ribbon_filter, hash: u64) -> i32 {
    // SAFETY: the caller passes NULL or a valid `ribbon_filter`.
    let Some(f) = (unsafe { f.as_ref() }) else {
        return RIBBON_ERR_NULL;
    };
    // SAFETY: the view's bytes are alive per the contract.
    match unsafe { load_stored_filter(f) } {
        Ok(view) => match view.answer::<QueryKernels<Parts>>(hash) {
            Ok(answer) => i32::from(answer),
            // As `load_filter` answers: the kernel table refuses a backend
            // this CPU lacks; bytes that no longer hold the layer are a
            // view gone bad.
            Err(e @ Error::BackendUnavailable) => e.code(),
            Err(_) => RIBBON_ERR_UNINITIALIZED,
        },
        Err(code) => code,
    }
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
    // SAFETY: the caller passes NULL or a valid `ribbon_filter`.
    let Some(f) = (unsafe { f.as_ref() }) else {
        return RIBBON_ERR_NULL;
    };
    // SAFETY: the view's bytes are alive per the contract.
    let view = match unsafe { load_filter(f) } {
        Ok(view) => view,
        Err(code) => return code,
    };
    // SAFETY: readable for `n` words per the contract.
    let hashes = match unsafe { c_slice(hashes, n) } {
        Ok(h) => h,
        Err(code) => return code,
    };
    if n == 0 {
        return RIBBON_OK;
    }
    let filter = view.as_bytes();
    if overlaps(out, n, hashes.as_ptr(), core::mem::size_of_val(hashes))
        || overlaps(out, n, filter.as_ptr(), filter.len())
        || overlaps(
            out,
            n,
            core::ptr::from_ref(f),
            core::mem::size_of::<ribbon_filter>(),
        )
    {
        return RIBBON_ERR_OVERLAP;
    }
    // SAFETY: writable for `n` bytes per the contract, and apart from the
    // hashes, the filter and `f` (checked above).
    let bytes = match unsafe { c_slice_mut(out, n) } {
        Ok(bytes) => bytes,
        Err(code) => return code,
    };
    // Zero first: every byte is then a valid `false`, so the buffer can be
    // answered in place, with no copy and no chunking that would restart
    // the kernels' prefetch pipeline.
    bytes.fill(0);
    // SAFETY: `bool` has the size and alignment of `u8`, every byte now
    // holds 0 (`false`), and the slice is the only reference to it while
    // `answers` lives; the kernels store only `true` or `false`.
    let answers = unsafe { core::slice::from_raw_parts_mut(bytes.as_mut_ptr().cast::<bool>(), n) };
    if let Err(e) = view.contains_batch(hashes, answers) {
        return e.code();
    }
    RIBBON_OK
}

/// `read` of the view `f`, or 0 for a NULL or bad view.
///
/// # Safety
/// As for `ribbon_contains`.
unsafe fn view_value(f: *const ribbon_filter, read: impl FnOnce(FilterRef<'_>) -> u64) -> u64 {
    // SAFETY: the caller passes NULL or a valid `ribbon_filter`.
    let Some(f) = (unsafe { f.as_ref() }) else {
        return 0;
    };
    // SAFETY: the view's bytes are alive per the contract.
    match unsafe { load_filter(f) } {
        Ok(view) => read(view),
        Err(_) => 0,
    }
}

/// The FP rate of the view's columns in ppt; 0 for a NULL or bad view.
///
/// # Safety
/// As for `ribbon_contains`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ribbon_filter_column_fp_ppt(f: *const ribbon_filter) -> u64 {
    // SAFETY: forwarded contract.
    unsafe { view_value(f, |view| view.column_fp_ppt()) }
}

/// The view's FP rate measured from its bytes, in ppt; 0 for a NULL or bad
/// view.
///
/// # Safety
/// As for `ribbon_contains`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ribbon_filter_estimated_fp_ppt(f: *const ribbon_filter) -> u64 {
    // SAFETY: forwarded contract.
    unsafe { view_value(f, |view| view.estimated_fp_ppt()) }
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
    // SAFETY: the caller passes NULL or a valid, writable
    // `ribbon_retrieval_plan`.
    let Some(p) = (unsafe { p.as_mut() }) else {
        return RIBBON_ERR_NULL;
    };
    p.opaque = [0; 8];
    let Some(width) = Width::from_bits(width) else {
        return RIBBON_ERR_INVALID_ARGUMENT;
    };
    let Ok(num_keys) = usize::try_from(num_keys) else {
        return Error::TooManyKeys {
            limit: crate::MAX_KEYS as u64,
            given: num_keys,
        }
        .code();
    };
    match RetrievalPlan::new(width, num_keys, value_bits) {
        Ok(_) => {
            store_retrieval_plan(p, width, num_keys, value_bits, 0);
            RIBBON_OK
        }
        Err(e) => e.code(),
    }
}

/// Sets the first seed builds with `p` try
/// ([`RetrievalPlan::with_seed`]), as [`ribbon_plan_set_seed`] does.
///
/// # Safety
/// `p` is NULL or points to a writable `ribbon_retrieval_plan`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ribbon_retrieval_plan_set_seed(
    p: *mut ribbon_retrieval_plan,
    seed: u32,
) -> i32 {
    // SAFETY: the caller passes NULL or a valid, writable
    // `ribbon_retrieval_plan`.
    let Some(p) = (unsafe { p.as_mut() }) else {
        return RIBBON_ERR_NULL;
    };
    if let Err(code) = load_retrieval_plan(p) {
        return code;
    }
    // Loaded: the words hold a valid width and value bits.
    let (num_keys, packed) = (p.opaque[1], p.opaque[2]);
    match (usize::try_from(num_keys), unpack_retrieval(packed)) {
        (Ok(n), Some((width, bits, _, _))) => {
            store_retrieval_plan(p, width, n, bits, seed);
            RIBBON_OK
        }
        _ => RIBBON_ERR_UNINITIALIZED,
    }
}

/// `read` of the retrieval plan `p`, or 0 for a NULL or uninitialized plan.
///
/// # Safety
/// `p` is NULL or points to a readable `ribbon_retrieval_plan`.
unsafe fn retrieval_plan_value(
    p: *const ribbon_retrieval_plan,
    read: impl FnOnce(RetrievalPlan) -> usize,
) -> usize {
    // SAFETY: the caller passes NULL or a valid `ribbon_retrieval_plan`.
    match unsafe { p.as_ref() }.map(load_retrieval_plan) {
        Some(Ok(plan)) => read(plan),
        _ => 0,
    }
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
    unsafe { retrieval_plan_value(p, |plan| plan.scratch_words()) }
}

/// Serialized length of the structure a build writes (exact on Standard
/// Ribbon, the most on Bumped layers); 0 for a NULL or uninitialized plan.
///
/// # Safety
/// `p` is NULL or points to a readable `ribbon_retrieval_plan`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ribbon_retrieval_plan_bytes(p: *const ribbon_retrieval_plan) -> usize {
    // SAFETY: forwarded contract.
    unsafe { retrieval_plan_value(p, |plan| plan.retrieval_bytes()) }
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
    if out.is_null() && out_len > 0 {
        return RIBBON_ERR_NULL;
    }
    if out_len > isize::MAX as usize {
        return Error::TooLarge.code();
    }
    let (keys_bytes, scratch_bytes) = (span::<u64>(n), span::<u64>(scratch_words));
    let plan_bytes = core::mem::size_of::<ribbon_retrieval_plan>();
    if overlaps(hashes, keys_bytes, scratch, scratch_bytes)
        || overlaps(hashes, keys_bytes, out, out_len)
        || overlaps(values, keys_bytes, scratch, scratch_bytes)
        || overlaps(values, keys_bytes, out, out_len)
        || overlaps(scratch, scratch_bytes, out, out_len)
        || overlaps(p, plan_bytes, scratch, scratch_bytes)
        || overlaps(p, plan_bytes, out, out_len)
    {
        return RIBBON_ERR_OVERLAP;
    }
    let header = out_len.min(HEADER_BYTES);
    if header > 0 {
        // SAFETY: `out` is non-NULL (`out_len > 0`) and writable for
        // `out_len >= header` bytes per the contract; it overlaps no other
        // argument, and nothing references it yet.
        unsafe { core::ptr::write_bytes(out, 0, header) };
    }
    // SAFETY: the caller passes NULL or a valid `ribbon_retrieval_plan`.
    let Some(p) = (unsafe { p.as_ref() }) else {
        return RIBBON_ERR_NULL;
    };
    let plan = match load_retrieval_plan(p) {
        Ok(plan) => plan,
        Err(code) => return code,
    };
    // SAFETY: readable for `n` words each per the contract.
    let (hashes, values) = match unsafe { (c_slice(hashes, n), c_slice(values, n)) } {
        (Ok(hashes), Ok(values)) => (hashes, values),
        (Err(code), _) | (_, Err(code)) => return code,
    };
    if scratch.is_null() && scratch_words > 0 {
        return RIBBON_ERR_NULL;
    }
    if !scratch.addr().is_multiple_of(core::mem::align_of::<u64>()) {
        return RIBBON_ERR_MISALIGNED;
    }
    if scratch_words > isize::MAX as usize / 8 {
        return Error::TooLarge.code();
    }
    let scratch: &mut [u64] = if scratch_words == 0 {
        &mut []
    } else {
        // SAFETY: non-NULL, aligned, at most `isize::MAX` bytes, writable
        // for `scratch_words` words per the contract, and overlapping
        // neither the hashes, the values nor `out` (checked above).
        unsafe { core::slice::from_raw_parts_mut(scratch, scratch_words) }
    };
    let out: &mut [u8] = if out_len == 0 {
        &mut []
    } else {
        // SAFETY: non-NULL, at most `isize::MAX` bytes, writable for
        // `out_len` bytes per the contract, overlapping neither the hashes,
        // the values nor the scratch (checked above).
        unsafe { core::slice::from_raw_parts_mut(out, out_len) }
    };
    status(
        plan.build_in_place(hashes, values, scratch, out)
            .map(|_| ()),
    )
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
    unsafe { open_view(r, bytes, len, true) }
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
    unsafe { open_view(r, bytes, len, false) }
}

/// `read` of the retrieval view `r`, or 0 for a NULL or bad view.
///
/// # Safety
/// As for `ribbon_retrieval_get`.
unsafe fn retrieval_value(
    r: *const ribbon_retrieval,
    read: impl FnOnce(&CheckedView<'_>) -> u64,
) -> u64 {
    // SAFETY: the caller passes NULL or a valid `ribbon_retrieval`.
    let Some(r) = (unsafe { r.as_ref() }) else {
        return 0;
    };
    // SAFETY: the view's bytes are alive per the contract.
    match unsafe { load_stored_retrieval(r) } {
        Ok(view) => read(&view),
        Err(_) => 0,
    }
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
    // SAFETY: the caller passes NULL or a valid `ribbon_retrieval`.
    let Some(r) = (unsafe { r.as_ref() }) else {
        return 0;
    };
    // SAFETY: the view's bytes are alive per the contract.
    match unsafe { load_stored_retrieval(r) } {
        Ok(view) => view.answer::<EvalKernels<Parts>>(hash).unwrap_or(0),
        Err(_) => 0,
    }
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
    // SAFETY: the caller passes NULL or a valid `ribbon_retrieval`.
    let Some(r) = (unsafe { r.as_ref() }) else {
        return RIBBON_ERR_NULL;
    };
    // SAFETY: the view's bytes are alive per the contract.
    let view = match unsafe { load_retrieval(r) } {
        Ok(view) => view,
        Err(code) => return code,
    };
    // SAFETY: readable for `n` words per the contract.
    let hashes = match unsafe { c_slice(hashes, n) } {
        Ok(h) => h,
        Err(code) => return code,
    };
    if n == 0 {
        return RIBBON_OK;
    }
    let bytes = view.as_bytes();
    let out_bytes = span::<u64>(n);
    if overlaps(
        out,
        out_bytes,
        hashes.as_ptr(),
        core::mem::size_of_val(hashes),
    ) || overlaps(out, out_bytes, bytes.as_ptr(), bytes.len())
        || overlaps(
            out,
            out_bytes,
            core::ptr::from_ref(r),
            core::mem::size_of::<ribbon_retrieval>(),
        )
    {
        return RIBBON_ERR_OVERLAP;
    }
    // SAFETY: writable for `n` words per the contract, and apart from the
    // hashes, the structure's bytes and `r` (checked above).
    let out = match unsafe { c_slice_mut(out, n) } {
        Ok(out) => out,
        Err(code) => return code,
    };
    status(view.get_batch(hashes, out))
}

/// Bits per value of the view (1 to 64); 0 for a NULL or bad view.
///
/// # Safety
/// As for `ribbon_retrieval_get`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ribbon_retrieval_value_bits(r: *const ribbon_retrieval) -> u32 {
    // SAFETY: forwarded contract.
    unsafe { retrieval_value(r, |view| u64::from(view.value_bits())) as u32 }
}

/// The number of keys the view's structure was built from; 0 for a NULL
/// or bad view.
///
/// # Safety
/// As for `ribbon_retrieval_get`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ribbon_retrieval_keys(r: *const ribbon_retrieval) -> u64 {
    // SAFETY: forwarded contract.
    unsafe { retrieval_value(r, |view| view.num_keys()) }
}

/// The serialized length of the view's structure in bytes; 0 for a NULL or
/// bad view.
///
/// # Safety
/// As for `ribbon_retrieval_get`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ribbon_retrieval_bytes(r: *const ribbon_retrieval) -> usize {
    // SAFETY: forwarded contract.
    unsafe { retrieval_value(r, |view| view.bytes.len() as u64) as usize }
}

/// The backend new views and builds use (`RIBBON_BACKEND_*`).
#[unsafe(no_mangle)]
pub extern "C" fn ribbon_backend() -> u32 {
    Backend::current().code()
}

/// Forces the backend for views opened and builds run afterwards, or
/// returns to detection with `RIBBON_BACKEND_AUTO`.
#[unsafe(no_mangle)]
pub extern "C" fn ribbon_set_backend(backend: u32) -> i32 {
    let choice = match backend {
        RIBBON_BACKEND_AUTO => None,
        code => match Backend::from_code(code) {
            Some(b) => Some(b),
            None => return RIBBON_ERR_INVALID_ARGUMENT,
        },
    };
    status(Backend::force(choice))
}

/// The library version as `(major << 16) | (minor << 8) | patch`; compare
/// with `RIBBON_VERSION_NUMBER` of the header a program was compiled with.
#[unsafe(no_mangle)]
pub extern "C" fn ribbon_version() -> u32 {
    VERSION_NUMBER
}

/// The library version as a static, NUL-terminated string ("0.1.0").
#[unsafe(no_mangle)]
pub extern "C" fn ribbon_version_str() -> *const c_char {
    VERSION_CSTR.as_ptr().cast()
}

const VERSION_MAJOR: u32 = parse_u32(env!("CARGO_PKG_VERSION_MAJOR"));
const VERSION_MINOR: u32 = parse_u32(env!("CARGO_PKG_VERSION_MINOR"));
const VERSION_PATCH: u32 = parse_u32(env!("CARGO_PKG_VERSION_PATCH"));
const VERSION_NUMBER: u32 = (VERSION_MAJOR << 16) | (VERSION_MINOR << 8) | VERSION_PATCH;
const VERSION_CSTR: &core::ffi::CStr =
    match core::ffi::CStr::from_bytes_with_nul(concat!(env!("CARGO_PKG_VERSION"), "\0").as_bytes())
    {
        Ok(s) => s,
        Err(_) => panic!("the package version has a NUL byte"),
    };

// The header's version macros must match Cargo.toml: checked at compile
// time, so a release cannot ship a stale header.
const HEADER: &str = include_str!("../include/ribbon_kernel.h");
const _: () = {
    assert!(header_define(HEADER, "RIBBON_VERSION_MAJOR") == VERSION_MAJOR);
    assert!(header_define(HEADER, "RIBBON_VERSION_MINOR") == VERSION_MINOR);
    assert!(header_define(HEADER, "RIBBON_VERSION_PATCH") == VERSION_PATCH);
    assert!(VERSION_MINOR < 256 && VERSION_PATCH < 256);
};

/// The decimal number at the start of `bytes[from..]` and its digit count
/// (compile-time helper).
const fn decimal_at(bytes: &[u8], from: usize) -> (u32, usize) {
    let (mut value, mut digits) = (0u32, 0);
    while from + digits < bytes.len() && bytes[from + digits].is_ascii_digit() {
        value = value * 10 + (bytes[from + digits] - b'0') as u32;
        digits += 1;
    }
    (value, digits)
}

/// `text` as a decimal number (compile-time helper; anything else fails
/// the build).
const fn parse_u32(text: &str) -> u32 {
    let (value, digits) = decimal_at(text.as_bytes(), 0);
    assert!(digits > 0 && digits == text.len());
    value
}

/// Where the value of `#define NAME ` starts in `text` (compile-time
/// helper; a missing macro fails the build).
const fn define_value_at(text: &[u8], name: &[u8]) -> usize {
    let prefix = b"#define ";
    let mut at = 0;
    while at + prefix.len() + name.len() < text.len() {
        let mut matches = true;
        let mut i = 0;
        while i < prefix.len() + name.len() + 1 {
            let want = if i < prefix.len() {
                prefix[i]
            } else if i < prefix.len() + name.len() {
                name[i - prefix.len()]
            } else {
                b' '
            };
            if text[at + i] != want {
                matches = false;
                break;
            }
            i += 1;
        }
        if matches {
            return at + prefix.len() + name.len() + 1;
        }
        at += 1;
    }
    panic!("a macro the ABI checks is missing from include/ribbon_kernel.h")
}

/// The value of `#define NAME <decimal>` in `text` (compile-time helper).
const fn header_define(text: &str, name: &str) -> u32 {
    let text = text.as_bytes();
    let (value, digits) = decimal_at(text, define_value_at(text, name.as_bytes()));
    assert!(digits > 0);
    value
}

/// The value of `#define NAME 0` or `#define NAME (-<decimal>)` in `text`:
/// a status code (compile-time helper).
const fn header_status(text: &str, name: &str) -> i32 {
    let text = text.as_bytes();
    let at = define_value_at(text, name.as_bytes());
    if at + 2 < text.len() && text[at] == b'(' && text[at + 1] == b'-' {
        let (value, digits) = decimal_at(text, at + 2);
        assert!(digits > 0 && at + 2 + digits < text.len() && text[at + 2 + digits] == b')');
        -(value as i32)
    } else {
        let (value, digits) = decimal_at(text, at);
        assert!(digits > 0);
        value as i32
    }
}

// The status codes only the C ABI has (the others are `Error::code`, which
// tests/c_abi.rs compares with the header) must match the header too.
const _: () = {
    assert!(header_status(HEADER, "RIBBON_OK") == RIBBON_OK);
    assert!(header_status(HEADER, "RIBBON_ERR_NULL") == RIBBON_ERR_NULL);
    assert!(header_status(HEADER, "RIBBON_ERR_INVALID_ARGUMENT") == RIBBON_ERR_INVALID_ARGUMENT);
    assert!(header_status(HEADER, "RIBBON_ERR_MISALIGNED") == RIBBON_ERR_MISALIGNED);
    assert!(header_status(HEADER, "RIBBON_ERR_UNINITIALIZED") == RIBBON_ERR_UNINITIALIZED);
    assert!(header_status(HEADER, "RIBBON_ERR_OVERLAP") == RIBBON_ERR_OVERLAP);
};

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
    unsafe { serialized_size(bytes, len, filter_len, FilterRef::serialized_len) }
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
    unsafe { serialized_size(bytes, len, retrieval_len, RetrievalRef::serialized_len) }
}

/// `length_of` the structure at `bytes` into `*out_len`: the checks of
/// `ribbon_filter_size` and `ribbon_retrieval_size`.
///
/// # Safety
/// `bytes` is NULL or readable for `len` bytes; `out_len` is NULL or
/// writable.
unsafe fn serialized_size(
    bytes: *const u8,
    len: usize,
    out_len: *mut usize,
    length_of: fn(&[u8]) -> Result<usize, Error>,
) -> i32 {
    if overlaps(
        out_len,
        core::mem::size_of::<usize>(),
        bytes,
        span::<u8>(len),
    ) {
        return RIBBON_ERR_OVERLAP;
    }
    // SAFETY: the caller passes NULL or a writable `size_t`, here apart
    // from the bytes (checked above).
    let Some(out) = (unsafe { out_len.as_mut() }) else {
        return RIBBON_ERR_NULL;
    };
    *out = 0;
    if bytes.is_null() {
        return RIBBON_ERR_NULL;
    }
    if len > isize::MAX as usize {
        return Error::TooLarge.code();
    }
    // SAFETY: non-NULL and readable for `len` bytes per the contract.
    let slice = unsafe { core::slice::from_raw_parts(bytes, len) };
    match length_of(slice) {
        Ok(n) => {
            *out = n;
            RIBBON_OK
        }
        Err(e) => e.code(),
    }
}

/// `read` of the view `f` as an `i32` status-or-value, or the error.
///
/// # Safety
/// As for `ribbon_contains`.
unsafe fn view_code(f: *const ribbon_filter, read: impl FnOnce(&CheckedView<'_>) -> i32) -> i32 {
    // SAFETY: the caller passes NULL or a valid `ribbon_filter`.
    let Some(f) = (unsafe { f.as_ref() }) else {
        return RIBBON_ERR_NULL;
    };
    // SAFETY: the view's bytes are alive per the contract.
    match unsafe { load_stored_filter(f) } {
        Ok(view) => read(&view),
        Err(code) => code,
    }
}

/// `read` of what the view struct `f` holds, or 0 for a NULL or bad view.
///
/// # Safety
/// As for `ribbon_contains`.
unsafe fn stored_value(f: *const ribbon_filter, read: impl FnOnce(&CheckedView<'_>) -> u64) -> u64 {
    // SAFETY: the caller passes NULL or a valid `ribbon_filter`.
    let Some(f) = (unsafe { f.as_ref() }) else {
        return 0;
    };
    // SAFETY: the view's bytes are alive per the contract.
    match unsafe { load_stored_filter(f) } {
        Ok(view) => read(&view),
        Err(_) => 0,
    }
}

/// The view's kind (`RIBBON_KIND_*`), or a negative status.
///
/// # Safety
/// As for `ribbon_contains`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ribbon_filter_kind(f: *const ribbon_filter) -> i32 {
    // SAFETY: forwarded contract.
    unsafe { view_code(f, |v| v.kind() as i32) }
}

/// The view's ribbon width in bits (64 or 128), or a negative status.
///
/// # Safety
/// As for `ribbon_contains`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ribbon_filter_width(f: *const ribbon_filter) -> i32 {
    // SAFETY: forwarded contract.
    unsafe { view_code(f, |v| v.parts().geometry.width.bits() as i32) }
}

/// The number of keys the view's filter was built from; 0 for a NULL or
/// bad view.
///
/// # Safety
/// As for `ribbon_contains`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ribbon_filter_keys(f: *const ribbon_filter) -> u64 {
    // SAFETY: forwarded contract.
    unsafe { stored_value(f, |v| v.num_keys()) }
}

/// The serialized length of the view's filter in bytes; 0 for a NULL or
/// bad view.
///
/// # Safety
/// As for `ribbon_contains`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ribbon_filter_bytes(f: *const ribbon_filter) -> usize {
    // SAFETY: forwarded contract.
    unsafe { stored_value(f, |v| v.bytes.len() as u64) as usize }
}

/// A static, NUL-terminated description of a status code.
#[unsafe(no_mangle)]
pub extern "C" fn ribbon_status_str(status: i32) -> *const c_char {
    let text: &'static core::ffi::CStr = match status {
        RIBBON_OK => c"ok",
        RIBBON_ERR_NULL => c"NULL pointer",
        RIBBON_ERR_INVALID_ARGUMENT => c"unknown kind, width or backend",
        RIBBON_ERR_MISALIGNED => c"uint64_t pointer not 8-byte aligned",
        RIBBON_ERR_UNINITIALIZED => c"plan, filter, banding or retrieval struct not initialized",
        RIBBON_ERR_OVERLAP => c"buffers overlap",
        code => match Error::ALL.iter().find(|e| e.code() == code) {
            Some(e) => e.message(),
            None => c"unknown status",
        },
    };
    text.as_ptr().cast()
}

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
    // SAFETY: readable for `n` entries per the contract.
    let (keys, lens) = match unsafe { (c_slice(keys, n), c_slice(lens, n)) } {
        (Ok(keys), Ok(lens)) => (keys, lens),
        (Err(code), _) | (_, Err(code)) => return code,
    };
    let out_bytes = span::<u64>(n);
    if overlaps(out, out_bytes, keys.as_ptr(), core::mem::size_of_val(keys))
        || overlaps(out, out_bytes, lens.as_ptr(), core::mem::size_of_val(lens))
    {
        return RIBBON_ERR_OVERLAP;
    }
    // SAFETY: writable for `n` words per the contract, and apart from the
    // two arrays (checked above); no key's bytes are referenced before the
    // loop below has checked them against it.
    let out = match unsafe { c_slice_mut(out, n) } {
        Ok(out) => out,
        Err(code) => return code,
    };
    for (&key, &len) in keys.iter().zip(lens) {
        if key.is_null() && len > 0 {
            return RIBBON_ERR_NULL;
        }
        if len > isize::MAX as usize {
            return Error::TooLarge.code();
        }
        if overlaps(key, len, out.as_ptr(), core::mem::size_of_val(out)) {
            return RIBBON_ERR_OVERLAP;
        }
    }
    for ((hash, &key), &len) in out.iter_mut().zip(keys).zip(lens) {
        // SAFETY: `key` is NULL only with length 0, else readable for
        // `len` bytes per the contract and apart from `out` (checked
        // above).
        *hash = crate::key_hash::hash_key(unsafe { key_bytes(key, len) });
    }
    RIBBON_OK
}

/// The static library (feature `staticlib`, without `std`) brings its own
/// panic handler; Rust `no_std` programs that use the C ABI through
/// feature `capi` bring theirs. No panic is reachable from the C functions
/// (a test checks the linked binary has no panic machinery); should one
/// ever happen, trap rather than unwind.
#[cfg(all(feature = "staticlib", not(feature = "std"), not(test)))]
#[panic_handler]
fn panic(_info: &core::panic::PanicInfo<'_>) -> ! {
    #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
    // SAFETY: `ud2` raises an invalid-opcode trap and touches no memory.
    unsafe {
        core::arch::asm!("ud2", options(nomem, nostack, noreturn));
    }
    #[cfg(any(target_arch = "arm", target_arch = "aarch64"))]
    // SAFETY: `udf` raises an undefined-instruction trap and touches no memory.
    unsafe {
        core::arch::asm!("udf #0", options(nomem, nostack, noreturn));
    }
    #[cfg(not(any(
        target_arch = "x86",
        target_arch = "x86_64",
        target_arch = "arm",
        target_arch = "aarch64"
    )))]
    loop {}
}

/// The precompiled `core` the static library bundles was built to unwind
/// and names an exception personality routine in its unwind tables. Nothing
/// here ever unwinds (release builds abort on panic, and no panic is
/// reachable), so the routine is never called; defining it keeps the
/// archive free of undefined symbols beyond `mem*`.
#[cfg(all(feature = "staticlib", not(feature = "std"), not(test)))]
#[unsafe(no_mangle)]
pub extern "C" fn rust_eh_personality() {}
