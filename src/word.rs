//! The ribbon word: a `w`-bit coefficient row, state word or ICML word.
//!
//! Banding, back-substitution and the scalar query are written once over this
//! trait and instantiated for `u64` (w = 64) and `u128` (w = 128).

use core::fmt::Debug;
use core::ops::{BitAnd, BitOr, BitXor, Shl, Shr};

/// A `w`-bit word of the ribbon (w = `BITS`).
pub(crate) trait Word:
    Copy
    + Eq
    + Debug
    + BitAnd<Output = Self>
    + BitOr<Output = Self>
    + BitXor<Output = Self>
    + Shl<u32, Output = Self>
    + Shr<u32, Output = Self>
{
    /// The ribbon width `w` in bits.
    const BITS: u32;
    /// Bytes of one serialized word.
    const BYTES: usize;
    const ZERO: Self;

    fn is_zero(self) -> bool;
    fn trailing_zeros(self) -> u32;
    /// Parity of the number of set bits: 0 or 1.
    fn parity(self) -> u64;
    /// The low bit as 0 or 1 in a word.
    fn from_bit(bit: u64) -> Self;

    /// Reads a little-endian word; `bytes.len()` must be `BYTES`.
    fn read_le(bytes: &[u8]) -> Self;
    /// Writes a little-endian word; `out.len()` must be `BYTES`.
    fn write_le(self, out: &mut [u8]);

    /// Reads coefficient row `i` from banding scratch.
    fn load(scratch: &[u64], i: usize) -> Self;
    /// Writes coefficient row `i` into banding scratch.
    fn store(self, scratch: &mut [u64], i: usize);

    /// The word widened to 128 bits (for [`crate::Equation`]).
    fn to_u128(self) -> u128;
}

impl Word for u64 {
    const BITS: u32 = 64;
    const BYTES: usize = 8;
    const ZERO: Self = 0;

    #[inline(always)]
    fn is_zero(self) -> bool {
        self == 0
    }
    #[inline(always)]
    fn trailing_zeros(self) -> u32 {
        u64::trailing_zeros(self)
    }
    #[inline(always)]
    fn parity(self) -> u64 {
        u64::from(self.count_ones() & 1)
    }
    #[inline(always)]
    fn from_bit(bit: u64) -> Self {
        bit & 1
    }
    #[inline(always)]
    fn read_le(bytes: &[u8]) -> Self {
        let mut b = [0u8; 8];
        b.copy_from_slice(bytes);
        u64::from_le_bytes(b)
    }
    #[inline(always)]
    fn write_le(self, out: &mut [u8]) {
        out.copy_from_slice(&self.to_le_bytes());
    }
    #[inline(always)]
    fn load(scratch: &[u64], i: usize) -> Self {
        scratch[i]
    }
    #[inline(always)]
    fn store(self, scratch: &mut [u64], i: usize) {
        scratch[i] = self;
    }
    #[inline(always)]
    fn to_u128(self) -> u128 {
        u128::from(self)
    }
}

impl Word for u128 {
    const BITS: u32 = 128;
    const BYTES: usize = 16;
    const ZERO: Self = 0;

    #[inline(always)]
    fn is_zero(self) -> bool {
        self == 0
    }
    #[inline(always)]
    fn trailing_zeros(self) -> u32 {
        u128::trailing_zeros(self)
    }
    #[inline(always)]
    fn parity(self) -> u64 {
        u64::from(self.count_ones() & 1)
    }
    #[inline(always)]
    fn from_bit(bit: u64) -> Self {
        u128::from(bit & 1)
    }
    #[inline(always)]
    fn read_le(bytes: &[u8]) -> Self {
        let mut b = [0u8; 16];
        b.copy_from_slice(bytes);
        u128::from_le_bytes(b)
    }
    #[inline(always)]
    fn write_le(self, out: &mut [u8]) {
        out.copy_from_slice(&self.to_le_bytes());
    }
    #[inline(always)]
    fn load(scratch: &[u64], i: usize) -> Self {
        let pair = &scratch[2 * i..2 * i + 2];
        u128::from(pair[0]) | (u128::from(pair[1]) << 64)
    }
    #[inline(always)]
    fn store(self, scratch: &mut [u64], i: usize) {
        let pair = &mut scratch[2 * i..2 * i + 2];
        pair[0] = self as u64;
        pair[1] = (self >> 64) as u64;
    }
    #[inline(always)]
    fn to_u128(self) -> u128 {
        self
    }
}

#[cfg(test)]
mod tests {
    use super::Word;

    fn round_trip<W: Word>(w: W) {
        let mut bytes = [0u8; 16];
        w.write_le(&mut bytes[..W::BYTES]);
        assert_eq!(W::read_le(&bytes[..W::BYTES]), w);
        let mut scratch = [0u64; 6];
        w.store(&mut scratch, 1);
        assert_eq!(W::load(&scratch, 1), w);
        assert!(W::load(&scratch, 0).is_zero());
    }

    #[test]
    fn words_round_trip_through_bytes_and_scratch() {
        round_trip(0x0123_4567_89ab_cdefu64);
        round_trip(0x0123_4567_89ab_cdef_fedc_ba98_7654_3210u128);
        assert_eq!(0b1011u64.parity(), 1);
        assert_eq!((3u128 << 100).parity(), 0);
        assert_eq!(Word::trailing_zeros(1u128 << 77), 77);
    }
}
