//! Side-by-side comparison with the filters a Rust user picks today:
//! `xorf` BinaryFuse8 and `pleat` (a Rust Ribbon crate), on the same random
//! 64-bit hashes, in one process, with interleaved repetitions.
//!
//! `cargo run --release --example compare [-- --keys N] [-- --rounds R]`
//!
//! Every round runs every measurement once, in the same order, each right
//! after one untimed warm-up run (so no filter starts with cold caches just
//! because another filter ran before it); the table shows the median over
//! rounds in ns per key, and the ratios are medians of per-round ratios.
//! Queries are shuffled 50/50 members and non-members.

use std::hint::black_box;
use std::time::Instant;

use ribbon_kernel::{Backend, Filter, FilterRef, Kind, Plan, Width};
use xorf::{BinaryFuse8, Filter as _};

#[path = "../tests/common/kit.rs"]
mod kit;
use kit::splitmix64;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn arg(args: &[String], name: &str) -> Option<usize> {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse().ok())
}

/// One timed measurement: a name and a closure returning ns per key.
struct Measurement<'a> {
    name: String,
    run: Box<dyn FnMut() -> f64 + 'a>,
    samples: Vec<f64>,
}

fn per_key(n: usize, f: impl FnOnce()) -> f64 {
    let t = Instant::now();
    f();
    t.elapsed().as_nanos() as f64 / n as f64
}

fn ribbon_batch<'a>(name: &str, view: FilterRef<'a>, queries: &'a [u64]) -> Measurement<'a> {
    let mut out = vec![false; queries.len()];
    Measurement {
        name: format!("{name} batch {}", view.backend().name()),
        run: Box::new(move || {
            per_key(queries.len(), || {
                view.contains_batch(queries, &mut out)
                    .expect("lengths match");
                black_box(&out);
            })
        }),
        samples: Vec::new(),
    }
}

fn ribbon_single<'a>(name: &str, view: FilterRef<'a>, queries: &'a [u64]) -> Measurement<'a> {
    Measurement {
        name: format!("{name} single {}", view.backend().name()),
        run: Box::new(move || {
            per_key(queries.len(), || {
                let hits = queries.iter().filter(|&&h| view.contains(h)).count();
                black_box(hits);
            })
        }),
        samples: Vec::new(),
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let n = arg(&args, "--keys").unwrap_or(1_000_000);
    let rounds = arg(&args, "--rounds").unwrap_or(11);

    let mut state = 0xc0ffee_u64;
    let keys: Vec<u64> = (0..n).map(|_| splitmix64(&mut state)).collect();
    let mut queries: Vec<u64> = keys[..n / 2].to_vec();
    queries.extend((0..n - n / 2).map(|_| splitmix64(&mut state)));
    for i in (1..queries.len()).rev() {
        let j = (splitmix64(&mut state) % (i as u64 + 1)) as usize;
        queries.swap(i, j);
    }
    let others: Vec<u64> = (0..2 * n).map(|_| splitmix64(&mut state)).collect();
    let (keys, queries) = (&keys[..], &queries[..]);
    let fp = |f: &dyn Fn(u64) -> bool| {
        others.iter().filter(|&&h| f(h)).count() as f64 / others.len() as f64
    };

    // The filters.
    let hom87 = Filter::build(
        &Plan::new(Kind::Homogeneous, Width::W64, n, 8_700).expect("plan"),
        keys,
    )
    .expect("build");
    let hom763 = Filter::build(
        &Plan::new(Kind::Homogeneous, Width::W64, n, 7_630).expect("plan"),
        keys,
    )
    .expect("build");
    let std741 = Filter::build(
        &Plan::new(Kind::Standard, Width::W128, n, 7_410).expect("plan"),
        keys,
    )
    .expect("build");
    let fuse = BinaryFuse8::try_from(keys).expect("fuse build");
    let pleat_hom = pleat::filter::RibbonFilter::from_keys_pleated(keys);
    let pleat_std = pleat::filter::StdRibbon::<7>::from_keys_pleated(keys).expect("pleat std");

    println!("# ribbon-kernel vs xorf BinaryFuse8 vs pleat, n = {n}, {rounds} rounds");
    println!();
    println!("| filter | bits/key | FP % |");
    println!("|---|---|---|");
    for (name, f) in [
        ("ribbon-kernel hom64 8.7", &hom87),
        ("ribbon-kernel hom64 7.63", &hom763),
        ("ribbon-kernel std128 7.41", &std741),
    ] {
        let v = f.view();
        println!(
            "| {name} | {:.3} | {:.3} |",
            v.millibits_per_key() as f64 / 1000.0,
            fp(&|h| v.contains(h)) * 100.0
        );
    }
    println!(
        "| xorf BinaryFuse8 | {:.3} | {:.3} |",
        (fuse.fingerprints.len() * 8) as f64 / n as f64,
        fp(&|h| fuse.contains(&h)) * 100.0
    );
    println!(
        "| pleat Ribbon<7> (hom64) | {:.3} | {:.3} |",
        pleat_hom.bits_per_key(n),
        fp(&|h| pleat_hom.contains(h)) * 100.0
    );
    println!(
        "| pleat StdRibbon<7> (w128) | {:.3} | {:.3} |",
        pleat_std.bits_per_key(n),
        fp(&|h| pleat_std.contains(h)) * 100.0
    );
    println!();

    let backends: Vec<Backend> = Backend::ALL
        .into_iter()
        .filter(|b| b.is_available())
        .collect();
    let mut ms: Vec<Measurement<'_>> = Vec::new();
    // Queries.
    ms.push(Measurement {
        name: "fuse8 contains".into(),
        run: Box::new(|| {
            per_key(queries.len(), || {
                black_box(queries.iter().filter(|h| fuse.contains(h)).count());
            })
        }),
        samples: Vec::new(),
    });
    for &b in &backends {
        ms.push(ribbon_batch(
            "hom64-8.7",
            hom87.view().with_backend(b).expect("available"),
            queries,
        ));
    }
    for &b in &backends {
        ms.push(ribbon_single(
            "hom64-8.7",
            hom87.view().with_backend(b).expect("available"),
            queries,
        ));
    }
    let mut pleat_out = vec![false; queries.len()];
    ms.push(Measurement {
        name: "pleat hom batch".into(),
        run: Box::new(move || {
            per_key(queries.len(), || {
                pleat_hom.contains_batch(queries, &mut pleat_out);
                black_box(&pleat_out);
            })
        }),
        samples: Vec::new(),
    });
    for &b in &backends {
        ms.push(ribbon_batch(
            "hom64-7.63",
            hom763.view().with_backend(b).expect("available"),
            queries,
        ));
    }
    let mut pleat_std_out = vec![false; queries.len()];
    ms.push(Measurement {
        name: "pleat std batch".into(),
        run: Box::new(move || {
            per_key(queries.len(), || {
                pleat_std.contains_batch(queries, &mut pleat_std_out);
                black_box(&pleat_std_out);
            })
        }),
        samples: Vec::new(),
    });
    for &b in &backends {
        ms.push(ribbon_batch(
            "std128-7.41",
            std741.view().with_backend(b).expect("available"),
            queries,
        ));
    }
    // Builds.
    for (name, kind, width, millibits) in [
        ("hom64-7.63", Kind::Homogeneous, Width::W64, 7_630),
        ("std128-7.41", Kind::Standard, Width::W128, 7_410),
    ] {
        for &b in &backends {
            let plan = Plan::new(kind, width, n, millibits)
                .expect("plan")
                .with_backend(b)
                .expect("available");
            let mut scratch = vec![0u64; plan.scratch_words()];
            let mut bytes = vec![0u8; plan.filter_bytes()];
            ms.push(Measurement {
                name: format!("{name} build {}", b.name()),
                run: Box::new(move || {
                    per_key(n, || {
                        plan.build(keys, &mut scratch, &mut bytes).expect("build");
                    })
                }),
                samples: Vec::new(),
            });
        }
    }
    ms.push(Measurement {
        name: "pleat hom build (pleated)".into(),
        run: Box::new(|| {
            per_key(n, || {
                black_box(pleat::filter::RibbonFilter::from_keys_pleated(keys));
            })
        }),
        samples: Vec::new(),
    });
    ms.push(Measurement {
        name: "pleat std build (pleated)".into(),
        run: Box::new(|| {
            per_key(n, || {
                black_box(pleat::filter::StdRibbon::<7>::from_keys_pleated(keys).expect("build"));
            })
        }),
        samples: Vec::new(),
    });
    ms.push(Measurement {
        name: "fuse8 build".into(),
        run: Box::new(|| {
            per_key(n, || {
                black_box(BinaryFuse8::try_from(keys).expect("build"));
            })
        }),
        samples: Vec::new(),
    });

    for _ in 0..rounds {
        for m in &mut ms {
            (m.run)();
            let s = (m.run)();
            m.samples.push(s);
        }
    }
    println!("| measurement | median ns/key | min | max |");
    println!("|---|---|---|---|");
    let mut medians = std::collections::BTreeMap::new();
    for m in &ms {
        let med = median(m.samples.clone());
        let min = m.samples.iter().copied().fold(f64::MAX, f64::min);
        let max = m.samples.iter().copied().fold(0.0, f64::max);
        println!("| {} | {med:.2} | {min:.2} | {max:.2} |", m.name);
        medians.insert(m.name.clone(), m.samples.clone());
    }
    // Ratios: median over rounds of the per-round ratio.
    let ratio = |a: &str, b: &str| -> Option<f64> {
        let (x, y) = (medians.get(a)?, medians.get(b)?);
        Some(median(x.iter().zip(y).map(|(x, y)| x / y).collect()))
    };
    println!();
    println!("| ratio (median of per-round ratios) | value |");
    println!("|---|---|");
    // The targets, for every vector backend this machine has (the best
    // one first), and the AVX2 speedup over scalar.
    let mut pairs = Vec::new();
    let mut vector: Vec<&str> = backends
        .iter()
        .filter(|&&b| b != Backend::Scalar)
        .map(|b| b.name())
        .collect();
    vector.reverse();
    for v in vector {
        for (a, b) in [
            ("hom64-8.7 batch", "fuse8 contains"),
            ("hom64-7.63 batch", "pleat hom batch"),
            ("hom64-7.63 build", "pleat hom build (pleated)"),
            ("std128-7.41 batch", "pleat std batch"),
            ("std128-7.41 build", "pleat std build (pleated)"),
        ] {
            pairs.push((format!("{a} {v}"), b.to_string()));
        }
    }
    pairs.push((
        "hom64-8.7 batch avx2".to_string(),
        "hom64-8.7 batch scalar".to_string(),
    ));
    // The portable backend against scalar (SSE2 on x86_64, simd128 on
    // wasm32): scalar time over portable time, the speedup.
    for a in ["hom64-8.7 batch", "hom64-7.63 batch", "std128-7.41 batch"] {
        pairs.push((format!("{a} scalar"), format!("{a} portable")));
    }
    for (a, b) in pairs {
        if let Some(r) = ratio(&a, &b) {
            println!("| {a} / {b} | {r:.3} |");
        }
    }
}
