//! What the examples and the criterion bench let a user choose, and a small
//! hand-written command-line parser for the examples (no dependency).
//!
//! The value parsers (`parse_keys`, `parse_millibits`, `parse_kind`,
//! `parse_width`, `parse_backend`, `parse_list`) are shared with the
//! criterion bench of the workspace member `bench/`
//! (`bench/benches/ribbon.rs`), which reads the same choices from
//! environment variables. Included with `#[path = ...] mod args;` like
//! `tests/common/kit.rs` (by `bench/examples/compare.rs` too), so every
//! user compiles only what it calls.
#![allow(dead_code)]

use ribbon_kernel::{Backend, Kind, Width};

/// Exit status for a command line or value the program does not accept.
pub const EXIT_USAGE: i32 = 2;
/// Exit status for a valid request this machine cannot run (a backend the
/// CPU lacks) or a failure while running it.
pub const EXIT_FAILURE: i32 = 1;

/// One filter configuration: kind, width and payload bits per key (in
/// millibits, as `Plan::new` takes them).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Config {
    pub kind: Kind,
    pub width: Width,
    pub millibits: u32,
}

impl Config {
    pub const fn new(kind: Kind, width: Width, millibits: u32) -> Config {
        Config {
            kind,
            width,
            millibits,
        }
    }

    /// The short name benchmark ids and tables use: `hom64-8.7`,
    /// `std128-7.41`, `smash64-10`, `bump64-8`.
    pub fn label(&self) -> String {
        let kind = match self.kind {
            Kind::Homogeneous => "hom".to_string(),
            Kind::Standard => "std".to_string(),
            Kind::StandardSmash => "smash".to_string(),
            Kind::Bumped => "bump".to_string(),
            // `Kind` is non_exhaustive: a kind added later gets its
            // lowercase name until it is given a short one here.
            other => format!("{other:?}").to_lowercase(),
        };
        format!("{kind}{}-{}", self.width.bits(), bits_text(self.millibits))
    }
}

/// Millibits as bits per key with no trailing zeros: 8700 is "8.7",
/// 10000 is "10".
pub fn bits_text(millibits: u32) -> String {
    let (whole, fraction) = (millibits / 1000, millibits % 1000);
    if fraction == 0 {
        whole.to_string()
    } else {
        let digits = format!("{fraction:03}");
        format!("{whole}.{}", digits.trim_end_matches('0'))
    }
}

/// Which kinds, widths and bits per key the user asked for; `None` keeps
/// the program's own choice for that part.
#[derive(Clone, Debug, Default)]
pub struct Selection {
    pub kinds: Option<Vec<Kind>>,
    pub widths: Option<Vec<Width>>,
    pub millibits: Option<Vec<u32>>,
}

impl Selection {
    pub fn is_empty(&self) -> bool {
        self.kinds.is_none() && self.widths.is_none() && self.millibits.is_none()
    }

    /// `default` with every part the user chose replaced by each of the
    /// chosen values (the product, when several parts are lists).
    pub fn apply(&self, default: Config) -> Vec<Config> {
        let kinds = self.kinds.clone().unwrap_or_else(|| vec![default.kind]);
        let widths = self.widths.clone().unwrap_or_else(|| vec![default.width]);
        let millibits = self
            .millibits
            .clone()
            .unwrap_or_else(|| vec![default.millibits]);
        let mut configs = Vec::new();
        for &kind in &kinds {
            for &width in &widths {
                for &millibits in &millibits {
                    configs.push(Config::new(kind, width, millibits));
                }
            }
        }
        configs
    }

    /// [`Selection::apply`] to each default, without repeats, in order.
    pub fn apply_all(&self, defaults: &[Config]) -> Vec<Config> {
        let mut configs: Vec<Config> = Vec::new();
        for &default in defaults {
            for config in self.apply(default) {
                if !configs.contains(&config) {
                    configs.push(config);
                }
            }
        }
        configs
    }
}

/// A comma-separated list, each item parsed by `parse_one`.
pub fn parse_list<T>(
    text: &str,
    parse_one: impl Fn(&str) -> Result<T, String>,
) -> Result<Vec<T>, String> {
    let items: Vec<&str> = text.split(',').map(str::trim).collect();
    if items.iter().any(|item| item.is_empty()) {
        return Err(format!("empty item in the list {text:?}"));
    }
    items.into_iter().map(parse_one).collect()
}

/// A key count: a whole number of 1 or more; `_` may group digits.
pub fn parse_keys(text: &str) -> Result<usize, String> {
    let digits: String = text.chars().filter(|&c| c != '_').collect();
    match digits.parse::<usize>() {
        Ok(0) => Err("the key count must be at least 1".to_string()),
        Ok(n) => Ok(n),
        Err(_) => Err(format!(
            "{text:?} is not a key count (a whole number such as 1000000)"
        )),
    }
}

/// Bits per key as millibits. A decimal (`7.7`, `8`, at most three
/// decimals) is bits per key; a whole number of 1000 or more is already
/// millibits (`10000` is 10 bits per key), as `Plan::new` takes them.
pub fn parse_millibits(text: &str) -> Result<u32, String> {
    let bad = || {
        format!(
            "{text:?} is not a bits-per-key value (bits such as 7.7, at most three \
             decimals, or millibits of 1000 or more such as 7700)"
        )
    };
    let (whole, fraction) = text.split_once('.').unwrap_or((text, ""));
    let digits_only = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    if whole.is_empty() || !digits_only(whole) || !digits_only(fraction) || fraction.len() > 3 {
        return Err(bad());
    }
    let whole: u32 = whole.parse().map_err(|_| bad())?;
    let millibits = if text.contains('.') || whole < 1000 {
        let fraction: u32 = format!("{fraction:0<3}").parse().map_err(|_| bad())?;
        whole
            .checked_mul(1000)
            .and_then(|m| m.checked_add(fraction))
            .ok_or_else(bad)?
    } else {
        whole
    };
    if millibits == 0 || millibits > ribbon_kernel::MAX_MILLIBITS_PER_KEY {
        return Err(format!(
            "{text:?} is out of range: bits per key must be above 0 and at most {}",
            bits_text(ribbon_kernel::MAX_MILLIBITS_PER_KEY)
        ));
    }
    Ok(millibits)
}

pub fn parse_kind(text: &str) -> Result<Kind, String> {
    match text {
        "homogeneous" => Ok(Kind::Homogeneous),
        "standard" => Ok(Kind::Standard),
        "smash" => Ok(Kind::StandardSmash),
        "bumped" => Ok(Kind::Bumped),
        _ => Err(format!(
            "unknown kind {text:?} (expected homogeneous, standard, smash or bumped)"
        )),
    }
}

pub fn parse_width(text: &str) -> Result<Width, String> {
    match text {
        "64" => Ok(Width::W64),
        "128" => Ok(Width::W128),
        _ => Err(format!("unknown width {text:?} (expected 64 or 128)")),
    }
}

pub fn parse_backend(text: &str) -> Result<Backend, String> {
    Backend::ALL
        .into_iter()
        .find(|b| b.name() == text)
        .ok_or_else(|| {
            let names: Vec<&str> = Backend::ALL.iter().map(|b| b.name()).collect();
            format!(
                "unknown backend {text:?} (expected one of {})",
                names.join(", ")
            )
        })
}

/// Why `backend` does not run here, for a backend that
/// `Backend::is_available` refuses.
pub fn unavailable_reason(backend: Backend) -> String {
    match backend {
        Backend::Avx2 | Backend::Avx512 => x86_reason(backend),
        Backend::Neon if cfg!(all(target_arch = "aarch64", target_endian = "little")) => {
            "this aarch64 build was compiled without NEON".to_string()
        }
        Backend::Neon => format!(
            "NEON kernels exist only in little-endian aarch64 builds; this build is for {}",
            std::env::consts::ARCH
        ),
        Backend::Scalar | Backend::Portable => "ribbon-kernel refused it".to_string(),
        // `Backend` is non_exhaustive: a backend added later says this
        // until it is given an arm of its own.
        _ => format!(
            "the {} backend is not compiled into this build or not supported by this CPU",
            backend.name()
        ),
    }
}

#[cfg(target_arch = "x86_64")]
fn x86_reason(backend: Backend) -> String {
    let needed: &[(&str, bool)] = if backend == Backend::Avx2 {
        &[("avx2", std::is_x86_feature_detected!("avx2"))]
    } else {
        &[
            ("avx512f", std::is_x86_feature_detected!("avx512f")),
            (
                "avx512vpopcntdq",
                std::is_x86_feature_detected!("avx512vpopcntdq"),
            ),
        ]
    };
    let missing: Vec<&str> = needed
        .iter()
        .filter(|(_, present)| !present)
        .map(|(name, _)| *name)
        .collect();
    if missing.is_empty() {
        // The CPU has the instructions: the build left the kernels out
        // (AVX-512 needs Rust 1.89), or the OS does not save the registers.
        "this CPU has the instructions, but this build has no kernels for them \
         or the OS does not enable their registers"
            .to_string()
    } else {
        format!("this CPU lacks {}", missing.join(" and "))
    }
}

#[cfg(not(target_arch = "x86_64"))]
fn x86_reason(backend: Backend) -> String {
    format!(
        "{} kernels exist only in x86_64 builds; this build is for {}",
        backend.name(),
        std::env::consts::ARCH
    )
}

/// One option a program accepts: `--name`, or `--name VALUE` when `value`
/// names the value.
pub struct OptionSpec {
    pub name: &'static str,
    pub value: Option<&'static str>,
    pub help: &'static str,
}

/// `--keys N`, which the examples that build one key set take.
pub const KEYS_OPTION: OptionSpec = OptionSpec {
    name: "--keys",
    value: Some("N"),
    help: "key count (default 1000000)",
};

/// The options both examples take after their own: the backends and the
/// output format.
pub const SHARED_OPTIONS: &[OptionSpec] = &[
    OptionSpec {
        name: "--backend",
        value: Some("NAME[,NAME...]"),
        help: "scalar, avx2, avx512, neon, portable (default: all this CPU has)",
    },
    OptionSpec {
        name: "--csv",
        value: None,
        help: "write the tables as CSV (prose to stderr)",
    },
    OptionSpec {
        name: "--json",
        value: None,
        help: "write the tables as JSON (prose to stderr)",
    },
    OptionSpec {
        name: "--out",
        value: Some("PATH"),
        help: "write the report, CSV or JSON to PATH instead of stdout",
    },
];

/// The options given, in order: each one's name and value.
type Given = Vec<(&'static str, Option<String>)>;

/// A parsed command line.
pub struct CommandLine {
    usage: String,
    given: Given,
}

impl CommandLine {
    /// Parses the process's arguments against `own` and
    /// [`SHARED_OPTIONS`]. `--help` prints the usage and exits 0; anything
    /// unknown prints it and exits [`EXIT_USAGE`].
    pub fn parse(program: &str, summary: &str, own: &'static [OptionSpec]) -> CommandLine {
        let specs: Vec<&'static OptionSpec> = own.iter().chain(SHARED_OPTIONS).collect();
        let specs = &specs[..];
        let usage = usage(program, summary, specs);
        let args: Vec<String> = std::env::args().skip(1).collect();
        match parse_args(&args, specs) {
            Ok(Some(given)) => CommandLine { usage, given },
            Ok(None) => {
                print!("{usage}");
                std::process::exit(0);
            }
            Err(message) => usage_error(&usage, &message),
        }
    }

    pub fn flag(&self, name: &str) -> bool {
        self.given.iter().any(|(given, _)| *given == name)
    }

    /// The value of the last `name` given, parsed; exits with the usage on
    /// a value `parse` refuses.
    pub fn value<T>(&self, name: &str, parse: impl Fn(&str) -> Result<T, String>) -> Option<T> {
        let (_, text) = self.given.iter().rev().find(|(given, _)| *given == name)?;
        let text = text.as_deref().unwrap_or_default();
        Some(parse(text).unwrap_or_else(|message| self.fail(&format!("{name}: {message}"))))
    }

    /// The comma-separated list of the last `name` given, each item parsed.
    pub fn list<T>(&self, name: &str, parse: impl Fn(&str) -> Result<T, String>) -> Option<Vec<T>> {
        self.value(name, |text| parse_list(text, &parse))
    }

    /// The backends `--backend` names, or every backend this CPU has when
    /// it is not given; `Err` says why a named one is unavailable.
    pub fn backends(&self) -> Result<Vec<Backend>, String> {
        let Some(named) = self.list("--backend", parse_backend) else {
            return Ok(Backend::ALL
                .into_iter()
                .filter(|b| b.is_available())
                .collect());
        };
        match named.iter().find(|b| !b.is_available()) {
            Some(&missing) => Err(format!(
                "backend {} is not available: {}",
                missing.name(),
                unavailable_reason(missing)
            )),
            None => Ok(named),
        }
    }

    /// Prints `message` and the usage, and exits with [`EXIT_USAGE`].
    pub fn fail(&self, message: &str) -> ! {
        usage_error(&self.usage, message)
    }
}

fn usage_error(usage: &str, message: &str) -> ! {
    eprintln!("error: {message}\n");
    eprint!("{usage}");
    std::process::exit(EXIT_USAGE)
}

fn usage(program: &str, summary: &str, specs: &[&OptionSpec]) -> String {
    // This file is included by the package whose example it is part of:
    // the core crate's examples run as they are, the workspace member's
    // (`bench/`) with `-p`.
    let package = match env!("CARGO_PKG_NAME") {
        "ribbon-kernel" => String::new(),
        other => format!("-p {other} "),
    };
    let mut text = format!(
        "{summary}\n\nUsage: cargo run --release {package}--example {program} -- [OPTIONS]\n\nOptions:\n"
    );
    let shown = |spec: &OptionSpec| match spec.value {
        Some(value) => format!("{} {value}", spec.name),
        None => spec.name.to_string(),
    };
    let column = specs
        .iter()
        .map(|s| shown(s).len())
        .max()
        .unwrap_or(0)
        .max(6);
    for spec in specs {
        text += &format!("  {:column$}  {}\n", shown(spec), spec.help);
    }
    text += &format!("  {:column$}  print this help\n", "--help");
    text
}

/// The options in `args`, or `None` for `--help`.
fn parse_args(args: &[String], specs: &[&'static OptionSpec]) -> Result<Option<Given>, String> {
    let mut given = Vec::new();
    let mut rest = args.iter();
    while let Some(arg) = rest.next() {
        if arg == "--help" || arg == "-h" {
            return Ok(None);
        }
        let (name, inline) = match arg.split_once('=') {
            Some((name, value)) if name.starts_with("--") => (name, Some(value.to_string())),
            _ => (arg.as_str(), None),
        };
        let spec = specs
            .iter()
            .find(|s| s.name == name)
            .ok_or_else(|| format!("unknown option {arg:?}"))?;
        let value = match (spec.value, inline) {
            (None, None) => None,
            (None, Some(_)) => return Err(format!("{name} takes no value")),
            (Some(_), Some(value)) => Some(value),
            (Some(what), None) => Some(
                rest.next()
                    .ok_or_else(|| format!("{name} needs a value ({what})"))?
                    .clone(),
            ),
        };
        given.push((spec.name, value));
    }
    Ok(Some(given))
}
