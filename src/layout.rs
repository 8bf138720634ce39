//! ICML index math and the serialized header.
//!
//! The solution is stored in blocks of `w` slots. Block `b` holds its columns
//! one `w`-bit word after another (interleaved column-major layout, paper
//! section 5.2). The first `upper_start_block` blocks hold `lower_columns`
//! columns, the rest `lower_columns + 1`, which makes any fractional number
//! of columns per slot possible (paper section 5.1).
//!
//! Serialized filter: a 48-byte little-endian header, then the ICML words in
//! little-endian order, block by block.
//!
//! | offset | size | field |
//! |---|---|---|
//! | 0 | 4 | magic `b"RbnK"` |
//! | 4 | 1 | format version (2) |
//! | 5 | 1 | kind: 0 Homogeneous, 1 Standard, 2 StandardSmash (3, Bumped, has its own layout: `src/bumped_layout.rs`) |
//! | 6 | 1 | ribbon width in bits: 64 or 128 |
//! | 7 | 1 | `lower_columns`, 0..=64 |
//! | 8 | 4 | seed (u32) |
//! | 12 | 4 | reserved, must be 0 |
//! | 16 | 8 | number of key hashes the filter was built from (u64) |
//! | 24 | 8 | `num_blocks` (u64) |
//! | 32 | 8 | `upper_start_block` (u64) |
//! | 40 | 8 | checksum (u64) of every other byte of the structure ([`checksum`]) |
//!
//! Every serialized structure of the crate (filters of every kind, Bumped
//! layers, retrieval structures) starts with these 48 bytes' layout,
//! written and read only here ([`RawHeader`]): the magic by family
//! ([`Family`]), bytes 4..24 alike, bytes 24..32 the blocks (the layers
//! of Bumped structures), bytes 32..40 `upper_start_block` (0 where a
//! kind has none), the checksum alike. Version 1 (a 40-byte header
//! without checksum, before 0.1.0 was published) is refused with
//! [`Error::UnsupportedVersion`].

use crate::error::Error;
use crate::key_hash::{hash_key, hash_key_with_seed};

/// Ribbon width `w`: the number of slots one key's equation spans, and the
/// size of an ICML word. The default is [`Width::W64`], the faster one.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[repr(u16)]
pub enum Width {
    /// 64-bit ribbon: faster, about 10 % space overhead (Homogeneous).
    #[default]
    W64,
    /// 128-bit ribbon: about 5 % space overhead (Homogeneous), slower.
    W128,
}

impl Width {
    /// The width in bits (64 or 128).
    pub const fn bits(self) -> u32 {
        match self {
            Width::W64 => 64,
            Width::W128 => 128,
        }
    }

    /// The width for a bit count, if it is 64 or 128.
    pub const fn from_bits(bits: u32) -> Option<Width> {
        match bits {
            64 => Some(Width::W64),
            128 => Some(Width::W128),
            _ => None,
        }
    }

    /// Bytes of one ICML word.
    pub(crate) const fn word_bytes(self) -> usize {
        self.bits() as usize / 8
    }
}

/// Which Ribbon filter construction to use. The default is
/// [`Kind::Homogeneous`], which never fails to build.
///
/// Non-exhaustive: a later release may add a kind without a breaking
/// change, so a `match` outside this crate needs a wildcard arm.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[repr(u16)]
#[non_exhaustive]
pub enum Kind {
    /// Homogeneous Ribbon (paper section 4): solves `h(x)·Z = 0`; never fails
    /// to build, FP rate slightly above `2^-r`. The default choice.
    #[default]
    Homogeneous,
    /// Standard Ribbon (paper section 3): stores an `r`-bit fingerprint per
    /// key; FP rate exactly `2^-r`; a build can fail and is retried with the
    /// next seed. Space overhead grows slowly with the number of keys.
    Standard,
    /// Standard Ribbon with "smash" (paper section 3.1): more weight on the
    /// first and last start positions, which saves space for small filters.
    StandardSmash,
    /// Bumped Ribbon (Dillinger, Hübschle-Schneider, Sanders and Walzer,
    /// SEA 2022): a stack of Standard Ribbon layers, each but the last
    /// overloaded, whose buckets *bump* the keys that do not fit to the
    /// next, much smaller layer. 0.1-0.2 % over the information-theoretic
    /// minimum at 7-8 bits per key (w = 64 about 0.2 %, w = 128 about
    /// 0.1 %), FP rate exactly `2^-r`. Its size is known once it is built:
    /// [`crate::Plan::filter_bytes`] is the most a build writes, and
    /// [`crate::FilterRef::filter_bytes`] what it wrote. It has no
    /// fixed-size plans and no incremental banding
    /// ([`crate::Error::Unsupported`]).
    Bumped,
}

impl Kind {
    /// The kind's code in the serialized header and the C ABI.
    pub const fn code(self) -> u32 {
        match self {
            Kind::Homogeneous => 0,
            Kind::Standard => 1,
            Kind::StandardSmash => 2,
            Kind::Bumped => 3,
        }
    }

    /// The kind for a header / C ABI code.
    pub const fn from_code(code: u32) -> Option<Kind> {
        match code {
            0 => Some(Kind::Homogeneous),
            1 => Some(Kind::Standard),
            2 => Some(Kind::StandardSmash),
            3 => Some(Kind::Bumped),
            _ => None,
        }
    }

    /// Whether keys carry fingerprint result bits (Standard kinds).
    pub const fn is_standard(self) -> bool {
        !matches!(self, Kind::Homogeneous)
    }

    /// The smash value `ℓ` for this kind and width: starts are drawn from
    /// `num_starts + 2ℓ` values and clamped (paper section 3.1).
    pub(crate) const fn smash(self, width: Width) -> u64 {
        match self {
            Kind::StandardSmash => width.bits() as u64 / 4,
            _ => 0,
        }
    }
}

/// The most keys a filter's header may state, the same on every platform
/// ([`crate::MAX_KEYS`] on 64-bit targets).
pub(crate) const MAX_KEYS_U64: u64 = 1 << 40;

/// Most columns (solution bits per slot) a filter may have: result rows are
/// 64-bit words.
pub(crate) const MAX_COLUMNS: u32 = 64;

/// The shape of a filter's solution: everything needed for ICML index math
/// and hash expansion except the seed.
///
/// Plain bytes, as [`crate::probe::Parts`] needs: `#[repr(C)]` with no
/// padding (two `usize`, a `u32`, two 2-byte enums).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(C)]
pub(crate) struct Geometry {
    pub(crate) num_blocks: usize,
    pub(crate) upper_start_block: usize,
    pub(crate) lower_columns: u32,
    pub(crate) kind: Kind,
    pub(crate) width: Width,
}

impl Geometry {
    /// Builds a geometry, checking every invariant the query relies on and
    /// that every derived size fits in `usize`.
    pub(crate) fn new(
        kind: Kind,
        width: Width,
        num_blocks: usize,
        lower_columns: u32,
        upper_start_block: usize,
    ) -> Result<Geometry, Error> {
        let g = Geometry {
            kind,
            width,
            num_blocks,
            lower_columns,
            upper_start_block,
        };
        let consistent = lower_columns <= MAX_COLUMNS
            && upper_start_block <= num_blocks
            && (lower_columns < MAX_COLUMNS || upper_start_block == num_blocks)
            && (num_blocks > 0 || lower_columns == 0);
        if !consistent {
            return Err(Error::CorruptHeader);
        }
        // Sizes that must not overflow: slots (u64 math in hashing), words
        // and bytes (usize indexing), and the payload's bits as a u64. The
        // serialized length must fit in `isize` (the most one Rust slice or
        // C object holds).
        num_blocks
            .checked_mul(width.bits() as usize)
            .ok_or(Error::TooLarge)?;
        let payload_bytes = g
            .total_words()
            .ok_or(Error::TooLarge)?
            .checked_mul(width.word_bytes())
            .ok_or(Error::TooLarge)?;
        let fits = payload_bytes
            .checked_add(HEADER_BYTES)
            .is_some_and(|len| len <= isize::MAX as usize)
            && (payload_bytes as u64) <= u64::MAX / 8;
        if !fits {
            return Err(Error::TooLarge);
        }
        Ok(g)
    }

    /// [`Error::CorruptHeader`] unless this crate's plans can make the
    /// geometry: at least half a column per block on average, the least any
    /// plan makes (one bit per key). Fewer would let a few bytes claim a vast
    /// filter of blocks without columns, which match every key, and whose
    /// slot count overflows 32-bit targets only. (RocksDB's layouts, which
    /// are RocksDB's to size, are not held to this.)
    pub(crate) fn check_native(self) -> Result<Geometry, Error> {
        if !half_a_column_per_block(
            self.num_blocks as u64,
            self.lower_columns,
            self.upper_start_block as u64,
        ) {
            return Err(Error::CorruptHeader);
        }
        Ok(self)
    }

    /// Ribbon width in bits.
    #[inline(always)]
    pub(crate) fn w(&self) -> usize {
        self.width.bits() as usize
    }

    /// Number of slots `m` (rows of the solution).
    #[inline(always)]
    pub(crate) fn num_slots(&self) -> usize {
        self.num_blocks * self.w()
    }

    /// Number of possible start positions, `m - w + 1` (0 for an empty filter).
    #[inline(always)]
    pub(crate) fn num_starts(&self) -> u64 {
        if self.num_blocks == 0 {
            0
        } else {
            (self.num_slots() - self.w() + 1) as u64
        }
    }

    /// Number of ICML words of the payload, if it fits in `usize`.
    pub(crate) fn total_words(&self) -> Option<usize> {
        let lower = self.num_blocks.checked_mul(self.lower_columns as usize)?;
        lower.checked_add(self.num_blocks - self.upper_start_block)
    }

    /// Payload bytes (header excluded); callers have validated the geometry.
    pub(crate) fn payload_bytes(&self) -> usize {
        self.total_words().unwrap_or(0) * self.width.word_bytes()
    }

    /// Serialized length, header included.
    pub(crate) fn filter_bytes(&self) -> usize {
        HEADER_BYTES + self.payload_bytes()
    }

    /// The most columns any block has: the loop bound of the SIMD query
    /// kernels, the same for every key so that it predicts perfectly.
    #[inline(always)]
    pub(crate) fn max_columns(&self) -> usize {
        self.lower_columns as usize + usize::from(self.upper_start_block < self.num_blocks)
    }

    /// Columns stored in block `block`.
    #[inline(always)]
    pub(crate) fn block_columns(&self, block: usize) -> u32 {
        self.lower_columns + u32::from(block >= self.upper_start_block)
    }

    /// Index of the first ICML word of block `block`. The words of block
    /// `block + 1` start right after block `block`'s columns.
    #[inline(always)]
    pub(crate) fn block_word_offset(&self, block: usize) -> usize {
        block * self.lower_columns as usize + block.saturating_sub(self.upper_start_block)
    }

    /// First slot of the blocks with `lower_columns + 1` columns.
    #[inline(always)]
    pub(crate) fn upper_start_slot(&self) -> u64 {
        (self.upper_start_block * self.w()) as u64
    }
}

/// The rule of [`Geometry::check_native`] on a header's raw fields (blocks,
/// lower columns, first upper block), in integers wide enough for any of
/// them, so that it gives the same answer on every target: the words
/// ([`Geometry::total_words`]) are at least half the blocks.
fn half_a_column_per_block(blocks: u64, lower_columns: u32, upper_start_block: u64) -> bool {
    let words = u128::from(blocks) * u128::from(lower_columns)
        + u128::from(blocks.saturating_sub(upper_start_block));
    words * 2 >= u128::from(blocks)
}

/// Mask of the low `columns` bits (`columns <= 64`).
#[inline(always)]
pub(crate) fn column_mask(columns: u32) -> u64 {
    if columns == 0 {
        0
    } else {
        u64::MAX >> (64 - columns)
    }
}

/// The column masks of a geometry's starts: starts in lower blocks check
/// `lower_columns` columns, starts in upper blocks one more. Native and
/// RocksDB probes both take their masks from here (the vector expansion
/// broadcasts the same three values).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(C)]
pub(crate) struct ColumnMasks {
    /// First start slot of the upper blocks.
    pub(crate) upper_start_slot: u64,
    /// Mask of a lower block's columns.
    pub(crate) lower: u64,
    /// Mask of an upper block's columns.
    pub(crate) upper: u64,
}

impl ColumnMasks {
    pub(crate) fn new(g: &Geometry) -> ColumnMasks {
        ColumnMasks {
            upper_start_slot: g.upper_start_slot(),
            lower: column_mask(g.lower_columns),
            upper: column_mask((g.lower_columns + 1).min(MAX_COLUMNS)),
        }
    }

    /// Mask of the columns of the block `start` lies in.
    #[inline(always)]
    pub(crate) fn for_start(&self, start: u64) -> u64 {
        if start >= self.upper_start_slot {
            self.upper
        } else {
            self.lower
        }
    }
}

/// Serialized header length in bytes (the checksum included).
pub const HEADER_BYTES: usize = 48;
/// Where the header's checksum lies: its last 8 bytes.
const CHECKSUM_AT: usize = 40;
const MAGIC: [u8; 4] = *b"RbnK";
/// Magic of a serialized retrieval structure (`src/retrieval.rs`).
const RETRIEVAL_MAGIC: [u8; 4] = *b"RbnR";
/// The format version: 2 since structures carry a checksum.
pub(crate) const VERSION: u8 = 2;

/// What a serialized structure holds: a filter (magic `RbnK`) or a
/// retrieval structure (`RbnR`). Both lay their headers out alike, so
/// that each refuses the other's bytes by magic alone.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Family {
    Filter,
    Retrieval,
}

impl Family {
    pub(crate) const fn magic(self) -> [u8; 4] {
        match self {
            Family::Filter => MAGIC,
            Family::Retrieval => RETRIEVAL_MAGIC,
        }
    }

    /// The family whose magic `h` starts with.
    pub(crate) fn of(h: &[u8]) -> Option<Family> {
        let magic = h.get(..4)?;
        [Family::Filter, Family::Retrieval]
            .into_iter()
            .find(|f| f.magic() == magic)
    }
}

/// The decoded header of a serialized filter.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct Header {
    pub(crate) geometry: Geometry,
    pub(crate) seed: u32,
    pub(crate) num_keys: u64,
}

impl Header {
    pub(crate) fn encode(&self) -> [u8; HEADER_BYTES] {
        let g = &self.geometry;
        RawHeader {
            family: Family::Filter,
            kind: g.kind,
            width: g.width,
            lower_columns: g.lower_columns,
            seed: self.seed,
            num_keys: self.num_keys,
            blocks_or_layers: g.num_blocks as u64,
            upper_start_block: g.upper_start_block as u64,
        }
        .encode()
    }

    /// Decodes and validates the header of `bytes` (the whole serialized
    /// filter) against its length.
    pub(crate) fn decode(bytes: &[u8]) -> Result<Header, Error> {
        let header = Header::decode_prefix(bytes)?;
        exact_length(header.geometry.filter_bytes(), bytes.len())?;
        Ok(header)
    }

    /// Decodes and validates the header at the start of `bytes`, which may
    /// be shorter or longer than the filter: [`RawHeader::decode`]'s checks,
    /// then a filter's own.
    pub(crate) fn decode_prefix(bytes: &[u8]) -> Result<Header, Error> {
        let raw = RawHeader::decode(bytes, Some(Family::Filter))?;
        let (num_keys, blocks, upper_start) =
            (raw.num_keys, raw.blocks_or_layers, raw.upper_start_block);
        // What no plan makes, refused before any conversion to `usize` so
        // that the answer is the same on every target: a Bumped filter
        // (it has a layer table instead of one geometry:
        // `src/bumped_layout.rs` reads it), keys without blocks, the upper
        // blocks past the end, and less than half a column per block
        // ([`Geometry::check_native`]'s rule).
        if raw.kind == Kind::Bumped
            || blocks == 0 && num_keys != 0
            || upper_start > blocks
            || !half_a_column_per_block(blocks, raw.lower_columns, upper_start)
        {
            return Err(Error::CorruptHeader);
        }
        let num_blocks = usize::try_from(blocks).map_err(|_| Error::TooLarge)?;
        let upper_start_block = usize::try_from(upper_start).map_err(|_| Error::CorruptHeader)?;
        let geometry = Geometry::new(
            raw.kind,
            raw.width,
            num_blocks,
            raw.lower_columns,
            upper_start_block,
        )?;
        Ok(Header {
            geometry,
            seed: raw.seed,
            num_keys,
        })
    }
}

/// [`Error::Truncated`] or [`Error::TrailingBytes`] unless `given` bytes
/// are exactly a filter of `len` bytes (every kind's `from_bytes` check).
pub(crate) fn exact_length(len: usize, given: usize) -> Result<(), Error> {
    if given < len {
        Err(Error::Truncated { needed: len, given })
    } else if given > len {
        Err(Error::TrailingBytes {
            expected: len,
            given,
        })
    } else {
        Ok(())
    }
}

/// The fields of the 48-byte header, the same for every family and kind:
/// the one place that knows where each lies ([`RawHeader::encode`] writes
/// them, [`RawHeader::decode`] reads them). What a
/// field may hold beyond the checks every kind shares is for the header of
/// each family and kind to say: [`Header`] (filters),
/// `retrieval::RetrievalHeader` (retrieval structures, its lower columns
/// the value bits) and `bumped_layout::BumpedHeader` (Bumped layers of
/// either family).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct RawHeader {
    /// The magic (bytes 0..4); the version (byte 4) is [`VERSION`].
    pub(crate) family: Family,
    /// The kind code (byte 5).
    pub(crate) kind: Kind,
    /// The ribbon width in bits (byte 6).
    pub(crate) width: Width,
    /// Columns of the lower blocks, a retrieval structure's value bits
    /// (byte 7).
    pub(crate) lower_columns: u32,
    /// Bytes 8..12; bytes 12..16 are reserved zeros.
    pub(crate) seed: u32,
    /// Bytes 16..24.
    pub(crate) num_keys: u64,
    /// Bytes 24..32: the blocks of a structure of one layer, the layers of
    /// a Bumped one.
    pub(crate) blocks_or_layers: u64,
    /// Bytes 32..40: a filter's first block of `lower_columns + 1`
    /// columns; 0 where a kind has no such field. The checksum (40..48)
    /// follows: [`seal`] writes it, [`verify`] checks it.
    pub(crate) upper_start_block: u64,
}

impl RawHeader {
    /// The header's bytes, its checksum zero until [`seal`].
    pub(crate) fn encode(&self) -> [u8; HEADER_BYTES] {
        let mut h = [0u8; HEADER_BYTES];
        put(&mut h, 0, &self.family.magic());
        h[4] = VERSION;
        h[5] = self.kind.code() as u8;
        h[6] = self.width.bits() as u8;
        h[7] = self.lower_columns as u8;
        put(&mut h, 8, &self.seed.to_le_bytes());
        put(&mut h, 16, &self.num_keys.to_le_bytes());
        put(&mut h, 24, &self.blocks_or_layers.to_le_bytes());
        put(&mut h, 32, &self.upper_start_block.to_le_bytes());
        h
    }

    /// The header that starts `bytes` (which may go on past it), with the
    /// checks every family and kind shares, in this order:
    /// [`Error::Truncated`] if `bytes` are shorter than a header,
    /// [`Error::BadMagic`] unless the magic is `family`'s (either's for
    /// `None`: Bumped layers of both), [`Error::UnsupportedVersion`]
    /// unless the version is [`VERSION`], and [`Error::CorruptHeader`] for
    /// an unknown kind or width, reserved bytes set, more than
    /// [`MAX_KEYS_U64`] keys or more than [`MAX_COLUMNS`] columns. Every
    /// other check a family or kind makes is [`Error::CorruptHeader`] too,
    /// up to its conversions to `usize`.
    pub(crate) fn decode(bytes: &[u8], family: Option<Family>) -> Result<RawHeader, Error> {
        let h = header_of(bytes).ok_or(Error::Truncated {
            needed: HEADER_BYTES,
            given: bytes.len(),
        })?;
        match Family::of(h) {
            Some(found) if family.is_none_or(|f| f == found) => {}
            _ => return Err(Error::BadMagic),
        }
        if h[4] != VERSION {
            return Err(Error::UnsupportedVersion);
        }
        let raw = RawHeader::fields(h).ok_or(Error::CorruptHeader)?;
        if take::<4>(h, 12) != [0; 4]
            || raw.num_keys > MAX_KEYS_U64
            || raw.lower_columns > MAX_COLUMNS
        {
            return Err(Error::CorruptHeader);
        }
        Ok(raw)
    }

    /// The fields of `h`, if its magic, kind and width are known.
    fn fields(h: &[u8; HEADER_BYTES]) -> Option<RawHeader> {
        Some(RawHeader {
            family: Family::of(h)?,
            kind: Kind::from_code(u32::from(h[5]))?,
            width: Width::from_bits(u32::from(h[6]))?,
            lower_columns: u32::from(h[7]),
            seed: u32::from_le_bytes(take(h, 8)),
            num_keys: u64::from_le_bytes(take(h, 16)),
            blocks_or_layers: u64::from_le_bytes(take(h, 24)),
            upper_start_block: u64::from_le_bytes(take(h, 32)),
        })
    }
}

/// The first [`HEADER_BYTES`] of `bytes`, if they have as many.
fn header_of(bytes: &[u8]) -> Option<&[u8; HEADER_BYTES]> {
    bytes.first_chunk::<HEADER_BYTES>()
}

/// Whether `bytes` start with a Bumped Ribbon filter's magic, version and
/// kind code ([`BUMPED_KIND_CODE`]).
pub(crate) fn is_bumped(bytes: &[u8]) -> bool {
    is_bumped_of(Family::Filter, bytes)
}

/// Whether `bytes` start with the header of a Bumped structure of
/// `family`.
pub(crate) fn is_bumped_of(family: Family, bytes: &[u8]) -> bool {
    header_of(bytes).is_some_and(|h| {
        take::<4>(h, 0) == family.magic() && h[4] == VERSION && h[5] == BUMPED_KIND_CODE
    })
}

/// The kind code of Bumped Ribbon filters (issue 18; `src/bumped_layout.rs`
/// checks the rest of their header).
const BUMPED_KIND_CODE: u8 = Kind::Bumped.code() as u8;

/// The checksum of the serialized structure `bytes` (exactly its bytes):
/// XXH3-64 ([`hash_key_with_seed`], xxHash 0.8) of everything after the
/// header, seeded with XXH3-64 of the header's first 40 bytes; every byte
/// but the checksum's own 8 counts. In C with xxHash:
/// `XXH3_64bits_withSeed(b + 48, len - 48, XXH3_64bits(b, 40))`.
pub(crate) fn checksum(bytes: &[u8]) -> u64 {
    let head = bytes.get(..CHECKSUM_AT).unwrap_or(bytes);
    let rest = bytes.get(HEADER_BYTES..).unwrap_or(&[]);
    hash_key_with_seed(rest, hash_key(head))
}

/// Zeroes the header room at the start of `out` (as much of it as `out`
/// has), so that a structure a buffer held before does not survive a
/// build into it that fails, whatever the failure: every build does this
/// first.
pub(crate) fn clear_header(out: &mut [u8]) {
    let header = out.len().min(HEADER_BYTES);
    if let Some(header) = out.get_mut(..header) {
        header.fill(0);
    }
}

/// Writes [`checksum`] into the header of `bytes` (a structure just
/// serialized, exactly its bytes); nothing if they are shorter than a
/// header.
pub(crate) fn seal(bytes: &mut [u8]) {
    let sum = checksum(bytes).to_le_bytes();
    if let Some(field) = bytes.get_mut(CHECKSUM_AT..HEADER_BYTES) {
        field.copy_from_slice(&sum);
    }
}

/// [`Error::ChecksumMismatch`] unless the checksum in the header of
/// `bytes` (a structure of exactly these bytes, its header validated) is
/// [`checksum`]'s: one pass over the bytes.
pub(crate) fn verify(bytes: &[u8]) -> Result<(), Error> {
    let stored = bytes
        .get(CHECKSUM_AT..HEADER_BYTES)
        .and_then(|b| b.try_into().ok())
        .map(u64::from_le_bytes)
        .ok_or(Error::Truncated {
            needed: HEADER_BYTES,
            given: bytes.len(),
        })?;
    if stored != checksum(bytes) {
        return Err(Error::ChecksumMismatch);
    }
    Ok(())
}

/// Copies `bytes` into `h` at `at` (header fields; no panic path).
fn put(h: &mut [u8; HEADER_BYTES], at: usize, bytes: &[u8]) {
    for (d, s) in h.iter_mut().skip(at).zip(bytes) {
        *d = *s;
    }
}

/// The `N` header bytes at `at` (header fields; no panic path).
fn take<const N: usize>(h: &[u8; HEADER_BYTES], at: usize) -> [u8; N] {
    let mut out = [0u8; N];
    for (d, s) in out.iter_mut().zip(h.iter().skip(at)) {
        *d = *s;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn block_offsets_follow_the_column_split() {
        let g = Geometry::new(Kind::Homogeneous, Width::W64, 5, 3, 2).unwrap();
        assert_eq!(g.total_words(), Some(5 * 3 + 3));
        let mut expect = 0;
        for b in 0..5 {
            assert_eq!(g.block_word_offset(b), expect);
            expect += g.block_columns(b) as usize;
        }
        assert_eq!(expect, 18);
        assert_eq!(g.num_starts(), 5 * 64 - 64 + 1);
    }

    #[test]
    fn header_round_trips() {
        let g = Geometry::new(Kind::StandardSmash, Width::W128, 7, 9, 3).unwrap();
        let h = Header {
            geometry: g,
            seed: 0xdead_beef,
            num_keys: 500,
        };
        let mut bytes = [0u8; 2048];
        let len = g.filter_bytes();
        bytes[..HEADER_BYTES].copy_from_slice(&h.encode());
        assert_eq!(Header::decode(&bytes[..len]), Ok(h));
        assert_eq!(
            Header::decode(&bytes[..len - 1]),
            Err(Error::Truncated {
                needed: len,
                given: len - 1
            })
        );
        assert_eq!(
            Header::decode(&bytes[..len + 1]),
            Err(Error::TrailingBytes {
                expected: len,
                given: len + 1
            })
        );
    }

    #[test]
    fn raw_header_lays_fields_out_as_the_format_says() {
        let raw = RawHeader {
            family: Family::Retrieval,
            kind: Kind::Bumped,
            width: Width::W128,
            lower_columns: 9,
            seed: 0x0403_0201,
            num_keys: 0x15_1413_1211,
            blocks_or_layers: 0x2827_2625_2423_2221,
            upper_start_block: 0x3837_3635_3433_3231,
        };
        let h = raw.encode();
        let mut expect = [0u8; HEADER_BYTES];
        expect[..8].copy_from_slice(&[b'R', b'b', b'n', b'R', VERSION, 3, 128, 9]);
        expect[8..12].copy_from_slice(&[1, 2, 3, 4]);
        expect[16..21].copy_from_slice(&[0x11, 0x12, 0x13, 0x14, 0x15]);
        expect[24..32].copy_from_slice(&[0x21, 0x22, 0x23, 0x24, 0x25, 0x26, 0x27, 0x28]);
        expect[32..40].copy_from_slice(&[0x31, 0x32, 0x33, 0x34, 0x35, 0x36, 0x37, 0x38]);
        assert_eq!(h, expect);
        assert_eq!(RawHeader::decode(&h, Some(Family::Retrieval)), Ok(raw));
        assert_eq!(RawHeader::decode(&h, None), Ok(raw));
    }

    #[test]
    fn raw_header_checks_in_order() {
        let raw = RawHeader {
            family: Family::Filter,
            kind: Kind::Standard,
            width: Width::W64,
            lower_columns: 7,
            seed: 1,
            num_keys: 10,
            blocks_or_layers: 2,
            upper_start_block: 1,
        };
        let good = raw.encode();
        let decode = |h: &[u8], family| RawHeader::decode(h, family);
        assert_eq!(
            decode(&good[..47], Some(Family::Filter)),
            Err(Error::Truncated {
                needed: HEADER_BYTES,
                given: 47
            })
        );
        // The other family's magic is refused before the version.
        let mut h = good;
        h[4] = 1;
        assert_eq!(decode(&h, Some(Family::Retrieval)), Err(Error::BadMagic));
        assert_eq!(decode(&h, None), Err(Error::UnsupportedVersion));
        h[0] = b'X';
        assert_eq!(decode(&h, None), Err(Error::BadMagic));
        // Each field out of the range every kind shares.
        let corrupt: [(usize, u8); 5] = [(5, 4), (6, 32), (7, 65), (12, 1), (21, 1)];
        for (at, byte) in corrupt {
            let mut h = good;
            h[at] = byte;
            assert_eq!(decode(&h, None), Err(Error::CorruptHeader), "byte {at}");
        }
        let mut h = good;
        h[7] = 64;
        assert!(decode(&h, None).is_ok());
    }

    #[test]
    fn column_masks() {
        assert_eq!(column_mask(0), 0);
        assert_eq!(column_mask(7), 0x7f);
        assert_eq!(column_mask(64), u64::MAX);
    }
}
