//! The pointer vocabulary of the C ABI: checked references and slices made
//! from C pointers (NULL, misalignment and impossible lengths refused with
//! a status, never trusted), the overlap test that keeps a written buffer
//! apart from every other argument, and the pointer slot the opaque
//! structs keep a caller's pointer in.

use super::{RIBBON_ERR_MISALIGNED, RIBBON_ERR_NULL};
use crate::error::Error;

/// A pointer an opaque struct keeps (a view's bytes, a banding's
/// scratch): a pointer-typed field, so that the pointer keeps the
/// provenance the caller gave it (which Miri checks) and is never rebuilt
/// from an integer, in a slot of the 8 bytes of a C `uint64_t` on every
/// target.
#[repr(C)]
#[derive(Clone, Copy)]
pub(super) union PtrSlot {
    ptr: *const u8,
    word: u64,
}

impl PtrSlot {
    pub(super) const NULL: PtrSlot = PtrSlot { word: 0 };

    pub(super) fn new(ptr: *const u8) -> PtrSlot {
        // The whole slot first (a pointer may be narrower), then the
        // pointer over it.
        let mut slot = PtrSlot::NULL;
        slot.ptr = ptr;
        slot
    }

    pub(super) fn get(self) -> *const u8 {
        // SAFETY: every bit pattern is a raw pointer; one that C garbage
        // made has no provenance, and the struct's check word refuses it
        // before anything is read through it.
        unsafe { self.ptr }
    }
}

impl PtrSlot {
    /// The slot's 8 bytes as an integer (the address, zero-extended where
    /// a pointer is narrower): what a struct's check covers, so that a
    /// change to the bytes past a 32-bit pointer is refused too.
    pub(super) fn bits(self) -> u64 {
        // SAFETY: every slot was written whole (`NULL`, then the pointer
        // over it), so all 8 bytes are initialized; reading them as an
        // integer only drops the pointer's provenance, which `bits` does
        // not give back.
        unsafe { self.word }
    }
}

impl core::fmt::Debug for PtrSlot {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "{:p}", self.get())
    }
}

/// A `&T` from C: NULL is `RIBBON_ERR_NULL`.
///
/// # Safety
/// `ptr` is NULL or points to a valid `T`, readable and not written
/// through another pointer while the reference lives.
#[inline(always)]
pub(super) unsafe fn c_ref<'a, T>(ptr: *const T) -> Result<&'a T, i32> {
    // SAFETY: NULL or valid per the contract.
    unsafe { ptr.as_ref() }.ok_or(RIBBON_ERR_NULL)
}

/// A `&mut T` from C: NULL is `RIBBON_ERR_NULL`.
///
/// # Safety
/// `ptr` is NULL or points to a valid, writable `T` that nothing else
/// references while the reference lives.
#[inline(always)]
pub(super) unsafe fn c_mut<'a, T>(ptr: *mut T) -> Result<&'a mut T, i32> {
    // SAFETY: NULL or valid and unaliased per the contract.
    unsafe { ptr.as_mut() }.ok_or(RIBBON_ERR_NULL)
}

/// A `&[T]` from C, refusing NULL (unless empty) and misalignment.
///
/// # Safety
/// When non-NULL, `ptr` points to `n` readable, initialized `T`.
pub(super) unsafe fn c_slice<'a, T>(ptr: *const T, n: usize) -> Result<&'a [T], i32> {
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
pub(super) unsafe fn c_slice_mut<'a, T>(ptr: *mut T, n: usize) -> Result<&'a mut [T], i32> {
    if n == 0 {
        return Ok(&mut []);
    }
    check_array(ptr.cast_const(), n)?;
    // SAFETY: non-NULL, aligned, size checked; writable and unaliased per
    // the contract.
    Ok(unsafe { core::slice::from_raw_parts_mut(ptr, n) })
}

/// A caller's scratch of `words` words, as [`c_slice_mut`] makes it, but
/// a misaligned pointer is refused even with no words.
///
/// # Safety
/// As for [`c_slice_mut`].
pub(super) unsafe fn c_scratch<'a>(ptr: *mut u64, words: usize) -> Result<&'a mut [u64], i32> {
    if !ptr.addr().is_multiple_of(core::mem::align_of::<u64>()) {
        return Err(RIBBON_ERR_MISALIGNED);
    }
    // SAFETY: forwarded contract.
    unsafe { c_slice_mut(ptr, words) }
}

/// The `len` bytes at `ptr` from C: NULL is refused even when empty, and
/// so is a length no object can have (past `isize::MAX`).
///
/// # Safety
/// When non-NULL, `ptr` points to `len` readable bytes.
pub(super) unsafe fn c_bytes<'a>(ptr: *const u8, len: usize) -> Result<&'a [u8], i32> {
    check_bytes(ptr, len)?;
    // SAFETY: non-NULL, at most `isize::MAX` bytes, readable per the
    // contract.
    Ok(unsafe { core::slice::from_raw_parts(ptr, len) })
}

/// [`c_bytes`], writable.
///
/// # Safety
/// When non-NULL, `ptr` points to `len` writable bytes that nothing else
/// references while the slice lives.
pub(super) unsafe fn c_bytes_mut<'a>(ptr: *mut u8, len: usize) -> Result<&'a mut [u8], i32> {
    check_bytes(ptr, len)?;
    // SAFETY: non-NULL, at most `isize::MAX` bytes, writable and unaliased
    // per the contract.
    Ok(unsafe { core::slice::from_raw_parts_mut(ptr, len) })
}

/// The checks of [`c_bytes`]: not NULL, at most `isize::MAX` bytes.
/// Compares the address only.
pub(super) fn check_bytes(ptr: *const u8, len: usize) -> Result<(), i32> {
    if ptr.is_null() {
        return Err(RIBBON_ERR_NULL);
    }
    if len > isize::MAX as usize {
        return Err(Error::TooLarge.code());
    }
    Ok(())
}

/// The checks of a non-empty C array of `n` `T` at `ptr`, before a slice
/// is made of it: not NULL, aligned, at most `isize::MAX` bytes. Compares
/// the address only.
pub(super) fn check_array<T>(ptr: *const T, n: usize) -> Result<(), i32> {
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
pub(super) fn overlaps<A, B>(a: *const A, a_bytes: usize, b: *const B, b_bytes: usize) -> bool {
    if a.is_null() || b.is_null() || a_bytes == 0 || b_bytes == 0 {
        return false;
    }
    let (a, b) = (a.addr(), b.addr());
    a < b.saturating_add(b_bytes) && b < a.saturating_add(a_bytes)
}

/// The bytes `n` values of `T` take, for [`overlaps`]; 0 for a count no
/// object can have (past `isize::MAX` bytes), which the caller refuses as
/// too large before it makes a slice.
pub(super) fn span<T>(n: usize) -> usize {
    match n.checked_mul(core::mem::size_of::<T>()) {
        Some(bytes) if bytes <= isize::MAX as usize => bytes,
        _ => 0,
    }
}
