//! Backend choice and dispatch: the only caller of the `arch/` kernels.

use core::sync::atomic::{AtomicU8, Ordering};

#[cfg(ribbon_neon_kernels)]
use crate::arch::aarch64 as aarch64_kernels;
use crate::arch::generic;
#[cfg(ribbon_x86_kernels)]
use crate::arch::x86_64 as x86_kernels;
use crate::detect::{self, Features};
use crate::error::Error;
use crate::filter::Parts;
use crate::hash::{Coeff, FreeRows};
use crate::layout::{Geometry, Width};
use crate::query::{self, NativeProbes, Probes};
use crate::solve;
use crate::word::Rows;

/// The backend set with [`Backend::force`]: 0 for none, else code + 1.
static FORCED: AtomicU8 = AtomicU8::new(0);

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

    /// The best backend this CPU and build support: AVX-512, then AVX2, then
    /// NEON, then scalar. Detected once (CPUID/XGETBV on x86_64) and cached.
    pub fn detect() -> Backend {
        let f = detect::features();
        if f.has(Features::AVX512) {
            Backend::Avx512
        } else if f.has(Features::AVX2) {
            Backend::Avx2
        } else if f.has(Features::NEON) {
            Backend::Neon
        } else {
            Backend::Scalar
        }
    }

    /// Whether this CPU and build can run the backend.
    pub fn is_available(self) -> bool {
        let f = detect::features();
        match self {
            Backend::Scalar => true,
            Backend::Avx2 => f.has(Features::AVX2),
            Backend::Avx512 => f.has(Features::AVX512),
            Backend::Neon => f.has(Features::NEON),
        }
    }

    /// The backend new filter views and builds use: the one set with
    /// [`Backend::force`] if any, else [`Backend::detect`].
    pub fn current() -> Backend {
        match FORCED.load(Ordering::Relaxed) {
            0 => Backend::detect(),
            code => Backend::from_code(u32::from(code) - 1).unwrap_or(Backend::Scalar),
        }
    }

    /// Makes every filter view created afterwards (and every build) use
    /// `backend`, process-wide; `None` returns to the detected best. Views
    /// already made keep their backend. Detection never overrides this.
    ///
    /// Refuses a backend this CPU or build lacks. Use it to pin the scalar
    /// backend where vector registers are off limits, or to compare
    /// backends.
    pub fn force(backend: Option<Backend>) -> Result<(), Error> {
        let code = match backend {
            None => 0,
            Some(b) if b.is_available() => b.code() as u8 + 1,
            Some(_) => return Err(Error::BackendUnavailable),
        };
        FORCED.store(code, Ordering::Relaxed);
        Ok(())
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

// Every function below receives a backend that passed `is_available()`:
// `FilterRef` only holds such backends (from `Backend::current()` or a
// checked `with_backend`), and builds use `Backend::current()`. That is the
// check each `// SAFETY:` comment below refers to.

/// The kernels of every backend for one word width. Implemented for `u64`
/// and `u128` by [`impl_kernels`], so each `match` below is written once.
pub(crate) trait Kernels: Coeff {
    /// Single query of a non-empty filter.
    fn contains<P: Probes<Self>>(backend: Backend, probes: &P, payload: &[u8], hash: u64) -> bool;
    /// Batch query of a non-empty filter; `out.len() == hashes.len()`.
    fn contains_batch<P: Probes<Self>>(
        backend: Backend,
        probes: &P,
        payload: &[u8],
        hashes: &[u64],
        out: &mut [bool],
    );
    /// Back-substitution of a banded system into ICML payload bytes.
    fn back_substitute(
        backend: Backend,
        g: &Geometry,
        free: FreeRows,
        rows: Rows<'_>,
        payload: &mut [u8],
    );
}

macro_rules! impl_kernels {
    ($W:ty) => {
        impl Kernels for $W {
            #[inline]
            fn contains<P: Probes<$W>>(
                backend: Backend,
                probes: &P,
                payload: &[u8],
                hash: u64,
            ) -> bool {
                match backend {
                    #[cfg(ribbon_avx512_kernels)]
                    // SAFETY: the backend is available (see above).
                    Backend::Avx512 => unsafe {
                        x86_kernels::avx512::contains::<$W, P>(probes, payload, hash)
                    },
                    #[cfg(ribbon_x86_kernels)]
                    // SAFETY: the backend is available (see above).
                    Backend::Avx2 => unsafe {
                        x86_kernels::avx2::contains::<$W, P>(probes, payload, hash)
                    },
                    #[cfg(ribbon_neon_kernels)]
                    // SAFETY: NEON is part of this target.
                    Backend::Neon => unsafe {
                        aarch64_kernels::neon::contains::<$W, P>(probes, payload, hash)
                    },
                    _ => query::matches(payload, &probes.probe(hash)),
                }
            }

            fn contains_batch<P: Probes<$W>>(
                backend: Backend,
                probes: &P,
                payload: &[u8],
                hashes: &[u64],
                out: &mut [bool],
            ) {
                match backend {
                    #[cfg(ribbon_avx512_kernels)]
                    // SAFETY: the backend is available (see above).
                    Backend::Avx512 => unsafe {
                        x86_kernels::avx512::contains_batch::<$W, P>(probes, payload, hashes, out)
                    },
                    #[cfg(ribbon_x86_kernels)]
                    // SAFETY: the backend is available (see above).
                    Backend::Avx2 => unsafe {
                        x86_kernels::avx2::contains_batch::<$W, P>(probes, payload, hashes, out)
                    },
                    #[cfg(ribbon_neon_kernels)]
                    // SAFETY: NEON is part of this target.
                    Backend::Neon => unsafe {
                        aarch64_kernels::neon::contains_batch::<$W, P>(probes, payload, hashes, out)
                    },
                    _ => generic::contains_batch_portable::<$W, P>(probes, payload, hashes, out),
                }
            }

            fn back_substitute(
                backend: Backend,
                g: &Geometry,
                free: FreeRows,
                rows: Rows<'_>,
                payload: &mut [u8],
            ) {
                match backend {
                    #[cfg(ribbon_avx512_kernels)]
                    // SAFETY: the backend is available (see above).
                    Backend::Avx512 => unsafe {
                        x86_kernels::avx512::back_substitute::<$W>(g, free, rows, payload)
                    },
                    #[cfg(ribbon_x86_kernels)]
                    // SAFETY: the backend is available (see above).
                    Backend::Avx2 => unsafe {
                        x86_kernels::avx2::back_substitute::<$W>(g, free, rows, payload)
                    },
                    #[cfg(ribbon_neon_kernels)]
                    // SAFETY: NEON is part of this target.
                    Backend::Neon => unsafe {
                        aarch64_kernels::neon::back_substitute::<$W>(g, free, rows, payload)
                    },
                    _ => solve::back_substitute::<$W>(g, free, rows, payload),
                }
            }
        }
    };
}

impl_kernels!(u64);
impl_kernels!(u128);

/// Single query of a native filter.
#[inline]
pub(crate) fn contains(backend: Backend, p: Parts<'_>, hash: u64) -> bool {
    if p.geometry.num_blocks == 0 {
        return false;
    }
    match (p.geometry.width, p.expander.standard) {
        (Width::W64, false) => {
            u64::contains(backend, &NativeProbes::<false>::new(&p), p.payload, hash)
        }
        (Width::W64, true) => {
            u64::contains(backend, &NativeProbes::<true>::new(&p), p.payload, hash)
        }
        (Width::W128, false) => {
            u128::contains(backend, &NativeProbes::<false>::new(&p), p.payload, hash)
        }
        (Width::W128, true) => {
            u128::contains(backend, &NativeProbes::<true>::new(&p), p.payload, hash)
        }
    }
}

/// Batch query of a native filter; `out.len() == hashes.len()`.
pub(crate) fn contains_batch(backend: Backend, p: Parts<'_>, hashes: &[u64], out: &mut [bool]) {
    if p.geometry.num_blocks == 0 {
        out.fill(false);
        return;
    }
    let (payload, standard) = (p.payload, p.expander.standard);
    match (p.geometry.width, standard) {
        (Width::W64, false) => u64::contains_batch(
            backend,
            &NativeProbes::<false>::new(&p),
            payload,
            hashes,
            out,
        ),
        (Width::W64, true) => u64::contains_batch(
            backend,
            &NativeProbes::<true>::new(&p),
            payload,
            hashes,
            out,
        ),
        (Width::W128, false) => u128::contains_batch(
            backend,
            &NativeProbes::<false>::new(&p),
            payload,
            hashes,
            out,
        ),
        (Width::W128, true) => u128::contains_batch(
            backend,
            &NativeProbes::<true>::new(&p),
            payload,
            hashes,
            out,
        ),
    }
}

/// Back-substitution of a banded system into ICML payload bytes.
pub(crate) fn back_substitute(
    backend: Backend,
    g: &Geometry,
    free: FreeRows,
    rows: Rows<'_>,
    payload: &mut [u8],
) {
    match g.width {
        Width::W64 => u64::back_substitute(backend, g, free, rows, payload),
        Width::W128 => u128::back_substitute(backend, g, free, rows, payload),
    }
}
