//! RocksDB's filter sizing: the Ribbon FP-rate target derived from bits per
//! key, the Ribbon slot count and column split, the FastLocalBloom length
//! and probe count. The floating-point steps follow RocksDB's own double
//! arithmetic operation for operation (Rust never fuses or reorders float
//! operations), with the libm calls of `libm.rs`.

use super::libm;
use crate::error::Error;

/// Smallest `millibits_per_key` RocksDB uses (bits per key below 1 are
/// raised to 1; below 0.5 mean no filter).
pub(super) const MIN_MILLIBITS: u32 = 1_000;
/// Largest `millibits_per_key` RocksDB uses (bits per key are capped at 100).
pub(super) const MAX_MILLIBITS: u32 = 100_000;
/// Above this many entries RocksDB writes FastLocalBloom instead of Ribbon.
pub(super) const MAX_RIBBON_ENTRIES: usize = 950_000_000;

/// Checks a `millibits_per_key` argument.
pub(super) fn check_millibits(millibits: u32) -> Result<(), Error> {
    if (MIN_MILLIBITS..=MAX_MILLIBITS).contains(&millibits) {
        Ok(())
    } else {
        Err(Error::InvalidBitsPerKey)
    }
}

/// `2^e` for `-1022 <= e <= 1023`, exactly.
fn pow2(e: i32) -> f64 {
    f64::from_bits(((1023 + e) as u64) << 52)
}

/// FastLocalBloom probes for a bits-per-key setting (`ChooseNumProbes`).
pub(super) fn num_probes(millibits: u32) -> u32 {
    match millibits {
        0..=2080 => 1,
        2081..=3580 => 2,
        3581..=5100 => 3,
        5101..=6640 => 4,
        6641..=8300 => 5,
        8301..=10070 => 6,
        10071..=11720 => 7,
        11721..=14001 => 8,
        14002..=16050 => 9,
        16051..=18300 => 10,
        18301..=22001 => 11,
        22002..=25501 => 12,
        25502..=50000 => (millibits - 1) / 2000 - 1,
        _ => 24,
    }
}

/// RocksDB's `desired_one_in_fp_rate` for `bpk = millibits / 1000`:
/// `1 / CacheLocalFpRate(bpk, num_probes, 512)`, the FP rate of a
/// cache-local Bloom filter with that many bits per key, which the Ribbon
/// filter then matches.
pub(super) fn one_in_fp_rate(millibits: u32) -> f64 {
    let bits_per_key = f64::from(millibits) / 1000.0;
    let probes = num_probes(millibits);
    // CacheLocalFpRate(bits_per_key, probes, 512): average the standard FP
    // rate of a line one standard deviation more and less crowded than
    // average.
    let keys_per_line = 512.0 / bits_per_key;
    let stddev = libm::sqrt(keys_per_line);
    let crowded = standard_fp_rate(512.0 / (keys_per_line + stddev), probes);
    let uncrowded = standard_fp_rate(512.0 / (keys_per_line - stddev), probes);
    1.0 / ((crowded + uncrowded) / 2.0)
}

/// `StandardFpRate(bits_per_key, k) = pow(1 - exp(-k / bits_per_key), k)`.
fn standard_fp_rate(bits_per_key: f64, probes: u32) -> f64 {
    let k = f64::from(probes);
    libm::pow(1.0 - libm::exp(-k / bits_per_key), k)
}

/// Empirical slot counts for 2^i entries at a 1-in-20 chance of a failed
/// seed (`BandingConfigHelper1<kOneIn20, 128, false, false>`); 0 below 2^8.
const KNOWN_SLOTS: [f64; 18] = [
    0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 248.851, 499.532, 1001.26, 2003.97, 4005.59, 8000.39,
    15966.6, 31828.1, 63447.3, 126506.0,
];

/// Entries fitting 2^i slots: the table, extrapolated above 2^17.
fn known_slots(i: u32) -> f64 {
    match KNOWN_SLOTS.get(i as usize) {
        Some(&v) => v,
        None => {
            let last_factor = 131_072.0 / 126_506.0;
            let base_factor = last_factor - 17.0 * 0.0038;
            pow2(i as i32) / (base_factor + f64::from(i) * 0.0038)
        }
    }
}

/// RocksDB's `GetNumSlots`: log-linear interpolation of the table
/// (`1 <= entries <= 950,000,000`).
fn get_num_slots(entries: u32) -> u32 {
    let n = f64::from(entries);
    // RocksDB's literal, not the exact LOG2_E.
    #[allow(clippy::approx_constant)]
    let log2 = libm::ln(n) * 1.4426950409;
    let mut i = (log2 + 0.5) as u32;
    let mut lower = known_slots(i);
    if i == 0 || lower == 0.0 {
        return 256;
    }
    let upper = if n < lower {
        let upper = lower;
        i -= 1;
        lower = known_slots(i);
        upper
    } else {
        known_slots(i + 1)
    };
    let portion = (n - lower) / (upper - lower);
    let slots = pow2(i as i32);
    (portion * slots + slots + 0.999999999) as u32
}

/// Ribbon slots for `entries` (`NumEntriesToNumSlots`): a multiple of 128,
/// at least 256.
pub(super) fn num_slots(entries: usize) -> usize {
    let entries = u32::try_from(entries.clamp(1, MAX_RIBBON_ENTRIES)).unwrap_or(u32::MAX);
    let slots = get_num_slots(entries).div_ceil(128) as usize * 128;
    slots.max(256)
}

/// Ribbon data segments (16 bytes each) for `num_slots` slots and the FP
/// target `one_in` (`GetBytesForOneInFpRate / 16`). `bias` (the upper half
/// of the first key hash) decides the rounding of the number of blocks with
/// fewer columns.
pub(super) fn ribbon_segments(num_slots: usize, one_in: f64, bias: u32) -> usize {
    let blocks = num_slots / 128;
    let num_starts = num_slots.saturating_sub(127);
    let fp = 1.0 / one_in;
    if !(one_in > 1.0 && fp < 1.0) {
        return 1;
    }
    if one_in > 4_294_967_295.0 {
        return blocks * 32; // every block has the maximum of 32 columns
    }
    let rounded = one_in as u32;
    let lower_columns = 31 - rounded.leading_zeros(); // floor(log2), rounded >= 1
    let lower_fp = pow2(-(lower_columns as i32));
    let upper_fp = pow2(-(lower_columns as i32) - 1);
    let lower_portion = (fp - upper_fp) / (lower_fp - upper_fp);
    let rounding_bias = (f64::from(bias) + 0.5) / 4_294_967_296.0;
    let upper_start_block = ((lower_portion * num_starts as f64 + rounding_bias) / 128.0) as usize;
    blocks * lower_columns as usize + blocks.saturating_sub(upper_start_block)
}

/// FastLocalBloom block length for `entries`, trailer included: data of
/// `entries * millibits / 8000` bytes rounded up to whole 64-byte lines.
pub(super) fn bloom_bytes(entries: usize, millibits: u32) -> u64 {
    let raw = (entries as u128 * u128::from(millibits)).div_ceil(8000);
    let raw = raw.min(0xffff_ffc0) as u64;
    ((raw + 63) & !63) + 5
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slot_counts() {
        // SPEC 3.2 (values of GetNumSlots and NumEntriesToNumSlots).
        for (n, get, slots) in [
            (1, 256, 256),
            (2, 256, 256),
            (10, 256, 256),
            (100, 256, 256),
            (128, 256, 256),
            (200, 231, 256),
            (232, 248, 256),
            (233, 248, 256),
            (250, 258, 384),
            (251, 259, 384),
            (300, 309, 384),
            (500, 513, 640),
            (1000, 1023, 1024),
            (1001, 1024, 1024),
            (2000, 2044, 2048),
            (2087, 2133, 2176),
            (5000, 5116, 5120),
            (10000, 10249, 10368),
            (25000, 25715, 25728),
            (63447, 65536, 65536),
            (63448, 65537, 65664),
            (100000, 103525, 103552),
            (126506, 131072, 131072),
            (126507, 131074, 131200),
            (200000, 207780, 207872),
            (1000000, 1047490, 1047552),
            (10000000, 10604781, 10604800),
            (100000000, 107313795, 107313920),
            (950000000, 1031068581, 1031068672),
        ] {
            assert_eq!(get_num_slots(n), get, "GetNumSlots({n})");
            assert_eq!(num_slots(n as usize), slots, "num_slots({n})");
        }
    }

    #[test]
    fn probe_counts() {
        for (millibits, probes) in [
            (1000, 1),
            (2080, 1),
            (2081, 2),
            (5500, 4),
            (10000, 6),
            (15700, 9),
            (25501, 12),
            (25502, 11),
            (27000, 12),
            (28001, 13),
            (50000, 23),
            (50001, 24),
            (100000, 24),
        ] {
            assert_eq!(num_probes(millibits), probes, "{millibits}");
        }
    }

    #[test]
    fn worked_example() {
        // SPEC 5: n = 1000 at 10 bits per key, bias 0x11d09843.
        assert_eq!(one_in_fp_rate(10_000).to_bits(), 0x405a_39c0_28d7_e9d4);
        assert_eq!(
            ribbon_segments(1024, one_in_fp_rate(10_000), 0x11d0_9843),
            55
        );
        assert_eq!(bloom_bytes(1000, 10_000), 1285);
    }
}
