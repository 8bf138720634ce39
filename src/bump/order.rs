//! A bumping layer's keys in banding order: remixed with the layer's
//! seed, by bucket, each bucket's from its last start down.

use super::LayerKey;
use crate::bumped_layout::{Buckets, sort_counters};
use crate::hash::{Expander, remix, start};

/// Remixes the keys of `inputs` with the layer's seed (`expander` is the
/// layer's, Standard without smash) into `ordered`, in banding order:
/// buckets ascending, each from its last start down. Keys with one start
/// keep their relative order. A stable counting sort by bucket into
/// `temp` (its counters, `counts`, [`sort_counters`], stay in cache,
/// where one counter per start, about 8 MB per 10^6 keys, did not), then
/// each bucket's keys, by place within the bucket (how far back from its
/// end), into the same places of `ordered`: a bucket's keys and its
/// counters are in cache then, where a second sort of all the keys had
/// read and written them all again from memory. `temp` and `ordered` need
/// as many keys as `inputs` has; with fewer, nothing is written and the
/// answer is `false`.
pub(crate) fn order_for_banding<K: LayerKey>(
    buckets: Buckets,
    expander: &Expander,
    inputs: impl ExactSizeIterator<Item = K> + Clone,
    counts: &mut [u64],
    temp: &mut [K],
    ordered: &mut [K],
) -> bool {
    let n = inputs.len();
    let words = sort_counters(buckets, expander.num_starts);
    let (Ok(words), true) = (usize::try_from(words), ordered.len() == n) else {
        return false;
    };
    let (Some(counts), Some(temp)) = (counts.get_mut(..words), temp.get_mut(..n)) else {
        return false;
    };
    let mix = expander.seed_mix;
    let locate = |x: u64| buckets.locate(start(x, expander.num_starts, 0));
    // By bucket, remixing.
    counting_sort(inputs, temp, counts, |key: K| {
        let x = remix(key.hash(), mix);
        (locate(x).0 as usize, key.with_hash(x))
    });
    // Each bucket's keys (a run in `temp`), by place, stable: the order is
    // that of sorting all keys by place and then, stably, by bucket.
    let within = counts.get_mut(..buckets.size() as usize).unwrap_or(&mut []);
    let mut from = 0;
    while let Some(&first) = temp.get(from) {
        let bucket = locate(first.hash()).0;
        let run = temp
            .get(from..)
            .unwrap_or(&[])
            .iter()
            .take_while(|key| locate(key.hash()).0 == bucket)
            .count();
        let (Some(keys), Some(to)) = (
            temp.get(from..from + run),
            ordered.get_mut(from..from + run),
        ) else {
            return false;
        };
        counting_sort(keys.iter().copied(), to, within, |key: K| {
            (locate(key.hash()).1 as usize, key)
        });
        from += run;
    }
    true
}

/// A stable counting sort of `from` into `to` (as long) by `key`, which
/// also gives the value to store: keys at or past `counts.len()` are
/// dropped (none are: the callers' keys fit).
#[inline(always)]
fn counting_sort<K: Copy>(
    from: impl Iterator<Item = K> + Clone,
    to: &mut [K],
    counts: &mut [u64],
    key: impl Fn(K) -> (usize, K),
) {
    counts.fill(0);
    for v in from.clone() {
        if let Some(c) = counts.get_mut(key(v).0) {
            *c += 1;
        }
    }
    let mut total = 0;
    for c in counts.iter_mut() {
        let here = *c;
        *c = total;
        total += here;
    }
    for v in from {
        let (k, value) = key(v);
        if let Some(next) = counts.get_mut(k) {
            if let Some(slot) = to.get_mut(*next as usize) {
                *slot = value;
            }
            *next += 1;
        }
    }
}
