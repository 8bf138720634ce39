//! Build from arbitrary hashes and plans: no false negative, single equals
//! batch, every backend builds the same bytes and answers the same.
#![no_main]

#[allow(dead_code)]
#[path = "../../tests/common/cases.rs"]
mod cases;
#[allow(dead_code)]
#[path = "../../tests/common/dense.rs"]
mod dense;

libfuzzer_sys::fuzz_target!(|case: cases::BuildCase| cases::check_build(&case));
