//! Arbitrary bytes into `RetrievalRef::from_bytes`: refused, or a
//! structure that every backend evaluates identically, single and batch,
//! with every value below `2^value_bits`.
#![no_main]

#[allow(dead_code)]
#[path = "../../tests/common/retrieval_cases.rs"]
mod retrieval_cases;

libfuzzer_sys::fuzz_target!(|data: &[u8]| retrieval_cases::check_retrieval_bytes(data));
