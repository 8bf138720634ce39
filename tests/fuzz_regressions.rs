//! Replays every saved fuzz input under plain `cargo test`.
//!
//! Inputs live in `tests/fuzz_regressions/<target>/`, one file per case,
//! named after what they found. Add a crashing input found by
//! `cargo +nightly fuzz run <target>` there (minimized with
//! `cargo +nightly fuzz tmin`) once the bug is fixed; the same check then
//! runs on every `cargo test`. A small seed case per target is kept so that
//! every replay path runs even before anything was found.

mod common;
// The retrieval targets' checks (not a module of `common`: included here
// and by the two fuzz targets only).
#[allow(dead_code)]
#[path = "common/retrieval_cases.rs"]
mod retrieval_cases;
// The structure-aware target's checks (issue 38): over `cases` and
// `retrieval_cases`, which it reaches as `super::`.
#[path = "common/structure_cases.rs"]
mod structure_cases;
// The sharded target's check (issue 42).
#[path = "common/sharded_cases.rs"]
mod sharded_cases;

use std::path::PathBuf;

use arbitrary::{Arbitrary, Unstructured};
use common::cases;

fn inputs(target: &str) -> Vec<(String, Vec<u8>)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests")
        .join("fuzz_regressions")
        .join(target);
    let mut files: Vec<(String, Vec<u8>)> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|entry| {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            (name, std::fs::read(&path).unwrap())
        })
        .filter(|(name, _)| !name.starts_with('.'))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no inputs in {}", dir.display());
    files
}

/// A saved input the fuzz target would now skip (its `Arbitrary` decoding
/// fails, so `fuzz_target!` returns before the check): it tests nothing
/// any more, so the replay says so rather than passing.
fn undecodable<T>(name: &str) -> T {
    panic!("{name} no longer decodes as the target's input: re-minimize it or remove it")
}

/// Decodes a case exactly as libfuzzer-sys's `fuzz_target!` does.
fn decode<'a, T: Arbitrary<'a>>(bytes: &'a [u8]) -> Option<T> {
    T::arbitrary_take_rest(Unstructured::new(bytes)).ok()
}

#[test]
#[cfg_attr(miri, ignore = "reads files")]
fn replay_from_bytes() {
    for (name, bytes) in inputs("from_bytes") {
        eprintln!("from_bytes/{name}");
        cases::check_bytes(&bytes);
    }
}

#[test]
#[cfg_attr(miri, ignore = "reads files")]
fn replay_sharded_from_bytes() {
    for (name, bytes) in inputs("sharded_from_bytes") {
        eprintln!("sharded_from_bytes/{name}");
        sharded_cases::check_sharded_bytes(&bytes);
    }
}

#[test]
#[cfg_attr(miri, ignore = "reads files")]
fn replay_build_query() {
    for (name, bytes) in inputs("build_query") {
        let case = decode::<cases::BuildCase>(&bytes).unwrap_or_else(|| undecodable(&name));
        eprintln!("build_query/{name}: {case:?}");
        cases::check_build(&case);
    }
}

#[test]
#[cfg_attr(miri, ignore = "reads files")]
fn replay_backends() {
    for (name, bytes) in inputs("backends") {
        let case = decode::<cases::BackendCase>(&bytes).unwrap_or_else(|| undecodable(&name));
        eprintln!("backends/{name}");
        cases::check_backends(&case);
    }
}

#[test]
#[cfg_attr(miri, ignore = "reads files")]
fn replay_banding_oracle() {
    for (name, bytes) in inputs("banding_oracle") {
        let case = decode::<cases::BandingCase>(&bytes).unwrap_or_else(|| undecodable(&name));
        eprintln!("banding_oracle/{name}");
        cases::check_banding(&case);
    }
}

#[test]
#[cfg_attr(miri, ignore = "reads files")]
fn replay_retrieval_from_bytes() {
    for (name, bytes) in inputs("retrieval_from_bytes") {
        eprintln!("retrieval_from_bytes/{name}");
        retrieval_cases::check_retrieval_bytes(&bytes);
    }
}

#[test]
#[cfg_attr(miri, ignore = "reads files")]
fn replay_retrieval_build_get() {
    for (name, bytes) in inputs("retrieval_build_get") {
        let case = decode::<retrieval_cases::RetrievalBuildCase>(&bytes)
            .unwrap_or_else(|| undecodable(&name));
        eprintln!("retrieval_build_get/{name}: {case:?}");
        retrieval_cases::check_retrieval_build(&case);
    }
}

#[test]
#[cfg_attr(miri, ignore = "reads files")]
fn replay_mutated_structure() {
    for (name, bytes) in inputs("mutated_structure") {
        let case =
            decode::<structure_cases::MutatedCase>(&bytes).unwrap_or_else(|| undecodable(&name));
        eprintln!("mutated_structure/{name}: {case:?}");
        structure_cases::check_mutated(&case);
    }
}
