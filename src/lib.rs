#![doc = include_str!("../README.md")]
#![no_std]
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
mod detect;
mod error;
mod filter;
mod fp;
mod hash;
mod kernels;
mod key_hash;
mod layout;
mod plan;
mod probe;
// The kit the integration tests, benches and examples share.
#[cfg(test)]
#[path = "../tests/common/kit.rs"]
mod test_kit;
mod word;

#[cfg(feature = "alloc")]
mod owned;

#[cfg(feature = "capi")]
pub mod ffi;

#[cfg(feature = "rocksdb")]
pub mod rocksdb;

pub use backend::Backend;
pub use band::{AddOutcome, Banding};
pub use error::Error;
pub use filter::FilterRef;
pub use hash::Equation;
pub use key_hash::{hash_key, hash_key_with_seed, hash_keys};
pub use layout::{HEADER_BYTES, Kind, Width};
pub use plan::{
    HOMOGENEOUS_EXCESS_LIMIT_PPM, HOMOGENEOUS_SEEDS, MAX_KEYS, MAX_MILLIBITS_PER_KEY, MAX_SEEDS,
    Plan,
};

#[cfg(feature = "alloc")]
pub use owned::Filter;
