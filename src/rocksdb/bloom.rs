//! RocksDB's FastLocalBloom filter block (format_version 5 "new Bloom",
//! marker `0xFF`): each key sets `num_probes` bits within one 64-byte cache
//! line.
//!
//! Block: data of whole 64-byte lines, then the trailer
//! `FF 00 probes 00 00` (marker, sub-implementation 0, the probe count in
//! bits 0-4 with bits 5-7 = log2(line bytes) - 6 = 0, two reserved zeros).

use crate::error::Error;

/// Trailer marker byte (`(char)-1`).
pub(super) const MARKER: u8 = 0xff;
/// Trailer length in bytes.
pub(super) const TRAILER: usize = 5;
const LINE: usize = 64;
/// The probe sequence's multiplier (`0x9e3779b9`, golden ratio).
const PROBE_STEP: u32 = 0x9e37_79b9;

/// RocksDB's `FastRange32`: maps `h` into `[0, range)` by a multiply-high.
#[inline(always)]
fn fast_range32(h: u32, range: u32) -> u32 {
    ((u64::from(h) * u64::from(range)) >> 32) as u32
}

/// The 64-byte line a hash maps to, as a byte offset: `FastRange32` of the
/// lower hash half over `lines`.
#[inline(always)]
fn line_offset(hash: u64, lines: u32) -> usize {
    fast_range32(hash as u32, lines) as usize * LINE
}

/// Writes the block for `hashes` into `out[..len]`, `len` as computed by
/// `sizing::bloom_bytes` (at least one line plus the trailer).
pub(super) fn build(hashes: &[u64], probes: u32, len: usize, out: &mut [u8]) -> Result<(), Error> {
    let too_small = Error::OutputTooSmall {
        needed: len,
        given: out.len(),
    };
    let out = out.get_mut(..len).ok_or(too_small)?;
    let (data, trailer) = out.split_last_chunk_mut::<TRAILER>().ok_or(too_small)?;
    data.fill(0);
    let lines = u32::try_from(data.len() / LINE).map_err(|_| Error::TooLarge)?;
    for &hash in hashes {
        let at = line_offset(hash, lines);
        let Some(line) = data
            .get_mut(at..at + LINE)
            .and_then(|l| <&mut [u8; LINE]>::try_from(l).ok())
        else {
            continue; // unreachable: the offset is below lines * 64
        };
        let mut x = (hash >> 32) as u32;
        for _ in 0..probes {
            // The top 9 bits pick one of the line's 512 bits.
            line[(x >> 26) as usize] |= 1 << ((x >> 23) & 7);
            x = x.wrapping_mul(PROBE_STEP);
        }
    }
    *trailer = [MARKER, 0, probes as u8, 0, 0];
    Ok(())
}

/// A validated FastLocalBloom block: its data lines and probe count.
#[derive(Clone, Copy, Debug)]
pub(super) struct Bloom<'a> {
    data: &'a [u8],
    lines: u32,
    probes: u32,
}

impl<'a> Bloom<'a> {
    /// `data` holds at least one line (trailing bytes short of a line are
    /// ignored, as RocksDB does); `1 <= probes <= 30`.
    pub(super) fn new(data: &'a [u8], probes: u32) -> Result<Bloom<'a>, Error> {
        let lines = u32::try_from(data.len() / LINE).map_err(|_| Error::TooLarge)?;
        if lines == 0 {
            // RocksDB never writes this and would read past the block.
            return Err(Error::Truncated {
                needed: LINE,
                given: data.len(),
            });
        }
        Ok(Bloom {
            data,
            lines,
            probes,
        })
    }

    pub(super) fn probes(&self) -> u32 {
        self.probes
    }

    /// Whether every probed bit of `hash` is set.
    #[inline]
    pub(super) fn contains(&self, hash: u64) -> bool {
        let at = line_offset(hash, self.lines);
        let Some(line) = self
            .data
            .get(at..at + LINE)
            .and_then(|l| <&[u8; LINE]>::try_from(l).ok())
        else {
            return true; // unreachable: the offset is below lines * 64
        };
        let mut x = (hash >> 32) as u32;
        let mut all = 1u8;
        for _ in 0..self.probes {
            all &= line[(x >> 26) as usize] >> ((x >> 23) & 7);
            x = x.wrapping_mul(PROBE_STEP);
        }
        all & 1 == 1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fast_range32_samples() {
        // RocksDB's FastRange32Test (SPEC 8.5).
        assert_eq!(fast_range32(0x8000_0000, 2), 1);
        assert_eq!(fast_range32(613_566_757, 7), 1);
        assert_eq!(fast_range32(1_227_133_514, 7), 2);
        assert_eq!(fast_range32(0xffff_ffff, 0x8000_0000), 0x7fff_ffff);
    }
}
