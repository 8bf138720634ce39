//! Arbitrary bytes into `ShardedFilterRef::from_bytes` (issue 42): refused,
//! or a sharded filter whose single and batch queries agree with its
//! shards, in bounds. Seed it with `tests/fuzz_regressions/sharded_from_bytes/`.
#![no_main]

#[path = "../../tests/common/sharded_cases.rs"]
mod sharded_cases;

libfuzzer_sys::fuzz_target!(|data: &[u8]| sharded_cases::check_sharded_bytes(data));
