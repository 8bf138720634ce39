//! The space of sharded filters against one filter of the same keys, over
//! many fresh key sets (issue 42: "within 0.1 points, worst of 20 key
//! sets"). Space, not time: any machine gives the same figures.
//!
//! `cargo run --release --example sharded_space [-- N SETS [LOG2S]]`
//!
//! `N` keys (default 4 x 10^6) per set, `SETS` key sets (default 20), and
//! shards of 2^k keys for each `k` of `LOG2S` (comma-separated, default
//! `16,18,20`); Homogeneous w64 at 8.7 bits per key and Bumped w64 at 8.0,
//! built on 2 threads. Prints, per kind and shard size, the worst and the
//! median of (sharded bytes / unsharded bytes - 1) in percent.

use std::num::NonZeroU32;

use ribbon_kernel::{Filter, Kind, Plan, ShardedFilter, ShardedPlan, Width};

#[path = "../tests/common/kit.rs"]
mod kit;
use kit::splitmix64;

fn main() {
    let mut args = std::env::args().skip(1);
    let n: usize = args
        .next()
        .and_then(|a| a.parse().ok())
        .unwrap_or(4_000_000);
    let sets: u64 = args.next().and_then(|a| a.parse().ok()).unwrap_or(20);
    let sizes: Vec<u32> = args
        .next()
        .map(|a| a.split(',').filter_map(|k| k.trim().parse().ok()).collect())
        .unwrap_or_else(|| vec![16, 18, 20]);
    println!(
        "{n} keys per set, {sets} key sets; extra space of the sharded form in % of the unsharded filter's bytes"
    );
    println!("| kind | keys/shard | shards | worst | median |");
    println!("|---|---|---|---|---|");
    for (kind, millibits) in [(Kind::Homogeneous, 8_700), (Kind::Bumped, 8_000)] {
        let plan = Plan::new(kind, Width::W64, n, millibits).expect("a plan");
        let mut extra: Vec<Vec<f64>> = vec![Vec::new(); sizes.len()];
        for set in 0..sets {
            let mut state = 0x5ace_0000 + set;
            let keys: Vec<u64> = (0..n).map(|_| splitmix64(&mut state)).collect();
            let one = Filter::build(&plan, &keys).expect("an unsharded build");
            let base = one.as_bytes().len() as f64;
            for (k, per) in sizes.iter().enumerate() {
                let shards = n.div_ceil(1 << per).max(1) as u32;
                let sp = ShardedPlan::new(kind, Width::W64, n, millibits)
                    .expect("a sharded plan")
                    .with_shards(NonZeroU32::new(shards).expect("at least one shard"));
                let sharded =
                    ShardedFilter::build(&sp, &mut keys.clone(), 2).expect("a sharded build");
                extra[k].push((sharded.as_bytes().len() as f64 / base - 1.0) * 100.0);
            }
        }
        for (per, mut e) in sizes.iter().zip(extra) {
            e.sort_by(|a, b| a.total_cmp(b));
            println!(
                "| {kind:?} w64 | 2^{per} | {} | {:+.4} | {:+.4} |",
                n.div_ceil(1 << per).max(1),
                e[e.len() - 1],
                e[e.len() / 2]
            );
        }
    }
}
