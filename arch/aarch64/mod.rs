//! aarch64 kernels (little-endian targets with NEON).

#[cfg(all(target_endian = "little", target_feature = "neon"))]
pub(crate) mod neon;
