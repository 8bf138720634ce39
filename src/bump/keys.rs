//! A key as Bumped layers band it ([`LayerKey`]: a filter's hash or a
//! retrieval key's hash and value), and the digest of a layer's keys
//! that its retries draw their seeds from.

use crate::arith::folded_product;

/// A key as the layers band it: its hash (remixed from layer to layer)
/// and the right side of its equation. A filter's key is its hash alone
/// (`u64`), whose result bits are the right side; a retrieval key carries
/// its value beside the hash (`[hash, value]`).
pub(crate) trait LayerKey: Copy + bytemuck::Pod {
    /// The key's hash (as the layer it is in received it).
    fn hash(self) -> u64;
    /// The same key with hash `x` (its remix with a layer's seed).
    fn with_hash(self, x: u64) -> Self;
    /// The right side of the key's equation, given the result bits its
    /// hash expands to.
    fn right_side(self, hash_bits: u64) -> u64;
    /// Whether `self` and `other` are the same hash with different right
    /// sides (never for filters: their right side is the hash's).
    fn contradicts(self, other: Self) -> bool;
    /// `acc` with the key mixed in: a step of [`key_set_digest`] (the
    /// hash, and a retrieval key's value too).
    fn mix_into(self, acc: u64) -> u64;
}

impl LayerKey for u64 {
    #[inline(always)]
    fn hash(self) -> u64 {
        self
    }
    #[inline(always)]
    fn with_hash(self, x: u64) -> u64 {
        x
    }
    #[inline(always)]
    fn right_side(self, hash_bits: u64) -> u64 {
        hash_bits
    }
    fn contradicts(self, _: u64) -> bool {
        false
    }
    #[inline(always)]
    fn mix_into(self, acc: u64) -> u64 {
        folded_product(acc ^ self, DIGEST_MIX)
    }
}

impl LayerKey for [u64; 2] {
    #[inline(always)]
    fn hash(self) -> u64 {
        self[0]
    }
    #[inline(always)]
    fn with_hash(self, x: u64) -> [u64; 2] {
        [x, self[1]]
    }
    #[inline(always)]
    fn right_side(self, _: u64) -> u64 {
        self[1]
    }
    fn contradicts(self, other: [u64; 2]) -> bool {
        self[0] == other[0] && self[1] != other[1]
    }
    #[inline(always)]
    fn mix_into(self, acc: u64) -> u64 {
        folded_product(
            folded_product(acc ^ self[0], DIGEST_MIX) ^ self[1],
            DIGEST_MIX,
        )
    }
}

/// The multiplier of [`key_set_digest`]'s steps (odd, from the digits of
/// e, as the hashing constants of `src/hash.rs` are arbitrary odd ones).
const DIGEST_MIX: u64 = 0xb7e1_5162_8aed_2a6b;

/// A digest of a layer's keys (every key, in their order), from which the
/// layer's retries draw their seeds ([`retry_seed`]): a layer's first
/// seed is the plan's sequence, public, so hashes can be crafted to
/// crowd its buckets (four per bucket, linearly dependent at one start,
/// make the bucket bump all its keys); its later seeds depend on the keys
/// themselves, crafted ones included. Two passes, the second seeded with
/// the first's result, so that a key changed anywhere changes the whole
/// second pass: aiming keys at the seed they will get means searching
/// the 2^32 seeds with two passes over all the keys per candidate.
/// `salt` separates plans' seeds and layers.
// Out of line: it runs once per retried layer, and inlined its frame
// stayed under the banding's on 32-bit Arm.
#[inline(never)]
pub(crate) fn key_set_digest<K: LayerKey>(keys: impl Iterator<Item = K> + Clone, salt: u64) -> u64 {
    let first = keys.clone().fold(salt, |acc, k| k.mix_into(acc));
    keys.fold(first ^ salt.rotate_left(32), |acc, k| k.mix_into(acc))
}

/// The seed of retry `attempt` (1 on) of a layer whose keys have
/// [`key_set_digest`] `digest`.
pub(crate) fn retry_seed(digest: u64, attempt: u64) -> u32 {
    folded_product(digest ^ attempt, DIGEST_MIX) as u32
}
