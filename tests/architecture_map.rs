//! `ARCHITECTURE.md` is the map of the sources; this test fails when the
//! map names something the sources no longer have. It reads every inline
//! code span (text between backticks, line breaks taken as spaces) and
//! checks two kinds of them:
//!
//! - **Paths.** A span that starts with `src/`, `arch/`, `tests/`,
//!   `include/`, `fuzz/`, `bench/`, `examples/`, `docs/` or `.ci/`, or
//!   a bare file name with an extension (`build.rs`), must be a file or
//!   folder of the repository. Templates (`arch/<isa>/`) are skipped.
//! - **Items.** A span that is a Rust path (`Banding`,
//!   `generic::contains`, `QueryKernel::column_values`), after dropping a
//!   leading `crate::`, a call's arguments (`detect()`), a macro's `!` and
//!   generic arguments (`BumpedTop<K>`, `generic::contains::<COLUMNS>`),
//!   must have every segment defined somewhere in the crate's Rust sources
//!   (`src/`, `arch/`, `tests/`, `examples/`, `bench/`, `fuzz/`,
//!   `build.rs`): as a `fn`, `struct`, `enum`, `trait`, `type`, `const`,
//!   `static`, `mod`, `macro_rules!`, a field (or a parameter on a line of
//!   its own), or an enum variant; C names may be a `#define` of
//!   `include/ribbon_kernel.h` and `cfg` names a string of `build.rs`.
//!   Each segment is looked up on its own, not the path as a whole.
//!
//! Spans with spaces or other punctuation are code or prose and are not
//! checked, nor are templates (`RIBBON_BACKEND_<NAME>`,
//! `<name>_matches_scalar`), and so are the few words in [`PROSE`] and paths into the
//! outside crates in [`OUTSIDE`].

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

/// Spans that look like items but name none of this crate's, each with
/// why.
const PROSE: &[&str] = &[
    // Rust keywords and attributes the text mentions as such.
    "cfg",
    "unsafe",
    "use",
    // Standard library names.
    "Copy",
    "None",
    // Cargo features (`Cargo.toml`), not items.
    "alloc",
    "capi",
    "staticlib",
    // A target feature of wasm32.
    "simd128",
    // The `cfg` Rust sets under Miri (also a step of `.ci/run`).
    "miri",
    // `wide`'s lane types.
    "u64x2",
    "u64x4",
    // The format's magic bytes (strings in `src/layout.rs`).
    "RbnK",
    "RbnR",
    // An environment variable the tests and `.ci/run` read.
    "RIBBON_REQUIRE_BACKENDS",
    // A variable of the prose ("slots for `n` keys").
    "n",
];

/// First segments of paths into other crates and the language.
const OUTSIDE: &[&str] = &[
    "bool", "u64", "u128", "std", "core", "bytemuck", "wide", "serde",
];

/// Folders a path span may start with.
const PATH_PREFIXES: &[&str] = &[
    "src/",
    "arch/",
    "tests/",
    "include/",
    "fuzz/",
    "bench/",
    "examples/",
    "docs/",
    ".ci/",
];

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The inline code spans of a Markdown text, whitespace runs as one
/// space.
fn code_spans(text: &str) -> Vec<String> {
    let mut spans = Vec::new();
    let mut parts = text.split('`');
    parts.next();
    while let Some(span) = parts.next() {
        spans.push(span.split_whitespace().collect::<Vec<_>>().join(" "));
        // The text between this span and the next.
        parts.next();
    }
    spans
}

fn is_ident(s: &str) -> bool {
    let mut chars = s.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// What a span names, if it is a path to check.
#[derive(Debug, PartialEq)]
enum Named {
    Path(String),
    Item(Vec<String>),
}

fn classify(span: &str) -> Option<Named> {
    let has_extension = Path::new(span).extension().is_some_and(|e| {
        ["rs", "h", "c", "md", "toml", "sh", "mjs", "in"].contains(&e.to_str().unwrap_or(""))
    });
    if PATH_PREFIXES.iter().any(|p| span.starts_with(p))
        || (has_extension && !span.contains("::") && !span.contains(' '))
    {
        // `arch/<isa>/` and the like are templates.
        if span.contains(['<', '*', ' ']) {
            return None;
        }
        return Some(Named::Path(span.to_string()));
    }
    let mut s = span;
    // `detect()`, `isa_proof!(Name, FEATURE)`: the callee.
    if s.ends_with(')') {
        s = &s[..s.find('(')?];
    }
    s = s.strip_suffix('!').unwrap_or(s);
    // `BumpedTop<K>`, `Filter<B: AsRef<[u8]> = Vec<u8>>`,
    // `generic::contains::<COLUMNS>`: the path before its generics.
    if s.ends_with('>') {
        s = &s[..s.find('<')?];
        s = s.strip_suffix("::").unwrap_or(s);
        // `RIBBON_BACKEND_<NAME>`: a template, not generics.
        if s.ends_with('_') {
            return None;
        }
    }
    s = s.strip_prefix("crate::").unwrap_or(s);
    let segments: Vec<String> = s.split("::").map(str::to_string).collect();
    if !segments.iter().all(|seg| is_ident(seg)) {
        return None;
    }
    if OUTSIDE.contains(&segments[0].as_str()) || (segments.len() == 1 && PROSE.contains(&s)) {
        return None;
    }
    Some(Named::Item(segments))
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries {
        let path = entry.expect("folder entry").path();
        if path.is_dir() {
            if path.file_name().is_some_and(|n| n == "target") {
                continue;
            }
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The identifier at the start of `s`.
fn first_ident(s: &str) -> &str {
    let end = s
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(s.len());
    &s[..end]
}

/// The names `source` (Rust) defines: items after their keyword, fields
/// and parameters at the start of a line, and enum variants.
fn definitions_in(source: &str, names: &mut BTreeSet<String>) {
    const KEYWORDS: &[&str] = &[
        "fn ",
        "struct ",
        "enum ",
        "trait ",
        "type ",
        "const ",
        "static ",
        "mod ",
        "union ",
        "macro_rules! ",
    ];
    for keyword in KEYWORDS {
        for (at, _) in source.match_indices(keyword) {
            let before = source[..at].chars().next_back();
            if before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_') {
                continue;
            }
            let name = first_ident(source[at + keyword.len()..].trim_start());
            // `const fn name` is found by "fn ".
            if !name.is_empty() && name != "fn" {
                names.insert(name.to_string());
            }
        }
    }
    for line in source.lines() {
        // `pub(crate) lo_word: usize,`, `value_bits: u32,`.
        let mut rest = line.trim_start();
        if let Some(after) = rest.strip_prefix("pub") {
            rest = match after.strip_prefix('(') {
                Some(vis) => vis.split_once(')').map_or("", |(_, r)| r),
                None => after,
            }
            .trim_start();
        }
        let name = first_ident(rest);
        let after = &rest[name.len()..];
        if !name.is_empty() && after.starts_with(':') && !after.starts_with("::") {
            names.insert(name.to_string());
        }
    }
    // Enum variants: the first word of each line at the enum body's depth
    // (comments left out).
    for (at, _) in source.match_indices("enum ") {
        let Some(open) = source[at..].find('{') else {
            continue;
        };
        let mut depth = 0usize;
        'body: for line in source[at + open + 1..].lines() {
            let code = line.split("//").next().unwrap_or("");
            if depth == 0 {
                let name = first_ident(code.trim_start());
                if !name.is_empty() {
                    names.insert(name.to_string());
                }
            }
            for c in code.chars() {
                match c {
                    '{' | '(' => depth += 1,
                    '}' | ')' if depth == 0 => break 'body,
                    '}' | ')' => depth -= 1,
                    _ => {}
                }
            }
        }
    }
}

/// Every name the sources define (see the module's documentation).
fn definitions() -> BTreeSet<String> {
    let mut files = Vec::new();
    for dir in ["src", "arch", "tests", "examples", "bench", "fuzz"] {
        rust_files(&root().join(dir), &mut files);
    }
    files.push(root().join("build.rs"));
    let mut names = BTreeSet::new();
    for file in &files {
        definitions_in(
            &fs::read_to_string(file).expect("readable source"),
            &mut names,
        );
    }
    // `cfg` names: the strings of build.rs.
    let build = fs::read_to_string(root().join("build.rs")).expect("build.rs");
    for quoted in build.split('"').skip(1).step_by(2) {
        if is_ident(quoted) {
            names.insert(quoted.to_string());
        }
    }
    // C names: the header's macros.
    let header = fs::read_to_string(root().join("include/ribbon_kernel.h")).expect("the C header");
    for line in header.lines() {
        if let Some(rest) = line.trim_start().strip_prefix("#define ") {
            names.insert(first_ident(rest).to_string());
        }
    }
    names
}

/// What of `map` the sources lack, one line each.
fn missing_from(map: &str, defined: &BTreeSet<String>) -> Vec<String> {
    let mut missing = Vec::new();
    for span in code_spans(map) {
        match classify(&span) {
            Some(Named::Path(path)) if !root().join(&path).exists() => {
                missing.push(format!("`{span}`: no such file or folder"));
            }
            Some(Named::Item(segments)) => {
                let absent: Vec<&String> =
                    segments.iter().filter(|s| !defined.contains(*s)).collect();
                if !absent.is_empty() {
                    let absent: Vec<&str> = absent.iter().map(|s| s.as_str()).collect();
                    missing.push(format!("`{span}`: no definition of {}", absent.join(", ")));
                }
            }
            _ => {}
        }
    }
    missing.sort();
    missing.dedup();
    missing
}

#[test]
#[cfg_attr(
    miri,
    ignore = "reads the sources from disk, which Miri isolates; `cargo test` checks them"
)]
fn every_path_and_item_architecture_md_names_exists() {
    let map = fs::read_to_string(root().join("ARCHITECTURE.md")).expect("ARCHITECTURE.md");
    let defined = definitions();
    assert!(
        defined.contains("Banding") && defined.len() > 500,
        "found {} names",
        defined.len()
    );
    let checked = code_spans(&map)
        .iter()
        .filter(|s| classify(s).is_some())
        .count();
    assert!(checked > 200, "only {checked} spans checked");
    let missing = missing_from(&map, &defined);
    assert!(
        missing.is_empty(),
        "ARCHITECTURE.md names what the sources lack (fix the map, or the rule in tests/architecture_map.rs):\n{}",
        missing.join("\n")
    );
}

#[test]
#[cfg_attr(
    miri,
    ignore = "looks up bare file names on disk, which Miri isolates; `cargo test` checks them"
)]
fn the_map_checker_classifies_spans() {
    let item = |s: &[&str]| Some(Named::Item(s.iter().map(|s| s.to_string()).collect()));
    assert_eq!(
        classify("src/band.rs"),
        Some(Named::Path("src/band.rs".into()))
    );
    assert_eq!(classify("build.rs"), Some(Named::Path("build.rs".into())));
    assert_eq!(classify("arch/<isa>/"), None);
    assert_eq!(classify("RIBBON__B_*"), None);
    assert_eq!(classify("RIBBON_BACKEND_<NAME>"), None);
    assert_eq!(classify("<name>_matches_scalar"), None);
    assert_eq!(classify("Banding"), item(&["Banding"]));
    assert_eq!(
        classify("QueryKernel::column_values"),
        item(&["QueryKernel", "column_values"])
    );
    assert_eq!(
        classify("generic::contains::<COLUMNS>"),
        item(&["generic", "contains"])
    );
    assert_eq!(
        classify("Filter<B: AsRef<[u8]> = Vec<u8>>"),
        item(&["Filter"])
    );
    assert_eq!(classify("isa_proof!(Name, FEATURE)"), item(&["isa_proof"]));
    assert_eq!(
        classify("Portable::detect()"),
        item(&["Portable", "detect"])
    );
    assert_eq!(classify("crate::Plan"), item(&["Plan"]));
    assert_eq!(classify("u64::from_le_bytes"), None);
    assert_eq!(classify("unsafe"), None);
    assert_eq!(classify("_ => return None"), None);
    assert_eq!(classify("(width, kind)"), None);
    assert_eq!(code_spans("a `b::c` d `e\n  f` g"), ["b::c", "e f"]);

    let mut defined = BTreeSet::new();
    definitions_in(
        "pub(crate) struct Chain<W> {\n    pub(crate) i: usize,\n}\npub enum Kind {\n    #[default]\n    \
         Homogeneous,\n    Standard { x: u8 },\n}\nmacro_rules! proven { () => {} }\nconst fn f(\n    \
         value_bits: u32,\n) {}\n",
        &mut defined,
    );
    let want = [
        "Chain",
        "Homogeneous",
        "Kind",
        "Standard",
        "f",
        "i",
        "proven",
        "value_bits",
    ];
    assert_eq!(defined.iter().map(String::as_str).collect::<Vec<_>>(), want);
    let map = "`Chain::i` `insert_row` `src/no_such_file.rs` `Kind::Standard`";
    assert_eq!(
        missing_from(map, &defined),
        [
            "`insert_row`: no definition of insert_row",
            "`src/no_such_file.rs`: no such file or folder"
        ]
    );
}
