//! `ribbon_kernel::rocksdb` against numbers RocksDB itself produces: the
//! values its unit tests pin (`util/bloom_test.cc`, `util/hash_test.cc`)
//! and digests of filter blocks RocksDB wrote, as collected in the
//! project's RocksDB filter specification ("SPEC x.y" below names its
//! sections). Then round trips on every backend, and hostile bytes.
//!
//! The tests are in `tests/rocksdb/suite.rs` and need the `rocksdb`
//! feature: `cargo test --features rocksdb --test rocksdb`. Without it,
//! this file holds one ignored test whose reason says so, so that a plain
//! `cargo test` reports the suite as skipped rather than as 0 tests.

#[cfg(feature = "rocksdb")]
mod common;

#[cfg(feature = "rocksdb")]
#[path = "rocksdb/suite.rs"]
mod suite;

/// Stands for the suite when the feature is off. Ignored, so `cargo test`
/// prints it with the reason; run anyway (`-- --include-ignored`), it
/// fails, since nothing of the suite ran.
#[cfg(not(feature = "rocksdb"))]
#[test]
#[ignore = "skipped: the RocksDB suite needs the `rocksdb` feature \
            (cargo test --features rocksdb --test rocksdb)"]
fn rocksdb_suite_skipped_without_the_rocksdb_feature() {
    panic!(
        "the RocksDB suite was not compiled: run `cargo test --features rocksdb --test rocksdb`"
    );
}
