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
use crate::bumped_layout::{BumpedKey, ThresholdsRef};
use crate::hash::{Coeff, FreeRows};
use crate::layout::{Geometry, Kind, Width};
use crate::probe::{NativeProbes, Parts, Probes};
use crate::word::Rows;
#[cfg(feature = "capi")]
use core::sync::atomic::{AtomicPtr, Ordering};

/// A single-key entry: `(source, payload, hash)` to the key's answer.
pub(crate) type OneEntry<S, A> = fn(&S, &[u8], u64) -> A;
/// A batch entry: `(source, payload, hashes, out)`, equal lengths.
pub(crate) type BatchEntry<S, A> = fn(&S, &[u8], &[u64], &mut [A]);
/// A filter's single query.
type ContainsFn<S> = OneEntry<S, bool>;
/// A filter's batch query.
type BatchFn<S> = BatchEntry<S, bool>;
/// A retrieval structure's single evaluation (the key's value, column `j`
/// in bit `j`).
type GetFn<S> = OneEntry<S, u64>;
/// A retrieval structure's batch evaluation.
type GetBatchFn<S> = BatchEntry<S, u64>;
/// A Bumped filter's first-layer scan for batch queries (see
/// `arch::scalar::scan_bumped`): `(parts, thresholds, hashes, first, out)`
/// to `(scanned, written)`. A vector scan may stop before `out` is full
/// (`arch/x86_64/bumped.rs`); every scan takes a key when it can.
pub(crate) type ScanBumpedFn =
    fn(&Parts, &ThresholdsRef<'_>, &[u64], usize, &mut [BumpedKey]) -> (usize, usize);
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

/// The proven `(single, batch)` entry points `$one` and `$batch` of
/// instruction-set module `$isa` for words `$W` and the caller's probes
/// `P` (source `S`), answering `$Out` (a filter's `contains` and
/// `contains_batch`, `bool`; a retrieval structure's `get` and
/// `get_batch`, `u64`) as the safe types `$OneFn<S>` and `$BatchFn<S>`.
/// With `$columns`, a value of [`single_query_columns`], the single entry
/// is the one compiled for it. Kernels that ignore the column bound (NEON
/// loops over each key's own columns) get the runtime-bound entry only:
/// the bounded ones would be copies of it.
macro_rules! proven_entries {
    ($proof:expr, $isa:ident, $W:ty, $one:ident, $batch:ident, $Out:ty, $OneFn:ident, $BatchFn:ident) => {{
        type One<S> = unsafe fn(&S, &[u8], u64) -> $Out;
        type Batch<S> = unsafe fn(&S, &[u8], &[u64], &mut [$Out]);
        let proof = $proof;
        (
            proven!(proof, $isa::$one::<$W, P, 0>, One<S> => $OneFn<S>),
            proven!(proof, $isa::$batch::<$W, P>, Batch<S> => $BatchFn<S>),
        )
    }};
    (
        $proof:expr, $isa:ident, $W:ty, $one:ident, $batch:ident, $Out:ty, $OneFn:ident,
        $BatchFn:ident, $columns:expr
    ) => {{
        type One<S> = unsafe fn(&S, &[u8], u64) -> $Out;
        type Batch<S> = unsafe fn(&S, &[u8], &[u64], &mut [$Out]);
        let proof = $proof;
        let one: One<S> = match $columns {
            8 => $isa::$one::<$W, P, 8>,
            12 => $isa::$one::<$W, P, 12>,
            16 => $isa::$one::<$W, P, 16>,
            _ => $isa::$one::<$W, P, 0>,
        };
        (
            proven!(proof, one, One<S> => $OneFn<S>),
            proven!(proof, $isa::$batch::<$W, P>, Batch<S> => $BatchFn<S>),
        )
    }};
}

/// A filter's query entries ([`proven_entries`]).
macro_rules! proven_queries {
    ($proof:expr, $isa:ident, $W:ty $(, $columns:expr)?) => {
        proven_entries!(
            $proof, $isa, $W, contains, contains_batch, bool, ContainsFn, BatchFn $(, $columns)?
        )
    };
}

/// A retrieval structure's evaluation entries ([`proven_entries`]).
macro_rules! proven_evals {
    ($proof:expr, $isa:ident, $W:ty $(, $columns:expr)?) => {
        proven_entries!($proof, $isa, $W, get, get_batch, u64, GetFn, GetBatchFn $(, $columns)?)
    };
}

/// Accepts only a proof value (see [`proven`]).
#[inline(always)]
fn proof_of<T: IsaProof>(_proof: T) {}

/// What a query answers per key: a filter's `bool` (whether the key may be
/// in the set) or a retrieval structure's `u64` (its value, column `j` in
/// bit `j`). The kernel table is one table, [`Kernels`], generic over it;
/// this trait says, per answer, which entry points a backend gives and
/// how a layer's geometry picks its probes.
pub(crate) trait Answer: Copy + Default + core::fmt::Debug + 'static {
    /// The answer for a key whose layer the bytes no longer hold: "maybe"
    /// for a filter (never a false negative), 0 for retrieval.
    const MISSING: Self;
    /// The answer of an empty structure (no blocks): "absent", or 0.
    const EMPTY: Self;
    /// `backend`'s `(single, batch)` entries for probes `P` of words `W`,
    /// the single one compiled for the column bound `columns`
    /// ([`single_query_columns`]; 0: a runtime bound).
    fn entries<W: KernelWord, S, P: Probes<W, Source = S>>(
        backend: Backend,
        columns: usize,
    ) -> Option<(OneEntry<S, Self>, BatchEntry<S, Self>)>;
    /// `backend`'s kernels for a layer (or a single-layer structure) of
    /// geometry `g`.
    fn for_layer(backend: Backend, g: &Geometry) -> Option<Kernels<Parts, Self>>;
    /// The single-key entries the C structs have resolved so far.
    #[cfg(feature = "capi")]
    fn resolved() -> &'static ResolvedOnes;
}

impl Answer for bool {
    const MISSING: bool = true;
    const EMPTY: bool = false;
    fn entries<W: KernelWord, S, P: Probes<W, Source = S>>(
        backend: Backend,
        columns: usize,
    ) -> Option<(ContainsFn<S>, BatchFn<S>)> {
        W::query_entries::<S, P>(backend, columns)
    }
    fn for_layer(backend: Backend, g: &Geometry) -> Option<QueryKernels<Parts>> {
        QueryKernels::for_filter(backend, g)
    }
    #[cfg(feature = "capi")]
    fn resolved() -> &'static ResolvedOnes {
        static QUERIES: ResolvedOnes = ResolvedOnes::new();
        &QUERIES
    }
}

impl Answer for u64 {
    const MISSING: u64 = 0;
    const EMPTY: u64 = 0;
    fn entries<W: KernelWord, S, P: Probes<W, Source = S>>(
        backend: Backend,
        columns: usize,
    ) -> Option<(GetFn<S>, GetBatchFn<S>)> {
        W::eval_entries::<S, P>(backend, columns)
    }
    fn for_layer(backend: Backend, g: &Geometry) -> Option<EvalKernels<Parts>> {
        EvalKernels::for_retrieval(backend, g)
    }
    #[cfg(feature = "capi")]
    fn resolved() -> &'static ResolvedOnes {
        static EVALUATIONS: ResolvedOnes = ResolvedOnes::new();
        &EVALUATIONS
    }
}

/// One backend's kernels for probes made from an `S`, answering `A` per
/// key: a single-key entry and a batch entry.
#[derive(Clone, Copy)]
pub(crate) struct Kernels<S, A> {
    one: OneEntry<S, A>,
    batch: BatchEntry<S, A>,
    backend: Backend,
}

/// A filter's query kernels.
pub(crate) type QueryKernels<S> = Kernels<S, bool>;
/// A retrieval structure's evaluation kernels (each key's column bits xor
/// its expected bits).
pub(crate) type EvalKernels<S> = Kernels<S, u64>;

impl<S, A> core::fmt::Debug for Kernels<S, A> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Kernels")
            .field("backend", &self.backend)
            .finish_non_exhaustive()
    }
}

impl<S, A: Answer> Kernels<S, A> {
    /// `backend`'s kernels for probes `P` of words `W` whose blocks have
    /// at most `max_columns` columns (0: unknown, any number), or `None`
    /// where this CPU or build lacks the backend. The single-key entry is
    /// compiled for the bound [`single_query_columns`] gives.
    pub(crate) fn new<W: KernelWord, P: Probes<W, Source = S>>(
        backend: Backend,
        max_columns: usize,
    ) -> Option<Self> {
        let columns = if max_columns == 0 {
            0
        } else {
            single_query_columns(max_columns)
        };
        let (one, batch) = A::entries::<W, S, P>(backend, columns)?;
        Some(Kernels {
            one,
            batch,
            backend,
        })
    }

    /// The answer for `hash` of the structure `source` and `payload` make.
    #[inline(always)]
    pub(crate) fn one(&self, source: &S, payload: &[u8], hash: u64) -> A {
        (self.one)(source, payload, hash)
    }

    /// Answers every hash into `out` (`out.len() == hashes.len()`).
    #[inline(always)]
    pub(crate) fn batch(&self, source: &S, payload: &[u8], hashes: &[u64], out: &mut [A]) {
        (self.batch)(source, payload, hashes, out);
    }

    /// The backend these kernels belong to.
    pub(crate) fn backend(&self) -> Backend {
        self.backend
    }
}

impl<A: Answer> Kernels<Parts, A> {
    /// Kernels for an empty structure (no blocks), which answer
    /// [`Answer::EMPTY`] without reading; `None` where this CPU or build
    /// lacks the backend, as for any other.
    fn empty(backend: Backend) -> Option<Self> {
        let kernels = Self::new::<u64, NativeProbes<false, false>>(backend, 0)?;
        Some(Kernels {
            one: |_, _, _| A::EMPTY,
            batch: |_, _, _, out| out.fill(A::EMPTY),
            ..kernels
        })
    }
}

impl QueryKernels<Parts> {
    /// `backend`'s kernels for a native filter of geometry `g`: the one
    /// place that turns a filter's width and kind into kernel types. An
    /// empty filter (no blocks) gets kernels that answer "absent" without
    /// reading.
    pub(crate) fn for_filter(backend: Backend, g: &Geometry) -> Option<Self> {
        if g.num_blocks == 0 {
            return Self::empty(backend);
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

impl EvalKernels<Parts> {
    /// `backend`'s evaluation kernels for a retrieval payload of geometry
    /// `g` (Standard Ribbon blocks of values, probed without result bits:
    /// `NativeProbes<false, false>`). An empty geometry (no blocks) gets
    /// kernels that return 0 without reading. `None` where this CPU or
    /// build lacks the backend.
    pub(crate) fn for_retrieval(backend: Backend, g: &Geometry) -> Option<Self> {
        if g.num_blocks == 0 {
            return Self::empty(backend);
        }
        let columns = g.max_columns();
        match g.width {
            Width::W64 => Self::new::<u64, NativeProbes<false, false>>(backend, columns),
            Width::W128 => Self::new::<u128, NativeProbes<false, false>>(backend, columns),
        }
    }
}

/// The kernels of one layer of a Bumped structure, as the layered query
/// (`layered::BumpedTop`) uses them: a filter layer's answers (`bool`) or
/// a retrieval layer's values (`u64`). [`Kernels`] over [`Parts`] is the
/// one implementation, for every answer.
pub(crate) trait LayerKernels: Copy + core::fmt::Debug {
    type Answer: Answer;
    /// [`Answer::MISSING`].
    const MISSING: Self::Answer;
    /// `backend`'s kernels for a layer of geometry `g` (Standard).
    fn for_layer(backend: Backend, g: &Geometry) -> Option<Self>;
    /// The single-key entry of these kernels.
    #[cfg(feature = "capi")]
    fn one_fn(&self) -> OneFn<Self::Answer>;
    /// The single-key entries resolved so far, by [`kernel_choice`].
    #[cfg(feature = "capi")]
    fn resolved() -> &'static ResolvedOnes;
    fn one(&self, parts: &Parts, payload: &[u8], x: u64) -> Self::Answer;
    fn batch(&self, parts: &Parts, payload: &[u8], xs: &[u64], out: &mut [Self::Answer]);
}

impl<A: Answer> LayerKernels for Kernels<Parts, A> {
    type Answer = A;
    const MISSING: A = A::MISSING;
    fn for_layer(backend: Backend, g: &Geometry) -> Option<Self> {
        A::for_layer(backend, g)
    }
    #[cfg(feature = "capi")]
    fn one_fn(&self) -> OneFn<A> {
        self.one
    }
    #[cfg(feature = "capi")]
    fn resolved() -> &'static ResolvedOnes {
        A::resolved()
    }
    #[inline(always)]
    fn one(&self, parts: &Parts, payload: &[u8], x: u64) -> A {
        Kernels::one(self, parts, payload, x)
    }
    #[inline(always)]
    fn batch(&self, parts: &Parts, payload: &[u8], xs: &[u64], out: &mut [A]) {
        Kernels::batch(self, parts, payload, xs, out);
    }
}

/// A layer's single-key entry: `(parts, payload, hash)` to its answer.
#[cfg(feature = "capi")]
pub(crate) type OneFn<A> = OneEntry<Parts, A>;

/// Kernel choices [`kernel_choice`] numbers: backend (room for 8),
/// width, probes (Homogeneous, Standard, smashed), column bound (runtime,
/// 8, 12, 16), empty or not. A backend code past the room gives a choice
/// past the table, which resolves to nothing.
#[cfg(feature = "capi")]
pub(crate) const KERNEL_CHOICES: usize = 8 * 2 * 3 * 4 * 2;

/// Everything [`LayerKernels::for_layer`] picks a single-key entry by, as
/// one small number below [`KERNEL_CHOICES`]: what a C struct keeps as
/// its kernel choice, so that a query finds its entry in
/// [`LayerKernels::resolved`] without matching again.
#[cfg(feature = "capi")]
pub(crate) fn kernel_choice(backend: Backend, g: &Geometry) -> u32 {
    let probes = match g.kind {
        Kind::Homogeneous => 0,
        Kind::Standard | Kind::Bumped => 1,
        Kind::StandardSmash => 2,
    };
    let columns = match g.max_columns() {
        0 => 0,
        max => match single_query_columns(max) {
            8 => 1,
            12 => 2,
            16 => 3,
            _ => 0,
        },
    };
    let width = u32::from(g.width == Width::W128);
    let empty = u32::from(g.num_blocks == 0);
    ((((backend.code() * 2 + width) * 3 + probes) * 4 + columns) * 2) + empty
}

/// Single-key entries resolved so far, one slot per kernel choice: each
/// slot is empty or holds the entry [`LayerKernels::for_layer`] resolved
/// for that choice (proven then, and the CPU's features do not change).
#[cfg(feature = "capi")]
pub(crate) struct ResolvedOnes([AtomicPtr<()>; KERNEL_CHOICES]);

#[cfg(feature = "capi")]
impl ResolvedOnes {
    const fn new() -> ResolvedOnes {
        ResolvedOnes([const { AtomicPtr::new(core::ptr::null_mut()) }; KERNEL_CHOICES])
    }
}

/// The single-key entry of kernels `K` for `backend` and a layer of
/// geometry `g`, whose [`kernel_choice`] is `choice`: from
/// [`LayerKernels::resolved`] once resolved, a load and a test. `None`
/// where this CPU or build lacks the backend, or `choice` is not the
/// choice of `backend` and `g` (checked when resolving, and resolving is
/// the only way a slot fills).
#[cfg(feature = "capi")]
#[inline(always)]
pub(crate) fn resolved_one<K: LayerKernels>(
    choice: u32,
    backend: Backend,
    g: &Geometry,
) -> Option<OneFn<K::Answer>> {
    let slot = K::resolved().0.get(choice as usize)?;
    let entry = slot.load(Ordering::Relaxed);
    if entry.is_null() {
        return resolve_one::<K>(slot, choice, backend, g);
    }
    // SAFETY: a slot holds null or an `OneFn<K::Answer>` that
    // `resolve_one` stored, proven for this CPU; `K::resolved` is `K`'s
    // own table. Function and data pointers have one size and
    // representation on every target this crate builds for.
    Some(unsafe { core::mem::transmute::<*mut (), OneFn<K::Answer>>(entry) })
}

/// [`resolved_one`] of a choice that has resolved already, with no way
/// to resolve it: a load and a test, for the inline path of a query.
#[cfg(feature = "capi")]
#[inline(always)]
pub(crate) fn resolved_one_ready<K: LayerKernels>(choice: u32) -> Option<OneFn<K::Answer>> {
    let entry = K::resolved()
        .0
        .get(choice as usize)?
        .load(Ordering::Relaxed);
    if entry.is_null() {
        return None;
    }
    // SAFETY: as in `resolved_one`: a slot holds null or an
    // `OneFn<K::Answer>` that `resolve_one` stored for its choice, proven
    // for this CPU.
    Some(unsafe { core::mem::transmute::<*mut (), OneFn<K::Answer>>(entry) })
}

/// [`resolved_one`]'s first call for a choice: resolves it and fills its
/// slot.
#[cfg(feature = "capi")]
#[cold]
#[inline(never)]
fn resolve_one<K: LayerKernels>(
    slot: &AtomicPtr<()>,
    choice: u32,
    backend: Backend,
    g: &Geometry,
) -> Option<OneFn<K::Answer>> {
    if kernel_choice(backend, g) != choice {
        return None;
    }
    let one = K::for_layer(backend, g)?.one_fn();
    slot.store(one as *mut (), Ordering::Relaxed);
    Some(one)
}

/// `backend`'s scan of a Bumped filter's first layer for batch queries
/// (vector code on AVX2 and AVX-512, the scalar scan elsewhere), or `None`
/// where this CPU or build lacks the backend.
pub(crate) fn scan_bumped(backend: Backend) -> Option<ScanBumpedFn> {
    // Unused where no x86 kernel is compiled (the scalar scan is safe).
    #[allow(unused_parens)]
    #[cfg_attr(not(ribbon_x86_kernels), allow(dead_code))]
    type Scan =
        unsafe fn(&Parts, &ThresholdsRef<'_>, &[u64], usize, &mut [BumpedKey]) -> (usize, usize);
    Some(match backend {
        #[cfg(ribbon_x86_kernels)]
        Backend::Avx2 => proven!(Avx2::detect()?, avx2::scan_bumped, Scan => ScanBumpedFn),
        #[cfg(ribbon_avx512_kernels)]
        Backend::Avx512 => proven!(Avx512::detect()?, avx512::scan_bumped, Scan => ScanBumpedFn),
        _ if backend.is_available() => scalar::scan_bumped,
        _ => return None,
    })
}

/// Hints that the cache line holding `words[at]` will soon be written
/// (banding's rows): `arch::prefetch_for_write`, which the table calls
/// for the builds as it calls every other kernel.
#[inline(always)]
pub(crate) fn prefetch_for_write(words: &[u64], at: usize) {
    crate::arch::prefetch_for_write(words, at);
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
    /// `backend`'s evaluation entry points for probes `P`, each proven;
    /// the single evaluation compiled for `columns` (as for
    /// [`KernelWord::query_entries`]).
    fn eval_entries<S, P: Probes<Self, Source = S>>(
        backend: Backend,
        columns: usize,
    ) -> Option<(GetFn<S>, GetBatchFn<S>)>;
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

            fn eval_entries<S, P: Probes<$W, Source = S>>(
                backend: Backend,
                columns: usize,
            ) -> Option<(GetFn<S>, GetBatchFn<S>)> {
                Some(match backend {
                    Backend::Scalar => (
                        scalar::get::<$W, P> as GetFn<S>,
                        scalar::get_batch::<$W, P> as GetBatchFn<S>,
                    ),
                    #[cfg(ribbon_x86_kernels)]
                    Backend::Avx2 => proven_evals!(Avx2::detect()?, avx2, $W, columns),
                    #[cfg(ribbon_avx512_kernels)]
                    Backend::Avx512 => proven_evals!(Avx512::detect()?, avx512, $W, columns),
                    #[cfg(ribbon_neon_kernels)]
                    Backend::Neon => proven_evals!(Neon::detect()?, neon, $W),
                    Backend::Portable => proven_evals!(Portable::detect()?, portable, $W, columns),
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
mod tests;
