//! RocksDB's 64-bit key hash for filters (`GetSliceHash64`): the XXH3
//! *preview* (xxHash 0.7.2, "XXPH3") with seed 0 and RocksDB's own value for
//! the empty input. It differs from released XXH3 (0.8) for every length:
//! another avalanche multiplier, other short-input paths, and another
//! accumulator lane and tail handling for long inputs.

// XXH3's fold (low half xor high half of the 128-bit product) is the
// same formula as this crate's own hashing.
use crate::hash::folded_product;

const P32_1: u64 = 0x9e37_79b1;
const P32_2: u64 = 0x85eb_ca77;
const P32_3: u64 = 0xc2b2_ae3d;
const P64_1: u64 = 0x9e37_79b1_85eb_ca87;
const P64_2: u64 = 0xc2b2_ae3d_27d4_eb4f;
const P64_3: u64 = 0x1656_67b1_9e37_79f9;
const P64_4: u64 = 0x85eb_ca77_c2b2_ae63;
const P64_5: u64 = 0x27d4_eb2f_1656_67c5;

/// The default secret (192 bytes).
const SECRET: [u8; 192] = [
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

/// Little-endian u64 at byte `at` (0 past the end; callers stay in bounds).
#[inline(always)]
fn read64(bytes: &[u8], at: usize) -> u64 {
    bytes
        .get(at..)
        .and_then(|b| b.first_chunk::<8>())
        .map_or(0, |b| u64::from_le_bytes(*b))
}

/// Little-endian u32 at byte `at` (0 past the end; callers stay in bounds).
#[inline(always)]
fn read32(bytes: &[u8], at: usize) -> u64 {
    bytes
        .get(at..)
        .and_then(|b| b.first_chunk::<4>())
        .map_or(0, |b| u64::from(u32::from_le_bytes(*b)))
}

#[inline(always)]
fn secret64(at: usize) -> u64 {
    read64(&SECRET, at)
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
