//! The public [`Backend`]: which instruction sets this CPU runs, and the
//! process-wide choice ([`Backend::force`]). The kernels themselves are
//! reached only through the kernel table (`src/kernels.rs`), whose
//! constructor checks availability again.

use core::sync::atomic::{AtomicU8, Ordering};

use crate::detect::{self, Features};
use crate::error::Error;

/// The backend set with [`Backend::force`]: 0 for none, else code + 1.
static FORCED: AtomicU8 = AtomicU8::new(0);

/// An instruction-set backend for queries and back-substitution.
///
/// Non-exhaustive: a later release may add a backend without a breaking
/// change, so a `match` outside this crate needs a wildcard arm
/// ([`Backend::ALL`] lists the ones this release has).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Backend {
    /// Portable scalar code; always available, the reference for the others.
    Scalar,
    /// x86_64 AVX2.
    Avx2,
    /// x86_64 AVX-512F with AVX-512 VPOPCNTDQ.
    Avx512,
    /// aarch64 NEON.
    Neon,
    /// Portable SIMD over `wide`'s lane types, compiled with the build's own
    /// target features: SSE2 on x86_64, `simd128` on wasm32, NEON on
    /// aarch64, plain lanes elsewhere. Always available; detection picks it
    /// where no hand-written kernel runs and it has real vector registers.
    Portable,
}

impl Backend {
    /// Every backend, in C ABI code order.
    pub const ALL: [Backend; 5] = [
        Backend::Scalar,
        Backend::Avx2,
        Backend::Avx512,
        Backend::Neon,
        Backend::Portable,
    ];

    /// The best backend this CPU and build support: AVX-512, then AVX2, then
    /// NEON, then portable SIMD where the build has vector registers for it
    /// (SSE2 on x86_64 CPUs without AVX2, `simd128` on wasm32), then scalar.
    /// Detected once (CPUID/XGETBV on x86_64) and cached.
    ///
    /// Where this crate is compiled without optimization (`opt-level = 0`,
    /// as in a dependent's debug build without a profile override), it is
    /// scalar: unoptimized, every SIMD intrinsic is a function call and
    /// the scalar kernel is the fastest (two to three times the AVX-512
    /// kernel there). The SIMD backends stay available to
    /// [`Backend::force`] and the `with_backend` methods.
    pub fn detect() -> Backend {
        if cfg!(ribbon_unoptimized) {
            // Unoptimized, every SIMD intrinsic is a function call: the
            // scalar kernel is the fastest (see `build.rs`).
            return Backend::Scalar;
        }
        let f = detect::features();
        if f.has(Features::AVX512) {
            Backend::Avx512
        } else if f.has(Features::AVX2) {
            Backend::Avx2
        } else if f.has(Features::NEON) {
            Backend::Neon
        } else if f.has(Features::PORTABLE_VECTORS) {
            Backend::Portable
        } else {
            Backend::Scalar
        }
    }

    /// The backend if this CPU and build can run it, else
    /// [`Error::BackendUnavailable`]: what the plans' `with_backend` ask.
    pub(crate) fn available(self) -> Result<Backend, crate::error::Error> {
        match self.is_available() {
            true => Ok(self),
            false => Err(crate::error::Error::BackendUnavailable),
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
            Backend::Portable => true,
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
    /// Refuses a backend this CPU or build lacks. Use it to compare
    /// backends, or to keep queries and builds off the wide vector units
    /// (AVX2, AVX-512, NEON). It does not keep the code off vector registers
    /// altogether: on hosted x86_64 targets the compiler uses SSE for copies
    /// and zeroing everywhere, the scalar backend included. Code that must
    /// not touch them links a soft-float build (`x86_64-unknown-none`; see
    /// "FPU and SIMD registers" in `docs/c-guide.md`).
    pub fn force(backend: Option<Backend>) -> Result<(), Error> {
        let code = match backend {
            None => 0,
            Some(b) if b.is_available() => b.code() as u8 + 1,
            Some(_) => return Err(Error::BackendUnavailable),
        };
        FORCED.store(code, Ordering::Relaxed);
        Ok(())
    }

    /// The backend's code in the C ABI: 0 scalar, 1 AVX2, 2 AVX-512, 3 NEON,
    /// 4 portable.
    pub const fn code(self) -> u32 {
        match self {
            Backend::Scalar => 0,
            Backend::Avx2 => 1,
            Backend::Avx512 => 2,
            Backend::Neon => 3,
            Backend::Portable => 4,
        }
    }

    /// The backend for a C ABI code.
    pub const fn from_code(code: u32) -> Option<Backend> {
        match code {
            0 => Some(Backend::Scalar),
            1 => Some(Backend::Avx2),
            2 => Some(Backend::Avx512),
            3 => Some(Backend::Neon),
            4 => Some(Backend::Portable),
            _ => None,
        }
    }

    /// A short lowercase name: "scalar", "avx2", "avx512", "neon",
    /// "portable".
    pub const fn name(self) -> &'static str {
        match self {
            Backend::Scalar => "scalar",
            Backend::Avx2 => "avx2",
            Backend::Avx512 => "avx512",
            Backend::Neon => "neon",
            Backend::Portable => "portable",
        }
    }
}
