//! The incremental banding API against dense Gaussian elimination on small
//! systems, and the finished solution against every added equation.
#![no_main]

#[allow(dead_code)]
#[path = "../../tests/common/cases.rs"]
mod cases;
#[allow(dead_code)]
#[path = "../../tests/common/dense.rs"]
mod dense;

libfuzzer_sys::fuzz_target!(|case: cases::BandingCase| cases::check_banding(&case));
