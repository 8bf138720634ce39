//! A valid filter or retrieval structure built from the input, then its
//! fields (header, layer table, data, length) set to arbitrary values, with
//! or without its checksum computed again: refused, or queried safely
//! and alike on every backend; unchanged bytes keep every key.
#![no_main]

#[allow(dead_code)]
#[path = "../../tests/common/cases.rs"]
mod cases;
#[allow(dead_code)]
#[path = "../../tests/common/dense.rs"]
mod dense;
#[allow(dead_code)]
#[path = "../../tests/common/retrieval_cases.rs"]
mod retrieval_cases;
#[path = "../../tests/common/structure_cases.rs"]
mod structure_cases;

libfuzzer_sys::fuzz_target!(|case: structure_cases::MutatedCase| {
    structure_cases::check_mutated(&case)
});
