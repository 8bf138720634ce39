//! Hash expansion: the only place that turns a caller's 64-bit key hash into
//! the equation `(start, coefficients, result)` of the paper (section 5.3).
//!
//! Every path (banding, scalar query, every SIMD kernel) calls these
//! functions or mirrors them bit for bit, and the backend tests check that.
//!
//! * The seed is xored in and the value is multiplied by a large odd constant
//!   ("remix"), which makes retries with the next seed independent.
//! * The start comes from the upper bits of the remixed value through a
//!   multiply-high ("fastrange"), never `%`.
//! * Coefficients come from one more multiply of the remixed value by an odd
//!   constant: the low 64 bits for w = 64, the whole 128-bit product for
//!   w = 128 (one `mul` instruction either way). The start depends on the
//!   value's top bits, the product on all of them.
//! * Result bits (Standard Ribbon) come from a third, independent product
//!   folded to 64 bits (low half xor high half).

use crate::arith::folded_product;
use crate::word::Word;

/// Spreads a 32-bit seed over 64 bits before it is xored into the hash.
const SEED_SPREAD: u64 = 0x91d9_3080_f9b4_39fd;
/// Remix multiplier (odd).
pub(crate) const REMIX: u64 = 0x3cea_af30_8142_c8eb;
/// Coefficient multiplier (odd).
pub(crate) const COEFF: u64 = 0x6276_55da_a05f_1119;
/// Folded-product multiplier for Standard Ribbon result rows.
pub(crate) const RESULT: u64 = 0x6301_bbfc_a0c5_154f;
/// Folded-product multiplier and salt for the values of free (empty) rows.
const FREE_ROW: u64 = 0x6fce_d11d_2bd8_a1e7;
const FREE_ROW_SALT: u64 = 0x2545_f491_4f6c_dd1d;

/// The 64-bit value a seed contributes to every remix.
#[inline(always)]
pub(crate) fn seed_mix(seed: u32) -> u64 {
    u64::from(seed).wrapping_mul(SEED_SPREAD)
}

/// Mixes the seed into a key hash. Everything else derives from this value.
#[inline(always)]
pub(crate) fn remix(hash: u64, seed_mix: u64) -> u64 {
    (hash ^ seed_mix).wrapping_mul(REMIX)
}

/// The start slot in `[0, num_starts)`. With `smash > 0` the draw is uniform
/// over `num_starts + 2 * smash` values and clamped at both ends, which puts
/// more weight on the first and last start (paper section 3.1).
#[inline(always)]
pub(crate) fn start(remixed: u64, num_starts: u64, smash: u64) -> u64 {
    let draws = num_starts + 2 * smash;
    let draw = if cfg!(target_pointer_width = "64") || draws > u64::from(u32::MAX) {
        crate::arith::mul_wide(remixed, draws).1
    } else {
        // 32-bit targets, fewer than 2^32 draws (every filter below 4 GiB
        // per column): two 32 x 32-bit products, exactly the high half
        // (LLVM turns the general halves form back into a `__multi3` call).
        ((remixed >> 32) * draws + (((remixed & 0xffff_ffff) * draws) >> 32)) >> 32
    };
    if smash == 0 {
        // Already in [0, num_starts): the common case takes one multiply.
        return draw;
    }
    draw.saturating_sub(smash).min(num_starts - 1)
}

/// The `w`-bit coefficient row; its lowest bit is always 1.
#[inline(always)]
pub(crate) fn coeff<W: Coeff>(remixed: u64) -> W {
    W::from_remixed(remixed)
}

/// Per-width coefficient derivation.
pub(crate) trait Coeff: Word {
    fn from_remixed(remixed: u64) -> Self;
}

impl Coeff for u64 {
    #[inline(always)]
    fn from_remixed(remixed: u64) -> Self {
        remixed.wrapping_mul(COEFF) | 1
    }
}

impl Coeff for u128 {
    #[inline(always)]
    fn from_remixed(remixed: u64) -> Self {
        let (low, high) = crate::arith::mul_wide(remixed, COEFF);
        (u128::from(high) << 64) | u128::from(low | 1)
    }
}

/// The 64 candidate result bits of a Standard Ribbon key (column `j` is bit
/// `j`); callers mask them to the columns of the key's start block.
#[inline(always)]
pub(crate) fn result(remixed: u64) -> u64 {
    folded_product(remixed, RESULT)
}

/// Pseudo-random solution bits for free (empty) row `row`, column `j` in bit
/// `j`. Homogeneous Ribbon needs them random for its FP rate (paper
/// section 4); for Standard Ribbon any value is correct.
#[inline(always)]
pub(crate) fn free_row(row: u64, seed_mix: u64) -> u64 {
    folded_product(row ^ seed_mix ^ FREE_ROW_SALT, FREE_ROW)
}

/// What back-substitution puts into free (empty) rows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum FreeRows {
    /// [`free_row`] bits under this seed mix: this crate's filters.
    Pseudorandom(u64),
    /// Zero, as RocksDB's Standard Ribbon writes.
    #[cfg_attr(not(feature = "rocksdb"), allow(dead_code))]
    Zero,
}

impl FreeRows {
    /// The solution bits of free row `row`, column `j` in bit `j`.
    #[inline(always)]
    pub(crate) fn bits(self, row: u64) -> u64 {
        match self {
            FreeRows::Pseudorandom(seed_mix) => free_row(row, seed_mix),
            FreeRows::Zero => 0,
        }
    }
}

/// The equation a key hash contributes to a filter's linear system.
///
/// `coeff · Z[start .. start + w] = result` over GF(2), where `Z` is the
/// solution matrix. This is what [`crate::Banding`] inserts; it is exposed so
/// that tests, fuzzers and curious readers can check the kernel against an
/// independent solver.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Equation {
    /// First slot (row of the solution) the equation touches.
    pub start: u64,
    /// Coefficient bits; bit `k` selects slot `start + k`. Bit 0 is always 1;
    /// for w = 64 the upper 64 bits are zero.
    pub coeff: u128,
    /// Expected result bits, column `j` in bit `j`, already masked to the
    /// columns of the start's block. Always 0 for Homogeneous Ribbon.
    pub result: u64,
}

/// Hash expansion for one filter: a geometry and a seed, precomputed so that
/// the per-key work is a handful of multiplies.
///
/// Plain bytes, as [`crate::probe::Parts`] needs: `#[repr(C)]`, its
/// padding a field of its own.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(C)]
pub(crate) struct Expander {
    pub(crate) seed_mix: u64,
    pub(crate) num_starts: u64,
    pub(crate) smash: u64,
    pub(crate) masks: crate::layout::ColumnMasks,
    pub(crate) standard: bool,
    /// Zero: the bytes after `standard`, initialized.
    padding: [u8; 7],
}

impl Expander {
    pub(crate) fn new(g: &crate::layout::Geometry, seed: u32) -> Expander {
        Expander {
            seed_mix: seed_mix(seed),
            num_starts: g.num_starts(),
            smash: g.kind.smash(g.width),
            standard: g.kind.is_standard(),
            masks: crate::layout::ColumnMasks::new(g),
            padding: [0; 7],
        }
    }

    /// The equation of `hash`: start slot, coefficient row, and result bits
    /// masked to the columns of the start's block (0 for Homogeneous).
    /// Requires a non-empty filter (`num_starts > 0`).
    #[inline(always)]
    pub(crate) fn expand<W: Coeff>(&self, hash: u64) -> (u64, W, u64) {
        self.expand_remixed(remix(hash, self.seed_mix))
    }

    /// [`Expander::expand`] of a value already remixed with this seed.
    #[inline(always)]
    pub(crate) fn expand_remixed<W: Coeff>(&self, x: u64) -> (u64, W, u64) {
        let s = start(x, self.num_starts, self.smash);
        let c = coeff::<W>(x);
        let b = if self.standard {
            result(x) & self.masks.for_start(s)
        } else {
            0
        };
        (s, c, b)
    }

    /// A key's remix with this seed and its start without smashing: where
    /// a Bumped layer's buckets place the key (the layer's thresholds
    /// judge the start, `bumped_layout::ThresholdsRef::bumped_flag`), and
    /// the value it carries to the next layer when bumped.
    #[inline(always)]
    pub(crate) fn remix_and_start(&self, hash: u64) -> (u64, u64) {
        let x = remix(hash, self.seed_mix);
        (x, start(x, self.num_starts, 0))
    }

    /// [`Expander::expand`] plus the mask of the start block's columns.
    /// `STANDARD` must equal the filter's kind, and `SMASH` whether it
    /// smashes starts (StandardSmash): known at compile time, the other
    /// kinds' start is one multiply with no test of `smash` (a single
    /// query measured 8-12 % faster for it).
    #[inline(always)]
    pub(crate) fn expand_masked<W: Coeff, const STANDARD: bool, const SMASH: bool>(
        &self,
        hash: u64,
    ) -> (u64, W, u64, u64) {
        debug_assert_eq!(SMASH, self.smash > 0);
        let x = remix(hash, self.seed_mix);
        let s = start(x, self.num_starts, if SMASH { self.smash } else { 0 });
        let mask = self.masks.for_start(s);
        let b = if STANDARD { result(x) & mask } else { 0 };
        (s, coeff::<W>(x), b, mask)
    }

    /// The equation `hash` contributes to a system of geometry `g` (the
    /// one this expander was made for); all zero when `g` has no slots.
    pub(crate) fn equation(&self, g: &crate::layout::Geometry, hash: u64) -> Equation {
        if g.num_blocks == 0 {
            return Equation {
                start: 0,
                coeff: 0,
                result: 0,
            };
        }
        match g.width {
            crate::layout::Width::W64 => self.equation_of::<u64>(hash),
            crate::layout::Width::W128 => self.equation_of::<u128>(hash),
        }
    }

    fn equation_of<W: Coeff>(&self, hash: u64) -> Equation {
        let (start, coeff, result) = self.expand::<W>(hash);
        Equation {
            start,
            coeff: coeff.to_u128(),
            result,
        }
    }
}
