//! What a C caller pays against a Rust caller: `ribbon_contains` and
//! `ribbon_contains_batch` (through the C ABI, called from Rust as C calls
//! them) side by side with `FilterRef::contains` and `contains_batch`, on
//! the same filter and the same keys, in one process.
//!
//! `cargo run --release --features capi --example c_vs_rust [-- --keys N --rounds R]`
//!
//! Queries are shuffled 50/50 members and non-members. Each round times
//! every measurement once, in the same order, after one untimed warm-up;
//! the table gives medians over rounds in ns per key and the median of the
//! per-round ratios C / Rust. The column "Rust, out of line" calls
//! `FilterRef::contains` through a function the compiler may not inline
//! (what any call across the C ABI is): the floor of a C single query,
//! with no check of the C struct at all.

use std::hint::black_box;
use std::time::Instant;

use ribbon_kernel::ffi::{
    ribbon_contains, ribbon_contains_batch, ribbon_filter, ribbon_filter_open,
};
use ribbon_kernel::{Backend, Filter, FilterRef, Kind, Plan, Width};

#[path = "../tests/common/kit.rs"]
mod kit;
use kit::splitmix64;

/// `FilterRef::contains` behind a call the optimizer keeps.
#[inline(never)]
fn contains_out_of_line(view: &FilterRef<'_>, hash: u64) -> bool {
    view.contains(hash)
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn time_per_key(n: usize, f: impl FnOnce() -> u64) -> f64 {
    let start = Instant::now();
    black_box(f());
    start.elapsed().as_nanos() as f64 / n as f64
}

fn main() {
    let mut keys = 1_000_000usize;
    let mut rounds = 11usize;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let value = args.next().and_then(|v| v.parse().ok());
        match (a.as_str(), value) {
            ("--keys", Some(v)) => keys = v,
            ("--rounds", Some(v)) => rounds = v,
            _ => {
                eprintln!("usage: c_vs_rust [--keys N] [--rounds R]");
                std::process::exit(2);
            }
        }
    }
    let backend = Backend::current();
    println!(
        "{keys} keys, backend {}, {rounds} rounds, ns per key (medians); ratio = C / Rust\n",
        backend.name()
    );
    println!(
        "| filter | contains Rust | Rust, out of line | ribbon_contains C | ratio | contains_batch Rust | ribbon_contains_batch C | ratio |"
    );
    println!("|---|---|---|---|---|---|---|---|");
    let configs = [
        (Kind::Homogeneous, Width::W64, 8700, "Homogeneous w64 8.7"),
        (Kind::Standard, Width::W128, 7410, "Standard w128 7.41"),
        (Kind::Bumped, Width::W64, 8000, "Bumped w64 8.0"),
    ];
    let mut state = 0x5eed_u64;
    for (kind, width, millibits, name) in configs {
        let members: Vec<u64> = (0..keys).map(|_| splitmix64(&mut state)).collect();
        let plan = Plan::new(kind, width, keys, millibits).expect("plan");
        let filter = Filter::build(&plan, &members).expect("build");
        let bytes = filter.as_ref().to_vec();
        let view = FilterRef::from_bytes(&bytes).expect("open");
        let mut c_view = ribbon_filter::zeroed();
        // SAFETY: a valid struct and the live bytes, which outlive `c_view`.
        let status = unsafe { ribbon_filter_open(&mut c_view, bytes.as_ptr(), bytes.len()) };
        assert_eq!(status, 0);
        // Shuffled 50/50 members and non-members.
        let mut queries: Vec<u64> = members
            .iter()
            .take(keys / 2)
            .copied()
            .chain((0..keys - keys / 2).map(|_| splitmix64(&mut state)))
            .collect();
        for i in (1..queries.len()).rev() {
            let j = (splitmix64(&mut state) % (i as u64 + 1)) as usize;
            queries.swap(i, j);
        }
        let mut out_rust = vec![false; queries.len()];
        let mut out_c = vec![0u8; queries.len()];
        let n = queries.len();
        let rust_one = || {
            queries
                .iter()
                .map(|&h| u64::from(view.contains(h)))
                .sum::<u64>()
        };
        let rust_out_of_line = || {
            queries
                .iter()
                .map(|&h| u64::from(contains_out_of_line(black_box(&view), h)))
                .sum::<u64>()
        };
        let c_one = || {
            queries
                .iter()
                // SAFETY: `c_view` was opened on `bytes`, alive and unchanged.
                .map(|&h| unsafe { ribbon_contains(&c_view, h) } as u64)
                .sum::<u64>()
        };
        let (mut a, mut b, mut c, mut d, mut r1, mut r2, mut o) =
            (vec![], vec![], vec![], vec![], vec![], vec![], vec![]);
        for _ in 0..rounds {
            black_box(rust_one());
            let t_rust = time_per_key(n, rust_one);
            black_box(rust_out_of_line());
            o.push(time_per_key(n, rust_out_of_line));
            black_box(c_one());
            let t_c = time_per_key(n, c_one);
            let mut rust_batch = || {
                view.contains_batch(&queries, &mut out_rust).expect("batch");
                out_rust.iter().filter(|&&x| x).count() as u64
            };
            black_box(rust_batch());
            let tb_rust = time_per_key(n, rust_batch);
            let mut c_batch = || {
                // SAFETY: `c_view` is valid; the buffers hold `n` items each.
                let s = unsafe {
                    ribbon_contains_batch(&c_view, queries.as_ptr(), n, out_c.as_mut_ptr())
                };
                assert_eq!(s, 0);
                out_c.iter().map(|&x| u64::from(x)).sum::<u64>()
            };
            black_box(c_batch());
            let tb_c = time_per_key(n, c_batch);
            assert_eq!(
                out_rust.iter().map(|&x| u8::from(x)).collect::<Vec<_>>(),
                out_c,
                "C and Rust answers differ"
            );
            r1.push(t_c / t_rust);
            r2.push(tb_c / tb_rust);
            a.push(t_rust);
            b.push(t_c);
            c.push(tb_rust);
            d.push(tb_c);
        }
        println!(
            "| {name} | {:.1} | {:.1} | {:.1} | {:.2} | {:.1} | {:.1} | {:.2} |",
            median(&mut a),
            median(&mut o),
            median(&mut b),
            median(&mut r1),
            median(&mut c),
            median(&mut d),
            median(&mut r2)
        );
    }
}
