//! The kernel table: function pointers to one backend's kernels, resolved
//! once per filter view (or per build) and called without matching again.
//!
//! The tables' fields are private and their constructors are the only
//! code here that names a kernel: each first obtains the instruction
//! set's proof value (`Avx2::detect()` and its siblings in `arch/`, which
//! read the cached CPU features) and only then stores that backend's entry
//! points. That check is what makes the stored pointers safe to call, and
//! it is the only `unsafe` of this module. The `(width, kind)` choice of a
//! native filter is made here too, once, in [`QueryKernels::for_filter`].
//! Below this module sit the kernels (`arch/`); above it, nothing else
//! calls them.

use crate::arch::IsaProof;
#[cfg(ribbon_neon_kernels)]
use crate::arch::aarch64::neon::{self, Neon};
use crate::arch::generic::single_query_columns;
use crate::arch::portable::{self, Portable};
use crate::arch::scalar;
#[cfg(ribbon_x86_kernels)]
use crate::arch::x86_64::avx2::{self, Avx2};
#[cfg(ribbon_avx512_kernels)]
use crate::arch::x86_64::avx512::{self, Avx512};
use crate::backend::Backend;
use crate::bumped_layout::ThresholdsRef;
use crate::hash::{Coeff, FreeRows};
use crate::layout::{Geometry, Kind, Width};
use crate::probe::{NativeProbes, Parts, Probes};
use crate::word::Rows;

pub(crate) use crate::arch::prefetch_for_write;
pub(crate) use crate::arch::scalar::bumped_flag;

/// A single query: `(source, payload, hash)`.
type ContainsFn<S> = fn(&S, &[u8], u64) -> bool;
/// A batch query: `(source, payload, hashes, out)`, equal lengths.
type BatchFn<S> = fn(&S, &[u8], &[u64], &mut [bool]);
/// A Bumped filter's first-layer scan for batch queries (see
/// `arch::scalar::scan_bumped`): `(parts, thresholds, hashes, first, out)`
/// to `(scanned, written)`.
pub(crate) type ScanBumpedFn =
    fn(&Parts, &ThresholdsRef<'_>, &[u64], usize, &mut [(u64, usize)]) -> (usize, usize);
/// Back-substitution: `(geometry, free rows, rows, payload)`.
type SolveFn = fn(&Geometry, FreeRows, Rows<'_>, &mut [u8]);

/// Turns an instruction set's `unsafe` entry point into a safe pointer,
/// given the value that proves the CPU runs it (of a type implementing
/// [`IsaProof`], which only that instruction set's `detect()` makes):
/// `proven!(proof, entry, UnsafeFnType => SafeFnType)`.
macro_rules! proven {
    ($proof:expr, $entry:expr, $unsafe_fn:ty => $safe_fn:ty) => {{
        proof_of($proof);
        let entry: $unsafe_fn = $entry;
        // SAFETY: an entry point's only precondition is that the CPU runs
        // its instruction set, which the proof value shows; safe and unsafe
        // `fn` pointers of one signature have the same representation and
        // calling convention.
        unsafe { core::mem::transmute::<$unsafe_fn, $safe_fn>(entry) }
    }};
}

/// The proven `(contains, contains_batch)` entry points of instruction-set
/// module `$isa` for words `$W` and the caller's probes `P` (source `S`);
/// the single query is the one compiled for `$columns`, a value of
/// [`single_query_columns`].
macro_rules! proven_queries {
    // Kernels that ignore the column bound (NEON loops over each key's
    // own columns) get the runtime-bound entry only: the bounded ones
    // would be copies of it.
    ($proof:expr, $isa:ident, $W:ty) => {{
        type Contains<S> = unsafe fn(&S, &[u8], u64) -> bool;
        type Batch<S> = unsafe fn(&S, &[u8], &[u64], &mut [bool]);
        let proof = $proof;
        (
            proven!(proof, $isa::contains::<$W, P, 0>, Contains<S> => ContainsFn<S>),
            proven!(proof, $isa::contains_batch::<$W, P>, Batch<S> => BatchFn<S>),
        )
    }};
    ($proof:expr, $isa:ident, $W:ty, $columns:expr) => {{
        type Contains<S> = unsafe fn(&S, &[u8], u64) -> bool;
        type Batch<S> = unsafe fn(&S, &[u8], &[u64], &mut [bool]);
        let proof = $proof;
        let contains: Contains<S> = match $columns {
            8 => $isa::contains::<$W, P, 8>,
            12 => $isa::contains::<$W, P, 12>,
            16 => $isa::contains::<$W, P, 16>,
            _ => $isa::contains::<$W, P, 0>,
        };
        (
            proven!(proof, contains, Contains<S> => ContainsFn<S>),
            proven!(proof, $isa::contains_batch::<$W, P>, Batch<S> => BatchFn<S>),
        )
    }};
}

/// Accepts only a proof value (see [`proven`]).
#[inline(always)]
fn proof_of<T: IsaProof>(_proof: T) {}

/// Query kernels for probes of type `P` (made from an `S`), of one
/// backend.
#[derive(Clone, Copy)]
pub(crate) struct QueryKernels<S> {
    contains: ContainsFn<S>,
    contains_batch: BatchFn<S>,
    backend: Backend,
}

impl<S> core::fmt::Debug for QueryKernels<S> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("QueryKernels")
            .field("backend", &self.backend)
            .finish_non_exhaustive()
    }
}

impl<S> QueryKernels<S> {
    /// `backend`'s query kernels for probes `P` of words `W` whose blocks
    /// have at most `max_columns` columns (0: unknown, any number), or
    /// `None` where this CPU or build lacks the backend.
    pub(crate) fn new<W: KernelWord, P: Probes<W, Source = S>>(
        backend: Backend,
        max_columns: usize,
    ) -> Option<Self> {
        let columns = if max_columns == 0 {
            0
        } else {
            single_query_columns(max_columns)
        };
        let (contains, contains_batch) = W::query_entries::<S, P>(backend, columns)?;
        Some(QueryKernels {
            contains,
            contains_batch,
            backend,
        })
    }

    /// Whether `hash` may be in the filter `source` and `payload` make.
    #[inline(always)]
    pub(crate) fn contains(&self, source: &S, payload: &[u8], hash: u64) -> bool {
        (self.contains)(source, payload, hash)
    }

    /// Answers every hash into `out` (`out.len() == hashes.len()`).
    #[inline(always)]
    pub(crate) fn contains_batch(
        &self,
        source: &S,
        payload: &[u8],
        hashes: &[u64],
        out: &mut [bool],
    ) {
        (self.contains_batch)(source, payload, hashes, out);
    }

    /// The backend these kernels belong to.
    pub(crate) fn backend(&self) -> Backend {
        self.backend
    }
}

impl QueryKernels<Parts> {
    /// `backend`'s kernels for a native filter of geometry `g`: the one
    /// place that turns a filter's width and kind into kernel types. An
    /// empty filter (no blocks) gets kernels that answer "absent" without
    /// reading.
    pub(crate) fn for_filter(backend: Backend, g: &Geometry) -> Option<Self> {
        if g.num_blocks == 0 {
            // Still refuse a backend the CPU lacks.
            let kernels = Self::new::<u64, NativeProbes<false, false>>(backend, 0)?;
            return Some(QueryKernels {
                contains: |_, _, _| false,
                contains_batch: |_, _, _, out| out.fill(false),
                ..kernels
            });
        }
        let columns = g.max_columns();
        match g.width {
            Width::W64 => Self::for_kind::<u64>(backend, g.kind, columns),
            Width::W128 => Self::for_kind::<u128>(backend, g.kind, columns),
        }
    }

    /// [`QueryKernels::for_filter`] for words `W`: the probes' type fixes
    /// the kind (result bits, smashed starts).
    fn for_kind<W: KernelWord>(backend: Backend, kind: Kind, columns: usize) -> Option<Self> {
        match kind {
            Kind::Homogeneous => Self::new::<W, NativeProbes<false, false>>(backend, columns),
            // A Bumped filter's layers are Standard Ribbon.
            Kind::Standard | Kind::Bumped => {
                Self::new::<W, NativeProbes<true, false>>(backend, columns)
            }
            Kind::StandardSmash => Self::new::<W, NativeProbes<true, true>>(backend, columns),
        }
    }
}

/// `backend`'s scan of a Bumped filter's first layer for batch queries
/// (vector code on AVX2 and AVX-512, the scalar scan elsewhere), or `None`
/// where this CPU or build lacks the backend.
pub(crate) fn scan_bumped(backend: Backend) -> Option<ScanBumpedFn> {
    #[allow(unused_parens)]
    type Scan =
        unsafe fn(&Parts, &ThresholdsRef<'_>, &[u64], usize, &mut [(u64, usize)]) -> (usize, usize);
    Some(match backend {
        #[cfg(ribbon_x86_kernels)]
        Backend::Avx2 => proven!(Avx2::detect()?, avx2::scan_bumped, Scan => ScanBumpedFn),
        #[cfg(ribbon_avx512_kernels)]
        Backend::Avx512 => proven!(Avx512::detect()?, avx512::scan_bumped, Scan => ScanBumpedFn),
        _ if backend.is_available() => scalar::scan_bumped,
        _ => return None,
    })
}

/// The back-substitution kernel of one backend and word width.
#[derive(Clone, Copy)]
pub(crate) struct SolveKernel {
    run: SolveFn,
    backend: Backend,
}

impl core::fmt::Debug for SolveKernel {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("SolveKernel")
            .field("backend", &self.backend)
            .finish_non_exhaustive()
    }
}

impl SolveKernel {
    /// `backend`'s back-substitution for `width`, or `None` where this CPU
    /// or build lacks the backend.
    pub(crate) fn new(backend: Backend, width: Width) -> Option<SolveKernel> {
        match width {
            Width::W64 => Self::for_word::<u64>(backend),
            Width::W128 => Self::for_word::<u128>(backend),
        }
    }

    fn for_word<W: KernelWord>(backend: Backend) -> Option<SolveKernel> {
        Some(SolveKernel {
            run: W::solve_entry(backend)?,
            backend,
        })
    }

    /// The backend this kernel belongs to.
    #[cfg_attr(not(feature = "capi"), allow(dead_code))]
    pub(crate) fn backend(&self) -> Backend {
        self.backend
    }

    /// Solves `rows` into the ICML `payload` of `g` (`g.payload_bytes()`
    /// long).
    pub(crate) fn run(&self, g: &Geometry, free: FreeRows, rows: Rows<'_>, payload: &mut [u8]) {
        (self.run)(g, free, rows, payload);
    }
}

/// A word width every backend has kernels for: the constructors above,
/// written once for `u64` and `u128` by [`impl_kernel_word`] (the kernels
/// implement their traits per width, so the bounds are met only for the
/// concrete types).
pub(crate) trait KernelWord: Coeff {
    /// `backend`'s query entry points for probes `P`, each proven; the
    /// single query compiled for `columns` (0 or a value of
    /// [`single_query_columns`], at least the filter's column count).
    fn query_entries<S, P: Probes<Self, Source = S>>(
        backend: Backend,
        columns: usize,
    ) -> Option<(ContainsFn<S>, BatchFn<S>)>;
    /// `backend`'s back-substitution entry point, proven.
    fn solve_entry(backend: Backend) -> Option<SolveFn>;
}

macro_rules! impl_kernel_word {
    ($W:ty) => {
        impl KernelWord for $W {
            fn query_entries<S, P: Probes<$W, Source = S>>(
                backend: Backend,
                columns: usize,
            ) -> Option<(ContainsFn<S>, BatchFn<S>)> {
                Some(match backend {
                    Backend::Scalar => (
                        scalar::contains::<$W, P> as ContainsFn<S>,
                        scalar::contains_batch::<$W, P> as BatchFn<S>,
                    ),
                    #[cfg(ribbon_x86_kernels)]
                    Backend::Avx2 => proven_queries!(Avx2::detect()?, avx2, $W, columns),
                    #[cfg(ribbon_avx512_kernels)]
                    Backend::Avx512 => proven_queries!(Avx512::detect()?, avx512, $W, columns),
                    #[cfg(ribbon_neon_kernels)]
                    Backend::Neon => proven_queries!(Neon::detect()?, neon, $W),
                    Backend::Portable => proven_queries!(Portable::detect()?, portable, $W, columns),
                    #[allow(unreachable_patterns)]
                    _ => return None,
                })
            }

            fn solve_entry(backend: Backend) -> Option<SolveFn> {
                type Solve = unsafe fn(&Geometry, FreeRows, Rows<'_>, &mut [u8]);
                Some(match backend {
                    Backend::Scalar => scalar::back_substitute::<$W> as SolveFn,
                    #[cfg(ribbon_x86_kernels)]
                    Backend::Avx2 => proven!(Avx2::detect()?, avx2::back_substitute::<$W>, Solve => SolveFn),
                    #[cfg(ribbon_avx512_kernels)]
                    Backend::Avx512 => {
                        proven!(Avx512::detect()?, avx512::back_substitute::<$W>, Solve => SolveFn)
                    }
                    #[cfg(ribbon_neon_kernels)]
                    Backend::Neon => proven!(Neon::detect()?, neon::back_substitute::<$W>, Solve => SolveFn),
                    Backend::Portable => {
                        proven!(Portable::detect()?, portable::back_substitute::<$W>, Solve => SolveFn)
                    }
                    #[allow(unreachable_patterns)]
                    _ => return None,
                })
            }
        }
    };
}

impl_kernel_word!(u64);
impl_kernel_word!(u128);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hash::Expander;
    use crate::layout::Kind;

    /// The table holds a backend exactly when the CPU runs it, for every
    /// width and kind, empty filters included.
    #[test]
    fn tables_exist_exactly_for_available_backends() {
        for backend in Backend::ALL {
            for width in [Width::W64, Width::W128] {
                assert_eq!(
                    SolveKernel::new(backend, width).is_some(),
                    backend.is_available(),
                    "{backend:?} {width:?}"
                );
                for kind in [Kind::Homogeneous, Kind::Standard, Kind::StandardSmash] {
                    for (blocks, lower, upper) in [(0, 0, 0), (3, 7, 1)] {
                        let g = Geometry::new(kind, width, blocks, lower, upper).unwrap();
                        let table = QueryKernels::for_filter(backend, &g);
                        assert_eq!(table.is_some(), backend.is_available(), "{backend:?} {g:?}");
                        if let Some(table) = table {
                            assert_eq!(table.backend(), backend);
                        }
                    }
                }
            }
        }
    }

    /// An empty filter's kernels answer "absent" without reading.
    #[test]
    fn empty_filters_answer_absent() {
        let g = Geometry::new(Kind::Standard, Width::W64, 0, 0, 0).unwrap();
        let parts = Parts {
            geometry: g,
            expander: Expander::new(&g, 0),
        };
        let table = QueryKernels::for_filter(Backend::Scalar, &g).unwrap();
        assert!(!table.contains(&parts, &[], 42));
        let mut out = [true; 3];
        table.contains_batch(&parts, &[], &[1, 2, 3], &mut out);
        assert_eq!(out, [false; 3]);
    }
}
