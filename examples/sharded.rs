//! Sharded filters against the unsharded filter of the same keys: space,
//! build time (1 and 2 threads) and query time (single and batch), for
//! several shard sizes (issue 42). The figures of `docs/guide.md`'s
//! "Sharded filters and parallel builds" come from here.
//!
//! `cargo run --release --example sharded [-- N [ROUNDS [LOG2S]]]`
//!
//! `N` keys (default 10^7) at 8 bits per key for Homogeneous w64 and
//! Bumped w64; shards of 2^16, 2^18 and 2^20 keys, or of 2^k keys for each
//! `k` of `LOG2S` (comma-separated, e.g. `18`). Times are medians of
//! `ROUNDS` (default 3) rounds, in ns per key; queries are 10^6 hashes,
//! half members, half not.

use std::hint::black_box;
use std::num::NonZeroU32;
use std::time::Instant;

use ribbon_kernel::{Filter, Kind, Plan, ShardedFilter, ShardedPlan, Width};

#[path = "../tests/common/kit.rs"]
mod kit;
use kit::splitmix64;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

/// Median ns per item of `rounds` runs of `f` over `items` items.
fn time(rounds: usize, items: usize, mut f: impl FnMut()) -> f64 {
    median(
        (0..rounds)
            .map(|_| {
                let t = Instant::now();
                f();
                t.elapsed().as_nanos() as f64 / items as f64
            })
            .collect(),
    )
}

fn main() {
    let mut args = std::env::args().skip(1);
    let n: usize = args
        .next()
        .and_then(|a| a.parse().ok())
        .unwrap_or(10_000_000);
    let rounds: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(3);
    let sizes: Vec<usize> = args
        .next()
        .map(|a| {
            a.split(',')
                .filter_map(|k| k.trim().parse::<u32>().ok())
                .map(|k| 1usize << k.min(40))
                .collect()
        })
        .unwrap_or_else(|| vec![1 << 16, 1 << 18, 1 << 20]);
    let mut state = 42u64;
    let keys: Vec<u64> = (0..n).map(|_| splitmix64(&mut state)).collect();
    let mut queries: Vec<u64> = keys.iter().step_by(n / 500_000).copied().collect();
    queries.truncate(500_000);
    queries.extend((0..500_000).map(|_| splitmix64(&mut state)));
    let q = queries.len();
    let mut answers = vec![false; q];
    println!("{n} keys, {q} queries, medians of {rounds} rounds, ns per key");
    println!(
        "| kind | keys/shard | shards | bytes/key | space vs unsharded | build 1 thread | build 2 threads | single | batch |"
    );
    println!("|---|---|---|---|---|---|---|---|---|");
    for (kind, millibits) in [(Kind::Homogeneous, 8_000), (Kind::Bumped, 8_000)] {
        let plan = Plan::new(kind, Width::W64, n, millibits).unwrap();
        let mut unsharded = None;
        let build = time(rounds, n, || {
            unsharded = Some(Filter::build(&plan, &keys).unwrap())
        });
        let unsharded = unsharded.unwrap();
        let base = unsharded.as_bytes().len() as f64;
        let single = time(rounds, q, || {
            black_box(queries.iter().filter(|&&h| unsharded.contains(h)).count());
        });
        let batch = time(rounds, q, || {
            unsharded.contains_batch(&queries, &mut answers).unwrap();
            black_box(&answers);
        });
        println!(
            "| {kind:?} w64 | unsharded | 1 | {:.4} | 1.0000 | {build:.1} | - | {single:.1} | {batch:.1} |",
            base / n as f64
        );
        for &per in &sizes {
            let s = NonZeroU32::new(n.div_ceil(per) as u32).unwrap();
            let sp = ShardedPlan::new(kind, Width::W64, n, millibits)
                .unwrap()
                .with_shards(s);
            let mut built = None;
            let mut times = [0.0f64; 2];
            for (threads, t) in [1usize, 2].into_iter().zip(&mut times) {
                // A fresh copy of the keys each round (the build reorders
                // them); the copy is outside the timing.
                *t = median(
                    (0..rounds)
                        .map(|_| {
                            let mut input = keys.clone();
                            let start = Instant::now();
                            built = Some(ShardedFilter::build(&sp, &mut input, threads).unwrap());
                            start.elapsed().as_nanos() as f64 / n as f64
                        })
                        .collect(),
                );
            }
            let built = built.unwrap();
            let bytes = built.as_bytes().len() as f64;
            let single = time(rounds, q, || {
                black_box(queries.iter().filter(|&&h| built.contains(h)).count());
            });
            let batch = time(rounds, q, || {
                built.contains_batch(&queries, &mut answers).unwrap();
                black_box(&answers);
            });
            println!(
                "| {kind:?} w64 | 2^{} | {} | {:.4} | {:.4} | {:.1} | {:.1} | {single:.1} | {batch:.1} |",
                per.trailing_zeros(),
                s,
                bytes / n as f64,
                bytes / base,
                times[0],
                times[1]
            );
        }
    }
}
