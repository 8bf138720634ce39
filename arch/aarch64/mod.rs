//! aarch64 kernels (little-endian targets with NEON).

pub(crate) mod neon;
