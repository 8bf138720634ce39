//! Bumped Ribbon (issue 18): banding one bumping layer into caller scratch.
//!
//! A bumping layer has fewer slots than keys. Its starts are cut into
//! buckets of `2^bits` starts, and keys are banded bucket by bucket, each
//! bucket from its last start down to its first (so a key's `back`, how
//! far its start lies from the bucket's end, ascends). The first key of a
//! bucket that contradicts the rows fixes the bucket's threshold: the
//! standard one when that lies at or below the key's `back`, else the
//! key's own `back` (an *exception*). Every key of the bucket at least
//! that far back is bumped to the next layer; those already in are taken
//! out again. They are the bucket's last insertions, and elimination only
//! ever writes the row a key ends in, so zeroing their rows undoes them
//! exactly.
//!
//! A chain step is a dependent load, so banding one key at a time leaves
//! the core waiting. Large layers are therefore cut into segments whose
//! keys may not reach the next segment's rows, and [`band_layer`] keeps
//! one chain in flight per segment, a step of each in turn
//! ([`boundary_buckets`](crate::bumped_layout::boundary_buckets) has the
//! rule and why it bands as bucket order does).
//!
//! Layer `i + 1` takes the values layer `i` remixed as its hashes, so a
//! query carries one value from layer to layer. [`build`](fn@build)
//! bands the layers one after another into the caller's scratch,
//! back-substitutes each into the caller's output as soon as it is
//! banded, and writes the layer table last (`src/bumped_layout.rs` has
//! the format and sizing).
//!
//! `src/bumped_study.rs` is the reference model this is checked against
//! and explains the choice of parameters.
//!
//! The parts, in `src/bump/`: `keys.rs` (a key as the layers band it,
//! the key-set digest and retry seeds), `order.rs` (banding order),
//! `lanes.rs` (one bumping layer banded, in lanes) and `build.rs` (the
//! layers one after another, serialized); their items are re-exported
//! here, beside a build's `Shape` and `Bounds`.

mod build;
mod keys;
mod lanes;
mod order;

use crate::bumped_layout::{BUMPING_SEEDS, layer_bounds, scratch_parts};
use crate::error::Error;
use crate::layout::{Family, Width};
pub(crate) use build::{build, build_values};
pub(crate) use keys::{LayerKey, key_set_digest, retry_seed};
pub(crate) use lanes::{BandLimits, SIDE_BY_SIDE, band_layer};
pub(crate) use order::order_for_banding;

/// A Bumped filter's shape, besides its keys: width, columns (every
/// layer's blocks have `lower_columns`, about `upper_millis / 1000` of
/// them one more) and the first layer's seed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct Shape {
    pub(crate) width: Width,
    pub(crate) lower_columns: u32,
    pub(crate) upper_millis: u32,
    pub(crate) seed: u32,
    /// Retries of a layer whose first seed fails, each with a seed from
    /// the layer's keys' digest: at most [`BUMPING_SEEDS`]` - 1` for a
    /// bumping layer and
    /// [`LAST_LAYER_RETRIES`](crate::bumped_layout::LAST_LAYER_RETRIES)
    /// for the last one, fewer if the plan tries fewer seeds
    /// ([`Shape::retries_for`]).
    pub(crate) retries: u32,
    /// Filter (the keys' right sides come from their hashes) or
    /// retrieval (each key carries its value): the header's magic, and
    /// the keys' size in scratch.
    pub(crate) family: Family,
}

impl Shape {
    /// The retries of a plan that tries at most `max_seeds` seeds (at
    /// least one) per layer.
    pub(crate) const fn retries_for(max_seeds: u32) -> u32 {
        let seeds = if max_seeds < BUMPING_SEEDS {
            max_seeds
        } else {
            BUMPING_SEEDS
        };
        seeds.saturating_sub(1)
    }
}

/// The most a build of some number of keys needs, whatever the keys: its
/// layers, output bytes and scratch words (each part of the scratch too).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct Bounds {
    pub(crate) layers: usize,
    pub(crate) filter_bytes: usize,
    row_words: usize,
    next_words: usize,
    ordered_words: usize,
    count_words: usize,
    threshold_words: usize,
}

impl Bounds {
    /// The bounds for `num_keys` keys of `shape` ([`layer_bounds`]);
    /// [`Error::TooLarge`] past the address space.
    pub(crate) fn new(shape: &Shape, num_keys: u64) -> Result<Bounds, Error> {
        let width = shape.width;
        let b = layer_bounds(width, num_keys, shape.lower_columns, shape.upper_millis)
            .ok_or(Error::TooLarge)?;
        let words = |x: u128| usize::try_from(x).map_err(|_| Error::TooLarge);
        let filter_bytes = words(b.filter_bytes)?;
        let key_words = match shape.family {
            Family::Filter => 1,
            Family::Retrieval => 2,
        };
        let [rows, next, ordered, counts, thresholds] =
            scratch_parts(width, num_keys, key_words, &b);
        let bounds = Bounds {
            layers: b.layers,
            filter_bytes,
            row_words: words(rows)?,
            next_words: words(next)?,
            ordered_words: words(ordered)?,
            count_words: words(counts)?,
            threshold_words: words(thresholds)?,
        };
        let scratch = bounds.scratch_words().ok_or(Error::TooLarge)?;
        if filter_bytes > isize::MAX as usize || scratch > isize::MAX as usize / 8 {
            return Err(Error::TooLarge);
        }
        Ok(bounds)
    }

    /// Scratch words of a build.
    pub(crate) fn scratch_words(&self) -> Option<usize> {
        self.row_words
            .checked_add(self.next_words)?
            .checked_add(self.ordered_words)?
            .checked_add(self.count_words)?
            .checked_add(self.threshold_words)
    }
}

#[cfg(test)]
mod tests;
