//! Sizing: kind, width, keys and a space or FP budget -> slots and columns.
//!
//! All math here is integer or fixed point (ppm = parts per million), because
//! kernel callers cannot use the FPU.

use crate::arith::{div, div_ceil};
use crate::backend::Backend;
use crate::band::{self, Banding};
use crate::bump::{self, Bounds, Shape};
use crate::bumped_layout::{LAST_LAYER_KEYS, bumping_blocks, last_blocks, layer_geometry};
use crate::error::Error;
use crate::filter::FilterRef;
use crate::fp;
use crate::kernels::SolveKernel;
use crate::layout::{Family, Geometry, HEADER_BYTES, Kind, MAX_COLUMNS, MAX_KEYS_U64, Width};

/// Most key hashes one plan accepts: 2^40 (or `usize::MAX` where that is
/// smaller), which keeps every sizing product far from `u128` overflow.
/// Plans whose buffers would not fit in this platform's address space are
/// [`Error::TooLarge`] well before this on 32-bit targets.
pub const MAX_KEYS: usize = if (usize::MAX as u64) < MAX_KEYS_U64 {
    usize::MAX
} else {
    MAX_KEYS_U64 as usize
};

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

const PPM: u64 = 1_000_000;

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
    geometry: Geometry,
    /// Keys the plan was sized for; `None` for [`Plan::with_slots`].
    num_keys: Option<usize>,
    seed: u32,
    /// Backend for back-substitution; `None` means [`Backend::current`].
    backend: Option<Backend>,
    /// Seeds a build tries; 0 for the kind's default.
    max_seeds: u32,
    /// Bumped Ribbon: the fraction of every layer's blocks with
    /// `lower_columns + 1` columns, in thousandths (the geometry above is
    /// the first layer's). 0 for the other kinds.
    upper_millis: u32,
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
        if num_keys == 0 {
            return Ok(Plan::empty(kind, width));
        }
        let r_milli = columns_for_bits(kind, width, num_keys, millibits_per_key);
        let blocks = blocks_for(kind, width, num_keys, r_milli);
        let words = budget_words(width, num_keys as u64, millibits_per_key, r_milli);
        let words = usize::try_from(words).map_err(|_| Error::TooLarge)?;
        let geometry = split_words(kind, width, blocks, words)?;
        Plan::checked(geometry, num_keys)
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
        Plan::checked(geometry, num_keys)
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
        Plan::checked(geometry, num_keys)
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
            geometry,
            num_keys: None,
            seed: 0,
            backend: None,
            max_seeds: 0,
            upper_millis: 0,
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
        Plan::checked_with(geometry, num_keys, upper_millis)
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

    /// A Bumped plan's shape: its columns and first seed.
    fn shape(&self) -> Shape {
        Shape {
            width: self.geometry.width,
            lower_columns: self.geometry.lower_columns,
            upper_millis: self.upper_millis,
            seed: self.seed,
            retries: Shape::retries_for(self.max_seeds()),
            family: Family::Filter,
        }
    }

    /// A Bumped plan's bounds; [`Error::TooLarge`] past the address space.
    fn bumped_bounds(&self) -> Result<Bounds, Error> {
        Bounds::new(&self.shape(), self.num_keys.unwrap_or(0) as u64)
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
        match (self.max_seeds, self.geometry.kind.is_standard()) {
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
        Plan {
            geometry: Geometry {
                kind,
                width,
                num_blocks: 0,
                lower_columns: 0,
                upper_start_block: 0,
            },
            num_keys: Some(0),
            seed: 0,
            backend: None,
            max_seeds: 0,
            upper_millis: 0,
        }
    }

    fn checked(geometry: Geometry, num_keys: usize) -> Result<Plan, Error> {
        Plan::checked_with(geometry, num_keys, 0)
    }

    /// [`Plan::checked`] with a Bumped plan's column fraction.
    fn checked_with(geometry: Geometry, num_keys: usize, upper_millis: u32) -> Result<Plan, Error> {
        let plan = Plan {
            geometry,
            num_keys: Some(num_keys),
            seed: 0,
            backend: None,
            max_seeds: 0,
            upper_millis,
        };
        plan.fits()?;
        Ok(plan)
    }

    /// [`Error::TooLarge`] unless this platform can hold every buffer the
    /// plan asks for: the filter (checked by [`Geometry::new`]) and
    /// [`Plan::scratch_words`] words of scratch, in bytes at most
    /// `isize::MAX`, the most one Rust slice or C object holds. On 32-bit
    /// targets this refuses plans of more than about 2^26 keys, whose
    /// scratch byte count would wrap `size_t` in C.
    fn fits(&self) -> Result<(), Error> {
        if self.geometry.kind == Kind::Bumped {
            return self.bumped_bounds().map(|_| ());
        }
        let system = band::scratch_words(&self.geometry).ok_or(Error::TooLarge)?;
        let words = system
            .checked_add(
                band::sort_scratch_words(&self.geometry, self.num_keys.unwrap_or(0))
                    .ok_or(Error::TooLarge)?,
            )
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
        if self.geometry.kind == Kind::Bumped {
            let bounds = Bounds::new(&self.shape(), n as u64);
            return bounds
                .ok()
                .and_then(|b| b.scratch_words())
                .unwrap_or(usize::MAX);
        }
        let system = band::scratch_words(&self.geometry);
        let sort = band::sort_scratch_words(&self.geometry, n);
        system
            .zip(sort)
            .and_then(|(a, b)| a.checked_add(b))
            .unwrap_or(usize::MAX)
    }

    /// `u64` words of scratch [`Plan::banding`] needs: the banded system
    /// alone. Incremental banding adds keys in arrival order, so a caller
    /// short of memory can build with this much through [`Plan::banding`],
    /// [`Banding::add_all`] and [`Banding::finish`], more slowly for large
    /// filters.
    pub fn banding_scratch_words(&self) -> usize {
        if self.geometry.kind == Kind::Bumped {
            return 0;
        }
        band::scratch_words(&self.geometry).unwrap_or(usize::MAX)
    }

    /// Exact serialized length of the filter, header included. For
    /// [`Kind::Bumped`] the most a build writes, whatever the keys (within
    /// about 0.5 % of what builds of 10^6 keys write); the built filter's
    /// [`FilterRef::filter_bytes`] is its exact length.
    pub fn filter_bytes(&self) -> usize {
        if self.geometry.kind == Kind::Bumped {
            return self.bumped_bounds().map_or(usize::MAX, |b| b.filter_bytes);
        }
        self.geometry.filter_bytes()
    }

    /// The kind.
    pub fn kind(&self) -> Kind {
        self.geometry.kind
    }

    /// The ribbon width.
    pub fn width(&self) -> Width {
        self.geometry.width
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
        self.geometry.num_slots()
    }

    /// The first seed a build tries.
    pub fn seed(&self) -> u32 {
        self.seed
    }

    /// Columns (solution bits per slot) of the lower blocks; the upper
    /// blocks have one more.
    pub fn lower_columns(&self) -> u32 {
        self.geometry.lower_columns
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
        if self.geometry.kind == Kind::Bumped {
            let bytes = self.filter_bytes().saturating_sub(HEADER_BYTES) as u64;
            return bytes.saturating_mul(8);
        }
        // A geometry's payload bits fit in a u64 (`Geometry::new`).
        (self.geometry.payload_bytes() as u64).saturating_mul(8)
    }

    /// FP rate of the columns in parts per trillion; see
    /// [`FilterRef::column_fp_ppt`].
    pub fn column_fp_ppt(&self) -> u64 {
        self.geometry.column_fp_ppt()
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

    /// [`Plan::build`] without the view: the filter's length. The C ABI
    /// calls this one, so that no view takes space on its stack.
    pub(crate) fn build_in_place(
        &self,
        hashes: &[u64],
        scratch: &mut [u64],
        out: &mut [u8],
    ) -> Result<usize, Error> {
        // A previous filter in this buffer must not survive a failed build,
        // whatever the failure: the header goes first.
        let header = out.len().min(HEADER_BYTES);
        if let Some(header) = out.get_mut(..header) {
            header.fill(0);
        }
        if let Some(n) = self.num_keys
            && hashes.len() > n
        {
            return Err(Error::TooManyKeys {
                limit: n as u64,
                given: hashes.len() as u64,
            });
        }
        if self.geometry.kind == Kind::Bumped {
            // Bumped builds split the scratch and check both buffers
            // themselves; they write at most `filter_bytes`.
            let solve = SolveKernel::new(self.backend(), self.geometry.width)
                .ok_or(Error::BackendUnavailable)?;
            return match bump::build(&self.shape(), hashes, &solve, scratch, out) {
                Err(Error::ConstructionFailed) => self
                    .bumped_fallback(hashes)?
                    .build_in_place(hashes, scratch, out),
                built => built,
            };
        }
        let needed = self.scratch_words();
        let scratch_too_small = Error::ScratchTooSmall {
            needed,
            given: scratch.len(),
        };
        if scratch.len() < needed {
            return Err(scratch_too_small);
        }
        let (scratch, sort) = scratch
            .split_at_mut_checked(self.banding_scratch_words())
            .ok_or(scratch_too_small)?;
        let len = self.filter_bytes();
        let out_len = out.len();
        let out = out.get_mut(..len).ok_or(Error::OutputTooSmall {
            needed: len,
            given: out_len,
        })?;
        if !self.geometry.kind.is_standard() {
            if self.num_keys.is_none() && hashes.len() > self.key_capacity() {
                return Err(Error::TooManyKeys {
                    limit: self.key_capacity() as u64,
                    given: hashes.len() as u64,
                });
            }
            self.build_homogeneous(hashes, scratch, sort, out)?;
        } else if !self.build_standard(hashes, scratch, sort, out)? {
            // Every seed failed: degenerate or adversarial hashes. The same
            // geometry as Homogeneous Ribbon holds them (no false negatives;
            // its FP rate, measured, is in the header's kind's hands).
            let fallback = self.homogeneous_fallback(hashes.len())?;
            fallback.build_homogeneous(hashes, scratch, sort, out)?;
        }
        Ok(len)
    }

    /// The Homogeneous plan over this Standard plan's geometry that a build
    /// falls back to when every seed fails, for `n` hashes:
    /// [`Error::ConstructionFailed`] for a [`Plan::with_slots`] plan the
    /// hashes overload even as Homogeneous Ribbon.
    fn homogeneous_fallback(&self, n: usize) -> Result<Plan, Error> {
        let g = &self.geometry;
        let geometry = Geometry::new(
            Kind::Homogeneous,
            g.width,
            g.num_blocks,
            g.lower_columns,
            g.upper_start_block,
        )?;
        let plan = Plan {
            geometry,
            max_seeds: self.max_seeds.min(HOMOGENEOUS_SEEDS),
            ..*self
        };
        if self.num_keys.is_none() && n > plan.key_capacity() {
            return Err(Error::ConstructionFailed);
        }
        Ok(plan)
    }

    /// The Homogeneous plan a Bumped build falls back to when a layer
    /// finds no seed (hashes that defeat every seed it tries, the plan's
    /// and those from its keys' digest, or a plan of one seed): the
    /// densest Homogeneous filter of `hashes` within this plan's
    /// [`Plan::filter_bytes`] ([`Plan::for_bytes`]), with the same backend
    /// and seed count and a first seed from a digest of the hashes (as a
    /// layer's retries take theirs), so that hashes crafted against the
    /// plan's seeds land like any others. It fits the output and the scratch of the
    /// Bumped plan (`tests/plan.rs` checks the scratch over a sweep of
    /// sizes and bits), and it cannot fail: a Bumped filter build always
    /// gives a filter within its planned bytes. Its FP rate is that of
    /// Homogeneous Ribbon at those bytes, about 2^(-r / 1.09) at w = 64
    /// and 2^(-r / 1.05) at w = 128 for `r` bits per key where Bumped
    /// Ribbon has 2^-r (the header says Homogeneous).
    fn bumped_fallback(&self, hashes: &[u64]) -> Result<Plan, Error> {
        let (width, n, bytes) = (self.geometry.width, hashes.len(), self.filter_bytes());
        let plan = Plan::for_bytes(Kind::Homogeneous, width, n, bytes)?;
        let salt = u64::from(self.seed) << 32 | u64::from(u32::MAX - 1);
        let digest = bump::key_set_digest(hashes.iter().copied(), salt);
        Ok(Plan {
            seed: bump::retry_seed(digest, 0),
            backend: self.backend,
            max_seeds: self.max_seeds.min(HOMOGENEOUS_SEEDS),
            ..plan
        })
    }

    /// The most hashes a Homogeneous [`Plan::with_slots`] build accepts:
    /// one per slot. More keys than slots overload the whole ribbon, and the
    /// filter would match almost every key.
    fn key_capacity(&self) -> usize {
        self.geometry.num_slots()
    }

    /// Standard builds: the first seed whose banding is consistent. Not
    /// inlined (nor is [`Plan::build_homogeneous`]): each kind's frame
    /// then stands alone on small stacks.
    #[inline(never)]
    fn build_standard(
        &self,
        hashes: &[u64],
        scratch: &mut [u64],
        sort: &mut [u64],
        out: &mut [u8],
    ) -> Result<bool, Error> {
        for attempt in 0..self.max_seeds() {
            let seed = self.seed.wrapping_add(attempt);
            if self.band_and_solve(seed, hashes, scratch, sort, out)? {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// Homogeneous builds: keep the first seed whose measured excess keeps
    /// the FP promise. If none of [`HOMOGENEOUS_SEEDS`] does (adversarial or
    /// degenerate keys), the filter of the seed with the least excess.
    #[inline(never)]
    fn build_homogeneous(
        &self,
        hashes: &[u64],
        scratch: &mut [u64],
        sort: &mut [u64],
        out: &mut [u8],
    ) -> Result<(), Error> {
        let mut best: Option<(u64, u32)> = None;
        let mut last = self.seed;
        for attempt in 0..self.max_seeds() {
            last = self.seed.wrapping_add(attempt);
            let excess = self.solve_homogeneous(last, hashes, scratch, sort, out)?;
            if excess <= HOMOGENEOUS_EXCESS_LIMIT_PPM {
                return Ok(());
            }
            if best.is_none_or(|(least, _)| excess < least) {
                best = Some((excess, last));
            }
        }
        if let Some((_, seed)) = best.filter(|&(_, seed)| seed != last) {
            self.solve_homogeneous(seed, hashes, scratch, sort, out)?;
        }
        Ok(())
    }

    /// Bands `hashes` with `seed`, writes the filter to `out` and returns
    /// its measured Homogeneous excess in ppm ([`fp::homogeneous_excess_ppm`]).
    fn solve_homogeneous(
        &self,
        seed: u32,
        hashes: &[u64],
        scratch: &mut [u64],
        sort: &mut [u64],
        out: &mut [u8],
    ) -> Result<u64, Error> {
        // Homogeneous banding never meets an inconsistency, and the build
        // checked the key count.
        if !self.band_and_solve(seed, hashes, scratch, sort, out)? {
            return Err(Error::ConstructionFailed);
        }
        let payload = out.get(HEADER_BYTES..).unwrap_or(&[]);
        Ok(fp::homogeneous_excess_ppm(&self.geometry, payload))
    }

    /// Bands `hashes` with `seed` and, if the system is consistent, writes
    /// the filter to `out`; whether it was. In a frame of its own: the
    /// banding's state is gone before a Homogeneous measurement runs.
    #[inline(never)]
    fn band_and_solve(
        &self,
        seed: u32,
        hashes: &[u64],
        scratch: &mut [u64],
        sort: &mut [u64],
        out: &mut [u8],
    ) -> Result<bool, Error> {
        let mut banding = Banding::new(self.geometry, seed, self.backend(), scratch, NO_LIMIT)?;
        if banding.add_all_sorted(hashes, sort).is_err() {
            return Ok(false);
        }
        banding.solve_into(out)?;
        Ok(true)
    }

    /// Starts an incremental build with this plan's first seed: add key
    /// hashes one at a time, then [`Banding::finish`]. Clears the scratch.
    pub fn banding<'s>(&self, scratch: &'s mut [u64]) -> Result<Banding<'s>, Error> {
        if self.geometry.kind == Kind::Bumped {
            return Err(Error::Unsupported);
        }
        let capacity = self.banding_capacity() as u64;
        Banding::new(self.geometry, self.seed, self.backend(), scratch, capacity)
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
        let g = &self.geometry;
        let slots = g.num_slots();
        let geometric = match g.kind {
            Kind::Homogeneous => {
                let keys = self.num_keys.unwrap_or(slots) as u64;
                homogeneous_stream_capacity(g, keys)
            }
            Kind::Standard | Kind::StandardSmash => slots,
            // No incremental banding (`Plan::banding` refuses).
            Kind::Bumped => 0,
        };
        self.num_keys.map_or(geometric, |n| n.min(geometric))
    }

    /// The parts the C ABI stores in its opaque plan struct.
    #[cfg(feature = "capi")]
    pub(crate) fn raw_parts(&self) -> (Geometry, Option<usize>, u32, Option<Backend>, u32, u32) {
        (
            self.geometry,
            self.num_keys,
            self.seed,
            self.backend,
            self.max_seeds,
            self.upper_millis,
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
        // Only Bumped plans have a column fraction of their own, and only
        // Bumped plans for keys exist.
        let bumped = geometry.kind == Kind::Bumped;
        if upper_millis > 999 || (!bumped && upper_millis != 0) || (bumped && num_keys.is_none()) {
            return Err(Error::CorruptHeader);
        }
        let plan = Plan {
            geometry,
            num_keys,
            seed,
            backend,
            max_seeds,
            upper_millis,
        };
        plan.fits()?;
        Ok(plan)
    }

    /// The backend builds with this plan back-substitute with.
    pub fn backend(&self) -> Backend {
        self.backend.unwrap_or_else(Backend::current)
    }
}

fn check_keys(num_keys: usize) -> Result<(), Error> {
    // Always false where usize is narrower than 41 bits.
    #[allow(clippy::absurd_extreme_comparisons)]
    if num_keys > MAX_KEYS {
        Err(Error::TooManyKeys {
            limit: MAX_KEYS as u64,
            given: num_keys as u64,
        })
    } else {
        Ok(())
    }
}

/// Space overhead `epsilon = (m - n) / n` in ppm that the slots get, for
/// `keys` keys at `r_milli / 1000` columns.
///
/// Standard: overhead for about a 5 % chance that the first seed fails, as a
/// function of `log2(m)`, measured with this crate's hashing (see
/// `examples/calibrate.rs`).
///
/// Homogeneous: see [`homogeneous_epsilon_w_milli`].
fn epsilon_ppm(kind: Kind, width: Width, r_milli: u64, keys: u64) -> u64 {
    match kind {
        Kind::Homogeneous => per_width(width, homogeneous_epsilon_w_milli(width, r_milli, keys)),
        // A Bumped plan sizes its layers itself (`Plan::bumped`).
        Kind::Standard | Kind::StandardSmash | Kind::Bumped => {
            standard_epsilon_ppm(kind, width, keys)
        }
    }
}

/// `epsilon` in ppm from `epsilon * w` in thousandths.
pub(crate) const fn per_width(width: Width, eps_w_milli: u64) -> u64 {
    (eps_w_milli * 1000) >> width.bits().trailing_zeros()
}

/// Homogeneous overhead times the width, `epsilon * w`, in thousandths:
/// the larger of the paper's eq. 7 and a term sized from the tail of the
/// FP rate over key sets.
///
/// Eq. 7, `epsilon = (4 + r/4) / w` (with 110 % for w = 64 and 105 % for
/// w = 128), was fitted to the *mean* FP rate. Over many key sets the rate
/// has a tail: a key set that overloads a stretch of the ribbon forces the
/// solution there towards zero, and queries in that stretch match. One such
/// stretch of `S` slots raises the rate by about `S 2^r / n` relative to
/// `2^-r`, and their frequency falls exponentially in `epsilon * w`.
/// [`Plan::build`] measures each filter and retries with another seed past
/// [`HOMOGENEOUS_EXCESS_LIMIT_PPM`]; this term keeps those retries rare
/// (about 5 % of builds or fewer at their most frequent):
///
/// `epsilon * w = 6.6 + b (r - 7) + 1.3 (L - 6)`, `L = min(log10 n,
/// 0.301 r + 3.9)`, `b = 0.3` (w = 64) or `0.2` (w = 128).
///
/// `L` grows with the keys because more keys hold more stretches, until a
/// single stretch no longer breaks the promise (`n > 2^r * 8000`, past
/// which only the mean counts). The constants come from
/// `examples/calibrate.rs homogeneous --eps`: single-seed builds of 1,000
/// key sets at n = 10^5, 300 at 10^6 and 40 at 10^7 for 4, 7.7, 12, 16 and
/// 20 bits per key and 100-135 % of the former slots, counting the key sets
/// whose measured excess passes the limit. At 7.7 bits per key this costs
/// about 0.4 points of overhead over eq. 7 alone.
fn homogeneous_epsilon_w_milli(width: Width, r_milli: u64, keys: u64) -> u64 {
    let r = r_milli.min(1 << 20) as i64;
    // log10(n) in thousandths from log2 in 1/256 units.
    let log10_keys = i64::from(log2_q8(keys.max(1))) * 30_103 / 25_600;
    let tail = homogeneous_tail_w_milli(width, r, log10_keys);
    homogeneous_eq7_w_milli(width, r_milli).max(tail.max(0) as u64)
}

/// Eq. 7 of [`homogeneous_epsilon_w_milli`]: `4 + r/4` in thousandths, with
/// 110 % for w = 64 and 105 % for w = 128. [`crate::bounds`] uses it too.
pub(crate) const fn homogeneous_eq7_w_milli(width: Width, r_milli: u64) -> u64 {
    let percent = match width {
        Width::W64 => 110,
        Width::W128 => 105,
    };
    (16_000 + r_milli) / 4 * percent / 100
}

/// The tail term of [`homogeneous_epsilon_w_milli`] at `r` columns and
/// `log10_keys` (both in thousandths); may be negative. [`crate::bounds`]
/// uses it too.
pub(crate) const fn homogeneous_tail_w_milli(width: Width, r: i64, log10_keys: i64) -> i64 {
    let per_column = match width {
        Width::W64 => 300,
        Width::W128 => 200,
    };
    let tail_limit = 301 * r / 1000 + 3_900;
    let l = if log10_keys < tail_limit {
        log10_keys
    } else {
        tail_limit
    };
    6_600 + per_column * (r - 7_000) / 1000 + 1_300 * (l - 6_000) / 1000
}

/// (log2(m) in 1/256 units, epsilon ppm) points, increasing in log2(m);
/// extrapolated linearly past the last two points, flat before the first.
const fn standard_epsilon_table(kind: Kind, width: Width) -> &'static [(u32, u64)] {
    match (kind, width) {
        (Kind::StandardSmash, Width::W64) => &STANDARD_SMASH_W64,
        (Kind::StandardSmash, Width::W128) => &STANDARD_SMASH_W128,
        (_, Width::W64) => &STANDARD_W64,
        (_, Width::W128) => &STANDARD_W128,
    }
}

// `cargo run --release --example calibrate 400` (400 trials per point, 200
// at m ~ 2^21; 16 columns), 5 % quantile of the failure point. The last
// point extrapolates with the growth per doubling of m the paper's Table 1
// reports for large m (+0.83 % for w = 64, +0.38 % for w = 128).
const STANDARD_W64: [(u32, u64); 9] = [
    (1940, 49_200),
    (2348, 47_300),
    (2839, 53_800),
    (3354, 61_900),
    (3868, 78_700),
    (4385, 92_900),
    (4902, 111_400),
    (5420, 128_100),
    (7680, 201_373),
];
const STANDARD_W128: [(u32, u64); 9] = [
    (2048, 24_000),
    (2386, 24_000),
    (2839, 20_200),
    (3338, 22_900),
    (3850, 28_400),
    (4365, 38_100),
    (4879, 46_400),
    (5394, 51_400),
    (7680, 85_332),
];
const STANDARD_SMASH_W64: [(u32, u64); 9] = [
    (1940, 26_700),
    (2348, 19_500),
    (2839, 43_600),
    (3348, 56_800),
    (3866, 75_600),
    (4383, 93_100),
    (4902, 111_500),
    (5420, 126_900),
    (7680, 200_173),
];
const STANDARD_SMASH_W128: [(u32, u64); 9] = [
    (2048, 19_900),
    (2386, 7900),
    (2839, 4600),
    (3338, 18_000),
    (3850, 27_100),
    (4365, 37_700),
    (4879, 46_100),
    (5394, 51_200),
    (7680, 85_132),
];

const fn interpolate(table: &[(u32, u64)], x: u32) -> u64 {
    let [(x0, y0), rest @ ..] = table else {
        return 0;
    };
    if x <= *x0 {
        return *y0;
    }
    // The segment containing x, or the last one to extrapolate.
    let (mut xa, mut ya) = (*x0, *y0);
    let mut rest = rest;
    while let [(xb, yb), tail @ ..] = rest {
        if x <= *xb || tail.is_empty() {
            let dx = x as i128 - xa as i128;
            let dy = *yb as i128 - ya as i128;
            let step = match (dy * dx).checked_div(*xb as i128 - xa as i128) {
                Some(step) => step,
                None => 0,
            };
            let y = ya as i128 + step;
            return if y > 0 { y as u64 } else { 0 };
        }
        (xa, ya) = (*xb, *yb);
        rest = tail;
    }
    *y0
}

/// The Standard kinds' overhead `epsilon` in ppm for `keys` keys (the
/// measured table at log2 of the keys); [`crate::bounds`] uses it where a
/// w = 128 filter has few blocks.
pub(crate) const fn standard_epsilon_ppm(kind: Kind, width: Width, keys: u64) -> u64 {
    let keys = if keys > 1 { keys } else { 1 };
    interpolate(standard_epsilon_table(kind, width), log2_q8(keys))
}

/// log2(x) in 1/256 units: integer part exact, fraction linear in the
/// mantissa (within 0.09 of the true value, plenty for sizing).
const fn log2_q8(x: u64) -> u32 {
    let int = 63 - x.leading_zeros();
    let frac = if int >= 8 {
        ((x >> (int - 8)) & 0xff) as u32
    } else {
        ((x << (8 - int)) & 0xff) as u32
    };
    (int << 8) | frac
}

/// Extra `epsilon * w` (thousandths) a Homogeneous [`Plan::banding`]
/// keeps beyond the planned overhead. A stream cannot be retried with
/// another seed, so its single seed must keep the promise: with this much
/// more room, overloaded stretches are about 50 times rarer than at the
/// planned overhead (the rate falls about 10-fold per 1.3 of `epsilon * w`
/// in the calibration of [`homogeneous_epsilon_w_milli`]): 3.9 % more
/// slots for w = 64, 2 % for w = 128, so a stream holds about 96-98 % of
/// the planned keys.
const STREAM_MARGIN_W_MILLI: u64 = 2_500;

/// Keys a Homogeneous banding over `g` accepts: `m / (1 + eps + margin)`
/// with `eps` the overhead planned for the geometry's columns and `keys`
/// keys (the slots, for a plan of no key count).
fn homogeneous_stream_capacity(g: &Geometry, keys: u64) -> usize {
    let slots = g.num_slots() as u128;
    if slots == 0 {
        return 0;
    }
    let r_milli = div(
        g.total_words().unwrap_or(0) as u128 * 1000,
        g.num_blocks as u128,
    ) as u64;
    let eps_w = homogeneous_epsilon_w_milli(g.width, r_milli, keys) + STREAM_MARGIN_W_MILLI;
    let eps = per_width(g.width, eps_w);
    div(slots * u128::from(PPM), u128::from(PPM + eps)) as usize
}

/// Homogeneous Ribbon's FP rate sits slightly above `2^-r` (paper
/// Lemma 4.2); [`Plan::for_fp_rate`] aims this much lower, in ppm.
fn homogeneous_fp_margin_ppm(width: Width) -> u64 {
    match width {
        Width::W64 => 30_000,
        Width::W128 => 20_000,
    }
}

/// Solves `r * (1 + epsilon(r)) = bits per key` for the columns per slot,
/// in thousandths.
fn columns_for_bits(kind: Kind, width: Width, num_keys: usize, millibits: u32) -> u64 {
    let mut r = u64::from(millibits);
    for _ in 0..4 {
        let eps = epsilon_ppm(kind, width, r, num_keys as u64);
        r = div(
            u128::from(millibits) * u128::from(PPM),
            u128::from(PPM + eps),
        ) as u64;
    }
    r.max(1)
}

/// Columns per slot, in thousandths rounded up, whose FP rate
/// `2^-lc * (1 - u/2)` (a fraction `u` of slots with `lc + 1` columns) is
/// at most `den / num`. `None` if more than 64 columns would be needed.
/// `num >= den > 0` (a rate below one).
#[inline(never)]
fn columns_for_fp(num: u128, den: u128) -> Option<u64> {
    if den == 0 || num < den {
        return None;
    }
    // lc = floor(log2(num / den)): the largest shift with den << lc <= num,
    // from the bit lengths (a shift loop unrolls into a large frame on
    // 32-bit targets).
    let shift = den.leading_zeros() - num.leading_zeros();
    let lc = if (den << shift) > num {
        shift - 1
    } else {
        shift
    };
    if lc >= MAX_COLUMNS {
        return None;
    }
    // u = 2 (N - 2^lc) / N with N = num / den.
    let low = den << lc;
    let u_milli = div_ceil(2 * (num - low) * 1000, num);
    Some(u64::from(lc) * 1000 + u_milli as u64)
}

/// Blocks of `w` slots for `num_keys` keys at `r_milli` columns per slot.
///
/// Standard kinds round `num_keys * (1 + epsilon)` slots up to whole
/// blocks (fewer slots raise the failure rate quickly). Homogeneous Ribbon
/// rounds to the nearest block, unless rounding down would keep less than
/// three quarters of the slack: in filters of a few blocks the free slots
/// gather at the top of the ribbon, and too few of them leave the lower
/// blocks' solution space smaller than their columns
/// (`examples/calibrate.rs homogeneous --keys 1000`: with 1,024 slots for
/// 1,000 keys, w = 128, most key sets matched 10 to 1000 times more
/// non-members than the columns allow). It also always keeps
/// [`MIN_FREE_SLOTS`] plus one per column free.
#[inline(never)]
/// Blocks of a Standard Ribbon system for `num_keys` keys of
/// `columns` columns: the filters' sizing, which retrieval shares.
pub(crate) fn standard_blocks(width: Width, num_keys: usize, columns: u32) -> usize {
    blocks_for(Kind::Standard, width, num_keys, u64::from(columns) * 1000)
}

fn blocks_for(kind: Kind, width: Width, num_keys: usize, r_milli: u64) -> usize {
    let eps = epsilon_ppm(kind, width, r_milli, num_keys as u64);
    let n = num_keys as u128;
    let slots = div_ceil(n * u128::from(PPM + eps), u128::from(PPM));
    let w = u128::from(width.bits());
    let blocks = if kind.is_standard() {
        div_ceil(slots, w)
    } else {
        let nearest = div(slots + w / 2, w);
        let least_slack = div_ceil(n * u128::from(eps) * 3, u128::from(PPM) * 4);
        let least_free = MIN_FREE_SLOTS + div_ceil(u128::from(r_milli), 1000);
        nearest.max(div_ceil(n + least_slack.max(least_free), w))
    };
    (blocks as usize).max(1)
}

/// Payload words of a plan for `millibits / 1000` bits per key: the
/// budget `num_keys * millibits / 1000` rounded up to whole words, so that
/// a filter's size follows from its key count alone (the rounding of the
/// slots to whole blocks moves columns, not bits), but no fewer than one
/// block of `r_milli / 1000` columns (filters of a handful of keys keep
/// their FP rate and take more space than the budget).
///
/// [`crate::bounds::max_filter_bytes`] calls it with the most columns.
pub(crate) const fn budget_words(
    width: Width,
    num_keys: u64,
    millibits: u32,
    r_milli: u64,
) -> u128 {
    let bits = div_ceil(num_keys as u128 * millibits as u128, 1000);
    let words = div_ceil(bits, width.bits() as u128);
    let one_block = div_ceil(r_milli as u128, 1000);
    if words > one_block { words } else { one_block }
}

/// The geometry of `blocks` blocks with the most of at most `words` words
/// (and 64 columns per slot) whose columns these blocks can hold `num_keys`
/// keys at ([`blocks_for`]), if any.
fn densest_within(
    kind: Kind,
    width: Width,
    num_keys: usize,
    blocks: usize,
    words: usize,
) -> Option<Geometry> {
    let fits = |w: usize| {
        let r_milli = div(w as u128 * 1000, blocks as u128) as u64;
        blocks_for(kind, width, num_keys, r_milli) <= blocks
    };
    // Binary search: more words need at least as many blocks.
    let (mut lo, mut hi) = (blocks, words.min(blocks.checked_mul(MAX_COLUMNS as usize)?));
    if lo > hi || !fits(lo) {
        return None;
    }
    while lo < hi {
        let mid = lo + (hi - lo).div_ceil(2);
        if fits(mid) { lo = mid } else { hi = mid - 1 }
    }
    split_words(kind, width, blocks, lo).ok()
}

/// See [`blocks_for`]: `examples/calibrate.rs homogeneous --keys 100`
/// (and up to 10^4) shows key sets of filters of one to a few blocks.
const MIN_FREE_SLOTS: u128 = 8;

/// A sizing error of [`Plan::for_fp_rate`]: too many columns means the
/// rate cannot be met; sizes past the address space stay
/// [`Error::TooLarge`].
fn fp_rate_error(e: Error) -> Error {
    match e {
        Error::TooLarge => Error::TooLarge,
        _ => Error::InvalidFpRate,
    }
}

/// Spreads `words` ICML words over `blocks` blocks: `lower` columns each,
/// and the last `words % blocks` blocks one more. More than 64 columns per
/// slot is [`Error::InvalidBitsPerKey`] (a budget too large for the keys);
/// a geometry past the address space is [`Error::TooLarge`].
fn split_words(kind: Kind, width: Width, blocks: usize, words: usize) -> Result<Geometry, Error> {
    let (Some(lower), Some(upper)) = (words.checked_div(blocks), words.checked_rem(blocks)) else {
        return Err(Error::TooLarge);
    };
    if lower > MAX_COLUMNS as usize || (lower == MAX_COLUMNS as usize && upper > 0) {
        return Err(Error::InvalidBitsPerKey);
    }
    Geometry::new(kind, width, blocks, lower as u32, blocks - upper)?
        .check_native()
        .map_err(|_| Error::InvalidBitsPerKey)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log2_fixed_point() {
        assert_eq!(log2_q8(1), 0);
        assert_eq!(log2_q8(1 << 20), 20 << 8);
        assert_eq!(log2_q8(3 << 19), (20 << 8) + 128);
        assert_eq!(log2_q8(3), (1 << 8) + 128);
    }

    #[test]
    fn columns_for_fp_rates() {
        // 1 in 128: exactly 7 columns.
        assert_eq!(columns_for_fp(128, 1), Some(7000));
        // 1 in 100: 6 columns plus u = 2 * 36 / 100 = 0.72.
        assert_eq!(columns_for_fp(100, 1), Some(6720));
        assert_eq!(columns_for_fp(u128::from(u64::MAX), 1), Some(64_000));
        assert_eq!(columns_for_fp(1 << 65, 1), None);
        assert_eq!(columns_for_fp(1 << 64, 1), None);
        assert_eq!(columns_for_fp((1 << 64) - 1, 1), Some(64_000));
        assert_eq!(columns_for_fp(2_000_000, 1_000_000), Some(1000));
        assert_eq!(columns_for_fp(3_999_999, 1_000_000), Some(2000));
        assert_eq!(columns_for_fp(999, 1000), None);
        assert_eq!(columns_for_fp(5, 0), None);
    }

    #[test]
    fn interpolation_extrapolates() {
        let t = [(0u32, 0u64), (256, 100)];
        assert_eq!(interpolate(&t, 128), 50);
        assert_eq!(interpolate(&t, 512), 200);
    }
}
