//! RocksDB's Standard128 Ribbon filter block (marker `0xFE`) on this
//! crate's banding, back-substitution and query kernels.
//!
//! RocksDB's "interleaved" solution layout is this crate's ICML layout with
//! 128-bit words: block `b` holds its columns one 16-byte little-endian word
//! after another, blocks `0..upper_start_block` with one column fewer than
//! the rest. Only the hashing differs (and the free rows, which RocksDB
//! leaves zero), so the kernels run unchanged behind [`RibbonProbes`].
//!
//! Block: `16 * num_segments` data bytes, then the trailer
//! `FE seed B0 B1 B2`: the marker, the seed ordinal (0..=255) and the number
//! of 128-slot blocks as a 24-bit little-endian integer.

use crate::backend::Backend;
use crate::band::{self, AddOutcome};
use crate::error::Error;
use crate::hash::FreeRows;
use crate::kernels::SolveKernel;
use crate::layout::{ColumnMasks, Geometry, Kind, Width};
use crate::probe::{Probe, Probes, probe_for};
use crate::word::Rows;

/// Trailer marker byte (`(char)-2`).
pub(super) const MARKER: u8 = 0xfe;
/// Trailer length in bytes.
pub(super) const TRAILER: usize = 5;
/// Most columns RocksDB's 32-bit result rows allow.
const MAX_COLUMNS: usize = 32;

/// RocksDB's raw 32-bit seed for a seed ordinal (`SetOrdinalSeed`).
pub(super) fn raw_seed(ordinal: u32) -> u32 {
    let mut t = u64::from(ordinal).wrapping_mul(0xc782_19a2_3eea_dd03);
    t ^= (t & 0xf0f0_f0f0_f0f0_f0f0) >> 4;
    t as u32
}

/// RocksDB's `FastRange64`: maps `h` into `[0, range)` by a multiply-high.
#[inline(always)]
fn fast_range64(h: u64, range: u64) -> u64 {
    ((u128::from(h) * u128::from(range)) >> 64) as u64
}

/// Turns a key hash into its equation, for one seed and block count
/// (RocksDB's `StandardRehasher` and `StandardHasher`, no smash).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Hasher {
    raw_seed: u64,
    num_starts: u64,
}

impl Hasher {
    /// `num_blocks >= 2`.
    pub(super) fn new(ordinal: u32, num_blocks: usize) -> Hasher {
        Hasher {
            raw_seed: u64::from(raw_seed(ordinal)),
            num_starts: (num_blocks as u64 * 128).saturating_sub(127),
        }
    }

    /// Start slot, coefficient row (bit 0 set) and 32 result bits.
    #[inline(always)]
    pub(super) fn equation(&self, hash: u64) -> (u64, u128, u32) {
        let h = (hash ^ self.raw_seed).wrapping_mul(0x6193_d459_236a_3a0d);
        let start = fast_range64(h, self.num_starts);
        let a = h.wrapping_mul(0xc28f_8282_2b65_0bed);
        let coeff = (u128::from(a) << 64) | u128::from(a ^ 0xc367_844a_6e52_731d) | 1;
        let result = a.swap_bytes() as u32;
        (start, coeff, result)
    }
}

/// The column layout of a block with `num_blocks >= 2` and `data_len`
/// data bytes, as RocksDB's reader (and writer) configures it: `upper =
/// ceil(S / B)` columns with `upper * B - S` blocks of one fewer first,
/// `S = data_len / 16`; at most 32 columns (extra bytes unused).
pub(super) fn geometry(num_blocks: usize, data_len: usize) -> Result<Geometry, Error> {
    let segments = data_len / 16;
    let upper = segments.div_ceil(num_blocks);
    let (lower, upper_start_block) = if upper == 0 {
        (0, num_blocks)
    } else if upper > MAX_COLUMNS {
        (MAX_COLUMNS - 1, 0)
    } else {
        (upper - 1, upper * num_blocks - segments)
    };
    Geometry::new(
        Kind::Standard,
        Width::W128,
        num_blocks,
        lower as u32,
        upper_start_block,
    )
}

/// RocksDB's hashing over a geometry, for the query kernels.
#[derive(Clone, Copy, Debug)]
pub(super) struct RibbonProbes {
    pub(super) geometry: Geometry,
    hasher: Hasher,
    masks: ColumnMasks,
}

impl RibbonProbes {
    pub(super) fn new(geometry: Geometry, ordinal: u32) -> RibbonProbes {
        RibbonProbes {
            hasher: Hasher::new(ordinal, geometry.num_blocks),
            masks: ColumnMasks::new(&geometry),
            geometry,
        }
    }
}

// SAFETY: `probe_for` keeps probes inside a validated geometry's payload
// (starts are below `num_starts`, which `Hasher::new` takes from the same
// block count), as for the native probes.
unsafe impl Probes<u128> for RibbonProbes {
    type Source = RibbonProbes;
    #[inline(always)]
    fn new(source: &RibbonProbes) -> RibbonProbes {
        *source
    }
    const RESULT: bool = true;
    #[inline(always)]
    fn probe(&self, hash: u64) -> Probe<u128> {
        let (start, coeff, result) = self.hasher.equation(hash);
        let mask = self.masks.for_start(start);
        probe_for(&self.geometry, start, coeff, u64::from(result) & mask, mask)
    }
    #[inline(always)]
    fn max_columns(&self) -> usize {
        self.geometry.max_columns()
    }
}

/// Bands `hashes` (adjacent duplicates skipped) with seed ordinals
/// `first_seed, first_seed + 1, ...` (mod 256) until one succeeds, then
/// writes the block into `out` (exactly `16 * segments + 5` bytes). Returns
/// `false` if all 256 seeds fail; `scratch` holds at least `3 * 128 *
/// num_blocks` words.
pub(super) fn build(
    hashes: &[u64],
    num_blocks: usize,
    segments: usize,
    scratch: &mut [u64],
    out: &mut [u8],
    backend: Backend,
) -> Result<bool, Error> {
    let geometry = geometry(num_blocks, segments * 16)?;
    let slots = geometry.num_slots();
    let too_small = Error::OutputTooSmall {
        needed: geometry.payload_bytes() + TRAILER,
        given: out.len(),
    };
    let (payload, trailer) = out.split_last_chunk_mut::<TRAILER>().ok_or(too_small)?;
    let payload = payload
        .get_mut(..geometry.payload_bytes())
        .ok_or(too_small)?;
    let given = scratch.len();
    let rows = scratch.get_mut(..3 * slots).ok_or(Error::ScratchTooSmall {
        needed: 3 * slots,
        given,
    })?;
    let solve = SolveKernel::new(backend, geometry.width).ok_or(Error::BackendUnavailable)?;
    let first_seed = hashes.first().map_or(0, |&h| h as u32 & 255);
    for attempt in 0..256 {
        let ordinal = (first_seed + attempt) & 255;
        let hasher = Hasher::new(ordinal, num_blocks);
        rows.fill(0);
        let consistent = super::distinct_runs(hashes).all(|hash| {
            let (start, coeff, result) = hasher.equation(hash);
            let outcome =
                band::insert::<u128, true>(rows, start as usize, coeff, u64::from(result));
            outcome != AddOutcome::Inconsistent
        });
        if consistent {
            solve.run(
                &geometry,
                FreeRows::Zero,
                Rows::new::<u128>(rows, true),
                payload,
            );
            let [b0, b1, b2, _] = (num_blocks as u32).to_le_bytes();
            *trailer = [MARKER, ordinal as u8, b0, b1, b2];
            return Ok(true);
        }
    }
    Ok(false)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fast_range64_samples() {
        // RocksDB's FastRange64Test (SPEC 8.5).
        assert_eq!(fast_range64(0x8000_0000_0000_0000, 2), 1);
        assert_eq!(fast_range64(2_635_249_153_387_078_803, 7), 1);
        assert_eq!(fast_range64(u64::MAX, 0x7fff_ffff), 0x7fff_fffe);
        assert_eq!(
            fast_range64(0x8000_0000_0000_0000, 420_000_000_002),
            210_000_000_001
        );
    }

    #[test]
    fn raw_seeds() {
        // SPEC 3.5.
        for (ordinal, raw) in [
            (0, 0),
            (1, 0x3de4_d003),
            (2, 0x7ad8_b106),
            (51, 0x80c6_0790),
            (255, 0xa1fd_27f2),
        ] {
            assert_eq!(raw_seed(ordinal), raw);
        }
    }

    #[test]
    fn worked_example_equations() {
        // SPEC 5: seed 51, 8 blocks (897 starts).
        let hasher = Hasher::new(51, 8);
        for (hash, start, coeff, result) in [
            (
                0x11d0_9843_b5b8_3333,
                446,
                0xb36a_e0b5_4d89_e0bb_700d_64ff_23db_93a7,
                0xb5e0_6ab3,
            ),
            (
                0xcf05_85c3_8c1a_4c9b,
                876,
                0x015c_9929_e2ed_f263_c23b_1d63_8cbf_817f,
                0x2999_5c01,
            ),
            (
                0x61cc_4478_7aab_dde1,
                379,
                0x1419_ebb6_9a97_aaf9_d77e_6ffc_f4c5_d9e5,
                0xb6eb_1914,
            ),
        ] {
            assert_eq!(hasher.equation(hash), (start, coeff, result));
        }
    }

    #[test]
    fn reader_layouts() {
        // 55 segments over 8 blocks: 1 block of 6 columns, then 7 of 7.
        let g = geometry(8, 880).unwrap();
        assert_eq!((g.lower_columns, g.upper_start_block), (6, 1));
        assert_eq!(g.block_word_offset(2), 13);
        // Leftover bytes below a segment are ignored; more than 32
        // columns are capped.
        assert_eq!(geometry(8, 895).unwrap(), g);
        let g = geometry(2, 16 * 70).unwrap();
        assert_eq!((g.lower_columns, g.upper_start_block), (31, 0));
        // No segment at all: every block has zero columns.
        let g = geometry(3, 15).unwrap();
        assert_eq!(g.total_words(), Some(0));
        // 5000 blocks in 8 segments.
        let g = geometry(5000, 128).unwrap();
        assert_eq!((g.lower_columns, g.upper_start_block), (0, 4992));
    }
}
