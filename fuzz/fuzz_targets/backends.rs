//! Every available backend against scalar on arbitrary filters (payload bits
//! scribbled on) and arbitrary queries.
#![no_main]

#[allow(dead_code)]
#[path = "../../tests/common/cases.rs"]
mod cases;
#[allow(dead_code)]
#[path = "../../tests/common/dense.rs"]
mod dense;

libfuzzer_sys::fuzz_target!(|case: cases::BackendCase| cases::check_backends(&case));
