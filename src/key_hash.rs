//! A key hash to build filters from: XXH3-64, the 64-bit XXH3 of xxHash
//! 0.8, with its default secret, seed 0 or a caller's seed.
//!
//! * **The same values as other languages.** `hash_key(key)` is what the
//!   xxh3 libraries return for the same bytes: C's `XXH3_64bits`, Rust's
//!   `xxhash_rust::xxh3::xxh3_64`, Python's `xxhash.xxh3_64_intdigest`, and
//!   the ports to other languages. A filter built here can be queried from a
//!   program that hashes its keys elsewhere, and the other way round.
//! * **Stable.** The values are a format promise: they are the same on
//!   every platform and byte order (every read is little-endian) and in
//!   every later version of this crate, so filters built from `hash_key`
//!   values stay valid. `tests/key_hash.rs` pins them.
//! * **Fast on short keys**, which is what filter keys usually are: a few
//!   multiplies and no loop up to 128 bytes, inlined into the caller; the
//!   same code on either byte order.
//!
//! A Ribbon filter needs from its key hashes only that distinct keys get
//! distinct-looking 64-bit values: the filter remixes every hash with its
//! own seed before it uses it, and nothing here is meant to resist an
//! adversary who picks keys. A strong hash is not needed: with integers
//! used directly as hashes (`i`, `i << 32`, `i << 40`, `i * 4096`,
//! `i * 1000003`), 10^6 keys at 8 bits per key built on the first seed and
//! matched 0.527-0.690 % of non-members against 0.535-0.685 % planned, the
//! same as random hashes (`cargo run --release --example weak_hashes`).
//!
//! The algorithm, by input length:
//!
//! | Length | Work |
//! |---|---|
//! | 0 | the seed and two secret words, avalanched |
//! | 1-3 | first, middle and last byte and the length in one word |
//! | 4-8 | first and last 4 bytes in one word, mixed with the length |
//! | 9-16 | first and last 8 bytes, one folded 128-bit product |
//! | 17-128 | 16-byte pairs from both ends, one folded product each |
//! | 129-240 | every 16-byte chunk, an avalanche after the first 8 |
//! | over 240 | 8 lanes over 64-byte stripes, scrambled every 1024 bytes |
//!
//! With a seed, inputs up to 240 bytes add it to or subtract it from the
//! secret words they read; longer inputs first derive a whole secret from
//! it (seed 0 derives the default secret itself).

use crate::arith::folded_product;
use crate::error::Error;

pub(crate) const PRIME32_1: u64 = 0x9e37_79b1;
pub(crate) const PRIME32_2: u64 = 0x85eb_ca77;
pub(crate) const PRIME32_3: u64 = 0xc2b2_ae3d;
pub(crate) const PRIME64_1: u64 = 0x9e37_79b1_85eb_ca87;
pub(crate) const PRIME64_2: u64 = 0xc2b2_ae3d_27d4_eb4f;
pub(crate) const PRIME64_3: u64 = 0x1656_67b1_9e37_79f9;
pub(crate) const PRIME64_4: u64 = 0x85eb_ca77_c2b2_ae63;
pub(crate) const PRIME64_5: u64 = 0x27d4_eb2f_1656_67c5;
/// Multiplier of the XXH3 avalanche.
const MIX_1: u64 = 0x1656_6791_9e37_79f9;
/// Multiplier of the 4-8 byte finish (`rrmxmx`).
const MIX_2: u64 = 0x9fb2_1c65_1e98_df25;

/// The default secret of XXH3 (192 bytes).
pub(crate) const SECRET: [u8; SECRET_BYTES] = [
    0xb8, 0xfe, 0x6c, 0x39, 0x23, 0xa4, 0x4b, 0xbe, 0x7c, 0x01, 0x81, 0x2c, 0xf7, 0x21, 0xad, 0x1c,
    0xde, 0xd4, 0x6d, 0xe9, 0x83, 0x90, 0x97, 0xdb, 0x72, 0x40, 0xa4, 0xa4, 0xb7, 0xb3, 0x67, 0x1f,
    0xcb, 0x79, 0xe6, 0x4e, 0xcc, 0xc0, 0xe5, 0x78, 0x82, 0x5a, 0xd0, 0x7d, 0xcc, 0xff, 0x72, 0x21,
    0xb8, 0x08, 0x46, 0x74, 0xf7, 0x43, 0x24, 0x8e, 0xe0, 0x35, 0x90, 0xe6, 0x81, 0x3a, 0x26, 0x4c,
    0x3c, 0x28, 0x52, 0xbb, 0x91, 0xc3, 0x00, 0xcb, 0x88, 0xd0, 0x65, 0x8b, 0x1b, 0x53, 0x2e, 0xa3,
    0x71, 0x64, 0x48, 0x97, 0xa2, 0x0d, 0xf9, 0x4e, 0x38, 0x19, 0xef, 0x46, 0xa9, 0xde, 0xac, 0xd8,
    0xa8, 0xfa, 0x76, 0x3f, 0xe3, 0x9c, 0x34, 0x3f, 0xf9, 0xdc, 0xbb, 0xc7, 0xc7, 0x0b, 0x4f, 0x1d,
    0x8a, 0x51, 0xe0, 0x4b, 0xcd, 0xb4, 0x59, 0x31, 0xc8, 0x9f, 0x7e, 0xc9, 0xd9, 0x78, 0x73, 0x64,
    0xea, 0xc5, 0xac, 0x83, 0x34, 0xd3, 0xeb, 0xc3, 0xc5, 0x81, 0xa0, 0xff, 0xfa, 0x13, 0x63, 0xeb,
    0x17, 0x0d, 0xdd, 0x51, 0xb7, 0xf0, 0xda, 0x49, 0xd3, 0x16, 0x55, 0x26, 0x29, 0xd4, 0x68, 0x9e,
    0x2b, 0x16, 0xbe, 0x58, 0x7d, 0x47, 0xa1, 0xfc, 0x8f, 0xf8, 0xb8, 0xd1, 0x7a, 0xd0, 0x31, 0xce,
    0x45, 0xcb, 0x3a, 0x8f, 0x95, 0x16, 0x04, 0x28, 0xaf, 0xd7, 0xfb, 0xca, 0xbb, 0x4b, 0x40, 0x7e,
];
const SECRET_BYTES: usize = 192;

/// Bytes one accumulation step of the long path consumes.
const STRIPE: usize = 64;
/// Stripes between two scrambles: the secret advances 8 bytes per stripe.
const STRIPES_PER_BLOCK: usize = (SECRET_BYTES - STRIPE) / 8;
/// Bytes between two scrambles.
const BLOCK: usize = STRIPE * STRIPES_PER_BLOCK;
/// The longest input the paths without stripes take.
const MID_MAX: usize = 240;

/// The little-endian word at byte `at` of `bytes`, 0 past the end (every
/// caller reads in bounds; the fallback only keeps this free of panics).
#[inline(always)]
pub(crate) const fn word_at(bytes: &[u8], at: usize) -> u64 {
    match bytes.split_at_checked(at) {
        Some((_, rest)) => match rest.first_chunk::<8>() {
            Some(word) => u64::from_le_bytes(*word),
            None => 0,
        },
        None => 0,
    }
}

/// `N` consecutive little-endian words of `bytes` from byte `at`.
const fn words_at<const N: usize>(bytes: &[u8], at: usize) -> [u64; N] {
    let mut words = [0u64; N];
    let mut i = 0;
    while i < N {
        words[i] = word_at(bytes, at.wrapping_add(8 * i));
        i += 1;
    }
    words
}

/// A word of the default secret.
#[inline(always)]
pub(crate) const fn secret(at: usize) -> u64 {
    word_at(&SECRET, at)
}

/// The low 32 bits of a word of the default secret (for constants).
const fn secret32(at: usize) -> u64 {
    secret(at) & 0xffff_ffff
}

/// The secret pairs (low, high word) of inputs of 17 to 240 bytes: pair
/// `i` of `PAIRS` is at byte `16 * i`, pair `j` of `LATE_PAIRS` (for chunk
/// `8 + j` of inputs over 128 bytes) at byte `16 * j + 3`, and `LAST_PAIR`
/// (for their last 16 bytes) at byte 119.
const PAIRS: [[u64; 2]; 8] = pairs_at(0);
const LATE_PAIRS: [[u64; 2]; 7] = pairs_at(3);
const LAST_PAIR: [u64; 2] = [secret(119), secret(127)];

const fn pairs_at<const N: usize>(offset: usize) -> [[u64; 2]; N] {
    let mut pairs = [[0u64; 2]; N];
    let mut i = 0;
    while i < N {
        pairs[i] = [secret(offset + 16 * i), secret(offset + 16 * i + 8)];
        i += 1;
    }
    pairs
}

/// XXH64's avalanche (the finish of 0-3 byte inputs).
#[inline(always)]
fn avalanche64(mut h: u64) -> u64 {
    h ^= h >> 33;
    h = h.wrapping_mul(PRIME64_2);
    h ^= h >> 29;
    h = h.wrapping_mul(PRIME64_3);
    h ^ (h >> 32)
}

/// XXH3's avalanche.
#[inline(always)]
fn avalanche(mut h: u64) -> u64 {
    h ^= h >> 37;
    h = h.wrapping_mul(MIX_1);
    h ^ (h >> 32)
}

/// The stronger finish of 4-8 byte inputs, which mixes in the length.
#[inline(always)]
fn rrmxmx(mut h: u64, len: u64) -> u64 {
    h ^= h.rotate_left(49) ^ h.rotate_left(24);
    h = h.wrapping_mul(MIX_2);
    h ^= (h >> 35).wrapping_add(len);
    h = h.wrapping_mul(MIX_2);
    h ^ (h >> 28)
}

/// One 16-byte chunk against a secret pair shifted by the seed.
#[inline(always)]
fn mix16(chunk: &[u8; 16], pair: [u64; 2], seed: u64) -> u64 {
    folded_product(
        word_at(chunk, 0) ^ pair[0].wrapping_add(seed),
        word_at(chunk, 8) ^ pair[1].wrapping_sub(seed),
    )
}

/// XXH3-64 of `key` with seed 0: the same value as `XXH3_64bits` of
/// xxHash 0.8 and every library that implements it (for example
/// `xxhash_rust::xxh3::xxh3_64` or Python's `xxhash.xxh3_64_intdigest`).
///
/// Use it to turn keys into the 64-bit hashes a filter is built from and
/// queried with. The values are stable: they are the same on every
/// platform and byte order and in every later version of this crate, so a
/// filter built from them stays valid. Any hash with well-spread 64-bit
/// values serves a filter as well; this one is fast on short keys and
/// portable across languages.
///
/// ```
/// use ribbon_kernel::{Filter, Kind, Plan, Width, hash_key};
///
/// assert_eq!(hash_key(b""), 0x2d06_8005_38d3_94c2);
/// assert_eq!(hash_key(b"abc"), 0x78af_5f94_892f_3950);
///
/// let keys = ["apple", "banana", "cherry"];
/// let hashes: Vec<u64> = keys.iter().map(|k| hash_key(k.as_bytes())).collect();
/// let plan = Plan::new(Kind::Homogeneous, Width::W64, hashes.len(), 10_000)?;
/// let filter = Filter::build(&plan, &hashes)?;
/// assert!(filter.contains(hash_key(b"banana")));
/// # Ok::<(), ribbon_kernel::Error>(())
/// ```
// Inlined into callers in release builds only: with debug assertions on
// (a debug build, maybe with this crate optimized by a profile override)
// it is compiled here, at this crate's opt-level.
#[cfg_attr(not(debug_assertions), inline)]
pub fn hash_key(key: &[u8]) -> u64 {
    xxh3_64(key, 0)
}

/// XXH3-64 of `key` with `seed`: the same value as
/// `XXH3_64bits_withSeed` of xxHash 0.8 (`xxhash_rust::xxh3::xxh3_64_with_seed`).
/// Seed 0 gives [`hash_key`].
///
/// Stable like [`hash_key`]. A seed gives another family of hashes, for
/// example to keep two applications' filters apart; it is no secret key.
///
/// ```
/// use ribbon_kernel::{hash_key, hash_key_with_seed};
///
/// assert_eq!(hash_key_with_seed(b"abc", 0), hash_key(b"abc"));
/// assert_ne!(hash_key_with_seed(b"abc", 1), hash_key(b"abc"));
/// ```
// Inlined into callers in release builds only: with debug assertions on
// (a debug build, maybe with this crate optimized by a profile override)
// it is compiled here, at this crate's opt-level.
#[cfg_attr(not(debug_assertions), inline)]
pub fn hash_key_with_seed(key: &[u8], seed: u64) -> u64 {
    xxh3_64(key, seed)
}

/// The dispatch on the length, inlined into both public functions so that
/// [`hash_key`] folds its seed of 0 into the secret constants. Keys up to
/// 128 bytes take no call. The tests are nested so that keys of 17 to 128
/// bytes pass two of them and shorter keys four at most.
#[inline(always)]
fn xxh3_64(key: &[u8], seed: u64) -> u64 {
    let len = key.len();
    if len <= 16 {
        if len > 8 {
            short_9_to_16(key, seed)
        } else if len >= 4 {
            short_4_to_8(key, seed)
        } else if len > 0 {
            short_1_to_3(key, seed)
        } else {
            avalanche64(seed ^ const { secret(56) ^ secret(64) })
        }
    } else if len <= 128 {
        medium_17_to_128(key, seed)
    } else if len <= MID_MAX {
        medium_129_to_240(key, seed)
    } else if seed == 0 {
        long(key, &DEFAULT_LONG_SECRET)
    } else if DERIVE_WHOLE_SECRET {
        long(key, &LongSecret::derive(seed))
    } else {
        long(key, &SeededSecret(seed))
    }
}

/// Whether a seeded long input derives its whole secret first (320 bytes
/// in the frame, read back as constants are) or each word as a stripe
/// reads it ([`SeededSecret`]: an add per word, no secret in the frame).
/// 64-bit targets derive it whole, which keeps the stripes as fast as
/// seed 0's; 32-bit ones derive words as they go, which keeps the seeded
/// hash (the checksum of every build and verified open) within a small
/// stack.
const DERIVE_WHOLE_SECRET: bool = cfg!(target_pointer_width = "64");

/// Hashes every key with [`hash_key`] into `out`, one hash per key.
///
/// `out` must be exactly as long as `keys`, or nothing is written and the
/// result is [`Error::LengthMismatch`].
///
/// ```
/// use ribbon_kernel::{hash_key, hash_keys};
///
/// let keys = ["apple", "banana", "cherry"];
/// let mut hashes = [0u64; 3];
/// hash_keys(&keys, &mut hashes)?;
/// assert_eq!(hashes[1], hash_key(b"banana"));
/// assert!(hash_keys(&keys, &mut [0u64; 2]).is_err());
/// # Ok::<(), ribbon_kernel::Error>(())
/// ```
pub fn hash_keys<K: AsRef<[u8]>>(keys: &[K], out: &mut [u64]) -> Result<(), Error> {
    if keys.len() != out.len() {
        return Err(Error::LengthMismatch {
            expected: keys.len(),
            given: out.len(),
        });
    }
    for (hash, key) in out.iter_mut().zip(keys) {
        *hash = hash_key(key.as_ref());
    }
    Ok(())
}

#[inline(always)]
fn short_1_to_3(key: &[u8], seed: u64) -> u64 {
    let len = key.len();
    let first = u64::from(key.first().copied().unwrap_or(0));
    let middle = u64::from(key.get(len >> 1).copied().unwrap_or(0));
    let last = u64::from(key.last().copied().unwrap_or(0));
    let combined = (first << 16) | (middle << 24) | last | ((len as u64) << 8);
    let flip = const { secret32(0) ^ secret32(4) }.wrapping_add(seed);
    avalanche64(combined ^ flip)
}

#[inline(always)]
fn short_4_to_8(key: &[u8], seed: u64) -> u64 {
    let first = key.first_chunk::<4>().map_or(0, |b| u32::from_le_bytes(*b));
    let last = key.last_chunk::<4>().map_or(0, |b| u32::from_le_bytes(*b));
    let seed = seed ^ (u64::from((seed as u32).swap_bytes()) << 32);
    let flip = const { secret(8) ^ secret(16) }.wrapping_sub(seed);
    let word = u64::from(last) | (u64::from(first) << 32);
    rrmxmx(word ^ flip, key.len() as u64)
}

#[inline(always)]
fn short_9_to_16(key: &[u8], seed: u64) -> u64 {
    let first = key.first_chunk::<8>().map_or(0, |b| u64::from_le_bytes(*b));
    let last = key.last_chunk::<8>().map_or(0, |b| u64::from_le_bytes(*b));
    let low = first ^ const { secret(24) ^ secret(32) }.wrapping_add(seed);
    let high = last ^ const { secret(40) ^ secret(48) }.wrapping_sub(seed);
    let acc = (key.len() as u64)
        .wrapping_add(low.swap_bytes())
        .wrapping_add(high)
        .wrapping_add(folded_product(low, high));
    avalanche(acc)
}

/// 17-128 bytes: step `k` takes the `k`-th 16 bytes from the front and
/// from the back against secret pairs `2k` and `2k + 1`; one step per 32
/// bytes (rounded up). The chunks may overlap in the middle.
#[inline(always)]
fn medium_17_to_128(key: &[u8], seed: u64) -> u64 {
    let len = key.len();
    let mut acc = (len as u64).wrapping_mul(PRIME64_1);
    if len > 32 {
        if len > 64 {
            if len > 96 {
                acc = acc.wrapping_add(both_ends(key, 3, seed));
            }
            acc = acc.wrapping_add(both_ends(key, 2, seed));
        }
        acc = acc.wrapping_add(both_ends(key, 1, seed));
    }
    acc = acc.wrapping_add(both_ends(key, 0, seed));
    avalanche(acc)
}

/// Step `k` of [`medium_17_to_128`].
#[inline(always)]
fn both_ends(key: &[u8], k: usize, seed: u64) -> u64 {
    let head = mix16(chunk16(key, 16 * k), PAIRS[2 * k], seed);
    let tail_at = key.len().wrapping_sub(16 * (k + 1));
    let tail = mix16(chunk16(key, tail_at), PAIRS[2 * k + 1], seed);
    head.wrapping_add(tail)
}

/// The 16 bytes of `key` from byte `at` (zeros past the end; callers read
/// in bounds).
#[inline(always)]
fn chunk16(key: &[u8], at: usize) -> &[u8; 16] {
    const ZERO: [u8; 16] = [0; 16];
    match key.split_at_checked(at) {
        Some((_, rest)) => rest.first_chunk::<16>().unwrap_or(&ZERO),
        None => &ZERO,
    }
}

/// 129-240 bytes: every whole 16-byte chunk, the first 8 against secret
/// pairs at byte `16 * i`, then an avalanche, the rest against pairs at byte
/// `16 * i + 3`, and the last 16 bytes against the pair at byte 119.
#[inline(never)]
fn medium_129_to_240(key: &[u8], seed: u64) -> u64 {
    let len = key.len();
    let (chunks, _) = key.as_chunks::<16>();
    let mut acc = (len as u64).wrapping_mul(PRIME64_1);
    for (chunk, pair) in chunks.iter().zip(PAIRS) {
        acc = acc.wrapping_add(mix16(chunk, pair, seed));
    }
    acc = avalanche(acc);
    for (chunk, pair) in chunks.iter().skip(8).zip(LATE_PAIRS) {
        acc = acc.wrapping_add(mix16(chunk, pair, seed));
    }
    if let Some(last) = key.last_chunk::<16>() {
        acc = acc.wrapping_add(mix16(last, LAST_PAIR, seed));
    }
    avalanche(acc)
}

/// The secret words the long path reads: window `n` keys stripe `n` of a
/// block (window 16: the scramble), the last stripe and the final merge
/// read the secret at unaligned offsets (bytes 121 and 11).
trait LongKeys {
    /// The 8 words at byte `8 * n` (`n` <= 16).
    fn window(&self, n: usize) -> [u64; 8];
    /// The 8 words at byte 121.
    fn last_stripe(&self) -> [u64; 8];
    /// The 8 words at byte 11.
    fn merge(&self) -> [u64; 8];
}

/// The secret of the long path as words: `words[n..n + 8]` keys stripe `n`
/// of a block and `words[16..24]` the scramble; the last stripe and the
/// final merge read it at unaligned offsets.
struct LongSecret {
    words: [u64; SECRET_BYTES / 8],
    last_stripe: [u64; 8],
    merge: [u64; 8],
}

const DEFAULT_LONG_SECRET: LongSecret = LongSecret::from_bytes(&SECRET);

impl LongSecret {
    const fn from_bytes(bytes: &[u8; SECRET_BYTES]) -> LongSecret {
        LongSecret {
            words: words_at(bytes, 0),
            // The last stripe reads the secret 7 bytes before its end.
            last_stripe: words_at(bytes, SECRET_BYTES - STRIPE - 7),
            merge: words_at(bytes, 11),
        }
    }

    /// The secret a nonzero seed derives: the seed added to the low and
    /// subtracted from the high word of every 16-byte pair.
    #[inline(never)]
    fn derive(seed: u64) -> LongSecret {
        let mut bytes = [0u8; SECRET_BYTES];
        let (out, _) = bytes.as_chunks_mut::<16>();
        for (out, pair) in out
            .iter_mut()
            .zip(DEFAULT_LONG_SECRET.words.chunks_exact(2))
        {
            if let [low, high] = pair {
                let (out_low, out_high) = out.split_at_mut(8);
                out_low.copy_from_slice(&low.wrapping_add(seed).to_le_bytes());
                out_high.copy_from_slice(&high.wrapping_sub(seed).to_le_bytes());
            }
        }
        LongSecret::from_bytes(&bytes)
    }

    /// The 8 words that key stripe `n` of a block (`n` = 16: the scramble).
    #[inline(always)]
    fn window_ref(&self, n: usize) -> &[u64; 8] {
        const ZERO: [u64; 8] = [0; 8];
        match self.words.split_at_checked(n) {
            Some((_, rest)) => rest.first_chunk::<8>().unwrap_or(&ZERO),
            None => &ZERO,
        }
    }
}

impl LongKeys for LongSecret {
    #[inline(always)]
    fn window(&self, n: usize) -> [u64; 8] {
        *self.window_ref(n)
    }

    #[inline(always)]
    fn last_stripe(&self) -> [u64; 8] {
        self.last_stripe
    }

    #[inline(always)]
    fn merge(&self) -> [u64; 8] {
        self.merge
    }
}

/// The secret a nonzero seed derives, one word at a time: word `i` (byte
/// `8 * i`) is the default secret's plus the seed for even `i` and minus
/// it for odd `i` ([`LongSecret::derive`] derives the same words at once).
struct SeededSecret(u64);

impl SeededSecret {
    /// Word `i` of the derived secret (`i` < 24; 0 past the end).
    #[inline(always)]
    fn word(&self, i: usize) -> u64 {
        let default = DEFAULT_LONG_SECRET.words.get(i).copied().unwrap_or(0);
        if i.is_multiple_of(2) {
            default.wrapping_add(self.0)
        } else {
            default.wrapping_sub(self.0)
        }
    }

    /// The 8 words of the derived secret at byte `8 * first + shift`
    /// (`shift` 1-7 bytes: each word joins two aligned ones).
    #[inline(always)]
    fn unaligned(&self, first: usize, shift: u32) -> [u64; 8] {
        core::array::from_fn(|j| {
            let low = self.word(first + j) >> (8 * shift);
            let high = self.word(first + j + 1) << (64 - 8 * shift);
            low | high
        })
    }
}

impl LongKeys for SeededSecret {
    #[inline(always)]
    fn window(&self, n: usize) -> [u64; 8] {
        core::array::from_fn(|j| self.word(n + j))
    }

    #[inline(always)]
    fn last_stripe(&self) -> [u64; 8] {
        // Byte 121 = word 15 and 1 byte.
        self.unaligned(15, 1)
    }

    #[inline(always)]
    fn merge(&self) -> [u64; 8] {
        // Byte 11 = word 1 and 3 bytes.
        self.unaligned(1, 3)
    }
}

/// One stripe into the 8 lanes: each lane adds the 32 x 32-bit product of
/// its keyed word's halves, and its neighbour's (lane `i ^ 1`) plain word.
#[inline(always)]
fn accumulate(acc: &mut [u64; 8], stripe: &[u8; STRIPE], key: &[u64; 8]) {
    let mut data = [0u64; 8];
    for (word, bytes) in data.iter_mut().zip(stripe.as_chunks::<8>().0) {
        *word = u64::from_le_bytes(*bytes);
    }
    let swapped = [
        data[1], data[0], data[3], data[2], data[5], data[4], data[7], data[6],
    ];
    for (((lane, &word), &other), &k) in acc.iter_mut().zip(&data).zip(&swapped).zip(key) {
        let keyed = word ^ k;
        let product = (keyed & 0xffff_ffff).wrapping_mul(keyed >> 32);
        *lane = lane.wrapping_add(product).wrapping_add(other);
    }
}

/// Every whole stripe of `bytes` (at most a block), stripe `n` keyed by
/// window `n` of the secret. Four stripes per step: a loop of one stripe
/// per step is vectorized across stripes (lane `i` of two stripes in one
/// register), which needs slow gathers; four calls in a row are vectorized
/// within the stripe, two lanes per register.
#[inline(always)]
fn accumulate_stripes<S: LongKeys>(acc: &mut [u64; 8], bytes: &[u8], secret: &S) {
    let (stripes, _) = bytes.as_chunks::<STRIPE>();
    let (quads, single) = stripes.as_chunks::<4>();
    for (q, [s0, s1, s2, s3]) in quads.iter().enumerate() {
        accumulate(acc, s0, &secret.window(4 * q));
        accumulate(acc, s1, &secret.window(4 * q + 1));
        accumulate(acc, s2, &secret.window(4 * q + 2));
        accumulate(acc, s3, &secret.window(4 * q + 3));
    }
    let first = 4 * quads.len();
    for (n, stripe) in single.iter().enumerate() {
        accumulate(acc, stripe, &secret.window(first + n));
    }
}

/// Spreads each lane's high bits down, keys it and multiplies.
#[inline(always)]
fn scramble(acc: &mut [u64; 8], key: &[u64; 8]) {
    for (lane, &k) in acc.iter_mut().zip(key) {
        *lane = (*lane ^ (*lane >> 47) ^ k).wrapping_mul(PRIME32_1);
    }
}

/// Inputs over 240 bytes: 8 lanes over 64-byte stripes, a scramble after
/// every block of 16 stripes, then the last 64 bytes (which may overlap
/// the stripes before), and a merge of the lanes.
#[inline(never)]
fn long<S: LongKeys>(key: &[u8], secret: &S) -> u64 {
    let mut acc = [
        PRIME32_3, PRIME64_1, PRIME64_2, PRIME64_3, PRIME64_4, PRIME32_2, PRIME64_5, PRIME32_1,
    ];
    // Whole blocks and stripes of all but the last byte: the last stripe
    // is always taken from the end, even when the length is a multiple of
    // the stripe.
    let body = key.split_last().map_or(&[][..], |(_, body)| body);
    let (blocks, rest) = body.as_chunks::<BLOCK>();
    for block in blocks {
        accumulate_stripes(&mut acc, block, secret);
        scramble(&mut acc, &secret.window(STRIPES_PER_BLOCK));
    }
    accumulate_stripes(&mut acc, rest, secret);
    if let Some(last) = key.last_chunk::<STRIPE>() {
        accumulate(&mut acc, last, &secret.last_stripe());
    }
    let mut result = (key.len() as u64).wrapping_mul(PRIME64_1);
    let merge = secret.merge();
    for (lanes, merge) in acc.chunks_exact(2).zip(merge.chunks_exact(2)) {
        if let ([a, b], [ka, kb]) = (lanes, merge) {
            result = result.wrapping_add(folded_product(a ^ ka, b ^ kb));
        }
    }
    avalanche(result)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secret_words_read_little_endian() {
        assert_eq!(secret(0), 0xbe4b_a423_396c_feb8);
        assert_eq!(secret32(4), 0xbe4b_a423);
        assert_eq!(DEFAULT_LONG_SECRET.words[1], 0x1cad_21f7_2c81_017c);
        assert_eq!(DEFAULT_LONG_SECRET.window(16)[0], secret(128));
        assert_eq!(DEFAULT_LONG_SECRET.last_stripe[0], secret(121));
        assert_eq!(DEFAULT_LONG_SECRET.merge[7], secret(67));
        assert_eq!(LATE_PAIRS[6], [secret(99), secret(107)]);
    }

    /// The words [`SeededSecret`] derives one at a time (the 32-bit
    /// path) are those [`LongSecret::derive`] derives at once (the 64-bit
    /// path), and the long hash is the same with either, on every target.
    #[test]
    fn seeded_words_are_the_derived_secret() {
        for seed in [1, 0x8000_0000_0000_0000, u64::MAX, 0x0123_4567_89ab_cdef] {
            let whole = LongSecret::derive(seed);
            let one_by_one = SeededSecret(seed);
            for n in 0..=STRIPES_PER_BLOCK {
                assert_eq!(
                    one_by_one.window(n),
                    whole.window(n),
                    "seed {seed:#x} window {n}"
                );
            }
            assert_eq!(
                one_by_one.last_stripe(),
                whole.last_stripe,
                "seed {seed:#x}"
            );
            assert_eq!(one_by_one.merge(), whole.merge, "seed {seed:#x}");
            let key: [u8; 2 * BLOCK + 77] = core::array::from_fn(|i| (i * 131 + 7) as u8);
            for len in [241, 1024, BLOCK + 1, 2 * BLOCK + 77] {
                let key = &key[..len];
                assert_eq!(
                    long(key, &one_by_one),
                    long(key, &whole),
                    "seed {seed:#x} len {len}"
                );
            }
        }
    }

    #[test]
    fn seed_zero_derives_the_default_secret() {
        let derived = LongSecret::derive(0);
        assert_eq!(derived.words, DEFAULT_LONG_SECRET.words);
        assert_eq!(derived.last_stripe, DEFAULT_LONG_SECRET.last_stripe);
        assert_eq!(derived.merge, DEFAULT_LONG_SECRET.merge);
    }
}
