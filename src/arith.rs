//! 128-bit division for sizing and FP math, in a frame of its own, and the
//! 64 x 64 -> 128-bit product (and its fold) that hashing takes on every
//! key.
//!
//! On 32-bit targets LLVM expands each `u128` division inline into
//! hundreds of instructions and stack slots (700 bytes for one small
//! function on a Cortex-M4). Sizing and the FP measurement divide a few
//! times per plan or build, so one shift-and-subtract loop, shared and
//! never inlined, costs nothing that matters and keeps those frames small.

/// The full product `a * b` as (low, high) 64-bit halves. 64-bit targets
/// multiply once; 32-bit ones (wasm32, i686, Cortex-M) combine four
/// 32 x 32 -> 64-bit products, because a `u128` product there is a call to
/// a 128 x 128-bit routine (`__multi3`): two per key on wasm32.
#[inline(always)]
pub(crate) fn mul_wide(a: u64, b: u64) -> (u64, u64) {
    if cfg!(target_pointer_width = "64") {
        let p = u128::from(a) * u128::from(b);
        (p as u64, (p >> 64) as u64)
    } else {
        mul_wide_by_halves(a, b)
    }
}

/// Low half xor high half of the full product `x * k`: the fold of the
/// hash expansion, of XXH3 (`hash_key`) and of RocksDB's XXH3 preview.
#[inline(always)]
pub(crate) fn folded_product(x: u64, k: u64) -> u64 {
    let (low, high) = mul_wide(x, k);
    low ^ high
}

/// [`mul_wide`] from 32-bit halves.
#[inline(always)]
pub(crate) fn mul_wide_by_halves(a: u64, b: u64) -> (u64, u64) {
    let (a0, a1) = (a & 0xffff_ffff, a >> 32);
    let (b0, b1) = (b & 0xffff_ffff, b >> 32);
    let (p00, p01, p10, p11) = (a0 * b0, a0 * b1, a1 * b0, a1 * b1);
    // Bits 32..96: three terms below 2^32 each, no overflow.
    let mid = (p00 >> 32) + (p01 & 0xffff_ffff) + (p10 & 0xffff_ffff);
    let high = p11 + (p01 >> 32) + (p10 >> 32) + (mid >> 32);
    ((p00 & 0xffff_ffff) | (mid << 32), high)
}

/// `(a / b, a % b)`, or `None` when `b` is 0.
#[inline(never)]
pub(crate) const fn div_rem(a: u128, b: u128) -> Option<(u128, u128)> {
    if b == 0 {
        return None;
    }
    if a < b {
        return Some((0, a));
    }
    // Align b's top bit with a's, then one quotient bit per step.
    let shift = b.leading_zeros() - a.leading_zeros();
    let mut d = b << shift;
    let mut r = a;
    let mut q = 0u128;
    let mut step = 0;
    while step <= shift {
        q <<= 1;
        if r >= d {
            r -= d;
            q |= 1;
        }
        d >>= 1;
        step += 1;
    }
    Some((q, r))
}

/// `a / b`, or 0 when `b` is 0. Sizing never divides by zero; spelling it
/// this way leaves no panic path in the C ABI where the compiler cannot see
/// that.
pub(crate) const fn div(a: u128, b: u128) -> u128 {
    match div_rem(a, b) {
        Some((q, _)) => q,
        None => 0,
    }
}

/// `a / b` rounded up, or 0 when `b` is 0 (see [`div`]).
pub(crate) const fn div_ceil(a: u128, b: u128) -> u128 {
    match div_rem(a, b) {
        Some((q, r)) => q + (r != 0) as u128,
        None => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[cfg_attr(miri, ignore = "safe arithmetic: minutes under Miri")]
    fn wide_products_by_halves_match_u128() {
        let mut state = 7;
        let mut values = std::vec![0, 1, u64::MAX, u64::MAX - 1, 1 << 32, (1 << 32) - 1];
        for _ in 0..2000 {
            values.push(crate::test_kit::splitmix64(&mut state));
        }
        for &a in &values {
            for &b in values.iter().step_by(37) {
                let p = u128::from(a) * u128::from(b);
                let expect = (p as u64, (p >> 64) as u64);
                assert_eq!(mul_wide_by_halves(a, b), expect, "{a:#x} * {b:#x}");
                assert_eq!(mul_wide(a, b), expect);
            }
        }
    }

    #[test]
    fn matches_the_native_division() {
        let mut state = 1;
        let mut next = || crate::test_kit::splitmix64(&mut state);
        let edges = [
            0u128,
            1,
            2,
            3,
            999,
            1000,
            1 << 64,
            (1 << 64) - 1,
            u128::MAX,
            u128::MAX - 1,
            1 << 127,
        ];
        let mut values: std::vec::Vec<u128> = edges.to_vec();
        // Miri interprets every step of the loop: fewer pairs there.
        for _ in 0..if cfg!(miri) { 5 } else { 300 } {
            let wide = (u128::from(next()) << 64) | u128::from(next());
            // Spread the bit lengths.
            values.push(wide >> (next() % 128));
        }
        for &a in &values {
            for &b in &values {
                let expect = a.checked_div(b).zip(a.checked_rem(b));
                assert_eq!(div_rem(a, b), expect, "{a} / {b}");
                assert_eq!(div(a, b), a.checked_div(b).unwrap_or(0));
                assert_eq!(
                    div_ceil(a, b),
                    expect.map_or(0, |(q, r)| q + u128::from(r != 0))
                );
            }
        }
    }
}
