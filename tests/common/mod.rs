//! Helpers shared by the integration tests.
#![allow(dead_code)]

pub mod cases;
pub mod crafted;
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

/// Runs `check` on every item, the items split between two threads where
/// the target has them (wasm32-wasip1 has none: there this thread runs
/// them all). For long tests of independent cases: the same checks, in
/// about half the time on two cores. A panic in either thread fails the
/// test with that panic.
pub fn on_two_threads<T: Sync>(items: &[T], check: impl Fn(&T) + Sync) {
    let half = |worker: usize| items.iter().skip(worker).step_by(2).for_each(&check);
    std::thread::scope(|s| {
        let workers: Vec<_> = (0..2)
            .map(|worker| std::thread::Builder::new().spawn_scoped(s, move || half(worker)))
            .collect();
        for (worker, spawned) in workers.into_iter().enumerate() {
            match spawned {
                Ok(handle) => {
                    if let Err(panic) = handle.join() {
                        std::panic::resume_unwind(panic);
                    }
                }
                Err(_) => half(worker),
            }
        }
    });
}

/// FNV-1a, 64-bit: a portable digest for pinning filter bytes.
pub fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// The checksum of a serialized structure as the format documents it
/// (`src/layout.rs`): XXH3-64 of every byte from 48 on, seeded with XXH3-64
/// of the first 40, computed here with `xxhash-rust`, not the crate's own.
pub fn checksum(bytes: &[u8]) -> u64 {
    use xxhash_rust::xxh3::{xxh3_64, xxh3_64_with_seed};
    xxh3_64_with_seed(&bytes[48..], xxh3_64(&bytes[..40]))
}

/// Writes [`checksum`] into bytes 40..48: what a build does, for bytes a
/// test made or changed on purpose.
pub fn seal(bytes: &mut [u8]) {
    let sum = checksum(bytes);
    bytes[40..48].copy_from_slice(&sum.to_le_bytes());
}

/// A version-1 structure (a 40-byte header, no checksum) as version 2
/// writes it: the checksum inserted after byte 40, sealed.
pub fn upgrade_v1(bytes: &[u8]) -> Vec<u8> {
    assert_eq!(bytes[4], 1, "not version 1");
    let mut out = bytes[..40].to_vec();
    out[4] = 2;
    out.extend_from_slice(&[0; 8]);
    out.extend_from_slice(&bytes[40..]);
    seal(&mut out);
    out
}

/// `bytes` as format version 1 wrote them: the header's first 40 bytes
/// with version 1, then the rest after the checksum (for digests pinned
/// before checksums).
pub fn as_version_1(bytes: &[u8]) -> Vec<u8> {
    let mut v1 = bytes[..40].to_vec();
    v1[4] = 1;
    v1.extend_from_slice(&bytes[48..]);
    v1
}

/// Scale for statistical tests: Miri runs them on far fewer keys.
pub fn scaled(n: usize) -> usize {
    if cfg!(miri) { (n / 1000).max(64) } else { n }
}
