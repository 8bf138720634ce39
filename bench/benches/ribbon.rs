//! Criterion benches: ribbon-kernel per available backend beside `xorf`
//! BinaryFuse8 and `pleat` (Homogeneous `Ribbon<7>` and `StdRibbon<7>`), on
//! the same random 64-bit hashes.
//!
//! * `build/<n>/<config>/<backend>`: build time per key.
//! * `query/<n>/<set>/<config>/<single|batch>/<backend>`: query time per
//!   key for all-positive, all-negative and shuffled 50/50 (`mixed`) query
//!   sets, single-key and batch; `xorf-*` and `pleat-*` beside them.
//!
//! `cargo bench -p ribbon-kernel-bench` (from the repository root) runs
//! everything; filter with criterion's regex, e.g.
//! `cargo bench -p ribbon-kernel-bench -- 'query/1M/mixed/hom64-8.7'`,
//! and list the ids with `-- --list`. Criterion reports time per iteration
//! of n keys, so ms per 10^6 keys reads as ns per key, and writes HTML
//! reports with plots to `target/criterion/report/index.html`. Key sets
//! and filters are built when the first benchmark that needs them runs, so
//! listing and narrow filters start at once.
//!
//! Environment variables choose what is benched without editing code;
//! each takes one value or a comma-separated list:
//!
//! * `RIBBON_BENCH_KEYS`: key counts (default `1000000,10000000`).
//! * `RIBBON_BENCH_KIND` (`homogeneous`, `standard`, `smash`, `bumped`),
//!   `RIBBON_BENCH_WIDTH` (`64`, `128`) and `RIBBON_BENCH_BITS` (bits per
//!   key such as `8.7`; a whole number of 1000 or more is millibits):
//!   each replaces that part of every default configuration
//!   (`hom64-8.7`, `hom64-7.63`, `std128-7.41`), repeats dropped. So
//!   `RIBBON_BENCH_BITS=10` benches `hom64-10` and `std128-10`, and
//!   `RIBBON_BENCH_KIND=standard RIBBON_BENCH_WIDTH=128` benches
//!   `std128-8.7`, `std128-7.63` and `std128-7.41`.
//! * `RIBBON_BENCH_BACKEND`: `scalar`, `avx2`, `avx512`, `neon`,
//!   `portable` (default: every backend this CPU has). A requested
//!   backend the CPU lacks is skipped, with the reason on stderr.
//!
//! The `xorf` and `pleat` filters keep their own configurations; leave
//! them out with the regex (e.g. `'query/.*/(hom|std|smash)'`). An
//! unknown value stops the bench with a message and exit status 2.
//! For ratios measured side by side, use `examples/compare.rs` (this
//! package's, `cargo run --release -p ribbon-kernel-bench --example
//! compare`).

use std::cell::{OnceCell, RefCell};
use std::hint::black_box;
use std::sync::OnceLock;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use ribbon_kernel::{Backend, Filter, FilterRef, Kind, Plan, Width};
use xorf::{BinaryFuse8, Filter as _};

#[path = "../../tests/common/kit.rs"]
mod kit;
use kit::splitmix64;

#[path = "../../examples/common/args.rs"]
mod args;
use args::{Config, Selection};

/// The configurations of the performance targets: Homogeneous w64 at the
/// FP rate of BinaryFuse8 (8.7 bits/key) and at pleat's r = 7 (7.63), and
/// Standard w128 at 7.41 bits/key (pleat's `StdRibbon<7>`).
const DEFAULT_CONFIGS: [Config; 3] = [
    Config::new(Kind::Homogeneous, Width::W64, 8_700),
    Config::new(Kind::Homogeneous, Width::W64, 7_630),
    Config::new(Kind::Standard, Width::W128, 7_410),
];

const DEFAULT_SIZES: [usize; 2] = [1_000_000, 10_000_000];

/// What the environment asks for.
struct Choice {
    sizes: Vec<usize>,
    configs: Vec<Config>,
    backends: Vec<Backend>,
}

/// The list in the environment variable `name`, if set and not empty;
/// exits with a message on a value `parse` refuses.
fn env_list<T>(name: &str, parse: impl Fn(&str) -> Result<T, String>) -> Option<Vec<T>> {
    let text = match std::env::var(name) {
        Ok(text) if text.trim().is_empty() => return None,
        Ok(text) => text,
        Err(std::env::VarError::NotPresent) => return None,
        Err(std::env::VarError::NotUnicode(_)) => fail(&format!("{name} is not UTF-8")),
    };
    match args::parse_list(&text, parse) {
        Ok(values) => Some(values),
        Err(message) => fail(&format!("{name}: {message}")),
    }
}

fn fail(message: &str) -> ! {
    eprintln!("error: {message}");
    std::process::exit(args::EXIT_USAGE)
}

/// Read once: `bench_query` and `bench_build` share it, and a skipped
/// backend is reported once.
fn choice() -> &'static Choice {
    static CHOICE: OnceLock<Choice> = OnceLock::new();
    CHOICE.get_or_init(|| {
        let sizes =
            env_list("RIBBON_BENCH_KEYS", args::parse_keys).unwrap_or(DEFAULT_SIZES.to_vec());
        let selection = Selection {
            kinds: env_list("RIBBON_BENCH_KIND", args::parse_kind),
            widths: env_list("RIBBON_BENCH_WIDTH", args::parse_width),
            millibits: env_list("RIBBON_BENCH_BITS", args::parse_millibits),
        };
        let configs = selection.apply_all(&DEFAULT_CONFIGS);
        // Planning is integer math: refuse a configuration now rather
        // than in the middle of a run.
        for &n in &sizes {
            for config in &configs {
                if let Err(e) = Plan::new(config.kind, config.width, n, config.millibits) {
                    fail(&format!("cannot plan {} for {n} keys: {e}", config.label()));
                }
            }
        }
        let requested = env_list("RIBBON_BENCH_BACKEND", args::parse_backend);
        let backends = requested
            .unwrap_or(Backend::ALL.to_vec())
            .into_iter()
            .filter(|&b| {
                let ok = b.is_available();
                if !ok {
                    eprintln!(
                        "skipping backend {}: {}",
                        b.name(),
                        args::unavailable_reason(b)
                    );
                }
                ok
            })
            .collect();
        Choice {
            sizes,
            configs,
            backends,
        }
    })
}

/// Members, and the three query sets: all members (shuffled), all
/// non-members, and shuffled 50/50.
struct KeySets {
    keys: Vec<u64>,
    queries: [Vec<u64>; 3],
}

const QUERY_SETS: [&str; 3] = ["positive", "negative", "mixed"];

impl KeySets {
    fn new(n: usize) -> KeySets {
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
        KeySets {
            keys,
            queries: [positive, negative, mixed],
        }
    }
}

fn label(n: usize) -> String {
    if n.is_multiple_of(1_000_000) {
        format!("{}M", n / 1_000_000)
    } else {
        n.to_string()
    }
}

fn build_filter(config: Config, keys: &[u64]) -> Filter {
    let plan = Plan::new(config.kind, config.width, keys.len(), config.millibits).expect("plan");
    Filter::build(&plan, keys).expect("build")
}

fn view(filter: &Filter, backend: Backend) -> FilterRef<'_> {
    filter.view().with_backend(backend).expect("available")
}

/// Every filter of one key count, built on first use.
struct Filters {
    ribbon: Vec<OnceCell<Filter>>,
    fuse: OnceCell<BinaryFuse8>,
    pleat_hom: OnceCell<pleat::filter::RibbonFilter>,
    pleat_std: OnceCell<pleat::filter::StdRibbon<7>>,
}

fn bench_query(c: &mut Criterion, n: usize, sets: &OnceCell<KeySets>) {
    let choice = choice();
    let sets = || sets.get_or_init(|| KeySets::new(n));
    let keys = || &sets().keys[..];
    let filters = Filters {
        ribbon: choice.configs.iter().map(|_| OnceCell::new()).collect(),
        fuse: OnceCell::new(),
        pleat_hom: OnceCell::new(),
        pleat_std: OnceCell::new(),
    };
    let fuse = || {
        filters
            .fuse
            .get_or_init(|| BinaryFuse8::try_from(keys()).expect("fuse build"))
    };
    let pleat_hom = || {
        filters
            .pleat_hom
            .get_or_init(|| pleat::filter::RibbonFilter::from_keys_pleated(keys()))
    };
    let pleat_std = || {
        filters.pleat_std.get_or_init(|| {
            pleat::filter::StdRibbon::<7>::from_keys_pleated(keys()).expect("pleat std build")
        })
    };
    // One answer buffer, allocated and touched before any timing.
    let out = RefCell::new(Vec::new());
    let out = || {
        let mut out = out.borrow_mut();
        out.resize(n, false);
        out
    };
    for (set, set_name) in QUERY_SETS.iter().enumerate() {
        let queries = || &sets().queries[set][..];
        let mut group = c.benchmark_group(format!("query/{}/{set_name}", label(n)));
        group.throughput(Throughput::Elements(n as u64));
        group.sample_size(10);
        for (config, filter) in choice.configs.iter().zip(&filters.ribbon) {
            let filter = || filter.get_or_init(|| build_filter(*config, keys()));
            for &backend in &choice.backends {
                group.bench_function(
                    BenchmarkId::new(format!("{}/single", config.label()), backend.name()),
                    |b| {
                        let (view, queries) = (view(filter(), backend), queries());
                        b.iter(|| black_box(queries.iter().filter(|&&h| view.contains(h)).count()))
                    },
                );
                group.bench_function(
                    BenchmarkId::new(format!("{}/batch", config.label()), backend.name()),
                    |b| {
                        let (view, queries, mut out) = (view(filter(), backend), queries(), out());
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
            let (fuse, queries) = (fuse(), queries());
            b.iter(|| black_box(queries.iter().filter(|h| fuse.contains(h)).count()))
        });
        group.bench_function("pleat-hom64/single", |b| {
            let (pleat_hom, queries) = (pleat_hom(), queries());
            b.iter(|| black_box(queries.iter().filter(|&&h| pleat_hom.contains(h)).count()))
        });
        group.bench_function("pleat-hom64/batch", |b| {
            let (pleat_hom, queries, mut out) = (pleat_hom(), queries(), out());
            b.iter(|| {
                pleat_hom.contains_batch(queries, &mut out);
                black_box(&out);
            })
        });
        group.bench_function("pleat-std128/single", |b| {
            let (pleat_std, queries) = (pleat_std(), queries());
            b.iter(|| black_box(queries.iter().filter(|&&h| pleat_std.contains(h)).count()))
        });
        group.bench_function("pleat-std128/batch", |b| {
            let (pleat_std, queries, mut out) = (pleat_std(), queries(), out());
            b.iter(|| {
                pleat_std.contains_batch(queries, &mut out);
                black_box(&out);
            })
        });
        group.finish();
    }
}

fn bench_build(c: &mut Criterion, n: usize, sets: &OnceCell<KeySets>) {
    let choice = choice();
    let keys = || &sets.get_or_init(|| KeySets::new(n)).keys[..];
    // Caller-provided buffers, as the no_std core takes them; kept from
    // one benchmark to the next so no timed build touches fresh pages.
    let buffers = RefCell::new((Vec::<u64>::new(), Vec::<u8>::new()));
    let mut group = c.benchmark_group(format!("build/{}", label(n)));
    group.throughput(Throughput::Elements(n as u64));
    group.sample_size(10);
    for config in &choice.configs {
        for &backend in &choice.backends {
            group.bench_function(BenchmarkId::new(config.label(), backend.name()), |b| {
                let plan = Plan::new(config.kind, config.width, n, config.millibits)
                    .expect("plan")
                    .with_backend(backend)
                    .expect("available");
                let keys = keys();
                let (scratch, bytes) = &mut *buffers.borrow_mut();
                scratch.resize(plan.scratch_words(), 0);
                bytes.resize(plan.filter_bytes(), 0);
                b.iter(|| {
                    plan.build(keys, scratch, bytes).expect("build");
                })
            });
        }
    }
    group.bench_function("xorf-fuse8", |b| {
        let keys = keys();
        b.iter(|| black_box(BinaryFuse8::try_from(keys).expect("build")))
    });
    group.bench_function("pleat-hom64 (pleated)", |b| {
        let keys = keys();
        b.iter(|| black_box(pleat::filter::RibbonFilter::from_keys_pleated(keys)))
    });
    group.bench_function("pleat-std128 (pleated)", |b| {
        let keys = keys();
        b.iter(|| black_box(pleat::filter::StdRibbon::<7>::from_keys_pleated(keys).expect("build")))
    });
    group.finish();
}

/// Queries for every key count, then builds, as before; a key count's
/// key sets serve both.
fn bench_all(c: &mut Criterion) {
    let sizes = &choice().sizes;
    let sets: Vec<OnceCell<KeySets>> = sizes.iter().map(|_| OnceCell::new()).collect();
    for (&n, sets) in sizes.iter().zip(&sets) {
        bench_query(c, n, sets);
    }
    for (&n, sets) in sizes.iter().zip(&sets) {
        bench_build(c, n, sets);
    }
}

criterion_group!(benches, bench_all);
criterion_main!(benches);
