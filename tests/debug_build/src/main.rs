//! Single and batch queries, builds and key hashes, timed in whatever
//! profile this crate is built with: ns per key, the least of the runs.

use ribbon_kernel::{Backend, Filter, Kind, Plan, Width, hash_key};
use std::time::Instant;

/// Nanoseconds per item of the fastest of `runs` runs of `f`.
fn least(runs: usize, items: usize, mut f: impl FnMut()) -> f64 {
    (0..runs)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed().as_secs_f64() * 1e9 / items as f64
        })
        .fold(f64::MAX, f64::min)
}

fn main() {
    let mut args = std::env::args()
        .skip(1)
        .map(|a| a.parse::<usize>().expect("a number"));
    let n = args.next().unwrap_or(1_000_000);
    let runs = args.next().unwrap_or(3).max(1);
    let profile = if cfg!(debug_assertions) {
        "debug"
    } else {
        "release"
    };
    let mix = |i: u64, k: u64| i.wrapping_add(k).wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ (i >> 7);
    let members: Vec<u64> = (0..n as u64).map(|i| mix(i, 1)).collect();
    let others: Vec<u64> = (0..n as u64).map(|i| mix(i, 1 << 40)).collect();
    println!("{profile}, {n} keys, ns per key: build, contains (members, others), contains_batch");
    for (kind, width) in [
        (Kind::Homogeneous, Width::W64),
        (Kind::Standard, Width::W128),
        (Kind::Bumped, Width::W64),
    ] {
        let plan = Plan::new(kind, width, n, 8_000).unwrap();
        let mut filter = None;
        let build = least(1, n, || {
            filter = Some(Filter::build(&plan, &members).unwrap())
        });
        let mut filter = filter.unwrap();
        for backend in [Backend::detect(), Backend::Scalar] {
            filter.set_backend(backend).unwrap();
            let count = |keys: &[u64]| keys.iter().filter(|&&h| filter.contains(h)).count();
            let pos = least(runs, n, || assert_eq!(count(&members), n));
            let neg = least(runs, n, || {
                std::hint::black_box(count(&others));
            });
            let mut out = vec![false; n];
            let batch = least(runs, n, || {
                filter.contains_batch(&members, &mut out).unwrap()
            });
            println!(
                "{kind:?} {width:?} {backend:?}: build {build:.1}, contains {pos:.1} / {neg:.1}, batch {batch:.1}"
            );
        }
    }
    let keys: Vec<[u8; 8]> = (0..n as u64).map(u64::to_le_bytes).collect();
    let hash = least(runs, n, || {
        std::hint::black_box(keys.iter().fold(0, |a, k| a ^ hash_key(k)));
    });
    println!("hash_key of 8-byte keys: {hash:.1}");
}
