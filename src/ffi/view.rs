//! What the two view structs (`ribbon_filter`, `ribbon_retrieval`) share:
//! the words an open stores and every call checks, the opens themselves,
//! the checks of a batch query's buffers, and the size query of a
//! serialized structure.

use super::pointers::{PtrSlot, c_bytes, c_mut, c_ref, c_slice, c_slice_mut, overlaps, span};
use super::{RIBBON_ERR_OVERLAP, RIBBON_ERR_UNINITIALIZED};
use crate::backend::Backend;
use crate::error::Error;
use crate::kernels::{Answer, LayerKernels, kernel_choice, resolved_one_ready};
use crate::layered::{LayerSpan, Opened, first_layer_answer, first_layer_batch};
use crate::layout::Kind;
use crate::probe::Parts;

/// Words of a C view struct (filter or retrieval) after its bytes
/// pointer ([`view_words`] lays them out); the last is the check word.
const VIEW_WORDS: usize = 19;
/// Where a view struct's words hold the first layer's [`LayerSpan`] and
/// [`Parts`].
const SPAN_AT: usize = 4;
const PARTS_AT: usize = 8;
const _: () = assert!(SPAN_AT + size_of::<LayerSpan>() / 8 == PARTS_AT);
const CHECK_AT: usize = VIEW_WORDS - 1;
const _: () = assert!(PARTS_AT + Parts::WORDS <= CHECK_AT);

/// Writes to `w` the words a view struct keeps for `view` of `len` bytes,
/// which the caller passed as `ptr` (kept: it carries the caller's
/// provenance, where a slice carries a shared borrow's). What an open
/// decodes ([`Opened`]: the first layer, its [`Parts`] ready for the
/// kernels so that a query builds nothing, and the header's fields that
/// the accessors read), filters and retrieval alike:
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
fn write_view_words(
    w: &mut [u64; VIEW_WORDS],
    magic: u64,
    view: &Opened,
    len: usize,
    ptr: *const u8,
) {
    let span = &view.first.span;
    *w = [0; VIEW_WORDS];
    w[0] = magic;
    w[1] = len as u64;
    let choice = kernel_choice(view.backend, &view.first.parts.geometry);
    w[2] = (u64::from(view.backend.code() & 0x7) + 1)
        | (u64::from(view.first.last) << 4)
        | (u64::from(view.kind.code() & 0x7) << 5)
        | (u64::from(view.value_bits & 0xff) << 8)
        | (u64::from(choice & 0xffff) << 16)
        | (u64::from(view.seed) << 32);
    w[3] = view.num_keys;
    w[SPAN_AT] = span.groups_at;
    w[SPAN_AT + 1] = span.listed_at;
    w[SPAN_AT + 2] = span.payload_at;
    w[SPAN_AT + 3] = span.payload_end;
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
    w[CHECK_AT] = view_check(w, PtrSlot::new(ptr).bits());
}

/// The check word of a view struct's words and bytes pointer slot: the
/// words but the last xored together, with the slot's bits (all 8 bytes,
/// also where a pointer has 4: [`PtrSlot::bits`]) and a constant
/// (no chain and no rotation, so that the processor folds them a vector at
/// a time: a query checks its struct in a few instructions). A struct no
/// open filled in fails it but for one chance in 2^64; any change to one
/// word of a struct an open filled in fails it always.
#[inline(always)]
fn view_check(w: &[u64; VIEW_WORDS], slot_bits: u64) -> u64 {
    let folded = w[..CHECK_AT].iter().fold(0, |acc, word| acc ^ word);
    folded ^ 0x6a09_e667_f3bc_c908 ^ slot_bits.rotate_left(29)
}

/// A view struct's words, checked: what [`write_view_words`] stored.
pub(super) struct CheckedView<'a> {
    pub(super) bytes: &'a [u8],
    words: &'a [u64; VIEW_WORDS],
}

impl<'a> CheckedView<'a> {
    /// The first layer's parts, in the struct itself.
    #[inline(always)]
    pub(super) fn parts(&self) -> &'a Parts {
        // SAFETY: the check word says an open wrote a `Parts` there
        // ([`write_view_words`]; inside the words and aligned as shown there), and
        // `CheckedView` is made only after checking it.
        unsafe { &*self.words.as_ptr().add(PARTS_AT).cast::<Parts>() }
    }

    #[inline(always)]
    pub(super) fn backend(&self) -> Option<Backend> {
        Backend::from_code(((self.words[2] & 0xf) as u32).wrapping_sub(1))
    }

    /// The first layer's place in the bytes, in the struct itself.
    #[inline(always)]
    pub(super) fn span(&self) -> &'a LayerSpan {
        // SAFETY: as for `parts`: words `SPAN_AT..PARTS_AT` hold a
        // `LayerSpan` (four `u64`, `repr(C)`) that an open wrote.
        unsafe { &*self.words.as_ptr().add(SPAN_AT).cast::<LayerSpan>() }
    }

    /// Whether no layer follows the first.
    #[inline(always)]
    pub(super) fn last(&self) -> bool {
        (self.words[2] >> 4) & 1 == 1
    }

    pub(super) fn kind(&self) -> u32 {
        ((self.words[2] >> 5) & 0x7) as u32
    }

    pub(super) fn value_bits(&self) -> u32 {
        ((self.words[2] >> 8) & 0xff) as u32
    }

    /// The first layer's kernel choice ([`kernel_choice`]).
    #[inline(always)]
    pub(super) fn choice(&self) -> u32 {
        ((self.words[2] >> 16) & 0xffff) as u32
    }

    pub(super) fn num_keys(&self) -> u64 {
        self.words[3]
    }

    /// Whether the structure has Bumped layers.
    #[inline(always)]
    pub(super) fn layered(&self) -> bool {
        self.kind() == Kind::Bumped.code()
    }

    /// The first layer's payload, as the span in the struct places it in
    /// the bytes (empty should the span not fit them; an open stores only
    /// spans that do).
    pub(super) fn first_payload(&self) -> &'a [u8] {
        self.span().payload(self.bytes).unwrap_or(&[])
    }

    /// Every hash's answer into `out` (of the same length), as
    /// [`CheckedView::answer`] gives one. The error is [`gone_bad`]'s.
    #[inline(always)]
    pub(super) fn answer_batch<A: Answer>(&self, hashes: &[u64], out: &mut [A]) -> Result<(), i32> {
        let backend = self.backend().ok_or(RIBBON_ERR_UNINITIALIZED)?;
        first_layer_batch(
            self.parts(),
            self.span(),
            self.layered(),
            self.last(),
            self.bytes,
            backend,
            hashes,
            out,
        )
        .map_err(gone_bad)
    }

    /// The answer for `hash`, through kernels `K`: the first layer's, or
    /// the later layers' for a key it bumped. The error is
    /// [`gone_bad`]'s.
    #[inline(always)]
    pub(super) fn answer<K: LayerKernels>(&self, hash: u64) -> Result<K::Answer, i32> {
        // [`first_layer_answer`]'s common case inline: one layer, its
        // kernel resolved already. Everything else goes out of line, so
        // that this path keeps nothing in registers across the kernel's
        // call (no saves: a C call costs what a Rust view's does).
        if self.last()
            && let Some(one) = resolved_one_ready::<K>(self.choice())
            && let Ok(payload) = self.span().payload(self.bytes)
        {
            return Ok(one(self.parts(), payload, hash));
        }
        self.any_answer::<K>(hash)
    }

    /// [`CheckedView::answer`] in every case.
    #[inline(never)]
    fn any_answer<K: LayerKernels>(&self, hash: u64) -> Result<K::Answer, i32> {
        let backend = self.backend().ok_or(RIBBON_ERR_UNINITIALIZED)?;
        first_layer_answer::<K>(
            self.choice(),
            self.parts(),
            self.span(),
            self.last(),
            self.bytes,
            backend,
            hash,
        )
        .map_err(gone_bad)
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
    if w[0] != magic || w[CHECK_AT] != view_check(w, slot.bits()) || ptr.is_null() {
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

/// The status of a query on a view whose checks passed but whose answer
/// failed: the kernel table refuses a backend this CPU lacks; bytes that
/// no longer hold what the open found are a view gone bad.
pub(super) fn gone_bad(e: Error) -> i32 {
    match e {
        Error::BackendUnavailable => e.code(),
        _ => RIBBON_ERR_UNINITIALIZED,
    }
}

/// What a view struct (`ribbon_filter`, `ribbon_retrieval`) holds: the
/// pointer to the bytes the caller opened, and the words [`view_words`]
/// lays out.
#[repr(C)]
#[derive(Debug)]
pub(super) struct ViewSlots {
    /// The structure's bytes.
    bytes: PtrSlot,
    /// The magic, the view's fields, the check word.
    words: [u64; VIEW_WORDS],
}

impl ViewSlots {
    /// The slots before an open fills them in.
    pub(super) const ZEROED: ViewSlots = ViewSlots {
        bytes: PtrSlot::NULL,
        words: [0; VIEW_WORDS],
    };
}

/// A view struct: `ribbon_filter` or `ribbon_retrieval`, alike but for
/// their magic and what their bytes must validate as.
pub(super) trait ViewStruct: Sized {
    /// The magic word of a struct an open filled in.
    const MAGIC: u64;
    /// What the struct holds.
    fn slots(&self) -> &ViewSlots;
    /// What the struct holds, to fill in.
    fn slots_mut(&mut self) -> &mut ViewSlots;
    /// Validates `bytes` (with the checksum when `verify`) as this
    /// struct's structure for `backend`, and what a view keeps of it.
    fn opened(bytes: &[u8], verify: bool, backend: Backend) -> Result<Opened, Error>;
}

/// The four opens (filter and retrieval, verified or not): a struct
/// inside the bytes it opens is refused before anything is written;
/// otherwise `view` is zeroed, then filled in if the bytes validate.
///
/// # Safety
/// `view` is NULL or writable; `bytes` is NULL or readable for `len`
/// bytes.
pub(super) unsafe fn open_view<V: ViewStruct>(
    view: *mut V,
    bytes: *const u8,
    len: usize,
    verify: bool,
) -> Result<(), i32> {
    if overlaps(view, core::mem::size_of::<V>(), bytes, span::<u8>(len)) {
        return Err(RIBBON_ERR_OVERLAP);
    }
    // SAFETY: the caller passes NULL or a valid, writable struct.
    let view = unsafe { c_mut(view) }?;
    *view.slots_mut() = ViewSlots::ZEROED;
    // SAFETY: NULL or readable for `len` bytes per the contract.
    let slice = unsafe { c_bytes(bytes, len) }?;
    let opened = V::opened(slice, verify, Backend::current());
    let opened = match &opened {
        Ok(opened) => opened,
        Err(e) => return Err(e.code()),
    };
    let slots = view.slots_mut();
    slots.bytes = PtrSlot::new(bytes);
    write_view_words(&mut slots.words, V::MAGIC, opened, len, bytes);
    Ok(())
}

/// What an open stored in `v`, checked: NULL is `RIBBON_ERR_NULL`, a
/// struct no open filled in (or changed since) `RIBBON_ERR_UNINITIALIZED`.
///
/// # Safety
/// `v` is NULL or points to a readable `V`; as for [`load_view`].
#[inline(always)]
pub(super) unsafe fn stored<'a, V: ViewStruct + 'a>(v: *const V) -> Result<CheckedView<'a>, i32> {
    // SAFETY: the caller passes NULL or a valid `V`.
    let v = unsafe { c_ref(v) }?;
    // SAFETY: forwarded contract.
    unsafe { stored_in(v) }
}

/// [`stored`] of a struct already referenced.
///
/// # Safety
/// As for [`load_view`].
#[inline(always)]
pub(super) unsafe fn stored_in<V: ViewStruct>(v: &V) -> Result<CheckedView<'_>, i32> {
    let slots = v.slots();
    // SAFETY: forwarded contract.
    unsafe { load_view(V::MAGIC, slots.bytes, &slots.words) }
}

/// A batch query of `n` hashes on the view struct `v` (whose structure's
/// bytes are `bytes`), answered into `out` by `answer`: an `out`
/// overlapping the hashes, the bytes or `v` is refused before anything
/// is written; no hashes is `RIBBON_OK` at once.
///
/// # Safety
/// `hashes` is NULL or readable for `n` words; `out` is NULL or writable
/// for `n` `T`.
#[inline(always)]
pub(super) unsafe fn batch<V: ViewStruct, T>(
    v: &V,
    bytes: &[u8],
    hashes: *const u64,
    n: usize,
    out: *mut T,
    answer: impl FnOnce(&[u64], &mut [T]) -> Result<(), i32>,
) -> Result<(), i32> {
    // SAFETY: readable for `n` words per the contract.
    let hashes = unsafe { c_slice(hashes, n) }?;
    if n == 0 {
        return Ok(());
    }
    let out_bytes = span::<T>(n);
    if overlaps(out, out_bytes, hashes.as_ptr(), size_of_val(hashes))
        || overlaps(out, out_bytes, bytes.as_ptr(), bytes.len())
        || overlaps(out, out_bytes, core::ptr::from_ref(v), size_of::<V>())
    {
        return Err(RIBBON_ERR_OVERLAP);
    }
    // SAFETY: writable for `n` values per the contract, and apart from the
    // hashes, the structure's bytes and `v` (checked above).
    let out = unsafe { c_slice_mut(out, n) }?;
    answer(hashes, out)
}

/// `length_of` the structure at `bytes` into `*out_len`: the checks of
/// `ribbon_filter_size` and `ribbon_retrieval_size`. `*out_len` is 0
/// after an error, except that an `out_len` inside the bytes is refused
/// without writing it.
///
/// # Safety
/// `bytes` is NULL or readable for `len` bytes; `out_len` is NULL or
/// writable.
#[inline(always)]
pub(super) unsafe fn serialized_size(
    bytes: *const u8,
    len: usize,
    out_len: *mut usize,
    length_of: fn(&[u8]) -> Result<usize, Error>,
) -> Result<(), i32> {
    if overlaps(out_len, size_of::<usize>(), bytes, span::<u8>(len)) {
        return Err(RIBBON_ERR_OVERLAP);
    }
    // SAFETY: the caller passes NULL or a writable `size_t`, here apart
    // from the bytes (checked above).
    let out = unsafe { c_mut(out_len) }?;
    *out = 0;
    // SAFETY: NULL or readable for `len` bytes per the contract.
    let bytes = unsafe { c_bytes(bytes, len) }?;
    *out = length_of(bytes).map_err(Error::code)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use crate::backend::Backend;
    use crate::layered::{FirstLayer, Opened};
    use crate::{Kind, Plan, RetrievalPlan, Width};

    fn hashes(n: u64) -> alloc::vec::Vec<u64> {
        (1..=n)
            .map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ 0x5bd1_e995)
            .collect()
    }

    /// `Opened` (what the C views keep) and a Rust view's state agree on
    /// the first layer, byte for byte, for every kind of both families:
    /// the C queries start where the Rust ones do. (Not under Miri: its
    /// 20,000-key builds take it half an hour there; tests/capi.rs opens
    /// and queries C views of every kind under Miri.)
    #[test]
    #[cfg_attr(
        miri,
        ignore = "20,000-key builds; tests/capi.rs covers the C opens under Miri"
    )]
    fn opened_first_layer_is_the_view_states() {
        let backend = Backend::current();
        let keys = hashes(20_000);
        for kind in [Kind::Standard, Kind::Homogeneous, Kind::Bumped] {
            for width in [Width::W64, Width::W128] {
                let plan = Plan::new(kind, width, keys.len(), 7_000).unwrap();
                let filter = crate::Filter::build(&plan, &keys).unwrap();
                let bytes = filter.as_bytes();
                for verify in [false, true] {
                    let opened = crate::filter::opened(bytes, verify, backend).unwrap();
                    let state = crate::FilterRef::from_bytes(bytes).unwrap().validated();
                    assert_same(&opened, &state.first_layer(), state.seed, state.num_keys);
                    assert_eq!(opened.kind, kind);
                }
            }
        }
        let values: alloc::vec::Vec<u64> = keys.iter().map(|h| h % 32).collect();
        for kind in [Kind::Standard, Kind::Bumped] {
            let plan = RetrievalPlan::new(Width::W64, keys.len(), 5)
                .unwrap()
                .with_kind(kind)
                .unwrap();
            let mut scratch = alloc::vec![0u64; plan.scratch_words()];
            let mut out = alloc::vec![0u8; plan.retrieval_bytes()];
            let len = plan
                .build(&keys, &values, &mut scratch, &mut out)
                .unwrap()
                .as_bytes()
                .len();
            let bytes = &out[..len];
            let opened = crate::retrieval::opened(bytes, true, backend).unwrap();
            let view = crate::RetrievalRef::from_bytes(bytes).unwrap();
            let state = view.state();
            assert_same(&opened, &state.first_layer(), state.seed, state.num_keys);
            assert_eq!((opened.kind, opened.value_bits), (kind, 5));
        }
    }

    fn assert_same(opened: &Opened, first: &FirstLayer, seed: u32, keys: u64) {
        assert_eq!(
            (opened.first.span, opened.first.last),
            (first.span, first.last)
        );
        assert_eq!(
            alloc::format!("{:?}", opened.first.parts),
            alloc::format!("{:?}", first.parts)
        );
        assert_eq!((opened.seed, opened.num_keys), (seed, keys));
    }
}
