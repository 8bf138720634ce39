//! Criterion benches: ribbon-kernel per available backend beside `xorf`
//! BinaryFuse8 and `pleat` (Homogeneous `Ribbon<7>` and `StdRibbon<7>`), on
//! the same random 64-bit hashes.
//!
//! * `build/<n>`: build time per key.
//! * `query/<n>/<set>`: query time per key for all-positive, all-negative
//!   and shuffled 50/50 (`mixed`) query sets, single-key and batch.
//!
//! `cargo bench --bench ribbon` runs everything (n = 10^6 and 10^7); filter
//! with criterion's regex, e.g.
//! `cargo bench --bench ribbon -- 'query/1M/mixed/hom64-8.7'`. Set
//! `RIBBON_BENCH_KEYS=1000000` for one size only. Criterion reports time
//! per iteration of n keys, so ms per 10^6 keys reads as ns per key.
//! For ratios measured side by side, use `examples/compare.rs`.

use std::hint::black_box;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use ribbon_kernel::{Backend, Filter, Kind, Plan, Width};
use xorf::{BinaryFuse8, Filter as _};

#[path = "../tests/common/kit.rs"]
mod kit;
use kit::splitmix64;

/// Members, then the three query sets: all members (shuffled), all
/// non-members, and shuffled 50/50.
fn key_sets(n: usize) -> (Vec<u64>, [(&'static str, Vec<u64>); 3]) {
    let mut state = 0xb3_u64;
    let keys: Vec<u64> = (0..n).map(|_| splitmix64(&mut state)).collect();
    let mut shuffle = |v: &mut Vec<u64>| {
        for i in (1..v.len()).rev() {
            let j = (splitmix64(&mut state) % (i as u64 + 1)) as usize;
            v.swap(i, j);
        }
    };
    let mut positive = keys.clone();
    shuffle(&mut positive);
    let mut fresh = 0x5eed_u64;
    let negative: Vec<u64> = (0..n).map(|_| splitmix64(&mut fresh)).collect();
    let mut mixed: Vec<u64> = keys[..n / 2].to_vec();
    mixed.extend_from_slice(&negative[..n - n / 2]);
    shuffle(&mut mixed);
    (
        keys,
        [
            ("positive", positive),
            ("negative", negative),
            ("mixed", mixed),
        ],
    )
}

fn sizes() -> Vec<usize> {
    match std::env::var("RIBBON_BENCH_KEYS")
        .ok()
        .and_then(|v| v.parse().ok())
    {
        Some(n) => vec![n],
        None => vec![1_000_000, 10_000_000],
    }
}

fn label(n: usize) -> String {
    if n.is_multiple_of(1_000_000) {
        format!("{}M", n / 1_000_000)
    } else {
        n.to_string()
    }
}

/// The configurations of the performance targets: Homogeneous w64 at the
/// FP rate of BinaryFuse8 (8.7 bits/key) and at pleat's r = 7 (7.63), and
/// Standard w128 at 7.41 bits/key (pleat's `StdRibbon<7>`).
const CONFIGS: [(&str, Kind, Width, u32); 3] = [
    ("hom64-8.7", Kind::Homogeneous, Width::W64, 8_700),
    ("hom64-7.63", Kind::Homogeneous, Width::W64, 7_630),
    ("std128-7.41", Kind::Standard, Width::W128, 7_410),
];

fn backends() -> Vec<Backend> {
    Backend::ALL
        .into_iter()
        .filter(|b| {
            let ok = b.is_available();
            if !ok {
                eprintln!(
                    "skipping backend {}: not available on this CPU or build",
                    b.name()
                );
            }
            ok
        })
        .collect()
}

fn bench_query(c: &mut Criterion) {
    for n in sizes() {
        let (keys, sets) = key_sets(n);
        let filters: Vec<(&str, Filter)> = CONFIGS
            .iter()
            .map(|&(name, kind, width, millibits)| {
                let plan = Plan::new(kind, width, n, millibits).expect("plan");
                (name, Filter::build(&plan, &keys).expect("build"))
            })
            .collect();
        let fuse = BinaryFuse8::try_from(&keys[..]).expect("fuse build");
        let pleat_hom = pleat::filter::RibbonFilter::from_keys_pleated(&keys);
        let pleat_std =
            pleat::filter::StdRibbon::<7>::from_keys_pleated(&keys).expect("pleat std build");
        let mut out = vec![false; n];
        for (set, queries) in &sets {
            let mut group = c.benchmark_group(format!("query/{}/{set}", label(n)));
            group.throughput(Throughput::Elements(n as u64));
            group.sample_size(10);
            for (name, filter) in &filters {
                for backend in backends() {
                    let view = filter.view().with_backend(backend).expect("available");
                    group.bench_function(
                        BenchmarkId::new(format!("{name}/single"), backend.name()),
                        |b| {
                            b.iter(|| {
                                black_box(queries.iter().filter(|&&h| view.contains(h)).count())
                            })
                        },
                    );
                    group.bench_function(
                        BenchmarkId::new(format!("{name}/batch"), backend.name()),
                        |b| {
                            b.iter(|| {
                                view.contains_batch(queries, &mut out)
                                    .expect("lengths match");
                                black_box(&out);
                            })
                        },
                    );
                }
            }
            group.bench_function("xorf-fuse8/single", |b| {
                b.iter(|| black_box(queries.iter().filter(|h| fuse.contains(h)).count()))
            });
            group.bench_function("pleat-hom64/single", |b| {
                b.iter(|| black_box(queries.iter().filter(|&&h| pleat_hom.contains(h)).count()))
            });
            group.bench_function("pleat-hom64/batch", |b| {
                b.iter(|| {
                    pleat_hom.contains_batch(queries, &mut out);
                    black_box(&out);
                })
            });
            group.bench_function("pleat-std128/single", |b| {
                b.iter(|| black_box(queries.iter().filter(|&&h| pleat_std.contains(h)).count()))
            });
            group.bench_function("pleat-std128/batch", |b| {
                b.iter(|| {
                    pleat_std.contains_batch(queries, &mut out);
                    black_box(&out);
                })
            });
            group.finish();
        }
    }
}

fn bench_build(c: &mut Criterion) {
    for n in sizes() {
        let (keys, _) = key_sets(n);
        let mut group = c.benchmark_group(format!("build/{}", label(n)));
        group.throughput(Throughput::Elements(n as u64));
        group.sample_size(10);
        for (name, kind, width, millibits) in CONFIGS {
            for backend in backends() {
                let plan = Plan::new(kind, width, n, millibits)
                    .expect("plan")
                    .with_backend(backend)
                    .expect("available");
                // Caller-provided buffers, as the no_std core takes them.
                let mut scratch = vec![0u64; plan.scratch_words()];
                let mut bytes = vec![0u8; plan.filter_bytes()];
                group.bench_function(BenchmarkId::new(name, backend.name()), |b| {
                    b.iter(|| {
                        plan.build(&keys, &mut scratch, &mut bytes).expect("build");
                    })
                });
            }
        }
        group.bench_function("xorf-fuse8", |b| {
            b.iter(|| black_box(BinaryFuse8::try_from(&keys[..]).expect("build")))
        });
        group.bench_function("pleat-hom64 (pleated)", |b| {
            b.iter(|| black_box(pleat::filter::RibbonFilter::from_keys_pleated(&keys)))
        });
        group.bench_function("pleat-std128 (pleated)", |b| {
            b.iter(|| {
                black_box(pleat::filter::StdRibbon::<7>::from_keys_pleated(&keys).expect("build"))
            })
        });
        group.finish();
    }
}

criterion_group!(benches, bench_query, bench_build);
criterion_main!(benches);
