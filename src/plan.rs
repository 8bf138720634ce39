//! Plans: kind, width, keys and a space or FP budget -> a sized [`Plan`],
//! and the build that follows it. The formulas and measured tables that
//! size a plan are in [`crate::sizing`]; a plan checks and keeps what they
//! give.
//!
//! All math here is integer or fixed point, because kernel callers cannot
//! use the FPU.

use crate::arith::{div, div_ceil};
use crate::backend::Backend;
use crate::band::{self, Banding};
use crate::bump::{Bounds, Shape};
use crate::bumped_layout::{LAST_LAYER_KEYS, bumping_blocks, last_blocks, layer_geometry};
use crate::error::Error;
use crate::filter::FilterRef;
use crate::fp::{self, FpRate};
use crate::layout::{Family, Geometry, HEADER_BYTES, Kind, MAX_COLUMNS, Width};
use crate::sizing::{
    PPM, blocks_for, budget_words, check_keys, columns_for_bits, columns_for_fp, densest_within,
    homogeneous_fp_margin_ppm, homogeneous_stream_capacity, split_words,
};

// `Plan::build`'s seed retries and fallbacks.
mod build;

/// Fewest bits per key (in thousandths) [`Plan::new`] accepts: one bit per
/// key, the budget of one column per slot (FP rate 1/2). Smaller budgets
/// make filters that answer "maybe" to almost every hash, so they are
/// [`Error::InvalidBitsPerKey`] rather than a silently useless filter.
pub const MIN_MILLIBITS_PER_KEY: u32 = 1000;

/// Most bits per key (in thousandths) [`Plan::new`] accepts: 131 bits,
/// twice what 64 columns per slot can use. Larger budgets are
/// [`Error::InvalidBitsPerKey`]; so are smaller ones that would need more
/// than 64 columns.
pub const MAX_MILLIBITS_PER_KEY: u32 = 1 << 17;

/// Fewest solution bits per slot (in thousandths) [`Plan::with_slots`]
/// accepts: half a column per slot, the least a filter's header may state
/// (fewer would be blocks without columns, which match every key).
const MIN_MILLICOLUMNS: u32 = 500;

/// Seeds a Standard build tries before it falls back to a Homogeneous
/// filter over the same slots (see [`Plan::build`]). Plans are sized so
/// that about 19 builds in 20 succeed with the first seed, so exhausting
/// all of them is astronomically unlikely unless the key hashes themselves
/// are degenerate or crafted.
pub const MAX_SEEDS: u32 = 64;

/// Seeds a Homogeneous build tries before it settles for the one with the
/// least measured excess (see [`HOMOGENEOUS_EXCESS_LIMIT_PPM`]).
pub const HOMOGENEOUS_SEEDS: u32 = 8;

/// The measured excess ([`FilterRef::estimated_fp_ppt`]) above which a
/// Homogeneous build retries with the next seed, in parts per million of
/// the column FP rate.
///
/// The promise is at most 1.10 times the column rate. The measurement
/// followed the exact rate within 0.018 of the column rate on every one of
/// 300 key sets of 10^6 keys (`examples/calibrate.rs homogeneous --list`),
/// so a filter kept at 7.5 % stays under 10 %; a lower limit would retry
/// more builds (6.25 % retried 7.7 % of those key sets at 7.7 bits per key,
/// w = 64; 7.5 % retries 4.7 %).
pub const HOMOGENEOUS_EXCESS_LIMIT_PPM: u64 = 75_000;

/// Capacity of a banding inside [`Plan::build`], which checks the key count
/// itself.
const NO_LIMIT: u64 = u64::MAX;

/// A sized filter configuration: how many slots and columns a filter for a
/// given number of keys gets. `Copy`; allocation-free; integer math only.
///
/// ```
/// use ribbon_kernel::{Kind, Plan, Width};
///
/// // 10,000 keys at 7.7 bits per key.
/// let plan = Plan::new(Kind::Homogeneous, Width::W64, 10_000, 7_700)?;
/// assert!(plan.filter_bytes() < 10_000 * 8 / 8 + 100);
/// // Or: "one false positive in 100", or "at most 4 KiB".
/// let by_fp = Plan::for_fp_rate(Kind::Standard, Width::W128, 10_000, 100)?;
/// let by_size = Plan::for_bytes(Kind::Homogeneous, Width::W128, 10_000, 4096)?;
/// assert!(by_size.filter_bytes() <= 4096);
/// # let _ = by_fp;
/// # Ok::<(), ribbon_kernel::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Plan {
    /// One ribbon or Bumped Ribbon's layers, decided when the plan is made.
    shape: PlanShape,
    /// Keys the plan was sized for; `None` for [`Plan::with_slots`].
    num_keys: Option<usize>,
    seed: u32,
    /// Backend for back-substitution; `None` means [`Backend::current`].
    backend: Option<Backend>,
    /// Seeds a build tries; 0 for the kind's default.
    max_seeds: u32,
}

/// What a [`Plan`] builds. The kind decides it once, when the plan is
/// made ([`PlanShape::of`]); every method whose answer differs between
/// the two matches on it once, and the geometry and column fraction are
/// where only their shape has them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum PlanShape {
    /// The Standard kinds and Homogeneous Ribbon: one ribbon of this
    /// geometry, banded and solved in one piece.
    Ribbon(Geometry),
    /// Bumped Ribbon: layers, the first of geometry `first` (which holds
    /// most keys; the later ones follow from the keys each layer bumps),
    /// and in every layer the fraction `upper_millis / 1000` of blocks
    /// with `lower_columns + 1` columns.
    Layers { first: Geometry, upper_millis: u32 },
}

impl PlanShape {
    /// The shape of a plan of `geometry`'s kind; `upper_millis` counts
    /// for Bumped Ribbon only.
    fn of(geometry: Geometry, upper_millis: u32) -> PlanShape {
        if geometry.kind == Kind::Bumped {
            PlanShape::Layers {
                first: geometry,
                upper_millis,
            }
        } else {
            PlanShape::Ribbon(geometry)
        }
    }

    /// The ribbon's geometry, or the first layer's.
    fn geometry(&self) -> &Geometry {
        match self {
            PlanShape::Ribbon(g) | PlanShape::Layers { first: g, .. } => g,
        }
    }
}

impl Plan {
    /// Plans a filter for `num_keys` keys using `millibits_per_key / 1000`
    /// payload bits per key (the header is not counted), as RocksDB counts.
    ///
    /// The slots are sized for the kind and width (paper eq. 7 for
    /// Homogeneous Ribbon, measured construction-failure rates for the
    /// Standard kinds) and the bits are spread over them as a fractional
    /// number of columns. A filter has at least one block of `w` slots, so
    /// filters for a handful of keys keep their FP rate and take more space
    /// than the budget; see [`Plan::for_bytes`] for a hard limit.
    pub fn new(
        kind: Kind,
        width: Width,
        num_keys: usize,
        millibits_per_key: u32,
    ) -> Result<Plan, Error> {
        check_keys(num_keys)?;
        if !(MIN_MILLIBITS_PER_KEY..=MAX_MILLIBITS_PER_KEY).contains(&millibits_per_key) {
            return Err(Error::InvalidBitsPerKey);
        }
        if kind == Kind::Bumped {
            return Plan::bumped(width, num_keys, u64::from(millibits_per_key));
        }
        Plan::ribbon_new(kind, width, num_keys, millibits_per_key)
    }

    /// [`Plan::new`] of a Standard or Homogeneous ribbon. Each kind's
    /// sizing in a frame of its own, so that a Bumped plan's (the deeper
    /// one) does not carry the other's (on a Cortex-M4, a plan's stack was
    /// over 1 KiB).
    #[inline(never)]
    fn ribbon_new(
        kind: Kind,
        width: Width,
        num_keys: usize,
        millibits_per_key: u32,
    ) -> Result<Plan, Error> {
        if num_keys == 0 {
            return Ok(Plan::empty(kind, width));
        }
        let r_milli = columns_for_bits(kind, width, num_keys, millibits_per_key);
        let blocks = blocks_for(kind, width, num_keys, r_milli);
        let words = budget_words(width, num_keys as u64, millibits_per_key, r_milli);
        let words = usize::try_from(words).map_err(|_| Error::TooLarge)?;
        let geometry = split_words(kind, width, blocks, words)?;
        Plan::checked(PlanShape::Ribbon(geometry), num_keys)
    }

    /// Plans the smallest filter whose FP rate is at most `1 / one_in`.
    ///
    /// For the Standard kinds the rate of the columns is exact; Homogeneous
    /// Ribbon keeps a small measured margin for its extra false positives.
    pub fn for_fp_rate(
        kind: Kind,
        width: Width,
        num_keys: usize,
        one_in: u64,
    ) -> Result<Plan, Error> {
        check_keys(num_keys)?;
        if one_in < 2 {
            return Err(Error::InvalidFpRate);
        }
        if kind == Kind::Bumped {
            // Every layer is Standard Ribbon: the columns' rate is exact.
            let r_milli = columns_for_fp(u128::from(one_in), 1).ok_or(Error::InvalidFpRate)?;
            return Plan::bumped(width, num_keys, r_milli).map_err(fp_rate_error);
        }
        Plan::ribbon_for_fp_rate(kind, width, num_keys, one_in)
    }

    /// [`Plan::for_fp_rate`] of a Standard or Homogeneous ribbon, in a
    /// frame of its own (as [`Plan::ribbon_new`]).
    #[inline(never)]
    fn ribbon_for_fp_rate(
        kind: Kind,
        width: Width,
        num_keys: usize,
        one_in: u64,
    ) -> Result<Plan, Error> {
        if num_keys == 0 {
            return Ok(Plan::empty(kind, width));
        }
        // Target rate 1 / (one_in * (1 + margin)): as a fraction
        // den / num with num = one_in * (PPM + margin), den = PPM.
        let margin = match kind {
            Kind::Homogeneous => homogeneous_fp_margin_ppm(width),
            _ => 0,
        };
        let target_num = u128::from(one_in) * u128::from(PPM + margin);
        let target_den = u128::from(PPM);
        let r_milli = columns_for_fp(target_num, target_den).ok_or(Error::InvalidFpRate)?;
        let blocks = blocks_for(kind, width, num_keys, r_milli);
        let words = div_ceil(blocks as u128 * u128::from(r_milli), 1000);
        let words = usize::try_from(words).map_err(|_| Error::TooLarge)?;
        let mut geometry = split_words(kind, width, blocks, words).map_err(fp_rate_error)?;
        // Rounding to whole words, and the last block receiving a single
        // start, can leave the rate a hair above target: add upper words
        // until it is met.
        while !fp::columns_fp_at_most(&geometry, target_num, target_den) {
            let words = geometry.total_words().ok_or(Error::TooLarge)? + 1;
            geometry =
                split_words(kind, width, geometry.num_blocks, words).map_err(fp_rate_error)?;
        }
        Plan::checked(PlanShape::Ribbon(geometry), num_keys)
    }

    /// Plans the filter with the lowest FP rate whose serialized length
    /// (header included) is at most `filter_bytes`, as a storage engine that
    /// sizes filters by memory does.
    ///
    /// Any budget from one bit per key up works, however generous
    /// (`usize::MAX` included): past 64 columns per slot (an FP rate of
    /// 2^-64) the filter stops growing and is smaller than the budget.
    /// Less than one bit per key is [`Error::BudgetTooSmall`].
    pub fn for_bytes(
        kind: Kind,
        width: Width,
        num_keys: usize,
        filter_bytes: usize,
    ) -> Result<Plan, Error> {
        check_keys(num_keys)?;
        if kind == Kind::Bumped {
            return Plan::bumped_for_bytes(width, num_keys, filter_bytes);
        }
        Plan::ribbon_for_bytes(kind, width, num_keys, filter_bytes)
    }

    /// [`Plan::for_bytes`] of a Standard or Homogeneous ribbon, in a frame
    /// of its own (as [`Plan::ribbon_new`]).
    #[inline(never)]
    fn ribbon_for_bytes(
        kind: Kind,
        width: Width,
        num_keys: usize,
        filter_bytes: usize,
    ) -> Result<Plan, Error> {
        // At least one bit per key (one column per slot, FP 1/2), in whole
        // words: less makes a filter that matches almost everything.
        let min_words = num_keys.div_ceil(width.bits() as usize);
        let needed = min_words
            .checked_mul(width.word_bytes())
            .and_then(|b| b.checked_add(HEADER_BYTES))
            .ok_or(Error::TooLarge)?;
        if filter_bytes < needed {
            return Err(Error::BudgetTooSmall {
                needed,
                given: filter_bytes,
            });
        }
        if num_keys == 0 {
            return Ok(Plan::empty(kind, width));
        }
        let words = (filter_bytes - HEADER_BYTES) >> width.word_bytes().trailing_zeros();
        // Columns per slot if the budget is spread over the right number of
        // slots; refine twice (epsilon depends weakly on the columns).
        let bits = words as u128 * u128::from(width.bits());
        let mut r_milli =
            div(bits * 1000, num_keys as u128).min(u128::from(MAX_COLUMNS) * 1000) as u64;
        let mut blocks = 1;
        for _ in 0..3 {
            blocks = blocks_for(kind, width, num_keys, r_milli);
            r_milli = div(bits * 1000, blocks as u128 * u128::from(width.bits()))
                .min(u128::from(MAX_COLUMNS) * 1000) as u64;
        }
        // A budget past 64 columns per slot buys nothing more: the best
        // filter within it has 64.
        let too_small = Error::BudgetTooSmall {
            needed,
            given: filter_bytes,
        };
        let capped = words.min(blocks.saturating_mul(MAX_COLUMNS as usize));
        let mut geometry = split_words(kind, width, blocks, capped).map_err(|e| match e {
            Error::TooLarge => Error::TooLarge,
            _ => too_small,
        })?;
        // More columns need more free slots (see `blocks_for`), so a budget
        // just past a step in blocks can spread thinner than a smaller one
        // did: fewer blocks with the most columns they allow may be better.
        for fewer in (blocks.saturating_sub(2).max(1)..blocks).rev() {
            if let Some(g) = densest_within(kind, width, num_keys, fewer, words)
                && g.column_fp_ppt() < geometry.column_fp_ppt()
            {
                geometry = g;
            }
        }
        Plan::checked(PlanShape::Ribbon(geometry), num_keys)
    }

    /// Plans a filter of a fixed size rather than for a number of keys: at
    /// least `num_slots` slots (rounded up to whole blocks of `w`) with
    /// `millicolumns / 1000` solution bits per slot.
    ///
    /// It suits streaming callers that fill a fixed-size filter until
    /// [`Banding::add`] reports the first inconsistency (Standard Ribbon) or
    /// [`AddOutcome::Full`](crate::AddOutcome::Full), and experiments.
    /// [`Plan::build`] with such a plan takes any number of hashes for the
    /// Standard kinds (expect [`Error::ConstructionFailed`] when they
    /// approach the slots) and at most one per slot for Homogeneous Ribbon
    /// (more is [`Error::TooManyKeys`]: the whole ribbon would be
    /// overloaded and match almost every key). A Homogeneous filter given
    /// more keys than [`Plan::new`] would size these slots for keeps every
    /// key but matches more non-members than its columns alone do:
    /// [`FilterRef::estimated_fp_ppt`] measures it, while
    /// [`Plan::column_fp_ppt`] is the rate of the columns only.
    /// `num_slots = 0` plans an empty filter, which takes no hashes.
    ///
    /// Fewer than 500 millicolumns (half a column per slot) is
    /// [`Error::InvalidBitsPerKey`], as is more than 64 columns.
    pub fn with_slots(
        kind: Kind,
        width: Width,
        num_slots: usize,
        millicolumns: u32,
    ) -> Result<Plan, Error> {
        if kind == Kind::Bumped {
            return Err(Error::Unsupported);
        }
        if !(MIN_MILLICOLUMNS..=MAX_COLUMNS * 1000).contains(&millicolumns) {
            return Err(Error::InvalidBitsPerKey);
        }
        if num_slots == 0 {
            return Ok(Plan {
                num_keys: None,
                ..Plan::empty(kind, width)
            });
        }
        let blocks = div_ceil(num_slots as u128, u128::from(width.bits())) as usize;
        let words = div_ceil(blocks as u128 * u128::from(millicolumns), 1000);
        let words = usize::try_from(words).map_err(|_| Error::TooLarge)?;
        let geometry = split_words(kind, width, blocks, words)?;
        let plan = Plan {
            shape: PlanShape::Ribbon(geometry),
            num_keys: None,
            seed: 0,
            backend: None,
            max_seeds: 0,
        };
        plan.fits()?;
        Ok(plan)
    }

    /// A Bumped plan for `num_keys` keys at `r_milli / 1000` columns per
    /// slot in every layer: the first layer's geometry, the rest follows
    /// from the keys each layer bumps.
    fn bumped(width: Width, num_keys: usize, r_milli: u64) -> Result<Plan, Error> {
        check_keys(num_keys)?;
        let max_milli = u64::from(MAX_COLUMNS) * 1000;
        if !(u64::from(MIN_MILLIBITS_PER_KEY)..=max_milli).contains(&r_milli) {
            return Err(Error::InvalidBitsPerKey);
        }
        if num_keys == 0 {
            return Ok(Plan::empty(Kind::Bumped, width));
        }
        let (lower, upper_millis) = ((r_milli / 1000) as u32, (r_milli % 1000) as u32);
        let n = num_keys as u64;
        let blocks = if n > LAST_LAYER_KEYS {
            bumping_blocks(width, n)
        } else {
            last_blocks(width, n, 0)
        };
        let first = layer_geometry(width, blocks, lower, upper_millis)?;
        let geometry = Geometry::new(
            Kind::Bumped,
            width,
            first.num_blocks,
            first.lower_columns,
            first.upper_start_block,
        )?;
        let shape = PlanShape::Layers {
            first: geometry,
            upper_millis,
        };
        Plan::checked(shape, num_keys)
    }

    /// [`Plan::for_bytes`] for Bumped Ribbon: the most columns (in
    /// thousandths) whose bound on the filter's size fits the budget.
    fn bumped_for_bytes(width: Width, num_keys: usize, filter_bytes: usize) -> Result<Plan, Error> {
        let plan = |r_milli| Plan::bumped(width, num_keys, r_milli);
        let fits = |r_milli| plan(r_milli).is_ok_and(|p| p.filter_bytes() <= filter_bytes);
        let least = u64::from(MIN_MILLIBITS_PER_KEY);
        if !fits(least) {
            return Err(match plan(least) {
                Ok(p) => Error::BudgetTooSmall {
                    needed: p.filter_bytes(),
                    given: filter_bytes,
                },
                Err(e) => e,
            });
        }
        // Binary search: the bound grows with the columns.
        let (mut lo, mut hi) = (least, u64::from(MAX_COLUMNS) * 1000);
        while lo < hi {
            let mid = lo + (hi - lo).div_ceil(2);
            if fits(mid) { lo = mid } else { hi = mid - 1 }
        }
        plan(lo)
    }

    /// The layers' shape for [`bump`] of a Bumped plan whose first layer
    /// is `first`: its columns and first seed.
    fn layer_shape(&self, first: &Geometry, upper_millis: u32) -> Shape {
        Shape {
            width: first.width,
            lower_columns: first.lower_columns,
            upper_millis,
            seed: self.seed,
            retries: Shape::retries_for(self.max_seeds()),
            family: Family::Filter,
        }
    }

    /// A Bumped plan's bounds for `n` keys; [`Error::TooLarge`] past the
    /// address space.
    fn layer_bounds(&self, first: &Geometry, upper_millis: u32, n: usize) -> Result<Bounds, Error> {
        Bounds::new(&self.layer_shape(first, upper_millis), n as u64)
    }

    /// The same plan, trying seeds from `seed` on (the default is 0).
    /// Filters built from the same hashes with different seeds have
    /// independent false positives.
    ///
    /// A seed drawn from a secret random source is the defence against key
    /// hashes crafted to crowd the ribbon (see "Untrusted keys" under
    /// [`Plan::build`]). The seed a filter was built with is stored in its
    /// header: it is secret only until the filter is published.
    pub fn with_seed(self, seed: u32) -> Plan {
        Plan { seed, ..self }
    }

    /// The same plan, trying at most `seeds` seeds per build (at least one).
    ///
    /// The default is [`MAX_SEEDS`] for the Standard kinds, whose builds
    /// fall back to Homogeneous Ribbon when every seed gives an
    /// inconsistent system (see [`Plan::build`]), and [`HOMOGENEOUS_SEEDS`] for Homogeneous
    /// Ribbon, whose builds retry while the measured excess breaks the FP
    /// promise and then keep the best seed. One seed makes every build a
    /// single attempt (faster on the rare key sets that need a retry, with
    /// no guard on Homogeneous FP tails). [`Kind::Bumped`] builds try up to
    /// 16 of them per bumping layer (the plan's next seed, then seeds from
    /// a digest of the layer's keys; one is practically always enough),
    /// and the last layer its 16 sizes, each with the plan's next seed,
    /// then up to 16 more seeds from its keys' digest at its largest size.
    /// If a layer finds none (crafted hashes, or one seed), the build
    /// falls back to the densest Homogeneous filter within the plan's
    /// bytes, so a Bumped filter build never fails for its keys.
    pub fn with_max_seeds(self, seeds: u32) -> Plan {
        Plan {
            max_seeds: seeds.max(1),
            ..self
        }
    }

    /// Seeds a build tries (see [`Plan::with_max_seeds`]).
    pub fn max_seeds(&self) -> u32 {
        match (self.max_seeds, self.kind().is_standard()) {
            (0, true) => MAX_SEEDS,
            (0, false) => HOMOGENEOUS_SEEDS,
            (n, _) => n,
        }
    }

    /// The same plan, back-substituting with `backend` instead of
    /// [`Backend::current`]. Every backend writes identical bytes; this is
    /// for comparing them. Refuses a backend this CPU or build lacks.
    pub fn with_backend(self, backend: Backend) -> Result<Plan, Error> {
        Ok(Plan {
            backend: Some(backend.available()?),
            ..self
        })
    }

    fn empty(kind: Kind, width: Width) -> Plan {
        let geometry = Geometry {
            kind,
            width,
            num_blocks: 0,
            lower_columns: 0,
            upper_start_block: 0,
        };
        Plan {
            shape: PlanShape::of(geometry, 0),
            num_keys: Some(0),
            seed: 0,
            backend: None,
            max_seeds: 0,
        }
    }

    /// A plan of `shape` for `num_keys` keys, if this platform holds its
    /// buffers ([`Plan::fits`]).
    fn checked(shape: PlanShape, num_keys: usize) -> Result<Plan, Error> {
        let plan = Plan {
            shape,
            num_keys: Some(num_keys),
            seed: 0,
            backend: None,
            max_seeds: 0,
        };
        plan.fits()?;
        Ok(plan)
    }

    /// The ribbon's geometry, or the first layer's for [`Kind::Bumped`].
    fn geometry(&self) -> &Geometry {
        self.shape.geometry()
    }

    /// [`Error::TooLarge`] unless this platform can hold every buffer the
    /// plan asks for: the filter (checked by [`Geometry::new`]) and
    /// [`Plan::scratch_words`] words of scratch, in bytes at most
    /// `isize::MAX`, the most one Rust slice or C object holds. On 32-bit
    /// targets this refuses plans of more than about 2^26 keys, whose
    /// scratch byte count would wrap `size_t` in C.
    fn fits(&self) -> Result<(), Error> {
        let n = self.num_keys.unwrap_or(0);
        let g = match &self.shape {
            PlanShape::Ribbon(g) => g,
            PlanShape::Layers {
                first,
                upper_millis,
            } => return self.layer_bounds(first, *upper_millis, n).map(|_| ()),
        };
        let system = band::scratch_words(g).ok_or(Error::TooLarge)?;
        let words = system
            .checked_add(band::sort_scratch_words(g, n).ok_or(Error::TooLarge)?)
            .ok_or(Error::TooLarge)?;
        if words > isize::MAX as usize / 8 {
            return Err(Error::TooLarge);
        }
        Ok(())
    }

    /// `u64` words of scratch [`Plan::build`] needs: one or two words per
    /// slot for the banded system, plus, for plans made for a number of
    /// keys, one word per key and one per bucket of 2048 slots so that keys
    /// can be banded in start order (much faster for large filters; see
    /// `docs/performance/`). [`Plan::banding`] needs only [`Plan::banding_scratch_words`].
    /// The scratch is free again once the build returns.
    pub fn scratch_words(&self) -> usize {
        self.scratch_words_for(self.num_keys.unwrap_or(0))
    }

    /// [`Plan::scratch_words`] for building from `n` hashes: a
    /// [`Plan::with_slots`] plan bands in start order too when it gets this
    /// much.
    #[cfg_attr(not(feature = "alloc"), allow(dead_code))]
    pub(crate) fn scratch_words_for(&self, n: usize) -> usize {
        match &self.shape {
            PlanShape::Ribbon(g) => band::scratch_words(g)
                .zip(band::sort_scratch_words(g, n))
                .and_then(|(a, b)| a.checked_add(b)),
            PlanShape::Layers {
                first,
                upper_millis,
            } => self
                .layer_bounds(first, *upper_millis, n)
                .ok()
                .and_then(|b| b.scratch_words()),
        }
        .unwrap_or(usize::MAX)
    }

    /// `u64` words of scratch [`Plan::banding`] needs: the banded system
    /// alone. Incremental banding adds keys in arrival order, so a caller
    /// short of memory can build with this much through [`Plan::banding`],
    /// [`Banding::add_all`] and [`Banding::finish`], more slowly for large
    /// filters.
    pub fn banding_scratch_words(&self) -> usize {
        match &self.shape {
            PlanShape::Ribbon(g) => band::scratch_words(g).unwrap_or(usize::MAX),
            // No incremental banding (`Plan::banding` refuses).
            PlanShape::Layers { .. } => 0,
        }
    }

    /// Exact serialized length of the filter, header included. For
    /// [`Kind::Bumped`] the most a build writes, whatever the keys (within
    /// about 0.5 % of what builds of 10^6 keys write); the built filter's
    /// [`FilterRef::filter_bytes`] is its exact length.
    pub fn filter_bytes(&self) -> usize {
        match &self.shape {
            PlanShape::Ribbon(g) => g.filter_bytes(),
            PlanShape::Layers {
                first,
                upper_millis,
            } => self
                .layer_bounds(first, *upper_millis, self.num_keys.unwrap_or(0))
                .map_or(usize::MAX, |b| b.filter_bytes),
        }
    }

    /// The kind.
    pub fn kind(&self) -> Kind {
        self.geometry().kind
    }

    /// The ribbon width.
    pub fn width(&self) -> Width {
        self.geometry().width
    }

    /// The number of keys the plan was sized for, which is the most key
    /// hashes [`Plan::build`] accepts; `None` for a [`Plan::with_slots`]
    /// plan, which accepts any number.
    pub fn num_keys(&self) -> Option<usize> {
        self.num_keys
    }

    /// Number of slots `m` (a multiple of the width). For [`Kind::Bumped`]
    /// the first layer's, which holds most keys; the later layers' follow
    /// from the keys it bumps.
    pub fn num_slots(&self) -> usize {
        self.geometry().num_slots()
    }

    /// The first seed a build tries.
    pub fn seed(&self) -> u32 {
        self.seed
    }

    /// Columns (solution bits per slot) of the lower blocks; the upper
    /// blocks have one more.
    pub fn lower_columns(&self) -> u32 {
        self.geometry().lower_columns
    }

    /// Payload bits per planned key, times 1000 (0 for a plan for no keys
    /// or a [`Plan::with_slots`] plan).
    pub fn millibits_per_key(&self) -> u64 {
        match self.num_keys {
            Some(n) => div(u128::from(self.payload_bits()) * 1000, n as u128) as u64,
            _ => 0,
        }
    }

    /// Payload bits (ICML words; the header is not counted). For
    /// [`Kind::Bumped`] an upper bound: everything after the header (layer
    /// table, thresholds and ICML words) of the largest filter a build
    /// may write.
    pub fn payload_bits(&self) -> u64 {
        // A ribbon's filter is the header and its payload (whose bits fit
        // in a u64, `Geometry::new`); layers' bound saturates.
        let bytes = self.filter_bytes().saturating_sub(HEADER_BYTES) as u64;
        bytes.saturating_mul(8)
    }

    /// FP rate of the columns in parts per trillion; see
    /// [`FilterRef::column_fp_ppt`].
    pub fn column_fp_ppt(&self) -> u64 {
        self.geometry().column_fp_ppt()
    }

    /// FP rate of the columns as an [`FpRate`], whose accessors name their
    /// unit ([`FpRate::one_in`], [`FpRate::parts_per_million`], ...); see
    /// [`FilterRef::column_fp_rate`]. The same rate as
    /// [`Plan::column_fp_ppt`], in finer units.
    pub fn column_fp_rate(&self) -> FpRate {
        FpRate::from_scaled(self.geometry().column_fp_scaled())
    }

    /// Builds a filter from `hashes` (at most [`Plan::num_keys`] of them, in
    /// any order, duplicates allowed) into `out`, using `scratch` (at least
    /// [`Plan::scratch_words`] words) as working memory.
    ///
    /// Writes exactly [`Plan::filter_bytes`] bytes at the start of `out`
    /// (for [`Kind::Bumped`] at most that many: the view's
    /// [`FilterRef::filter_bytes`] says how many), which may have any
    /// alignment, and returns a view of them. Never allocates.
    ///
    /// On every error the first [`HEADER_BYTES`](crate::HEADER_BYTES)
    /// bytes of `out` (as many as it has) are zeroed, so that a filter
    /// built there before never passes for the result of this build.
    ///
    /// Standard kinds retry with the next seed when the system is
    /// inconsistent, up to [`Plan::max_seeds`] seeds ([`MAX_SEEDS`]). If
    /// every seed fails, which honest key sets practically never do but
    /// hashes crafted against known seeds can (see below), the build falls
    /// back to a Homogeneous filter over the same slots and columns (same
    /// length; [`FilterRef::kind`] tells), which holds any keys: every key
    /// still answers yes, and the FP rate, likely a little above the
    /// plan's, is measured as for any Homogeneous build. Only a
    /// [`Plan::with_slots`] plan given more hashes than that Homogeneous
    /// filter is sized for fails ([`Error::ConstructionFailed`]).
    ///
    /// [`Kind::Bumped`] builds never fail either: each layer tries the
    /// plan's next seed, then seeds from a digest of its keys; a layer
    /// that finds none (keys crafted against every one of them, or a plan
    /// of one seed) makes the build fall back to the densest Homogeneous
    /// filter within [`Plan::filter_bytes`] (SECURITY.md gives its FP rate
    /// and what the attack costs).
    ///
    /// Homogeneous builds never fail for lack of a solution: they measure
    /// the filter's FP excess ([`FilterRef::estimated_fp_ppt`]) and retry
    /// with the next seed while it is above [`HOMOGENEOUS_EXCESS_LIMIT_PPM`]
    /// (about 1 build in 20 at most, fewer for most sizes), keeping the
    /// best of [`HOMOGENEOUS_SEEDS`] if none is below. The filter's seed is
    /// in its header ([`FilterRef::seed`]).
    ///
    /// # Untrusted keys
    ///
    /// The hashing constants are public, so whoever chooses the key hashes
    /// and knows the seeds a build will try can craft hashes that crowd one
    /// stretch of the ribbon: with the default seed 0, 150 such hashes per
    /// seed exhaust all 64 seeds of a Standard build (which then falls
    /// back as above) and raise a Homogeneous filter's FP rate locally.
    /// Where keys come from untrusted parties, build with a seed drawn from
    /// a secret random source ([`Plan::with_seed`]): the seed is mixed into
    /// every hash before its start is drawn, so hashes crafted for other
    /// seeds land like random keys. (This is no cryptographic guarantee;
    /// the Standard fallback above keeps the build from failing either
    /// way.)
    pub fn build<'a>(
        &self,
        hashes: &[u64],
        scratch: &mut [u64],
        out: &'a mut [u8],
    ) -> Result<FilterRef<'a>, Error> {
        let len = self.build_in_place(hashes, scratch, out)?;
        let out: &'a [u8] = out;
        // Sealed just now: its checksum need not be computed again.
        FilterRef::from_bytes_unverified(out.get(..len).unwrap_or(&[]))
    }

    /// Starts an incremental build with this plan's first seed: add key
    /// hashes one at a time, then [`Banding::finish`]. Clears the scratch.
    pub fn banding<'s>(&self, scratch: &'s mut [u64]) -> Result<Banding<'s>, Error> {
        let PlanShape::Ribbon(g) = self.shape else {
            // Layers are built whole ([`Plan::build`]).
            return Err(Error::Unsupported);
        };
        let capacity = self.banding_capacity() as u64;
        Banding::new(g, self.seed, self.backend(), scratch, capacity)
    }

    /// The most keys a [`Plan::banding`] accepts before it answers
    /// [`AddOutcome::Full`](crate::AddOutcome::Full).
    ///
    /// Standard kinds: the planned key count ([`Plan::num_slots`] for a
    /// [`Plan::with_slots`] plan; an inconsistency usually stops such a
    /// stream first). Homogeneous: the keys the slots hold with some room
    /// beyond the planned overhead (about 96-98 % of the planned keys), so
    /// that a stream, which cannot be retried with another seed, keeps the
    /// FP promise on every key set; never more than the planned keys.
    pub fn banding_capacity(&self) -> usize {
        let geometric = match &self.shape {
            PlanShape::Ribbon(g) if g.kind.is_standard() => g.num_slots(),
            PlanShape::Ribbon(g) => {
                let keys = self.num_keys.unwrap_or(g.num_slots()) as u64;
                homogeneous_stream_capacity(g, keys)
            }
            // No incremental banding (`Plan::banding` refuses).
            PlanShape::Layers { .. } => 0,
        };
        self.num_keys.map_or(geometric, |n| n.min(geometric))
    }

    /// The parts the C ABI stores in its opaque plan struct.
    #[cfg(feature = "capi")]
    pub(crate) fn raw_parts(&self) -> (Geometry, Option<usize>, u32, Option<Backend>, u32, u32) {
        let (geometry, upper_millis) = match self.shape {
            PlanShape::Ribbon(g) => (g, 0),
            PlanShape::Layers {
                first,
                upper_millis,
            } => (first, upper_millis),
        };
        (
            geometry,
            self.num_keys,
            self.seed,
            self.backend,
            self.max_seeds,
            upper_millis,
        )
    }

    /// Rebuilds a plan from [`Plan::raw_parts`], re-checking every size.
    #[cfg(feature = "capi")]
    pub(crate) fn from_raw_parts(
        geometry: Geometry,
        num_keys: Option<usize>,
        seed: u32,
        backend: Option<Backend>,
        max_seeds: u32,
        upper_millis: u32,
    ) -> Result<Plan, Error> {
        if backend.is_some_and(|b| !b.is_available()) {
            return Err(Error::BackendUnavailable);
        }
        // Only layers have a column fraction of their own, and only
        // Bumped plans for keys exist.
        let shape = PlanShape::of(geometry, upper_millis);
        let valid = match shape {
            PlanShape::Ribbon(_) => upper_millis == 0,
            PlanShape::Layers { .. } => upper_millis <= 999 && num_keys.is_some(),
        };
        if !valid {
            return Err(Error::CorruptHeader);
        }
        let plan = Plan {
            shape,
            num_keys,
            seed,
            backend,
            max_seeds,
        };
        plan.fits()?;
        Ok(plan)
    }

    /// The backend builds with this plan back-substitute with.
    pub fn backend(&self) -> Backend {
        self.backend.unwrap_or_else(Backend::current)
    }
}

/// A sizing error of [`Plan::for_fp_rate`]: too many columns means the
/// rate cannot be met; sizes past the address space stay
/// [`Error::TooLarge`].
fn fp_rate_error(e: Error) -> Error {
    match e {
        Error::TooLarge => Error::TooLarge,
        _ => Error::InvalidFpRate,
    }
}
