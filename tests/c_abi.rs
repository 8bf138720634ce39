//! The C ABI end to end: build `libribbon_kernel.a` as the Makefile does
//! (cargo's archive, relinked by `tools/localize-symbols.sh` so that only the
//! `ribbon_*` functions are global), compile `tests/c/ribbon_test.c` against
//! `include/ribbon_kernel.h` as C99, C11 and C++ with `-Wall -Wextra -Werror
//! -pedantic`, link with `--gc-sections`, run it, and inspect the binary, the
//! archive and the header (its names, its macros' size and warnings).
//!
//! Needs `cc`, `c++`, `nm`, `readelf`, `ar` and `objcopy` on the PATH (they
//! are on every machine CI uses; `.ci/run` installs them if missing).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use ribbon_kernel::{Backend, Error, Kind};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn work_dir() -> PathBuf {
    root().join("target").join("c-abi")
}

fn run(cmd: &mut Command) -> String {
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e}"));
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{cmd:?} failed\nstdout:\n{stdout}\nstderr:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

/// The static library, built once per test run with the command of
/// docs/c-guide.md ("Building and linking").
fn static_lib() -> &'static Path {
    static LIB: OnceLock<PathBuf> = OnceLock::new();
    LIB.get_or_init(|| {
        run(Command::new(env!("CARGO"))
            .current_dir(root())
            .env("CARGO_TARGET_DIR", work_dir())
            .args([
                "rustc",
                "--release",
                "--lib",
                "--no-default-features",
                "--features",
                "staticlib",
                "--crate-type",
                "staticlib",
            ]));
        work_dir().join("release").join("libribbon_kernel.a")
    })
}

/// The static library as `make` installs it: relinked by
/// `tools/localize-symbols.sh` so that only the `ribbon_*` functions are
/// global.
fn localized_lib() -> &'static Path {
    static LIB: OnceLock<PathBuf> = OnceLock::new();
    LIB.get_or_init(|| {
        let out = work_dir().join("localized").join("libribbon_kernel.a");
        run(Command::new("sh")
            .arg(root().join("tools").join("localize-symbols.sh"))
            .arg(static_lib())
            .arg(&out));
        out
    })
}

/// The functions the header declares: `ribbon_*` names a `(` follows on
/// lines outside comments and macros.
fn declared_functions(header: &str) -> BTreeSet<String> {
    header
        .lines()
        .map(str::trim_start)
        .filter(|l| !(l.starts_with('*') || l.starts_with("/*") || l.starts_with('#')))
        .flat_map(called_names)
        .collect()
}

fn header() -> String {
    std::fs::read_to_string(root().join("include").join("ribbon_kernel.h")).unwrap()
}

/// Compiles and links the C test with `compiler` and `std` against the
/// installed form of the library, returns the binary.
fn build_c_test(compiler: &str, lang: &[&str], name: &str) -> PathBuf {
    let binary = work_dir().join(name);
    let include = root().join("include");
    let source = root().join("tests").join("c").join("ribbon_test.c");
    run(Command::new(compiler)
        .args(lang)
        .args(["-Wall", "-Wextra", "-Werror", "-pedantic", "-O2"])
        .args(["-ffunction-sections", "-fdata-sections"])
        .arg("-I")
        .arg(&include)
        .arg(&source)
        // `-x none`: the archive is an input file, whatever `lang` said.
        .args(["-x", "none"])
        .arg(localized_lib())
        .arg("-Wl,--gc-sections")
        .arg("-o")
        .arg(&binary));
    binary
}

#[test]
#[cfg_attr(
    any(miri, not(ribbon_host_build)),
    ignore = "drives host cargo, cc and nm"
)]
fn c_program_passes_as_c99() {
    let binary = build_c_test("cc", &["-std=c99"], "ribbon_test_c99");
    let out = run(&mut Command::new(&binary));
    println!("{out}");
    assert!(out.contains("all C checks passed"));
}

#[test]
#[cfg_attr(
    any(miri, not(ribbon_host_build)),
    ignore = "drives host cargo, cc and nm"
)]
fn c_program_passes_as_c11_and_cpp() {
    let c11 = build_c_test("cc", &["-std=c11"], "ribbon_test_c11");
    assert!(run(&mut Command::new(&c11)).contains("all C checks passed"));
    let cpp = build_c_test("c++", &["-x", "c++", "-std=c++11"], "ribbon_test_cpp");
    assert!(run(&mut Command::new(&cpp)).contains("all C checks passed"));
}

#[test]
#[cfg_attr(
    any(miri, not(ribbon_host_build)),
    ignore = "drives host cargo, cc and nm"
)]
fn linked_binary_has_no_panic_machinery() {
    let binary = build_c_test("cc", &["-std=c99"], "ribbon_test_nm");
    let symbols = run(Command::new("nm").arg("-C").arg(&binary));
    let panicky: Vec<&str> = symbols
        .lines()
        .filter(|l| {
            let l = l.to_ascii_lowercase();
            l.contains("panic") || l.contains("rust_begin_unwind")
        })
        .collect();
    assert!(
        panicky.is_empty(),
        "panic machinery linked in:\n{}",
        panicky.join("\n")
    );
    assert!(symbols.contains("ribbon_contains"));
}

/// The global symbols an archive defines and those it leaves undefined.
fn archive_symbols(archive: &Path) -> (BTreeSet<String>, BTreeSet<String>) {
    // readelf rather than nm: binutils' nm trips over the LLVM bitcode that
    // Rust's precompiled objects carry next to their machine code.
    let listing = run(Command::new("readelf").arg("-sW").arg(archive));
    let mut defined = BTreeSet::new();
    let mut undefined = BTreeSet::new();
    for line in listing.lines() {
        // Num: Value Size Type Bind Vis Ndx Name
        let fields: Vec<&str> = line.split_whitespace().collect();
        if fields.len() < 8 || !fields[0].ends_with(':') || fields[0] == "Num:" {
            continue;
        }
        let (bind, ndx, name) = (fields[4], fields[6], fields[7]);
        if bind == "LOCAL" {
            continue;
        }
        if ndx == "UND" {
            undefined.insert(name.to_string());
        } else {
            defined.insert(name.to_string());
        }
    }
    (defined, undefined)
}

#[test]
#[cfg_attr(
    any(miri, not(ribbon_host_build)),
    ignore = "drives host cargo, cc and nm"
)]
fn archive_needs_only_mem_functions() {
    let allowed = ["memcpy", "memmove", "memset", "memcmp", "bcmp"];
    for archive in [static_lib(), localized_lib()] {
        let (defined, undefined) = archive_symbols(archive);
        let needed: Vec<&String> = undefined
            .iter()
            .filter(|s| !defined.contains(*s) && !allowed.contains(&s.as_str()))
            .collect();
        assert!(
            needed.is_empty(),
            "{archive:?} needs symbols beyond mem*: {needed:?}"
        );
    }
}

/// Issue 40: cargo's archive defines Rust's runtime symbols
/// (`rust_begin_unwind`, `rust_eh_personality`, core's functions) as
/// globals, so it clashes with any other Rust static library in one C
/// program; the archive `make` installs defines the header's functions and
/// nothing else (`tests/c/packaging.sh` links it beside another Rust
/// library).
#[test]
#[cfg_attr(
    any(miri, not(ribbon_host_build)),
    ignore = "drives host cargo, cc and nm"
)]
fn installed_archive_defines_only_the_c_api() {
    let (raw, _) = archive_symbols(static_lib());
    assert!(
        raw.iter().any(|s| s.ends_with("rust_begin_unwind")),
        "cargo's archive no longer exports rust_begin_unwind: the relinking may be moot"
    );
    let (defined, _) = archive_symbols(localized_lib());
    let declared = declared_functions(&header());
    assert_eq!(
        defined.iter().collect::<Vec<_>>(),
        declared.iter().collect::<Vec<_>>(),
        "the installed archive's global symbols are not the header's functions"
    );
}

/// `CamelCase` to `UPPER_SNAKE`.
fn upper_snake(name: &str) -> String {
    let mut out = String::new();
    for (i, c) in name.chars().enumerate() {
        if c.is_ascii_uppercase() && i > 0 {
            out.push('_');
        }
        out.push(c.to_ascii_uppercase());
    }
    out
}

/// The checked-in header must agree with the Rust side: every status code,
/// kind and backend.
#[test]
#[cfg_attr(miri, ignore = "reads a file")]
fn header_matches_rust_constants() {
    let header = std::fs::read_to_string(root().join("include").join("ribbon_kernel.h")).unwrap();
    let define = |name: &str| -> i64 {
        let line = header
            .lines()
            .find(|l| l.split_whitespace().nth(1) == Some(name) && l.starts_with("#define"))
            .unwrap_or_else(|| panic!("{name} is not defined in the header"));
        let value: String = line
            .split_whitespace()
            .skip(2)
            .collect::<String>()
            .trim_matches(|c| c == '(' || c == ')')
            .trim_end_matches('u')
            .to_string();
        if let Some(hex) = value.strip_prefix("0x") {
            i64::from_str_radix(hex, 16).unwrap()
        } else {
            value.parse().unwrap()
        }
    };
    for e in Error::ALL {
        // The variant's name, without the sizes some variants carry.
        let debug = format!("{e:?}");
        let variant = debug.split([' ', '{']).next().unwrap();
        let name = format!("RIBBON_ERR_{}", upper_snake(variant));
        assert_eq!(define(&name), i64::from(e.code()), "{name}");
    }
    for kind in [Kind::Homogeneous, Kind::Standard, Kind::StandardSmash] {
        let name = match kind {
            Kind::StandardSmash => "RIBBON_KIND_STANDARD_SMASH".to_string(),
            k => format!("RIBBON_KIND_{}", upper_snake(&format!("{k:?}"))),
        };
        assert_eq!(define(&name), i64::from(kind.code()), "{name}");
    }
    for backend in Backend::ALL {
        let name = format!("RIBBON_BACKEND_{}", backend.name().to_ascii_uppercase());
        assert_eq!(define(&name), i64::from(backend.code()), "{name}");
    }
    assert_eq!(define("RIBBON_WIDTH_64"), 64);
    assert_eq!(define("RIBBON_WIDTH_128"), 128);
    assert_eq!(define("RIBBON_OK"), 0);
    // The codes only the C ABI has (src/ffi/version.rs checks its constants against
    // the header at compile time); they are ABI and never change.
    let ffi_only = [
        ("RIBBON_ERR_NULL", -1),
        ("RIBBON_ERR_INVALID_ARGUMENT", -17),
        ("RIBBON_ERR_MISALIGNED", -18),
        ("RIBBON_ERR_UNINITIALIZED", -19),
        ("RIBBON_ERR_OVERLAP", -20),
    ];
    for (name, code) in ffi_only {
        assert_eq!(define(name), code, "{name}");
    }
    // The header defines exactly these codes, each with its own value.
    let mut expected: BTreeSet<String> = ffi_only.iter().map(|(n, _)| n.to_string()).collect();
    for e in Error::ALL {
        let debug = format!("{e:?}");
        let variant = debug.split([' ', '{']).next().unwrap();
        expected.insert(format!("RIBBON_ERR_{}", upper_snake(variant)));
    }
    let defined: BTreeSet<String> = header
        .lines()
        .filter(|l| l.starts_with("#define RIBBON_ERR_"))
        .filter_map(|l| l.split_whitespace().nth(1))
        .map(str::to_string)
        .collect();
    assert_eq!(defined, expected);
    let values: BTreeSet<i64> = defined.iter().map(|n| define(n)).collect();
    assert_eq!(
        values.len(),
        defined.len(),
        "two status codes share a value"
    );
}

/// The `ribbon_*` names in `text` that a `(` follows: the functions a C
/// declaration or a Rust `fn` item names.
fn called_names(text: &str) -> Vec<String> {
    let mut names = Vec::new();
    let mut rest = text;
    while let Some(at) = rest.find("ribbon_") {
        let before = rest[..at].chars().next_back();
        let tail = &rest[at..];
        let len = tail
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(tail.len());
        if !before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_')
            && tail[len..].starts_with('(')
        {
            names.push(tail[..len].to_string());
        }
        rest = &tail[len..];
    }
    names
}

/// The sources of the C ABI: every file under `src/ffi/`, one after the
/// other (in name order).
fn ffi_sources() -> String {
    let dir = root().join("src").join("ffi");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|e| e == "rs"))
        .collect();
    files.sort();
    assert!(files.len() > 1, "{dir:?}: {files:?}");
    files
        .iter()
        .map(|file| std::fs::read_to_string(file).unwrap())
        .collect()
}

/// Every C entry point of `src/ffi/` is declared in the header, and the
/// header declares nothing else: a function added on one side only (a
/// retrieval call, say) fails here rather than at a C program's link.
#[test]
#[cfg_attr(miri, ignore = "reads files")]
fn header_declares_every_entry_point() {
    let header = header();
    let ffi = ffi_sources();
    let declared = declared_functions(&header);
    let exported: BTreeSet<String> = ffi
        .lines()
        .map(str::trim_start)
        .filter(|l| l.starts_with("pub ") && l.contains("extern \"C\" fn "))
        .flat_map(called_names)
        .collect();
    assert!(exported.len() >= 40, "{exported:?}");
    for name in [
        "ribbon_retrieval_plan_init",
        "ribbon_retrieval_build",
        "ribbon_retrieval_get_batch",
    ] {
        assert!(exported.contains(name), "{name}");
    }
    assert_eq!(
        declared.difference(&exported).collect::<Vec<_>>(),
        Vec::<&String>::new(),
        "declared in the header, not exported by src/ffi/"
    );
    assert_eq!(
        exported.difference(&declared).collect::<Vec<_>>(),
        Vec::<&String>::new(),
        "exported by src/ffi/, not declared in the header"
    );
    // The opaque structs: the same names and sizes on both sides (the Rust
    // sizes are asserted at compile time in src/ffi/mod.rs, the C ones by the
    // C test).
    for (name, words) in [
        ("ribbon_plan", 8),
        ("ribbon_filter", 20),
        ("ribbon_banding", 16),
        ("ribbon_retrieval_plan", 8),
        ("ribbon_retrieval", 20),
    ] {
        let c = format!("    uint64_t opaque[{words}];\n}} {name};");
        assert!(header.contains(&c), "{name}: no `{c}` in the header");
        let rust = format!("size_of::<{name}>() == {}", words * 8);
        assert!(ffi.contains(&rust), "{name}: no `{rust}` in src/ffi/");
    }
}

/// The `ribbon_*` and `RIBBON_*` names in `text`, comments included, with
/// a trailing `_` for prefixes (`RIBBON_ERR_*`, `ribbon_plan_init*`);
/// file names (`ribbon_test.c`) and the library's own name are left out.
fn mentioned_names(text: &str) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let starts = text[i..].starts_with("ribbon_") || text[i..].starts_with("RIBBON_");
        let boundary = i == 0 || !(bytes[i - 1].is_ascii_alphanumeric() || bytes[i - 1] == b'_');
        if !(starts && boundary) {
            i += 1;
            continue;
        }
        let len = text[i..]
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(text.len() - i);
        let name = &text[i..i + len];
        let rest = &text[i + len..];
        let file = [".c", ".h", ".rs", ".pc", ".a", ".so"]
            .iter()
            .any(|ext| rest.starts_with(ext));
        if !file && name != "ribbon_kernel" && !name.starts_with("RIBBON__") {
            names.insert(name.to_string());
        }
        i += len;
    }
    names
}

/// Issue 40: every `ribbon_*` and `RIBBON_*` name the header (comments
/// included) and the C guide mention is a function the header declares, a
/// type or a macro it defines; the header once named
/// `ribbon_plan_init_slots`, which never existed.
#[test]
#[cfg_attr(miri, ignore = "reads files")]
fn header_and_guide_name_only_what_exists() {
    let header = header();
    let mut known = declared_functions(&header);
    for line in header.lines() {
        let line = line.trim_start();
        if let Some(rest) = line.strip_prefix("#define ") {
            let name: String = rest
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            known.insert(name);
        }
        if let Some(rest) = line.strip_prefix("} ") {
            known.insert(rest.trim_end_matches(';').to_string());
        }
    }
    assert!(known.contains("ribbon_plan") && known.contains("RIBBON_FILTER_BYTES_MAX"));
    let guide = std::fs::read_to_string(root().join("docs").join("c-guide.md")).unwrap();
    for (file, text) in [
        ("include/ribbon_kernel.h", &header),
        ("docs/c-guide.md", &guide),
    ] {
        let dangling: Vec<String> = mentioned_names(text)
            .into_iter()
            .filter(|name| {
                if name.ends_with('_') {
                    !known.iter().any(|k| k.starts_with(name.as_str()))
                } else {
                    !known.contains(name)
                }
            })
            .collect();
        assert!(
            dangling.is_empty(),
            "{file} names what the header does not have: {dangling:?}"
        );
    }
}

/// `tests/c/header_check.c` uses every macro the header defines (so that
/// the strict compiles below cover them all).
#[test]
#[cfg_attr(miri, ignore = "reads files")]
fn header_check_uses_every_macro() {
    let header = header();
    let check =
        std::fs::read_to_string(root().join("tests").join("c").join("header_check.c")).unwrap();
    let used = mentioned_names(&check);
    let missing: Vec<&str> = header
        .lines()
        .filter_map(|l| l.trim_start().strip_prefix("#define "))
        .map(|rest| {
            rest.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .next()
                .unwrap()
        })
        .filter(|name| name.starts_with("RIBBON_") && !name.starts_with("RIBBON__"))
        .filter(|name| *name != "RIBBON_KERNEL_H" && !used.contains(*name))
        .collect();
    assert!(
        missing.is_empty(),
        "tests/c/header_check.c does not use {missing:?}"
    );
}

/// Issue 40: the header, every macro used, compiles without a warning as
/// C99 and C11 under -Wconversion -Wsign-conversion and as C++11 and C++17
/// under -Wold-style-cast -Wconversion -Wsign-conversion (the bound macros
/// once gave C++ 40,815 old-style-cast warnings in this file).
#[test]
#[cfg_attr(any(miri, not(ribbon_host_build)), ignore = "drives host cc and c++")]
fn header_is_warning_free_in_strict_c_and_cpp() {
    let source = root().join("tests").join("c").join("header_check.c");
    let include = root().join("include");
    let strict = [
        "-Wall",
        "-Wextra",
        "-Werror",
        "-pedantic",
        "-Wconversion",
        "-Wsign-conversion",
    ];
    let variants: [(&str, &[&str]); 4] = [
        ("cc", &["-std=c99"]),
        ("cc", &["-std=c11"]),
        ("c++", &["-x", "c++", "-std=c++11", "-Wold-style-cast"]),
        ("c++", &["-x", "c++", "-std=c++17", "-Wold-style-cast"]),
    ];
    for (compiler, lang) in variants {
        let out = Command::new(compiler)
            .args(lang)
            .args(strict)
            .arg("-fsyntax-only")
            .arg("-I")
            .arg(&include)
            .arg(&source)
            .output()
            .unwrap_or_else(|e| panic!("cannot run {compiler}: {e}"));
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            out.status.success() && stderr.is_empty(),
            "{compiler} {lang:?}: {} warnings\n{}",
            stderr.matches("warning:").count() + stderr.matches("error:").count(),
            stderr.lines().take(20).collect::<Vec<_>>().join("\n")
        );
    }
}

/// Bytes of `cc -E -P` output for a file including the header and `body`.
fn preprocessed_bytes(body: &str) -> usize {
    let dir = work_dir().join("preprocess");
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join(format!("use_{}.c", body.len()));
    std::fs::write(&file, format!("#include \"ribbon_kernel.h\"\n{body}\n")).unwrap();
    run(Command::new("cc")
        .args(["-E", "-P", "-I"])
        .arg(root().join("include"))
        .arg(&file))
    .len()
}

/// Issue 40: one use of a bound macro expands to under 10 KB of
/// preprocessed text on a 64-bit host (twice that where size_t has 32
/// bits, for the saturation); `RIBBON_FILTER_BYTES_MAX` once took 645 KB.
#[test]
#[cfg_attr(any(miri, not(ribbon_host_build)), ignore = "drives host cc")]
fn bound_macros_expand_to_little_text() {
    let base = preprocessed_bytes("");
    for name in [
        "RIBBON_FILTER_BYTES_MAX",
        "RIBBON_SCRATCH_WORDS_MAX",
        "RIBBON_BANDING_SCRATCH_WORDS_MAX",
    ] {
        let body =
            format!("size_t x = {name}(RIBBON_KIND_HOMOGENEOUS, RIBBON_WIDTH_64, 1000000, 7700);");
        let size = preprocessed_bytes(&body) - base;
        println!("{name}: one use expands to {size} bytes");
        assert!(size < 10 * 1024, "{name}: one use expands to {size} bytes");
    }
}

/// The header's precomputed tables for Bumped Ribbon: the key counts past
/// which a filter has a second, third, ... layer, the largest `n` whose
/// `k`-th cap is at most 2048 keys (caps as `bumped_layout::next_cap`:
/// 8.5 % or 3.8 % of the layer before, plus 512), as the macros
/// `RIBBON__SUM64` and `RIBBON__SUM128` list them; up to 2^40 keys.
#[test]
#[cfg_attr(miri, ignore = "reads a file")]
fn bumped_thresholds_match_the_caps() {
    let header = header();
    for (width, ppm) in [(64u32, 85_000u64), (128, 38_000)] {
        let cap = |n: u64, k: u32| (0..k).fold(n, |c, _| c * ppm / 1_000_000 + 512);
        let mut expected = Vec::new();
        for k in 0.. {
            // The largest n with cap(n, k) <= 2048 (caps grow with n).
            let (mut lo, mut hi) = (0u64, 1u64 << 41);
            while lo < hi {
                let mid = lo + (hi - lo).div_ceil(2);
                if cap(mid, k) <= 2048 {
                    lo = mid
                } else {
                    hi = mid - 1
                }
            }
            if lo >= 1 << 40 {
                break;
            }
            expected.push(lo);
        }
        let start = header
            .find(&format!("#define RIBBON__SUM{width}(n, m)"))
            .unwrap();
        let body = &header[start..start + header[start..].find("\n#").unwrap()];
        let listed: Vec<u64> = body
            .split("((n)>")
            .skip(1)
            .map(|s| s.split(')').next().unwrap().parse().unwrap())
            .collect();
        assert_eq!(listed, expected, "w = {width}");
    }
}
