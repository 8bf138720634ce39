//! `no_std` Ribbon filters (Dillinger & Walzer, *Ribbon filter: practically
//! smaller than Bloom and Xor*, 2021) in memory the caller provides, with
//! SIMD queries chosen at run time and a C ABI.
//!
//! ```sh
//! cargo add ribbon-kernel
//! ```
//!
//! ```
//! use ribbon_kernel::{Filter, FilterRef};
//!
//! // A storage engine writes a sorted file and a filter of its keys beside it.
//! let file_keys = (0..10_000).map(|i| format!("user:{i:06}")); // any iterator of byte strings
//! let filter = Filter::from_keys(file_keys, 100)?; // at most 1 false positive in 100
//! assert!(filter.contains_key("user:004242")); // members: always yes
//!
//! let bytes: Vec<u8> = filter.into(); // store them beside the file
//! let loaded = FilterRef::from_bytes(&bytes)?; // validated, zero-copy, any alignment
//! if loaded.contains_key(b"user:123456") { /* only then read the file */ }
//! println!("{} keys, FP rate {}", loaded.len(), loaded.estimated_fp_rate()); // 1 in 103
//! # Ok::<(), ribbon_kernel::Error>(())
//! ```
//!
//! A Ribbon filter is a static approximate-membership filter: build it once
//! from a set of keys (or of 64-bit key hashes), then ask whether a key may
//! be in the set. Members always answer yes; other keys answer yes with the
//! false-positive (FP) rate planned for. It takes 5-10 % more space than
//! the minimum of `log2(1/FP)` bits per key (Bloom filters: 44-58 %).
//!
//! # Where to start
//!
//! - [`Filter`] (feature `alloc`): the owning filter, built in one line
//!   from keys with [`Filter::from_keys`] (any iterator of byte strings)
//!   or hashes with [`Filter::from_hashes`], or from a [`Plan`] with
//!   [`Filter::build_keys`] and [`Filter::build`]; queried with
//!   [`Filter::contains_key`] and [`Filter::contains`]; generic over what
//!   owns the bytes (`Vec<u8>`, `Arc<[u8]>`, a memory map). [`Retrieval`]
//!   is its twin for a value per key.
//! - [`Plan`]: sizing from bits per key ([`Plan::new`]), an FP rate
//!   ([`Plan::for_fp_rate`]) or a byte budget ([`Plan::for_bytes`]), and
//!   [`Plan::build`], which needs no allocator: it writes into caller
//!   scratch and a caller output buffer. [`Plan::banding`] builds from a
//!   stream of keys.
//! - [`FilterRef`]: the validated, zero-copy view over serialized bytes of
//!   any alignment, with [`FilterRef::contains_key`],
//!   [`FilterRef::contains`] and [`FilterRef::contains_batch`].
//! - [`FpRate`]: FP rates with their unit in every accessor
//!   ([`FpRate::one_in`], [`FpRate::parts_per_million`], ...), from
//!   [`FilterRef::estimated_fp_rate`] and [`Plan::column_fp_rate`].
//! - [`hash_key`]: a stable 64-bit key hash (XXH3-64) for keys that are not
//!   hashed yet.
//! - [`Backend`]: the instruction sets queries use (detected once; can be
//!   forced).
//! - [`bounds`]: `const fn` size bounds for buffers sized at compile time.
//! - [`rocksdb`][rocksdb-module] (feature `rocksdb`): RocksDB's filter blocks, byte for byte.
//! - [`ffi`][ffi-module] (feature `capi`): the C ABI and its header.
//! - [`guide`]: how to use the crate, with examples: building without an
//!   allocator, key hashing, streaming, retrieval, kinds and widths, the FP
//!   promise (`docs/guide.md` in the repository).
//!
//! Choosing a kind and width: [`Kind::Homogeneous`] with [`Width::W64`]
//! (the defaults) never fails to build and queries fastest, at about 10 %
//! over the minimum space; [`Width::W128`] halves that overhead for slower
//! builds and queries; the Standard kinds give an exact `2^-r` FP rate;
//! [`Kind::Bumped`] also does, within 0.1-0.2 % of the minimum space, for
//! slower builds and queries (its size is known once it is built).
//!
//! # Glossary
//!
//! - **key hash**: the 64-bit value a filter stores and queries. Hash your
//!   keys with [`hash_key`] or any good 64-bit hash.
//! - **FP rate**: the share of non-members a filter answers yes for;
//!   `one_in = 100` means at most 1 in 100.
//! - **millibits** (per key): thousandths of a bit, the unit of budgets:
//!   `7_700` millibits per key is 7.7 bits per key. Counted as RocksDB
//!   does: the payload only, not the 48-byte header.
//! - **slot**: one row of the linear system; a filter has a few percent
//!   more slots than keys.
//! - **ribbon width** `w` (64 or 128): how many consecutive slots one key's
//!   equation may touch; wider is smaller but slower.
//! - **column**: one bit of solution per slot. `r` columns give an FP rate
//!   of about `2^-r`; a fractional number of columns (some blocks with
//!   `r`, some with `r + 1`) makes every bits-per-key budget usable.
//! - **block**: `w` consecutive slots, the unit in which columns are
//!   stored.
//! - **ICML** (interleaved column-major layout): the solution stored block
//!   by block, each block as its columns one after the other, one `w`-bit
//!   word per column. A query reads the words of the one or two blocks its
//!   slots fall in.
//! - **kind**: the construction ([`Kind`]). Homogeneous Ribbon solves
//!   `h(x)·Z = 0` and never fails; Standard Ribbon stores a fingerprint per
//!   key and retries with another **seed** when a system has no solution.
//! - **scratch**: working memory a build needs and gives back
//!   ([`Plan::scratch_words`], in `u64` words).
//! - **backend**: the instruction set a query or back-substitution runs
//!   on: scalar, portable SIMD, AVX2, AVX-512, NEON.
//!
//! # Debug builds are slow
//!
//! A debug build of your program compiles this crate unoptimized too:
//! queries then take 200-400 ns per key (the scalar kernel, which
//! [`Backend::detect`] picks there) instead of 5-20 ns. To keep a debug
//! build of your program but an optimised filter, add this to your
//! `Cargo.toml`; queries are then within 1-3 times their release speed
//! ([`guide`] has the figures):
//!
//! ```toml
//! [profile.dev.package.ribbon-kernel]
//! opt-level = 3
//! ```
//!
//! # Features
//!
//! | feature | default | adds |
//! |---|---|---|
//! | `std` | yes | `std::error::Error` for [`Error`]; implies `alloc` |
//! | `alloc` | via `std` | [`Filter`] and [`Retrieval`], the owning twins of [`FilterRef`] and [`RetrievalRef`] |
//! | `capi` | no | the C ABI, [`ffi`][ffi-module] |
//! | `staticlib` | no | `capi` plus the panic handler a C static library needs |
//! | `rocksdb` | no | [`rocksdb`][rocksdb-module]: RocksDB's Ribbon and Bloom filter blocks |
//! | `serde` | no | `Serialize` and `Deserialize` for [`FilterRef`], [`RetrievalRef`] (borrowed: zero-copy) and, with `alloc`, [`Filter`] and [`Retrieval`]: their bytes, validated when deserialized |
//!
//! Without default features the crate is `#![no_std]`, allocates nothing
//! and uses no floating point (the `rocksdb` module does, as RocksDB's
//! sizing does).
//!
//! The `rocksdb` and `ffi` modules exist in builds with their features (as
//! on docs.rs); elsewhere their links lead to the feature table.
//!
#![cfg_attr(feature = "rocksdb", doc = "[rocksdb-module]: crate::rocksdb")]
#![cfg_attr(not(feature = "rocksdb"), doc = "[rocksdb-module]: #features")]
#![cfg_attr(feature = "capi", doc = "[ffi-module]: crate::ffi")]
#![cfg_attr(not(feature = "capi"), doc = "[ffi-module]: #features")]
#![no_std]
#![cfg_attr(docsrs, feature(doc_cfg))]
#![forbid(unsafe_op_in_unsafe_fn)]
#![warn(missing_docs, missing_debug_implementations)]

#[cfg(feature = "alloc")]
extern crate alloc;
#[cfg(any(feature = "std", test))]
extern crate std;

#[path = "../arch/mod.rs"]
mod arch;
mod arith;
mod backend;
mod band;
pub mod bounds;
mod bump;
mod bumped_layout;
// Bumped Ribbon's reference model, which the tests check `bump` against.
#[cfg(test)]
mod bumped_study;
mod detect;
mod error;
mod filter;
mod fp;
mod hash;
mod kernels;
mod key_hash;
mod layered;
mod layout;
mod plan;
mod probe;
mod retrieval;
mod sharded;
mod sizing;
// The kit the integration tests, benches and examples share.
#[cfg(test)]
#[path = "../tests/common/kit.rs"]
mod test_kit;
mod word;

#[cfg(feature = "alloc")]
mod owned;
#[cfg(feature = "alloc")]
mod owned_retrieval;

#[cfg(feature = "capi")]
#[cfg_attr(docsrs, doc(cfg(feature = "capi")))]
pub mod ffi;

// `Serialize` and `Deserialize` for the views and the owning twins.
#[cfg(feature = "serde")]
mod serialize;

#[cfg(feature = "rocksdb")]
#[cfg_attr(docsrs, doc(cfg(feature = "rocksdb")))]
pub mod rocksdb;

// The guides in `docs/`, mounted so that rustdoc shows them and their
// examples run as doc tests.
#[doc = include_str!("../docs/guide.md")]
pub mod guide {
    #[cfg(feature = "rocksdb")]
    #[cfg_attr(docsrs, doc(cfg(feature = "rocksdb")))]
    #[doc = include_str!("../docs/rocksdb.md")]
    pub mod rocksdb {}
}

pub use backend::Backend;
pub use band::{AddOutcome, Banding};
pub use error::Error;
pub use filter::FilterRef;
pub use fp::FpRate;
pub use hash::Equation;
pub use key_hash::{hash_key, hash_key_with_seed, hash_keys};
pub use layout::{HEADER_BYTES, Kind, Width};
pub use plan::{
    HOMOGENEOUS_EXCESS_LIMIT_PPM, HOMOGENEOUS_SEEDS, MAX_MILLIBITS_PER_KEY, MAX_SEEDS,
    MIN_MILLIBITS_PER_KEY, Plan,
};
pub use retrieval::{MAX_VALUE_BITS, RetrievalPlan, RetrievalRef};
pub use sharded::{Partitioned, ShardJob, ShardJobs, ShardedPlan, shard_of};
pub use sizing::MAX_KEYS;

#[cfg(feature = "alloc")]
#[cfg_attr(docsrs, doc(cfg(feature = "alloc")))]
pub use sharded::{ShardedFilter, ShardedFilterRef};

#[cfg(feature = "alloc")]
#[cfg_attr(docsrs, doc(cfg(feature = "alloc")))]
pub use owned::Filter;
#[cfg(feature = "alloc")]
#[cfg_attr(docsrs, doc(cfg(feature = "alloc")))]
pub use owned_retrieval::Retrieval;

// The README's examples are tested with the crate's own.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
