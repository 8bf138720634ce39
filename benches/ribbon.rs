//! Criterion benches: build and query throughput per available backend.
//!
//! `cargo bench --bench ribbon` (all), or filter, e.g.
//! `cargo bench --bench ribbon -- 'query/hom64-7.7/1M'`.
//! Set `RIBBON_BENCH_KEYS=1000000` to skip the 10^7-key runs.

use std::hint::black_box;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use ribbon_kernel::{Backend, Filter, Kind, Plan, Width};

fn splitmix(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Members and shuffled 50/50 member/non-member queries.
fn key_sets(n: usize) -> (Vec<u64>, Vec<u64>) {
    let mut state = 0xb3_u64;
    let keys: Vec<u64> = (0..n).map(|_| splitmix(&mut state)).collect();
    let mut mixed: Vec<u64> = keys[..n / 2].to_vec();
    mixed.extend((0..n - n / 2).map(|_| splitmix(&mut state)));
    for i in (1..mixed.len()).rev() {
        let j = (splitmix(&mut state) % (i as u64 + 1)) as usize;
        mixed.swap(i, j);
    }
    (keys, mixed)
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
    if n % 1_000_000 == 0 {
        format!("{}M", n / 1_000_000)
    } else {
        n.to_string()
    }
}

const CONFIGS: [(&str, Kind, Width, u32); 3] = [
    ("hom64-7.7", Kind::Homogeneous, Width::W64, 7_700),
    ("hom128-7.7", Kind::Homogeneous, Width::W128, 7_700),
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
        let (keys, mixed) = key_sets(n);
        let mut group = c.benchmark_group(format!("query/{}", label(n)));
        group.throughput(Throughput::Elements(n as u64));
        group.sample_size(10);
        for (name, kind, width, millibits) in CONFIGS {
            let plan = Plan::new(kind, width, n, millibits).expect("plan");
            let filter = Filter::build(&plan, &keys).expect("build");
            let mut out = vec![false; n];
            for backend in backends() {
                let view = filter.as_ref().with_backend(backend).expect("available");
                group.bench_function(
                    BenchmarkId::new(format!("{name}/single"), backend.name()),
                    |b| {
                        b.iter(|| {
                            let mut hits = 0usize;
                            for &h in &mixed {
                                hits += usize::from(view.contains(h));
                            }
                            black_box(hits)
                        })
                    },
                );
                group.bench_function(
                    BenchmarkId::new(format!("{name}/batch"), backend.name()),
                    |b| {
                        b.iter(|| {
                            view.contains_batch(&mixed, &mut out)
                                .expect("lengths match");
                            black_box(&out);
                        })
                    },
                );
            }
        }
        group.finish();
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
                let mut scratch = vec![0u64; plan.scratch_words()];
                let mut bytes = vec![0u8; plan.filter_bytes()];
                group.bench_function(BenchmarkId::new(name, backend.name()), |b| {
                    b.iter(|| {
                        plan.build(&keys, &mut scratch, &mut bytes).expect("build");
                    })
                });
            }
        }
        group.finish();
    }
}

criterion_group!(benches, bench_query, bench_build);
criterion_main!(benches);
