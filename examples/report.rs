//! The main job: builds Ribbon filters for random 64-bit key hashes in every
//! kind and width at a few bits-per-key settings and prints, per available
//! backend, space, FP rate, and build and query times.
//!
//! `cargo run --release --example report [-- OPTIONS]`
//!
//! With no options: 10^6 keys, every kind and width at 4, 7.7 and 12 bits
//! per key, every backend this CPU has, as a markdown report on stdout.
//! Options (`--help` lists them):
//!
//! * `--keys N`: key count (10^6; 10^5 with `--quick`).
//! * `--bits B[,B...]`: bits per key, a decimal such as `7.7`; a whole
//!   number of 1000 or more is millibits (`10000` is 10 bits per key).
//! * `--kind K[,K...]` (`homogeneous`, `standard`, `smash`), `--width
//!   W[,W...]` (`64`, `128`): only these.
//! * `--backend NAME[,NAME...]` (`scalar`, `avx2`, `avx512`, `neon`,
//!   `portable`): only these; builds use the first. One this CPU or build
//!   lacks is an error (exit status 1) that says why.
//! * `--quick`: 10^5 keys, 7.7 bits per key, 3 runs per time.
//! * `--csv`, `--json`: the tables as CSV or JSON on stdout (see
//!   `examples/common/document.rs`); the prose goes to stderr.
//! * `--out PATH`: the report, CSV or JSON to `PATH` instead of stdout.
//! * `--record DIR`: the markdown report to `DIR/<YYYY-MM-DD>-<cpu>.md`
//!   (the date in UTC, the CPU's model name as a slug, `unknown` where
//!   `/proc/cpuinfo` has none), under a line giving the date, the CPU, the
//!   crate version, the git commit and the command line. `docs/performance/`
//!   holds such records. Creates `DIR`; replaces a record of the same day
//!   and CPU; excludes `--csv`, `--json` and `--out`.
//! * `--svg PATH`: also draw single-key and batch query times of the mixed
//!   query set as a bar chart, per kind and width and per backend, at 7.7
//!   bits per key (or the first `--bits` value when 7.7 is not measured).
//!   `docs/query-ns-per-key.svg` is `--svg docs/query-ns-per-key.svg`.
//!
//! After the filters, what opening each costs (`FilterRef::from_bytes`,
//! which verifies the checksum, against `from_bytes_unverified`), and a
//! table of key-hashing speed: `hash_key` and `hash_keys` on 8-, 32- and
//! 256-byte keys.
//!
//! Unknown options print the usage and exit with status 2. Times are
//! medians of repeated runs (ns per key); this machine is shared and
//! noisy, so compare rows measured in the same run. Each section of the
//! report is one function that adds its facts and tables to the
//! `Document`.

use std::hint::black_box;
use std::time::Instant;

use ribbon_kernel::{Backend, FilterRef, Kind, Plan, Width, hash_key, hash_keys};

#[path = "../tests/common/kit.rs"]
mod kit;
use kit::splitmix64;

#[path = "common/args.rs"]
mod args;
use args::{CommandLine, Config, OptionSpec};

#[path = "common/document.rs"]
mod document;
use document::{Cell, Column, Document, Format};

#[path = "common/bar_chart.rs"]
mod bar_chart;
use bar_chart::BarChart;

const SUMMARY: &str = "Builds and queries Ribbon filters in every kind and width on every \
    backend of this CPU; prints space, FP rate and ns per key.";

const OPTIONS: &[OptionSpec] = &[
    OptionSpec {
        name: "--keys",
        value: Some("N"),
        help: "key count (default 1000000; 100000 with --quick)",
    },
    OptionSpec {
        name: "--bits",
        value: Some("B[,B...]"),
        help: "bits per key such as 7.7; 1000 or more is millibits (default 4,7.7,12)",
    },
    OptionSpec {
        name: "--kind",
        value: Some("K[,K...]"),
        help: "homogeneous, standard, smash, bumped (default all)",
    },
    OptionSpec {
        name: "--width",
        value: Some("W[,W...]"),
        help: "64, 128 (default both)",
    },
    OptionSpec {
        name: "--quick",
        value: None,
        help: "100000 keys, 7.7 bits per key, 3 runs per time",
    },
    OptionSpec {
        name: "--svg",
        value: Some("PATH"),
        help: "also draw query ns/key (mixed set) per backend as an SVG bar chart",
    },
    OptionSpec {
        name: "--record",
        value: Some("DIR"),
        help: "write the markdown report to DIR/<date>-<cpu>.md (docs/performance/)",
    },
];

/// What the command line asked for.
struct Options {
    keys: usize,
    reps: usize,
    settings: Vec<u32>,
    kinds: Vec<Kind>,
    widths: Vec<Width>,
    backends: Vec<Backend>,
    /// The backend builds run on.
    build_backend: Backend,
    svg: Option<String>,
    /// The record's header line, for `--record`.
    record: Option<String>,
}

fn options(line: &CommandLine) -> (Options, Format, Option<String>) {
    let quick = line.flag("--quick");
    let format = match (line.flag("--csv"), line.flag("--json")) {
        (true, true) => line.fail("--csv and --json exclude each other"),
        (true, false) => Format::Csv,
        (false, true) => Format::Json,
        (false, false) => Format::Markdown,
    };
    let record_dir = line.value("--record", parse_record_dir);
    if record_dir.is_some() && (format != Format::Markdown || line.flag("--out")) {
        line.fail(
            "--record writes a markdown file of its own: it excludes --csv, --json and --out",
        );
    }
    let backends = line.backends().unwrap_or_else(|e| die(&e));
    let options = Options {
        keys: line.value("--keys", args::parse_keys).unwrap_or(if quick {
            100_000
        } else {
            1_000_000
        }),
        reps: if quick { 3 } else { 5 },
        settings: line
            .list("--bits", args::parse_millibits)
            .unwrap_or(if quick {
                vec![7700]
            } else {
                vec![4000, 7700, 12000]
            }),
        kinds: line.list("--kind", args::parse_kind).unwrap_or(vec![
            Kind::Homogeneous,
            Kind::Standard,
            Kind::StandardSmash,
            Kind::Bumped,
        ]),
        widths: line
            .list("--width", args::parse_width)
            .unwrap_or(vec![Width::W64, Width::W128]),
        build_backend: if line.flag("--backend") {
            backends[0]
        } else {
            Backend::detect()
        },
        backends,
        svg: line.value("--svg", |path| Ok(path.to_string())),
        record: record_dir.as_ref().map(|_| record_header()),
    };
    let out = match &record_dir {
        Some(dir) => Some(record_path(dir)),
        None => line.value("--out", |path| Ok(path.to_string())),
    };
    (options, format, out)
}

/// `--record DIR`: a folder that exists or can be made, not a file.
fn parse_record_dir(text: &str) -> Result<String, String> {
    if text.is_empty() {
        return Err("needs a folder (such as docs/performance)".to_string());
    }
    let dir = std::path::Path::new(text);
    if dir.exists() && !dir.is_dir() {
        return Err(format!("{text:?} is a file, not a folder"));
    }
    Ok(text.to_string())
}

/// Where `--record DIR` writes: `DIR/<YYYY-MM-DD>-<cpu slug>.md`, making
/// `DIR` when it is missing.
fn record_path(dir: &str) -> String {
    if let Err(e) = std::fs::create_dir_all(dir) {
        die(&format!("cannot make the folder {dir}: {e}"));
    }
    let name = format!("{}-{}.md", today(), slug(cpu_model().as_deref()));
    std::path::Path::new(dir)
        .join(name)
        .to_string_lossy()
        .into_owned()
}

/// The record's first line: date, CPU, crate version, commit, command.
fn record_header() -> String {
    let cpu = cpu_model().unwrap_or_else(|| "unknown".to_string());
    let commit = git_commit().map_or_else(String::new, |c| format!(", commit {c}"));
    let mut command = String::from("cargo run --release --example report --");
    for arg in std::env::args().skip(1) {
        command.push(' ');
        if arg.is_empty() || arg.contains(|c: char| c.is_whitespace() || "'\"$`\\".contains(c)) {
            command += &format!("'{}'", arg.replace('\'', r"'\''"));
        } else {
            command += &arg;
        }
    }
    format!(
        "Recorded {} (UTC) on {cpu} by ribbon-kernel {}{commit}: `{command}`",
        today(),
        env!("CARGO_PKG_VERSION")
    )
}

/// `git rev-parse --short HEAD` of the crate's checkout, with `-dirty`
/// when files differ from it; `None` without git or outside a checkout.
fn git_commit() -> Option<String> {
    let git = |args: &[&str]| {
        std::process::Command::new("git")
            .args(args)
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .output()
            .ok()
    };
    let head = git(&["rev-parse", "--short", "HEAD"]).filter(|o| o.status.success())?;
    let mut commit = String::from_utf8_lossy(&head.stdout).trim().to_string();
    if commit.is_empty() {
        return None;
    }
    let clean = git(&["diff", "--quiet", "HEAD", "--"]).is_some_and(|o| o.status.success());
    if !clean {
        commit += "-dirty";
    }
    Some(commit)
}

/// Today's date in UTC as `YYYY-MM-DD`.
fn today() -> String {
    let seconds = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let (year, month, day) = civil_from_days((seconds / 86_400) as i64);
    format!("{year:04}-{month:02}-{day:02}")
}

/// The proleptic Gregorian date `days` after 1970-01-01 (Howard
/// Hinnant's `civil_from_days`: eras of 400 years, March-based years).
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let day_of_era = z.rem_euclid(146_097);
    let year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let month_index = (5 * day_of_year + 2) / 153; // 0 is March
    let day = (day_of_year - (153 * month_index + 2) / 5 + 1) as u32;
    let month = if month_index < 10 {
        month_index + 3
    } else {
        month_index - 9
    } as u32;
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

/// A CPU model name as a file-name part: `Intel(R) Xeon(R) Platinum
/// 8375C CPU @ 2.90GHz` is `intel-xeon-platinum-8375c-cpu`; `unknown`
/// for none.
fn slug(model: Option<&str>) -> String {
    let Some(model) = model else {
        return "unknown".to_string();
    };
    let model = model.split(" @ ").next().unwrap_or(model);
    let model = model
        .to_lowercase()
        .replace("(r)", " ")
        .replace("(tm)", " ");
    let words: Vec<&str> = model
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect();
    if words.is_empty() {
        "unknown".to_string()
    } else {
        words.join("-")
    }
}

fn die(message: &str) -> ! {
    eprintln!("error: {message}");
    std::process::exit(args::EXIT_FAILURE)
}

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

/// The members, twice as many other hashes for the FP rate, and the query
/// sets: all members, all non-members and a shuffled 50/50 mix.
struct KeySets {
    keys: Vec<u64>,
    others: Vec<u64>,
    mixed: Vec<u64>,
}

impl KeySets {
    fn new(n: usize) -> KeySets {
        let mut state = 0x5eed_u64;
        let keys: Vec<u64> = (0..n).map(|_| splitmix64(&mut state)).collect();
        let others: Vec<u64> = (0..2 * n).map(|_| splitmix64(&mut state)).collect();
        let mut mixed: Vec<u64> = keys[..n / 2]
            .iter()
            .chain(&others[..n - n / 2])
            .copied()
            .collect();
        for i in (1..mixed.len()).rev() {
            let j = (splitmix64(&mut state) % (i as u64 + 1)) as usize;
            mixed.swap(i, j);
        }
        KeySets {
            keys,
            others,
            mixed,
        }
    }

    /// Positive, negative, mixed.
    fn query_sets(&self) -> [&[u64]; 3] {
        [&self.keys, &self.others[..self.keys.len()], &self.mixed]
    }
}

/// Median ns per key over the positive, negative and mixed sets.
struct QueryTimes {
    single: [f64; 3],
    batch: [f64; 3],
}

const MIXED: usize = 2;

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

/// `/proc/cpuinfo`'s "model name", where there is one.
fn cpu_model() -> Option<String> {
    std::fs::read_to_string("/proc/cpuinfo").ok().and_then(|s| {
        s.lines()
            .find(|l| l.starts_with("model name"))
            .and_then(|l| l.split(':').nth(1))
            .map(|m| m.trim().to_string())
            .filter(|m| !m.is_empty())
    })
}

fn cpu_name() -> String {
    cpu_model().unwrap_or_else(|| std::env::consts::ARCH.to_string())
}

/// The machine and the run, as the report's opening lines.
fn describe_run(doc: &mut Document, options: &Options) {
    let n = options.keys;
    doc.line("# ribbon-kernel report");
    doc.line("");
    if let Some(header) = &options.record {
        doc.line(header);
        doc.line("");
    }
    let cpu = cpu_name();
    // WASI (wasm32) cannot tell how many cores there are.
    let cores = std::thread::available_parallelism().ok();
    let cores_text = cores.map_or_else(|| "unknown".to_string(), |p| p.get().to_string());
    doc.fact("cpu", Cell::text(&cpu));
    doc.fact(
        "logical_cores",
        cores.map_or(Cell::Missing, |p| Cell::Count(p.get() as u64)),
    );
    doc.line(&format!("- CPU: {cpu} ({cores_text} logical cores)"));
    doc.fact("keys", Cell::Count(n as u64));
    doc.fact("fp_queries", Cell::Count(2 * n as u64));
    doc.line(&format!(
        "- keys: {n} random 64-bit hashes; FP rate over {} other hashes",
        2 * n
    ));
    doc.fact("detected_backend", Cell::text(Backend::detect().name()));
    doc.line(&format!("- detected backend: {:?}", Backend::detect()));
    for b in Backend::ALL {
        if !b.is_available() {
            doc.line(&format!(
                "- backend {b:?} skipped: {}",
                args::unavailable_reason(b)
            ));
        } else if !options.backends.contains(&b) {
            doc.line(&format!(
                "- backend {b:?} skipped: not asked for (--backend)"
            ));
        }
    }
    doc.fact("build_backend", Cell::text(options.build_backend.name()));
    doc.fact("runs_per_time", Cell::Count(options.reps as u64));
}

/// One filter's results, kept for the chart.
struct Measured {
    config: Config,
    queries: Vec<(Backend, QueryTimes)>,
    /// The filter's bytes, and the median microseconds of opening it with
    /// `FilterRef::from_bytes` (checksum verified) and
    /// `from_bytes_unverified`.
    open: (usize, f64, f64),
}

const FILTER_COLUMNS: &[Column] = &[
    ("kind", "kind"),
    ("w", "width"),
    ("bits/key", "bits_per_key"),
    ("FP %", "fp_percent"),
    ("overhead %", "overhead_percent"),
    ("scratch B/key", "scratch_bytes_per_key"),
    ("build", "build_ns_per_key"),
    ("backend", "backend"),
    ("single pos", "single_positive_ns_per_key"),
    ("single neg", "single_negative_ns_per_key"),
    ("single mixed", "single_mixed_ns_per_key"),
    ("batch pos", "batch_positive_ns_per_key"),
    ("batch neg", "batch_negative_ns_per_key"),
    ("batch mixed", "batch_mixed_ns_per_key"),
];

/// The columns a filter has whatever the backend.
const FILTER_OWN_COLUMNS: usize = 7;

/// Builds and queries every configuration: the table "filters".
fn report_filters(doc: &mut Document, options: &Options, sets: &KeySets) -> Vec<Measured> {
    let (n, reps) = (options.keys, options.reps);
    let keys = &sets.keys[..];
    doc.line(&format!(
        "- times: ns per key, median of {reps} runs; query columns: positive / negative / 50-50 mixed"
    ));
    doc.line(&format!(
        "- build: ns per key, back-substitution on {}",
        options.build_backend.name()
    ));
    doc.line("- scratch: working memory Plan::build needs, freed after the build (bytes per key)");
    doc.line("");
    doc.table("filters", FILTER_COLUMNS, FILTER_OWN_COLUMNS);

    let mut measured = Vec::new();
    for &kind in &options.kinds {
        for &width in &options.widths {
            for &millibits in &options.settings {
                let config = Config::new(kind, width, millibits);
                let plan = Plan::new(kind, width, n, millibits)
                    .and_then(|plan| plan.with_backend(options.build_backend))
                    .unwrap_or_else(|e| {
                        die(&format!("cannot plan {} for {n} keys: {e}", config.label()))
                    });
                let mut scratch = vec![0u64; plan.scratch_words()];
                let mut bytes = vec![0u8; plan.filter_bytes()];
                // A Bumped build writes at most `filter_bytes`: keep how many.
                let mut built = Ok(0);
                let build = time_per_key(reps.min(3), n, || {
                    built = built.and(
                        plan.build(keys, &mut scratch, &mut bytes)
                            .map(|v| v.filter_bytes()),
                    );
                });
                let len = built.unwrap_or_else(|e| {
                    die(&format!(
                        "cannot build {} for {n} keys: {e}",
                        config.label()
                    ))
                });
                let view =
                    FilterRef::from_bytes(&bytes[..len]).expect("a filter Plan::build wrote");
                let open_us = |open: fn(&[u8]) -> bool| {
                    time_per_key(reps.max(5), 1, || {
                        assert!(open(black_box(&bytes[..len])));
                    }) / 1000.0
                };
                let open = (
                    len,
                    open_us(|b| FilterRef::from_bytes(b).is_ok()),
                    open_us(|b| FilterRef::from_bytes_unverified(b).is_ok()),
                );
                assert!(keys.iter().all(|&h| view.contains(h)), "false negative");
                let fp = sets.others.iter().filter(|&&h| view.contains(h)).count() as f64
                    / sets.others.len() as f64;
                let bits = view.millibits_per_key() as f64 / 1000.0;
                let overhead = bits / (1.0 / fp).log2() - 1.0;
                let own = [
                    Cell::text(format!("{kind:?}")),
                    Cell::Count(u64::from(width.bits())),
                    Cell::Number(bits, 2),
                    Cell::Number(fp * 100.0, 3),
                    Cell::Number(overhead * 100.0, 1),
                    Cell::Number(plan.scratch_words() as f64 * 8.0 / n as f64, 1),
                    Cell::Number(build, 0),
                ];
                let mut queries = Vec::new();
                for &backend in &options.backends {
                    let v = view.with_backend(backend).expect("available");
                    let t = time_queries(v, &sets.query_sets(), reps);
                    let mut row = own.to_vec();
                    row.push(Cell::text(backend.name()));
                    row.extend(t.single.iter().chain(&t.batch).map(|&x| Cell::Number(x, 1)));
                    doc.row(row);
                    queries.push((backend, t));
                }
                doc.progress(&format!("measured {}", config.label()));
                measured.push(Measured {
                    config,
                    queries,
                    open,
                });
            }
        }
    }
    measured
}

/// The bar chart of `--svg`: mixed-set query times at one setting.
fn query_chart(options: &Options, measured: &[Measured]) -> BarChart {
    let millibits = if options.settings.contains(&7700) {
        7700
    } else {
        options.settings[0]
    };
    let groups = measured
        .iter()
        .filter(|m| m.config.millibits == millibits)
        .map(|m| bar_chart::Group {
            label: format!("{:?} w{}", m.config.kind, m.config.width.bits()),
            rows: m
                .queries
                .iter()
                .map(|(backend, t)| bar_chart::Row {
                    label: if *backend == Backend::detect() {
                        format!("{} (detected)", backend.name())
                    } else {
                        backend.name().to_string()
                    },
                    values: vec![t.single[MIXED], t.batch[MIXED]],
                })
                .collect(),
        })
        .collect();
    BarChart {
        title: format!(
            "ribbon-kernel query time on {}, {} keys",
            cpu_name(),
            thousands(options.keys)
        ),
        subtitle: format!(
            "{} bits/key; shuffled 50/50 members and non-members; median of {} runs",
            args::bits_text(millibits),
            options.reps
        ),
        axis_label: "ns per key (lower is better)".to_string(),
        series: vec![
            bar_chart::Series {
                name: "single key (contains)".to_string(),
                colour: "#e69f00",
            },
            bar_chart::Series {
                name: "batch (contains_batch)".to_string(),
                colour: "#0072b2",
            },
        ],
        groups,
    }
}

/// 1000000 as "1,000,000".
fn thousands(n: usize) -> String {
    let digits = n.to_string();
    let mut text = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            text.push(',');
        }
        text.push(c);
    }
    text
}

const OPEN_COLUMNS: &[Column] = &[
    ("kind", "kind"),
    ("w", "width"),
    ("bits/key", "bits_per_key"),
    ("bytes", "bytes"),
    ("from_bytes us", "verified_us"),
    ("unverified us", "unverified_us"),
    ("checksum GB/s", "checksum_gb_per_s"),
];

/// What opening each filter costs: `from_bytes` (validation and the
/// checksum, one pass over the bytes) against `from_bytes_unverified`
/// (validation alone), and the rate the difference gives: the table
/// "opening".
fn report_opening(doc: &mut Document, options: &Options, measured: &[Measured]) {
    doc.line("");
    doc.line(&format!(
        "Opening a filter: microseconds, median of {} runs; the checksum's rate is the \
         bytes over the difference of the two",
        options.reps.max(5)
    ));
    doc.line("");
    doc.table("opening", OPEN_COLUMNS, 0);
    for m in measured {
        let (bytes, verified, unverified) = m.open;
        let rate = bytes as f64 / ((verified - unverified).max(1e-3) * 1000.0);
        doc.row(vec![
            Cell::text(format!("{:?}", m.config.kind)),
            Cell::Count(u64::from(m.config.width.bits())),
            Cell::text(args::bits_text(m.config.millibits)),
            Cell::Count(bytes as u64),
            Cell::Number(verified, 1),
            Cell::Number(unverified, 1),
            Cell::Number(rate, 1),
        ]);
    }
}

const HASH_COLUMNS: &[Column] = &[
    ("key bytes", "key_bytes"),
    ("hash_key ns/key", "hash_key_ns_per_key"),
    ("hash_keys ns/key", "hash_keys_ns_per_key"),
    ("GB/s", "hash_key_gb_per_s"),
];

/// `hash_key` (one call per key) and `hash_keys` (one batch) over distinct
/// keys of 8, 32 and 256 bytes: the table "key_hashing".
fn report_key_hashing(doc: &mut Document, options: &Options) {
    const KEYS: usize = 1 << 16;
    doc.line("");
    doc.line(&format!(
        "Key hashing (XXH3-64): {KEYS} distinct keys per size, ns per key, median of {} runs",
        options.reps
    ));
    doc.line("");
    doc.table("key_hashing", HASH_COLUMNS, 0);
    let mut state = 0x4a5b_u64;
    for len in [8usize, 32, 256] {
        let keys: Vec<Vec<u8>> = (0..KEYS)
            .map(|_| {
                (0..len.div_ceil(8))
                    .flat_map(|_| splitmix64(&mut state).to_le_bytes())
                    .take(len)
                    .collect()
            })
            .collect();
        let mut out = vec![0u64; KEYS];
        let single = time_per_key(options.reps, KEYS, || {
            let mut acc = 0u64;
            for key in &keys {
                acc ^= hash_key(black_box(key));
            }
            black_box(acc);
        });
        let batch = time_per_key(options.reps, KEYS, || {
            hash_keys(&keys, &mut out).expect("one hash per key");
            black_box(&out);
        });
        doc.row(vec![
            Cell::Count(len as u64),
            Cell::Number(single, 2),
            Cell::Number(batch, 2),
            Cell::Number(len as f64 / single, 2),
        ]);
    }
}

fn main() {
    let line = CommandLine::parse("report", SUMMARY, OPTIONS);
    let (options, format, out) = options(&line);
    let mut doc = Document::new(format, out);
    describe_run(&mut doc, &options);
    let sets = KeySets::new(options.keys);
    let measured = report_filters(&mut doc, &options, &sets);
    report_opening(&mut doc, &options, &measured);
    report_key_hashing(&mut doc, &options);
    if let Err(e) = doc.finish() {
        die(&e);
    }
    if let Some(path) = &options.svg {
        let svg = query_chart(&options, &measured).svg();
        if let Err(e) = std::fs::write(path, svg) {
            die(&format!("cannot write {path}: {e}"));
        }
        eprintln!("wrote {path}");
    }
}
