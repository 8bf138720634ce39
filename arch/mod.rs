//! Per-instruction-set kernels. `src/dispatch.rs` is their only caller.
//!
//! `generic.rs` holds the two algorithms written once, over small traits:
//! the batch query (expand a chunk of keys, prefetch their blocks, evaluate
//! every column at once) and the "columns as lanes" back-substitution. Each
//! instruction set implements the traits with its own intrinsics.

pub(crate) mod generic;

// Which kernels can be compiled for the target is decided in build.rs.
cfg_if::cfg_if! {
    if #[cfg(ribbon_x86_kernels)] {
        pub(crate) mod x86_64;
    } else if #[cfg(ribbon_neon_kernels)] {
        pub(crate) mod aarch64;
    }
}
