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
    fn leading_zeros(self) -> u32;
    /// Shifts out the trailing zeros of a non-zero word whose lowest bit is
    /// 0 (as after an elimination step); returns the shift and the result.
    #[inline(always)]
    fn drop_trailing_zeros(self) -> (u32, Self) {
        let shift = self.trailing_zeros();
        (shift, self >> shift)
    }
    /// Parity of the number of set bits: 0 or 1.
    fn parity(self) -> u64;
    /// All ones if `bit` is 1, else zero (`bit` is 0 or 1): a branch-free
    /// select.
    fn mask_from_bit(bit: u64) -> Self;
    /// Bit `i` (`i < BITS`) as 0 or 1.
    fn bit(self, i: u32) -> u64;
    /// `self >> n`, zero when `n >= BITS`.
    fn checked_shr(self, n: u32) -> Self;
    /// The low bit as 0 or 1 in a word.
    fn from_bit(bit: u64) -> Self;

    /// Reads little-endian word `index` of `bytes` (`None` past the end).
    fn read_word(bytes: &[u8], index: usize) -> Option<Self>;
    /// The bytes of one serialized word.
    type Chunk: Copy;
    /// `bytes` as whole words' bytes (any bytes past the last whole word
    /// left out): what [`Word::read_chunked`] reads.
    fn chunks(bytes: &[u8]) -> &[Self::Chunk];
    /// [`Word::read_word`] of bytes seen as words ([`Word::chunks`]): the
    /// same word, read with a comparison and an index alone. The query's
    /// scalar kernel reads with it: in an unoptimized build (a dependent's
    /// debug build) every `checked_mul`, `get` and `?` is a function call.
    fn read_chunked(words: &[Self::Chunk], index: usize) -> Option<Self>;
    /// `parity((lo & c_lo) ^ (hi & c_hi))`, one column of a query, with
    /// the operators of the concrete type (in generic code each is a
    /// call in an unoptimized build).
    fn select_parity(lo: Self, c_lo: Self, hi: Self, c_hi: Self) -> u64;
    /// `(self << shift, self >> (BITS - shift))` for `shift < BITS` (the
    /// second 0 for a shift of 0): a coefficient row split where a
    /// window crosses into the next block.
    fn split_window(self, shift: u32) -> (Self, Self);
    /// Writes little-endian word `index` of `out` (nothing past the end).
    fn write_word(self, out: &mut [u8], index: usize);

    /// Reads the word starting at `scratch[at]` (low 64 bits first); zero
    /// past the end, which banding never reaches, but no panic path is left
    /// for the C ABI.
    fn load(scratch: &[u64], at: usize) -> Self;
    /// Writes the word starting at `scratch[at]` (nothing past the end).
    fn store(self, scratch: &mut [u64], at: usize);

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
    fn leading_zeros(self) -> u32 {
        u64::leading_zeros(self)
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
    fn mask_from_bit(bit: u64) -> Self {
        0u64.wrapping_sub(bit & 1)
    }
    #[inline(always)]
    fn bit(self, i: u32) -> u64 {
        u64::checked_shr(self, i).unwrap_or(0) & 1
    }
    #[inline(always)]
    fn checked_shr(self, n: u32) -> Self {
        u64::checked_shr(self, n).unwrap_or(0)
    }
    type Chunk = [u8; 8];
    #[inline(always)]
    fn chunks(bytes: &[u8]) -> &[[u8; 8]] {
        bytes.as_chunks::<8>().0
    }
    #[inline(always)]
    fn read_chunked(words: &[[u8; 8]], index: usize) -> Option<Self> {
        if index < words.len() {
            Some(u64::from_le_bytes(words[index]))
        } else {
            None
        }
    }
    #[inline(always)]
    fn select_parity(lo: Self, c_lo: Self, hi: Self, c_hi: Self) -> u64 {
        u64::from(((lo & c_lo) ^ (hi & c_hi)).count_ones() & 1)
    }
    #[inline(always)]
    fn split_window(self, shift: u32) -> (Self, Self) {
        // `>> 1` first: no out-of-range shift when `shift` is 0.
        (self << shift, (self >> 1) >> (63 - shift))
    }
    #[inline(always)]
    fn read_word(bytes: &[u8], index: usize) -> Option<Self> {
        let word = bytes
            .get(index.checked_mul(Self::BYTES)?..)?
            .first_chunk::<8>()?;
        Some(u64::from_le_bytes(*word))
    }
    #[inline(always)]
    fn write_word(self, out: &mut [u8], index: usize) {
        if let Some(word) = index
            .checked_mul(8)
            .and_then(|at| out.get_mut(at..))
            .and_then(|rest| rest.first_chunk_mut::<8>())
        {
            *word = self.to_le_bytes();
        }
    }
    #[inline(always)]
    fn load(scratch: &[u64], at: usize) -> Self {
        scratch.get(at).copied().unwrap_or(0)
    }
    #[inline(always)]
    fn store(self, scratch: &mut [u64], at: usize) {
        if let Some(slot) = scratch.get_mut(at) {
            *slot = self;
        }
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
    fn leading_zeros(self) -> u32 {
        u128::leading_zeros(self)
    }
    #[inline(always)]
    fn drop_trailing_zeros(self) -> (u32, Self) {
        let (lo, hi) = (self as u64, (self >> 64) as u64);
        if lo != 0 {
            // The usual case by far: a shift of 1..=63 across the halves.
            let shift = lo.trailing_zeros();
            let new_lo = (lo >> shift) | (hi << 1 << (63 - shift));
            (shift, u128::from(new_lo) | (u128::from(hi >> shift) << 64))
        } else {
            let shift = 64 + hi.trailing_zeros();
            (shift, self >> shift)
        }
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
    fn mask_from_bit(bit: u64) -> Self {
        0u128.wrapping_sub(u128::from(bit & 1))
    }
    #[inline(always)]
    fn bit(self, i: u32) -> u64 {
        u128::checked_shr(self, i).unwrap_or(0) as u64 & 1
    }
    #[inline(always)]
    fn checked_shr(self, n: u32) -> Self {
        u128::checked_shr(self, n).unwrap_or(0)
    }
    type Chunk = [u8; 16];
    #[inline(always)]
    fn chunks(bytes: &[u8]) -> &[[u8; 16]] {
        bytes.as_chunks::<16>().0
    }
    #[inline(always)]
    fn read_chunked(words: &[[u8; 16]], index: usize) -> Option<Self> {
        if index < words.len() {
            Some(u128::from_le_bytes(words[index]))
        } else {
            None
        }
    }
    #[inline(always)]
    fn select_parity(lo: Self, c_lo: Self, hi: Self, c_hi: Self) -> u64 {
        u64::from(((lo & c_lo) ^ (hi & c_hi)).count_ones() & 1)
    }
    #[inline(always)]
    fn split_window(self, shift: u32) -> (Self, Self) {
        (self << shift, (self >> 1) >> (127 - shift))
    }
    #[inline(always)]
    fn read_word(bytes: &[u8], index: usize) -> Option<Self> {
        let word = bytes
            .get(index.checked_mul(Self::BYTES)?..)?
            .first_chunk::<16>()?;
        Some(u128::from_le_bytes(*word))
    }
    #[inline(always)]
    fn write_word(self, out: &mut [u8], index: usize) {
        if let Some(word) = index
            .checked_mul(16)
            .and_then(|at| out.get_mut(at..))
            .and_then(|rest| rest.first_chunk_mut::<16>())
        {
            *word = self.to_le_bytes();
        }
    }
    #[inline(always)]
    fn load(scratch: &[u64], at: usize) -> Self {
        match scratch.get(at..).and_then(|s| s.first_chunk::<2>()) {
            Some(pair) => u128::from(pair[0]) | (u128::from(pair[1]) << 64),
            None => 0,
        }
    }
    #[inline(always)]
    fn store(self, scratch: &mut [u64], at: usize) {
        if let Some(pair) = scratch.get_mut(at..).and_then(|s| s.first_chunk_mut::<2>()) {
            *pair = [self as u64, (self >> 64) as u64];
        }
    }
    #[inline(always)]
    fn to_u128(self) -> u128 {
        self
    }
}

/// The rows of a banded system in scratch. Row `i` takes `stride` words
/// from word `i * stride`: the coefficient word(s), then, for Standard
/// Ribbon, the result bits. Keeping a row in one place makes every step of
/// banding touch one cache line.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Rows<'a> {
    words: &'a [u64],
    stride: usize,
    standard: bool,
}

impl<'a> Rows<'a> {
    /// Words per row for width `W`, with a result word for Standard Ribbon.
    #[inline(always)]
    pub(crate) const fn stride<W: Word>(standard: bool) -> usize {
        Self::stride_for_bits(W::BITS, standard)
    }

    /// Words of a row's coefficients: the result word follows them.
    pub(crate) const fn coeff_words<W: Word>() -> usize {
        W::BITS as usize / 64
    }

    /// [`Rows::stride`] for a width known at run time.
    pub(crate) const fn stride_for(width: crate::layout::Width, standard: bool) -> usize {
        Self::stride_for_bits(width.bits(), standard)
    }

    /// Coefficient words (`bits / 64`), then one result word for Standard.
    const fn stride_for_bits(bits: u32, standard: bool) -> usize {
        bits as usize / 64 + standard as usize
    }

    /// Rows of width `W` over `words`.
    pub(crate) fn new<W: Word>(words: &'a [u64], standard: bool) -> Rows<'a> {
        Rows {
            words,
            stride: Self::stride::<W>(standard),
            standard,
        }
    }

    /// Rows of a filter of `width` over `words`.
    pub(crate) fn new_for(
        width: crate::layout::Width,
        words: &'a [u64],
        standard: bool,
    ) -> Rows<'a> {
        match width {
            crate::layout::Width::W64 => Self::new::<u64>(words, standard),
            crate::layout::Width::W128 => Self::new::<u128>(words, standard),
        }
    }

    /// Coefficients of row `i` (zero for an empty row).
    #[inline(always)]
    pub(crate) fn coeff<W: Word>(&self, i: usize) -> W {
        W::load(self.words, i * self.stride)
    }

    /// Result bits of row `i` (zero for Homogeneous Ribbon).
    #[inline(always)]
    pub(crate) fn result<W: Word>(&self, i: usize) -> u64 {
        if self.standard {
            let at = i * self.stride + Self::coeff_words::<W>();
            self.words.get(at).copied().unwrap_or(0)
        } else {
            0
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Word;

    fn round_trip<W: Word>(w: W) {
        let mut bytes = [0u8; 40];
        w.write_word(&mut bytes, 1);
        assert_eq!(W::read_word(&bytes, 1), Some(w));
        assert_eq!(W::read_word(&bytes, 0), Some(W::ZERO));
        assert_eq!(W::read_word(&bytes[..W::BYTES * 2 - 1], 1), None);
        let mut scratch = [0u64; 6];
        w.store(&mut scratch, 2);
        assert_eq!(W::load(&scratch, 2), w);
        assert!(W::load(&scratch, 0).is_zero());
    }

    #[test]
    fn words_round_trip_through_bytes_and_scratch() {
        round_trip(0x0123_4567_89ab_cdefu64);
        round_trip(0x0123_4567_89ab_cdef_fedc_ba98_7654_3210u128);
        assert_eq!(0b1011u64.parity(), 1);
        assert_eq!((3u128 << 100).parity(), 0);
        assert_eq!(Word::trailing_zeros(1u128 << 77), 77);
        assert_eq!(Word::leading_zeros(1u128 << 77), 50);
        assert_eq!(Word::leading_zeros(0u64), 64);
        assert_eq!(<u128 as Word>::mask_from_bit(1), u128::MAX);
        assert_eq!(<u64 as Word>::mask_from_bit(0), 0);
    }

    /// The query's word reader and column evaluation equal the general
    /// ones at every index and length (past the end included), and the
    /// window split equals its two shifts.
    fn query_words_agree<W: Word>(sample: impl Fn(u64) -> W) {
        let bytes: [u8; 72] = core::array::from_fn(|i| (i as u8).wrapping_mul(37) ^ 0x5a);
        for len in 0..=bytes.len() {
            let words = W::chunks(&bytes[..len]);
            for index in [0, 1, 2, 3, 4, 5, 8, 9, usize::MAX / 16, usize::MAX] {
                assert_eq!(
                    W::read_chunked(words, index),
                    W::read_word(&bytes[..len], index),
                    "len {len}, index {index}"
                );
            }
        }
        for i in 0..64u64 {
            let (lo, c_lo, hi, c_hi) = (sample(i), sample(i + 64), sample(i + 128), sample(!i));
            let expected = ((lo & c_lo) ^ (hi & c_hi)).parity();
            assert_eq!(W::select_parity(lo, c_lo, hi, c_hi), expected);
            let c = sample(i * 3);
            for shift in [0, 1, (i as u32) % W::BITS, W::BITS - 1] {
                let high = if shift == 0 {
                    W::ZERO
                } else {
                    c >> (W::BITS - shift)
                };
                assert_eq!(c.split_window(shift), (c << shift, high), "shift {shift}");
            }
        }
    }

    #[test]
    fn query_words_agree_with_the_general_ones() {
        let mix = |i: u64| i.wrapping_add(1).wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ (i << 7);
        query_words_agree::<u64>(mix);
        query_words_agree::<u128>(|i| (u128::from(mix(i)) << 64) | u128::from(mix(i ^ 0xff)));
    }
}
