//! NEON kernels: two 64-bit lanes per vector, lane parity through `cnt`
//! (per-byte population count) and pairwise widening adds.
//!
//! NEON is part of every aarch64 target this module is compiled for
//! (`target_feature = "neon"`); detection still reports it, so that the
//! kernel table treats it as every other backend.

use bytemuck::must_cast;
use core::arch::aarch64::*;

use crate::arch::generic::{self, Lanes64, QueryKernel, SolveLanes};
use crate::arch::scalar;
use crate::hash::{Coeff, FreeRows};
use crate::layout::Geometry;
use crate::probe::{Probe, Probes};
use crate::word::Rows;

crate::arch::isa_proof!(
    /// The NEON instruction set.
    Neon,
    NEON
);

/// Per-lane parity of `x`: 0 or 1 in each 64-bit lane.
#[inline(always)]
unsafe fn parity_lanes(x: uint64x2_t) -> uint64x2_t {
    // SAFETY: NEON is enabled for the whole target.
    unsafe {
        let counts = vcntq_u8(vreinterpretq_u8_u64(x));
        let sums = vpaddlq_u32(vpaddlq_u16(vpaddlq_u8(counts)));
        vandq_u64(sums, vdupq_n_u64(1))
    }
}

/// Loads 16 bytes at byte offset `at` of `payload`.
///
/// # Safety
/// `at + 16 <= payload.len()`.
#[inline(always)]
unsafe fn load(payload: &[u8], at: usize) -> uint64x2_t {
    // SAFETY: in bounds (caller); a byte load has no alignment requirement
    // and lanes are little-endian words on this (little-endian) target.
    unsafe { vreinterpretq_u64_u8(vld1q_u8(payload.as_ptr().add(at))) }
}

/// Two 64-bit values as one vector (lane 0 first).
#[inline(always)]
fn pair(lo: u64, hi: u64) -> uint64x2_t {
    must_cast([lo, hi])
}

impl QueryKernel<u64> for Neon {
    #[inline(always)]
    unsafe fn prefetch(_payload: &[u8], _p: &Probe<u64>, _max_columns: usize) {}

    #[inline(always)]
    unsafe fn matches<P: Probes<u64>>(payload: &[u8], p: &Probe<u64>, _max_columns: usize) -> bool {
        // SAFETY: `p` is a probe of this payload's validated geometry
        // (caller).
        scalar::bits_match::<u64, P>(unsafe { bits_64(payload, p) }, p)
    }

    #[inline(always)]
    unsafe fn column_values<P: Probes<u64>>(
        payload: &[u8],
        p: &Probe<u64>,
        _max_columns: usize,
    ) -> u64 {
        // SAFETY: as for `matches`.
        scalar::bits_value::<u64, P>(unsafe { bits_64(payload, p) }, p)
    }
}

/// The column bits of a 64-bit probe (column `j` in bit `j`), two columns
/// per vector over the key's own columns; an odd last column by the
/// scalar evaluation, whose `None` (a word outside the payload) this
/// passes on.
///
/// # Safety
/// `p` comes from [`crate::probe::probe_for`] for the validated geometry
/// `payload` belongs to.
#[inline(always)]
unsafe fn bits_64(payload: &[u8], p: &Probe<u64>) -> Option<u64> {
    let columns = p.columns();
    let pairs = columns / 2;
    let mut bits = 0u64;
    // SAFETY: NEON is part of the target; column words j < columns of
    // both blocks are inside the validated payload.
    unsafe {
        let cl = vdupq_n_u64(p.c_lo);
        let ch = vdupq_n_u64(p.c_hi);
        for k in 0..pairs {
            let lo = load(payload, (p.lo_word + 2 * k) * 8);
            let hi = load(payload, (p.hi_word + 2 * k) * 8);
            let parity = parity_lanes(veorq_u64(vandq_u64(lo, cl), vandq_u64(hi, ch)));
            let two = vgetq_lane_u64::<0>(parity) | (vgetq_lane_u64::<1>(parity) << 1);
            bits |= two << (2 * k);
        }
    }
    // An odd last column: the scalar evaluation.
    let last = scalar::column_bits(payload, p, 2 * pairs, columns);
    last.map(|last| bits | last)
}

impl QueryKernel<u128> for Neon {
    #[inline(always)]
    unsafe fn prefetch(_payload: &[u8], _p: &Probe<u128>, _max_columns: usize) {}

    #[inline(always)]
    unsafe fn matches<P: Probes<u128>>(
        payload: &[u8],
        p: &Probe<u128>,
        _max_columns: usize,
    ) -> bool {
        // SAFETY: `p` is a probe of this payload's validated geometry
        // (caller).
        let bits = unsafe { bits_128(payload, p) };
        bits == if P::RESULT { p.expected } else { 0 }
    }

    #[inline(always)]
    unsafe fn column_values<P: Probes<u128>>(
        payload: &[u8],
        p: &Probe<u128>,
        _max_columns: usize,
    ) -> u64 {
        // SAFETY: as for `matches`.
        scalar::bits_value::<u128, P>(Some(unsafe { bits_128(payload, p) }), p)
    }
}

/// The column bits of a 128-bit probe (column `j` in bit `j`), one column
/// per vector over the key's own columns.
///
/// # Safety
/// `p` comes from [`crate::probe::probe_for`] for the validated geometry
/// `payload` belongs to.
#[inline(always)]
unsafe fn bits_128(payload: &[u8], p: &Probe<u128>) -> u64 {
    let columns = p.columns();
    let mut bits = 0u64;
    // SAFETY: NEON is part of the target; column j < columns of both
    // blocks is a 16-byte word inside the validated payload.
    unsafe {
        let cl = pair(p.c_lo as u64, (p.c_lo >> 64) as u64);
        let ch = pair(p.c_hi as u64, (p.c_hi >> 64) as u64);
        for j in 0..columns {
            let lo = load(payload, (p.lo_word + j) * 16);
            let hi = load(payload, (p.hi_word + j) * 16);
            let x = veorq_u64(vandq_u64(lo, cl), vandq_u64(hi, ch));
            let count = vaddvq_u8(vcntq_u8(vreinterpretq_u8_u64(x)));
            bits |= u64::from(count & 1) << j;
        }
    }
    bits
}

/// Two 64-bit lanes (back-substitution).
impl Lanes64 for uint64x2_t {
    const LANES: usize = 2;

    #[inline(always)]
    unsafe fn splat(v: u64) -> Self {
        // SAFETY: NEON is available (the trait's contract).
        unsafe { vdupq_n_u64(v) }
    }
    #[inline(always)]
    unsafe fn store(self, dst: &mut [u64]) {
        generic::copy_lanes(dst, must_cast::<uint64x2_t, [u64; 2]>(self));
    }
    generic::lanes64_bitwise!(veorq_u64, vandq_u64, vorrq_u64);
    #[inline(always)]
    unsafe fn shr<const N: u32>(self) -> Self {
        // A register count (negative: right); the immediate forms take an
        // `i32` constant that a `u32` generic cannot name.
        // SAFETY: NEON is available (the trait's contract).
        unsafe { vshlq_u64(self, vdupq_n_s64(-i64::from(N))) }
    }
    #[inline(always)]
    unsafe fn shl<const N: u32>(self) -> Self {
        // SAFETY: NEON is available (the trait's contract).
        unsafe { vshlq_u64(self, vdupq_n_s64(i64::from(N))) }
    }
    #[inline(always)]
    unsafe fn parity(self) -> Self {
        // SAFETY: NEON is available (the trait's contract).
        unsafe { parity_lanes(self) }
    }
    #[inline(always)]
    unsafe fn bit_per_lane(bits: u64) -> Self {
        pair(bits, bits >> 1)
    }
}

generic::entry_points!(Neon, uint64x2_t, "neon");
