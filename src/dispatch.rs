//! Backend choice and dispatch: the only caller of the `arch/` kernels.

use crate::filter::Parts;
use crate::layout::Width;
use crate::query;

/// An instruction-set backend for queries and back-substitution.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Backend {
    /// Portable scalar code; always available, the reference for the others.
    Scalar,
    /// x86_64 AVX2.
    Avx2,
    /// x86_64 AVX-512F with AVX-512 VPOPCNTDQ.
    Avx512,
    /// aarch64 NEON.
    Neon,
}

impl Backend {
    /// Every backend, in C ABI code order.
    pub const ALL: [Backend; 4] = [
        Backend::Scalar,
        Backend::Avx2,
        Backend::Avx512,
        Backend::Neon,
    ];

    /// The best backend this CPU and build support.
    pub fn detect() -> Backend {
        Backend::Scalar
    }

    /// Whether this CPU and build can run the backend.
    pub fn is_available(self) -> bool {
        matches!(self, Backend::Scalar)
    }

    /// The backend's code in the C ABI: 0 scalar, 1 AVX2, 2 AVX-512, 3 NEON.
    pub const fn code(self) -> u32 {
        match self {
            Backend::Scalar => 0,
            Backend::Avx2 => 1,
            Backend::Avx512 => 2,
            Backend::Neon => 3,
        }
    }

    /// The backend for a C ABI code.
    pub const fn from_code(code: u32) -> Option<Backend> {
        match code {
            0 => Some(Backend::Scalar),
            1 => Some(Backend::Avx2),
            2 => Some(Backend::Avx512),
            3 => Some(Backend::Neon),
            _ => None,
        }
    }

    /// A short lowercase name: "scalar", "avx2", "avx512", "neon".
    pub const fn name(self) -> &'static str {
        match self {
            Backend::Scalar => "scalar",
            Backend::Avx2 => "avx2",
            Backend::Avx512 => "avx512",
            Backend::Neon => "neon",
        }
    }
}

/// Single query.
#[inline]
pub(crate) fn contains(_backend: Backend, p: Parts<'_>, hash: u64) -> bool {
    if p.geometry.num_blocks == 0 {
        return false;
    }
    match p.geometry.width {
        Width::W64 => query::contains::<u64>(&p.geometry, &p.expander, p.payload, hash),
        Width::W128 => query::contains::<u128>(&p.geometry, &p.expander, p.payload, hash),
    }
}

/// Batch query; `out.len() == hashes.len()`.
pub(crate) fn contains_batch(_backend: Backend, p: Parts<'_>, hashes: &[u64], out: &mut [bool]) {
    if p.geometry.num_blocks == 0 {
        out.fill(false);
        return;
    }
    match p.geometry.width {
        Width::W64 => {
            for (o, &h) in out.iter_mut().zip(hashes) {
                *o = query::contains::<u64>(&p.geometry, &p.expander, p.payload, h);
            }
        }
        Width::W128 => {
            for (o, &h) in out.iter_mut().zip(hashes) {
                *o = query::contains::<u128>(&p.geometry, &p.expander, p.payload, h);
            }
        }
    }
}
