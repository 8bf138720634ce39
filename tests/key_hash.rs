//! `hash_key` is XXH3-64 (xxHash 0.8): pinned values that hold on every
//! platform and byte order, and a comparison with the `xxhash-rust` crate
//! over every length class.

mod common;

use common::splitmix64;
use ribbon_kernel::{Error, hash_key, hash_key_with_seed, hash_keys};

/// An input of the pinned table.
#[derive(Clone, Copy, Debug)]
enum Input {
    /// These bytes.
    Bytes(&'static [u8]),
    /// `n` bytes of [`pattern`].
    Pattern(usize),
}

/// Byte `i` is `i * 7 + 3` (mod 256).
fn pattern(n: usize) -> Vec<u8> {
    (0..n).map(|i| (i * 7 + 3) as u8).collect()
}

/// `n` pseudo-random bytes from the SplitMix64 stream at `state`.
fn random_bytes(n: usize, state: u64) -> Vec<u8> {
    let mut state = state;
    let mut bytes = Vec::with_capacity(n + 8);
    while bytes.len() < n {
        bytes.extend_from_slice(&splitmix64(&mut state).to_le_bytes());
    }
    bytes.truncate(n);
    bytes
}

const SEED: u64 = 0x0123_4567_89ab_cdef;

/// XXH3-64 values, generated once with `xxhash_rust::xxh3::xxh3_64_with_seed`
/// 0.8.19 and found identical to Python's `xxhash.xxh3_64_intdigest`
/// (python-xxhash 4.1.0 on libxxhash 0.8.4). Every length class and both
/// sides of every class boundary: 0, 1-3, 4-8, 9-16, 17-128 (its four
/// steps), 129-240, and the long path (one stripe past, a whole block, a
/// block and a byte, several blocks). These values must never change:
/// filters built from `hash_key` depend on them.
const PINNED: [(Input, u64, u64); 54] = [
    (Input::Bytes(b""), 0, 0x2d06800538d394c2),
    (Input::Bytes(b"a"), 0, 0xe6c632b61e964e1f),
    (Input::Bytes(b"abc"), 0, 0x78af5f94892f3950),
    (Input::Pattern(1), 0, 0x13e608bc156defed),
    (Input::Pattern(2), 0, 0x1c9074b93943b86c),
    (Input::Pattern(3), 0, 0xa9088dda485b481c),
    (Input::Pattern(4), 0, 0x6d9253b16c8b1ed3),
    (Input::Pattern(7), 0, 0x8e8291ad89127e2e),
    (Input::Pattern(8), 0, 0x60539db630471163),
    (Input::Pattern(9), 0, 0xfeff668361d723a8),
    (Input::Pattern(16), 0, 0xb8c859b0f030b585),
    (Input::Pattern(17), 0, 0x714a04408e79b80f),
    (Input::Pattern(32), 0, 0x19ff4ee1d6ba1a55),
    (Input::Pattern(33), 0, 0x3e44983ad21679c8),
    (Input::Pattern(64), 0, 0x287eb1fa9e4be2c1),
    (Input::Pattern(65), 0, 0x829218de4d798646),
    (Input::Pattern(96), 0, 0xf084e7cfbc624743),
    (Input::Pattern(97), 0, 0x1daa83271a8e7b7c),
    (Input::Pattern(128), 0, 0x67425a03650261bf),
    (Input::Pattern(129), 0, 0xc664bf3311c6abc4),
    (Input::Pattern(240), 0, 0x64556dc6b462a6cf),
    (Input::Pattern(241), 0, 0x8beadd3a8874fe17),
    (Input::Pattern(256), 0, 0x3c38817f6d79c0da),
    (Input::Pattern(1024), 0, 0x9b81661c641c72b1),
    (Input::Pattern(1025), 0, 0x806c2072ed713576),
    (Input::Pattern(2048), 0, 0xabe604813ba62ed1),
    (Input::Pattern(4097), 0, 0xa51ead018cadb378),
    (Input::Bytes(b""), SEED, 0xcc1ca35a1b089c5c),
    (Input::Bytes(b"a"), SEED, 0xfcf369f9e7541d1b),
    (Input::Bytes(b"abc"), SEED, 0x4a2ec311f0e180a4),
    (Input::Pattern(1), SEED, 0x741a549ec5c1ddf0),
    (Input::Pattern(2), SEED, 0xf347a1b890edfffb),
    (Input::Pattern(3), SEED, 0xd1c495b136b5cbb0),
    (Input::Pattern(4), SEED, 0x3c6a3c9adc39a804),
    (Input::Pattern(7), SEED, 0xe6012e8bb57433a7),
    (Input::Pattern(8), SEED, 0x5c5363c8008e62da),
    (Input::Pattern(9), SEED, 0x3f99cfca83720a42),
    (Input::Pattern(16), SEED, 0x5fd51fc102af6f6b),
    (Input::Pattern(17), SEED, 0x30950a9d13f8427b),
    (Input::Pattern(32), SEED, 0xacab753cce17f264),
    (Input::Pattern(33), SEED, 0x7207fc197a2615dc),
    (Input::Pattern(64), SEED, 0x70c0a642d266917a),
    (Input::Pattern(65), SEED, 0xd663eadc724a925b),
    (Input::Pattern(96), SEED, 0xd933a019c27cf14a),
    (Input::Pattern(97), SEED, 0x4a225cb3568dc921),
    (Input::Pattern(128), SEED, 0xfa029fbeb6516b5f),
    (Input::Pattern(129), SEED, 0x5a0c0ca85e1e65d7),
    (Input::Pattern(240), SEED, 0xaec1cacdf9edcfd2),
    (Input::Pattern(241), SEED, 0x7c89685cf1ecb411),
    (Input::Pattern(256), SEED, 0xb2b2bbddb0b49c10),
    (Input::Pattern(1024), SEED, 0x9f2432931eaa1c2c),
    (Input::Pattern(1025), SEED, 0xf7ffae37496acc48),
    (Input::Pattern(2048), SEED, 0xcb14ab11350bcc3e),
    (Input::Pattern(4097), SEED, 0x30feb7b43903a895),
];

#[test]
fn pinned_vectors() {
    let mut wrong = Vec::new();
    for (input, seed, expected) in PINNED {
        let bytes = match input {
            Input::Bytes(b) => b.to_vec(),
            Input::Pattern(n) => pattern(n),
        };
        let got = hash_key_with_seed(&bytes, seed);
        if got != expected {
            wrong.push(format!(
                "{input:?} seed {seed:#x}: {got:#018x}, pinned {expected:#018x}"
            ));
        }
        if seed == 0 {
            assert_eq!(hash_key(&bytes), got, "{input:?}");
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn pinned_vectors_at_every_alignment() {
    // The same bytes at other offsets into a buffer: reads of any
    // alignment (one under Miri, which interprets every step).
    let offsets: &[usize] = if cfg!(miri) {
        &[3]
    } else {
        &[1, 2, 3, 4, 5, 6, 7]
    };
    for (input, seed, expected) in PINNED {
        let bytes = match input {
            Input::Bytes(b) => b.to_vec(),
            Input::Pattern(n) => pattern(n),
        };
        for &offset in offsets {
            let mut buffer = vec![0xa5u8; offset];
            buffer.extend_from_slice(&bytes);
            assert_eq!(
                hash_key_with_seed(&buffer[offset..], seed),
                expected,
                "{input:?} at offset {offset}"
            );
        }
    }
}

/// Every length to 2,048 and a few long ones, with seeds 0, 1, `u64::MAX`
/// and a random one, over random bytes, against `xxhash-rust`. On
/// big-endian targets the pinned vectors above are the check (run this one
/// there with `--include-ignored`).
#[test]
#[cfg_attr(
    target_endian = "big",
    ignore = "the pinned vectors check big-endian targets"
)]
fn matches_xxhash_rust() {
    use xxhash_rust::xxh3::{xxh3_64, xxh3_64_with_seed};

    let mut state = 0x6b65_795f_6861_7368_u64;
    let random_seed = splitmix64(&mut state);
    let seeds = [0, 1, u64::MAX, random_seed];
    let lengths: Vec<usize> = if cfg!(miri) {
        // Both sides of every class boundary, and two blocks of the long
        // path: Miri interprets every step.
        vec![
            0, 1, 3, 4, 8, 9, 16, 17, 32, 33, 64, 65, 96, 97, 128, 129, 240, 241, 1024, 1025, 2049,
        ]
    } else {
        (0..=2048).chain([4096, 10_000, 100_003]).collect()
    };
    let longest = lengths.iter().copied().max().unwrap_or(0);
    let bytes = random_bytes(longest, splitmix64(&mut state));
    let mut wrong = Vec::new();
    for &len in &lengths {
        // A moving start: every length also reads at several alignments.
        let start = len % 8;
        let key = &bytes[start.min(longest - len)..][..len];
        if hash_key(key) != xxh3_64(key) {
            wrong.push(format!("length {len}, seed 0 (hash_key)"));
        }
        for seed in seeds {
            if hash_key_with_seed(key, seed) != xxh3_64_with_seed(key, seed) {
                wrong.push(format!("length {len}, seed {seed:#x}"));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "differs from xxhash-rust:\n{}",
        wrong.join("\n")
    );
}

#[test]
fn hash_keys_hashes_each_key() {
    let count = if cfg!(miri) { 40 } else { 300 };
    let owned: Vec<Vec<u8>> = (0..count).map(pattern).collect();
    let mut out = vec![0u64; owned.len()];
    hash_keys(&owned, &mut out).unwrap();
    for (key, hash) in owned.iter().zip(&out) {
        assert_eq!(*hash, hash_key(key), "length {}", key.len());
    }

    let words = ["", "a", "abc", "a key of more than sixteen bytes"];
    let mut out = [0u64; 4];
    hash_keys(&words, &mut out).unwrap();
    for (word, hash) in words.iter().zip(out) {
        assert_eq!(hash, hash_key(word.as_bytes()), "{word:?}");
    }

    let none: [&[u8]; 0] = [];
    hash_keys(&none, &mut []).unwrap();
}

#[test]
fn hash_keys_refuses_other_lengths_and_writes_nothing() {
    let keys = [b"one".as_slice(), b"two", b"three"];
    for len in [0, 2, 4] {
        let mut out = vec![7u64; len];
        let result = hash_keys(&keys, &mut out);
        assert_eq!(
            result,
            Err(Error::LengthMismatch {
                expected: 3,
                given: len
            }),
            "{len}"
        );
        assert!(out.iter().all(|&h| h == 7), "{len}: wrote {out:?}");
    }
}
