//! How filters fare when the "hashes" are not hashes: sequential integers,
//! integers shifted left, and integers with a fixed stride, used directly
//! as key hashes, beside `hash_key` of the same integers and random
//! hashes. Prints the measured FP rate (over non-member values of the same
//! pattern and over random values) against the planned one, and whether
//! the build succeeded.
//!
//! `cargo run --release --example weak_hashes [-- --keys N]`

use ribbon_kernel::{Filter, Kind, Plan, Width, hash_key};

#[path = "../tests/common/kit.rs"]
mod kit;
use kit::splitmix64;

struct Pattern {
    name: &'static str,
    value: fn(u64) -> u64,
}

const PATTERNS: &[Pattern] = &[
    Pattern {
        name: "random (splitmix64)",
        value: |i| {
            let mut s = i;
            splitmix64(&mut s)
        },
    },
    Pattern {
        name: "hash_key(i as le bytes)",
        value: |i| hash_key(&i.to_le_bytes()),
    },
    Pattern {
        name: "i",
        value: |i| i,
    },
    Pattern {
        name: "i << 32",
        value: |i| i << 32,
    },
    Pattern {
        name: "i << 40",
        value: |i| i << 40,
    },
    Pattern {
        name: "i * 4096",
        value: |i| i * 4096,
    },
    Pattern {
        name: "i * 1000003",
        value: |i| i * 1_000_003,
    },
];

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let n: u64 = args
        .iter()
        .position(|a| a == "--keys")
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(1_000_000);
    let probes = 4 * n;
    let mut state = 0x77ea_u64;
    let random: Vec<u64> = (0..probes).map(|_| splitmix64(&mut state)).collect();
    println!("# Weak hashes: {n} keys, FP rate over {probes} non-members");
    println!();
    println!(
        "| kind | w | pattern | planned FP % | FP % (pattern non-members) | FP % (random) | build |"
    );
    println!("|---|---|---|---|---|---|---|");
    for (kind, width) in [
        (Kind::Homogeneous, Width::W64),
        (Kind::Homogeneous, Width::W128),
        (Kind::Standard, Width::W128),
    ] {
        for p in PATTERNS {
            let keys: Vec<u64> = (0..n).map(p.value).collect();
            // Non-members of the same pattern: the values after the keys
            // (distinct from the keys while 5 n <= 2^24, for `i << 40`).
            let others: Vec<u64> = (n..n + probes).map(p.value).collect();
            let plan = Plan::new(kind, width, keys.len(), 8_000).expect("plan");
            let planned = plan.column_fp_ppt() as f64 / 1e10;
            match Filter::build(&plan, &keys) {
                Ok(filter) => {
                    assert!(keys.iter().all(|&h| filter.contains(h)), "false negative");
                    let rate = |set: &[u64]| {
                        set.iter().filter(|&&h| filter.contains(h)).count() as f64 * 100.0
                            / set.len() as f64
                    };
                    println!(
                        "| {kind:?} | {} | `{}` | {planned:.3} | {:.3} | {:.3} | ok, seed {} |",
                        width.bits(),
                        p.name,
                        rate(&others),
                        rate(&random),
                        filter.view().seed()
                    );
                }
                Err(e) => println!(
                    "| {kind:?} | {} | `{}` | {planned:.3} | - | - | {e} |",
                    width.bits(),
                    p.name
                ),
            }
        }
    }
}
