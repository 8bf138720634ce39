//! The one error type of the crate.

use core::ffi::CStr;
use core::fmt;

/// Everything that can go wrong when planning, building, loading or querying
/// a filter. No operation of this crate panics on bad input; it returns one of
/// these instead.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Error {
    /// `millibits_per_key` is 0 or asks for more than 64 columns per slot.
    InvalidBitsPerKey,
    /// The false-positive target `one_in` is below 2 or needs more than 64
    /// columns per slot.
    InvalidFpRate,
    /// The byte budget cannot hold the header and one block of one column.
    BudgetTooSmall,
    /// More key hashes than the plan was made for, or a filter too large for
    /// this platform's address space.
    TooManyKeys,
    /// A size computed from the request or a header does not fit in `usize`.
    TooLarge,
    /// The scratch slice is shorter than [`crate::Plan::scratch_words`].
    ScratchTooSmall,
    /// The output buffer is shorter than [`crate::Plan::filter_bytes`].
    OutputTooSmall,
    /// A batch output slice does not have one entry per input hash.
    LengthMismatch,
    /// Standard Ribbon: every seed tried gave an inconsistent linear system.
    /// Nothing usable was written to the output buffer.
    ConstructionFailed,
    /// The bytes do not start with the filter magic.
    BadMagic,
    /// The format version is not one this build reads.
    UnsupportedVersion,
    /// A header field is out of range or inconsistent with another.
    CorruptHeader,
    /// The bytes are shorter than the header says the filter is.
    Truncated,
    /// The bytes are longer than the header says the filter is.
    TrailingBytes,
    /// The requested backend is not available on this CPU or build.
    BackendUnavailable,
}

impl Error {
    /// The status code the C ABI returns for this error (always negative;
    /// `include/ribbon_kernel.h` names them `RIBBON_ERR_*`).
    pub const fn code(self) -> i32 {
        match self {
            Error::InvalidBitsPerKey => -2,
            Error::InvalidFpRate => -3,
            Error::BudgetTooSmall => -4,
            Error::TooManyKeys => -5,
            Error::TooLarge => -6,
            Error::ScratchTooSmall => -7,
            Error::OutputTooSmall => -8,
            Error::LengthMismatch => -9,
            Error::ConstructionFailed => -10,
            Error::BadMagic => -11,
            Error::UnsupportedVersion => -12,
            Error::CorruptHeader => -13,
            Error::Truncated => -14,
            Error::TrailingBytes => -15,
            Error::BackendUnavailable => -16,
        }
    }

    /// Every error, in code order (for tests and the C header check).
    pub const ALL: [Error; 15] = [
        Error::InvalidBitsPerKey,
        Error::InvalidFpRate,
        Error::BudgetTooSmall,
        Error::TooManyKeys,
        Error::TooLarge,
        Error::ScratchTooSmall,
        Error::OutputTooSmall,
        Error::LengthMismatch,
        Error::ConstructionFailed,
        Error::BadMagic,
        Error::UnsupportedVersion,
        Error::CorruptHeader,
        Error::Truncated,
        Error::TrailingBytes,
        Error::BackendUnavailable,
    ];

    /// A short, static description.
    pub fn as_str(self) -> &'static str {
        self.message().to_str().unwrap_or("error")
    }

    /// The description as a NUL-terminated string (for the C ABI).
    pub const fn message(self) -> &'static CStr {
        match self {
            Error::InvalidBitsPerKey => {
                c"bits per key must be positive and need at most 64 columns"
            }
            Error::InvalidFpRate => {
                c"false-positive target must be 1 in 2 or rarer, at most 64 columns"
            }
            Error::BudgetTooSmall => c"byte budget too small for the header and one block",
            Error::TooManyKeys => c"more key hashes than the plan was made for",
            Error::TooLarge => c"filter size does not fit in this platform's address space",
            Error::ScratchTooSmall => c"scratch buffer smaller than the plan's scratch words",
            Error::OutputTooSmall => c"output buffer smaller than the plan's filter bytes",
            Error::LengthMismatch => c"batch output length differs from the number of hashes",
            Error::ConstructionFailed => c"construction failed with every seed tried",
            Error::BadMagic => c"not a ribbon-kernel filter (bad magic)",
            Error::UnsupportedVersion => c"unsupported filter format version",
            Error::CorruptHeader => c"corrupt filter header",
            Error::Truncated => c"filter bytes truncated",
            Error::TrailingBytes => c"filter bytes longer than the header says",
            Error::BackendUnavailable => c"backend not available on this CPU or build",
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(feature = "std")]
impl std::error::Error for Error {}
