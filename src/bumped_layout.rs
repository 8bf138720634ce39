//! Bumped Ribbon's layers (issue 18): sizing, the thresholds' encoding and
//! the serialized layer table, with the validation of untrusted bytes.
//!
//! A Bumped filter is a stack of Standard Ribbon layers over one ribbon
//! width and one column split. Every layer but the last has fewer slots
//! than keys; its starts are cut into buckets ([`Buckets`]) and each bucket
//! has a threshold: the bucket's keys at least that far back from its end
//! were *bumped* to the next layer. Layer `i + 1` hashes the value layer
//! `i` remixed (a chain of remixes), so a query carries one 64-bit value
//! from layer to layer. The last layer has no thresholds.
//!
//! Serialized (all little-endian): the 48-byte header of
//! [`crate::layout`] with kind 3, whose bytes 24..32 hold the number of
//! layers and 32..40 are zero; then one 32-byte entry per layer; then
//! each layer's data in turn: its threshold groups, its listed exceptions
//! and its ICML payload (a Standard payload of the layer's geometry).
//!
//! | entry offset | size | field |
//! |---|---|---|
//! | 0 | 4 | seed (u32) |
//! | 4 | 4 | listed exceptions (u32) |
//! | 8 | 8 | keys banded into the layer (u64) |
//! | 16 | 8 | `num_blocks` (u64) |
//! | 24 | 8 | `upper_start_block` (u64) |
//!
//! `src/bumped_study.rs` explains the parameters; `src/bump.rs` builds.
//!
//! The parts, in `src/bumped_layout/`: `buckets.rs` (a start's bucket and
//! place, the banding segments), `sizing.rs` (layer sizes, caps and a
//! build's bounds), `thresholds.rs` (the thresholds' encoding, decoder
//! and verdict) and `layers.rs` (the header, the layer table and its
//! validation); their items are re-exported here.

mod buckets;
mod layers;
mod sizing;
mod thresholds;

pub(crate) use buckets::{
    BANDING_LANES, BANDING_SEGMENTS, Buckets, MIN_SEGMENT_BUCKETS, boundary_buckets, kept_entries,
    order_scratch_words, sort_counters,
};
pub(crate) use layers::{
    BumpedHeader, ENTRY_BYTES, LayerEntry, LayerRef, Layers, layers_of, serialized_len,
    validate_prefix,
};
pub(crate) use sizing::{
    BUMPING_SEEDS, LAST_LAYER_ATTEMPTS, LAST_LAYER_KEYS, LAST_LAYER_RETRIES, LayerBounds,
    MAX_LAYERS, bumping_blocks, last_blocks, layer_bounds, layer_geometry, max_listed, next_cap,
    scratch_parts,
};
use sizing::{columns_of, is_bumping_blocks};
// GROUP_BUCKETS: the x86_64 Bumped kernels' lane arithmetic (absent from
// soft-float builds).
#[cfg_attr(not(ribbon_x86_kernels), allow(unused_imports))]
pub(crate) use thresholds::{
    BumpedKey, GROUP_BUCKETS, GROUP_BYTES, ThresholdsRef, encode_thresholds, listed_exceptions,
    threshold_groups,
};

#[cfg(test)]
pub(crate) mod test_support {
    use super::Buckets;
    use crate::test_kit::splitmix64;
    use std::vec::Vec;

    /// Exact thresholds of `n` buckets as banding makes them: about
    /// `exceptions_per_1000` per thousand below the standard threshold
    /// (exceptions), then to 60 % "nothing bumped", the rest standard.
    pub(crate) fn random_thresholds(
        buckets: Buckets,
        n: usize,
        exceptions_per_1000: u64,
        state: &mut u64,
    ) -> Vec<u16> {
        let std_back = buckets.standard_back;
        (0..n)
            .map(|_| {
                let x = splitmix64(state);
                (match x % 1000 {
                    e if e < exceptions_per_1000 => (x >> 32) as u32 % std_back,
                    e if e < 600 => buckets.size(),
                    _ => std_back,
                }) as u16
            })
            .collect()
    }
}
