//! Per-instruction-set kernels. The kernel table (`src/kernels.rs`) is
//! their only caller.
//!
//! `scalar.rs` is the reference every other kernel is checked against and
//! the one that needs no special instructions. `generic.rs` holds the
//! algorithms written once, over small traits: the query (a batch runs as
//! a pipeline over a ring of chunks: expand keys, prefetch their blocks,
//! evaluate every column at once) and the "columns as lanes"
//! back-substitution, plus the macro that makes each instruction set's
//! entry points. Each instruction set implements the traits with its own
//! intrinsics, and has a proof type (`Avx2`, `Avx512`, `Neon`) whose only
//! constructor detects it. `portable.rs` implements them once over `wide`'s
//! lane types, with the build's own target features (no detection).
//! `x86_64/expand.rs` is the vector twin of the hash expansion, written once
//! over a lane trait that AVX2 and AVX-512 implement.

pub(crate) mod generic;
pub(crate) mod portable;
pub(crate) mod scalar;

// Which kernels can be compiled for the target is decided in build.rs.
cfg_if::cfg_if! {
    if #[cfg(ribbon_x86_kernels)] {
        pub(crate) mod x86_64;
    } else if #[cfg(ribbon_neon_kernels)] {
        pub(crate) mod aarch64;
    }
}

/// A value that proves the CPU runs an instruction set: implemented only by
/// the proof types (`Avx2`, `Avx512`, `Neon`, and `Portable`, whose
/// instruction set is the build's own), whose only constructors detect it.
/// The kernel table takes one before storing a kernel.
pub(crate) trait IsaProof: Copy {}

/// Defines an instruction set's proof type: a zero-sized value with a
/// private field, made only by its `detect()` from the cached CPU features.
#[cfg(any(ribbon_x86_kernels, ribbon_neon_kernels))]
macro_rules! isa_proof {
    ($(#[$doc:meta])* $name:ident, $feature:ident) => {
        $(#[$doc])*
        ///
        /// A value is proof that the CPU runs it: the only constructor is
        #[doc = concat!("[`", stringify!($name), "::detect`].")]
        #[derive(Clone, Copy, Debug)]
        pub(crate) struct $name(());

        impl crate::arch::IsaProof for $name {}

        impl $name {
            /// Proof that this CPU runs the instruction set, if it does.
            pub(crate) fn detect() -> Option<$name> {
                let features = crate::detect::features();
                features.has(crate::detect::Features::$feature).then_some($name(()))
            }
        }
    };
}
#[cfg(any(ribbon_x86_kernels, ribbon_neon_kernels))]
pub(crate) use isa_proof;

/// Hints that the cache line holding `words[at]` will soon be written.
/// Nothing happens past the end, under Miri, or where the instruction set
/// has no baseline prefetch.
#[inline(always)]
pub(crate) fn prefetch_for_write(words: &[u64], at: usize) {
    #[cfg(all(target_arch = "x86_64", not(miri)))]
    if let Some(word) = words.get(at) {
        use core::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
        // SAFETY: SSE is baseline on x86_64; prefetching a valid address
        // never faults and changes no memory.
        unsafe { _mm_prefetch::<_MM_HINT_T0>(core::ptr::from_ref(word).cast::<i8>()) };
    }
    #[cfg(not(all(target_arch = "x86_64", not(miri))))]
    let _ = (words, at);
}
