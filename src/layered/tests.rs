//! The C views' batch of a Bumped structure as 32-bit targets answer it
//! (`walk_bumped`), checked against the Rust views on this target.
#![cfg(feature = "capi")]

use super::{Layers, first_layer_batch, walk_bumped};
use crate::backend::Backend;
use crate::{Filter, FilterRef, Kind, Plan, Retrieval, RetrievalPlan, Width};
use alloc::vec;
use alloc::vec::Vec;

fn hashes(n: u64, salt: u64) -> Vec<u64> {
    (1..=n)
        .map(|i| (i ^ salt).wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ 0x5bd1_e995)
        .collect()
}

/// Layers of the Bumped structure `bytes`.
fn layers(bytes: &[u8]) -> usize {
    Layers::new(bytes).unwrap().header().num_layers
}

/// Members and as many non-members, the first layer's batch and then
/// `walk_bumped` answer what the Rust views' batch does, for filters and
/// retrieval structures of three layers or more (keys reach the walk
/// past the first layer and past the second).
#[test]
#[cfg_attr(miri, ignore = "60,000-key builds")]
fn walked_batches_answer_as_the_views() {
    let backend = Backend::current();
    let keys = hashes(60_000, 0);
    let queries: Vec<u64> = keys
        .iter()
        .copied()
        .chain(hashes(60_000, 1 << 40))
        .collect();
    let n = queries.len();
    for width in [Width::W64, Width::W128] {
        let plan = Plan::new(Kind::Bumped, width, keys.len(), 7_000).unwrap();
        let filter = Filter::build(&plan, &keys).unwrap();
        let bytes = filter.as_bytes();
        assert!(layers(bytes) >= 3, "{width:?}: {} layers", layers(bytes));
        let opened = crate::filter::opened(bytes, false, backend).unwrap();
        let (parts, span) = (&opened.first.parts, &opened.first.span);
        let mut want = vec![false; n];
        FilterRef::from_bytes(bytes)
            .unwrap()
            .contains_batch(&queries, &mut want)
            .unwrap();
        let mut got = vec![false; n];
        // The first layer alone (as if it were the last), then the walk.
        first_layer_batch(parts, span, false, true, bytes, backend, &queries, &mut got).unwrap();
        assert_ne!(got, want, "{width:?}: the first layer answers alone");
        walk_bumped(parts, span, bytes, backend, &queries, &mut got);
        assert!(got == want, "{width:?}: walked batch");
    }
    let values: Vec<u64> = keys.iter().map(|h| h >> 59).collect();
    for width in [Width::W64, Width::W128] {
        let plan = RetrievalPlan::new(width, keys.len(), 5).unwrap();
        let retrieval = Retrieval::build(&plan, &keys, &values).unwrap();
        let bytes = retrieval.as_bytes();
        assert!(layers(bytes) >= 3, "{width:?}: {} layers", layers(bytes));
        let opened = crate::retrieval::opened(bytes, false, backend).unwrap();
        let (parts, span) = (&opened.first.parts, &opened.first.span);
        let mut want = vec![0u64; n];
        retrieval.get_batch(&queries, &mut want).unwrap();
        assert_eq!(want[..keys.len()], values[..]);
        let mut got = vec![0u64; n];
        first_layer_batch(parts, span, false, true, bytes, backend, &queries, &mut got).unwrap();
        assert_ne!(got, want, "{width:?}: the first layer answers alone");
        walk_bumped(parts, span, bytes, backend, &queries, &mut got);
        assert!(got == want, "{width:?}: walked retrieval batch");
    }
}
