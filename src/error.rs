//! The one error type of the crate.

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
    /// A short, static description (also used by the C ABI).
    pub const fn as_str(self) -> &'static str {
        match self {
            Error::InvalidBitsPerKey => "bits per key must be positive and need at most 64 columns",
            Error::InvalidFpRate => {
                "false-positive target must be 1 in 2 or rarer, at most 64 columns"
            }
            Error::BudgetTooSmall => "byte budget too small for the header and one block",
            Error::TooManyKeys => "more key hashes than the plan was made for",
            Error::TooLarge => "filter size does not fit in this platform's address space",
            Error::ScratchTooSmall => "scratch buffer smaller than Plan::scratch_words()",
            Error::OutputTooSmall => "output buffer smaller than Plan::filter_bytes()",
            Error::LengthMismatch => "batch output length differs from the number of hashes",
            Error::ConstructionFailed => "construction failed with every seed tried",
            Error::BadMagic => "not a ribbon-kernel filter (bad magic)",
            Error::UnsupportedVersion => "unsupported filter format version",
            Error::CorruptHeader => "corrupt filter header",
            Error::Truncated => "filter bytes truncated",
            Error::TrailingBytes => "filter bytes longer than the header says",
            Error::BackendUnavailable => "backend not available on this CPU or build",
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
