//! The one error type of the crate.

use core::ffi::CStr;
use core::fmt;

/// Everything that can go wrong when planning, building, loading or querying
/// a filter. No operation of this crate panics on bad input; it returns one of
/// these instead.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Error {
    /// `millibits_per_key` is below [`crate::MIN_MILLIBITS_PER_KEY`] (one
    /// bit per key), above [`crate::MAX_MILLIBITS_PER_KEY`], or asks for
    /// more than 64 columns per slot.
    InvalidBitsPerKey,
    /// The false-positive target `one_in` is below 2 or needs more than 64
    /// columns per slot.
    InvalidFpRate,
    /// The byte budget cannot hold the header and one bit per key.
    BudgetTooSmall {
        /// The smallest budget, in bytes, that plans a filter for the keys.
        needed: usize,
        /// The budget given, in bytes.
        given: usize,
    },
    /// More keys than a plan accepts: more key hashes than the plan was
    /// made for, or more keys than [`crate::MAX_KEYS`] when planning.
    TooManyKeys {
        /// The most keys accepted.
        limit: u64,
        /// The number of keys given.
        given: u64,
    },
    /// A size computed from the request or a header does not fit in `usize`.
    TooLarge,
    /// The scratch slice is shorter than [`crate::Plan::scratch_words`].
    ScratchTooSmall {
        /// The `u64` words of scratch needed.
        needed: usize,
        /// The `u64` words given.
        given: usize,
    },
    /// The output buffer is shorter than [`crate::Plan::filter_bytes`].
    OutputTooSmall {
        /// The bytes needed.
        needed: usize,
        /// The bytes given.
        given: usize,
    },
    /// A batch output slice does not have one entry per input.
    LengthMismatch {
        /// The number of inputs (hashes or keys): the length `out` needs.
        expected: usize,
        /// The length of `out`.
        given: usize,
    },
    /// Standard Ribbon, [`Plan::with_slots`](crate::Plan::with_slots)
    /// plans only: every seed tried gave an inconsistent linear system, and
    /// the hashes are more than the slots, so the Homogeneous fallback of
    /// [`Plan::build`](crate::Plan::build) cannot hold them either.
    /// Retrieval: every seed tried failed (hashes crafted against seeds
    /// drawn from their own digest, or a plan of one seed; see
    /// [`RetrievalPlan::with_max_seeds`](crate::RetrievalPlan::with_max_seeds)).
    /// Nothing usable was written to the output buffer.
    ConstructionFailed,
    /// The bytes do not start with the filter magic.
    BadMagic,
    /// The format version is not one this build reads.
    UnsupportedVersion,
    /// A header field is out of range or inconsistent with another.
    CorruptHeader,
    /// The bytes are shorter than the header (or than the filter the
    /// header describes).
    Truncated {
        /// The bytes needed: the header's length, or the filter's.
        needed: usize,
        /// The bytes given.
        given: usize,
    },
    /// The bytes are longer than the header says the filter is.
    TrailingBytes {
        /// The filter's length, from its header.
        expected: usize,
        /// The bytes given.
        given: usize,
    },
    /// The requested backend is not available on this CPU or build.
    BackendUnavailable,
    /// The filter's kind does not do this: Bumped Ribbon has no
    /// fixed-size plans ([`Plan::with_slots`](crate::Plan::with_slots)) and
    /// no incremental banding ([`Plan::banding`](crate::Plan::banding)),
    /// since it sizes each layer for the keys the layer before bumped.
    Unsupported,
    /// A retrieval plan's `value_bits` is not in 1..=64.
    InvalidValueBits,
    /// A value given to a retrieval build has bits at or above the plan's
    /// `value_bits`: it would not come back whole.
    ValueTooWide {
        /// Its index in the values.
        index: usize,
    },
    /// A retrieval build was given the same hash twice with different
    /// values: no structure can return both.
    ConflictingValues,
    /// The bytes are shaped as a structure of this crate but their
    /// checksum does not match them: a flipped bit, a splice of two
    /// structures, bytes changed since they were written. Nothing was
    /// answered from them.
    ChecksumMismatch,
}

impl Error {
    /// The status code the C ABI returns for this error (always negative;
    /// `include/ribbon_kernel.h` names them `RIBBON_ERR_*`).
    pub const fn code(self) -> i32 {
        match self {
            Error::InvalidBitsPerKey => -2,
            Error::InvalidFpRate => -3,
            Error::BudgetTooSmall { .. } => -4,
            Error::TooManyKeys { .. } => -5,
            Error::TooLarge => -6,
            Error::ScratchTooSmall { .. } => -7,
            Error::OutputTooSmall { .. } => -8,
            Error::LengthMismatch { .. } => -9,
            Error::ConstructionFailed => -10,
            Error::BadMagic => -11,
            Error::UnsupportedVersion => -12,
            Error::CorruptHeader => -13,
            Error::Truncated { .. } => -14,
            Error::TrailingBytes { .. } => -15,
            Error::BackendUnavailable => -16,
            Error::Unsupported => -21,
            Error::InvalidValueBits => -22,
            Error::ValueTooWide { .. } => -23,
            Error::ConflictingValues => -24,
            Error::ChecksumMismatch => -25,
        }
    }

    /// Every error, in code order (for tests and the C header check); the
    /// sizes of the variants that carry some are 0.
    pub const ALL: [Error; 20] = [
        Error::InvalidBitsPerKey,
        Error::InvalidFpRate,
        Error::BudgetTooSmall {
            needed: 0,
            given: 0,
        },
        Error::TooManyKeys { limit: 0, given: 0 },
        Error::TooLarge,
        Error::ScratchTooSmall {
            needed: 0,
            given: 0,
        },
        Error::OutputTooSmall {
            needed: 0,
            given: 0,
        },
        Error::LengthMismatch {
            expected: 0,
            given: 0,
        },
        Error::ConstructionFailed,
        Error::BadMagic,
        Error::UnsupportedVersion,
        Error::CorruptHeader,
        Error::Truncated {
            needed: 0,
            given: 0,
        },
        Error::TrailingBytes {
            expected: 0,
            given: 0,
        },
        Error::BackendUnavailable,
        Error::Unsupported,
        Error::InvalidValueBits,
        Error::ValueTooWide { index: 0 },
        Error::ConflictingValues,
        Error::ChecksumMismatch,
    ];

    /// A short, static description (without the sizes that
    /// [`Display`](fmt::Display) adds).
    pub fn as_str(self) -> &'static str {
        self.message().to_str().unwrap_or("error")
    }

    /// The description as a NUL-terminated string (for the C ABI).
    pub const fn message(self) -> &'static CStr {
        match self {
            Error::InvalidBitsPerKey => {
                c"bits per key must be at least 1 and need at most 64 columns"
            }
            Error::InvalidFpRate => {
                c"false-positive target must be 1 in 2 or rarer, at most 64 columns"
            }
            Error::BudgetTooSmall { .. } => c"byte budget too small for one bit per key",
            Error::TooManyKeys { .. } => c"too many keys for the plan (or for any plan)",
            Error::TooLarge => c"filter size does not fit in this platform's address space",
            Error::ScratchTooSmall { .. } => {
                c"scratch buffer smaller than the plan's scratch words"
            }
            Error::OutputTooSmall { .. } => c"output buffer smaller than the plan's filter bytes",
            Error::LengthMismatch { .. } => {
                c"batch output length differs from the number of hashes"
            }
            Error::ConstructionFailed => c"construction failed with every seed tried",
            Error::BadMagic => c"not a ribbon-kernel filter (bad magic)",
            Error::UnsupportedVersion => {
                c"unsupported format version (this build reads version 2; version 1, without checksums, must be rebuilt)"
            }
            Error::CorruptHeader => c"corrupt filter header",
            Error::Truncated { .. } => c"filter bytes truncated",
            Error::TrailingBytes { .. } => c"filter bytes longer than the header says",
            Error::BackendUnavailable => c"backend not available on this CPU or build",
            Error::Unsupported => c"not supported by the filter's kind",
            Error::InvalidValueBits => c"value bits must be 1 to 64",
            Error::ValueTooWide { .. } => c"a value has more bits than the plan's value bits",
            Error::ConflictingValues => c"the same hash was given with different values",
            Error::ChecksumMismatch => {
                c"checksum mismatch: the bytes changed since they were written"
            }
        }
    }
}

impl fmt::Display for Error {
    /// The static description, and what was needed and given where the
    /// error knows.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Error::BudgetTooSmall { needed, given } => write!(
                f,
                "byte budget too small: {given} bytes given, at least {needed} needed \
                 (header and one bit per key)"
            ),
            Error::TooManyKeys { limit, given } => {
                write!(f, "too many keys: {given} given, at most {limit} accepted")
            }
            Error::ScratchTooSmall { needed, given } => write!(
                f,
                "scratch buffer too small: {given} u64 words given, {needed} needed"
            ),
            Error::OutputTooSmall { needed, given } => write!(
                f,
                "output buffer too small: {given} bytes given, {needed} needed"
            ),
            Error::LengthMismatch { expected, given } => write!(
                f,
                "batch output length differs from the inputs: {given} entries for {expected} inputs"
            ),
            Error::Truncated { needed, given } => write!(
                f,
                "filter bytes truncated: {given} bytes given, {needed} needed"
            ),
            Error::TrailingBytes { expected, given } => write!(
                f,
                "filter bytes longer than the header says: {given} bytes given, the filter has {expected}"
            ),
            Error::ValueTooWide { index } => {
                write!(
                    f,
                    "a value has more bits than the plan's value bits: values[{index}]"
                )
            }
            e => f.write_str(e.as_str()),
        }
    }
}

#[cfg(feature = "std")]
#[cfg_attr(docsrs, doc(cfg(feature = "std")))]
impl std::error::Error for Error {}
