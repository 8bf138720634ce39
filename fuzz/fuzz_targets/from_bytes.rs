//! Arbitrary bytes into `FilterRef::from_bytes`: refused, or a filter that
//! every backend queries identically, single and batch, in bounds.
#![no_main]

#[allow(dead_code)]
#[path = "../../tests/common/cases.rs"]
mod cases;
#[allow(dead_code)]
#[path = "../../tests/common/dense.rs"]
mod dense;

libfuzzer_sys::fuzz_target!(|data: &[u8]| cases::check_bytes(data));
