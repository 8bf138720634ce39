//! The RocksDB suite itself (see `tests/rocksdb.rs`, which compiles it
//! with the `rocksdb` feature and says it is skipped without).

use std::sync::OnceLock;

use crate::common;

use common::{fnv1a, hashes, splitmix64};
use ribbon_kernel::rocksdb::{self, BlockKind, FilterRef};
use ribbon_kernel::{Backend, Error};

/// Every backend this CPU and build can run. Those that
/// `RIBBON_REQUIRE_BACKENDS` (comma-separated names, set by `.ci/run` from
/// the CPU's flags) lists must be among them.
fn backends() -> Vec<Backend> {
    for name in common::kit::required_backends() {
        assert!(
            Backend::ALL.iter().any(|b| b.name() == name),
            "RIBBON_REQUIRE_BACKENDS names no backend: {name}"
        );
    }
    Backend::ALL
        .into_iter()
        .filter(|b| common::runnable(b.name(), b.is_available()))
        .collect()
}

/// RocksDB's legacy 32-bit `Hash(data, n, seed)` (`BloomHash`), which its
/// schema tests use as the filter checksum (seed 0xbc9f1d34).
fn bloom_hash(data: &[u8]) -> u32 {
    const M: u32 = 0xc6a4_a793;
    let mut h = 0xbc9f_1d34 ^ (data.len() as u32).wrapping_mul(M);
    let mut words = data.chunks_exact(4);
    for w in &mut words {
        h = h.wrapping_add(u32::from_le_bytes(w.try_into().unwrap()));
        h = h.wrapping_mul(M);
        h ^= h >> 16;
    }
    // Tail bytes are sign-extended.
    let sx = |b: u8| b as i8 as i32 as u32;
    let tail = words.remainder();
    if !tail.is_empty() {
        if tail.len() == 3 {
            h = h.wrapping_add(sx(tail[2]) << 16);
        }
        if tail.len() >= 2 {
            h = h.wrapping_add(sx(tail[1]) << 8);
        }
        h = h.wrapping_add(sx(tail[0]));
        h = h.wrapping_mul(M);
        h ^= h >> 24;
    }
    h
}

fn unhex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

/// The 5-byte trailer in hex (`"fe33020000"`).
fn trailer_of(block: &[u8]) -> String {
    block[block.len() - 5..]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// `Key(i)` of RocksDB's schema tests: the 4 little-endian bytes of `i`.
fn schema_key(i: u32) -> u64 {
    rocksdb::key_hash(&i.to_le_bytes())
}

/// `K8(i)` of SPEC 10: the 8 little-endian bytes of `i * 0x9E3779B97F4A7C15`.
fn k8(i: u64) -> u64 {
    rocksdb::key_hash(&i.wrapping_mul(0x9e37_79b9_7f4a_7c15).to_le_bytes())
}

/// Hashes of `K8(0..100_000)`, the keys of SPEC 10.3 and 10.4.
fn k8_keys() -> &'static [u64] {
    static KEYS: OnceLock<Vec<u64>> = OnceLock::new();
    KEYS.get_or_init(|| (0..100_000).map(k8).collect())
}

/// Hashes of `K8(1_000_000_000 + i)` for `i < 100_000`: SPEC 10's FP probes.
fn k8_probes() -> &'static [u64] {
    static PROBES: OnceLock<Vec<u64>> = OnceLock::new();
    PROBES.get_or_init(|| (1_000_000_000..1_000_100_000).map(k8).collect())
}

/// Builds with RocksDB's Ribbon policy on every backend, checks that all
/// write the same bytes, and returns them.
fn ribbon_block(hashes: &[u64], millibits: u32) -> Vec<u8> {
    let mut scratch = vec![0u64; rocksdb::scratch_words(hashes.len(), millibits)];
    let mut first: Option<Vec<u8>> = None;
    for backend in backends() {
        let mut out = vec![0u8; rocksdb::max_filter_bytes(hashes.len(), millibits)];
        let len =
            rocksdb::build_filter_with_backend(hashes, millibits, &mut scratch, &mut out, backend)
                .unwrap();
        out.truncate(len);
        match &first {
            None => first = Some(out),
            Some(bytes) => assert_eq!(bytes, &out, "{} wrote other bytes", backend.name()),
        }
    }
    first.unwrap()
}

fn bloom_block(hashes: &[u64], millibits: u32) -> Vec<u8> {
    let mut out = vec![0u8; rocksdb::max_filter_bytes(hashes.len(), millibits)];
    let len = rocksdb::build_bloom_filter(hashes, millibits, &mut out).unwrap();
    out.truncate(len);
    out
}

/// Answers for `probes` on every backend, single and batch, which must all
/// agree; returns them.
fn answers(block: &[u8], probes: &[u64]) -> Vec<bool> {
    let filter = FilterRef::from_bytes(block).unwrap();
    let mut reference: Option<Vec<bool>> = None;
    for backend in backends() {
        let f = filter.with_backend(backend).unwrap();
        let mut batch = vec![false; probes.len()];
        f.contains_batch(probes, &mut batch).unwrap();
        match &reference {
            None => {
                let single: Vec<bool> = probes.iter().map(|&h| f.contains(h)).collect();
                assert_eq!(single, batch, "{}: single and batch differ", backend.name());
                reference = Some(batch);
            }
            Some(r) => assert_eq!(r, &batch, "{} answers differently", backend.name()),
        }
    }
    reference.unwrap()
}

fn count_matches(block: &[u8], probes: &[u64]) -> u32 {
    answers(block, probes).iter().filter(|&&a| a).count() as u32
}

/// Asserts no false negative, on every backend.
fn assert_members(block: &[u8], members: &[u64]) {
    assert!(answers(block, members).iter().all(|&a| a), "false negative");
}

// ---------------------------------------------------------------------------
// Hashing (SPEC 2, 8.3, 8.4, 10.1, 10.2)

#[test]
fn hash_test_small_value_schema() {
    // The checksum helper first: `HashTest.Values`.
    for (input, want) in BLOOM_HASH_VALUES {
        assert_eq!(bloom_hash(&unhex(input)), want, "Hash({input})");
    }
    for (input, want) in KEY_HASH_VALUES {
        assert_eq!(rocksdb::key_hash(&unhex(input)), want, "Hash64({input})");
    }
}

#[test]
fn hash_test_large_value_schema() {
    // `HashTest.Hash64LargeValueSchema`: one character per prefix length.
    fn descriptor(repeat: &str, limit: usize) -> String {
        const ALPHABET: &[u8; 61] =
            b"abcdefghijklmnopqrstuvwxyz123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ";
        let input = repeat.repeat(limit.div_ceil(repeat.len()));
        (0..limit)
            .map(|i| ALPHABET[(rocksdb::key_hash(&input.as_bytes()[..i]) % 61) as usize] as char)
            .collect()
    }
    assert_eq!(
        descriptor("foo", 430),
        "cRhyWsY67B6klRA1udmOuiYuX7IthyGBKqbeosz2hzVglWCmQx8nEdnpkvPfYX56Up2OWOTVlTzfAoYwvtqKzjD8E9xttR2unelbXbIV67NUe6bOO23BxaSFRcA3njGu5cUWfgwOqNoTsszpuPvKRP6qaUR5VdoBkJUCFIefd7edlNK5mv6JYWaGdwxehg65hTkTmjZoPKxTZo4PLyzbL9U4xt12ITSfeP2MfBHuLI2z2pDlBb44UQKVMx27LEoAHsdLp3WfWfgH3sdRBRCHm33UxCM4QmE2xJ7gqSvNwTeH7v9GlC8zWbGroyD3UVNeShMLx29O7tH1biemLULwAHyIw8zdtLMDpEJ8m2icl6Lb4fDuuFNAs1GCVUthjK8CV8SWI8Rsz5THSwn5CGhpqUwSZcFknjwWIl5rNCvDxXJqYr"
    );
    assert_eq!(
        descriptor("Rocks", 430),
        "c1EeRkrzgOYWLA8PuhJrwTePJewoB44WdXYDfhbk3ZxTqqg25WlPExDl7IKIQLJvnA6gJxxn9TCSLkFGfJeXehaSS1GBqWSzfhEH4VXiXIUCuxJXxtKXcSC6FrNIQGTZbYDiUOLD6Y5inzrF9etwQhXUBanw55xAUdNMFQAm2GjJ6UDWp2mISLiMMkLjANWMKLaZMqaFLX37qB4MRO1ooVRvzSvaNRSCLxlggQCasQq8icWjzf3HjBlZtU6pd4rkaUxSzHqmo9oM5MghbU5Rtxg8wEfO7lVN5wdMONYecslQTwjZUpO1K3LDf3K3XK6sUXM6ShQQ3RHmMn2acB4YtTZ3QQcHYJSOHn2DuWpaQ8RqzX5lab92YmOLaCdOHq1BPsM7SIBzMdLgePNsJ1vvMALxAaoDUHPxoFLO2wx18IXnyX"
    );
    assert_eq!(
        descriptor("RocksDB", 430),
        "c1EeRkukbkb28wLTahwD2sfUhZzaBEnF8SVrxnPVB6A7b8CaAl3UKsDZISF92GSq2wDCukOqJgrsp7A3KZhDiLW8dFXp8UPqPxMCRlMdZeVeJ2dJxrmA6cyt99zkQFj7ELbut6jAeVqARFnwfnWVXOsaLrq7bDCbMcns2DKvTaaqTCLMYxI7nhtLpFN1jR755FRQFcOzrrDbh7QhypjdvlYwcdAMSZgp9JMHxbM23wPSuH6BOFgxejz35PScZfhDPvTOxIy1jc3MZsWrMC3P324zNolO7JdWCX2I5UDKjjaEJfxbgVgJIXxtQGlmj2xkO5sPpjULQV4X2HlY7FQleJ4QRaJIB4buhCA4vUTFeMFlxCIYUpTCsal2qsmnGOWa8WCcefrohMjDj1fjzSvSaQwlpyR1GZHF2uPOoQagiCpHpm"
    );
}

#[test]
fn hash_misc_and_trivial() {
    // `HashTest.Hash64Misc`: shortening the input changes the hash.
    let input = b"this is a 33-byte string for hash";
    for len in 1..=input.len() {
        assert_ne!(
            rocksdb::key_hash(&input[..len]),
            rocksdb::key_hash(&input[..len - 1])
        );
    }
    // `HashTest.Hash64Trivial` (seed 0): both halves of the empty hash are
    // non-zero.
    let empty = rocksdb::key_hash(b"");
    assert!(empty as u32 != 0 && empty >> 32 != 0);
}

#[test]
fn hash_assorted_inputs() {
    // SPEC 10.1.
    for (input, want) in [
        (&b""[..], 0x5342_c301_0fe1_dd04),
        (b"a", 0x88d8_68bf_6076_81c7),
        (b"abc", 0xd39e_eb71_bb53_42e8),
        (b"hello", 0xa0bb_c238_c976_57b5),
        (b"world", 0x53dd_d402_6a11_bd6c),
        (b"RocksDB", 0x7120_b9f6_2510_12e7),
        (b"0123456789abcdef", 0x402c_83c1_955d_056d),
        (b"0123456789abcdefg", 0x1de5_bab5_896c_d852),
    ] {
        assert_eq!(rocksdb::key_hash(input), want);
    }
    let p: Vec<u8> = (0..4096).map(|i| i as u8).collect();
    for (len, want) in [
        (32, 0x05e0_c55f_d9ad_d145),
        (33, 0x8363_64fa_ed76_2c18),
        (64, 0x85a0_b130_6d97_b7f5),
        (65, 0x761d_1aec_f631_ff50),
        (96, 0xea1e_ec32_2790_bfdb),
        (97, 0xa178_f742_9a14_e134),
        (128, 0x7aa5_db2c_8097_080b),
        (129, 0xa06d_8174_3056_cebc),
        (200, 0xd860_7562_8129_a666),
        (240, 0xd125_3a6d_ec8c_35fc),
        (241, 0xb78d_f601_6a18_c222),
        (256, 0x4ab6_ef4d_2088_e650),
        (512, 0xe11f_a58f_d0d0_b0a5),
        (1000, 0xce36_cc50_1354_ecad),
        (1024, 0xa63b_91fd_35ca_4f09),
        (1025, 0x9593_6fd4_08f0_0c5e),
        (1087, 0x92af_64d3_80cc_57db),
        (2048, 0x3b0a_be54_5fd1_dc29),
        (4096, 0x5614_8ab3_d7c2_9e99),
    ] {
        assert_eq!(rocksdb::key_hash(&p[..len]), want, "P[..{len}]");
    }
    // SPEC 10.2: the preview differs from released XXH3 at every length.
    let q: Vec<u8> = (0..2048u32).map(|i| (13 * i + 5) as u8).collect();
    for (len, preview, released) in [
        (0, 0x5342_c301_0fe1_dd04, 0x2d06_8005_38d3_94c2),
        (1, 0x25d4_a233_aae4_889b, 0x929e_358d_27ae_3ee2),
        (2, 0xb847_64a4_9f34_903d, 0xf618_0424_e562_ac8e),
        (3, 0xb08d_d956_a025_bb97, 0x40ad_e90e_919d_c9cc),
        (4, 0xc557_56c3_ccc3_516c, 0x1620_3e01_d3f3_46ca),
        (5, 0x8c51_3fb5_10d3_3c8c, 0x272b_e401_12ba_0549),
        (8, 0x51f8_2115_5300_cd1d, 0x4991_510b_c2ae_2e28),
        (9, 0xf146_92e5_d1a2_aafc, 0x2bfb_e733_0662_cefe),
        (12, 0x5b79_8ca0_a565_dd6d, 0x04bd_bd37_6dba_4549),
        (16, 0x029c_fdbb_fa68_7510, 0x79c4_e8c8_904c_4db5),
        (17, 0x8775_339a_34c2_07e0, 0x06b0_5a5a_b507_6e20),
        (32, 0xfad9_bb3a_a7eb_182c, 0x015f_927a_5c6d_316c),
        (64, 0x20cc_dc23_e331_fae6, 0xacd0_1683_6f2d_3046),
        (100, 0x90d5_b2f2_7717_3327, 0xf309_fb52_14cb_7a87),
        (128, 0x8e88_4b4c_8505_ca1f, 0x8f5f_35ec_84d2_b4bf),
        (129, 0xe636_9b47_209e_6ed4, 0x1ff9_cc27_4e8f_a436),
        (200, 0xeb77_c80a_b760_0143, 0xf562_2923_75cd_d130),
        (240, 0xeabf_3baa_8c6d_39c8, 0x7d3b_54ff_4917_9cb9),
        (241, 0x5641_8110_c218_d3fb, 0xac73_a7b4_f791_a7d7),
        (256, 0x9af6_e101_68c8_bbc3, 0x3b34_dc56_222c_4812),
        (1024, 0xabb8_96f9_4ec2_6be5, 0x0114_e068_c9d1_71cf),
        (1025, 0xe985_d64e_7e47_69d8, 0x8d92_e717_d9ca_e43e),
        (2048, 0x33c7_eab2_756d_bfd8, 0x41c8_7354_6ed1_5d67),
    ] {
        let h = rocksdb::key_hash(&q[..len]);
        assert_eq!(h, preview, "Q[..{len}]");
        assert_ne!(h, released);
    }
    // SPEC 8.1 and 10: the first keys of the schema tests and of K8.
    assert_eq!(schema_key(0), 0x6872_e1d0_7866_ff3d);
    assert_eq!(schema_key(1), 0x538d_5e38_ee4e_d8b8);
    assert_eq!(schema_key(1_000_000), 0x2a8a_48ce_77ac_3328);
    assert_eq!(k8(0), 0x11d0_9843_b5b8_3333);
    assert_eq!(k8(1), 0xcf05_85c3_8c1a_4c9b);
    assert_eq!(k8(2), 0x61cc_4478_7aab_dde1);
    assert_eq!(k8(3), 0x1ac3_b551_8645_b039);
}

// ---------------------------------------------------------------------------
// Bits per key (SPEC 1.1, 6.1)

#[test]
fn full_bloom_test_filter_size() {
    // `FullBloomTest.FilterSize`: configured bits per key to millibits.
    for (bits_per_key, millibits) in [
        (-f64::MAX, 0),
        (f64::NEG_INFINITY, 0),
        (0.0, 0),
        (0.499, 0),
        (0.5, 1000),
        (1.234, 1234),
        (3.456, 3456),
        (9.5, 9500),
        (10.0, 10000),
        (10.499, 10499),
        (21.345, 21345),
        (99.999, 99999),
        (1234.0, 100_000),
        (f64::MAX, 100_000),
        (f64::INFINITY, 100_000),
        (f64::NAN, 100_000),
    ] {
        assert_eq!(
            rocksdb::millibits_per_key(bits_per_key),
            millibits,
            "{bits_per_key}"
        );
    }
    // SPEC 1.1: every three-decimal setting keeps its millibits.
    for millibits in 1000..=100_000 {
        assert_eq!(
            rocksdb::millibits_per_key(f64::from(millibits) / 1000.0),
            millibits
        );
    }
}

#[test]
fn one_in_fp_rate_selected_values() {
    for (millibits, probes, bits) in [
        (1000, 1, 0x3ff9_5376_4452_c7ff),
        (1500, 1, 0x4000_73d6_60f2_5cb1),
        (2000, 1, 0x4004_58e6_9e11_b025),
        (3000, 2, 0x4010_e454_85d3_3751),
        (5000, 3, 0x4025_93a1_90a7_1d5b),
        (5500, 4, 0x402b_8429_eeda_6c66),
        (8000, 5, 0x4045_b198_0ba7_5ac3),
        (9500, 6, 0x4055_3950_1987_7892),
        (10000, 6, 0x405a_39c0_28d7_e9d4),
        (10499, 7, 0x4060_68d5_9b28_cf03),
        (14000, 8, 0x4081_9990_2171_8589),
        (15700, 9, 0x4091_7fad_0508_57eb),
        (20000, 11, 0x40b6_dc8a_443e_c7be),
        (27000, 12, 0x40ef_1e62_986e_d3ab),
        (40000, 18, 0x4155_e879_b57d_4f98),
        (50000, 23, 0x41a3_2176_d9fe_aac8),
        (60000, 24, 0x41e5_4e70_7e2b_c2ce),
        (70000, 24, 0x421f_9cfb_4ddd_0d7a),
        (100000, 24, 0x42a7_9589_e5bc_7b45),
    ] {
        let one_in = rocksdb::desired_one_in_fp_rate(millibits).unwrap();
        assert_eq!(one_in.to_bits(), bits, "{millibits}: {one_in}");
        // The Bloom probe count, from the trailer of a one-key block.
        let block = bloom_block(&[1], millibits);
        assert_eq!(u32::from(block[block.len() - 3]), probes, "{millibits}");
    }
    for (millibits, probes) in [
        (2080, 1),
        (2081, 2),
        (25501, 12),
        (25502, 11),
        (28001, 13),
        (50001, 24),
    ] {
        let block = bloom_block(&[1], millibits);
        assert_eq!(u32::from(block[block.len() - 3]), probes, "{millibits}");
    }
}

#[test]
fn one_in_fp_rate_table_digest() {
    // FNV-1a over the bits (8 bytes little-endian each) of RocksDB's
    // desired_one_in_fp_rate for every millibits_per_key from 1000 to
    // 100000: every float operation and libm call, on its whole domain.
    let mut digest = 0xcbf2_9ce4_8422_2325u64;
    for millibits in 1000..=100_000 {
        let one_in = rocksdb::desired_one_in_fp_rate(millibits).unwrap();
        for b in one_in.to_bits().to_le_bytes() {
            digest = (digest ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    assert_eq!(digest, 0x66df_0115_1168_52ec);
}

#[test]
fn slot_counts_through_scratch_words() {
    // SPEC 3.2: scratch is three words per Ribbon slot.
    for (n, slots) in [
        (1, 256),
        (200, 256),
        (250, 384),
        (500, 640),
        (1000, 1024),
        (2087, 2176),
        (25000, 25728),
        (63448, 65664),
        (126507, 131200),
        (1_000_000, 1_047_552),
        (950_000_000, 1_031_068_672usize),
    ] {
        assert_eq!(rocksdb::scratch_words(n, 10_000), 3 * slots, "{n}");
    }
}

// ---------------------------------------------------------------------------
// `FullBloomTest.Schema` (SPEC 8.1)

/// The first `count` values of `i` for which `Key(i + 1000000)` matches.
fn first_fps(block: &[u8], count: usize) -> Vec<u32> {
    let filter = FilterRef::from_bytes(block).unwrap();
    (0..1_000_000)
        .filter(|&i| filter.contains(schema_key(i + 1_000_000)))
        .take(count)
        .collect()
}

struct SchemaRow {
    millibits: u32,
    keys: std::ops::RangeInclusive<u32>,
    /// FastLocalBloom policy: probes, len, BloomHash checksum, FirstFPs.
    bloom: (u32, usize, u32, &'static [u32]),
    /// Ribbon policy: seed, len, checksum, FirstFPs (None: Bloom fallback).
    ribbon: Option<(u8, usize, u32, &'static [u32])>,
}

const SCHEMA: [SchemaRow; 14] = [
    SchemaRow {
        millibits: 5000,
        keys: 0..=86,
        bloom: (
            3,
            69,
            4130687756,
            &[31, 38, 40, 43, 61, 83, 86, 112, 125, 131],
        ),
        ribbon: None,
    },
    SchemaRow {
        millibits: 2000,
        keys: 0..=2086,
        bloom: (
            1,
            581,
            3817481309,
            &[11, 13, 17, 25, 29, 30, 35, 37, 45, 53],
        ),
        ribbon: Some((61, 405, 1705851228, &[3, 8, 10, 17, 19, 20, 23, 28, 31, 32])),
    },
    SchemaRow {
        millibits: 3000,
        keys: 0..=2086,
        bloom: (2, 837, 2807269961, &[4, 15, 17, 24, 27, 28, 29, 53, 63, 70]),
        ribbon: Some((
            61,
            597,
            1095342358,
            &[3, 17, 20, 28, 32, 33, 36, 43, 49, 54],
        )),
    },
    SchemaRow {
        millibits: 5000,
        keys: 0..=2086,
        bloom: (
            3,
            1349,
            204628445,
            &[15, 24, 29, 39, 53, 87, 89, 100, 103, 104],
        ),
        ribbon: Some((
            61,
            981,
            3971337699,
            &[3, 33, 36, 43, 67, 70, 76, 78, 84, 102],
        )),
    },
    SchemaRow {
        millibits: 8000,
        keys: 0..=2086,
        bloom: (
            5,
            2117,
            355564975,
            &[16, 60, 66, 126, 220, 238, 244, 256, 265, 287],
        ),
        ribbon: Some((
            61,
            1525,
            3651449053,
            &[33, 187, 203, 296, 300, 322, 411, 419, 547, 582],
        )),
    },
    SchemaRow {
        millibits: 9000,
        keys: 0..=2086,
        bloom: (
            6,
            2373,
            2137566013,
            &[156, 367, 791, 872, 945, 1015, 1139, 1159, 1265],
        ),
        ribbon: Some((
            61,
            1685,
            1005676675,
            &[33, 187, 203, 296, 411, 419, 604, 612, 615, 619],
        )),
    },
    SchemaRow {
        millibits: 11000,
        keys: 0..=2086,
        bloom: (
            7,
            2885,
            2561502687,
            &[34, 74, 130, 236, 643, 882, 962, 1015, 1035, 1110],
        ),
        ribbon: Some((
            61,
            2037,
            3129900846,
            &[411, 419, 623, 665, 727, 794, 955, 1052, 1323, 1330],
        )),
    },
    SchemaRow {
        millibits: 14000,
        keys: 0..=2086,
        bloom: (
            8,
            3717,
            3709876890,
            &[130, 240, 522, 565, 989, 2002, 2526, 3147, 3543],
        ),
        ribbon: Some((
            61,
            2517,
            1855638875,
            &[665, 727, 1323, 1755, 3866, 4232, 4442, 4492, 4736],
        )),
    },
    SchemaRow {
        millibits: 16000,
        keys: 0..=2086,
        bloom: (
            9,
            4229,
            1087138490,
            &[3299, 3611, 3916, 6620, 7822, 8079, 8482, 8942],
        ),
        ribbon: Some((
            61,
            2837,
            459379967,
            &[727, 1323, 1755, 4442, 4736, 5386, 6974, 7154, 8222],
        )),
    },
    SchemaRow {
        millibits: 10000,
        keys: 0..=2086,
        bloom: (
            6,
            2629,
            2498541272,
            &[16, 126, 133, 422, 466, 472, 813, 1002, 1035],
        ),
        ribbon: Some((
            61,
            1861,
            1273231667,
            &[296, 411, 419, 612, 619, 623, 630, 665, 686, 727],
        )),
    },
    SchemaRow {
        millibits: 10000,
        keys: 1..=2086,
        bloom: (
            6,
            2629,
            2058382345,
            &[16, 126, 133, 422, 466, 472, 813, 1002, 1035],
        ),
        ribbon: Some((
            184,
            1861,
            3007790572,
            &[33, 152, 383, 497, 589, 633, 737, 781, 911, 990],
        )),
    },
    SchemaRow {
        millibits: 10000,
        keys: 1..=2087,
        bloom: (
            6,
            2629,
            23699164,
            &[16, 126, 133, 422, 466, 472, 813, 1002, 1035],
        ),
        ribbon: Some((
            184,
            1861,
            1942323379,
            &[33, 95, 360, 589, 737, 911, 990, 1048, 1081, 1414],
        )),
    },
    SchemaRow {
        millibits: 9500,
        keys: 1..=2087,
        bloom: (
            6,
            2501,
            3166884174,
            &[126, 156, 367, 444, 458, 791, 813, 976, 1015],
        ),
        ribbon: Some((
            184,
            1781,
            1148258663,
            &[33, 54, 95, 360, 589, 693, 737, 911, 990, 1048],
        )),
    },
    SchemaRow {
        millibits: 10499,
        keys: 1..=2087,
        bloom: (
            7,
            2757,
            4098502778,
            &[16, 236, 240, 472, 1015, 1045, 1111, 1409, 1465],
        ),
        ribbon: Some((
            184,
            1941,
            792138188,
            &[33, 95, 360, 589, 737, 990, 1048, 1081, 1414, 1643],
        )),
    },
];

#[test]
fn full_bloom_test_schema() {
    for row in &SCHEMA {
        let keys: Vec<u64> = row.keys.clone().map(schema_key).collect();
        let what = format!("{} bits/key, keys {:?}", row.millibits, row.keys);

        let (probes, len, checksum, fps) = row.bloom;
        let bloom = bloom_block(&keys, row.millibits);
        assert_eq!(bloom.len(), len, "Bloom {what}");
        assert_eq!(
            trailer_of(&bloom),
            format!("ff00{probes:02x}0000"),
            "Bloom {what}"
        );
        assert_eq!(bloom_hash(&bloom), checksum, "Bloom {what}");
        assert_eq!(first_fps(&bloom, fps.len()), fps, "Bloom {what}");
        assert_members(&bloom, &keys);

        let ribbon = ribbon_block(&keys, row.millibits);
        match row.ribbon {
            None => assert_eq!(ribbon, bloom, "Ribbon policy falls back: {what}"),
            Some((seed, len, checksum, fps)) => {
                assert_eq!(ribbon.len(), len, "Ribbon {what}");
                // 2176 slots: 17 blocks.
                assert_eq!(
                    trailer_of(&ribbon),
                    format!("fe{seed:02x}110000"),
                    "Ribbon {what}"
                );
                assert_eq!(bloom_hash(&ribbon), checksum, "Ribbon {what}");
                assert_eq!(first_fps(&ribbon, fps.len()), fps, "Ribbon {what}");
                assert_members(&ribbon, &keys);
            }
        }
    }
}

// ---------------------------------------------------------------------------
// `FullBloomTest.RawSchema` and `FullBloomTest.CorruptFilters` (SPEC 7, 8.2)

/// The last `len + 5` bytes of RocksDB's 3000-byte pattern buffer, trailer
/// replaced by `marker` and a little-endian u32.
fn raw_block(len: usize, marker: u8, field: u32) -> Vec<u8> {
    let buffer: Vec<u8> = (0..3000).map(|i| (0x7b7bu32 >> (i % 7)) as u8).collect();
    let mut block = buffer[3000 - (len + 5)..].to_vec();
    block[len] = marker;
    block[len + 1..].copy_from_slice(&field.to_le_bytes());
    block
}

/// Bit `i` set iff `Key(i + 12345)` may match.
fn packed_matches(block: &[u8]) -> u64 {
    let probes: Vec<u64> = (0..64).map(|i| schema_key(i + 12345)).collect();
    answers(block, &probes)
        .iter()
        .enumerate()
        .fold(0, |acc, (i, &m)| acc | (u64::from(m) << i))
}

#[test]
fn full_bloom_test_raw_schema() {
    let bloom = raw_block(256, 0xff, 2 << 8);
    assert_eq!(
        FilterRef::from_bytes(&bloom).unwrap().kind(),
        BlockKind::FastLocalBloom
    );
    assert_eq!(packed_matches(&bloom), 9957045189927952471);
    let ribbon = raw_block(32, 0xfe, 2 << 8);
    assert_eq!(
        FilterRef::from_bytes(&ribbon).unwrap().kind(),
        BlockKind::Ribbon
    );
    assert_eq!(packed_matches(&ribbon), 6193930559317665002);
    let ribbon = raw_block(112, 0xfe, 2 << 8);
    assert_eq!(packed_matches(&ribbon), 9007200345328128);
    // Legacy Bloom (format_version < 5) is keyed by another hash: refused.
    for lines in [1, 2, 4] {
        let legacy = raw_block(256, 2, lines);
        assert_eq!(
            FilterRef::from_bytes(&legacy).unwrap_err(),
            Error::UnsupportedVersion
        );
    }
}

fn kind(block: &[u8]) -> BlockKind {
    FilterRef::from_bytes(block).unwrap().kind()
}

#[test]
fn full_bloom_test_corrupt_filters() {
    let probes: Vec<u64> = hashes(5, 1000);
    let all = |block: &[u8], want: bool| answers(block, &probes).iter().all(|&a| a == want);
    // At most 5 bytes: a filter of no keys.
    for len in 0..=5 {
        let block = vec![0xfe; len];
        assert_eq!(kind(&block), BlockKind::AlwaysFalse);
        assert!(all(&block, false));
    }
    // The 6-zero-byte block (construction corruption) and zero probes.
    assert_eq!(kind(&[0; 6]), BlockKind::AlwaysTrue);
    assert!(all(&[0; 6], true));
    let mut block = bloom_block(&hashes(1, 100), 10_000);
    let at = block.len() - 5;
    block[at] = 0;
    assert!(all(&block, true));
    // Reserved markers.
    for marker in [0x80, 0xfd] {
        block[at] = marker;
        assert_eq!(kind(&block), BlockKind::AlwaysTrue);
        assert!(all(&block, true));
    }
    // New Bloom: reserved bytes, probe counts, block sizes, sub-formats.
    let good = bloom_block(&hashes(1, 100), 10_000);
    let at = good.len() - 5;
    for (offset, value) in [
        (4, 1),
        (3, 0x80),
        (2, 31),
        (2, 33),
        (2, 66),
        (2, 130),
        (2, 0),
        (1, 1),
    ] {
        let mut block = good.clone();
        block[at + offset] = value;
        assert_eq!(
            kind(&block),
            BlockKind::AlwaysTrue,
            "byte {offset} = {value}"
        );
        assert!(all(&block, true));
    }
    let mut block = good.clone();
    block[at + 2] = 30; // 30 probes is valid
    assert_eq!(kind(&block), BlockKind::FastLocalBloom);
    // Less than one line of data: RocksDB never writes it.
    let short = [vec![0u8; 63], vec![0xff, 0, 6, 0, 0]].concat();
    assert_eq!(
        FilterRef::from_bytes(&short).unwrap_err(),
        Error::Truncated {
            needed: 64,
            given: 63
        }
    );
    // Ribbon with 0 or 1 blocks.
    for blocks in [0u8, 1] {
        let block = [vec![0u8; 64], vec![0xfe, 0, blocks, 0, 0]].concat();
        assert_eq!(kind(&block), BlockKind::AlwaysTrue);
        assert!(all(&block, true));
    }
    // Ribbon with 5000 blocks in 128 data bytes: almost always true.
    let block = [vec![0u8; 128], vec![0xfe, 0, 0x88, 0x13, 0]].concat();
    let matches = answers(&block, &probes).iter().filter(|&&a| a).count();
    assert!(matches > 990, "{matches}");
}

// ---------------------------------------------------------------------------
// Blocks RocksDB wrote (SPEC 5, 10.3-10.7)

/// Columns of the blocks of a Ribbon block, as RocksDB's reader sets them
/// up: (num_blocks, upper columns, upper start block).
fn ribbon_layout(block: &[u8]) -> (usize, usize, usize) {
    let n = block.len();
    let blocks = usize::from(block[n - 3])
        | usize::from(block[n - 2]) << 8
        | usize::from(block[n - 1]) << 16;
    let segments = (n - 5) / 16;
    let upper = segments.div_ceil(blocks);
    (blocks, upper, upper * blocks - segments)
}

#[test]
fn ribbon_policy_on_k8_keys() {
    for (
        n,
        millibits,
        slots,
        ribbon_bytes,
        bloom_bytes,
        ribbon,
        len,
        trailer,
        upper,
        usb,
        fnv,
        fp,
    ) in RIBBON_GRID
    {
        let what = format!("n = {n}, {millibits} millibits");
        let keys = &k8_keys()[..n];
        assert_eq!(rocksdb::scratch_words(n, millibits), 3 * slots, "{what}");
        let block = ribbon_block(keys, millibits);
        assert_eq!(block.len(), len, "{what}");
        assert_eq!(trailer_of(&block), trailer, "{what}");
        assert_eq!(fnv1a(&block), fnv, "{what}");
        assert_eq!(bloom_block(keys, millibits).len(), bloom_bytes, "{what}");
        // The bound covers both candidates (with the least rounding bias,
        // the Ribbon size can be one segment more than with K8's).
        let bound = rocksdb::max_filter_bytes(n, millibits);
        assert!(
            bound >= ribbon_bytes.max(bloom_bytes) && bound <= ribbon_bytes.max(bloom_bytes) + 16,
            "{what}"
        );
        if ribbon {
            assert_eq!(kind(&block), BlockKind::Ribbon, "{what}");
            assert_eq!(len, ribbon_bytes, "{what}");
            assert_eq!(
                ribbon_layout(&block),
                (slots / 128, upper as usize, usb),
                "{what}"
            );
        } else {
            assert_eq!(kind(&block), BlockKind::FastLocalBloom, "{what}");
            assert_eq!(block, bloom_block(keys, millibits), "{what}");
        }
        assert_members(&block, keys);
        assert_eq!(count_matches(&block, k8_probes()), fp, "{what}");
    }
}

#[test]
fn bloom_policy_on_k8_keys() {
    for (n, millibits, probes, len, trailer, fnv, fp) in BLOOM_GRID {
        let what = format!("n = {n}, {millibits} millibits");
        let keys = &k8_keys()[..n];
        let block = bloom_block(keys, millibits);
        assert_eq!(block.len(), len, "{what}");
        assert_eq!(trailer_of(&block), trailer, "{what}");
        assert_eq!(u32::from(block[len - 3]), probes, "{what}");
        assert_eq!(fnv1a(&block), fnv, "{what}");
        assert!(len <= rocksdb::max_filter_bytes(n, millibits), "{what}");
        assert_members(&block, keys);
        assert_eq!(count_matches(&block, k8_probes()), fp, "{what}");
    }
}

#[test]
fn worked_example() {
    // SPEC 5: n = 1000 at 10 bits per key.
    let block = ribbon_block(&k8_keys()[..1000], 10_000);
    assert_eq!(block.len(), 885);
    assert_eq!(
        block[..32],
        unhex("1def9f562d9fb0e89981b590ad55cc9fa8484a04b178d093dc67cb8331637ab8")
    );
    assert_eq!(
        block[885 - 37..],
        unhex("e76c6fa516acdaa798e4c10c1b000000a29dc239e872d6305664134e5a010000fe33080000")
    );
    assert_eq!(fnv1a(&block), 0x900e_57f2_e895_4d30);
}

#[test]
fn seed_retries() {
    // SPEC 10.5: n = 2000 at 10 bits per key whose first seed fails.
    for (offset, first_seed, seed, fnv) in [
        (38000114u64, 152u8, 153u8, 0xbcac_9b84_92f2_c4f8u64),
        (64000192, 165, 166, 0x48fe_8951_a4bc_4bbf),
        (74000222, 9, 10, 0xa428_4815_1fe9_977a),
        (92000276, 109, 110, 0xd335_c919_703b_f022),
        (136000408, 19, 20, 0x6e63_1d0c_0512_f95c),
    ] {
        let keys: Vec<u64> = (offset..offset + 2000).map(k8).collect();
        assert_eq!(keys[0] as u8, first_seed);
        let block = ribbon_block(&keys, 10_000);
        assert_eq!(block.len(), 1749, "offset {offset}");
        assert_eq!(block[1749 - 4], seed, "offset {offset}");
        assert_eq!(fnv1a(&block), fnv, "offset {offset}");
        assert_members(&block, &keys);
    }
}

#[test]
fn duplicates() {
    // SPEC 10.6: (n, millibits, offset, keys added twice in a row (else the
    // whole sequence twice), Ribbon policy len, trailer, FNV, Bloom len, FNV).
    for (n, millibits, offset, adjacent, len, trailer, fnv, bloom_len, bloom_fnv) in [
        (
            1000,
            10000,
            5,
            true,
            885,
            "fe6a080000",
            0x818c_1282_de91_2174,
            1285,
            0xbdab_17a9_9f31_70f4,
        ),
        (
            1000,
            10000,
            5,
            false,
            1749,
            "fe6a100000",
            0x76a8_1f37_c8be_d512,
            2565,
            0xf477_8507_abfc_49bf,
        ),
        (
            3000,
            7000,
            77,
            true,
            1877,
            "fe11180000",
            0x2186_ded8_c622_05ae,
            2693,
            0xc983_c342_b874_72e0,
        ),
        (
            3000,
            7000,
            77,
            false,
            3733,
            "fe11300000",
            0x75d2_d582_a3d9_008a,
            5317,
            0xa254_6004_c635_2240,
        ),
        (
            500,
            15700,
            1,
            true,
            837,
            "fe9b050000",
            0x65a9_00ba_2767_87bc,
            1029,
            0xb505_323d_c232_5e56,
        ),
        (
            500,
            15700,
            1,
            false,
            1333,
            "fe9b080000",
            0x7bb9_4366_0466_8e82,
            1989,
            0xbf2c_d68a_f0e6_dfbc,
        ),
        (
            40,
            10000,
            3,
            true,
            69,
            "ff00060000",
            0x7f9b_cfef_e868_4bd5,
            69,
            0x7f9b_cfef_e868_4bd5,
        ),
        (
            40,
            10000,
            3,
            false,
            133,
            "ff00060000",
            0x205e_21d1_db85_d921,
            133,
            0x205e_21d1_db85_d921,
        ),
    ] {
        let what = format!("n = {n}, {millibits} millibits, adjacent {adjacent}");
        let keys: Vec<u64> = (offset..offset + n).map(k8).collect();
        let added: Vec<u64> = if adjacent {
            keys.iter().flat_map(|&h| [h, h]).collect()
        } else {
            [&keys[..], &keys[..]].concat()
        };
        let block = ribbon_block(&added, millibits);
        assert_eq!(block.len(), len, "{what}");
        assert_eq!(trailer_of(&block), trailer, "{what}");
        assert_eq!(fnv1a(&block), fnv, "{what}");
        assert_members(&block, &keys);
        let bloom = bloom_block(&added, millibits);
        assert_eq!(bloom.len(), bloom_len, "{what}");
        assert_eq!(fnv1a(&bloom), bloom_fnv, "{what}");
        if adjacent {
            assert_eq!(block, ribbon_block(&keys, millibits), "{what}");
        }
    }
}

#[test]
fn complete_small_blocks() {
    // SPEC 10.7.
    let keys = k8_keys();
    assert_eq!(
        ribbon_block(&keys[..10], 1000),
        unhex("2c00000000000000000000000000004000000000000000000000000000000000fe33020000")
    );
    assert_eq!(
        ribbon_block(&keys[..100], 5500),
        unhex(
            "80317d124e80931523847386101000400298a59b7cc250dc577f3783401114a5b4286d88572443f1640ce08350111e45b8135c9951218151c7d5c684501032a000000000000000000000000000000000020000000000000000000000000000000200000000000000000000000000000002000000000000000000000000000000fe33020000"
        )
    );
    assert_eq!(
        ribbon_block(&keys[..200], 10_000),
        unhex(
            "268d1aef7d72ef693fbfdd6377f2ef462a451a2f818b6549babdf678a8b64642c2db2c0973a46bfc500044596b3811e3d8d404415c89b16c04e0613a7ac49c844a479e5847c18cd0e373d3072b372a5daa3a52f743aad7c8ffc2f5d1e3521940cc5c83e91ec7b0487f6f074ef483ccb0972e47d4f053603d5a050000000000008c26b88973aa67b24f010000000000002ffeaaa05dbd9f1b5401000000000000fac9378041be0ea78701000000000000f71293572043fa9cd004000000000000f0efa6ebd344359ec7000000000000001ce616608cedce2d5101000000000000fe33020000"
        )
    );
    assert_eq!(
        bloom_block(&keys[..10], 10_000),
        unhex(
            "00008010280022000018000004002000000044100090080098421004000000800a03110001002800001902003010800040002040201800014002050820801020ff00060000"
        )
    );
}

// ---------------------------------------------------------------------------
// Round trips, bounds, errors and hostile bytes

/// Bits-per-key settings from 1 to 27 (whole and fractional) and beyond,
/// up to RocksDB's cap of 100, where Ribbon uses 32 columns everywhere.
const MILLIBITS: [u32; 22] = [
    1000, 1234, 1500, 2000, 2500, 3456, 5500, 6666, 7000, 8000, 9500, 10000, 10499, 12345, 15700,
    20000, 21345, 27000, 35000, 62000, 64000, 100_000,
];

#[test]
fn round_trips_on_every_backend() {
    let probes = hashes(99, 20_000);
    for (i, n) in [1usize, 2, 3, 10, 100, 255, 1000, 1001, 2500, 10_000, 25_000]
        .into_iter()
        .enumerate()
    {
        for (j, millibits) in MILLIBITS.into_iter().enumerate() {
            let keys = hashes((i * 100 + j) as u64, n);
            // The same keys with some added twice in a row: RocksDB drops
            // those repeats, so the block is the same.
            let repeated: Vec<u64> = keys
                .iter()
                .enumerate()
                .flat_map(|(k, &h)| if k % 3 == 0 { vec![h, h] } else { vec![h] })
                .collect();
            let block = ribbon_block(&keys, millibits);
            assert_eq!(
                ribbon_block(&repeated, millibits),
                block,
                "n = {n}, {millibits} millibits"
            );
            assert!(block.len() <= rocksdb::max_filter_bytes(n, millibits));
            let filter = FilterRef::from_bytes(&block).unwrap();
            assert!(matches!(
                filter.kind(),
                BlockKind::Ribbon | BlockKind::FastLocalBloom
            ));
            if n >= 1000 {
                assert_eq!(
                    filter.kind(),
                    BlockKind::Ribbon,
                    "n = {n}, {millibits} millibits"
                );
            }
            assert_members(&block, &keys);
            // FP rate near RocksDB's target (loose: n and the sample are small).
            let fp = f64::from(count_matches(&block, &probes)) / probes.len() as f64;
            let target = 1.0 / rocksdb::desired_one_in_fp_rate(millibits).unwrap();
            if n >= 1000 {
                assert!(
                    fp < target * 1.6 + 0.002,
                    "n = {n}, {millibits}: fp {fp}, target {target}"
                );
            }
            let bloom = bloom_block(&repeated, millibits);
            assert_eq!(bloom, bloom_block(&keys, millibits));
            assert_members(&bloom, &keys);
        }
    }
}

#[test]
fn buffer_bounds_grow_with_the_key_count() {
    for millibits in [1000, 10_000, 27_000, 100_000] {
        let (mut scratch, mut bytes) = (0, 0);
        let mut check = |n: usize| {
            let s = rocksdb::scratch_words(n, millibits);
            let b = rocksdb::max_filter_bytes(n, millibits);
            assert!(s >= scratch && b >= bytes, "n = {n}, {millibits} millibits");
            (scratch, bytes) = (s, b);
        };
        for n in 1..=70_000 {
            check(n);
        }
        for n in (70_000..950_000_000).step_by(999_983) {
            check(n);
        }
        check(950_000_000);
    }
    assert_eq!(rocksdb::scratch_words(0, 10_000), 0);
    assert_eq!(rocksdb::max_filter_bytes(0, 10_000), 0);
    // Past RocksDB's Ribbon limit: FastLocalBloom, no scratch.
    assert_eq!(rocksdb::scratch_words(950_000_001, 10_000), 0);
    assert_eq!(
        rocksdb::max_filter_bytes(950_000_001, 10_000),
        1_187_500_032 + 5
    );
    // The smallest rounding bias (first hash below 2^32) needs the bound.
    for n in [1000, 5000, 25_000] {
        for millibits in MILLIBITS {
            let mut keys = hashes(n as u64 + u64::from(millibits), n);
            keys[0] &= 0xffff_ff00;
            let block = ribbon_block(&keys, millibits);
            assert!(block.len() <= rocksdb::max_filter_bytes(n, millibits));
        }
    }
}

#[test]
fn errors() {
    let keys = hashes(3, 1000);
    let mut scratch = vec![0u64; rocksdb::scratch_words(1000, 10_000)];
    let mut out = vec![0u8; rocksdb::max_filter_bytes(1000, 10_000)];
    for millibits in [0, 999, 100_001, u32::MAX] {
        assert_eq!(
            rocksdb::build_filter(&keys, millibits, &mut scratch, &mut out),
            Err(Error::InvalidBitsPerKey)
        );
        assert_eq!(
            rocksdb::build_bloom_filter(&keys, millibits, &mut out),
            Err(Error::InvalidBitsPerKey)
        );
        assert_eq!(
            rocksdb::desired_one_in_fp_rate(millibits),
            Err(Error::InvalidBitsPerKey)
        );
        assert_eq!(rocksdb::scratch_words(1000, millibits), 0);
        assert_eq!(rocksdb::max_filter_bytes(1000, millibits), 0);
    }
    // No keys: an empty block, which reads as matching nothing.
    assert_eq!(rocksdb::build_filter(&[], 10_000, &mut [], &mut []), Ok(0));
    assert_eq!(rocksdb::build_bloom_filter(&[], 10_000, &mut []), Ok(0));
    let len = rocksdb::build_filter(&keys, 10_000, &mut scratch, &mut out).unwrap();
    let block = out[..len].to_vec();
    assert_eq!(
        rocksdb::build_filter(&keys, 10_000, &mut scratch[..3 * 1024 - 1], &mut out),
        Err(Error::ScratchTooSmall {
            needed: 3 * 1024,
            given: 3 * 1024 - 1
        })
    );
    assert_eq!(
        rocksdb::build_filter(&keys, 10_000, &mut scratch, &mut out[..len - 1]),
        Err(Error::OutputTooSmall {
            needed: len,
            given: len - 1
        })
    );
    assert_eq!(
        rocksdb::build_bloom_filter(&keys, 10_000, &mut out[..1284]),
        Err(Error::OutputTooSmall {
            needed: 1285,
            given: 1284
        })
    );
    // Small filters written as Bloom need no scratch.
    assert_eq!(
        rocksdb::build_filter(&keys[..10], 10_000, &mut [], &mut out),
        Ok(69)
    );
    let filter = FilterRef::from_bytes(&block).unwrap();
    assert_eq!(
        filter.contains_batch(&keys, &mut [false; 999]),
        Err(Error::LengthMismatch {
            expected: 1000,
            given: 999
        })
    );
    assert_eq!(filter.as_bytes(), &block[..]);
    for backend in Backend::ALL {
        let built =
            rocksdb::build_filter_with_backend(&keys, 10_000, &mut scratch, &mut out, backend);
        if backend.is_available() {
            assert_eq!(built, Ok(len));
            assert_eq!(filter.with_backend(backend).unwrap().backend(), backend);
        } else {
            assert_eq!(built, Err(Error::BackendUnavailable));
            assert_eq!(
                filter.with_backend(backend).unwrap_err(),
                Error::BackendUnavailable
            );
        }
    }
}

/// Opens `block`; when accepted, queries it on every backend (single and
/// batch must agree) without panicking.
fn try_block(block: &[u8], probes: &[u64]) {
    if FilterRef::from_bytes(block).is_ok() {
        answers(block, probes);
    }
}

#[test]
fn hostile_bytes_never_panic() {
    let probes = hashes(17, 300);
    let mut rng = common::Hashes::new(4242);
    // Random bytes with each trailer marker.
    for len in 0..700 {
        for marker in [0xfe, 0xff, 0x00, 0x80, 0x7f, rng.next().unwrap() as u8] {
            let mut block: Vec<u8> = (0..len).map(|_| rng.next().unwrap() as u8).collect();
            if len >= 5 {
                block[len - 5] = marker;
                if marker == 0xff && len % 2 == 0 {
                    // Often a valid Bloom trailer.
                    block[len - 4] = 0;
                    block[len - 3] &= 31;
                    block[len - 2] = 0;
                    block[len - 1] = 0;
                }
            }
            try_block(&block, &probes);
        }
    }
    // Ribbon trailers with extreme block counts and every small length.
    for blocks in [2u32, 3, 7, 100, 5000, 0xff_ffff] {
        for len in 0..300 {
            let mut block = vec![0x5au8; len];
            block.extend_from_slice(&[0xfe, 7]);
            block.extend_from_slice(&blocks.to_le_bytes()[..3]);
            try_block(&block, &probes);
        }
    }
    // Truncated and bit-flipped real blocks.
    let keys = hashes(8, 3000);
    for block in [
        ribbon_block(&keys, 10_000),
        ribbon_block(&keys, 1000),
        bloom_block(&keys, 7000),
        ribbon_block(&keys[..50], 27_000),
    ] {
        for cut in 0..=block.len() {
            try_block(&block[..cut], &probes);
            try_block(&block[block.len() - cut..], &probes);
        }
        for bit in (0..block.len() * 8)
            .step_by(7)
            .chain((block.len() - 5) * 8..block.len() * 8)
        {
            let mut flipped = block.clone();
            flipped[bit / 8] ^= 1 << (bit % 8);
            try_block(&flipped, &probes);
        }
    }
}

// ---------------------------------------------------------------------------
// Reference tables, transcribed from the specification

/// SPEC 10.3: (n, millibits, num_slots, Ribbon bytes, Bloom bytes, Ribbon
/// written, len, trailer, upper columns, upper start block, FNV-1a, FP/100k).
type RibbonRow = (
    usize,
    u32,
    usize,
    usize,
    usize,
    bool,
    usize,
    &'static str,
    u32,
    usize,
    u64,
    u32,
);

#[rustfmt::skip]
const RIBBON_GRID: [RibbonRow; 60] = [
    (1, 1000, 256, 37, 69, true, 37, "fe33020000", 1, 0, 0xb136_1711_a616_2e37, 49709),
    (1, 5500, 256, 133, 69, false, 69, "ff00040000", 0, 0, 0xfdd8_f658_d698_36fa, 0),
    (1, 10000, 256, 229, 69, false, 69, "ff00060000", 0, 0, 0x8d79_4940_7c5f_ac0c, 0),
    (1, 15700, 256, 357, 69, false, 69, "ff00090000", 0, 0, 0xbd8b_cf44_7d61_f64b, 0),
    (1, 27000, 256, 517, 69, false, 69, "ff000c0000", 0, 0, 0x0655_0e5a_7f30_1ad8, 0),
    (2, 1000, 256, 37, 69, true, 37, "fe33020000", 1, 0, 0x6a4d_4724_e693_d61c, 49923),
    (2, 5500, 256, 133, 69, false, 69, "ff00040000", 0, 0, 0xa1c9_687a_c83a_285a, 0),
    (2, 10000, 256, 229, 69, false, 69, "ff00060000", 0, 0, 0xcafc_354b_2c95_840c, 0),
    (2, 15700, 256, 357, 69, false, 69, "ff00090000", 0, 0, 0x36ae_58d0_52fa_6865, 0),
    (2, 27000, 256, 517, 69, false, 69, "ff000c0000", 0, 0, 0x45f9_df61_0cd7_e666, 0),
    (10, 1000, 256, 37, 69, true, 37, "fe33020000", 1, 0, 0x6a0c_6670_f44d_7cd0, 49942),
    (10, 5500, 256, 133, 69, false, 69, "ff00040000", 0, 0, 0x8b00_ecc2_f32f_6126, 3),
    (10, 10000, 256, 229, 69, false, 69, "ff00060000", 0, 0, 0x94cf_a7bd_7c63_5f5e, 0),
    (10, 15700, 256, 357, 69, false, 69, "ff00090000", 0, 0, 0x0bc3_6a24_9a01_a093, 0),
    (10, 27000, 256, 517, 69, false, 69, "ff000c0000", 0, 0, 0xb3b3_d8e5_977f_6267, 0),
    (100, 1000, 256, 37, 69, true, 37, "fe33020000", 1, 0, 0x8fa4_5960_155a_ba74, 50038),
    (100, 5500, 256, 133, 133, true, 133, "fe33020000", 4, 0, 0xae97_b53d_f370_3ef7, 6250),
    (100, 10000, 256, 229, 133, false, 133, "ff00060000", 0, 0, 0x8186_14ac_99ee_a218, 744),
    (100, 15700, 256, 357, 261, false, 261, "ff00090000", 0, 0, 0x79fb_ccae_3e5a_c9ec, 12),
    (100, 27000, 256, 517, 389, false, 389, "ff000c0000", 0, 0, 0x079c_d160_a8cc_204e, 0),
    (200, 1000, 256, 37, 69, true, 37, "fe33020000", 1, 0, 0x5cbe_ce73_a4b6_2f0a, 50009),
    (200, 5500, 256, 133, 197, true, 133, "fe33020000", 4, 0, 0xa116_a153_69d1_03a8, 6154),
    (200, 10000, 256, 229, 261, true, 229, "fe33020000", 7, 0, 0x665d_a1ce_02f0_7ee4, 766),
    (200, 15700, 256, 357, 453, true, 357, "fe33020000", 11, 0, 0x2051_adae_80ae_d258, 55),
    (200, 27000, 256, 517, 709, true, 517, "fe33020000", 16, 0, 0xf7fa_0110_9f32_5a02, 3),
    (300, 1000, 384, 53, 69, true, 53, "fe33030000", 1, 0, 0x47cd_e265_68a0_e58d, 49662),
    (300, 5500, 384, 197, 261, true, 197, "fe33030000", 4, 0, 0xdc35_b6d1_c8da_3aa0, 6302),
    (300, 10000, 384, 341, 389, true, 341, "fe33030000", 7, 0, 0x8869_053f_8b65_5d3b, 777),
    (300, 15700, 384, 517, 645, true, 517, "fe33030000", 11, 1, 0xb2a5_bcfd_5ff5_d2fc, 66),
    (300, 27000, 384, 773, 1029, true, 773, "fe33030000", 16, 0, 0x5ffc_5aa4_8191_40a2, 2),
    (500, 1000, 640, 69, 69, true, 69, "fe33050000", 1, 1, 0x8e41_bb9b_a215_c512, 62485),
    (500, 5500, 640, 325, 389, true, 325, "fe33050000", 4, 0, 0xfc4d_cf0e_c6a0_2f27, 6200),
    (500, 10000, 640, 565, 645, true, 565, "fe33050000", 7, 0, 0xe188_7633_d269_fbd1, 747),
    (500, 15700, 640, 837, 1029, true, 837, "fe33050000", 11, 3, 0x3ff3_1422_6941_0b55, 85),
    (500, 27000, 640, 1285, 1733, true, 1285, "fe33050000", 16, 0, 0xdead_b673_a449_436d, 0),
    (1000, 1000, 1024, 117, 133, true, 117, "fe33080000", 1, 1, 0xb53b_1c8f_654f_7ec6, 57343),
    (1000, 5500, 1024, 501, 709, true, 501, "fe33080000", 4, 1, 0x6234_886c_5e91_b8d7, 7140),
    (1000, 10000, 1024, 885, 1285, true, 885, "fe33080000", 7, 1, 0x900e_57f2_e895_4d30, 900),
    (1000, 15700, 1024, 1333, 1989, true, 1333, "fe33080000", 11, 5, 0xe736_393e_18ae_9835, 65),
    (1000, 27000, 1024, 2053, 3397, true, 2053, "fe33080000", 16, 0, 0x032f_bc2c_758d_cab5, 0),
    (2000, 1000, 2048, 213, 261, true, 213, "fe33100000", 1, 3, 0x8bdd_7db5_194c_4ba1, 59691),
    (2000, 5500, 2048, 997, 1413, true, 997, "fe33100000", 4, 2, 0x49a6_6308_4aae_6e56, 6979),
    (2000, 10000, 2048, 1749, 2565, true, 1749, "fe33100000", 7, 3, 0x14a6_4443_f8f5_200d, 869),
    (2000, 15700, 2048, 2629, 3973, true, 2629, "fe33100000", 11, 12, 0x66b4_acbb_30fb_9e21, 86),
    (2000, 27000, 2048, 4101, 6789, true, 4101, "fe33100000", 16, 0, 0x6d98_f808_6f36_594f, 0),
    (5000, 1000, 5120, 485, 645, true, 485, "fe33280000", 1, 10, 0x49be_0907_91d2_f2b6, 62497),
    (5000, 5500, 5120, 2469, 3461, true, 2469, "fe33280000", 4, 6, 0xda46_0208_08a0_e06d, 7050),
    (5000, 10000, 5120, 4357, 6277, true, 4357, "fe33280000", 7, 8, 0x37f2_7346_58be_a928, 940),
    (5000, 15700, 5120, 6533, 9861, true, 6533, "fe33280000", 11, 32, 0x17a2_b5b1_66c9_c6e3, 81),
    (5000, 27000, 5120, 10229, 16901, true, 10229, "fe33280000", 16, 1, 0xa235_b52f_c26e_b360, 1),
    (25000, 1000, 25728, 2389, 3141, true, 2389, "fe33c90000", 1, 52, 0xdaf3_6cdb_8f3a_6ba9, 62767),
    (25000, 5500, 25728, 12357, 17221, true, 12357, "fe33c90000", 4, 32, 0x9853_31e7_7215_3d1c, 7393),
    (25000, 10000, 25728, 21813, 31301, true, 21813, "fe33c90000", 7, 44, 0xb47a_a2b3_c530_5325, 983),
    (25000, 15700, 25728, 32741, 49093, true, 32741, "fe33c90000", 11, 165, 0x2d9a_7226_7cf9_7059, 104),
    (25000, 27000, 25728, 51381, 84421, true, 51381, "fe33c90000", 16, 5, 0xd612_e249_9c33_5107, 2),
    (100000, 1000, 103552, 9557, 12549, true, 9557, "fe33290300", 1, 212, 0xad90_fb43_6c99_e4c1, 63096),
    (100000, 5500, 103552, 49685, 68805, true, 49685, "fe33290300", 4, 131, 0x6fcd_fdd0_864b_5f2f, 7135),
    (100000, 10000, 103552, 87781, 125061, true, 87781, "fe33290300", 7, 177, 0x7a94_a87a_5904_7d11, 979),
    (100000, 15700, 103552, 131685, 196293, true, 131685, "fe33290300", 11, 669, 0x40cd_1f94_78e5_ac3e, 88),
    (100000, 27000, 103552, 206757, 337541, true, 206757, "fe33290300", 16, 22, 0x30f8_60cf_5822_54ea, 1),
];

/// SPEC 10.4: (n, millibits, probes, len, trailer, FNV-1a, FP/100k).
#[rustfmt::skip]
const BLOOM_GRID: [(usize, u32, u32, usize, &str, u64, u32); 60] = [
    (1, 1000, 1, 69, "ff00010000", 0x6237_57e8_c7b1_4b61, 204),
    (1, 5500, 4, 69, "ff00040000", 0xfdd8_f658_d698_36fa, 0),
    (1, 10000, 6, 69, "ff00060000", 0x8d79_4940_7c5f_ac0c, 0),
    (1, 15700, 9, 69, "ff00090000", 0xbd8b_cf44_7d61_f64b, 0),
    (1, 27000, 12, 69, "ff000c0000", 0x0655_0e5a_7f30_1ad8, 0),
    (2, 1000, 1, 69, "ff00010000", 0x0b09_3a6d_46da_bfa1, 402),
    (2, 5500, 4, 69, "ff00040000", 0xa1c9_687a_c83a_285a, 0),
    (2, 10000, 6, 69, "ff00060000", 0xcafc_354b_2c95_840c, 0),
    (2, 15700, 9, 69, "ff00090000", 0x36ae_58d0_52fa_6865, 0),
    (2, 27000, 12, 69, "ff000c0000", 0x45f9_df61_0cd7_e666, 0),
    (10, 1000, 1, 69, "ff00010000", 0xb43c_345a_ff18_99dd, 1915),
    (10, 5500, 4, 69, "ff00040000", 0x8b00_ecc2_f32f_6126, 3),
    (10, 10000, 6, 69, "ff00060000", 0x94cf_a7bd_7c63_5f5e, 0),
    (10, 15700, 9, 69, "ff00090000", 0x0bc3_6a24_9a01_a093, 0),
    (10, 27000, 12, 69, "ff000c0000", 0xb3b3_d8e5_977f_6267, 0),
    (100, 1000, 1, 69, "ff00010000", 0xfeb2_8d35_bfab_a283, 18767),
    (100, 5500, 4, 133, "ff00040000", 0x514b_bff7_4196_b7c2, 1157),
    (100, 10000, 6, 133, "ff00060000", 0x8186_14ac_99ee_a218, 744),
    (100, 15700, 9, 261, "ff00090000", 0x79fb_ccae_3e5a_c9ec, 12),
    (100, 27000, 12, 389, "ff000c0000", 0x079c_d160_a8cc_204e, 0),
    (200, 1000, 1, 69, "ff00010000", 0x7ce4_141f_70bc_653a, 32906),
    (200, 5500, 4, 197, "ff00040000", 0xcde4_d0a5_4652_500e, 2695),
    (200, 10000, 6, 261, "ff00060000", 0x6eee_af71_a5df_fbd5, 858),
    (200, 15700, 9, 453, "ff00090000", 0x2c4d_1a48_dd2d_50df, 34),
    (200, 27000, 12, 709, "ff000c0000", 0x40d1_2c1e_85dc_6096, 0),
    (300, 1000, 1, 69, "ff00010000", 0xef27_adc8_b1f7_c094, 43277),
    (300, 5500, 4, 261, "ff00040000", 0xa962_4028_0cc3_cfaf, 3892),
    (300, 10000, 6, 389, "ff00060000", 0x261f_3e96_8d08_bf1b, 749),
    (300, 15700, 9, 645, "ff00090000", 0x08fe_ff41_3ae4_6dfa, 40),
    (300, 27000, 12, 1029, "ff000c0000", 0x3bd4_b506_8bda_f103, 3),
    (500, 1000, 1, 69, "ff00010000", 0xdee2_7a5e_5c19_0260, 62087),
    (500, 5500, 4, 389, "ff00040000", 0x2288_a60b_baee_aede, 5213),
    (500, 10000, 6, 645, "ff00060000", 0x4757_b356_aea2_4799, 765),
    (500, 15700, 9, 1029, "ff00090000", 0x1470_7d0f_cf37_0acb, 62),
    (500, 27000, 12, 1733, "ff000c0000", 0x8f7c_25db_38ee_f840, 2),
    (1000, 1000, 1, 133, "ff00010000", 0x7310_77aa_35da_d475, 62813),
    (1000, 5500, 4, 709, "ff00040000", 0x46ea_7cc2_22a3_513d, 6695),
    (1000, 10000, 6, 1285, "ff00060000", 0xf2ea_48f9_f6b6_64c0, 873),
    (1000, 15700, 9, 1989, "ff00090000", 0x8407_b314_d49e_f345, 93),
    (1000, 27000, 12, 3397, "ff000c0000", 0x390e_b8b2_c581_4591, 4),
    (2000, 1000, 1, 261, "ff00010000", 0x580b_f1cf_5f90_9ca1, 62930),
    (2000, 5500, 4, 1413, "ff00040000", 0x52ae_6502_444e_81cf, 6694),
    (2000, 10000, 6, 2565, "ff00060000", 0x537a_513a_7c3a_501d, 876),
    (2000, 15700, 9, 3973, "ff00090000", 0xecd1_f782_6263_9c9f, 102),
    (2000, 27000, 12, 6789, "ff000c0000", 0x0df2_d0f4_b1a0_252e, 2),
    (5000, 1000, 1, 645, "ff00010000", 0x7213_48e9_f3c9_ae11, 62559),
    (5000, 5500, 4, 3461, "ff00040000", 0xe86e_0629_7f75_596f, 7277),
    (5000, 10000, 6, 6277, "ff00060000", 0x5b6d_91c2_12a4_5328, 950),
    (5000, 15700, 9, 9861, "ff00090000", 0x9237_ba65_4a5a_f01b, 113),
    (5000, 27000, 12, 16901, "ff000c0000", 0x34ff_7140_9a4f_3551, 1),
    (25000, 1000, 1, 3141, "ff00010000", 0xe0c6_f15d_b838_f424, 63313),
    (25000, 5500, 4, 17221, "ff00040000", 0x0294_ce8d_69ec_18d1, 7191),
    (25000, 10000, 6, 31301, "ff00060000", 0x86f3_4c3a_67ab_8fce, 896),
    (25000, 15700, 9, 49093, "ff00090000", 0x1331_2833_ace9_0792, 87),
    (25000, 27000, 12, 84421, "ff000c0000", 0xfae6_4e79_36a5_b706, 1),
    (100000, 1000, 1, 12549, "ff00010000", 0xed9a_a1bc_f2a4_32b8, 62807),
    (100000, 5500, 4, 68805, "ff00040000", 0x96b6_4b36_7c5d_eae1, 7291),
    (100000, 10000, 6, 125061, "ff00060000", 0xa714_6e80_4867_930d, 959),
    (100000, 15700, 9, 196293, "ff00090000", 0xdf29_4df7_e19d_517d, 97),
    (100000, 27000, 12, 337541, "ff000c0000", 0x8ecd_ae95_657e_e8d4, 2),
];

/// SPEC 8.3, `HashTest.Values`: (input, `Hash(input, 0xbc9f1d34)`).
const BLOOM_HASH_VALUES: [(&str, u32); 41] = [
    ("", 3164544308),
    ("08", 422599524),
    ("17", 3168152998),
    ("9a", 3195034349),
    ("1c", 2651681383),
    ("4d76", 2447836956),
    ("52d5", 3854228105),
    ("91f7", 31066776),
    ("d627", 1806091603),
    ("30460b", 3808221797),
    ("56dcd6", 2157698265),
    ("d45233", 1721992661),
    ("6ab5f4", 2469105222),
    ("6753811c", 118283265),
    ("69b8c088", 3416318611),
    ("1e84af2d", 3315003572),
    ("46dc54be", 447346355),
    ("d07a6eea56", 4255445370),
    ("8683d5a4d8", 2390603402),
    ("b746bb77ce", 2048907743),
    ("6ca8bce599", 2177978500),
    ("5c5ee1a07381", 1036846008),
    ("085d731ce52e", 229980482),
    ("42fbf252b410", 3655585422),
    ("73e1ff569cce", 3502708029),
    ("5cbe9775549a52", 815120748),
    ("16823949882b36", 3056033698),
    ("5977f0a724f478", 587205227),
    ("d3a57c0ec00207", 2030937252),
    ("311b98759622d39a", 469635402),
    ("38d6f72820b48ae9", 3530274698),
    ("bb185df41203f799", 1974545809),
    ("80d43b3bae22a278", 3563570120),
    ("1ab5d0feabc361b299", 2706087434),
    ("8e4ac318202f06e63c", 1534654151),
    ("b6c0dd053fc4864cef", 2355554696),
    ("9a5f780daf50e11f55", 1400800912),
    ("226f391ff8dd4f521794", 3420325137),
    ("32892a75483a4a0269dd", 3427803584),
    ("06925cf4880e7e68383e", 1152407945),
    ("bd2c6338bfe978b7bf15", 3382479516),
];

/// SPEC 8.3, `HashTest.Hash64SmallValueSchema`: (input, `GetSliceHash64`).
const KEY_HASH_VALUES: [(&str, u64); 41] = [
    ("", 5999572062939766020),
    ("08", 583283813901344696),
    ("17", 16175549975585474943),
    ("9a", 16322991629225003903),
    ("1c", 13269285487706833447),
    ("4d76", 6859542833406258115),
    ("52d5", 4919611532550636959),
    ("91f7", 14199427467559720719),
    ("d627", 12292689282614532691),
    ("30460b", 11404699285340020889),
    ("56dcd6", 12404347133785524237),
    ("d45233", 15853805298481534034),
    ("6ab5f4", 16863488758399383382),
    ("6753811c", 9010661983527562386),
    ("69b8c088", 6611781377647041447),
    ("1e84af2d", 15290969111616346501),
    ("46dc54be", 7063754590279313623),
    ("d07a6eea56", 6384167718754869899),
    ("8683d5a4d8", 16874407254108011067),
    ("b746bb77ce", 16809880630149135206),
    ("6ca8bce599", 1249038833153141148),
    ("5c5ee1a07381", 17358142495308219330),
    ("085d731ce52e", 4237646583134806322),
    ("42fbf252b410", 4373664924115234051),
    ("73e1ff569cce", 12012981210634596029),
    ("5cbe9775549a52", 5716522398211028826),
    ("16823949882b36", 15604531309862565013),
    ("5977f0a724f478", 8601330687345614172),
    ("d3a57c0ec00207", 8088079329364056942),
    ("311b98759622d39a", 9844314944338447628),
    ("38d6f72820b48ae9", 10973293517982163143),
    ("bb185df41203f799", 9986007080564743219),
    ("80d43b3bae22a278", 1729303145008254458),
    ("1ab5d0feabc361b299", 13253403748084181481),
    ("8e4ac318202f06e63c", 7768754303876232188),
    ("b6c0dd053fc4864cef", 12439346786701492),
    ("9a5f780daf50e11f55", 10841838338450144690),
    ("226f391ff8dd4f521794", 12883919702069153152),
    ("32892a75483a4a0269dd", 12692903507676842188),
    ("06925cf4880e7e68383e", 6540985900674032620),
    ("bd2c6338bfe978b7bf15", 10551812464348219044),
];

// ---------------------------------------------------------------------------
// Random key sets (issue: 1,000 to 25,000 hashes, with and without adjacent
// duplicates, 1 to 27 bits per key including fractional values)

/// Blocks RocksDB's Ribbon policy (`NewRibbonFilterPolicy(mb / 1000.0)`,
/// compaction context, `optimize_filters_for_memory = false`, RocksDB
/// 11.9.0 on x86-64 Linux) wrote for random keys: (case, keys, millibits,
/// adjacent duplicates?, block length, FNV-1a-64 of the block). Keys are
/// the 8 little-endian bytes of SplitMix64 outputs from state
/// `0xfeed0000 + case`; with duplicates, each key after the first repeats
/// the previous one when the next output is divisible by 16. Keys and
/// settings come from SplitMix64 from state `0x51ed0000 + case`: keys =
/// 1000 + next % 24001, millibits = 1000 + next % 26001.
const RANDOM_SETS: [(u32, usize, u32, u8, usize, u64); 120] = [
    (0, 1094, 10526, 0, 1045, 0xc6e40a6fd074fc35),
    (1, 5178, 10745, 1, 4549, 0x9abd4c7f47c2ac2f),
    (2, 1576, 5864, 0, 869, 0x57615b16353f9181),
    (3, 19924, 17373, 1, 26693, 0x308279bd2af36d95),
    (4, 21378, 4473, 0, 8613, 0x6137658475b8d853),
    (5, 17691, 20431, 1, 27253, 0x427f2e3252937d16),
    (6, 24591, 26347, 0, 49893, 0x321cdfbdf8c8508e),
    (7, 15802, 23925, 1, 27877, 0xc339e299f436410e),
    (8, 11644, 26755, 0, 23909, 0x9d6dd2c8b3c10b16),
    (9, 16031, 12029, 1, 15461, 0x3e91ca043d99af00),
    (10, 16260, 2946, 0, 4341, 0x547fb9d395255fac),
    (11, 15092, 17085, 1, 19797, 0xc2b3047600354a94),
    (12, 16744, 17310, 0, 23925, 0x35b9c1d26b025f23),
    (13, 9252, 13392, 1, 9925, 0x9870bf02f9657704),
    (14, 2565, 15583, 0, 3413, 0xc06a128b36b2d405),
    (15, 22371, 10802, 1, 19733, 0x5e3757758dba36ba),
    (16, 22678, 25794, 0, 44869, 0xba030feec3920f1f),
    (17, 3967, 9438, 1, 3125, 0x8122c98f6292937c),
    (18, 6570, 16999, 0, 9269, 0x42338d202e005530),
    (19, 12392, 19157, 1, 18213, 0xa0b60d03d1459e6e),
    (20, 23903, 21302, 0, 40885, 0x9253ddb82a5945da),
    (21, 17615, 12675, 1, 18005, 0x25cd1908a14fbc03),
    (22, 18399, 12910, 0, 20373, 0xbda023871300bdc8),
    (23, 1961, 3379, 1, 597, 0x80e09b269bfe0185),
    (24, 4399, 24073, 0, 8485, 0xedd9e62ef87b9f15),
    (25, 13056, 5793, 1, 6325, 0x359213413cbaae26),
    (26, 15795, 18748, 0, 24165, 0x73f19543cb68a94d),
    (27, 13634, 22886, 1, 23189, 0x1fd576e57b4d57ba),
    (28, 17309, 9643, 0, 14661, 0x8b6f098eb790e078),
    (29, 16760, 9719, 1, 13493, 0x3f0569b0a0684983),
    (30, 9522, 21689, 0, 16597, 0x4553ae93a53d5430),
    (31, 21319, 23173, 1, 36917, 0x3b0e15e58d107ae9),
    (32, 9163, 18729, 0, 14085, 0x82f7da9a98c9cb87),
    (33, 12152, 22832, 1, 20661, 0x0416593c4174f981),
    (34, 5691, 1053, 0, 581, 0x582bc7f2386d340b),
    (35, 2673, 22985, 1, 4549, 0x28cadac99dfa2d39),
    (36, 5778, 1444, 0, 789, 0xb5897f828907b321),
    (37, 22010, 9480, 1, 17237, 0xd577febd610a4e10),
    (38, 23282, 23966, 0, 44085, 0x323a93161d755a77),
    (39, 13513, 13515, 1, 14533, 0xaddeddcc8fdf83b5),
    (40, 12049, 11274, 0, 11813, 0xb0aed4fe059bab19),
    (41, 16628, 4900, 1, 6981, 0x455ae9a5d986755d),
    (42, 14983, 17615, 0, 21845, 0x5d3da610b97e211c),
    (43, 9208, 16045, 1, 11669, 0x211f208928ad7f8e),
    (44, 23416, 12373, 0, 24949, 0x14f06024e08c6943),
    (45, 23121, 5849, 1, 11317, 0x9b1cbb3497243d4c),
    (46, 15867, 13194, 0, 17941, 0xb9faef74aed94c66),
    (47, 5611, 23355, 1, 9653, 0xdd36e46362137d1a),
    (48, 9491, 3990, 0, 3445, 0x92600c47bb5f51ab),
    (49, 17920, 5192, 1, 7893, 0x4375494f094a0de4),
    (50, 24426, 4978, 0, 11061, 0x2db957f202031c55),
    (51, 9591, 18241, 1, 13413, 0x50d6483263528f2b),
    (52, 3514, 22814, 0, 6533, 0xea4d6b0e7893282a),
    (53, 9454, 23562, 1, 16437, 0xad53192da634e040),
    (54, 13684, 7165, 0, 8677, 0xe3b947ecf3d0cb42),
    (55, 3257, 11233, 1, 3045, 0x91b1775ebe233aac),
    (56, 22561, 2705, 0, 5573, 0x15daa169e060d355),
    (57, 24521, 25589, 1, 45045, 0x2b30a617c1653d3a),
    (58, 13906, 1275, 0, 1653, 0x0e7f9d74bffe87a7),
    (59, 6744, 15693, 1, 8325, 0x0e6bb2428cfb1b00),
    (60, 12440, 24724, 0, 23925, 0x6f8516859093f1ed),
    (61, 8378, 22591, 1, 14261, 0xfa42deeb0f49584c),
    (62, 1602, 16788, 0, 2261, 0xac04259230821f7a),
    (63, 6107, 19971, 1, 9285, 0x86e828dc57e0f727),
    (64, 2142, 9581, 0, 1909, 0x7092a81dfb00e001),
    (65, 5400, 8167, 1, 3717, 0x80936ba0b0bddd22),
    (66, 11432, 5729, 0, 5845, 0x79ca22b4abeda1c7),
    (67, 3989, 9520, 1, 3253, 0xad4130d67c7933e4),
    (68, 18635, 24896, 0, 36053, 0x078d24598ade94ea),
    (69, 18309, 22994, 1, 31205, 0x6012dcab50bcf2fd),
    (70, 3529, 9787, 0, 3109, 0x88001ac923e7b52c),
    (71, 9521, 23480, 1, 16629, 0xa111da1ceb32a176),
    (72, 9075, 7639, 0, 6181, 0xf12de69cd72fd098),
    (73, 8501, 9573, 1, 6709, 0x4cbfc460cbc59bcb),
    (74, 3335, 25647, 0, 6613, 0xa496a86d7bb0f70a),
    (75, 10360, 8566, 1, 7317, 0x1f6468fc0e52d53d),
    (76, 20894, 2408, 0, 4661, 0x6b0302f2412e107e),
    (77, 5273, 25031, 1, 9685, 0xd9342eb7240fb46e),
    (78, 23389, 21408, 0, 40021, 0x6d3b2d9f6613c9e4),
    (79, 10454, 7225, 1, 6277, 0x224e21662e66b318),
    (80, 16151, 11644, 0, 16245, 0xc0bff303916cf6c9),
    (81, 14581, 17164, 1, 19509, 0x7640d447960e06b5),
    (82, 8750, 12069, 0, 9093, 0x1ae0678814d78b15),
    (83, 15667, 18190, 1, 21925, 0x297bc4b21d72f09d),
    (84, 18398, 14141, 0, 22053, 0xf46f400b1aed7186),
    (85, 22544, 2716, 1, 5189, 0x0b6b1150b62c8bf2),
    (86, 2350, 24797, 0, 4565, 0x80f713dc2838f7b7),
    (87, 8575, 13401, 1, 9221, 0x6ffc2a0de400e2dd),
    (88, 20686, 1562, 0, 2997, 0x9295f6ebbfca5a3b),
    (89, 19597, 22081, 1, 32485, 0x37bf8b7dae604420),
    (90, 14085, 5235, 0, 6661, 0x462794e530e2c6da),
    (91, 7054, 8641, 1, 5013, 0x375110426d60a87d),
    (92, 4738, 18068, 0, 7029, 0xdbbbd268650b42c5),
    (93, 18411, 22322, 1, 30741, 0xc3d30d08a593746c),
    (94, 12619, 1353, 0, 1573, 0xb19b8f8533572b7e),
    (95, 12063, 19666, 1, 18101, 0xba0ee8ac40f9bdf0),
    (96, 2595, 15309, 0, 3349, 0xe548c9e6d0af5a63),
    (97, 2509, 5795, 1, 1221, 0xe4030ca460f81da5),
    (98, 4997, 3916, 0, 1781, 0x6dc7c34c7317fcdf),
    (99, 14575, 15101, 1, 17349, 0xac71dba54a9e1439),
    (100, 5193, 9462, 0, 4373, 0xf91441f7193ef5e8),
    (101, 20533, 22221, 1, 34165, 0x180996cfcea28ad5),
    (102, 5043, 23982, 0, 9637, 0xde838cf0d6e00929),
    (103, 18997, 21151, 1, 30085, 0x4decee9997e28da9),
    (104, 1306, 20646, 0, 2277, 0x9444551af033f709),
    (105, 12958, 6079, 1, 6661, 0x85b9e115c39d8351),
    (106, 9693, 2180, 0, 1973, 0x132f75230b84b5d3),
    (107, 6388, 22131, 1, 10565, 0x55049a51d603c30e),
    (108, 13723, 7071, 0, 8597, 0x0d46913d15a07407),
    (109, 22931, 15972, 1, 28837, 0xe9ac5e18d775d3e5),
    (110, 23009, 25142, 0, 44901, 0x9dd12501458944a0),
    (111, 4013, 24856, 1, 7205, 0x68731e4bb1e83a6f),
    (112, 9144, 14470, 0, 11285, 0xf55b28e276daabb4),
    (113, 20358, 26016, 1, 38469, 0x0d9d5041655bf6a7),
    (114, 9903, 26073, 0, 20021, 0x3b937f9f446ebd5f),
    (115, 21987, 2883, 1, 5317, 0xddd9b6fe2193f750),
    (116, 22684, 15449, 0, 29269, 0x82f463f48c44b045),
    (117, 4662, 23312, 1, 8037, 0xa3be7db3e430337f),
    (118, 3271, 17349, 0, 4821, 0x92543d9641ad7900),
    (119, 16997, 1318, 1, 1941, 0x6450de2c5b33ecc2),
];

#[test]
fn random_key_sets_match_rocksdb() {
    let count = if cfg!(miri) { 2 } else { RANDOM_SETS.len() };
    for &(case, n, millibits, dups, len, digest) in &RANDOM_SETS[..count] {
        let mut settings = 0x51ed_0000u64 + u64::from(case);
        assert_eq!(1000 + (splitmix64(&mut settings) % 24_001) as usize, n);
        assert_eq!(
            1000 + (splitmix64(&mut settings) % 26_001) as u32,
            millibits
        );
        assert_eq!(
            rocksdb::millibits_per_key(f64::from(millibits) / 1000.0),
            millibits
        );
        let mut state = 0xfeed_0000u64 + u64::from(case);
        let mut keys: Vec<u64> = Vec::with_capacity(n);
        while keys.len() < n {
            let next = splitmix64(&mut state);
            let key = match keys.last() {
                Some(&last) if dups == 1 && next.is_multiple_of(16) => last,
                _ if dups == 1 && !keys.is_empty() => splitmix64(&mut state),
                _ => next,
            };
            keys.push(key);
        }
        let hashes: Vec<u64> = keys
            .iter()
            .map(|k| rocksdb::key_hash(&k.to_le_bytes()))
            .collect();
        let block = ribbon_block(&hashes, millibits);
        assert_eq!(
            (block.len(), fnv1a(&block)),
            (len, digest),
            "case {case}: n={n} mb={millibits}"
        );
        assert_members(&block, &hashes);
    }
}
