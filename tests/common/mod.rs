//! Helpers shared by the integration tests.
#![allow(dead_code)]

pub mod cases;
pub mod dense;
pub mod exact_fp;
pub mod kit;

#[allow(unused_imports)]
pub use kit::{runnable, splitmix64};

use ribbon_kernel::{Kind, Width};

pub const KINDS: [Kind; 4] = [
    Kind::Homogeneous,
    Kind::Standard,
    Kind::StandardSmash,
    Kind::Bumped,
];
pub const WIDTHS: [Width; 2] = [Width::W64, Width::W128];

/// SplitMix64: a fixed, portable stream of well-mixed 64-bit hashes.
pub struct Hashes(u64);

impl Hashes {
    pub fn new(seed: u64) -> Hashes {
        Hashes(seed.wrapping_mul(0x2545_f491_4f6c_dd1d))
    }
}

impl Iterator for Hashes {
    type Item = u64;
    fn next(&mut self) -> Option<u64> {
        Some(splitmix64(&mut self.0))
    }
}

pub fn hashes(seed: u64, n: usize) -> Vec<u64> {
    Hashes::new(seed).take(n).collect()
}

/// FNV-1a, 64-bit: a portable digest for pinning filter bytes.
pub fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// Scale for statistical tests: Miri runs them on far fewer keys.
pub fn scaled(n: usize) -> usize {
    if cfg!(miri) { (n / 1000).max(64) } else { n }
}
