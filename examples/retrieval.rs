//! Retrieval report (issue 19): space and speed of static functions from
//! key hashes to `value_bits`-bit values, beside a hash table of values.
//!
//! `cargo run --release --example retrieval [-- OPTIONS]`
//!
//! For each width and value width it builds one structure from fresh
//! random hashes and values, checks that every key gets its value back
//! (exit status 1 otherwise), and reports bits per key, the overhead over
//! `value_bits`, build time and `get` / `get_batch` time per key on each
//! backend (medians of the rounds; queries are the keys, shuffled), and
//! `get_batch` beside `contains_batch` of a filter of the same kind
//! (Bumped or Standard, as the plan picked), width and bits per key, and
//! of a Standard filter (rounds interleaved; each ratio is the median of
//! the per-round ratios). Bits per key count every byte, header and
//! layer table included. The baseline is a `std::collections::HashMap<u64, u64>` of the same keys
//! and values, queried single-key.
//!
//! * `--keys N` (10^6), `--rounds R` (5), `--bits B[,B...]` (value bits;
//!   default 1,2,7,8,16,32,64), `--width W[,W...]` (64,128),
//!   `--backend NAME[,NAME...]` (default: every one this CPU has).

use std::collections::HashMap;
use std::hint::black_box;
use std::time::Instant;

use ribbon_kernel::{Backend, Filter, Kind, Plan, Retrieval, RetrievalPlan, Width};

#[path = "../tests/common/kit.rs"]
mod kit;
use kit::splitmix64;

#[path = "common/args.rs"]
mod args;
use args::{CommandLine, OptionSpec};

const SUMMARY: &str = "Retrieval: bits per key, build and get time per backend, beside a \
    HashMap of values.";

const OPTIONS: &[OptionSpec] = &[
    args::KEYS_OPTION,
    OptionSpec {
        name: "--rounds",
        value: Some("R"),
        help: "timed repetitions, median reported (default 5)",
    },
    OptionSpec {
        name: "--bits",
        value: Some("B[,B...]"),
        help: "value bits, 1 to 64 (default 1,2,7,8,16,32,64)",
    },
    OptionSpec {
        name: "--width",
        value: Some("W[,W...]"),
        help: "ribbon width, 64 or 128 (default both)",
    },
];

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// Nanoseconds per key of `f` run on `n` keys, median of `rounds`.
fn time_per_key(rounds: usize, n: usize, mut f: impl FnMut()) -> f64 {
    f();
    median(
        (0..rounds)
            .map(|_| {
                let t = Instant::now();
                f();
                t.elapsed().as_nanos() as f64 / n.max(1) as f64
            })
            .collect(),
    )
}

fn main() {
    let cli = CommandLine::parse("retrieval", SUMMARY, OPTIONS);
    let n = cli.value("--keys", args::parse_keys).unwrap_or(1_000_000);
    let rounds = cli
        .value("--rounds", |t| {
            t.parse::<usize>().map_err(|e| e.to_string())
        })
        .unwrap_or(5)
        .max(1);
    let bits_list = cli
        .list("--bits", |t| {
            t.parse::<u32>()
                .ok()
                .filter(|b| (1..=64).contains(b))
                .ok_or_else(|| format!("{t} is not 1 to 64"))
        })
        .unwrap_or_else(|| vec![1, 2, 7, 8, 16, 32, 64]);
    let widths = cli
        .list("--width", args::parse_width)
        .unwrap_or_else(|| vec![Width::W64, Width::W128]);
    let backends = cli.backends().unwrap_or_else(|e| {
        eprintln!("error: {e}");
        std::process::exit(args::EXIT_FAILURE)
    });
    for b in Backend::ALL {
        if !backends.contains(&b) && !b.is_available() {
            eprintln!(
                "skipped backend {}: {}",
                b.name(),
                args::unavailable_reason(b)
            );
        }
    }

    let mut s = n as u64 ^ 0x7e7;
    let keys: Vec<u64> = (0..n).map(|_| splitmix64(&mut s)).collect();
    // Queries: the keys in another order.
    let mut queries = keys.clone();
    for i in (1..queries.len()).rev() {
        queries.swap(i, (splitmix64(&mut s) % (i as u64 + 1)) as usize);
    }
    println!("Retrieval of {n} keys; medians of {rounds} rounds, ns per key.\n");
    println!(
        "| width | value bits | kind | bits/key | overhead | build | backend | get | get_batch | filter batch (same kind) | ratio | Standard filter batch | ratio |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|---|");
    let mut failed = false;
    for &width in &widths {
        for &bits in &bits_list {
            let mask = if bits == 64 {
                u64::MAX
            } else {
                (1 << bits) - 1
            };
            let values: Vec<u64> = (0..n).map(|_| splitmix64(&mut s) & mask).collect();
            let plan = RetrievalPlan::new(width, n, bits).expect("plan");
            let mut map = None;
            let build = time_per_key(rounds.min(3), n, || {
                map = Some(Retrieval::build(&plan, &keys, &values).expect("build"));
            });
            let mut map = map.expect("built");
            // Filters of the same width and bits per key, of the
            // structure's kind and Standard, for the batch ratios.
            let kind = plan.kind();
            let filter_of = |kind| {
                let filter_plan = Plan::new(kind, width, n, bits.max(1) * 1000).expect("plan");
                Filter::build(&filter_plan, &keys).expect("filter")
            };
            let mut filter = filter_of(kind);
            let mut standard = filter_of(Kind::Standard);
            let per_key = map.as_bytes().len() as f64 * 8.0 / n.max(1) as f64;
            let overhead = (per_key / f64::from(bits) - 1.0) * 100.0;
            for &backend in &backends {
                map.set_backend(backend).expect("backend");
                let mut out = vec![0u64; n];
                map.get_batch(&keys, &mut out).expect("batch");
                if out != values || keys.iter().zip(&values).any(|(&k, &v)| map.get(k) != v) {
                    eprintln!(
                        "error: {} {width:?} {bits} bits: a key lost its value",
                        backend.name()
                    );
                    failed = true;
                }
                let single = time_per_key(rounds, n, || {
                    let mut acc = 0u64;
                    for &q in &queries {
                        acc = acc.wrapping_add(map.get(q));
                    }
                    black_box(acc);
                });
                filter.set_backend(backend).expect("backend");
                standard.set_backend(backend).expect("backend");
                let mut answers = vec![false; n];
                // Interleaved rounds: the ratios compare runs side by side.
                let (mut batch, mut filter_batch, mut ratio) = (vec![], vec![], vec![]);
                let (mut standard_batch, mut standard_ratio) = (vec![], vec![]);
                for _ in 0..rounds {
                    let b = time_per_key(1, n, || {
                        map.get_batch(&queries, &mut out).expect("batch");
                        black_box(&out);
                    });
                    let f = time_per_key(1, n, || {
                        filter
                            .contains_batch(&queries, &mut answers)
                            .expect("batch");
                        black_box(&answers);
                    });
                    let f_standard = time_per_key(1, n, || {
                        standard
                            .contains_batch(&queries, &mut answers)
                            .expect("batch");
                        black_box(&answers);
                    });
                    batch.push(b);
                    filter_batch.push(f);
                    ratio.push(b / f);
                    standard_batch.push(f_standard);
                    standard_ratio.push(b / f_standard);
                }
                let (batch, filter_batch, ratio) =
                    (median(batch), median(filter_batch), median(ratio));
                let (standard_batch, standard_ratio) =
                    (median(standard_batch), median(standard_ratio));
                println!(
                    "| {} | {bits} | {kind:?} | {per_key:.3} | {overhead:.2} % | {build:.1} | {} | {single:.2} | {batch:.2} | {filter_batch:.2} | {ratio:.2} | {standard_batch:.2} | {standard_ratio:.2} |",
                    width.bits(),
                    backend.name()
                );
            }
        }
    }
    // The baseline: a hash table of the values.
    let table: HashMap<u64, u64> = keys
        .iter()
        .copied()
        .zip(keys.iter().map(|k| k & 0xff))
        .collect();
    let get = time_per_key(rounds, n, || {
        let mut acc = 0u64;
        for q in &queries {
            acc = acc.wrapping_add(*table.get(q).unwrap_or(&0));
        }
        black_box(acc);
    });
    let bytes = table.capacity() * (8 + 8 + 1);
    println!(
        "\nHashMap<u64, u64> baseline: {:.1} bits per key (capacity {} x 17 bytes), get {get:.2} ns per key",
        bytes as f64 * 8.0 / n.max(1) as f64,
        table.capacity()
    );
    if failed {
        std::process::exit(args::EXIT_FAILURE);
    }
}
