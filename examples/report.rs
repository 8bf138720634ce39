//! The main job: builds Ribbon filters for random 64-bit key hashes in every
//! kind (Homogeneous, Standard, Standard with smash, Bumped) and width at a
//! few bits-per-key settings and prints, per available backend, space, FP
//! rate, and build and query times.
//!
//! `cargo run --release --example report [-- OPTIONS]`
//!
//! With no options: 10^6 keys, every kind and width at 7.7 bits per key,
//! every backend this CPU has, as a markdown report on stdout (`--bits
//! 4,7.7,12` adds a small and a large setting, in about three times the
//! time).
//! Every option is checked, and every configuration planned, before
//! anything is printed: a bad value fails with the usage and exit status 2
//! and no partial report. Options (`--help` lists them):
//!
//! * `--keys N`: key count (10^6; 10^5 with `--quick`).
//! * `--bits B[,B...]`: bits per key, a decimal such as `7.7`; a whole
//!   number of 1000 or more is millibits (`10000` is 10 bits per key).
//! * `--kind K[,K...]` (`homogeneous`, `standard`, `smash`, `bumped`),
//!   `--width W[,W...]` (`64`, `128`): only these.
//! * `--backend NAME[,NAME...]` (`scalar`, `avx2`, `avx512`, `neon`,
//!   `portable`): only these; builds use the first. One this CPU or build
//!   lacks is an error (exit status 1) that says why.
//! * `--quick`: 10^5 keys and 3 runs per time.
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
//!   bits per key (or the first `--bits` value when 7.7 is not measured),
//!   each bar with a whisker from the fastest to the slowest run.
//! * `--charts DIR`: all three charts as SVG files in `DIR`:
//!   `query-ns-per-key.svg` (as `--svg`), `build-ns-per-key.svg` (build
//!   time per kind, width and bits per key, with the runs' range) and
//!   `space-overhead.svg` (the overhead column per kind, width and bits
//!   per key). The charts under `docs/` are `--charts docs`.
//!
//! The table of filters gives, per filter:
//!
//! * `FP %`: the false-positive rate over uniformly random non-member
//!   hashes, exact where the kind has an exact rate: for Standard and
//!   Standard with smash, the rate of the columns
//!   (`FilterRef::column_fp_ppt`); for Homogeneous, computed from the
//!   filter's bytes (the rank of every start's column windows,
//!   `tests/common/exact_fp.rs`); for Bumped, the rate of its first
//!   layer's columns (every layer is a Standard Ribbon of the same column
//!   counts; later layers, which see only the bumped few percent of
//!   queries, round their upper blocks on their own). `FP from` says which.
//! * `sampled FP %`: the share of `2 n` other random hashes the filter
//!   accepts, a check of the above with sampling noise.
//! * `overhead %`: space over the information-theoretic minimum for the
//!   `FP %` rate, `bits/key / log2(1/FP) - 1`, where `bits/key` is the
//!   payload (header excluded) per key. From an exact rate it cannot go
//!   negative from sampling.
//! * times in ns per key as the median of the runs and, in parentheses,
//!   the fastest and slowest run (CSV and JSON: `<column>`, `<column>_min`
//!   and `<column>_max`).
//!
//! The CSV and JSON carry the crate version, the git commit (`git
//! rev-parse` at run time; `-dirty` when the tree differs) and the
//! compiler (`rustc --version` at build time, from `build.rs`) as facts.
//!
//! After the filters, what opening each costs (`FilterRef::from_bytes`,
//! which verifies the checksum, against `from_bytes_unverified`), and a
//! table of key-hashing speed: `hash_key` and `hash_keys` on 8-, 32- and
//! 256-byte keys.
//!
//! Unknown options print the usage and exit with status 2. Times are
//! medians of repeated runs (ns per key) with their range; this machine
//! is shared and noisy, so compare rows measured in the same run. Each section of the
//! report is one function that adds its facts and tables to the
//! `Document`.

use std::hint::black_box;
use std::time::Instant;

use ribbon_kernel::{Backend, FilterRef, Kind, Plan, Width, hash_key, hash_keys};

#[path = "../tests/common/kit.rs"]
mod kit;
use kit::splitmix64;

#[path = "../tests/common/exact_fp.rs"]
mod exact_fp;

#[path = "common/args.rs"]
mod args;
use args::{CommandLine, Config, OptionSpec};

#[path = "common/document.rs"]
mod document;
use document::{Cell, Column, Document, Format, Spread};

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
        help: "bits per key such as 7.7; 1000 or more is millibits (default 7.7; try 4,7.7,12)",
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
        help: "100000 keys, 3 runs per time",
    },
    OptionSpec {
        name: "--svg",
        value: Some("PATH"),
        help: "also draw query ns/key (mixed set) per backend as an SVG bar chart",
    },
    OptionSpec {
        name: "--charts",
        value: Some("DIR"),
        help: "draw query time, build time and space overhead as SVG charts in DIR (docs)",
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
    /// The folder of `--charts`.
    charts: Option<String>,
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
        // One setting by default: the sweep over every kind, width and
        // backend is what takes the time (about 25 s of the README's
        // "about a minute" on two cores; each further setting as much).
        settings: line
            .list("--bits", args::parse_millibits)
            .unwrap_or(vec![7700]),
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
        svg: line.value("--svg", parse_file_path),
        charts: line.value("--charts", parse_record_dir),
        record: record_dir.as_ref().map(|_| record_header()),
    };
    // Every configuration must plan before anything is printed: a
    // setting a kind cannot take (or a key count it cannot hold) fails
    // now, not after minutes of other measurements.
    for &kind in &options.kinds {
        for &width in &options.widths {
            for &millibits in &options.settings {
                let config = Config::new(kind, width, millibits);
                if let Err(e) = Plan::new(kind, width, options.keys, millibits)
                    .and_then(|plan| plan.with_backend(options.build_backend))
                {
                    line.fail(&format!(
                        "cannot plan {} for {} keys: {e}",
                        config.label(),
                        options.keys
                    ));
                }
            }
        }
    }
    let out = match &record_dir {
        Some(dir) => Some(record_path(dir)),
        None => line.value("--out", parse_file_path),
    };
    if let Some(dir) = &options.charts
        && let Err(e) = std::fs::create_dir_all(dir)
    {
        die(&format!("cannot make the folder {dir}: {e}"));
    }
    (options, format, out)
}

/// `--out PATH`, `--svg PATH`: a file in a folder that exists, checked
/// before the run rather than when the results are written.
fn parse_file_path(text: &str) -> Result<String, String> {
    let path = std::path::Path::new(text);
    if text.is_empty() || text.ends_with('/') || path.is_dir() {
        return Err(format!("{text:?} is not a file name"));
    }
    match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() && !parent.is_dir() => {
            Err(format!("the folder {} does not exist", parent.display()))
        }
        _ => Ok(text.to_string()),
    }
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

/// Ns per key of `reps` runs of `f` over `keys` keys: median and range.
fn time_per_key(reps: usize, keys: usize, mut f: impl FnMut()) -> Spread {
    Spread::of(
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

/// Ns per key over the positive, negative and mixed sets.
struct QueryTimes {
    single: [Spread; 3],
    batch: [Spread; 3],
}

const MIXED: usize = 2;

fn time_queries(filter: FilterRef<'_>, sets: &[&[u64]; 3], reps: usize) -> QueryTimes {
    let mut out = vec![false; sets[0].len()];
    let nothing = Spread::of(Vec::new());
    let mut single = [nothing; 3];
    let mut batch = [nothing; 3];
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
    let version = env!("CARGO_PKG_VERSION");
    let commit = git_commit();
    let rustc = option_env!("RIBBON_RUSTC_VERSION");
    doc.fact("crate_version", Cell::text(version));
    doc.fact("commit", commit.as_ref().map_or(Cell::Missing, Cell::text));
    doc.fact("rustc", rustc.map_or(Cell::Missing, Cell::text));
    doc.line(&format!(
        "- ribbon-kernel {version}, commit {}; {}{}",
        commit
            .as_deref()
            .unwrap_or("unknown (no git, or not a checkout)"),
        rustc.unwrap_or("rustc version unknown"),
        if cfg!(debug_assertions) {
            "; a debug build: times are not representative (use --release)"
        } else {
            ""
        }
    ));
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

/// One filter's results, kept for the charts and the opening table.
struct Measured {
    config: Config,
    build: Spread,
    /// Space over the minimum for the filter's FP rate, in percent.
    overhead_percent: f64,
    queries: Vec<(Backend, QueryTimes)>,
    /// The filter's bytes, and the median microseconds of opening it with
    /// `FilterRef::from_bytes` (checksum verified) and
    /// `from_bytes_unverified`.
    open: (usize, Spread, Spread),
}

const FILTER_COLUMNS: &[Column] = &[
    ("kind", "kind"),
    ("w", "width"),
    ("bits/key", "bits_per_key"),
    ("FP %", "fp_percent"),
    ("FP from", "fp_source"),
    ("sampled FP %", "sampled_fp_percent"),
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
const FILTER_OWN_COLUMNS: usize = 9;

/// A filter's FP rate over uniformly random non-members, exact where the
/// kind has an exact rate, and where it comes from (see the module's
/// documentation).
fn fp_rate(view: FilterRef<'_>) -> (f64, &'static str) {
    let columns = view.column_fp_ppt() as f64 / 1e12;
    match view.kind() {
        Kind::Standard | Kind::StandardSmash => (columns, "columns (exact)"),
        Kind::Homogeneous => (exact_fp::exact_fp(view), "bytes (exact)"),
        Kind::Bumped => (columns, "columns of layer 1"),
        // `Kind` is non_exhaustive: a kind added later is sampled until
        // it is given an arm here.
        _ => (f64::NAN, "sampled"),
    }
}

/// Builds and queries every configuration: the table "filters".
fn report_filters(doc: &mut Document, options: &Options, sets: &KeySets) -> Vec<Measured> {
    let (n, reps) = (options.keys, options.reps);
    let keys = &sets.keys[..];
    doc.line(&format!(
        "- times: ns per key, median of {reps} runs (builds: {}) and in parentheses the fastest \
         and slowest run; query columns: positive / negative / 50-50 mixed",
        reps.min(3)
    ));
    doc.line(&format!(
        "- build: ns per key, back-substitution on {}",
        options.build_backend.name()
    ));
    doc.line("- bits/key: the filter's bytes after its 48-byte header, in bits per key");
    doc.line(
        "- FP %: the rate over random non-members, exact where the kind has an exact rate \
         (FP from: Standard and smash, the columns' rate; Homogeneous, computed from the \
         filter's bytes; Bumped, its first layer's columns, which every layer shares up to \
         rounding)",
    );
    doc.line(&format!(
        "- sampled FP %: the share of {} other random hashes the filter accepts (a check, with \
         sampling noise)",
        sets.others.len()
    ));
    doc.line(
        "- overhead %: space over the information-theoretic minimum for the FP % rate, \
         bits/key / log2(1/FP) - 1",
    );
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
                    })
                    .scaled(1e-3)
                };
                let open = (
                    len,
                    open_us(|b| FilterRef::from_bytes(b).is_ok()),
                    open_us(|b| FilterRef::from_bytes_unverified(b).is_ok()),
                );
                assert!(keys.iter().all(|&h| view.contains(h)), "false negative");
                let sampled = sets.others.iter().filter(|&&h| view.contains(h)).count() as f64
                    / sets.others.len() as f64;
                let (exact, source) = fp_rate(view);
                let fp = if exact.is_nan() { sampled } else { exact };
                let bits = view.millibits_per_key() as f64 / 1000.0;
                let overhead = bits / (1.0 / fp).log2() - 1.0;
                let own = [
                    Cell::text(format!("{kind:?}")),
                    Cell::Count(u64::from(width.bits())),
                    Cell::Number(bits, 2),
                    Cell::Number(fp * 100.0, 3),
                    Cell::text(source),
                    Cell::Number(sampled * 100.0, 3),
                    Cell::Number(overhead * 100.0, 2),
                    Cell::Number(plan.scratch_words() as f64 * 8.0 / n as f64, 1),
                    Cell::Spread(build, 0),
                ];
                let mut queries = Vec::new();
                for &backend in &options.backends {
                    let v = view.with_backend(backend).expect("available");
                    let t = time_queries(v, &sets.query_sets(), reps);
                    let mut row = own.to_vec();
                    row.push(Cell::text(backend.name()));
                    row.extend(t.single.iter().chain(&t.batch).map(|&x| Cell::Spread(x, 1)));
                    doc.row(row);
                    queries.push((backend, t));
                }
                doc.progress(&format!("measured {}", config.label()));
                measured.push(Measured {
                    config,
                    build,
                    overhead_percent: overhead * 100.0,
                    queries,
                    open,
                });
            }
        }
    }
    measured
}

/// The setting the query chart shows: 7.7 bits per key, or the first.
fn chart_setting(options: &Options) -> u32 {
    if options.settings.contains(&7700) {
        7700
    } else {
        options.settings[0]
    }
}

/// A spread's range for a chart's whisker.
fn range(s: Spread) -> Option<(f64, f64)> {
    Some((s.min, s.max))
}

/// The bar chart of `--svg`: mixed-set query times at one setting.
fn query_chart(options: &Options, measured: &[Measured]) -> BarChart {
    let millibits = chart_setting(options);
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
                    values: vec![t.single[MIXED].median, t.batch[MIXED].median],
                    ranges: vec![range(t.single[MIXED]), range(t.batch[MIXED])],
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
            "{} bits/key; shuffled 50/50 members and non-members; median of {} runs, \
             whiskers from the fastest to the slowest",
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
        decimals: 1,
    }
}

/// Groups per kind, rows per width, one series per bits-per-key setting:
/// the layout of the build and space charts.
fn setting_chart(
    options: &Options,
    measured: &[Measured],
    value: impl Fn(&Measured) -> (f64, Option<(f64, f64)>),
) -> (Vec<bar_chart::Series>, Vec<bar_chart::Group>) {
    let series = options
        .settings
        .iter()
        .enumerate()
        .map(|(i, &millibits)| bar_chart::Series {
            name: format!("{} bits/key", args::bits_text(millibits)),
            colour: bar_chart::PALETTE[i % bar_chart::PALETTE.len()],
        })
        .collect();
    let mut groups = Vec::new();
    for &kind in &options.kinds {
        let rows = options
            .widths
            .iter()
            .map(|&width| {
                let (values, ranges) = options
                    .settings
                    .iter()
                    .map(|&millibits| {
                        measured
                            .iter()
                            .find(|m| m.config == Config::new(kind, width, millibits))
                            .map_or((f64::NAN, None), &value)
                    })
                    .unzip();
                bar_chart::Row {
                    label: format!("w{}", width.bits()),
                    values,
                    ranges,
                }
            })
            .collect();
        groups.push(bar_chart::Group {
            label: format!("{kind:?}"),
            rows,
        });
    }
    (series, groups)
}

/// The build chart of `--charts`: ns per key of `Plan::build`.
fn build_chart(options: &Options, measured: &[Measured]) -> BarChart {
    let (series, groups) = setting_chart(options, measured, |m| (m.build.median, range(m.build)));
    BarChart {
        title: format!(
            "ribbon-kernel build time on {}, {} keys",
            cpu_name(),
            thousands(options.keys)
        ),
        subtitle: format!(
            "Plan::build into caller buffers, back-substitution on {}; median of {} runs, \
             whiskers from the fastest to the slowest",
            options.build_backend.name(),
            options.reps.min(3)
        ),
        axis_label: "ns per key (lower is better)".to_string(),
        series,
        groups,
        decimals: 0,
    }
}

/// The space chart of `--charts`: the overhead column.
fn space_chart(options: &Options, measured: &[Measured]) -> BarChart {
    let (series, groups) = setting_chart(options, measured, |m| (m.overhead_percent, None));
    BarChart {
        title: format!(
            "ribbon-kernel space over the minimum, {} keys",
            thousands(options.keys)
        ),
        subtitle: "bits/key / log2(1/FP) - 1, with the exact FP rate (Bumped: its first \
                   layer's columns)"
            .to_string(),
        axis_label: "overhead % (lower is better)".to_string(),
        series,
        groups,
        decimals: 2,
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
        "Opening a filter: microseconds, median of {} runs (fastest-slowest); the checksum's \
         rate is the bytes over the difference of the two medians",
        options.reps.max(5)
    ));
    doc.line("");
    doc.table("opening", OPEN_COLUMNS, 0);
    for m in measured {
        let (bytes, verified, unverified) = m.open;
        let rate = bytes as f64 / ((verified.median - unverified.median).max(1e-3) * 1000.0);
        doc.row(vec![
            Cell::text(format!("{:?}", m.config.kind)),
            Cell::Count(u64::from(m.config.width.bits())),
            Cell::text(args::bits_text(m.config.millibits)),
            Cell::Count(bytes as u64),
            Cell::Spread(verified, 1),
            Cell::Spread(unverified, 1),
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
        "Key hashing (XXH3-64): {KEYS} distinct keys per size, ns per key, median of {} runs \
         (fastest-slowest); GB/s from the median",
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
            Cell::Spread(single, 2),
            Cell::Spread(batch, 2),
            Cell::Number(len as f64 / single.median, 2),
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
    let write = |path: &str, chart: BarChart| {
        if let Err(e) = std::fs::write(path, chart.svg()) {
            die(&format!("cannot write {path}: {e}"));
        }
        eprintln!("wrote {path}");
    };
    if let Some(path) = &options.svg {
        write(path, query_chart(&options, &measured));
    }
    if let Some(dir) = &options.charts {
        let at = |name: &str| std::path::Path::new(dir).join(name).display().to_string();
        write(
            &at("query-ns-per-key.svg"),
            query_chart(&options, &measured),
        );
        write(
            &at("build-ns-per-key.svg"),
            build_chart(&options, &measured),
        );
        write(&at("space-overhead.svg"), space_chart(&options, &measured));
    }
}
