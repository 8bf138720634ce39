//! The main job: builds Ribbon filters for random 64-bit key hashes in every
//! kind and width at a few bits-per-key settings and prints, per available
//! backend, space, FP rate, and build and query times.
//!
//! `cargo run --release --example report [-- --keys N] [-- --quick]`
//!
//! Times are medians of repeated runs (ns per key); this machine is shared
//! and noisy, so compare rows measured in the same run.

use std::hint::black_box;
use std::time::Instant;

use ribbon_kernel::{Backend, Filter, FilterRef, Kind, Plan, Width};

#[path = "../tests/common/kit.rs"]
mod kit;
use kit::splitmix64;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// Median ns per key of `reps` runs of `f` over `keys` keys.
fn time_per_key(reps: usize, keys: usize, mut f: impl FnMut()) -> f64 {
    median(
        (0..reps)
            .map(|_| {
                let t = Instant::now();
                f();
                t.elapsed().as_nanos() as f64 / keys as f64
            })
            .collect(),
    )
}

struct QueryTimes {
    single: [f64; 3],
    batch: [f64; 3],
}

fn time_queries(filter: FilterRef<'_>, sets: &[&[u64]; 3], reps: usize) -> QueryTimes {
    let mut out = vec![false; sets[0].len()];
    let mut single = [0.0; 3];
    let mut batch = [0.0; 3];
    for (i, set) in sets.iter().enumerate() {
        single[i] = time_per_key(reps, set.len(), || {
            let mut hits = 0usize;
            for &h in set.iter() {
                hits += usize::from(filter.contains(h));
            }
            black_box(hits);
        });
        batch[i] = time_per_key(reps, set.len(), || {
            filter.contains_batch(set, &mut out).expect("lengths match");
            black_box(&out);
        });
    }
    QueryTimes { single, batch }
}

fn cpu_name() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split(':').nth(1))
                .map(|m| m.trim().to_string())
        })
        .unwrap_or_else(|| std::env::consts::ARCH.to_string())
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let quick = args.iter().any(|a| a == "--quick");
    let n: usize = args
        .iter()
        .position(|a| a == "--keys")
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(if quick { 100_000 } else { 1_000_000 });
    let reps = if quick { 3 } else { 5 };
    let negatives = 2 * n;

    let mut state = 0x5eed_u64;
    let keys: Vec<u64> = (0..n).map(|_| splitmix64(&mut state)).collect();
    let others: Vec<u64> = (0..negatives).map(|_| splitmix64(&mut state)).collect();
    // 50/50 mix of members and non-members, shuffled.
    let mut mixed: Vec<u64> = keys[..n / 2]
        .iter()
        .chain(&others[..n - n / 2])
        .copied()
        .collect();
    for i in (1..mixed.len()).rev() {
        let j = (splitmix64(&mut state) % (i as u64 + 1)) as usize;
        mixed.swap(i, j);
    }
    let negative_set = &others[..n];

    let available: Vec<Backend> = Backend::ALL
        .into_iter()
        .filter(|b| b.is_available())
        .collect();
    println!("# ribbon-kernel report");
    println!();
    // WASI (wasm32) cannot tell how many cores there are.
    let cores = std::thread::available_parallelism()
        .map_or_else(|_| "unknown".to_string(), |p| p.get().to_string());
    println!("- CPU: {} ({cores} logical cores)", cpu_name());
    println!("- keys: {n} random 64-bit hashes; FP rate over {negatives} other hashes");
    println!("- detected backend: {:?}", Backend::detect());
    for b in Backend::ALL {
        if !b.is_available() {
            println!(
                "- backend {:?} skipped: not available on this CPU or build",
                b
            );
        }
    }
    println!(
        "- times: ns per key, median of {reps} runs; query columns: positive / negative / 50-50 mixed"
    );
    println!("- scratch: working memory Plan::build needs, freed after the build (bytes per key)");
    println!();
    println!(
        "| kind | w | bits/key | FP % | overhead % | scratch B/key | build | backend | single pos | single neg | single mixed | batch pos | batch neg | batch mixed |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|");

    let settings: &[u32] = if quick { &[7700] } else { &[4000, 7700, 12000] };
    for kind in [Kind::Homogeneous, Kind::Standard, Kind::StandardSmash] {
        for width in [Width::W64, Width::W128] {
            for &millibits in settings {
                let plan = Plan::new(kind, width, n, millibits).expect("plan");
                let mut scratch = vec![0u64; plan.scratch_words()];
                let mut bytes = vec![0u8; plan.filter_bytes()];
                let build = time_per_key(reps.min(3), n, || {
                    plan.build(&keys, &mut scratch, &mut bytes).expect("build");
                });
                let filter = Filter::from_bytes(bytes).expect("valid");
                let view = filter.view();
                assert!(keys.iter().all(|&h| view.contains(h)), "false negative");
                let fp =
                    others.iter().filter(|&&h| view.contains(h)).count() as f64 / negatives as f64;
                let bits = view.millibits_per_key() as f64 / 1000.0;
                let overhead = bits / (1.0 / fp).log2() - 1.0;
                for (i, &backend) in available.iter().enumerate() {
                    let v = view.with_backend(backend).expect("available");
                    let t = time_queries(v, &[&keys, negative_set, &mixed], reps);
                    let lead = if i == 0 {
                        format!(
                            "| {kind:?} | {} | {bits:.2} | {:.3} | {:.1} | {:.1} | {build:.0} ",
                            width.bits(),
                            fp * 100.0,
                            overhead * 100.0,
                            plan.scratch_words() as f64 * 8.0 / n as f64
                        )
                    } else {
                        "| | | | | | | ".to_string()
                    };
                    println!(
                        "{lead}| {} | {:.1} | {:.1} | {:.1} | {:.1} | {:.1} | {:.1} |",
                        backend.name(),
                        t.single[0],
                        t.single[1],
                        t.single[2],
                        t.batch[0],
                        t.batch[1],
                        t.batch[2]
                    );
                }
            }
        }
    }
}
