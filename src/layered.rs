//! The layered query of Bumped Ribbon, for filters and retrieval alike.
//!
//! A Bumped structure is a stack of Standard Ribbon layers. Each layer but
//! the last keeps a threshold per bucket of starts: a key whose start lies
//! past its bucket's threshold was bumped, so the layer's answer for it is
//! meaningless and the next layer answers instead (1 key in 12 at w = 64
//! reaches the second layer, 1 in 2,000 the third).
//!
//! [`BumpedTop`] is what a view keeps to answer that way: the first
//! layer's thresholds and payload (as ranges of the bytes) and the query
//! state of the next two layers; deeper layers are decoded from the bytes
//! when a key reaches them ([`walk_layers`]). It is generic over a layer's
//! kernels ([`LayerKernels`]): a filter's answers (`bool`) or a retrieval
//! structure's values (`u64`), so both families share one layered query.
//!
//! [`FirstLayer`] is the same query with no view at all, for callers that
//! keep only a few words of state (the C ABI's structs): the first layer's
//! geometry, seed and ranges, and nothing that points into the code.

use crate::backend::Backend;
use crate::bumped_layout::{self, Buckets, BumpedHeader, BumpedKey, Layers, ThresholdsRef};
use crate::error::Error;
use crate::hash::Expander;
use crate::kernels::{self, Answer, Kernels, LayerKernels, QueryKernels, ScanBumpedFn};
use crate::layout::{Geometry, HEADER_BYTES};
use crate::probe::Parts;

/// Keys a Bumped structure's batch query gathers before the second layer
/// answers them (about 2 KB of stack for them; 128 were no faster).
/// 32-bit targets (small stacks: Cortex-M) gather 8, in 256 bytes.
const BUMPED_BATCH: usize = if cfg!(target_pointer_width = "64") {
    64
} else {
    8
};

/// Keys the second layer bumped that a batch gathers at a time: 16 (two
/// vectors' worth for the scan kernels), 8 on 32-bit targets.
const DEEPER_BATCH: usize = if cfg!(target_pointer_width = "64") {
    16
} else {
    8
};

/// Keys a Bumped batch query answers from the first layer before it scans
/// their thresholds: 16 KiB of hashes, which the scan finds in L1 or L2.
const SCAN_BLOCK: usize = 2048;

/// Layers after the first whose query state a view keeps (deeper ones are
/// decoded from the bytes when a key reaches them: 1 in 2,000 keys or
/// fewer).
const CACHED_LAYERS: usize = 2;

/// What a view of a Bumped structure keeps besides its first layer's
/// parts and kernels (for a filter, `Validated::parts` and `kernels`):
/// where the first layer's thresholds and payload lie in the bytes (as
/// ranges, so that the state has no borrow), and the next layers' query
/// state. `K` are a layer's kernels: a filter's queries or a retrieval
/// structure's evaluations ([`LayerKernels`]); the layered query is one
/// for both.
#[derive(Clone, Copy, Debug)]
pub(crate) struct BumpedTop<K = QueryKernels<Parts>> {
    num_layers: usize,
    buckets: Buckets,
    first: LayerRanges,
    cached: [Option<CachedLayer<K>>; CACHED_LAYERS],
    /// The backend's scan of the first layer's thresholds for batches.
    scan: ScanBumpedFn,
    backend: Backend,
    /// The serialized length.
    len: usize,
}

/// What a view decodes from a structure's header, everything but the
/// bytes, for filters and retrieval alike: the (first) layer's parts and
/// kernels, answering `A` per key (a filter's `bool`, a retrieval
/// structure's `u64`), and for Bumped structures what the layers after it
/// need. `filter::Validated` and `retrieval::RetrievalState` are this
/// type; each family decodes its own header into it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ViewState<A: Answer> {
    /// The (first) layer's geometry and hash expansion.
    pub(crate) parts: Parts,
    /// The header's seed (a Bumped structure's first layer has its own).
    pub(crate) seed: u32,
    pub(crate) num_keys: u64,
    /// A retrieval structure's bits per value; 0 for a filter.
    pub(crate) value_bits: u32,
    kernels: Kernels<Parts, A>,
    /// A Bumped structure's layers after the first, and where the first's
    /// thresholds and payload lie.
    pub(crate) bumped: Option<BumpedTop<Kernels<Parts, A>>>,
}

impl<A: Answer> ViewState<A> {
    /// The state of a structure of one layer: geometry `g`, `seed`,
    /// `num_keys`, `value_bits`, with `backend`'s kernels.
    pub(crate) fn single(
        g: Geometry,
        seed: u32,
        num_keys: u64,
        value_bits: u32,
        backend: Backend,
    ) -> Result<ViewState<A>, Error> {
        Ok(ViewState {
            parts: Parts {
                geometry: g,
                expander: Expander::new(&g, seed),
            },
            seed,
            num_keys,
            value_bits,
            kernels: A::for_layer(backend, &g).ok_or(Error::BackendUnavailable)?,
            bumped: None,
        })
    }

    /// The state of the Bumped structure `bytes` (its layer table
    /// validated), with `backend`'s kernels; `value_bits` as for
    /// [`ViewState::single`].
    pub(crate) fn layered(
        bytes: &[u8],
        value_bits: u32,
        backend: Backend,
    ) -> Result<ViewState<A>, Error> {
        let (first, header, top) = BumpedTop::decode(bytes, backend)?;
        let g = first.geometry;
        Ok(ViewState {
            parts: Parts {
                geometry: g,
                expander: Expander::new(&g, first.seed),
            },
            seed: header.seed,
            num_keys: header.num_keys,
            value_bits,
            kernels: A::for_layer(backend, &g).ok_or(Error::BackendUnavailable)?,
            bumped: Some(top),
        })
    }

    /// The same state with `backend`'s kernels (`bytes` are those it was
    /// decoded from: a Bumped structure's later layers are resolved again
    /// from them).
    pub(crate) fn with_backend(self, bytes: &[u8], backend: Backend) -> Result<Self, Error> {
        let kernels =
            A::for_layer(backend, &self.parts.geometry).ok_or(Error::BackendUnavailable)?;
        let bumped = match self.bumped {
            Some(_) => Some(BumpedTop::decode(bytes, backend)?.2),
            None => None,
        };
        Ok(ViewState {
            kernels,
            bumped,
            ..self
        })
    }

    /// The payload the kernels of `parts` read in `bytes` (the structure
    /// this state was decoded from): the first layer's for a Bumped one.
    pub(crate) fn payload<'b>(&self, bytes: &'b [u8]) -> &'b [u8] {
        match &self.bumped {
            None => bytes.get(HEADER_BYTES..).unwrap_or(&[]),
            Some(top) => top.first_payload(bytes),
        }
    }

    /// The answer for `hash` of the structure `bytes` (which this state
    /// was decoded from; `payload` is [`ViewState::payload`]).
    #[inline(always)]
    pub(crate) fn one(&self, bytes: &[u8], payload: &[u8], hash: u64) -> A {
        match &self.bumped {
            None => self.kernels.one(&self.parts, payload, hash),
            Some(top) => top.one(&self.parts, &self.kernels, bytes, payload, hash),
        }
    }

    /// Answers every hash into `out` (of the same length).
    pub(crate) fn batch(&self, bytes: &[u8], payload: &[u8], hashes: &[u64], out: &mut [A]) {
        match &self.bumped {
            None => self.kernels.batch(&self.parts, payload, hashes, out),
            Some(top) => top.batch(&self.parts, &self.kernels, bytes, hashes, out),
        }
    }

    /// The backend the kernels belong to.
    pub(crate) fn backend(&self) -> Backend {
        self.kernels.backend()
    }

    /// The serialized length of the structure this state was decoded
    /// from.
    #[cfg_attr(not(feature = "alloc"), allow(dead_code))]
    pub(crate) fn len(&self) -> usize {
        match &self.bumped {
            Some(top) => top.len(),
            None => self.parts.geometry.filter_bytes(),
        }
    }

    /// The first layer as this state has it: what [`Opened`] must agree
    /// with (the C structs keep the one, Rust views the other).
    #[cfg(all(test, feature = "capi"))]
    pub(crate) fn first_layer(&self) -> FirstLayer {
        let (span, last) = match &self.bumped {
            None => (LayerSpan::single(&self.parts.geometry), true),
            Some(top) => (top.first.span(), top.num_layers == 1),
        };
        FirstLayer {
            parts: self.parts,
            span,
            last,
        }
    }
}

/// Where a layer's thresholds and payload lie in the structure's bytes.
#[derive(Clone, Copy, Debug)]
struct LayerRanges {
    groups: (usize, usize),
    listed: (usize, usize),
    payload: (usize, usize),
}

impl LayerRanges {
    fn of(layer: &bumped_layout::LayerRef<'_>) -> LayerRanges {
        let t = &layer.thresholds;
        let groups = (layer.data_at, layer.data_at + t.groups.len());
        let listed = (groups.1, groups.1 + t.listed.len());
        let payload = (listed.1, listed.1 + layer.payload.len());
        LayerRanges {
            groups,
            listed,
            payload,
        }
    }

    /// The same ranges as the C structs keep them.
    #[cfg(feature = "capi")]
    fn span(&self) -> LayerSpan {
        LayerSpan {
            groups_at: self.groups.0 as u64,
            listed_at: self.listed.0 as u64,
            payload_at: self.payload.0 as u64,
            payload_end: self.payload.1 as u64,
        }
    }

    /// The layer's thresholds in `bytes`.
    #[inline(always)]
    fn thresholds<'b>(&self, buckets: Buckets, bytes: &'b [u8]) -> ThresholdsRef<'b> {
        // The list follows the groups: one range check for both.
        let both = bytes.get(self.groups.0..self.listed.1).unwrap_or(&[]);
        let (groups, listed) = both
            .split_at_checked(self.groups.1 - self.groups.0)
            .unwrap_or((&[], &[]));
        ThresholdsRef {
            buckets,
            groups,
            listed,
        }
    }
}

/// A later layer's query state.
#[derive(Clone, Copy, Debug)]
struct CachedLayer<K> {
    parts: Parts,
    kernels: K,
    ranges: LayerRanges,
    last: bool,
}

impl<K: LayerKernels> CachedLayer<K> {
    fn new(layer: &bumped_layout::LayerRef<'_>, backend: Backend) -> Result<CachedLayer<K>, Error> {
        let g = layer.geometry;
        Ok(CachedLayer {
            parts: Parts {
                geometry: g,
                expander: Expander::new(&g, layer.seed),
            },
            kernels: K::for_layer(backend, &g).ok_or(Error::BackendUnavailable)?,
            ranges: LayerRanges::of(layer),
            last: layer.last,
        })
    }
}

impl<K: LayerKernels> BumpedTop<K> {
    /// The first layer of the Bumped structure `bytes` (validated) and
    /// what a view keeps of the others, querying with `backend`.
    pub(crate) fn decode(
        bytes: &[u8],
        backend: Backend,
    ) -> Result<(bumped_layout::LayerRef<'_>, BumpedHeader, BumpedTop<K>), Error> {
        let mut layers = Layers::new(bytes)?;
        let header = layers.header();
        let mut keys = header.num_keys;
        let first = layers
            .next_layer(keys, false)
            .ok_or(Error::CorruptHeader)??;
        keys = first.num_keys;
        let mut cached = [None; CACHED_LAYERS];
        for slot in cached.iter_mut() {
            match layers.next_layer(keys, false) {
                Some(layer) => {
                    let layer = layer?;
                    keys = layer.num_keys;
                    *slot = Some(CachedLayer::new(&layer, backend)?);
                }
                None => break,
            }
        }
        let top = BumpedTop {
            scan: kernels::scan_bumped(backend).ok_or(Error::BackendUnavailable)?,
            backend,
            num_layers: header.num_layers,
            buckets: first.thresholds.buckets,
            first: LayerRanges::of(&first),
            cached,
            len: bytes.len(),
        };
        Ok((first, header, top))
    }

    /// The first layer's payload in `bytes`.
    #[inline(always)]
    pub(crate) fn first_payload<'b>(&self, bytes: &'b [u8]) -> &'b [u8] {
        bytes
            .get(self.first.payload.0..self.first.payload.1)
            .unwrap_or(&[])
    }

    /// The serialized length of the structure this was decoded from.
    #[cfg_attr(not(feature = "alloc"), allow(dead_code))]
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// One key's answer: the first layer's (`parts`, `kernels`; `payload`
    /// is [`BumpedTop::first_payload`] of `bytes`) unless the key's bucket
    /// bumped it. Out of line, so that a filter of another kind keeps its
    /// query one predictable branch and one indirect call.
    #[inline(never)]
    pub(crate) fn one(
        &self,
        parts: &Parts,
        kernels: &K,
        bytes: &[u8],
        payload: &[u8],
        hash: u64,
    ) -> K::Answer {
        if self.num_layers > 1 {
            let thresholds = self.first.thresholds(self.buckets, bytes);
            // One branch, taken by about 1 key in 11 at w = 64 (bumped,
            // or its threshold maybe listed): the decoding's other ways
            // are selects.
            if thresholds.maybe_bumped(parts.expander.remix_and_start(hash).1)
                && let Some(answer) = self.bumped_or_listed(parts, bytes, hash)
            {
                return answer;
            }
        }
        kernels.one(parts, payload, hash)
    }

    /// A key of [`BumpedTop::one`] whose first-layer bucket bumped it, or
    /// may list its threshold: its answer from the layers after the first,
    /// or `None` when the first layer answers it after all.
    #[inline(never)]
    fn bumped_or_listed(&self, parts: &Parts, bytes: &[u8], hash: u64) -> Option<K::Answer> {
        let thresholds = self.first.thresholds(self.buckets, bytes);
        let x = bumped_by(parts, &thresholds, hash)?;
        Some(self.deeper(bytes, x))
    }

    /// Every hash's answer into `out`, the first layer's kernels (of
    /// `parts` and `kernels`) first: the keys it bumped (about 1 in 12 at
    /// w = 64) ask the layers after it, gathered [`BUMPED_BATCH`] at a
    /// time so that the next layer's batch kernel answers them too.
    pub(crate) fn batch(
        &self,
        parts: &Parts,
        kernels: &K,
        bytes: &[u8],
        hashes: &[u64],
        out: &mut [K::Answer],
    ) {
        let payload = self.first_payload(bytes);
        if self.num_layers == 1 {
            kernels.batch(parts, payload, hashes, out);
            return;
        }
        // A block at a time, so that the threshold scan reads the hashes
        // while the cache still holds them (a whole batch's hashes, read
        // twice, can come from memory twice).
        for (block, answers) in hashes.chunks(SCAN_BLOCK).zip(out.chunks_mut(SCAN_BLOCK)) {
            kernels.batch(parts, payload, block, answers);
            self.batch_bumped(parts, bytes, block, answers);
        }
    }

    /// The rest of [`BumpedTop::batch`] once the first layer answered.
    #[inline(never)]
    fn batch_bumped(&self, parts: &Parts, bytes: &[u8], hashes: &[u64], out: &mut [K::Answer]) {
        let thresholds = self.first.thresholds(self.buckets, bytes);
        let mut bumped = [BumpedKey::default(); BUMPED_BATCH];
        let unscanned =
            scan_in_pieces(self.scan, parts, &thresholds, hashes, &mut bumped, |keys| {
                self.answer_bumped(bytes, keys, out);
            });
        // Should a scan have taken no key, the rest go one by one (never
        // skipped: that could be a false negative).
        let rest = hashes.get(unscanned..).unwrap_or(&[]);
        let outs = out.get_mut(unscanned..).unwrap_or(&mut []);
        for (&hash, answer) in rest.iter().zip(outs) {
            if let Some(x) = bumped_by(parts, &thresholds, hash) {
                *answer = self.deeper(bytes, x);
            }
        }
    }

    /// Answers the keys the first layer bumped (what it remixed each to,
    /// and where its answer goes): all through the second layer's batch
    /// kernel, then those the second layer bumped in turn (1 in 12 of
    /// them at w = 64, found by the same threshold scan as the first
    /// layer's, without a branch per key) one by one.
    fn answer_bumped(&self, bytes: &[u8], bumped: &[BumpedKey], out: &mut [K::Answer]) {
        let answer_deeper = |key: &BumpedKey, out: &mut [K::Answer]| {
            if let Some(answer) = out.get_mut(key.at) {
                *answer = self.deeper(bytes, key.x);
            }
        };
        let Some(second) = &self.cached[0] else {
            // A structure of more layers than the view keeps, bytes that
            // lost the second: key by key.
            for key in bumped {
                answer_deeper(key, out);
            }
            return;
        };
        let mut xs = [0u64; BUMPED_BATCH];
        for (x, key) in xs.iter_mut().zip(bumped) {
            *x = key.x;
        }
        let mut answers = [K::Answer::default(); BUMPED_BATCH];
        let count = bumped.len().min(BUMPED_BATCH);
        let (Some(xs), Some(answers)) = (xs.get(..count), answers.get_mut(..count)) else {
            return;
        };
        let (from, to) = second.ranges.payload;
        let payload = bytes.get(from..to).unwrap_or(&[]);
        second.kernels.batch(&second.parts, payload, xs, answers);
        for (&answer, key) in answers.iter().zip(bumped) {
            if let Some(out) = out.get_mut(key.at) {
                *out = answer;
            }
        }
        if second.last {
            return;
        }
        // The keys the second layer bumped: `at` is their place in `xs`.
        let thresholds = second.ranges.thresholds(self.buckets, bytes);
        // About 1 in 12 of them, a scan at a time.
        let mut deeper = [BumpedKey::default(); DEEPER_BATCH];
        let unscanned = scan_in_pieces(
            self.scan,
            &second.parts,
            &thresholds,
            xs,
            &mut deeper,
            |keys| {
                for key in keys.iter().filter_map(|d| bumped.get(d.at)) {
                    answer_deeper(key, out);
                }
            },
        );
        // Should a scan have taken no key: the rest one by one.
        for key in bumped.get(unscanned..count).unwrap_or(&[]) {
            answer_deeper(key, out);
        }
    }

    /// The layers after the first, for a key the first bumped (`x`: what
    /// the first layer remixed it to). Bytes that no longer hold a layer
    /// answer [`LayerKernels::MISSING`].
    #[inline]
    fn deeper(&self, bytes: &[u8], mut x: u64) -> K::Answer {
        for layer in self.cached.iter().flatten() {
            if !layer.last {
                let thresholds = layer.ranges.thresholds(self.buckets, bytes);
                if let Some(y) = bumped_by(&layer.parts, &thresholds, x) {
                    x = y;
                    continue;
                }
            }
            let (from, to) = layer.ranges.payload;
            return match bytes.get(from..to) {
                Some(payload) => layer.kernels.one(&layer.parts, payload, x),
                None => K::MISSING,
            };
        }
        self.uncached(bytes, 1 + CACHED_LAYERS, x)
    }

    /// [`BumpedTop::deeper`] from layer `from` on, decoding the layers
    /// from the bytes.
    #[cold]
    #[inline(never)]
    fn uncached(&self, bytes: &[u8], from: usize, x: u64) -> K::Answer {
        walk_layers::<K>(bytes, self.backend, from, x)
    }
}

/// The answer of the layers after the first `from` of the Bumped structure
/// `bytes` (validated) for a key that reached them as `x` (what the layer
/// before remixed it to), with `backend`'s kernels `K`: each layer decoded
/// from the bytes as the key reaches it and nothing kept, so that it needs
/// little stack (a view's layers past those it keeps; the C ABI's one-shot
/// queries). Bytes that no longer hold a layer answer
/// [`LayerKernels::MISSING`].
#[inline(never)]
fn walk_layers<K: LayerKernels>(
    bytes: &[u8],
    backend: Backend,
    from: usize,
    mut x: u64,
) -> K::Answer {
    let Ok(mut layers) = Layers::new(bytes) else {
        return K::MISSING;
    };
    let mut keys = layers.header().num_keys;
    let mut i = 0;
    while let Some(Ok(layer)) = layers.next_layer(keys, false) {
        keys = layer.num_keys;
        i += 1;
        if i <= from {
            continue;
        }
        let g = layer.geometry;
        let parts = Parts {
            geometry: g,
            expander: Expander::new(&g, layer.seed),
        };
        if !layer.last
            && let Some(y) = bumped_by(&parts, &layer.thresholds, x)
        {
            x = y;
            continue;
        }
        let Some(kernels) = K::for_layer(backend, &g) else {
            return K::MISSING;
        };
        return kernels.one(&parts, layer.payload, x);
    }
    K::MISSING
}

/// Scans `hashes` with `scan` for the keys a layer (`parts`,
/// `thresholds`) bumps, a piece at a time into `buffer`, and hands each
/// piece's bumped keys to `each` (`at`: their index in `hashes`). Returns
/// how many hashes were scanned: all of them, unless a scan took none
/// (which a scan with room in `buffer` never does); the caller answers
/// the rest one by one.
#[inline(always)]
fn scan_in_pieces(
    scan: ScanBumpedFn,
    parts: &Parts,
    thresholds: &ThresholdsRef<'_>,
    hashes: &[u64],
    buffer: &mut [BumpedKey],
    mut each: impl FnMut(&[BumpedKey]),
) -> usize {
    let mut scanned = 0;
    while let Some(rest) = hashes.get(scanned..)
        && !rest.is_empty()
    {
        let (n, written) = scan(parts, thresholds, rest, scanned, buffer);
        each(buffer.get(..written).unwrap_or(&[]));
        if n == 0 {
            break;
        }
        scanned += n;
    }
    scanned
}

/// A bumping layer's verdict on a key: `Some(x)`, the value the key
/// carries to the next layer, when the bucket of its start (from `x`, its
/// remix with the layer's seed) bumped it.
#[inline(always)]
fn bumped_by(parts: &Parts, thresholds: &ThresholdsRef<'_>, hash: u64) -> Option<u64> {
    let (x, start) = parts.expander.remix_and_start(hash);
    thresholds.bumped_flag(start).then_some(x)
}

/// A structure's first layer, as a caller with no view keeps it: the C
/// ABI's structs, which hold a few words and nothing that points into the
/// code. Every key's query starts there and, for 11 keys in 12, ends there
/// too; a key the layer bumped walks the later layers from the bytes
/// ([`walk_layers`]).
///
/// Decoded once, when the structure is opened; the C structs keep the
/// [`Parts`] themselves (plain bytes) and the [`LayerSpan`] as words, so
/// that a query builds nothing and costs what a view's does.
#[cfg(feature = "capi")]
#[derive(Clone, Copy, Debug)]
pub(crate) struct FirstLayer {
    pub(crate) parts: Parts,
    pub(crate) span: LayerSpan,
    /// Whether no layer follows (every key it holds stays).
    pub(crate) last: bool,
}

/// What the C view structs keep of a structure whose bytes validated:
/// its first layer and its header's fields. Decoded with every check a
/// view's open makes, kernels included, but without a view's state (the
/// later layers' query state, which a C struct does not keep): on a
/// Cortex-M4 that state and its copies were over a kilobyte of an open's
/// stack.
#[cfg(feature = "capi")]
#[derive(Clone, Copy, Debug)]
pub(crate) struct Opened {
    pub(crate) first: FirstLayer,
    pub(crate) backend: Backend,
    pub(crate) kind: crate::layout::Kind,
    /// The header's seed (a Bumped structure's first layer has its own).
    pub(crate) seed: u32,
    pub(crate) num_keys: u64,
    /// A retrieval structure's bits per value; 0 for a filter.
    pub(crate) value_bits: u32,
}

#[cfg(feature = "capi")]
impl Opened {
    /// A structure of one layer, as [`ViewState::single`] decodes it
    /// (answering `A` with `backend`'s kernels, which must exist).
    pub(crate) fn single<A: Answer>(
        g: Geometry,
        seed: u32,
        num_keys: u64,
        value_bits: u32,
        backend: Backend,
    ) -> Result<Opened, Error> {
        A::for_layer(backend, &g).ok_or(Error::BackendUnavailable)?;
        Ok(Opened {
            first: FirstLayer {
                parts: Parts {
                    geometry: g,
                    expander: Expander::new(&g, seed),
                },
                span: LayerSpan::single(&g),
                last: true,
            },
            backend,
            kind: g.kind,
            seed,
            num_keys,
            value_bits,
        })
    }

    /// The Bumped structure `bytes` (its layer table validated), as
    /// [`ViewState::layered`] decodes it: the same layers read and the
    /// same kernels required, none of them kept.
    pub(crate) fn layered<A: Answer>(
        bytes: &[u8],
        value_bits: u32,
        backend: Backend,
    ) -> Result<Opened, Error> {
        let mut layers = Layers::new(bytes)?;
        let header = layers.header();
        let first = layers
            .next_layer(header.num_keys, false)
            .ok_or(Error::CorruptHeader)??;
        // What the view keeps of the first layer, taken now: the layer
        // itself is then not in the frame while the next ones decode.
        let (g, seed, mut keys) = (first.geometry, first.seed, first.num_keys);
        let span = LayerRanges::of(&first).span();
        A::for_layer(backend, &g).ok_or(Error::BackendUnavailable)?;
        for _ in 0..CACHED_LAYERS {
            let Some(layer) = layers.next_layer(keys, false) else {
                break;
            };
            let layer = layer?;
            keys = layer.num_keys;
            A::for_layer(backend, &layer.geometry).ok_or(Error::BackendUnavailable)?;
        }
        kernels::scan_bumped(backend).ok_or(Error::BackendUnavailable)?;
        Ok(Opened {
            first: FirstLayer {
                parts: Parts {
                    geometry: g,
                    expander: Expander::new(&g, seed),
                },
                span,
                last: header.num_layers == 1,
            },
            backend,
            kind: crate::layout::Kind::Bumped,
            seed: header.seed,
            num_keys: header.num_keys,
            value_bits,
        })
    }
}

/// Where a first layer lies in its structure's bytes: offsets (`usize`
/// values on the target that decoded them) as four plain words, which
/// the C structs hold as they are, so that a query reads them in place.
#[cfg(feature = "capi")]
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct LayerSpan {
    /// Where its threshold groups and its listed thresholds start (both
    /// empty unless it bumps), and its payload starts and ends.
    pub(crate) groups_at: u64,
    pub(crate) listed_at: u64,
    pub(crate) payload_at: u64,
    pub(crate) payload_end: u64,
}

#[cfg(feature = "capi")]
impl LayerSpan {
    /// The span of a structure of one layer of geometry `g`: no
    /// thresholds, its payload right after the header.
    fn single(g: &Geometry) -> LayerSpan {
        LayerSpan {
            groups_at: HEADER_BYTES as u64,
            listed_at: HEADER_BYTES as u64,
            payload_at: HEADER_BYTES as u64,
            payload_end: (HEADER_BYTES + g.payload_bytes()) as u64,
        }
    }

    /// The bytes from `from` to `to` (offsets of this span), if they lie
    /// in `bytes`.
    #[inline(always)]
    fn range(bytes: &[u8], from: u64, to: u64) -> Option<&[u8]> {
        bytes.get(usize::try_from(from).ok()?..usize::try_from(to).ok()?)
    }

    /// The layer's thresholds in `bytes` (none should the span not fit
    /// them), its geometry `parts`'.
    #[inline(always)]
    fn thresholds<'b>(&self, parts: &Parts, bytes: &'b [u8]) -> ThresholdsRef<'b> {
        let both = LayerSpan::range(bytes, self.groups_at, self.payload_at).unwrap_or(&[]);
        let groups_len = usize::try_from(self.listed_at.wrapping_sub(self.groups_at));
        let (groups, listed) = groups_len
            .ok()
            .and_then(|n| both.split_at_checked(n))
            .unwrap_or((&[], &[]));
        ThresholdsRef {
            buckets: Buckets::for_width(parts.geometry.width),
            groups,
            listed,
        }
    }

    /// The layer's payload in `bytes`: [`Error::Truncated`] if the span
    /// does not fit them (an open stores only spans that do).
    #[inline(always)]
    pub(crate) fn payload<'b>(&self, bytes: &'b [u8]) -> Result<&'b [u8], Error> {
        LayerSpan::range(bytes, self.payload_at, self.payload_end).ok_or(Error::Truncated {
            needed: usize::try_from(self.payload_end).unwrap_or(usize::MAX),
            given: bytes.len(),
        })
    }
}

/// The answer for `hash` of the structure `bytes` whose first layer is
/// `parts` and `span` (decoded from the bytes when they were validated;
/// `last` when no layer follows), with `backend`'s kernels `K`: the first
/// layer's, or for a key it bumped the later layers'. The kernels load
/// unchecked: the caller vouches that `parts` and `span` were decoded
/// together from validated bytes (the C structs' check word), and a span
/// past `bytes` is [`Error::Truncated`]. Nothing is built in memory: a
/// query's stores hold back the loads of the queries after it. (The C
/// views answer a structure of one layer whose kernel has resolved
/// inline, and call this for the rest: `ffi::view`.)
#[cfg(feature = "capi")]
#[inline(always)]
pub(crate) fn first_layer_answer<K: LayerKernels>(
    choice: u32,
    parts: &Parts,
    span: &LayerSpan,
    last: bool,
    bytes: &[u8],
    backend: Backend,
    hash: u64,
) -> Result<K::Answer, Error> {
    // The span and the parts were decoded together from bytes that were
    // validated: the span holds the geometry's payload. Its bounds are
    // checked against the bytes all the same.
    let payload = span.payload(bytes)?;
    let g = &parts.geometry;
    let one = kernels::resolved_one::<K>(choice, backend, g).ok_or(Error::BackendUnavailable)?;
    if last {
        return Ok(one(parts, payload, hash));
    }
    Ok(bumping_first_layer::<K>(
        one, parts, span, bytes, backend, payload, hash,
    ))
}

/// [`first_layer_answer`] of a first layer that bumps: its answer, or the
/// later layers' for a key it bumped. The layer's step and the walk run
/// one after the other, not one inside the other, so that the stack of a
/// query is the larger of the two frames.
#[cfg(feature = "capi")]
#[inline(always)]
fn bumping_first_layer<K: LayerKernels>(
    one: kernels::OneFn<K::Answer>,
    parts: &Parts,
    span: &LayerSpan,
    bytes: &[u8],
    backend: Backend,
    payload: &[u8],
    hash: u64,
) -> K::Answer {
    match bumping_layer_step(one, parts, span, bytes, payload, hash) {
        Ok(answer) => answer,
        Err(x) => walk_layers::<K>(bytes, backend, 1, x),
    }
}

/// Whether the C views' batch of a Bumped structure decodes the later
/// layers' query state once per call ([`BumpedTop`], whose batch gathers
/// the keys a layer bumps for the next layer's batch kernel): on 64-bit
/// targets. On 32-bit ones (small stacks: Cortex-M) each key the first
/// layer bumps walks the later layers from the bytes, as a single
/// query's does ([`walk_bumped`]): the decoded state, the gathered keys
/// and a walk under them took 2 KiB of a Cortex-M4's stack.
#[cfg(feature = "capi")]
const DECODE_LATER_LAYERS: bool = cfg!(target_pointer_width = "64");

/// Every hash's answer into `out` (of the same length) for the structure
/// `bytes` whose first layer is `parts` and `span`, as
/// [`first_layer_answer`] answers one: the batch of the C views. The first
/// layer's batch kernel answers from the struct's parts; if it bumps keys
/// (a Bumped structure's first layer, `layered`, that is not its `last`),
/// the later layers answer those ([`DECODE_LATER_LAYERS`] says how).
#[cfg(feature = "capi")]
#[allow(clippy::too_many_arguments)]
pub(crate) fn first_layer_batch<A: Answer>(
    parts: &Parts,
    span: &LayerSpan,
    layered: bool,
    last: bool,
    bytes: &[u8],
    backend: Backend,
    hashes: &[u64],
    out: &mut [A],
) -> Result<(), Error> {
    let kernels = A::for_layer(backend, &parts.geometry).ok_or(Error::BackendUnavailable)?;
    if layered && DECODE_LATER_LAYERS {
        return layered_batch(parts, &kernels, bytes, backend, hashes, out);
    }
    // As in `first_layer_answer`: decoded with the parts, checked all
    // the same.
    let payload = span.payload(bytes)?;
    kernels.batch(parts, payload, hashes, out);
    if layered && !last {
        walk_bumped(parts, span, bytes, backend, hashes, out);
    }
    Ok(())
}

/// The rest of a batch once the first layer (`parts`, `span`; it bumps)
/// answered every hash: each key it bumped walks the later layers from
/// the bytes ([`walk_layers`], after this frame's check of the key),
/// their answer replacing the first layer's.
#[cfg(feature = "capi")]
#[inline(never)]
fn walk_bumped<A: Answer>(
    parts: &Parts,
    span: &LayerSpan,
    bytes: &[u8],
    backend: Backend,
    hashes: &[u64],
    out: &mut [A],
) {
    let thresholds = span.thresholds(parts, bytes);
    for (&hash, answer) in hashes.iter().zip(out) {
        if let Some(x) = bumped_by(parts, &thresholds, hash) {
            *answer = walk_layers::<Kernels<Parts, A>>(bytes, backend, 1, x);
        }
    }
}

/// [`first_layer_batch`] of Bumped layers.
#[cfg(feature = "capi")]
#[inline(never)]
fn layered_batch<A: Answer>(
    parts: &Parts,
    kernels: &Kernels<Parts, A>,
    bytes: &[u8],
    backend: Backend,
    hashes: &[u64],
    out: &mut [A],
) -> Result<(), Error> {
    let top = decoded_top::<A>(bytes, backend)?;
    top.batch(parts, kernels, bytes, hashes, out);
    Ok(())
}

/// [`BumpedTop::decode`]'s view state alone, the rest dropped in a frame
/// that is gone before the batch runs.
#[cfg(feature = "capi")]
#[inline(never)]
fn decoded_top<A: Answer>(
    bytes: &[u8],
    backend: Backend,
) -> Result<BumpedTop<Kernels<Parts, A>>, Error> {
    Ok(BumpedTop::decode(bytes, backend)?.2)
}

/// A bumping first layer's step: its thresholds decide whether `one`
/// answers or the key goes on (`Err`, remixed).
#[cfg(feature = "capi")]
#[inline(never)]
fn bumping_layer_step<A>(
    one: kernels::OneFn<A>,
    parts: &Parts,
    span: &LayerSpan,
    bytes: &[u8],
    payload: &[u8],
    hash: u64,
) -> Result<A, u64> {
    let thresholds = span.thresholds(parts, bytes);
    match bumped_by(parts, &thresholds, hash) {
        Some(x) => Err(x),
        None => Ok(one(parts, payload, hash)),
    }
}

#[cfg(test)]
mod tests;
