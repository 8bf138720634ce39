//! Banding: on-the-fly Gaussian elimination into caller scratch (the paper's
//! Algorithm 1), one key at a time.
//!
//! Scratch layout for `m` slots: `m` rows of `w / 64` coefficient words,
//! each followed, for Standard Ribbon only, by its result word (see
//! [`Rows`]). An all-zero coefficient row is an empty slot.

use crate::backend::Backend;
use crate::error::Error;
use crate::filter::FilterRef;
use crate::hash::{Coeff, Equation, Expander, FreeRows, remix, seed_mix};
use crate::kernels::{SolveKernel, prefetch_for_write};
use crate::layout::{Geometry, HEADER_BYTES, Header, Kind, Width};
use crate::word::{Rows, Word};

/// What happened to one key's equation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AddOutcome {
    /// The equation now occupies a slot of its own.
    Inserted,
    /// The key is represented, but its equation took no slot: it is a sum
    /// of earlier ones. That is what a duplicate hash gives; for distinct
    /// keys it happens only where the ribbon is locally overloaded (rarely,
    /// well below [`Banding::capacity`]).
    Redundant,
    /// Standard Ribbon only: the equation contradicts earlier ones. The key
    /// was *not* added and the system is unchanged, so the caller may stop
    /// here and finish a filter of the keys added so far, or start over with
    /// another seed.
    Inconsistent,
    /// The banding holds [`Banding::capacity`] keys already: the key was
    /// *not* added and the system is unchanged. Finish a filter of the keys
    /// added so far, or start over with a plan for more keys.
    Full,
}

impl AddOutcome {
    /// The outcome's code in the C ABI (`RIBBON_ADD_*`): 0 inserted,
    /// 1 redundant, 2 inconsistent, 3 full.
    pub const fn code(self) -> u32 {
        match self {
            AddOutcome::Inserted => 0,
            AddOutcome::Redundant => 1,
            AddOutcome::Inconsistent => 2,
            AddOutcome::Full => 3,
        }
    }
}

/// Bytes of rows per bucket when keys are banded in start order: the rows
/// a bucket touches stay in the L1 cache.
const BUCKET_ROW_BYTES: usize = 16 * 1024;
/// Below this many keys the system fits in cache anyway.
const SORT_MIN_KEYS: usize = 4096;

/// Rows per start bucket: the largest power of two whose rows fit
/// [`BUCKET_ROW_BYTES`].
fn slots_per_bucket(g: &Geometry) -> usize {
    slots_per_bucket_of(row_words(g))
}

/// [`slots_per_bucket`] for rows of `row_words` words (also for
/// [`crate::bounds`]).
pub(crate) const fn slots_per_bucket_of(row_words: usize) -> usize {
    let slots = (BUCKET_ROW_BYTES / (8 * row_words) + 1).next_power_of_two() / 2;
    if slots > 1 { slots } else { 1 }
}

/// log2 of the number of start buckets for a geometry (at most 2^20): the
/// next power of two of `slots / slots_per_bucket`, except that a count
/// at most 1/32 past a power of two stays at that power (its buckets are
/// then up to 1/32 over [`BUCKET_ROW_BYTES`]). Doubling the buckets of a
/// filter just past a power of two made its counting sort scatter to twice
/// as many places: w = 128 at 10^6 keys built 7 % slower with 2,048
/// buckets than with 1,024 (`examples/compare`).
pub(crate) fn bucket_bits(g: &Geometry) -> u32 {
    let buckets = g.num_slots().div_ceil(slots_per_bucket(g)).max(1);
    let up = buckets.next_power_of_two();
    let down = up / 2;
    let bits = if down > 0 && buckets <= down + down / 32 {
        down.trailing_zeros()
    } else {
        up.trailing_zeros()
    };
    bits.min(20)
}

/// Extra u64 words of scratch for banding `n` keys in start order: the
/// reordered hashes and one counter per bucket.
pub(crate) fn sort_scratch_words(g: &Geometry, n: usize) -> Option<usize> {
    n.checked_add(1usize << bucket_bits(g))
}

/// u64 words per row: the coefficient word(s), plus the result word for
/// Standard Ribbon ([`Rows::stride`] for a geometry).
fn row_words(g: &Geometry) -> usize {
    row_words_of(g.kind, g.width)
}

/// [`row_words`] for a kind and width (also for [`crate::bounds`]).
pub(crate) const fn row_words_of(kind: Kind, width: Width) -> usize {
    Rows::stride_for(width, kind.is_standard())
}

/// u64 words of scratch a geometry needs.
pub(crate) fn scratch_words(g: &Geometry) -> Option<usize> {
    g.num_slots().checked_mul(row_words(g))
}

/// Incremental banding of key hashes into caller scratch.
///
/// Made by [`crate::Plan::banding`]. Add keys with [`Banding::add`] in any
/// order, then [`Banding::finish`] back-substitutes into the caller's output
/// buffer. Streaming callers can add keys until the first
/// [`AddOutcome::Full`] or [`AddOutcome::Inconsistent`] and keep every key
/// added before it: the filter then keeps its FP promise.
///
/// A banding accepts at most [`Banding::capacity`] keys
/// ([`crate::Plan::banding_capacity`]). For the Standard kinds that is the
/// planned key count. A Homogeneous banding stops a little earlier (at
/// about 97 % of the planned keys): unlike [`crate::Plan::build`], which
/// measures each filter and retries with another seed when a key set
/// happens to overload the ribbon locally, a stream cannot be replayed, so
/// it keeps a margin that makes such overloads negligible.
///
/// ```
/// use ribbon_kernel::{AddOutcome, Kind, Plan, Width};
///
/// let plan = Plan::new(Kind::Standard, Width::W128, 1000, 8000)?;
/// let mut scratch = vec![0u64; plan.scratch_words()];
/// let mut out = vec![0u8; plan.filter_bytes()];
/// let mut banding = plan.banding(&mut scratch)?;
/// let mut added = Vec::new();
/// for i in 0..2000u64 {
///     let hash = i.wrapping_mul(0x9e37_79b9_7f4a_7c15);
///     match banding.add(hash) {
///         AddOutcome::Inserted | AddOutcome::Redundant => added.push(hash),
///         // Not added: finish with what fits.
///         AddOutcome::Inconsistent | AddOutcome::Full => break,
///     }
/// }
/// assert!(added.len() >= 950);
/// let filter = banding.finish(&mut out)?;
/// assert!(added.iter().all(|&h| filter.contains(h)));
/// # Ok::<(), ribbon_kernel::Error>(())
/// ```
pub struct Banding<'s> {
    geometry: Geometry,
    seed: u32,
    expander: Expander,
    rows: &'s mut [u64],
    inserted: u64,
    redundant: u64,
    capacity: u64,
    solve: SolveKernel,
}

impl core::fmt::Debug for Banding<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Banding")
            .field("geometry", &self.geometry)
            .field("seed", &self.seed)
            .field("inserted", &self.inserted)
            .field("redundant", &self.redundant)
            .field("capacity", &self.capacity)
            .finish_non_exhaustive()
    }
}

impl<'s> Banding<'s> {
    /// Clears the scratch a geometry needs and starts an empty system that
    /// accepts at most `capacity` keys.
    pub(crate) fn new(
        geometry: Geometry,
        seed: u32,
        backend: Backend,
        scratch: &'s mut [u64],
        capacity: u64,
    ) -> Result<Banding<'s>, Error> {
        let solve = SolveKernel::new(backend, geometry.width).ok_or(Error::BackendUnavailable)?;
        let need = scratch_words(&geometry).ok_or(Error::TooLarge)?;
        let given = scratch.len();
        let rows = scratch.get_mut(..need).ok_or(Error::ScratchTooSmall {
            needed: need,
            given,
        })?;
        rows.fill(0);
        Ok(Banding {
            geometry,
            seed,
            expander: Expander::new(&geometry, seed),
            rows,
            inserted: 0,
            redundant: 0,
            capacity,
            solve,
        })
    }

    /// The state the C ABI keeps in its opaque banding struct (the rows
    /// stay in the caller's scratch).
    #[cfg(feature = "capi")]
    pub(crate) fn raw_parts(&self) -> BandingParts {
        BandingParts {
            geometry: self.geometry,
            seed: self.seed,
            backend: self.solve.backend(),
            inserted: self.inserted,
            redundant: self.redundant,
            capacity: self.capacity,
        }
    }

    /// Resumes a banding from [`Banding::raw_parts`] over the same rows,
    /// which are *not* cleared. Checks that the rows are long enough and
    /// the counts consistent; the rows' contents are the caller's word.
    #[cfg(feature = "capi")]
    pub(crate) fn from_raw_parts(
        parts: BandingParts,
        rows: &'s mut [u64],
    ) -> Result<Banding<'s>, Error> {
        let g = parts.geometry;
        let need = scratch_words(&g).ok_or(Error::TooLarge)?;
        let given = rows.len();
        let rows = rows.get_mut(..need).ok_or(Error::ScratchTooSmall {
            needed: need,
            given,
        })?;
        let added = parts
            .inserted
            .checked_add(parts.redundant)
            .ok_or(Error::CorruptHeader)?;
        if parts.inserted > g.num_slots() as u64 || added > parts.capacity {
            return Err(Error::CorruptHeader);
        }
        let solve = SolveKernel::new(parts.backend, g.width).ok_or(Error::BackendUnavailable)?;
        Ok(Banding {
            geometry: g,
            seed: parts.seed,
            expander: Expander::new(&g, parts.seed),
            rows,
            inserted: parts.inserted,
            redundant: parts.redundant,
            capacity: parts.capacity,
            solve,
        })
    }

    /// The seed this system hashes with.
    pub fn seed(&self) -> u32 {
        self.seed
    }

    /// Keys whose equation occupies a slot.
    pub fn inserted(&self) -> u64 {
        self.inserted
    }

    /// Keys whose equation was implied by earlier ones.
    pub fn redundant(&self) -> u64 {
        self.redundant
    }

    /// Number of slots `m`.
    pub fn num_slots(&self) -> usize {
        self.geometry.num_slots()
    }

    /// The most keys this banding accepts ([`crate::Plan::banding_capacity`]);
    /// past it, [`Banding::add`] answers [`AddOutcome::Full`].
    pub fn capacity(&self) -> u64 {
        self.capacity
    }

    /// Keys added so far: [`Banding::inserted`] plus [`Banding::redundant`].
    pub fn added(&self) -> u64 {
        self.inserted + self.redundant
    }

    /// Keys that can still be added before [`AddOutcome::Full`].
    fn room(&self) -> u64 {
        self.capacity.saturating_sub(self.added())
    }

    /// The equation `hash` contributes under this system's seed.
    /// For a filter with no slots (planned for zero keys) it is all zero.
    pub fn equation(&self, hash: u64) -> Equation {
        self.expander.equation(&self.geometry, hash)
    }

    /// Adds one key hash.
    ///
    /// A plan for zero keys has no slots and a capacity of zero: every hash
    /// is then reported [`AddOutcome::Full`] and not added.
    pub fn add(&mut self, hash: u64) -> AddOutcome {
        if self.room() == 0 || self.geometry.num_blocks == 0 {
            return AddOutcome::Full;
        }
        let outcome = match (self.geometry.width, self.expander.standard) {
            (Width::W64, false) => self.add_one::<u64, false>(hash),
            (Width::W64, true) => self.add_one::<u64, true>(hash),
            (Width::W128, false) => self.add_one::<u128, false>(hash),
            (Width::W128, true) => self.add_one::<u128, true>(hash),
        };
        self.count(outcome);
        outcome
    }

    /// Adds one key: [`Banding::add`] of [`crate::hash_key`]`(key)`, so
    /// that the filter answers [`FilterRef::contains_key`]. A key added
    /// twice is one key ([`AddOutcome::Redundant`] the second time).
    ///
    /// ```
    /// use ribbon_kernel::{Kind, Plan, Width};
    ///
    /// let plan = Plan::new(Kind::Homogeneous, Width::W64, 100, 8_000)?;
    /// let mut scratch = vec![0u64; plan.banding_scratch_words()];
    /// let mut banding = plan.banding(&mut scratch)?;
    /// for line in "to be or not to be".split(' ') {
    ///     banding.add_key(line); // no allocation: keys stream in
    /// }
    /// let mut out = vec![0u8; plan.filter_bytes()];
    /// let filter = banding.finish(&mut out)?;
    /// assert!(filter.contains_key("not"));
    /// # Ok::<(), ribbon_kernel::Error>(())
    /// ```
    pub fn add_key<K: AsRef<[u8]> + ?Sized>(&mut self, key: &K) -> AddOutcome {
        self.add(crate::key_hash::hash_key(key.as_ref()))
    }

    /// Adds every hash in order. Stops at the first one that is not added
    /// ([`AddOutcome::Inconsistent`] or [`AddOutcome::Full`]) and returns
    /// its index; the keys before it stay added.
    pub fn add_all(&mut self, hashes: &[u64]) -> Result<(), usize> {
        let room = usize::try_from(self.room()).unwrap_or(usize::MAX);
        let (fits, rest) = hashes.split_at(hashes.len().min(room));
        if self.geometry.num_blocks == 0 {
            return if hashes.is_empty() { Ok(()) } else { Err(0) };
        }
        match (self.geometry.width, self.expander.standard) {
            (Width::W64, false) => self.add_many::<u64, false>(fits),
            (Width::W64, true) => self.add_many::<u64, true>(fits),
            (Width::W128, false) => self.add_many::<u128, false>(fits),
            (Width::W128, true) => self.add_many::<u128, true>(fits),
        }?;
        if rest.is_empty() {
            Ok(())
        } else {
            Err(fits.len())
        }
    }

    /// Adds every hash like [`Banding::add_all`], but in order of start
    /// position, so that the rows touched move through memory in order
    /// (the paper's and BuRR's advice for large systems). The finished
    /// filter is the same: the solution does not depend on insertion order.
    /// `sort` is extra scratch of [`sort_scratch_words`] words; with less,
    /// or few keys, this falls back to arrival order. `Err(())` on the
    /// first inconsistency (Standard Ribbon), or if the keys exceed the
    /// capacity (none is added then).
    pub(crate) fn add_all_sorted(&mut self, hashes: &[u64], sort: &mut [u64]) -> Result<(), ()> {
        if (hashes.len() as u64) > self.room() {
            return Err(());
        }
        let bits = bucket_bits(&self.geometry);
        let buckets = 1usize << bits;
        let need = hashes.len() + buckets;
        if hashes.len() < SORT_MIN_KEYS || self.geometry.num_blocks == 0 || sort.len() < need {
            return self.add_all(hashes).map_err(|_| ());
        }
        let Some((ordered, counts)) = sort.split_at_mut_checked(hashes.len()) else {
            return self.add_all(hashes).map_err(|_| ());
        };
        let Some(counts) = counts.get_mut(..buckets) else {
            return self.add_all(hashes).map_err(|_| ());
        };
        sort_by_start(hashes, self.expander.seed_mix, bits, counts, ordered);
        match (self.geometry.width, self.expander.standard) {
            (Width::W64, false) => self.add_remixed::<u64, false>(ordered),
            (Width::W64, true) => self.add_remixed::<u64, true>(ordered),
            (Width::W128, false) => self.add_remixed::<u128, false>(ordered),
            (Width::W128, true) => self.add_remixed::<u128, true>(ordered),
        }
    }

    /// Adds already remixed values; `Err(())` on the first inconsistency.
    fn add_remixed<W: Coeff, const STANDARD: bool>(&mut self, remixed: &[u64]) -> Result<(), ()> {
        // Two insertions in flight, one from each half of the start-ordered
        // values (far apart in the row array), so that the CPU overlaps
        // their chains of dependent loads. Any interleaving of elimination
        // steps yields a valid reduced system, and the solution does not
        // depend on it. The loop keeps little state (only the redundant
        // count; the rest are insertions) so that both chains stay in
        // registers.
        let (first, second) = remixed.split_at(remixed.len() / 2);
        let expander = self.expander;
        let stride = Rows::stride::<W>(STANDARD);
        let ahead = slots_per_bucket(&self.geometry);
        let expand = |x: u64| {
            let (start, c, b) = expander.expand_remixed::<W>(x);
            Chain {
                i: start as usize,
                c,
                b,
            }
        };
        let rows = &mut *self.rows;
        let mut redundant = 0u64;
        let mut record = |outcome: AddOutcome| match outcome {
            AddOutcome::Inserted => Ok(()),
            AddOutcome::Redundant => {
                redundant += 1;
                Ok(())
            }
            AddOutcome::Inconsistent | AddOutcome::Full => Err(()),
        };
        let (mut rest_a, mut rest_b) = (first.iter(), second.iter());
        // `second` is never shorter than `first`: with one value or none,
        // only `second` has any.
        let (chain, rest) = match (rest_a.next(), rest_b.next()) {
            (Some(&x), Some(&y)) => {
                let (mut a, mut b) = (expand(x), expand(y));
                loop {
                    if let Some(outcome) = step::<W, STANDARD>(rows, &mut a) {
                        record(outcome)?;
                        match rest_a.next() {
                            Some(&x) => {
                                a = expand(x);
                                prefetch_for_write(rows, (a.i + ahead) * stride);
                            }
                            None => break (b, rest_b),
                        }
                    }
                    if let Some(outcome) = step::<W, STANDARD>(rows, &mut b) {
                        record(outcome)?;
                        match rest_b.next() {
                            Some(&y) => {
                                b = expand(y);
                                prefetch_for_write(rows, (b.i + ahead) * stride);
                            }
                            None => break (a, rest_a),
                        }
                    }
                }
            }
            (_, Some(&y)) => (expand(y), rest_b),
            (_, None) => return Ok(()),
        };
        // One chain is still in flight: its reduced equation is inserted
        // like a new one. Then what follows it.
        record(insert::<W, STANDARD>(rows, chain.i, chain.c, chain.b))?;
        for &x in rest {
            let (start, c, b) = expander.expand_remixed::<W>(x);
            record(insert::<W, STANDARD>(rows, start as usize, c, b))?;
        }
        self.inserted += remixed.len() as u64 - redundant;
        self.redundant += redundant;
        Ok(())
    }

    fn count(&mut self, outcome: AddOutcome) {
        match outcome {
            AddOutcome::Inserted => self.inserted += 1,
            AddOutcome::Redundant => self.redundant += 1,
            AddOutcome::Inconsistent | AddOutcome::Full => {}
        }
    }

    /// Adds `hashes` (which fit the capacity); stops at the first
    /// inconsistent one.
    fn add_many<W: Coeff, const STANDARD: bool>(&mut self, hashes: &[u64]) -> Result<(), usize> {
        for (i, &hash) in hashes.iter().enumerate() {
            let outcome = self.add_one::<W, STANDARD>(hash);
            if outcome == AddOutcome::Inconsistent {
                return Err(i);
            }
            self.count(outcome);
        }
        Ok(())
    }

    #[inline(always)]
    fn add_one<W: Coeff, const STANDARD: bool>(&mut self, hash: u64) -> AddOutcome {
        let (start, c, b) = self.expander.expand::<W>(hash);
        insert::<W, STANDARD>(self.rows, start as usize, c, b)
    }

    /// Back-substitutes the system into `out` and returns a view of the
    /// finished filter (the first [`crate::Plan::filter_bytes`] bytes of
    /// `out`, which may have any alignment).
    pub fn finish<'o>(self, out: &'o mut [u8]) -> Result<FilterRef<'o>, Error> {
        self.solve_into(out)?;
        // Sealed just now: its checksum need not be computed again.
        FilterRef::from_bytes_unverified(out.get(..self.geometry.filter_bytes()).unwrap_or(&[]))
    }

    /// Back-substitutes the system and writes the serialized filter to the
    /// first [`crate::Plan::filter_bytes`] bytes of `out`, sealed.
    pub(crate) fn solve_into(&self, out: &mut [u8]) -> Result<(), Error> {
        self.solve_unsealed(out)?;
        // The checksum's frame after the back-substitution's is gone.
        crate::layout::seal(
            out.get_mut(..self.geometry.filter_bytes())
                .unwrap_or(&mut []),
        );
        Ok(())
    }

    /// [`Banding::solve_into`] without the seal: the header's checksum
    /// field is zero until the caller seals the filter
    /// ([`crate::layout::seal`]).
    pub(crate) fn solve_unsealed(&self, out: &mut [u8]) -> Result<(), Error> {
        solve_unsealed(
            &self.geometry,
            self.seed,
            &self.solve,
            self.num_keys(),
            self.rows,
            out,
        )
    }

    /// The keys banded so far, inserted and redundant: the filter's key
    /// count.
    pub(crate) fn num_keys(&self) -> u64 {
        self.inserted + self.redundant
    }
}

/// Back-substitutes `rows` (a banding of `num_keys` keys into a filter of
/// `geometry` with `seed`) and writes the serialized filter, unsealed (its
/// checksum zero), to the first [`Geometry::filter_bytes`] bytes of `out`.
/// Builds call it after their banding's frame is gone, and seal once
/// after the seeds they tried, so that neither the banding's state nor
/// the checksum is in the frame under the back-substitution on small
/// stacks.
#[inline(never)]
pub(crate) fn solve_unsealed(
    geometry: &Geometry,
    seed: u32,
    solve: &SolveKernel,
    num_keys: u64,
    rows: &[u64],
    out: &mut [u8],
) -> Result<(), Error> {
    let len = geometry.filter_bytes();
    let too_small = Error::OutputTooSmall {
        needed: len,
        given: out.len(),
    };
    let out = out.get_mut(..len).ok_or(too_small)?;
    let (header, payload) = out
        .split_first_chunk_mut::<HEADER_BYTES>()
        .ok_or(too_small)?;
    solve.run(
        geometry,
        FreeRows::Pseudorandom(seed_mix(seed)),
        Rows::new_for(geometry.width, rows, geometry.kind.is_standard()),
        payload,
    );
    write_header(header, geometry, seed, num_keys);
    Ok(())
}

/// The header of a filter of `geometry` and `num_keys` keys with `seed`
/// (in a frame of its own: not under the back-substitution).
#[inline(never)]
fn write_header(header: &mut [u8; HEADER_BYTES], geometry: &Geometry, seed: u32, num_keys: u64) {
    let h = Header {
        geometry: *geometry,
        seed,
        num_keys,
    };
    *header = h.encode();
}

/// A [`Banding`] without its rows (see [`Banding::raw_parts`]).
#[cfg(feature = "capi")]
#[derive(Clone, Copy, Debug)]
pub(crate) struct BandingParts {
    pub(crate) geometry: Geometry,
    pub(crate) seed: u32,
    pub(crate) backend: Backend,
    pub(crate) inserted: u64,
    pub(crate) redundant: u64,
    pub(crate) capacity: u64,
}

/// Counting sort of the remixed hashes by their top `bits` bits into
/// `ordered`. The start is a non-decreasing function of the remixed hash,
/// so this orders keys by start; storing the remixed values spares banding
/// a second remix. Not inlined, so that the compiler knows `counts` and
/// `ordered` do not overlap and keeps each bucket's position in a register
/// across the store.
#[inline(never)]
fn sort_by_start(
    hashes: &[u64],
    seed_mix: u64,
    bits: u32,
    counts: &mut [u64],
    ordered: &mut [u64],
) {
    let bucket = |x: u64| start_bucket(x, bits);
    counts.fill(0);
    for &h in hashes {
        if let Some(c) = counts.get_mut(bucket(remix(h, seed_mix))) {
            *c += 1;
        }
    }
    // Exclusive prefix sums: where each bucket starts.
    let mut total = 0;
    for c in counts.iter_mut() {
        let n = *c;
        *c = total;
        total += n;
    }
    for &h in hashes {
        let x = remix(h, seed_mix);
        if let Some(next) = counts.get_mut(bucket(x)) {
            let at = *next;
            if let Some(slot) = ordered.get_mut(at as usize) {
                *slot = x;
            }
            *next = at + 1;
        }
    }
}

/// The bucket of a remixed hash among `2^bits` buckets in start order:
/// its top `bits` bits (the start is a non-decreasing function of them).
#[inline(always)]
fn start_bucket(x: u64, bits: u32) -> usize {
    // x >> (64 - bits), without a 64-bit shift when bits is 0.
    ((x >> 1) >> (63 - bits)) as usize
}

/// [`sort_by_start`] of `(hash, value)` pairs: the remixed hashes into
/// `ordered` and each one's value beside it in `ordered_values`, for
/// retrieval builds, whose right sides are the values.
#[inline(never)]
pub(crate) fn sort_pairs_by_start(
    hashes: &[u64],
    values: &[u64],
    seed_mix: u64,
    bits: u32,
    counts: &mut [u64],
    ordered: &mut [u64],
    ordered_values: &mut [u64],
) {
    counts.fill(0);
    for &h in hashes {
        if let Some(c) = counts.get_mut(start_bucket(remix(h, seed_mix), bits)) {
            *c += 1;
        }
    }
    let mut total = 0;
    for c in counts.iter_mut() {
        let n = *c;
        *c = total;
        total += n;
    }
    for (&h, &v) in hashes.iter().zip(values) {
        let x = remix(h, seed_mix);
        if let Some(next) = counts.get_mut(start_bucket(x, bits)) {
            let at = *next as usize;
            if let (Some(slot), Some(value)) = (ordered.get_mut(at), ordered_values.get_mut(at)) {
                (*slot, *value) = (x, v);
            }
            *next += 1;
        }
    }
}

/// An equation on its way through the system: `c · Z[i..i + w] = b`.
#[derive(Clone, Copy)]
pub(crate) struct Chain<W> {
    pub(crate) i: usize,
    pub(crate) c: W,
    pub(crate) b: u64,
}

/// One step of [`insert`]: the outcome once the chain ends, else `None`.
#[inline(always)]
pub(crate) fn step<W: Word, const STANDARD: bool>(
    rows: &mut [u64],
    chain: &mut Chain<W>,
) -> Option<AddOutcome> {
    let stride = Rows::stride::<W>(STANDARD);
    let result_at = Rows::coeff_words::<W>();
    let at = chain.i * stride;
    // One bounds check per step. Out of bounds cannot happen (see
    // [`insert`]); were it to, the key is refused rather than dropped.
    let Some(row) = rows.get_mut(at..at + stride) else {
        return Some(AddOutcome::Inconsistent);
    };
    let existing = W::load(row, 0);
    if existing.is_zero() {
        chain.c.store(row, 0);
        if STANDARD && let Some(r) = row.get_mut(result_at) {
            *r = chain.b;
        }
        return Some(AddOutcome::Inserted);
    }
    chain.c = chain.c ^ existing;
    if STANDARD {
        chain.b ^= row.get(result_at).copied().unwrap_or(0);
    }
    if chain.c.is_zero() {
        return Some(if chain.b == 0 {
            AddOutcome::Redundant
        } else {
            AddOutcome::Inconsistent
        });
    }
    let (shift, c) = chain.c.drop_trailing_zeros();
    chain.i += shift as usize;
    chain.c = c;
    None
}

/// Algorithm 1: inserts `c · Z[start..start+w] = b` into the system.
///
/// Invariant: `start + (index of c's highest set bit) < m`, which holds for
/// every start the expander produces and is preserved by each step, so every
/// index below stays in bounds.
#[inline(always)]
pub(crate) fn insert<W: Word, const STANDARD: bool>(
    rows: &mut [u64],
    start: usize,
    c: W,
    b: u64,
) -> AddOutcome {
    chain_to_end::<W, STANDARD>(rows, &mut Chain { i: start, c, b })
}

/// Runs `chain` to its end: the outcome, with `chain.i` the row it ended
/// at (where an inserted equation now lives).
#[inline(always)]
pub(crate) fn chain_to_end<W: Word, const STANDARD: bool>(
    rows: &mut [u64],
    chain: &mut Chain<W>,
) -> AddOutcome {
    loop {
        if let Some(outcome) = step::<W, STANDARD>(rows, chain) {
            return outcome;
        }
    }
}
