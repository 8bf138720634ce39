//! NEON kernels: two 64-bit lanes per vector, lane parity through `cnt`
//! (per-byte population count) and pairwise widening adds.
//!
//! NEON is part of every aarch64 target this module is compiled for
//! (`target_feature = "neon"`), so these functions need no runtime check;
//! they stay `unsafe` for the pointer reads and to mirror the x86 kernels.

use core::arch::aarch64::*;

use crate::arch::generic::{self, QueryKernel, SolveLanes};
use crate::hash::{Coeff, FreeRows};
use crate::layout::Geometry;
use crate::query::{self, Probe, Probes};
use crate::word::Rows;
use crate::word::Word;

/// The NEON instruction set.
pub(crate) struct Neon;

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

/// Two 64-bit values as one vector (low lane first).
#[inline(always)]
unsafe fn pair(lo: u64, hi: u64) -> uint64x2_t {
    let values = [lo, hi];
    // SAFETY: reads the two values of a local array.
    unsafe { vld1q_u64(values.as_ptr()) }
}

impl QueryKernel<u64> for Neon {
    #[inline(always)]
    unsafe fn prefetch(_payload: &[u8], _p: &Probe<u64>, _max_columns: usize) {}

    #[inline(always)]
    unsafe fn matches<P: Probes<u64>>(payload: &[u8], p: &Probe<u64>, _max_columns: usize) -> bool {
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
        if columns % 2 == 1 {
            let j = columns - 1;
            let (Some(lo), Some(hi)) = (
                <u64 as Word>::read_word(payload, p.lo_word + j),
                <u64 as Word>::read_word(payload, p.hi_word + j),
            ) else {
                return true;
            };
            bits |= query::column_bit(lo, hi, p) << j;
        }
        bits == if P::RESULT { p.expected } else { 0 }
    }
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
        bits == if P::RESULT { p.expected } else { 0 }
    }
}

impl SolveLanes<u64> for Neon {
    type State = uint64x2_t;
    const LANES: usize = 2;

    #[inline(always)]
    unsafe fn zero() -> uint64x2_t {
        // SAFETY: NEON is part of the target.
        unsafe { vdupq_n_u64(0) }
    }

    #[inline(always)]
    unsafe fn step(s: uint64x2_t, c: u64, bits: u64) -> uint64x2_t {
        // SAFETY: NEON is part of the target.
        unsafe {
            let shifted = vshlq_n_u64::<1>(s);
            let parity = parity_lanes(vandq_u64(shifted, vdupq_n_u64(c)));
            let b = pair(bits & 1, (bits >> 1) & 1);
            vorrq_u64(shifted, veorq_u64(parity, b))
        }
    }

    #[inline(always)]
    unsafe fn store(s: uint64x2_t, out: &mut [u64]) {
        // SAFETY: NEON is part of the target.
        unsafe {
            out[0] = vgetq_lane_u64::<0>(s);
            out[1] = vgetq_lane_u64::<1>(s);
        }
    }
}

impl SolveLanes<u128> for Neon {
    /// Low and high halves of two columns' 128-bit state words.
    type State = (uint64x2_t, uint64x2_t);
    const LANES: usize = 2;

    #[inline(always)]
    unsafe fn zero() -> (uint64x2_t, uint64x2_t) {
        // SAFETY: NEON is part of the target.
        unsafe { (vdupq_n_u64(0), vdupq_n_u64(0)) }
    }

    #[inline(always)]
    unsafe fn step(s: (uint64x2_t, uint64x2_t), c: u128, bits: u64) -> (uint64x2_t, uint64x2_t) {
        // SAFETY: NEON is part of the target.
        unsafe {
            let (l, h) = s;
            let sl = vshlq_n_u64::<1>(l);
            let sh = vorrq_u64(vshlq_n_u64::<1>(h), vshrq_n_u64::<63>(l));
            let t = veorq_u64(
                vandq_u64(sl, vdupq_n_u64(c as u64)),
                vandq_u64(sh, vdupq_n_u64((c >> 64) as u64)),
            );
            let b = pair(bits & 1, (bits >> 1) & 1);
            (vorrq_u64(sl, veorq_u64(parity_lanes(t), b)), sh)
        }
    }

    #[inline(always)]
    unsafe fn store(s: (uint64x2_t, uint64x2_t), out: &mut [u128]) {
        // SAFETY: NEON is part of the target.
        unsafe {
            out[0] =
                u128::from(vgetq_lane_u64::<0>(s.0)) | (u128::from(vgetq_lane_u64::<0>(s.1)) << 64);
            out[1] =
                u128::from(vgetq_lane_u64::<1>(s.0)) | (u128::from(vgetq_lane_u64::<1>(s.1)) << 64);
        }
    }
}

/// Single query.
///
/// # Safety
/// Always safe on the targets this module is built for; `unsafe` to mirror
/// the x86 kernels.
pub(crate) unsafe fn contains<W: Coeff, P: Probes<W>>(probes: &P, payload: &[u8], hash: u64) -> bool
where
    Neon: QueryKernel<W>,
{
    let probe = probes.probe(hash);
    // SAFETY: NEON is part of the target; the probe belongs to `p`.
    unsafe { <Neon as QueryKernel<W>>::matches::<P>(payload, &probe, probes.max_columns()) }
}

/// Batch query.
///
/// # Safety
/// As for [`contains`].
pub(crate) unsafe fn contains_batch<W: Coeff, P: Probes<W>>(
    probes: &P,
    payload: &[u8],
    hashes: &[u64],
    out: &mut [bool],
) where
    Neon: QueryKernel<W>,
{
    // SAFETY: NEON is part of the target.
    unsafe { generic::contains_batch::<W, P, Neon>(probes, payload, hashes, out) }
}

generic::back_substitute_in_frames!(Neon, "neon");
