//! The query side of sharded filters (with `alloc`): the table of each
//! shard's decoded state behind [`ShardedFilterRef`] and the owning
//! [`ShardedFilter`], and with `std` the one-call parallel build.

use super::*;

/// Hashes per chunk of a batch query over `shards` shards: about 64 per
/// shard, so that each shard's group fills its batch kernel's pipeline,
/// within 1,024 and 65,536 (the chunk's buffers take 13 bytes per hash).
fn batch_chunk(shards: usize) -> usize {
    shards.saturating_mul(64).clamp(1024, 1 << 16)
}

/// One shard of a view: its decoded state and where its bytes lie.
#[derive(Clone, Copy)]
struct Shard {
    state: Validated,
    start: usize,
    end: usize,
}

/// What a sharded view keeps: the header and every shard's state.
#[derive(Clone)]
struct Table {
    header: ShardedHeader,
    shards: Vec<Shard>,
}

impl Table {
    /// Validates `bytes` as a sharded filter: the container
    /// ([`check_container`]), then every shard as a filter (with its
    /// checksum when `verify`) of the header's width and kind (or
    /// Homogeneous: the fallback of a Standard or Bumped build), and the
    /// shards' keys summing to the header's.
    fn open(bytes: &[u8], verify: bool) -> Result<Table, Error> {
        let mut shards = Vec::new();
        let mut keys = 0u64;
        let base = bytes.as_ptr() as usize;
        let header = check_container(bytes, verify, |header, shard| {
            let view = if verify {
                FilterRef::from_bytes(shard)?
            } else {
                FilterRef::from_bytes_unverified(shard)?
            };
            let kind = view.kind();
            if view.width() != header.width || kind != header.kind && kind != Kind::Homogeneous {
                return Err(Error::CorruptHeader);
            }
            keys = keys
                .checked_add(view.num_keys())
                .ok_or(Error::CorruptHeader)?;
            let start = shard.as_ptr() as usize - base;
            shards.push(Shard {
                state: view.validated(),
                start,
                end: start + shard.len(),
            });
            Ok(())
        })?;
        if keys != header.num_keys {
            return Err(Error::CorruptHeader);
        }
        Ok(Table { header, shards })
    }

    #[inline]
    fn contains(&self, bytes: &[u8], hash: u64) -> bool {
        let i = shard_of(hash, self.shards.len());
        match self.shards.get(i) {
            Some(s) => {
                let b = bytes.get(s.start..s.end).unwrap_or(&[]);
                s.state.one(b, s.state.payload(b), hash)
            }
            None => false,
        }
    }

    /// Answers `hashes` into `out` (same length). With one shard, its
    /// batch query; else chunk by chunk of [`batch_chunk`] hashes: the
    /// chunk's hashes grouped by shard (a counting sort, with their places),
    /// each shard's group through the shard's batch query (which keeps its
    /// SIMD expansion and prefetching), the answers put back in place.
    /// Allocates the chunk's buffers once per call.
    fn contains_batch(&self, bytes: &[u8], hashes: &[u64], out: &mut [bool]) -> Result<(), Error> {
        if hashes.len() != out.len() {
            return Err(Error::LengthMismatch {
                expected: hashes.len(),
                given: out.len(),
            });
        }
        let s = self.shards.len();
        if s == 1 {
            if let Some(sh) = self.shards.first() {
                let b = bytes.get(sh.start..sh.end).unwrap_or(&[]);
                sh.state.batch(b, sh.state.payload(b), hashes, out);
            }
            return Ok(());
        }
        let chunk = batch_chunk(s).min(hashes.len()).max(1);
        let mut grouped = alloc::vec![0u64; chunk];
        let mut places = alloc::vec![0u32; chunk];
        let mut answers = alloc::vec![false; chunk];
        // starts[b]: where shard b's group begins; ends[b] its cursor, then
        // its end.
        let mut starts = alloc::vec![0u32; s + 1];
        let mut ends = alloc::vec![0u32; s];
        for (hashes, out) in hashes.chunks(chunk).zip(out.chunks_mut(chunk)) {
            starts.fill(0);
            for &h in hashes {
                starts[shard_of(h, s) + 1] += 1;
            }
            for b in 0..s {
                starts[b + 1] += starts[b];
            }
            ends.copy_from_slice(&starts[..s]);
            for (place, &h) in hashes.iter().enumerate() {
                let b = shard_of(h, s);
                let at = ends[b] as usize;
                ends[b] += 1;
                grouped[at] = h;
                places[at] = place as u32;
            }
            for (b, sh) in self.shards.iter().enumerate() {
                let group = starts[b] as usize..ends[b] as usize;
                if group.is_empty() {
                    continue;
                }
                let bytes = bytes.get(sh.start..sh.end).unwrap_or(&[]);
                let payload = sh.state.payload(bytes);
                sh.state
                    .batch(bytes, payload, &grouped[group.clone()], &mut answers[group]);
            }
            for (&place, &answer) in places.iter().zip(&answers).take(hashes.len()) {
                out[place as usize] = answer;
            }
        }
        Ok(())
    }

    fn shard<'a>(&self, bytes: &'a [u8], i: usize) -> Option<FilterRef<'a>> {
        let s = self.shards.get(i)?;
        Some(FilterRef::from_validated(
            s.state,
            bytes.get(s.start..s.end)?,
        ))
    }
}

/// A borrowed sharded filter: the serialized bytes (any alignment), their
/// header, directory and every shard validated once. Needs `alloc` for its
/// table of shards (one decoded filter state per shard).
///
/// ```
/// use ribbon_kernel::{Kind, ShardedFilter, ShardedFilterRef, ShardedPlan, Width};
/// use std::num::NonZeroU32;
///
/// let mut hashes: Vec<u64> = (1..=10_000u64).map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15)).collect();
/// let plan = ShardedPlan::new(Kind::Homogeneous, Width::W64, hashes.len(), 8_000)?
///     .with_shards(NonZeroU32::new(4).unwrap());
/// let bytes = ShardedFilter::build(&plan, &mut hashes, 2)?.into_bytes();
///
/// let filter = ShardedFilterRef::from_bytes(&bytes)?;
/// assert_eq!(filter.shards(), 4);
/// assert!(hashes.iter().all(|&h| filter.contains(h)));
/// # Ok::<(), ribbon_kernel::Error>(())
/// ```
#[derive(Clone)]
pub struct ShardedFilterRef<'a> {
    bytes: &'a [u8],
    table: Table,
}

impl core::fmt::Debug for ShardedFilterRef<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("ShardedFilterRef")
            .field("kind", &self.table.header.kind)
            .field("width", &self.table.header.width)
            .field("shards", &self.table.shards.len())
            .field("num_keys", &self.table.header.num_keys)
            .field("bytes", &self.bytes.len())
            .finish()
    }
}

impl<'a> ShardedFilterRef<'a> {
    /// Validates `bytes` as a sharded filter and returns a view of it: the
    /// header (magic `RbnS`, version, kind, width, at least one shard,
    /// reserved bytes zero), its checksum (of the header and directory),
    /// the directory (from its own end to the last byte, never
    /// decreasing), each shard as a filter ([`FilterRef::from_bytes`], its
    /// own checksum included) of the header's width and kind (or
    /// Homogeneous, the fallback of a Standard or Bumped build), and the
    /// shards' key counts summing to the header's.
    pub fn from_bytes(bytes: &'a [u8]) -> Result<ShardedFilterRef<'a>, Error> {
        Ok(ShardedFilterRef {
            bytes,
            table: Table::open(bytes, true)?,
        })
    }

    /// [`ShardedFilterRef::from_bytes`] without any checksum (see
    /// [`FilterRef::from_bytes_unverified`]: still no query reads out of
    /// bounds or panics).
    pub fn from_bytes_unverified(bytes: &'a [u8]) -> Result<ShardedFilterRef<'a>, Error> {
        Ok(ShardedFilterRef {
            bytes,
            table: Table::open(bytes, false)?,
        })
    }

    /// Whether `hash` may be in the set: its shard's
    /// [`FilterRef::contains`].
    #[inline]
    pub fn contains(&self, hash: u64) -> bool {
        self.table.contains(self.bytes, hash)
    }

    /// Whether `key` may be in the set: [`ShardedFilterRef::contains`] of
    /// [`hash_key`](crate::hash_key)`(key)`.
    #[inline]
    pub fn contains_key<K: AsRef<[u8]> + ?Sized>(&self, key: &K) -> bool {
        self.contains(hash_key(key.as_ref()))
    }

    /// Queries every hash into `out` (same length as `hashes`).
    pub fn contains_batch(&self, hashes: &[u64], out: &mut [bool]) -> Result<(), Error> {
        self.table.contains_batch(self.bytes, hashes, out)
    }

    /// The number of shards.
    pub fn shards(&self) -> usize {
        self.table.shards.len()
    }

    /// Shard `i` as a filter.
    pub fn shard(&self, i: usize) -> Option<FilterRef<'a>> {
        self.table.shard(self.bytes, i)
    }

    /// The kind the shards were planned with (a shard may say
    /// Homogeneous: a fallback).
    pub fn kind(&self) -> Kind {
        self.table.header.kind
    }

    /// The ribbon width of every shard.
    pub fn width(&self) -> Width {
        self.table.header.width
    }

    /// The keys of all shards.
    pub fn num_keys(&self) -> u64 {
        self.table.header.num_keys
    }

    /// The serialized bytes.
    pub fn as_bytes(&self) -> &'a [u8] {
        self.bytes
    }
}

/// An owned sharded filter: the twin of [`ShardedFilterRef`] over its own
/// bytes, and the one-call parallel build (feature `std`).
#[derive(Clone)]
pub struct ShardedFilter {
    bytes: Vec<u8>,
    table: Table,
}

impl core::fmt::Debug for ShardedFilter {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_tuple("ShardedFilter").field(&self.view()).finish()
    }
}

impl ShardedFilter {
    /// Validates `bytes` as [`ShardedFilterRef::from_bytes`] does and
    /// keeps them.
    pub fn from_bytes(bytes: Vec<u8>) -> Result<ShardedFilter, Error> {
        let table = Table::open(&bytes, true)?;
        Ok(ShardedFilter { bytes, table })
    }

    /// A borrowed view (copies the table of shards).
    pub fn view(&self) -> ShardedFilterRef<'_> {
        ShardedFilterRef {
            bytes: &self.bytes,
            table: self.table.clone(),
        }
    }

    /// Whether `hash` may be in the set.
    #[inline]
    pub fn contains(&self, hash: u64) -> bool {
        self.table.contains(&self.bytes, hash)
    }

    /// Whether `key` may be in the set.
    #[inline]
    pub fn contains_key<K: AsRef<[u8]> + ?Sized>(&self, key: &K) -> bool {
        self.contains(hash_key(key.as_ref()))
    }

    /// Queries every hash into `out` (same length as `hashes`).
    pub fn contains_batch(&self, hashes: &[u64], out: &mut [bool]) -> Result<(), Error> {
        self.table.contains_batch(&self.bytes, hashes, out)
    }

    /// The number of shards.
    pub fn shards(&self) -> usize {
        self.table.shards.len()
    }

    /// The keys of all shards.
    pub fn num_keys(&self) -> u64 {
        self.table.header.num_keys
    }

    /// The serialized bytes.
    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// The serialized bytes, owned.
    pub fn into_bytes(self) -> Vec<u8> {
        self.bytes
    }
}

#[cfg(feature = "std")]
impl ShardedFilter {
    /// Builds a sharded filter of `hashes` with `plan` on `threads`
    /// threads (0 counts as 1; at most one per shard), each with one
    /// shard's scratch ([`ShardedPlan::scratch_words`]); the shards go to
    /// the threads in order as each finishes one. The bytes are the same
    /// for any number of threads.
    ///
    /// `hashes` are reordered into shard order ([`ShardedPlan::partition`],
    /// on the threads too): no copy of them is made. Memory beyond the
    /// hashes and the output: `threads` shard scratches and `threads + 1`
    /// `u64`s per shard (counts). Measured at 10^9 keys: a peak of 9.1 GB
    /// for 8 GB of hashes and 1.09 GB of filter (Homogeneous w64 8.7 bits;
    /// `examples/sharded_scale.rs`).
    pub fn build(
        plan: &ShardedPlan,
        hashes: &mut [u64],
        threads: usize,
    ) -> Result<ShardedFilter, Error> {
        let mut counts = alloc::vec![0u64; plan.shards()];
        let threads = threads.clamp(1, plan.shards());
        let parts = partition_on_threads(plan, hashes, &mut counts, threads)?;
        let len = plan.filter_bytes(&parts)?;
        let words = plan.scratch_words(&parts)?;
        let mut bytes = alloc::vec![0u8; len];
        let jobs = plan.jobs(&parts, &mut bytes)?;
        run_jobs(jobs, words, threads)?;
        let len = plan.finish(&mut bytes)?;
        bytes.truncate(len);
        bytes.shrink_to_fit();
        // Sealed just now: no checksum to compute again.
        let table = Table::open(&bytes, false)?;
        Ok(ShardedFilter { bytes, table })
    }
}

/// [`ShardedPlan::partition`] on `threads` threads: each counts a chunk of
/// the hashes; one pass sorts them into `threads` groups of consecutive
/// shards ([`flag_sort`] with a bucket per group, a handful of write
/// streams); then each group is sorted into its shards on its own thread.
/// The shards and their counts are those of the serial partition; only
/// the order within a shard differs, which no shard's bytes depend on.
#[cfg(feature = "std")]
fn partition_on_threads<'h>(
    plan: &ShardedPlan,
    hashes: &'h mut [u64],
    counts: &'h mut [u64],
    threads: usize,
) -> Result<Partitioned<'h>, Error> {
    let s = plan.shards();
    let groups = threads.min(s);
    if groups < 2 || hashes.len() < 1 << 14 {
        return plan.partition(hashes, counts);
    }
    plan.check_counts(counts)?;
    let chunk = hashes.len().div_ceil(groups);
    let locals = on_threads(hashes.chunks(chunk).collect(), |part: &[u64]| {
        let mut local = alloc::vec![0u64; s];
        for &h in part {
            local[shard_of(h, s)] += 1;
        }
        local
    })
    .ok_or(Error::ConstructionFailed)?;
    counts.fill(0);
    for local in &locals {
        for (c, l) in counts.iter_mut().zip(local) {
            *c += l;
        }
    }
    // Group g holds the shards b with b * groups / s == g: consecutive.
    let group_of = |b: usize| b * groups / s;
    let mut group_counts = alloc::vec![0u64; groups];
    for (b, &c) in counts.iter().enumerate() {
        group_counts[group_of(b)] += c;
    }
    flag_sort(hashes, &mut group_counts, |h| group_of(shard_of(h, s)));
    let mut pieces = Vec::with_capacity(groups);
    let (mut rest_hashes, mut rest_counts) = (&mut *hashes, &mut *counts);
    let mut first = 0usize;
    for (g, &n) in group_counts.iter().enumerate() {
        let shards_in = (first..s).take_while(|&b| group_of(b) == g).count();
        let (h, hr) = core::mem::take(&mut rest_hashes).split_at_mut(n as usize);
        let (c, cr) = core::mem::take(&mut rest_counts).split_at_mut(shards_in);
        pieces.push((h, c, first));
        rest_hashes = hr;
        rest_counts = cr;
        first += shards_in;
    }
    on_threads(pieces, |(h, c, first): (&mut [u64], &mut [u64], usize)| {
        flag_sort(h, c, |x| shard_of(x, s) - first);
    })
    .ok_or(Error::ConstructionFailed)?;
    Ok(Partitioned { hashes, counts })
}

/// Runs `f` on each item, each on a thread of its own (the first on this
/// one), and returns the answers in order. Where a thread cannot start
/// (wasm32-wasip1 has none), this thread runs that item after its own.
/// `None` if an item's `f` panicked (none here does).
#[cfg(feature = "std")]
fn on_threads<I: Send, R: Send>(items: Vec<I>, f: impl Fn(I) -> R + Sync) -> Option<Vec<R>> {
    use std::sync::Mutex;
    let cells: Vec<Mutex<Option<I>>> = items.into_iter().map(|i| Mutex::new(Some(i))).collect();
    let take = |cell: &Mutex<Option<I>>| cell.lock().ok().and_then(|mut i| i.take());
    let (f, take) = (&f, &take);
    let (first, others) = cells.split_first()?;
    std::thread::scope(|scope| {
        let handles: Vec<_> = others
            .iter()
            .map(|cell| {
                std::thread::Builder::new()
                    .spawn_scoped(scope, move || take(cell).map(f))
                    .ok()
            })
            .collect();
        let mut answers = Vec::with_capacity(cells.len());
        answers.push(f(take(first)?));
        for (cell, handle) in others.iter().zip(handles) {
            let answer = match handle.and_then(|h| h.join().ok()).flatten() {
                Some(answer) => answer,
                // Not started: the item is still in its cell.
                None => f(take(cell)?),
            };
            answers.push(answer);
        }
        Some(answers)
    })
}

/// Runs every job on `threads` threads (this one among them), each with a
/// scratch of `words` words; the first error by shard index, if any.
#[cfg(feature = "std")]
fn run_jobs(jobs: ShardJobs<'_>, words: usize, threads: usize) -> Result<(), Error> {
    use std::sync::Mutex;
    let queue = Mutex::new(jobs);
    let work = || -> Option<(usize, Error)> {
        let mut scratch = alloc::vec![0u64; words];
        let mut first: Option<(usize, Error)> = None;
        loop {
            let job = match queue.lock() {
                Ok(mut q) => q.next(),
                Err(_) => None,
            };
            let Some(job) = job else { break };
            let index = job.index();
            if let Err(e) = job.build(&mut scratch)
                && first.is_none_or(|(i, _)| index < i)
            {
                first = Some((index, e));
            }
        }
        first
    };
    let errors: Vec<Option<(usize, Error)>> = std::thread::scope(|s| {
        // Where a thread cannot start (wasm32-wasip1 has none), the
        // threads that did, this one among them, take its shards.
        let others: Vec<_> = (1..threads)
            .filter_map(|_| std::thread::Builder::new().spawn_scoped(s, work).ok())
            .collect();
        let mut errors = alloc::vec![work()];
        for handle in others {
            // A build never panics; if one did, say so as an error.
            errors.push(
                handle
                    .join()
                    .unwrap_or(Some((0, Error::ConstructionFailed))),
            );
        }
        errors
    });
    match errors.into_iter().flatten().min_by_key(|(i, _)| *i) {
        Some((_, e)) => Err(e),
        None => Ok(()),
    }
}
