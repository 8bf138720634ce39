//! The crate's modules form layers: each may use only modules of lower
//! layers, so the imports can have no cycle. This test reads the sources
//! (`src/` and `arch/`), collects every `crate::<module>` path outside
//! test modules and comments, and checks them against the table below,
//! which `ARCHITECTURE.md` explains. A new module needs a row here.

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
    // Front ends.
    ("owned", 14),
    ("owned_retrieval", 14),
    ("rocksdb", 14),
    ("ffi", 14),
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

/// The crate modules `code` names: `crate::name` and `crate::{a, b::c}`.
fn uses_of(code: &str) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    for (at, _) in code.match_indices("crate::") {
        let tail = &code[at + "crate::".len()..];
        if let Some(group) = tail.strip_prefix('{') {
            let group = &group[..group.find('}').unwrap_or(group.len())];
            for item in group.split(',') {
                names.insert(first_ident(item.trim()));
            }
        } else {
            names.insert(first_ident(tail));
        }
    }
    // Items re-exported at the crate root (`crate::Plan`) start with a
    // capital letter; they are the root's, not a module's.
    names.retain(|n| n.chars().next().is_some_and(|c| c.is_ascii_lowercase()));
    names
}

fn first_ident(s: &str) -> String {
    s.chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
        .collect()
}

fn graph() -> BTreeMap<String, BTreeSet<String>> {
    let mut files = Vec::new();
    rust_files(&root().join("src"), &mut files);
    rust_files(&root().join("arch"), &mut files);
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for file in files {
        let Some(module) = module_of(&file) else {
            continue;
        };
        let code = code_of(&fs::read_to_string(&file).expect("readable source"));
        let uses = graph.entry(module.clone()).or_default();
        for used in uses_of(&code) {
            if used != module && used != "test_kit" {
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
    assert_eq!(callers, ["kernels"], "modules that use arch/ directly");
}

#[test]
fn the_checker_sees_uses_and_skips_tests_and_comments() {
    let code = code_of(
        "use crate::band::X;\n// use crate::plan;\nuse crate::{fp, hash::Y};\n\
         #[cfg(test)]\nmod tests {\n    use crate::owned;\n    fn f() { {} }\n}\n\
         fn g() { crate::word::read(); crate::Plan::new(); }\n",
    );
    let uses: Vec<String> = uses_of(&code).into_iter().collect();
    assert_eq!(uses, ["band", "fp", "hash", "word"]);
}
