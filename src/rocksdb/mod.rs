//! RocksDB's built-in filter blocks, byte for byte (feature `rocksdb`).
//!
//! [`build_filter`] writes the full-filter block that RocksDB's Ribbon
//! policy (`NewRibbonFilterPolicy`, with `optimize_filters_for_memory =
//! false`) writes for the same keys: Standard128 Ribbon, or the
//! FastLocalBloom block RocksDB falls back to for small filters.
//! [`build_bloom_filter`] writes the FastLocalBloom block of RocksDB's
//! Bloom policy (`format_version >= 5`), which the Ribbon policy also uses
//! for memtable flushes by default. [`FilterRef`] reads and queries every
//! block RocksDB's built-in policies write in format_version 5 and later.
//! Everything is `no_std`, allocation-free and panic-free, like the rest of
//! the crate; Ribbon blocks are built and queried with this crate's SIMD
//! kernels.
//!
//! Keys are hashed with [`key_hash`], RocksDB's `GetSliceHash64`.
//!
//! # Writing a filter block (SST writer)
//!
//! Hash the keys the filter covers in the order RocksDB adds them (the
//! user keys, timestamps stripped, in table order for a full filter), size
//! the buffers, build:
//!
//! ```
//! use ribbon_kernel::rocksdb::{self, BlockKind, FilterRef};
//!
//! let keys: Vec<Vec<u8>> = (0..1000u32).map(|i| format!("key{i:06}").into_bytes()).collect();
//! let hashes: Vec<u64> = keys.iter().map(|k| rocksdb::key_hash(k)).collect();
//! let millibits_per_key = 10_000; // NewRibbonFilterPolicy(10.0)
//!
//! let mut scratch = vec![0u64; rocksdb::scratch_words(hashes.len(), millibits_per_key)];
//! let mut block = vec![0u8; rocksdb::max_filter_bytes(hashes.len(), millibits_per_key)];
//! let len = rocksdb::build_filter(&hashes, millibits_per_key, &mut scratch, &mut block)?;
//! block.truncate(len);
//! // Store `block` uncompressed as the table's filter block, under the
//! // metaindex key "fullfilter.rocksdb.BuiltinBloomFilter".
//!
//! // Reading it back (SST reader): the block contents, without the block
//! // trailer.
//! let filter = FilterRef::from_bytes(&block)?;
//! assert_eq!(filter.kind(), BlockKind::Ribbon);
//! assert!(keys.iter().all(|k| filter.contains_key(k)));
//! assert!(filter.contains(hashes[7]));
//! # Ok::<(), ribbon_kernel::Error>(())
//! ```
//!
//! # Bits per key
//!
//! Filters are sized by `millibits_per_key`: RocksDB's `bits_per_key`
//! times 1000, from 1000 to 100000. RocksDB sanitizes a configured
//! `bits_per_key` to `[1, 100]` (below 0.5 it writes no filter) and rounds
//! `bits_per_key * 1000` to get its own millibits ([`millibits_per_key`]). Its Ribbon FP target is
//! computed from the sanitized double itself, so the bytes here are
//! RocksDB's whenever `bits_per_key == millibits_per_key / 1000.0` (any
//! setting with at most three decimals, such as 10, 9.5 or 15.7).
//!
//! # What is reproduced, and where it stops
//!
//! * Hash collection: RocksDB drops a hash equal to the one added just
//!   before it (adjacent duplicates only); the builders here do the same.
//!   With a prefix extractor, RocksDB adds prefix hashes too
//!   (`AddKeyAndAlt`). For a key with a prefix, let `last` be the last hash
//!   added so far and `prev` the prefix hash of the previous key that had
//!   one: RocksDB adds the prefix hash unless it equals `prev`, `last` or
//!   the key's hash, then the key's hash unless it equals `last` or `prev`.
//!   Pass the resulting sequence.
//! * Sizing mirrors RocksDB's double arithmetic and glibc's `exp` and
//!   `pow` as RocksDB runs them on Linux on an x86_64 CPU with FMA (any
//!   recent one), the same on every platform this crate builds for. On an
//!   x86_64 CPU without FMA, glibc rounds differently and RocksDB itself
//!   computes another Ribbon FP target for 131 of the 99,001 settings,
//!   which makes some of its Ribbon blocks one 16-byte segment longer or
//!   shorter.
//! * `optimize_filters_for_memory = true` (RocksDB's default) sizes filters
//!   by the allocator's `malloc_usable_size`, so those bytes cannot be
//!   reproduced from the keys; [`FilterRef`] reads them all the same.
//! * Legacy Bloom blocks (`format_version < 5`) are keyed by a 32-bit hash
//!   and are not supported: [`FilterRef::from_bytes`] returns
//!   [`Error::UnsupportedVersion`] (treat the table as having no filter).
//! * Partitioned filters are built from these same blocks, one per
//!   partition; where the partitions are cut is the table builder's choice.

mod bloom;
mod hash;
mod libm;
#[rustfmt::skip]
mod libm_tables;
mod ribbon;
mod sizing;

pub use hash::key_hash;

use crate::backend::Backend;
use crate::error::Error;
use crate::kernels::QueryKernels;
use bloom::Bloom;
use ribbon::RibbonProbes;

/// The hashes RocksDB keeps: every hash unless it equals the one before.
fn distinct_runs(hashes: &[u64]) -> impl Iterator<Item = u64> + '_ {
    let mut previous = None;
    hashes
        .iter()
        .copied()
        .filter(move |&h| previous.replace(h) != Some(h))
}

/// The `millibits_per_key` RocksDB derives from a configured `bits_per_key`
/// (`NewRibbonFilterPolicy(bits_per_key)`, `NewBloomFilterPolicy`): below
/// 0.5 means no filter (0); values are raised to 1 and capped at 100 (NaN
/// too), then `bits_per_key * 1000` is rounded.
///
/// RocksDB computes its Ribbon FP target from the sanitized `bits_per_key`
/// itself, not from the rounded millibits: [`build_filter`] writes its
/// bytes whenever `bits_per_key` equals `millibits / 1000.0` (at most three
/// decimals), and for other settings may size a Ribbon block one 16-byte
/// segment differently.
pub fn millibits_per_key(bits_per_key: f64) -> u32 {
    let bits_per_key = if bits_per_key < 0.5 {
        return 0;
    } else if bits_per_key < 1.0 {
        1.0
    } else if bits_per_key.is_nan() || bits_per_key >= 100.0 {
        100.0
    } else {
        bits_per_key
    };
    (bits_per_key * 1000.0 + 0.500001) as u32
}

/// RocksDB's Ribbon FP-rate target for `millibits_per_key`, as "1 in this
/// many" (its policy's `desired_one_in_fp_rate_`): the FP rate of its
/// cache-local Bloom filter at `millibits_per_key / 1000.0` bits per key,
/// which its Ribbon filters match in less space.
///
/// Fails with [`Error::InvalidBitsPerKey`] outside `1000..=100000`.
pub fn desired_one_in_fp_rate(millibits_per_key: u32) -> Result<f64, Error> {
    sizing::check_millibits(millibits_per_key)?;
    Ok(sizing::one_in_fp_rate(millibits_per_key))
}

/// Words of scratch [`build_filter`] needs for up to `num_keys` hashes
/// (banding rows for RocksDB's Ribbon slot count: 24 bytes per slot, about
/// 25 bytes per key). 0 when no scratch is needed: no keys, more than
/// 950,000,000 keys (RocksDB then writes FastLocalBloom), or an invalid
/// `millibits_per_key`.
pub fn scratch_words(num_keys: usize, millibits_per_key: u32) -> usize {
    if sizing::check_millibits(millibits_per_key).is_err()
        || num_keys == 0
        || num_keys > sizing::MAX_RIBBON_ENTRIES
    {
        return 0;
    }
    sizing::num_slots(num_keys).saturating_mul(3)
}

/// Bytes that hold any block [`build_filter`] or [`build_bloom_filter`]
/// writes for up to `num_keys` hashes (saturated at `usize::MAX`; 0 for no
/// keys or an invalid `millibits_per_key`). The exact length depends on the
/// first hash and on which block is chosen; the builders return it.
pub fn max_filter_bytes(num_keys: usize, millibits_per_key: u32) -> usize {
    if sizing::check_millibits(millibits_per_key).is_err() || num_keys == 0 {
        return 0;
    }
    let bloom = sizing::bloom_bytes(num_keys, millibits_per_key);
    let bloom = usize::try_from(bloom).unwrap_or(usize::MAX);
    if num_keys > sizing::MAX_RIBBON_ENTRIES {
        return bloom;
    }
    // The most segments come with the smallest rounding bias.
    let slots = sizing::num_slots(num_keys);
    let one_in = sizing::one_in_fp_rate(millibits_per_key);
    let ribbon = sizing::ribbon_segments(slots, one_in, 0)
        .saturating_mul(16)
        .saturating_add(ribbon::TRAILER);
    ribbon.max(bloom)
}

/// Builds the filter block RocksDB's Ribbon policy writes for keys with
/// these hashes ([`key_hash`]), added in this order, at
/// `millibits_per_key / 1000` bits per key. Returns its length: the first
/// that many bytes of `out` are the block.
///
/// As RocksDB does, this drops adjacent duplicate hashes, sizes the Ribbon
/// filter for the rest (RocksDB's slot table and FP target, rounded by the
/// first hash), writes FastLocalBloom instead when that is smaller and the
/// Ribbon filter has fewer than 1024 slots, or when no seed works, tries
/// seeds from the low byte of the first hash on, and appends RocksDB's
/// trailer. No hashes give an empty block (length 0), for which RocksDB
/// writes no filter block at all.
///
/// `scratch` needs [`scratch_words`] words and `out` [`max_filter_bytes`]
/// bytes (only the exact length is checked). Back-substitution runs on
/// [`Backend::current`].
///
/// # Errors
///
/// [`Error::InvalidBitsPerKey`] outside `1000..=100000`,
/// [`Error::ScratchTooSmall`], [`Error::OutputTooSmall`], and
/// [`Error::TooLarge`] for a block this platform cannot address.
pub fn build_filter(
    hashes: &[u64],
    millibits_per_key: u32,
    scratch: &mut [u64],
    out: &mut [u8],
) -> Result<usize, Error> {
    build_filter_with_backend(hashes, millibits_per_key, scratch, out, Backend::current())
}

/// [`build_filter`] with back-substitution on `backend` (every backend
/// writes the same bytes). Fails with [`Error::BackendUnavailable`] if this
/// CPU or build lacks it.
pub fn build_filter_with_backend(
    hashes: &[u64],
    millibits_per_key: u32,
    scratch: &mut [u64],
    out: &mut [u8],
    backend: Backend,
) -> Result<usize, Error> {
    sizing::check_millibits(millibits_per_key)?;
    if !backend.is_available() {
        return Err(Error::BackendUnavailable);
    }
    let Some(&first) = hashes.first() else {
        return Ok(0);
    };
    let entries = distinct_runs(hashes).count();
    if entries <= sizing::MAX_RIBBON_ENTRIES {
        let slots = sizing::num_slots(entries);
        let one_in = sizing::one_in_fp_rate(millibits_per_key);
        let segments = sizing::ribbon_segments(slots, one_in, (first >> 32) as u32);
        let len = segments
            .checked_mul(16)
            .and_then(|b| b.checked_add(ribbon::TRAILER))
            .ok_or(Error::TooLarge)?;
        let bloom_len = sizing::bloom_bytes(entries, millibits_per_key);
        let bloom_smaller = slots < 1024 && bloom_len < len as u64;
        if !bloom_smaller {
            let out_len = out.len();
            let out = out.get_mut(..len).ok_or(Error::OutputTooSmall {
                needed: len,
                given: out_len,
            })?;
            if scratch.len() < slots.saturating_mul(3) {
                return Err(Error::ScratchTooSmall {
                    needed: slots.saturating_mul(3),
                    given: scratch.len(),
                });
            }
            if ribbon::build(hashes, slots / 128, segments, scratch, out, backend)? {
                return Ok(len);
            }
        }
    }
    bloom_block(hashes, entries, millibits_per_key, out)
}

/// Builds the FastLocalBloom block RocksDB's Bloom policy
/// (`NewBloomFilterPolicy`, format_version 5 or later) writes for keys with
/// these hashes, added in this order; with default options,
/// `NewRibbonFilterPolicy` writes this block too when it builds a filter
/// during a memtable flush. Returns its length (0 for no hashes). Adjacent
/// duplicate hashes are counted once, as RocksDB does.
///
/// `out` needs [`max_filter_bytes`] bytes (only the exact length is
/// checked). Errors as [`build_filter`].
pub fn build_bloom_filter(
    hashes: &[u64],
    millibits_per_key: u32,
    out: &mut [u8],
) -> Result<usize, Error> {
    sizing::check_millibits(millibits_per_key)?;
    bloom_block(
        hashes,
        distinct_runs(hashes).count(),
        millibits_per_key,
        out,
    )
}

fn bloom_block(
    hashes: &[u64],
    entries: usize,
    millibits_per_key: u32,
    out: &mut [u8],
) -> Result<usize, Error> {
    if entries == 0 {
        return Ok(0);
    }
    let len = usize::try_from(sizing::bloom_bytes(entries, millibits_per_key))
        .map_err(|_| Error::TooLarge)?;
    let probes = sizing::num_probes(millibits_per_key);
    bloom::build(hashes, probes, len, out)?;
    Ok(len)
}

/// What a filter block is, as RocksDB's reader decides from its trailer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum BlockKind {
    /// Standard128 Ribbon (marker byte `0xFE`).
    Ribbon,
    /// FastLocalBloom (marker byte `0xFF`, 64-byte lines).
    FastLocalBloom,
    /// Matches every key: the 6-zero-byte block RocksDB writes when it
    /// detects corruption during construction, a zero-probes marker,
    /// reserved markers and Bloom parameters, and Ribbon blocks of fewer
    /// than two blocks. RocksDB reads all of these as "may match".
    AlwaysTrue,
    /// Matches no key: blocks of at most 5 bytes (a filter of no keys).
    AlwaysFalse,
}

/// A validated, zero-copy view of a RocksDB filter block (format_version
/// 5 or later; the block contents without the block trailer).
///
/// Like the native [`crate::FilterRef`], it checks the bytes once, can be
/// queried with any hash without reading out of bounds whatever bytes it
/// was made from, and never panics. Queries answer exactly as RocksDB's
/// reader does (`GetBuiltinFilterBitsReader`).
#[derive(Clone, Copy)]
pub struct FilterRef<'a> {
    bytes: &'a [u8],
    block: Block<'a>,
    kernels: QueryKernels<RibbonProbes>,
}

/// The Ribbon query kernels of `backend`.
fn ribbon_kernels(backend: Backend) -> Result<QueryKernels<RibbonProbes>, Error> {
    QueryKernels::new::<u128, RibbonProbes>(backend, 0).ok_or(Error::BackendUnavailable)
}

#[derive(Clone, Copy, Debug)]
enum Block<'a> {
    AlwaysFalse,
    AlwaysTrue,
    Ribbon {
        probes: RibbonProbes,
        payload: &'a [u8],
        seed: u8,
    },
    Bloom(Bloom<'a>),
}

impl core::fmt::Debug for FilterRef<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        let mut d = f.debug_struct("FilterRef");
        d.field("kind", &self.kind())
            .field("bytes", &self.bytes.len());
        match self.block {
            Block::Ribbon { probes, seed, .. } => {
                let g = &probes.geometry;
                d.field("seed", &seed)
                    .field("num_blocks", &g.num_blocks)
                    .field("lower_columns", &g.lower_columns)
                    .field("upper_start_block", &g.upper_start_block);
            }
            Block::Bloom(b) => {
                d.field("num_probes", &b.probes());
            }
            Block::AlwaysFalse | Block::AlwaysTrue => {}
        }
        d.field("backend", &self.backend()).finish()
    }
}

impl<'a> FilterRef<'a> {
    /// Validates `bytes` as a RocksDB filter block and returns a view of it.
    ///
    /// Dispatches on the trailer as RocksDB does: at most 5 bytes match
    /// nothing; marker `0xFE` is Ribbon (fewer than 2 blocks: matches
    /// everything), `0xFF` is FastLocalBloom (unknown sub-formats, line
    /// sizes, probe counts or non-zero reserved bytes: matches everything);
    /// 0 and the other reserved markers match everything.
    ///
    /// # Errors
    ///
    /// * [`Error::UnsupportedVersion`]: a legacy Bloom block
    ///   (format_version < 5, marker 1..=127), keyed by a 32-bit hash.
    /// * [`Error::Truncated`]: a FastLocalBloom block with less than one
    ///   64-byte line of data, which RocksDB never writes (its reader would
    ///   read past the block).
    /// * [`Error::TooLarge`]: more than `u32::MAX` bytes.
    pub fn from_bytes(bytes: &'a [u8]) -> Result<FilterRef<'a>, Error> {
        u32::try_from(bytes.len()).map_err(|_| Error::TooLarge)?;
        let block = match bytes.split_last_chunk::<5>() {
            None | Some((&[], _)) => Block::AlwaysFalse,
            Some((data, &[marker, b1, b2, b3, b4])) => match marker {
                ribbon::MARKER => {
                    let num_blocks = u32::from_le_bytes([b2, b3, b4, 0]) as usize;
                    if num_blocks < 2 {
                        Block::AlwaysTrue
                    } else {
                        let geometry = ribbon::geometry(num_blocks, data.len())?;
                        Block::Ribbon {
                            payload: data.get(..geometry.payload_bytes()).unwrap_or(&[]),
                            probes: RibbonProbes::new(geometry, u32::from(b1)),
                            seed: b1,
                        }
                    }
                }
                bloom::MARKER => {
                    let (sub_format, line_bits, probes) = (b1, b2 >> 5, b2 & 31);
                    let valid = sub_format == 0
                        && line_bits == 0
                        && (1..=30).contains(&probes)
                        && b3 == 0
                        && b4 == 0;
                    if valid {
                        Block::Bloom(Bloom::new(data, u32::from(probes))?)
                    } else {
                        Block::AlwaysTrue
                    }
                }
                1..=0x7f => return Err(Error::UnsupportedVersion),
                _ => Block::AlwaysTrue,
            },
        };
        Ok(FilterRef {
            bytes,
            block,
            kernels: ribbon_kernels(Backend::current())?,
        })
    }

    /// What the block is.
    pub fn kind(&self) -> BlockKind {
        match self.block {
            Block::AlwaysFalse => BlockKind::AlwaysFalse,
            Block::AlwaysTrue => BlockKind::AlwaysTrue,
            Block::Ribbon { .. } => BlockKind::Ribbon,
            Block::Bloom(_) => BlockKind::FastLocalBloom,
        }
    }

    /// Whether a key with this hash ([`key_hash`]) may be in the set:
    /// always `true` for keys the filter was built from.
    #[inline]
    pub fn contains(&self, hash: u64) -> bool {
        match self.block {
            Block::AlwaysFalse => false,
            Block::AlwaysTrue => true,
            Block::Ribbon {
                probes, payload, ..
            } => self.kernels.one(&probes, payload, hash),
            Block::Bloom(bloom) => bloom.contains(hash),
        }
    }

    /// Whether `key` may be in the set: [`FilterRef::contains`] of
    /// [`key_hash`]`(key)`.
    #[inline]
    pub fn contains_key(&self, key: &[u8]) -> bool {
        self.contains(key_hash(key))
    }

    /// Queries every hash, writing one answer per hash into `out`, which must
    /// have the same length as `hashes` ([`Error::LengthMismatch`]
    /// otherwise).
    pub fn contains_batch(&self, hashes: &[u64], out: &mut [bool]) -> Result<(), Error> {
        if hashes.len() != out.len() {
            return Err(Error::LengthMismatch {
                expected: hashes.len(),
                given: out.len(),
            });
        }
        match self.block {
            Block::AlwaysFalse => out.fill(false),
            Block::AlwaysTrue => out.fill(true),
            Block::Ribbon {
                probes, payload, ..
            } => {
                self.kernels.batch(&probes, payload, hashes, out);
            }
            Block::Bloom(bloom) => {
                for (answer, &hash) in out.iter_mut().zip(hashes) {
                    *answer = bloom.contains(hash);
                }
            }
        }
        Ok(())
    }

    /// The same view, querying Ribbon blocks with `backend`; fails with
    /// [`Error::BackendUnavailable`] if this CPU or build lacks it.
    pub fn with_backend(self, backend: Backend) -> Result<FilterRef<'a>, Error> {
        Ok(FilterRef {
            kernels: ribbon_kernels(backend)?,
            ..self
        })
    }

    /// The backend Ribbon queries use: [`Backend::current`] when the view
    /// was made, unless changed with [`FilterRef::with_backend`].
    pub fn backend(&self) -> Backend {
        self.kernels.backend()
    }

    /// The block's bytes.
    pub fn as_bytes(&self) -> &'a [u8] {
        self.bytes
    }
}
