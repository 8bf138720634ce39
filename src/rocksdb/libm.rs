//! The few `libm` functions RocksDB's filter sizing calls, reproduced bit for
//! bit in `no_std`: `exp`, `pow`, `log` and `sqrt` of binary64 values.
//!
//! # Why not just any accurate implementation
//!
//! RocksDB derives its Ribbon target FP rate from bits per key with
//! `pow(1.0 - exp(-k / b), k)` (see `sizing.rs`), and the last bit of that
//! double can move a filter's column split by one 16-byte segment. So the
//! results must equal what RocksDB computed on its build machine, which is
//! glibc's libm, not merely be accurate. glibc's `exp` and `pow` (since 2.28,
//! the algorithms of ARM's optimized-routines) are not correctly rounded:
//! within 0.52 ULP, they round the wrong way for about one input in a
//! thousand. Correctly rounded versions disagree with glibc on 143 of the
//! 99,001 bits-per-key values RocksDB can be configured with (1.000 to
//! 100.000); this file agrees on all of them (the test `one_in_table_digest`
//! checks the whole table against a digest of RocksDB's own values).
//!
//! # What is reproduced
//!
//! On x86_64 glibc selects, at run time, a build of `exp` and `pow` compiled
//! with FMA when the CPU has FMA and AVX2; RocksDB's reference values come
//! from such a machine. That build both takes the algorithms' explicit FMA
//! branches and lets the compiler contract `a * b + c` into fused
//! multiply-adds. The functions below perform exactly the same sequence of
//! IEEE-754 operations, fused where that build fuses (read off its machine
//! code), with [`fma`] as an exact software fused multiply-add because
//! `core` has none. On a CPU without FMA, glibc takes another build whose
//! results differ from these for 131 of the 99,001 values: RocksDB itself
//! then writes different Ribbon sizes.
//!
//! The algorithms, in brief (ARM optimized-routines, MIT licensed; the
//! constants below are theirs, the tables are recomputed from their
//! definitions by `tools/rocksdb_libm_tables.py`):
//!
//! * `exp(x)`: `x = k ln2/128 + r`; `exp(x) = 2^(k/128) exp(r)` with
//!   2^(k/128) from a 128-entry table (a double plus a relative tail) and
//!   `exp(r) - 1` from a degree-5 polynomial.
//! * `pow(x, y) = exp(y log x)`: `log x` in double-double precision from a
//!   128-entry table of `1/c`, `log c` and a degree-8 polynomial in
//!   `z/c - 1`, then `exp` of the double-double product with the tail folded
//!   into the reduced argument.
//!
//! Only the main paths are implemented: the sizing code calls `exp` with
//! `x` in about [-1.05, -0.13], `pow` with `x` in about [0.12, 0.65] and
//! integer `y` in 1..=24, `log` with integers in 1..=2^32 and `sqrt` with values in
//! [5.12, 512]. Inputs outside the main paths (zero, negative, subnormal,
//! infinite or NaN arguments; `exp` arguments of magnitude below 2^-54 or
//! above 512) return NaN rather than glibc's special-case values. Nothing
//! here panics.

use super::libm_tables::{EXP_TAB, POW_LOG_TAB};

const SIGN: u64 = 1 << 63;
const EXP_MASK: u64 = 0x7ff << 52;
const FRAC_MASK: u64 = (1 << 52) - 1;
const HIDDEN: u64 = 1 << 52;

/// `a * b + c` with a single rounding (to nearest, ties to even), exact for
/// all finite operands, subnormals included. Non-finite operands give the
/// unfused result.
pub(super) fn fma(a: f64, b: f64, c: f64) -> f64 {
    if !a.is_finite() || !b.is_finite() || !c.is_finite() {
        return a * b + c;
    }
    let (sa, ma, ea) = decode(a);
    let (sb, mb, eb) = decode(b);
    let (sc, mc, ec) = decode(c);
    let product = u128::from(ma) * u128::from(mb);
    if product == 0 {
        // a * b is an exact (signed) zero, so the sum rounds like a plain sum.
        return a * b + c;
    }
    if mc == 0 {
        // c is +-0: the result is the rounded product (never zero).
        return round_to_f64(sa ^ sb, product, ea + eb);
    }
    // Both terms as `m * 2^e` with m's top bit at bit 125: two bits of
    // headroom for a carry, and at least 19 zero bits at the bottom (the
    // product has at most 106 significant bits), which the sticky-bit
    // rounding below relies on.
    let (mp, ep) = normalize(product, ea + eb);
    let (mc, ec) = normalize(u128::from(mc), ec);
    let ((sx, mx, ex), (sy, my, ey)) = if ep >= ec {
        ((sa ^ sb, mp, ep), (sc, mc, ec))
    } else {
        ((sc, mc, ec), (sa ^ sb, mp, ep))
    };
    // Align the smaller term, keeping the bits shifted out as a sticky bit:
    // with the larger term's low bits zero, the sum or difference then lies
    // strictly within one unit of bit 0 of the exact value and is odd
    // whenever bits were lost, so it rounds as the exact value does.
    let d = (ex - ey) as u32;
    let my = if d == 0 {
        my
    } else if d >= 127 {
        1
    } else {
        (my >> d) | u128::from(my & ((1u128 << d) - 1) != 0)
    };
    let (sign, m) = if sx == sy {
        (sx, mx + my)
    } else if mx >= my {
        (sx, mx - my)
    } else {
        (sy, my - mx)
    };
    if m == 0 {
        return 0.0; // exact cancellation rounds to +0
    }
    round_to_f64(sign, m, ex)
}

/// Sign, integer significand and exponent of a finite double:
/// `|x| = m * 2^e`.
fn decode(x: f64) -> (bool, u64, i32) {
    let bits = x.to_bits();
    let biased = ((bits & EXP_MASK) >> 52) as i32;
    let frac = bits & FRAC_MASK;
    let (m, e) = if biased == 0 {
        (frac, -1074)
    } else {
        (frac | HIDDEN, biased - 1075)
    };
    (bits & SIGN != 0, m, e)
}

/// `m * 2^e` rescaled so that m's top bit is bit 125 (m != 0).
fn normalize(m: u128, e: i32) -> (u128, i32) {
    let shift = m.leading_zeros() as i32 - 2;
    if shift >= 0 {
        (m << shift, e - shift)
    } else {
        (m >> -shift, e - shift) // never taken: callers pass at most 106 bits
    }
}

/// `(-1)^sign * m * 2^e` rounded to the nearest double, ties to even
/// (m != 0; bit 0 of m may be a sticky bit, see `fma`).
fn round_to_f64(sign: bool, m: u128, e: i32) -> f64 {
    let len = 128 - m.leading_zeros() as i32;
    // Keep 53 significant bits, or fewer where the result is subnormal.
    let shift = (len - 53).max(-1074 - e);
    let (mut q, mut exp) = if shift <= 0 {
        (m << -shift, e + shift)
    } else if shift >= 128 {
        // Below half the smallest subnormal, except m > 2^127 at 128.
        (u128::from(shift == 128 && m > 1 << 127), e + shift)
    } else {
        let q = m >> shift;
        let rem = m & ((1u128 << shift) - 1);
        let half = 1u128 << (shift - 1);
        let up = rem > half || (rem == half && q & 1 == 1);
        (q + u128::from(up), e + shift)
    };
    if q == 1 << 53 {
        q >>= 1;
        exp += 1;
    }
    let magnitude = if exp > 971 {
        // Above (2^53 - 1) 2^971, the largest finite double: infinity.
        EXP_MASK
    } else {
        // q < 2^53 and exp >= -1074: the encoding of q * 2^exp is
        // ((exp + 1074) << 52) + q, for normal and subnormal results alike.
        (((exp + 1074) as u64) << 52).wrapping_add(q as u64)
    };
    f64::from_bits(magnitude | if sign { SIGN } else { 0 })
}

/// Correctly rounded square root of a positive normal or subnormal double;
/// NaN for anything else but +0.
pub(super) fn sqrt(x: f64) -> f64 {
    if x == 0.0 {
        return x;
    }
    if x.is_sign_negative() || !x.is_finite() {
        return f64::NAN; // negative, infinite or NaN
    }
    let (_, m, e) = decode(x);
    // x = m 2^e; make e even, then scale m up so that the root has 64+
    // significant bits: sqrt(M 2^E) = sqrt(M) 2^(E/2).
    let (m, e) = if e & 1 != 0 {
        (u128::from(m) << 1, e - 1)
    } else {
        (u128::from(m), e)
    };
    let lead = m.leading_zeros() & !1; // an even shift keeps E even
    let big = m << lead;
    let root = big.isqrt();
    let exact = root * root == big;
    // The root of a non-square is irrational: a set sticky bit below the
    // root's integer part rounds it correctly.
    let with_sticky = (root << 1) | u128::from(!exact);
    round_to_f64(false, with_sticky, (e - lead as i32) / 2 - 1)
}

// `exp` constants (ARM optimized-routines `exp_data.c`, N = 128).
const INV_LN2_N: f64 = f64::from_bits(0x4067_1547_652b_82fe); // 128 / ln 2
const NEG_LN2_HI_N: f64 = f64::from_bits(0xbf76_2e42_fefa_0000);
const NEG_LN2_LO_N: f64 = f64::from_bits(0xbd0c_f79a_bc9e_3b3a);
const EXP_SHIFT: f64 = f64::from_bits(0x4338_0000_0000_0000); // 0x1.8p52
const C2: f64 = f64::from_bits(0x3fdf_ffff_ffff_fdbd);
const C3: f64 = f64::from_bits(0x3fc5_5555_5555_543c);
const C4: f64 = f64::from_bits(0x3fa5_5555_cf17_2b91);
const C5: f64 = f64::from_bits(0x3f81_1111_67a4_d017);

/// The 12 top bits (sign and biased exponent).
fn top12(x: f64) -> u32 {
    (x.to_bits() >> 52) as u32
}

/// glibc's `exp(x)` (FMA build), for `2^-54 <= |x| < 512`.
pub(super) fn exp(x: f64) -> f64 {
    // Adding -0.0 is the identity on every double, signed zeros included.
    exp_inline(x, -0.0)
}

/// `exp(x + xtail)` as the tail of glibc's `pow` computes it; `exp` is the
/// case without a tail.
fn exp_inline(x: f64, xtail: f64) -> f64 {
    let abstop = top12(x) & 0x7ff;
    if abstop.wrapping_sub(top12(f64::from_bits(0x3c90_0000_0000_0000))) >= 0x408 - 0x3c9 {
        return f64::NAN; // |x| < 2^-54, |x| >= 512 or not finite
    }
    // x = k ln2/N + r with |r| <= ln2/2N: k = round(x N/ln2) through the
    // round-to-integer trick of adding 1.5 * 2^52 (fused with the product).
    let kd = fma(x, INV_LN2_N, EXP_SHIFT);
    let ki = kd.to_bits();
    let kd = kd - EXP_SHIFT;
    let r = fma(kd, NEG_LN2_LO_N, fma(kd, NEG_LN2_HI_N, x));
    let r = xtail + r;
    // 2^(k/N) ~= scale * (1 + tail).
    let [tail_bits, scale_bits] = EXP_TAB[(ki % 128) as usize];
    let tail = f64::from_bits(tail_bits);
    let sbits = scale_bits.wrapping_add(ki << 45);
    let r2 = r * r;
    let low = fma(fma(r, C3, C2), r2, tail + r);
    let tmp = fma(fma(r, C5, C4), r2 * r2, low);
    let scale = f64::from_bits(sbits);
    fma(scale, tmp, scale)
}

// `pow`'s logarithm constants (ARM optimized-routines `pow_log_data.c`).
const LN2_HI: f64 = f64::from_bits(0x3fe6_2e42_fefa_3800);
const LN2_LO: f64 = f64::from_bits(0x3d2e_f357_93c7_6730);
const A0: f64 = f64::from_bits(0xbfe0_0000_0000_0000); // -0.5
const A1: f64 = f64::from_bits(0xbfe5_5555_5555_5560);
const A2: f64 = f64::from_bits(0x3fe0_0000_0000_0006);
const A3: f64 = f64::from_bits(0x3fe9_9999_9959_554e);
const A4: f64 = f64::from_bits(0xbfe5_5555_5529_a47a);
const A5: f64 = f64::from_bits(0xbff2_495b_9b48_45e9);
const A6: f64 = f64::from_bits(0x3ff0_002b_8b26_3fc3);
/// Bits of 0x1.69555p-1: the subintervals of the log table start here.
const LOG_OFF: u64 = 0x3fe6_9555_0000_0000;

/// `log(x)` of a positive normal double as `hi + lo`, the double-double
/// logarithm of glibc's `pow` (relative error about 2^-68).
fn log_inline(ix: u64) -> (f64, f64) {
    // x = 2^k z with z in [0x1.69555p-1, 0x1.69555p0) and exact.
    let tmp = ix.wrapping_sub(LOG_OFF);
    let i = ((tmp >> 45) % 128) as usize;
    let k = (tmp as i64 >> 52) as i32;
    let iz = ix.wrapping_sub(tmp & (0xfff << 52));
    let z = f64::from_bits(iz);
    let kd = f64::from(k);
    let [invc, logc, logctail] = POW_LOG_TAB[i].map(f64::from_bits);
    // log(x) = k ln2 + log(c) + log1p(z/c - 1); z/c - 1 is exact.
    let r = fma(z, invc, -1.0);
    let t1 = fma(kd, LN2_HI, logc);
    let t2 = t1 + r;
    let lo1 = fma(kd, LN2_LO, logctail);
    let lo2 = t1 - t2 + r;
    let ar = r * A0;
    let ar2 = r * ar;
    let ar3 = r * ar2;
    let hi = t2 + ar2;
    let lo3 = fma(ar, r, -ar2);
    let lo4 = t2 - hi + ar2;
    // log1p(r) - r - A0 r^2 = ar3 * q.
    let q = fma(
        ar2,
        fma(fma(r, A6, A5), ar2, fma(r, A4, A3)),
        fma(r, A2, A1),
    );
    let lo = fma(ar3, q, lo1 + lo2 + lo3 + lo4);
    let y = hi + lo;
    (y, hi - y + lo)
}

/// glibc's `pow(x, y)` (FMA build) for positive normal `x` and
/// `2^-65 <= |y| < 2^63` whose result is a normal double (as in the sizing
/// code: `x` in (0, 1), `y` a small positive integer).
pub(super) fn pow(x: f64, y: f64) -> f64 {
    let ix = x.to_bits();
    let topx = top12(x);
    let topy = top12(y) & 0x7ff;
    if topx.wrapping_sub(1) >= 0x7ff - 1 || topy.wrapping_sub(0x3be) >= 0x43e - 0x3be {
        return f64::NAN; // x <= 0, subnormal or not finite; y tiny or huge
    }
    let (hi, lo) = log_inline(ix);
    let ehi = y * hi;
    let elo = fma(y, lo, fma(y, hi, -ehi));
    exp_inline(ehi, elo)
}

/// Natural logarithm of a positive normal double (faithful, within about
/// 0.52 ULP; NaN otherwise). RocksDB's slot count only rounds `log2(n)` to
/// the nearest integer, with a margin far above this error.
pub(super) fn ln(x: f64) -> f64 {
    let top = top12(x);
    if top.wrapping_sub(1) >= 0x7ff - 1 {
        return f64::NAN;
    }
    log_inline(x.to_bits()).0
}

#[cfg(test)]
mod tests {
    use super::*;

    /// SplitMix64 for reproducible operands.
    fn stream(seed: u64) -> impl Iterator<Item = u64> {
        let mut s = seed;
        core::iter::from_fn(move || Some(crate::test_kit::splitmix64(&mut s)))
    }

    /// A double with random significand and an exponent in `range`.
    fn double(u: u64, lo: i32, span: u32) -> f64 {
        let exp = (lo + (u >> 56) as i32 % span as i32 + 1023) as u64;
        f64::from_bits((u & SIGN) | (exp << 52) | (u & FRAC_MASK))
    }

    #[test]
    fn fma_matches_the_hardware_definition() {
        // std's mul_add is a correctly rounded fused multiply-add.
        let mut it = stream(7);
        for i in 0..200_000 {
            let (a, b) = (it.next().unwrap(), it.next().unwrap());
            let c = it.next().unwrap();
            let (a, b) = (double(a, -30, 60), double(b, -30, 60));
            // Mix addends near the product (cancellation) and far away.
            let c = match i % 3 {
                0 => -(a * b) * (1.0 + double(c, -60, 50)),
                1 => double(c, -100, 200),
                _ => f64::from_bits(c),
            };
            if !c.is_finite() {
                continue;
            }
            let want = a.mul_add(b, c);
            assert_eq!(fma(a, b, c).to_bits(), want.to_bits(), "{a:e} {b:e} {c:e}");
        }
        // Subnormal and overflowing results, exact zeros.
        let tiny = f64::from_bits(1);
        for (a, b, c) in [
            (1e-160, 1e-160, 0.0),
            (1e-160, -3e-160, tiny),
            (1.5, tiny, tiny),
            (1e300, 1e10, -1e300),
            (1e300, 1e10, 0.0),
            (2.0, 3.0, -6.0),
            (-2.0, 3.0, 6.0),
            (0.0, 3.0, -0.0),
            (f64::MIN_POSITIVE, 0.5, 0.0),
            (f64::MIN_POSITIVE, 0.75, -tiny),
        ] {
            assert_eq!(fma(a, b, c).to_bits(), a.mul_add(b, c).to_bits());
        }
    }

    #[test]
    fn sqrt_is_correctly_rounded() {
        let mut it = stream(11);
        for _ in 0..200_000 {
            let x = f64::from_bits(it.next().unwrap() & !SIGN);
            if x.is_finite() {
                assert_eq!(sqrt(x).to_bits(), x.sqrt().to_bits(), "{x:e}");
            }
        }
        for x in [4.0, 5.12, 512.0, 1e-310, f64::MAX, f64::MIN_POSITIVE, 0.0] {
            assert_eq!(sqrt(x).to_bits(), x.sqrt().to_bits());
        }
        assert!(sqrt(-1.0).is_nan() && sqrt(f64::NAN).is_nan());
    }

    #[test]
    fn exp_pow_log_are_accurate() {
        // Within glibc's error bounds of the true values (std's libm here
        // may be any implementation, so compare loosely, not bitwise).
        let close = |a: f64, b: f64| ((a - b) / b).abs() < 4e-16;
        for i in 0..10_000 {
            let x = -1.2 + f64::from(i) * 1.1e-4;
            if x.abs() > 1e-15 {
                assert!(close(exp(x), x.exp()), "exp({x})");
            }
            let b = 0.2 + f64::from(i) * 5e-5;
            for k in [1.0, 2.0, 7.0, 24.0] {
                assert!(close(pow(b, k), b.powf(k)), "pow({b}, {k})");
            }
            let n = f64::from(i + 1) * 104_729.0;
            assert!(close(ln(n), n.ln()), "ln({n})");
        }
        assert_eq!(ln(1.0), 0.0);
        assert!(exp(0.0).is_nan() && pow(-1.0, 2.0).is_nan() && ln(0.0).is_nan());
    }
}
