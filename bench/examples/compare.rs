//! Side-by-side comparison with the filters a Rust user picks today:
//! `xorf` BinaryFuse8 and `pleat` (a Rust Ribbon crate), on the same random
//! 64-bit hashes, in one process, with interleaved repetitions.
//!
//! `cargo run --release -p ribbon-kernel-bench --example compare [-- OPTIONS]`
//! (from the repository root; this example lives in the workspace member
//! `bench/` so that the core crate never compiles the rivals).
//!
//! Every round runs every measurement once, in the same order, each right
//! after one untimed warm-up run (so no filter starts with cold caches just
//! because another filter ran before it); the table shows the median over
//! rounds in ns per key, and the ratios are medians of per-round ratios.
//! Queries are shuffled 50/50 members and non-members.
//!
//! Each rival has a ribbon-kernel configuration it is compared with:
//! BinaryFuse8 `contains` with `hom64-8.7` (the same FP rate; single-key
//! and batch queries), pleat `Ribbon<7>` with `hom64-7.63` and pleat
//! `StdRibbon<7>` with `std128-7.41` (the same bits per key; batch queries
//! and builds). Single-key queries (`hom64-8.7` and `std128-7.41`, every
//! backend) are compared with BinaryFuse8's `contains`, the single-key
//! reference. The rivals keep their configurations. Options (`--help`
//! lists them):
//!
//! * `--keys N` (10^6), `--rounds R` (11).
//! * `--bits B[,B...]`, `--kind K[,K...]`, `--width W[,W...]`: replace
//!   that part of each ribbon-kernel configuration, as the criterion bench
//!   does (`--kind standard --width 128` compares `std128-8.7` with
//!   BinaryFuse8, and so on). Bits are a decimal such as `7.7`; a whole
//!   number of 1000 or more is millibits.
//! * `--backend NAME[,NAME...]`: only these backends (default: every one
//!   this CPU has); one the CPU lacks is an error (exit status 1).
//! * `--csv`, `--json`, `--out PATH`: as in the core crate's `examples/report.rs`: the
//!   tables `filters`, `measurements` and `ratios` as CSV or JSON, prose
//!   on stderr; to `PATH` instead of stdout.

use std::collections::BTreeMap;
use std::hint::black_box;
use std::time::Instant;

use ribbon_kernel::{Backend, Filter, FilterRef, Kind, Plan, Width};
use xorf::{BinaryFuse8, Filter as _};

#[path = "../../tests/common/kit.rs"]
mod kit;
use kit::splitmix64;

#[path = "../../examples/common/args.rs"]
mod args;
use args::{CommandLine, Config, OptionSpec, Selection};

#[path = "../../examples/common/document.rs"]
mod document;
use document::{Cell, Column, Document, Format};

const SUMMARY: &str = "Compares ribbon-kernel with xorf BinaryFuse8 and pleat on the same \
    keys, in one process, with interleaved rounds.";

const OPTIONS: &[OptionSpec] = &[
    args::KEYS_OPTION,
    OptionSpec {
        name: "--rounds",
        value: Some("R"),
        help: "rounds of every measurement (default 11)",
    },
    OptionSpec {
        name: "--bits",
        value: Some("B[,B...]"),
        help: "ribbon-kernel bits per key; 1000 or more is millibits (default: per rival)",
    },
    OptionSpec {
        name: "--kind",
        value: Some("K[,K...]"),
        help: "ribbon-kernel kind: homogeneous, standard, smash, bumped (default: per rival)",
    },
    OptionSpec {
        name: "--width",
        value: Some("W[,W...]"),
        help: "ribbon-kernel width: 64, 128 (default: per rival)",
    },
];

/// A rival and the ribbon-kernel configuration compared with it.
struct Rival {
    ribbon: Config,
    /// The rival's query measurement.
    query: &'static str,
    /// The rival's build measurement, if builds are compared.
    build: Option<&'static str>,
    /// Whether ribbon-kernel's single-key queries are measured too (and
    /// compared with BinaryFuse8's, the single-key reference).
    single: bool,
}

const RIVALS: [Rival; 3] = [
    Rival {
        ribbon: Config::new(Kind::Homogeneous, Width::W64, 8_700),
        query: "fuse8 contains",
        build: None,
        single: true,
    },
    Rival {
        ribbon: Config::new(Kind::Homogeneous, Width::W64, 7_630),
        query: "pleat hom batch",
        build: Some("pleat hom build (pleated)"),
        single: false,
    },
    Rival {
        ribbon: Config::new(Kind::Standard, Width::W128, 7_410),
        query: "pleat std batch",
        build: Some("pleat std build (pleated)"),
        single: true,
    },
];

fn die(message: &str) -> ! {
    eprintln!("error: {message}");
    std::process::exit(args::EXIT_FAILURE)
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// One timed measurement: a name and a closure returning ns per key.
struct Measurement<'a> {
    name: String,
    run: Box<dyn FnMut() -> f64 + 'a>,
    samples: Vec<f64>,
}

impl<'a> Measurement<'a> {
    fn new(name: impl Into<String>, run: impl FnMut() -> f64 + 'a) -> Measurement<'a> {
        Measurement {
            name: name.into(),
            run: Box::new(run),
            samples: Vec::new(),
        }
    }
}

/// Adds `m` unless a measurement of that name is there already (two
/// rivals may share a configuration).
fn push_new<'a>(ms: &mut Vec<Measurement<'a>>, m: Measurement<'a>) {
    if !ms.iter().any(|have| have.name == m.name) {
        ms.push(m);
    }
}

fn per_key(n: usize, f: impl FnOnce()) -> f64 {
    let t = Instant::now();
    f();
    t.elapsed().as_nanos() as f64 / n as f64
}

fn ribbon_batch<'a>(name: &str, view: FilterRef<'a>, queries: &'a [u64]) -> Measurement<'a> {
    let mut out = vec![false; queries.len()];
    Measurement::new(
        format!("{name} batch {}", view.backend().name()),
        move || {
            per_key(queries.len(), || {
                view.contains_batch(queries, &mut out)
                    .expect("lengths match");
                black_box(&out);
            })
        },
    )
}

fn ribbon_single<'a>(name: &str, view: FilterRef<'a>, queries: &'a [u64]) -> Measurement<'a> {
    Measurement::new(
        format!("{name} single {}", view.backend().name()),
        move || {
            per_key(queries.len(), || {
                let hits = queries.iter().filter(|&&h| view.contains(h)).count();
                black_box(hits);
            })
        },
    )
}

fn view(filter: &Filter, backend: Backend) -> FilterRef<'_> {
    filter.view().with_backend(backend).expect("available")
}

const FILTER_COLUMNS: &[Column] = &[
    ("filter", "filter"),
    ("bits/key", "bits_per_key"),
    ("FP %", "fp_percent"),
];
const MEASUREMENT_COLUMNS: &[Column] = &[
    ("measurement", "measurement"),
    ("median ns/key", "median_ns_per_key"),
    ("min", "min_ns_per_key"),
    ("max", "max_ns_per_key"),
];
const RATIO_COLUMNS: &[Column] = &[
    ("ratio (median of per-round ratios)", "ratio"),
    ("value", "value"),
];

fn main() {
    let line = CommandLine::parse("compare", SUMMARY, OPTIONS);
    let format = match (line.flag("--csv"), line.flag("--json")) {
        (true, true) => line.fail("--csv and --json exclude each other"),
        (true, false) => Format::Csv,
        (false, true) => Format::Json,
        (false, false) => Format::Markdown,
    };
    let n = line.value("--keys", args::parse_keys).unwrap_or(1_000_000);
    let rounds = line
        .value("--rounds", |text| {
            text.parse::<usize>()
                .ok()
                .filter(|&r| r > 0)
                .ok_or_else(|| format!("{text:?} is not a round count (1 or more)"))
        })
        .unwrap_or(11);
    let selection = Selection {
        kinds: line.list("--kind", args::parse_kind),
        widths: line.list("--width", args::parse_width),
        millibits: line.list("--bits", args::parse_millibits),
    };
    let backends = line.backends().unwrap_or_else(|e| die(&e));
    let mut doc = Document::new(format, line.value("--out", |path| Ok(path.to_string())));

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

    // The filters: each ribbon-kernel configuration once, then the rivals.
    let configs = selection.apply_all(&RIVALS.map(|r| r.ribbon));
    let ribbons: Vec<(Config, Filter)> = configs
        .iter()
        .map(|&config| {
            let filter = Plan::new(config.kind, config.width, n, config.millibits)
                .and_then(|plan| Filter::build(&plan, keys))
                .unwrap_or_else(|e| {
                    die(&format!(
                        "cannot build {} for {n} keys: {e}",
                        config.label()
                    ))
                });
            (config, filter)
        })
        .collect();
    let ribbon = |config: Config| {
        &ribbons
            .iter()
            .find(|(c, _)| *c == config)
            .expect("every configuration is built")
            .1
    };
    let fuse = BinaryFuse8::try_from(keys).expect("fuse build");
    let pleat_hom = pleat::filter::RibbonFilter::from_keys_pleated(keys);
    let pleat_std = pleat::filter::StdRibbon::<7>::from_keys_pleated(keys).expect("pleat std");

    doc.fact("keys", Cell::Count(n as u64));
    doc.fact("rounds", Cell::Count(rounds as u64));
    doc.line(&format!(
        "# ribbon-kernel vs xorf BinaryFuse8 vs pleat, n = {n}, {rounds} rounds"
    ));
    doc.line("");
    doc.table("filters", FILTER_COLUMNS, 0);
    for (config, filter) in &ribbons {
        let v = filter.view();
        doc.row(vec![
            Cell::text(format!("ribbon-kernel {}", config.label())),
            Cell::Number(v.millibits_per_key() as f64 / 1000.0, 3),
            Cell::Number(fp(&|h| v.contains(h)) * 100.0, 3),
        ]);
    }
    doc.row(vec![
        Cell::text("xorf BinaryFuse8"),
        Cell::Number((fuse.fingerprints.len() * 8) as f64 / n as f64, 3),
        Cell::Number(fp(&|h| fuse.contains(&h)) * 100.0, 3),
    ]);
    doc.row(vec![
        Cell::text("pleat Ribbon<7> (hom64)"),
        Cell::Number(pleat_hom.bits_per_key(n), 3),
        Cell::Number(fp(&|h| pleat_hom.contains(h)) * 100.0, 3),
    ]);
    doc.row(vec![
        Cell::text("pleat StdRibbon<7> (w128)"),
        Cell::Number(pleat_std.bits_per_key(n), 3),
        Cell::Number(fp(&|h| pleat_std.contains(h)) * 100.0, 3),
    ]);
    doc.line("");

    // Queries: each rival, then its ribbon-kernel configurations.
    let mut ms: Vec<Measurement<'_>> = Vec::new();
    let (fuse, pleat_hom, pleat_std) = (&fuse, &pleat_hom, &pleat_std);
    let mut pleat_out = vec![false; queries.len()];
    let mut pleat_std_out = vec![false; queries.len()];
    let mut rival_queries = [
        Some(Measurement::new("fuse8 contains", move || {
            per_key(queries.len(), || {
                black_box(queries.iter().filter(|h| fuse.contains(h)).count());
            })
        })),
        Some(Measurement::new("pleat hom batch", move || {
            per_key(queries.len(), || {
                pleat_hom.contains_batch(queries, &mut pleat_out);
                black_box(&pleat_out);
            })
        })),
        Some(Measurement::new("pleat std batch", move || {
            per_key(queries.len(), || {
                pleat_std.contains_batch(queries, &mut pleat_std_out);
                black_box(&pleat_std_out);
            })
        })),
    ];
    for (rival, rival_query) in RIVALS.iter().zip(&mut rival_queries) {
        push_new(&mut ms, rival_query.take().expect("pushed once"));
        for config in selection.apply(rival.ribbon) {
            let filter = ribbon(config);
            for &b in &backends {
                push_new(
                    &mut ms,
                    ribbon_batch(&config.label(), view(filter, b), queries),
                );
            }
            if rival.single {
                for &b in &backends {
                    push_new(
                        &mut ms,
                        ribbon_single(&config.label(), view(filter, b), queries),
                    );
                }
            }
        }
    }
    // Builds.
    for rival in RIVALS.iter().filter(|r| r.build.is_some()) {
        for config in selection.apply(rival.ribbon) {
            for &b in &backends {
                let plan = Plan::new(config.kind, config.width, n, config.millibits)
                    .expect("planned above")
                    .with_backend(b)
                    .expect("available");
                let mut scratch = vec![0u64; plan.scratch_words()];
                let mut bytes = vec![0u8; plan.filter_bytes()];
                push_new(
                    &mut ms,
                    Measurement::new(
                        format!("{} build {}", config.label(), b.name()),
                        move || {
                            per_key(n, || {
                                plan.build(keys, &mut scratch, &mut bytes).expect("build");
                            })
                        },
                    ),
                );
            }
        }
    }
    ms.push(Measurement::new("pleat hom build (pleated)", || {
        per_key(n, || {
            black_box(pleat::filter::RibbonFilter::from_keys_pleated(keys));
        })
    }));
    ms.push(Measurement::new("pleat std build (pleated)", || {
        per_key(n, || {
            black_box(pleat::filter::StdRibbon::<7>::from_keys_pleated(keys).expect("build"));
        })
    }));
    ms.push(Measurement::new("fuse8 build", || {
        per_key(n, || {
            black_box(BinaryFuse8::try_from(keys).expect("build"));
        })
    }));

    for round in 1..=rounds {
        for m in &mut ms {
            (m.run)();
            let s = (m.run)();
            m.samples.push(s);
        }
        doc.progress(&format!("round {round} of {rounds}"));
    }
    doc.table("measurements", MEASUREMENT_COLUMNS, 0);
    let mut samples = BTreeMap::new();
    for m in &ms {
        let min = m.samples.iter().copied().fold(f64::MAX, f64::min);
        let max = m.samples.iter().copied().fold(0.0, f64::max);
        doc.row(vec![
            Cell::text(&m.name),
            Cell::Number(median(m.samples.clone()), 2),
            Cell::Number(min, 2),
            Cell::Number(max, 2),
        ]);
        samples.insert(m.name.clone(), m.samples.clone());
    }
    // Ratios: median over rounds of the per-round ratio.
    let ratio = |a: &str, b: &str| -> Option<f64> {
        let (x, y) = (samples.get(a)?, samples.get(b)?);
        Some(median(x.iter().zip(y).map(|(x, y)| x / y).collect()))
    };
    doc.line("");
    doc.table("ratios", RATIO_COLUMNS, 0);
    // Each configuration against its rival, for every vector backend this
    // machine has (the best one first), and the AVX2 speedup over scalar.
    let mut pairs: Vec<(String, String)> = Vec::new();
    let mut vector: Vec<&str> = backends
        .iter()
        .filter(|&&b| b != Backend::Scalar)
        .map(|b| b.name())
        .collect();
    vector.reverse();
    for v in vector {
        for rival in &RIVALS {
            for config in selection.apply(rival.ribbon) {
                let name = config.label();
                pairs.push((format!("{name} batch {v}"), rival.query.to_string()));
                if rival.single {
                    pairs.push((format!("{name} single {v}"), RIVALS[0].query.to_string()));
                }
                if let Some(build) = rival.build {
                    pairs.push((format!("{name} build {v}"), build.to_string()));
                }
            }
        }
    }
    for config in selection.apply(RIVALS[0].ribbon) {
        let name = config.label();
        pairs.push((format!("{name} batch avx2"), format!("{name} batch scalar")));
    }
    // The portable backend against scalar (SSE2 on x86_64, simd128 on
    // wasm32): scalar time over portable time, the speedup.
    for config in &configs {
        let name = config.label();
        pairs.push((
            format!("{name} batch scalar"),
            format!("{name} batch portable"),
        ));
    }
    let mut shown: Vec<(String, String)> = Vec::new();
    for (a, b) in pairs {
        if shown.contains(&(a.clone(), b.clone())) {
            continue;
        }
        if let Some(r) = ratio(&a, &b) {
            doc.row(vec![Cell::text(format!("{a} / {b}")), Cell::Number(r, 3)]);
        }
        shown.push((a, b));
    }
    if let Err(e) = doc.finish() {
        die(&e);
    }
}
