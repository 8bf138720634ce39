//! The query side of sharded filters (with `alloc`): the table of each
//! shard's decoded state behind [`ShardedFilterRef`] and the owning
//! [`ShardedFilter`], and with `std` the one-call parallel build.

use super::*;

/// Hashes per chunk of a batch query over `shards` shards: about 4,096
/// per shard, within 1,024 and 2^20 (the chunk's buffers take 13 bytes per
/// hash: at most 13.6 MB). Large groups pay twice: each shard's batch
/// kernel runs long enough to keep its prefetch pipeline full, and a
/// shard's keys arrive together, so its payload lines and pages are
/// reused. Measured at 10^8 keys (382 shards, 10^6 shuffled queries, AMD
/// EPYC): groups of about 64 keys made a batch 1.39x the unsharded
/// filter's, 256 1.15-1.25x, 2,600 (the whole batch) 0.71-0.90x.
fn batch_chunk(shards: usize) -> usize {
    shards.saturating_mul(4096).clamp(1024, 1 << 20)
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
    /// threads (0 counts as 1; at most one per shard). The bytes are the
    /// same for any number of threads.
    ///
    /// `hashes` are reordered in place, no copy of them is made: each
    /// thread sorts one chunk of them by shard ([`ShardedPlan::partition`]'s
    /// flag sort, on the chunk alone), then the threads take the shards in
    /// order as each finishes one, gathering a shard's runs from the
    /// chunks into a buffer of their own and building it there. So every
    /// step runs on all threads, and a shard's keys arrive in an order
    /// that depends on the thread count, which no shard's bytes depend on
    /// (each build orders its keys itself).
    ///
    /// Memory beyond the hashes and the output: per thread one shard's
    /// scratch ([`ShardedPlan::scratch_words`]) and a buffer of the largest
    /// shard's hashes; per chunk of the hashes (at most 4,096) a `u64` per
    /// shard, where the chunk's run of that shard starts (at 10^9 keys,
    /// up to 0.125 bytes per key).
    /// Measured at 10^9 keys on 2 threads: a peak of 9.3 GB for 8 GB of hashes and
    /// 1.09 GB of filter (Homogeneous w64 8.7 bits;
    /// `examples/sharded_scale.rs`).
    pub fn build(
        plan: &ShardedPlan,
        hashes: &mut [u64],
        threads: usize,
    ) -> Result<ShardedFilter, Error> {
        let s = plan.shards();
        let threads = threads.clamp(1, s);
        // Chunks of the hashes, each sorted by shard on whichever thread
        // takes it; small enough that the sort's write heads stay in
        // cache (a chunk of 2^16 hashes is 512 KiB), and at most 4,096 of
        // them, so that their tables of where each shard's run starts
        // take at most 4,096 x 8 bytes per shard. On one thread, one
        // chunk: the shards' runs are then built where they lie, with no
        // gathering (measured at 10^8 keys, Homogeneous w64: 31 ns/key
        // against 34 with small chunks and gathering).
        let chunk = if threads == 1 {
            hashes.len().max(1)
        } else {
            (1usize << 16).max(hashes.len().div_ceil(4096))
        };
        let sorted = share_out(hashes.chunks_mut(chunk).enumerate(), threads, || {
            |(i, part): (usize, &mut [u64])| -> Result<(usize, Vec<u64>), Error> {
                let mut counts = alloc::vec![0u64; s];
                plan.partition(part, &mut counts)?;
                Ok((i, counts))
            }
        })
        .ok_or(Error::ConstructionFailed)?;
        let hashes = &*hashes;
        let mut local: Vec<Vec<u64>> = alloc::vec![Vec::new(); hashes.len().div_ceil(chunk)];
        for sorted in sorted {
            let (i, counts) = sorted?;
            local[i] = counts;
        }
        // Each chunk with where its runs start, and the shards' counts.
        let mut runs: Vec<Chunk<'_>> = Vec::with_capacity(local.len());
        let mut counts = alloc::vec![0u64; s];
        for (part, mut starts) in hashes.chunks(chunk).zip(local) {
            if starts.len() != s {
                return Err(Error::ConstructionFailed);
            }
            let mut at = 0u64;
            for (c, n) in counts.iter_mut().zip(starts.iter_mut()) {
                *c += *n;
                let start = at;
                at += *n;
                *n = start;
            }
            starts.push(at);
            runs.push((part, starts));
        }
        let len = plan.filter_bytes_of(&counts)?;
        let words = plan.scratch_words_of(&counts)?;
        let largest = counts.iter().copied().max().unwrap_or(0);
        let largest = usize::try_from(largest).map_err(|_| Error::TooLarge)?;
        let mut bytes = alloc::vec![0u8; len];
        let slots = plan.slots(&counts, &mut bytes)?;
        let runs = &runs;
        let built = share_out(slots, threads, || {
            let mut scratch = alloc::vec![0u64; words];
            // One chunk: a shard's hashes are one run, built in place.
            let mut gathered = if runs.len() > 1 {
                Vec::with_capacity(largest)
            } else {
                Vec::new()
            };
            move |slot: ShardSlot<'_>| -> (usize, Result<usize, Error>) {
                let b = slot.index;
                let keys = match runs.as_slice() {
                    [only] => shard_run(only, b),
                    _ => gather_runs(runs, b, &mut gathered),
                };
                let built = match (slot.plan, keys) {
                    (Ok(plan), Some(keys)) => plan.build_in_place(keys, &mut scratch, slot.out),
                    (Err(e), _) => Err(e),
                    (_, None) => Err(Error::ConstructionFailed),
                };
                (b, built)
            }
        })
        .ok_or(Error::ConstructionFailed)?;
        // The first error by shard index, whichever thread met it.
        let first_error = built
            .into_iter()
            .filter_map(|(b, built)| built.err().map(|e| (b, e)))
            .min_by_key(|&(b, _)| b);
        if let Some((_, e)) = first_error {
            return Err(e);
        }
        let len = plan.finish(&mut bytes)?;
        bytes.truncate(len);
        bytes.shrink_to_fit();
        // Sealed just now: no checksum to compute again.
        let table = Table::open(&bytes, false)?;
        Ok(ShardedFilter { bytes, table })
    }
}

/// A chunk of the hashes, sorted by shard, with where its run of each
/// shard starts (one more entry: the chunk's end).
#[cfg(feature = "std")]
type Chunk<'h> = (&'h [u64], Vec<u64>);

/// Shard `b`'s run in `chunk`.
#[cfg(feature = "std")]
fn shard_run<'h>((part, starts): &Chunk<'h>, b: usize) -> Option<&'h [u64]> {
    let start = usize::try_from(*starts.get(b)?).ok()?;
    let end = usize::try_from(*starts.get(b + 1)?).ok()?;
    part.get(start..end)
}

/// Shard `b`'s runs of every chunk, one after the other, in `into`.
#[cfg(feature = "std")]
fn gather_runs<'g>(chunks: &[Chunk<'_>], b: usize, into: &'g mut Vec<u64>) -> Option<&'g [u64]> {
    into.clear();
    for chunk in chunks {
        into.extend_from_slice(shard_run(chunk, b)?);
    }
    Some(into)
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
    let Some((first, others)) = cells.split_first() else {
        return Some(Vec::new());
    };
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

/// Hands `items` out to `threads` workers, this thread one of them: each
/// thread makes its worker with `worker` (its own scratch) and takes the
/// next item as it finishes one. Every answer, in no particular order;
/// `None` if a worker panicked (none here does).
#[cfg(feature = "std")]
fn share_out<I: Send, R: Send, W: FnMut(I) -> R>(
    items: impl Iterator<Item = I> + Send,
    threads: usize,
    worker: impl Fn() -> W + Sync,
) -> Option<Vec<R>> {
    let queue = std::sync::Mutex::new(items);
    let answers = on_threads(alloc::vec![(); threads], |()| {
        let mut work = worker();
        let mut answers = Vec::new();
        loop {
            // Its own statement: the lock is released before the work.
            let next = queue.lock().ok().and_then(|mut q| q.next());
            let Some(item) = next else { break };
            answers.push(work(item));
        }
        answers
    })?;
    Some(answers.into_iter().flatten().collect())
}
