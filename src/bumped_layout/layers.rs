//! Bumped Ribbon's layer table: the header's fields ([`BumpedHeader`]),
//! one entry per layer ([`LayerEntry`]), and the layers of untrusted
//! bytes read and validated one after another ([`Layers`]).

use super::{
    Buckets, GROUP_BYTES, LAST_LAYER_ATTEMPTS, LAST_LAYER_KEYS, MAX_LAYERS, ThresholdsRef,
    columns_of, is_bumping_blocks, last_blocks, next_cap, threshold_groups,
};
use crate::error::Error;
use crate::layout::{Family, Geometry, HEADER_BYTES, Kind, RawHeader, Width};

/// Bytes of one layer table entry.
pub(crate) const ENTRY_BYTES: usize = 32;

/// One layer's entry in the layer table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct LayerEntry {
    pub(crate) seed: u32,
    pub(crate) listed: u32,
    pub(crate) num_keys: u64,
    pub(crate) num_blocks: u64,
    pub(crate) upper_start_block: u64,
}

impl LayerEntry {
    pub(crate) fn encode(&self) -> [u8; ENTRY_BYTES] {
        let mut e = [0u8; ENTRY_BYTES];
        e[..4].copy_from_slice(&self.seed.to_le_bytes());
        e[4..8].copy_from_slice(&self.listed.to_le_bytes());
        e[8..16].copy_from_slice(&self.num_keys.to_le_bytes());
        e[16..24].copy_from_slice(&self.num_blocks.to_le_bytes());
        e[24..32].copy_from_slice(&self.upper_start_block.to_le_bytes());
        e
    }

    fn decode(e: &[u8]) -> Option<LayerEntry> {
        let u32_at = |i: usize| Some(u32::from_le_bytes(e.get(i..i + 4)?.try_into().ok()?));
        let u64_at = |i: usize| Some(u64::from_le_bytes(e.get(i..i + 8)?.try_into().ok()?));
        Some(LayerEntry {
            seed: u32_at(0)?,
            listed: u32_at(4)?,
            num_keys: u64_at(8)?,
            num_blocks: u64_at(16)?,
            upper_start_block: u64_at(24)?,
        })
    }
}

/// Bytes of a layer's threshold groups and listed exceptions (none for
/// the last layer).
fn threshold_bytes(
    buckets: Buckets,
    g: &Geometry,
    listed: u32,
    last: bool,
) -> Option<(usize, usize)> {
    if last {
        return Some((0, 0));
    }
    let groups = usize::try_from(threshold_groups(buckets.count(g.num_starts()))).ok()?;
    Some((
        groups.checked_mul(GROUP_BYTES)?,
        usize::try_from(listed).ok()?.checked_mul(4)?,
    ))
}

/// The fields of a Bumped filter's header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct BumpedHeader {
    /// Filter or retrieval layers (by the magic).
    pub(crate) family: Family,
    pub(crate) width: Width,
    pub(crate) lower_columns: u32,
    pub(crate) seed: u32,
    pub(crate) num_keys: u64,
    pub(crate) num_layers: usize,
}

impl BumpedHeader {
    pub(crate) fn encode(&self) -> [u8; HEADER_BYTES] {
        RawHeader {
            family: self.family,
            kind: Kind::Bumped,
            width: self.width,
            lower_columns: self.lower_columns,
            seed: self.seed,
            num_keys: self.num_keys,
            blocks_or_layers: self.num_layers as u64,
            upper_start_block: 0,
        }
        .encode()
    }

    /// The header that starts `bytes`, of either family:
    /// [`RawHeader::decode`]'s checks, then [`Error::CorruptHeader`]
    /// unless it is a Bumped one as builds make them. A retrieval
    /// structure has 1 to 64 value bits (its `lower_columns`), keys or
    /// not; a filter of no keys, no columns.
    fn decode(bytes: &[u8]) -> Result<BumpedHeader, Error> {
        let raw = RawHeader::decode(bytes, None)?;
        let (lower_columns, layers) = (raw.lower_columns, raw.blocks_or_layers);
        // No keys, no columns (as for the other kinds without blocks).
        let columns_ok = match raw.family {
            Family::Filter => raw.num_keys != 0 || lower_columns == 0,
            Family::Retrieval => lower_columns != 0,
        };
        if raw.kind != Kind::Bumped
            || raw.upper_start_block != 0
            || !columns_ok
            || !(1..=MAX_LAYERS as u64).contains(&layers)
        {
            return Err(Error::CorruptHeader);
        }
        Ok(BumpedHeader {
            family: raw.family,
            width: raw.width,
            lower_columns,
            seed: raw.seed,
            num_keys: raw.num_keys,
            num_layers: layers as usize,
        })
    }
}

/// One layer of a validated Bumped filter.
#[derive(Clone, Copy, Debug)]
pub(crate) struct LayerRef<'a> {
    /// The layer's Standard geometry.
    pub(crate) geometry: Geometry,
    pub(crate) seed: u32,
    pub(crate) num_keys: u64,
    /// Empty for the last layer.
    pub(crate) thresholds: ThresholdsRef<'a>,
    pub(crate) payload: &'a [u8],
    /// Whether this is the last layer (no thresholds: its keys stay).
    pub(crate) last: bool,
    /// Where the layer's data (threshold groups, list, payload) starts in
    /// the filter's bytes.
    pub(crate) data_at: usize,
}

/// Where a layer lies, before its bytes are read.
struct Extent {
    entry: LayerEntry,
    geometry: Geometry,
    last: bool,
    groups_len: usize,
    listed_len: usize,
    end: usize,
}

/// The layers of a Bumped filter's bytes, one after another.
#[derive(Clone, Debug)]
pub(crate) struct Layers<'a> {
    header: BumpedHeader,
    bytes: &'a [u8],
    /// The next layer's index and where its data starts.
    next: usize,
    data_at: usize,
    /// The most keys the next layer may have: the header's for the first,
    /// then [`next_cap`] of the one before's, as builds cap them. With
    /// it, any accepted bytes have at most
    /// [`layer_bounds`](super::layer_bounds)' layers for their keys (4
    /// for 10^6 keys, 10 for 2^40), which bounds a query's walk.
    cap: u64,
}

impl<'a> Layers<'a> {
    /// The layers of `bytes` (a Bumped filter's header, table and data;
    /// trailing bytes are not looked at).
    pub(crate) fn new(bytes: &'a [u8]) -> Result<Layers<'a>, Error> {
        let header = BumpedHeader::decode(bytes)?;
        let data_at = HEADER_BYTES + ENTRY_BYTES * header.num_layers;
        if bytes.len() < data_at {
            return Err(Error::Truncated {
                needed: data_at,
                given: bytes.len(),
            });
        }
        Ok(Layers {
            header,
            bytes,
            next: 0,
            data_at,
            cap: header.num_keys,
        })
    }

    pub(crate) fn header(&self) -> BumpedHeader {
        self.header
    }

    /// The next layer, checked against the header, the layer before it and
    /// the bytes: `None` after the last, [`Error::CorruptHeader`] or
    /// [`Error::Truncated`] when the bytes do not hold it. Its threshold
    /// slots and list are checked only with `check_lists` (they cost a
    /// pass over the list; a filter validated once needs no second check).
    pub(crate) fn next_layer(
        &mut self,
        previous_keys: u64,
        check_lists: bool,
    ) -> Option<Result<LayerRef<'a>, Error>> {
        let i = self.next;
        if i >= self.header.num_layers {
            return None;
        }
        self.next += 1;
        Some(self.layer(i, previous_keys, check_lists))
    }

    /// Layer `i`'s entry and geometry, checked against the header and the
    /// layer before (which had `previous_keys` keys), and where its data
    /// ends: threshold groups and list lengths, then the end offset.
    fn extent(&self, i: usize, previous_keys: u64) -> Result<Extent, Error> {
        let h = self.header;
        let last = i + 1 == h.num_layers;
        let at = HEADER_BYTES + ENTRY_BYTES * i;
        let e = self
            .bytes
            .get(at..at + ENTRY_BYTES)
            .and_then(LayerEntry::decode)
            .ok_or(Error::CorruptHeader)?;
        // Keys: the first layer has them all, each later one at most the
        // one before and its cap. A layer is the last exactly when it has
        // at most `LAST_LAYER_KEYS` keys. Each layer has the blocks a build
        // gives its keys: a bumping layer `bumping_blocks`, the last one
        // one of its attempts' `last_blocks` (at least a slot per key;
        // none without keys). Nothing lists exceptions but a bumping
        // layer, and none lists more than its buckets.
        let keys_ok = if i == 0 {
            e.num_keys == h.num_keys
        } else {
            e.num_keys <= previous_keys && e.num_keys <= self.cap
        };
        let blocks_ok = if last {
            e.num_keys <= LAST_LAYER_KEYS
                && (0..LAST_LAYER_ATTEMPTS)
                    .any(|a| e.num_blocks == last_blocks(h.width, e.num_keys, a))
        } else {
            e.num_keys > LAST_LAYER_KEYS && is_bumping_blocks(h.width, e.num_keys, e.num_blocks)
        };
        // Retrieval layers have no upper blocks: every value has its bits.
        let upper_ok = match h.family {
            Family::Filter => e.upper_start_block <= e.num_blocks,
            Family::Retrieval => e.upper_start_block == e.num_blocks,
        };
        if !keys_ok || !blocks_ok || !upper_ok || (last && e.listed != 0) {
            return Err(Error::CorruptHeader);
        }
        let blocks = usize::try_from(e.num_blocks).map_err(|_| Error::TooLarge)?;
        let upper = usize::try_from(e.upper_start_block).map_err(|_| Error::CorruptHeader)?;
        let columns = columns_of(blocks, h.lower_columns);
        let geometry =
            Geometry::new(Kind::Standard, h.width, blocks, columns, upper)?.check_native()?;
        let buckets = Buckets::for_width(h.width);
        if u64::from(e.listed) > buckets.count(geometry.num_starts()) {
            return Err(Error::CorruptHeader);
        }
        let (groups_len, listed_len) =
            threshold_bytes(buckets, &geometry, e.listed, last).ok_or(Error::TooLarge)?;
        let end = self
            .data_at
            .checked_add(groups_len)
            .and_then(|x| x.checked_add(listed_len))
            .and_then(|x| x.checked_add(geometry.payload_bytes()))
            .filter(|&end| end <= isize::MAX as usize)
            .ok_or(Error::TooLarge)?;
        Ok(Extent {
            entry: e,
            geometry,
            last,
            groups_len,
            listed_len,
            end,
        })
    }

    fn layer(
        &mut self,
        i: usize,
        previous_keys: u64,
        check_lists: bool,
    ) -> Result<LayerRef<'a>, Error> {
        let x = self.extent(i, previous_keys)?;
        let data = self
            .bytes
            .get(self.data_at..x.end)
            .ok_or(Error::Truncated {
                needed: x.end,
                given: self.bytes.len(),
            })?;
        let (groups, rest) = data.split_at_checked(x.groups_len).ok_or(Error::TooLarge)?;
        let (listed, payload) = rest.split_at_checked(x.listed_len).ok_or(Error::TooLarge)?;
        let thresholds = ThresholdsRef {
            buckets: Buckets::for_width(self.header.width),
            groups,
            listed,
        };
        if check_lists && !x.last {
            thresholds.validate(thresholds.buckets.count(x.geometry.num_starts()))?;
        }
        let data_at = self.data_at;
        self.advance(&x);
        Ok(LayerRef {
            geometry: x.geometry,
            seed: x.entry.seed,
            num_keys: x.entry.num_keys,
            thresholds,
            payload,
            last: x.last,
            data_at,
        })
    }

    /// Moves past the layer `x`: its data, and the next layer's cap.
    fn advance(&mut self, x: &Extent) {
        self.data_at = x.end;
        self.cap = next_cap(self.header.width, self.cap);
    }

    /// Where the data read so far ends.
    pub(crate) fn end(&self) -> usize {
        self.data_at
    }
}

/// The layers of a Bumped structure validated before, one after another,
/// each checked against the one before as [`Layers::next_layer`] does
/// (not its threshold list); none for bytes that no longer hold a Bumped
/// header, and the iteration ends at a layer they no longer hold. For
/// reports (slots per layer); queries never need it.
pub(crate) fn layers_of(bytes: &[u8]) -> impl Iterator<Item = LayerRef<'_>> {
    let mut layers = Layers::new(bytes).ok();
    let mut keys = layers.as_ref().map_or(0, |l| l.header().num_keys);
    core::iter::from_fn(move || {
        let layer = layers.as_mut()?.next_layer(keys, false)?.ok()?;
        keys = layer.num_keys;
        Some(layer)
    })
}

/// Validates every layer of a Bumped filter that starts `bytes` and
/// returns its header and its length (which may be less than
/// `bytes.len()`).
pub(crate) fn validate_prefix(bytes: &[u8]) -> Result<(BumpedHeader, usize), Error> {
    let mut layers = Layers::new(bytes)?;
    let mut keys = layers.header().num_keys;
    while let Some(layer) = layers.next_layer(keys, true) {
        keys = layer?.num_keys;
    }
    Ok((layers.header(), layers.end()))
}

/// The length of the Bumped filter that starts `bytes`, from its header and
/// layer table alone (checked as [`validate_prefix`] checks them, but for
/// the threshold lists and the data's presence).
pub(crate) fn serialized_len(bytes: &[u8]) -> Result<usize, Error> {
    let mut layers = Layers::new(bytes)?;
    let mut keys = layers.header.num_keys;
    for i in 0..layers.header.num_layers {
        let x = layers.extent(i, keys)?;
        keys = x.entry.num_keys;
        layers.advance(&x);
    }
    Ok(layers.data_at)
}
