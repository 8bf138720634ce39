//! RocksDB's 64-bit key hash for filters (`GetSliceHash64`): the XXH3
//! *preview* (xxHash 0.7.2, "XXPH3") with seed 0 and RocksDB's own value for
//! the empty input. It differs from released XXH3 (0.8) for every length:
//! another avalanche multiplier, other short-input paths, and another
//! accumulator lane and tail handling for long inputs.

// XXH3's fold (low half xor high half of the 128-bit product) is the
// same formula as this crate's own hashing.
use crate::arith::folded_product;

// The xxHash primes, the default secret and its little-endian word reads
// are XXH3's (src/key_hash.rs).
use crate::key_hash::{
    PRIME32_1 as P32_1, PRIME32_2 as P32_2, PRIME32_3 as P32_3, PRIME64_1 as P64_1,
    PRIME64_2 as P64_2, PRIME64_3 as P64_3, PRIME64_4 as P64_4, PRIME64_5 as P64_5, SECRET,
    secret as secret64, word_at as read64,
};

/// Little-endian u32 at byte `at` (0 past the end; callers stay in bounds).
#[inline(always)]
fn read32(bytes: &[u8], at: usize) -> u64 {
    bytes
        .get(at..)
        .and_then(|b| b.first_chunk::<4>())
        .map_or(0, |b| u64::from(u32::from_le_bytes(*b)))
}

#[inline(always)]
fn avalanche(mut h: u64) -> u64 {
    h ^= h >> 37;
    h = h.wrapping_mul(P64_3);
    h ^ (h >> 32)
}

#[inline(always)]
fn mix16(input: &[u8], at: usize, secret_at: usize) -> u64 {
    folded_product(
        read64(input, at) ^ secret64(secret_at),
        read64(input, at + 8) ^ secret64(secret_at + 8),
    )
}

/// RocksDB's `GetSliceHash64(key)`: the 64-bit hash its filters are built
/// from and queried with (XXH3 preview 0.7.2, seed 0).
pub fn key_hash(key: &[u8]) -> u64 {
    let len = key.len();
    let l = len as u64;
    match len {
        0 => folded_product(secret64(0), P64_2),
        1..=3 => {
            let c1 = u64::from(key.first().copied().unwrap_or(0));
            let c2 = u64::from(key.get(len >> 1).copied().unwrap_or(0));
            let c3 = u64::from(key.last().copied().unwrap_or(0));
            let combined = c1 | (c2 << 8) | (c3 << 16) | (l << 24);
            avalanche((combined ^ read32(&SECRET, 0)).wrapping_mul(P64_1))
        }
        4..=8 => {
            let x = read32(key, 0) | (read32(key, len - 4) << 32);
            let keyed = x ^ secret64(0);
            let m = l.wrapping_add((keyed ^ (keyed >> 51)).wrapping_mul(P32_1));
            avalanche((m ^ (m >> 47)).wrapping_mul(P64_2))
        }
        9..=16 => {
            let lo = read64(key, 0) ^ secret64(0);
            let hi = read64(key, len - 8) ^ secret64(8);
            avalanche(
                l.wrapping_add(lo)
                    .wrapping_add(hi)
                    .wrapping_add(folded_product(lo, hi)),
            )
        }
        17..=128 => {
            let mut acc = l.wrapping_mul(P64_1);
            let mut add = |at: usize, secret_at: usize| {
                acc = acc.wrapping_add(mix16(key, at, secret_at));
            };
            if len > 32 {
                if len > 64 {
                    if len > 96 {
                        add(48, 96);
                        add(len - 64, 112);
                    }
                    add(32, 64);
                    add(len - 48, 80);
                }
                add(16, 32);
                add(len - 32, 48);
            }
            add(0, 0);
            add(len - 16, 16);
            avalanche(acc)
        }
        129..=240 => {
            let mut acc = l.wrapping_mul(P64_1);
            for i in 0..8 {
                acc = acc.wrapping_add(mix16(key, 16 * i, 16 * i));
            }
            acc = avalanche(acc);
            for i in 8..len / 16 {
                acc = acc.wrapping_add(mix16(key, 16 * i, 16 * (i - 8) + 3));
            }
            acc = acc.wrapping_add(mix16(key, len - 16, 136 - 17));
            avalanche(acc)
        }
        _ => long(key),
    }
}

/// Inputs over 240 bytes: eight 64-bit lanes over 64-byte stripes.
fn long(key: &[u8]) -> u64 {
    const STRIPE: usize = 64;
    const STRIPES_PER_BLOCK: usize = (192 - STRIPE) / 8;
    const BLOCK: usize = STRIPE * STRIPES_PER_BLOCK;
    let len = key.len();
    let mut acc = [P32_3, P64_1, P64_2, P64_3, P64_4, P32_2, P64_5, P32_1];
    let stripe = |acc: &mut [u64; 8], at: usize, secret_at: usize| {
        for (i, lane) in acc.iter_mut().enumerate() {
            let data = read64(key, at + 8 * i);
            let keyed = data ^ secret64(secret_at + 8 * i);
            *lane = lane
                .wrapping_add(data)
                .wrapping_add((keyed & 0xffff_ffff).wrapping_mul(keyed >> 32));
        }
    };
    let scramble = |acc: &mut [u64; 8]| {
        for (i, lane) in acc.iter_mut().enumerate() {
            let a = (*lane ^ (*lane >> 47)) ^ secret64(192 - STRIPE + 8 * i);
            *lane = a.wrapping_mul(P32_1);
        }
    };
    let blocks = len / BLOCK;
    for b in 0..blocks {
        for s in 0..STRIPES_PER_BLOCK {
            stripe(&mut acc, b * BLOCK + s * STRIPE, 8 * s);
        }
        scramble(&mut acc);
    }
    let stripes = (len - blocks * BLOCK) / STRIPE;
    for s in 0..stripes {
        stripe(&mut acc, blocks * BLOCK + s * STRIPE, 8 * s);
    }
    if !len.is_multiple_of(STRIPE) {
        stripe(&mut acc, len - STRIPE, 192 - STRIPE - 7);
    }
    let mut result = (len as u64).wrapping_mul(P64_1);
    for i in 0..4 {
        result = result.wrapping_add(folded_product(
            acc[2 * i] ^ secret64(11 + 16 * i),
            acc[2 * i + 1] ^ secret64(19 + 16 * i),
        ));
    }
    avalanche(result)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secret_reads() {
        assert_eq!(secret64(0), 0xbe4b_a423_396c_feb8);
        assert_eq!(secret64(8), 0x1cad_21f7_2c81_017c);
        assert_eq!(read32(&SECRET, 0), 0x396c_feb8);
    }
}
