//! Unit tests of `fp` (`src/fp.rs`), in a file of their own: see
//! "Tests" in ARCHITECTURE.md.

use super::*;
use crate::layout::Kind;

/// Xorshift bytes: a payload of independent random columns.
fn fill_random(payload: &mut [u8], mut x: u64) {
    for b in payload.iter_mut() {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        *b = x as u8;
    }
}

/// Zero windows counted one start at a time.
fn zero_offsets_naive(lo: u64, hi: u64, offsets: u32) -> u32 {
    let both = u128::from(lo) | (u128::from(hi) << 64);
    (0..offsets).filter(|&o| (both >> o) as u64 == 0).count() as u32
}

#[test]
fn zero_offsets_match_a_window_by_window_count() {
    let words = [
        0u64,
        1,
        1 << 63,
        u64::MAX,
        0xff00,
        0x00ff_0000_0000_0000,
        0x8000_0000_0000_0001,
    ];
    for &lo in &words {
        for &hi in &words {
            for offsets in [0, 1, 2, 17, 64] {
                assert_eq!(
                    zero_offsets(lo, hi, offsets),
                    zero_offsets_naive(lo, hi, offsets),
                    "{lo:#x} {hi:#x} {offsets}"
                );
            }
        }
    }
}

#[test]
fn an_all_zero_solution_is_all_excess() {
    // Every window of every column is zero: each start matches every
    // query (rate 1), 2^c times the column rate. The zero windows
    // count `2^-d_s = 1` per start as excess (the rank view, which
    // subtracts the columns' own rate, gives a little less).
    for (width, lower) in [(Width::W64, 3), (Width::W128, 7)] {
        let g = Geometry::new(Kind::Homogeneous, width, 10, lower, 4).unwrap();
        let payload = [0u8; 4096];
        let ppm = homogeneous_excess_ppm(&g, &payload[..g.payload_bytes()]);
        let (l, u) = start_weights(&g);
        let planned = 2 * l + u;
        let expect = (l + u) * (1 << (lower + 1)) * PPM / planned;
        assert_eq!(u128::from(ppm), expect, "{width:?}");
    }
}

#[test]
fn rank_by_elimination() {
    assert_eq!(rank::<u64>(&mut []), 0);
    assert_eq!(rank::<u64>(&mut [0, 0]), 0);
    assert_eq!(rank::<u64>(&mut [0b011, 0b110, 0b101]), 2);
    assert_eq!(rank::<u64>(&mut [0b011, 0b110, 0b100]), 3);
    assert_eq!(rank::<u128>(&mut [1 << 100, 1 << 100 | 1, 1]), 2);
    let mut identity: [u64; 64] = core::array::from_fn(|i| 1 << i);
    assert_eq!(rank(&mut identity), 64);
    // Dependent words: a word repeated, or the xor of two others.
    let mut words = [0x0f0f_u64, 0x3c3c, 0x0f0f ^ 0x3c3c, 0x8000, 0x0f0f];
    assert_eq!(rank(&mut words), 3);
}

/// The transposed elimination agrees with the direct one on random,
/// dependent and sparse words, for every column count.
fn transposed_rank_agrees<W: Word>(make: impl Fn(u64) -> W) {
    let mut state = 2;
    let mut next = || crate::test_kit::splitmix64(&mut state);
    // Miri interprets every bit operation: a few rounds of each shape.
    let rounds = if cfg!(miri) { 4 } else { 400 };
    for round in 0..rounds {
        let columns = (round * 37) % 65;
        let mut words = [W::ZERO; 64];
        for (j, word) in words.iter_mut().enumerate().take(columns) {
            *word = match round % 4 {
                0 => make(next()),
                // Sparse: a few bits, often dependent.
                1 => make(next() & next() & next() & next()),
                // Low rank: words from a few random ones.
                2 => make(next() % 5 + 1),
                // Repeats and zeros.
                _ => make(if j % 3 == 0 { 0 } else { next() % 3 }),
            };
        }
        let mut copy = words;
        let expect = rank(&mut copy[..columns]);
        let window = |j: usize| words[j];
        assert_eq!(rank_of_copies(columns, window), expect, "round {round}");
        assert_eq!(rank_transposed(columns, window), expect, "round {round}");
        assert_eq!(
            rank_transposed_wide(columns, window),
            expect,
            "round {round}"
        );
    }
}

#[test]
#[cfg_attr(miri, ignore = "safe code: a minute under Miri")]
fn transposed_rank_agrees_with_elimination() {
    transposed_rank_agrees::<u64>(|x| x);
    transposed_rank_agrees::<u64>(|x| x << 40);
    transposed_rank_agrees::<u128>(|x| u128::from(x) << 64 | u128::from(x.rotate_left(7)));
    transposed_rank_agrees::<u128>(|x| u128::from(x) << 70);
}

#[test]
fn one_deficient_block_is_measured() {
    // 40 blocks of 4 random columns; make block 10's words span only
    // two dimensions: its first start matches 1 in 4 queries instead
    // of 1 in 16. The block is then measured every 8 starts, and the
    // later starts' windows reach into block 11's random bits (rank
    // 4), so the first start stands for 8 starts.
    let g = Geometry::new(Kind::Homogeneous, Width::W64, 40, 4, 40).unwrap();
    let mut payload = [0u8; 40 * 4 * 8];
    fill_random(&mut payload, 0x9e37_79b9_7f4a_7c15);
    let random = homogeneous_excess_ppm(&g, &payload);
    let word = |p: &[u8], i: usize| u64::from_le_bytes(p[i * 8..i * 8 + 8].try_into().unwrap());
    let (a, b) = (word(&payload, 40), word(&payload, 41));
    for (j, v) in [a ^ b, a, b].into_iter().enumerate() {
        payload[(42 + j) * 8..(43 + j) * 8].copy_from_slice(&v.to_le_bytes());
    }
    let deficient = homogeneous_excess_ppm(&g, &payload);
    // 8 starts at 1/4 instead of 1/16, over 40 * 64 - 63 starts at 1/16.
    let expect = 8 * (4 - 1) * 1_000_000 / (40 * 64 - 63);
    assert!(random < 1_000, "{random}");
    assert!(
        deficient.abs_diff(expect) < 1_000,
        "{deficient} vs {expect}"
    );
}

#[test]
fn distinct_random_columns_have_no_excess() {
    let g = Geometry::new(Kind::Homogeneous, Width::W64, 50, 8, 50).unwrap();
    let mut payload = [0u8; 50 * 8 * 8];
    fill_random(&mut payload, 0x1234_5678_9abc_def1);
    assert_eq!(homogeneous_excess_ppm(&g, &payload), 0);
}
