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
#![doc = concat!("```c\n", include_str!("../../include/ribbon_kernel.h"), "```")]

// One file a C concept. Each `extern "C"` function is a thin wrapper:
// its work is an internal that returns `Result<_, i32>` (the error a
// status code), made from the checked pointers of `pointers`.
mod banding;
mod build;
mod filter;
mod keys;
mod plan;
mod pointers;
mod retrieval;
mod version;
mod view;

pub use self::banding::{
    ribbon_banding, ribbon_banding_add, ribbon_banding_added, ribbon_banding_finish,
    ribbon_banding_init,
};
pub use self::build::ribbon_build;
pub use self::filter::{
    ribbon_contains, ribbon_contains_batch, ribbon_filter, ribbon_filter_bytes,
    ribbon_filter_column_fp_ppt, ribbon_filter_estimated_fp_ppt, ribbon_filter_keys,
    ribbon_filter_kind, ribbon_filter_open, ribbon_filter_open_unverified, ribbon_filter_size,
    ribbon_filter_width,
};
pub use self::keys::{ribbon_hash_key, ribbon_hash_key_with_seed, ribbon_hash_keys};
pub use self::plan::{
    ribbon_max_banding_scratch_words, ribbon_max_filter_bytes, ribbon_max_scratch_words,
    ribbon_plan, ribbon_plan_banding_capacity, ribbon_plan_banding_scratch_words,
    ribbon_plan_filter_bytes, ribbon_plan_init, ribbon_plan_init_bytes, ribbon_plan_init_fp_rate,
    ribbon_plan_scratch_words, ribbon_plan_set_seed,
};
pub use self::retrieval::{
    ribbon_retrieval, ribbon_retrieval_build, ribbon_retrieval_bytes, ribbon_retrieval_get,
    ribbon_retrieval_get_batch, ribbon_retrieval_keys, ribbon_retrieval_open,
    ribbon_retrieval_open_unverified, ribbon_retrieval_plan, ribbon_retrieval_plan_bytes,
    ribbon_retrieval_plan_init, ribbon_retrieval_plan_scratch_words,
    ribbon_retrieval_plan_set_seed, ribbon_retrieval_size, ribbon_retrieval_value_bits,
};
pub use self::version::{
    ribbon_backend, ribbon_set_backend, ribbon_status_str, ribbon_version, ribbon_version_str,
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

/// The C status of an internal's result: `RIBBON_OK` or its error.
fn status(r: Result<(), i32>) -> i32 {
    match r {
        Ok(()) => RIBBON_OK,
        Err(code) => code,
    }
}

/// The C return of an internal that answers a value or a status: the
/// value (0 or more), or the (negative) status.
fn value_or_status(r: Result<i32, i32>) -> i32 {
    match r {
        Ok(value) | Err(value) => value,
    }
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
