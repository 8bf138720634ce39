//! The crate's modules form layers: each may use only modules of lower
//! layers, so the imports can have no cycle. This test reads the sources
//! (`src/` and `arch/`), collects every `crate::<module>` path outside
//! test modules and comments, and checks them against the table below,
//! which `ARCHITECTURE.md` explains. A new module needs a row here.
//!
//! Re-exports count as uses of the module that defines the item: after
//! `pub(crate) use crate::arch::scalar::bumped_flag;` in `kernels`, a
//! module that names `crate::kernels::bumped_flag` (or `kernels::
//! bumped_flag`) uses `arch`, and after the root's `pub use plan::Plan`,
//! `crate::Plan` is a use of `plan`.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// Layer of every module, lowest first. A module may use modules of
/// strictly lower layers only.
const LAYERS: &[(&str, u32)] = &[
    // Foundations: no crate imports but these.
    ("error", 0),
    ("arith", 0),
    ("detect", 0),
    // The key hash (XXH3), which the format's checksum uses too.
    ("key_hash", 1),
    ("backend", 1),
    // The format: geometry and header, words, hashing, FP math.
    ("layout", 2),
    ("word", 3),
    // Sizing formulas and measured tables, which plans and bounds share.
    ("sizing", 3),
    ("hash", 4),
    ("bumped_layout", 4),
    ("fp", 4),
    // Probe math shared by every kernel.
    ("probe", 5),
    // Bumped Ribbon's test-only reference model (issue 18).
    ("bumped_study", 5),
    // The kernels, then the table that alone calls them.
    ("arch", 6),
    ("kernels", 7),
    // The layered query of Bumped Ribbon, for every view.
    ("layered", 8),
    // Views, banding, planning.
    ("filter", 9),
    ("band", 10),
    ("bump", 11),
    ("plan", 12),
    ("bounds", 13),
    // Retrieval: Standard Ribbon with values as right sides (issue 19).
    ("retrieval", 13),
    // Sharded filters (issue 42): shards of ordinary filters behind a
    // directory.
    ("sharded", 13),
    // Front ends.
    ("owned", 14),
    ("owned_retrieval", 14),
    ("rocksdb", 14),
    ("ffi", 14),
    // `serde` support for the views and the owning twins.
    ("serialize", 15),
];

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).expect("source folder") {
        let path = entry.expect("folder entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The top-level module a file belongs to (`arch/` is one module).
fn module_of(path: &Path) -> Option<String> {
    let rel = path.strip_prefix(root()).ok()?;
    let parts: Vec<&str> = rel.iter().filter_map(|p| p.to_str()).collect();
    match parts.as_slice() {
        ["arch", ..] => Some("arch".into()),
        ["src", "lib.rs"] => None,
        ["src", file] => Some(file.trim_end_matches(".rs").into()),
        ["src", dir, ..] => Some((*dir).into()),
        _ => None,
    }
}

/// The source without comments and without `#[cfg(test)]` modules.
fn code_of(source: &str) -> String {
    let without_comments: String = source
        .lines()
        .map(|line| match line.find("//") {
            Some(at) => &line[..at],
            None => line,
        })
        .collect::<Vec<_>>()
        .join("\n");
    let mut code = String::new();
    let mut rest = without_comments.as_str();
    while let Some(at) = rest.find("#[cfg(test)]") {
        code.push_str(&rest[..at]);
        let after = &rest[at + "#[cfg(test)]".len()..];
        let trimmed = after.trim_start();
        let is_module = trimmed.starts_with("mod ") || trimmed.starts_with("pub(crate) mod ");
        let brace = after.find('{');
        let semicolon = after.find(';');
        match (is_module, brace) {
            // `#[cfg(test)] mod name { ... }`: skip to the matching brace.
            (true, Some(open)) if semicolon.is_none_or(|s| open < s) => {
                let mut depth = 0usize;
                let mut end = after.len();
                for (i, c) in after[open..].char_indices() {
                    match c {
                        '{' => depth += 1,
                        '}' => {
                            depth -= 1;
                            if depth == 0 {
                                end = open + i + 1;
                                break;
                            }
                        }
                        _ => {}
                    }
                }
                rest = &after[end..];
            }
            // `#[cfg(test)] mod name;` or a test-only item: drop the line.
            _ => rest = after.split_once('\n').map_or("", |(_, r)| r),
        }
    }
    code.push_str(rest);
    code
}

/// One token of a `use` tree or path: an identifier, `::`, a brace, a
/// comma, `*` or `as`.
#[derive(Clone, Debug, PartialEq)]
enum Tok {
    Ident(String),
    Sep,
    Open,
    Close,
    Comma,
    Star,
    As,
}

/// The tokens at the start of `s`, up to the first character that cannot
/// be part of a `use` tree (`;`, `(`, `<`, ...). Whitespace between tokens
/// is skipped; the parser stops where the grammar does.
fn tokens(s: &str) -> Vec<Tok> {
    let mut out = Vec::new();
    let mut rest = s;
    loop {
        rest = rest.trim_start();
        let ident = first_ident(rest);
        if !ident.is_empty() {
            rest = &rest[ident.len()..];
            out.push(if ident == "as" {
                Tok::As
            } else {
                Tok::Ident(ident)
            });
            continue;
        }
        let (tok, len) = match rest.as_bytes() {
            [b':', b':', ..] => (Tok::Sep, 2),
            [b'{', ..] => (Tok::Open, 1),
            [b'}', ..] => (Tok::Close, 1),
            [b',', ..] => (Tok::Comma, 1),
            [b'*', ..] => (Tok::Star, 1),
            _ => return out,
        };
        out.push(tok);
        rest = &rest[len..];
    }
}

/// Flattens the `use` tree (or plain path) at `toks[*i..]` under `prefix`:
/// `a::{b, c::{d as e, *}}` gives `a::b`, `a::c::d` and `a::c::*`, each
/// with the name it is known by (`b`, `e`, `*`).
fn flatten(
    toks: &[Tok],
    i: &mut usize,
    prefix: &mut Vec<String>,
    out: &mut Vec<(Vec<String>, String)>,
) {
    match toks.get(*i) {
        Some(Tok::Open) => {
            *i += 1;
            loop {
                flatten(toks, i, prefix, out);
                match toks.get(*i) {
                    Some(Tok::Comma) => *i += 1,
                    Some(Tok::Close) => {
                        *i += 1;
                        break;
                    }
                    _ => break,
                }
                if toks.get(*i) == Some(&Tok::Close) {
                    *i += 1;
                    break;
                }
            }
        }
        Some(Tok::Star) => {
            *i += 1;
            out.push((prefix.clone(), "*".into()));
        }
        Some(Tok::Ident(name)) => {
            *i += 1;
            if name != "self" {
                prefix.push(name.clone());
            }
            let more = matches!(
                toks.get(*i + 1),
                Some(Tok::Ident(_) | Tok::Open | Tok::Star)
            );
            if toks.get(*i) == Some(&Tok::Sep) && more {
                *i += 1;
                flatten(toks, i, prefix, out);
            } else {
                let mut known_as = name.clone();
                if let (Some(Tok::As), Some(Tok::Ident(alias))) = (toks.get(*i), toks.get(*i + 1)) {
                    known_as = alias.clone();
                    *i += 2;
                }
                out.push((prefix.clone(), known_as));
            }
            if name != "self" {
                prefix.pop();
            }
        }
        _ => {}
    }
}

/// The paths of the `use` tree or path that starts `s`.
fn paths_at(s: &str) -> Vec<(Vec<String>, String)> {
    let toks = tokens(s);
    let mut out = Vec::new();
    flatten(&toks, &mut 0, &mut Vec::new(), &mut out);
    out
}

fn first_ident(s: &str) -> String {
    s.chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
        .collect()
}

/// Re-exports: `(module, name)` to the module the item really lives in.
/// The crate root's (`pub use plan::Plan` in `lib.rs`) are under the
/// module `""`.
type Reexports = BTreeMap<(String, String), String>;

/// Adds the re-exports of `module`'s `code` to `reexports`: every
/// `pub use`, `pub(crate) use` or `pub(...) use` of a `crate::` path (or,
/// at the root, of a module's path), attributed to the path's top-level
/// module. Re-exports of a module's own items (`pub(crate) use
/// entry_points;`, `pub use hash::key_hash;` in `src/rocksdb/`) stay in
/// the module and are left out.
fn reexports_of(module: &str, code: &str, reexports: &mut Reexports) {
    for (at, _) in code.match_indices("pub") {
        if code[..at]
            .chars()
            .next_back()
            .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_')
        {
            continue;
        }
        let mut rest = &code[at + "pub".len()..];
        if rest.starts_with('(') {
            let Some(close) = rest.find(')') else {
                continue;
            };
            rest = &rest[close + 1..];
        }
        let Some(tree) = rest.trim_start().strip_prefix("use ") else {
            continue;
        };
        for (path, name) in paths_at(tree) {
            let from = match path.as_slice() {
                [root, top, ..] if root == "crate" => top.clone(),
                [top, _, ..] if module.is_empty() => top.clone(),
                _ => continue,
            };
            if from != module && name != "*" {
                reexports.insert((module.to_string(), name), from);
            }
        }
    }
}

/// The crate modules `code` names: `crate::name`, `crate::{a, b::c}`, and
/// through `reexports` the module an item re-exported elsewhere lives in
/// (`crate::kernels::bumped_flag`, `kernels::bumped_flag`, `crate::Plan`).
fn uses_of(code: &str, reexports: &Reexports) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    let is_module = |n: &str| n.chars().next().is_some_and(|c| c.is_ascii_lowercase());
    for (at, _) in code.match_indices("crate::") {
        for (path, name) in paths_at(&code[at + "crate::".len()..]) {
            let Some(top) = path.first() else { continue };
            if !is_module(top) {
                // An item of the crate root (`crate::Plan`): the module
                // it is re-exported from, if any.
                if let Some(from) = reexports.get(&(String::new(), top.clone())) {
                    names.insert(from.clone());
                }
                continue;
            }
            names.insert(top.clone());
            let second = path.get(1).cloned().unwrap_or(name);
            for ((module, item), from) in reexports {
                if module == top && (*item == second || second == "*") {
                    names.insert(from.clone());
                }
            }
        }
    }
    // A re-exported item named through its module's own name, after
    // `use crate::kernels;`: `kernels::bumped_flag`.
    for ((module, item), from) in reexports {
        if module.is_empty() {
            continue;
        }
        let named = format!("{module}::{item}");
        let found = code.match_indices(&named).any(|(at, _)| {
            let before = code[..at].chars().next_back();
            let after = code[at + named.len()..].chars().next();
            !before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_')
                && !after.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_')
        });
        if found {
            names.insert(from.clone());
        }
    }
    names
}

/// Whether `path` is a module's unit tests in a file of their own:
/// `src/<module>/tests.rs` (or `arch/<file>/tests.rs`), declared in
/// `<module>.rs` as `#[cfg(test)] mod tests;`. Test code may use any
/// module, as inline `#[cfg(test)]` modules may.
fn is_test_module_file(path: &Path) -> bool {
    if path.file_name().is_none_or(|name| name != "tests.rs") {
        return false;
    }
    let Some(dir) = path.parent() else {
        return false;
    };
    let parent = dir.with_extension("rs");
    fs::read_to_string(&parent).is_ok_and(|s| s.contains("#[cfg(test)]\nmod tests;"))
}

fn graph() -> BTreeMap<String, BTreeSet<String>> {
    let mut files = Vec::new();
    rust_files(&root().join("src"), &mut files);
    rust_files(&root().join("arch"), &mut files);
    let sources: Vec<(Option<String>, String)> = files
        .iter()
        .filter(|file| !is_test_module_file(file))
        .map(|file| {
            let code = code_of(&fs::read_to_string(file).expect("readable source"));
            (module_of(file), code)
        })
        .collect();
    let mut reexports = Reexports::new();
    for (module, code) in &sources {
        // `None`: `src/lib.rs`, the crate root.
        reexports_of(module.as_deref().unwrap_or(""), code, &mut reexports);
    }
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (module, code) in &sources {
        let Some(module) = module else {
            continue;
        };
        let uses = graph.entry(module.clone()).or_default();
        for used in uses_of(code, &reexports) {
            if used != *module && used != "test_kit" {
                uses.insert(used);
            }
        }
    }
    graph
}

#[test]
#[cfg_attr(
    miri,
    ignore = "reads the sources from disk, which Miri isolates; `cargo test` checks them"
)]
fn every_module_uses_only_lower_layers() {
    let layers: BTreeMap<&str, u32> = LAYERS.iter().copied().collect();
    let graph = graph();
    assert!(graph.len() >= 15, "found only {:?}", graph.keys());
    let mut errors = Vec::new();
    for (module, uses) in &graph {
        let Some(&own) = layers.get(module.as_str()) else {
            errors.push(format!("module `{module}` has no layer in tests/layers.rs"));
            continue;
        };
        for used in uses {
            match layers.get(used.as_str()) {
                None => errors.push(format!("`{module}` uses unknown module `{used}`")),
                Some(&layer) if layer >= own => errors.push(format!(
                    "`{module}` (layer {own}) uses `{used}` (layer {layer}), not below it"
                )),
                Some(_) => {}
            }
        }
    }
    assert!(errors.is_empty(), "{}", errors.join("\n"));
}

#[test]
#[cfg_attr(
    miri,
    ignore = "reads the sources from disk, which Miri isolates; `cargo test` checks them"
)]
fn module_imports_have_no_cycle() {
    // Independent of the table: a depth-first search for a back edge.
    let graph = graph();
    fn visit<'a>(
        node: &'a str,
        graph: &'a BTreeMap<String, BTreeSet<String>>,
        state: &mut BTreeMap<&'a str, bool>,
        path: &mut Vec<&'a str>,
    ) -> Option<Vec<String>> {
        match state.get(node) {
            Some(true) => return None,
            Some(false) => {
                let from = path.iter().position(|n| *n == node).unwrap_or(0);
                let mut cycle: Vec<String> = path[from..].iter().map(|s| s.to_string()).collect();
                cycle.push(node.to_string());
                return Some(cycle);
            }
            None => {}
        }
        state.insert(node, false);
        path.push(node);
        for next in graph.get(node).into_iter().flatten() {
            if let Some(cycle) = visit(next, graph, state, path) {
                return Some(cycle);
            }
        }
        path.pop();
        state.insert(node, true);
        None
    }
    let mut state = BTreeMap::new();
    for node in graph.keys() {
        if let Some(cycle) = visit(node, &graph, &mut state, &mut Vec::new()) {
            panic!("import cycle: {}", cycle.join(" -> "));
        }
    }
}

#[test]
#[cfg_attr(
    miri,
    ignore = "reads the sources from disk, which Miri isolates; `cargo test` checks them"
)]
fn only_the_kernel_table_calls_the_kernels() {
    let graph = graph();
    let callers: Vec<&String> = graph
        .iter()
        .filter(|(module, uses)| module.as_str() != "arch" && uses.contains("arch"))
        .map(|(module, _)| module)
        .collect();
    assert_eq!(
        callers,
        ["kernels"],
        "modules that use arch/ (directly or through a re-export)"
    );
}

#[test]
fn the_checker_sees_uses_and_skips_tests_and_comments() {
    let code = code_of(
        "use crate::band::X;\n// use crate::plan;\nuse crate::{fp, hash::Y};\n\
         #[cfg(test)]\nmod tests {\n    use crate::owned;\n    fn f() { {} }\n}\n\
         fn g() { crate::word::read(); crate::Plan::new(); }\n",
    );
    let uses: Vec<String> = uses_of(&code, &Reexports::new()).into_iter().collect();
    assert_eq!(uses, ["band", "fp", "hash", "word"]);
}

#[test]
fn the_checker_counts_uses_through_reexports() {
    let mut reexports = Reexports::new();
    reexports_of(
        "kernels",
        "pub(crate) use crate::arch::scalar::{bumped_flag, maybe_bumped as maybe};\n\
         pub(crate) use crate::arch::prefetch_for_write;\npub(crate) use local_macro;\n\
         pub fn republic() {}\n",
        &mut reexports,
    );
    reexports_of(
        "",
        "pub use plan::{MAX_KEYS, Plan};\npub use error::Error;\n",
        &mut reexports,
    );
    let arch = |name: &str| {
        (
            ("kernels".to_string(), name.to_string()),
            "arch".to_string(),
        )
    };
    let root = |name: &str, from: &str| ((String::new(), name.to_string()), from.to_string());
    assert_eq!(
        reexports,
        Reexports::from([
            arch("bumped_flag"),
            arch("maybe"),
            arch("prefetch_for_write"),
            root("Error", "error"),
            root("MAX_KEYS", "plan"),
            root("Plan", "plan"),
        ])
    );
    let uses = |code: &str| -> Vec<String> { uses_of(code, &reexports).into_iter().collect() };
    // Through the re-exporting module, in a group, by name after
    // importing the module, by glob, and at the crate root.
    assert_eq!(
        uses("use crate::kernels::{self, QueryKernels, maybe};"),
        ["arch", "kernels"]
    );
    assert_eq!(
        uses("use crate::{kernels::bumped_flag, word};"),
        ["arch", "kernels", "word"]
    );
    assert_eq!(
        uses("use crate::kernels;\nfn f() { kernels::prefetch_for_write(w, 0) }"),
        ["arch", "kernels"]
    );
    assert_eq!(uses("use crate::kernels::*;"), ["arch", "kernels"]);
    assert_eq!(uses("fn f() { crate::Plan::new(); }"), ["plan"]);
    // Items of the module itself are not re-exports.
    assert_eq!(
        uses("use crate::kernels::{QueryKernels, SolveKernel};"),
        ["kernels"]
    );
    assert_eq!(
        uses("fn f() { my_kernels::bumped_flag() }"),
        Vec::<String>::new()
    );
}
