//! Build retrieval structures from arbitrary widths, value bits, keys,
//! values and plans: only the documented errors, each exactly when its
//! condition holds; on success every key gets its value back on every
//! backend, single and batch, and every backend builds the same bytes.
#![no_main]

#[allow(dead_code)]
#[path = "../../tests/common/retrieval_cases.rs"]
mod retrieval_cases;

libfuzzer_sys::fuzz_target!(|case: retrieval_cases::RetrievalBuildCase| {
    retrieval_cases::check_retrieval_build(&case)
});
