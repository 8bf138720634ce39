//! `serde` support (feature `serde`): filters and retrieval structures
//! serialize as their bytes (the crate's own format) and deserialize
//! through the same validation as `from_bytes`.
//!
//! The views borrow: `FilterRef<'a>` and `RetrievalRef<'a>` deserialize
//! only from formats that lend bytes out of their input (the format has
//! no alignment requirement, so any offset works); other inputs are a
//! serde error, never a copy made behind the caller's back. The owning
//! `Filter` and `Retrieval` (feature `alloc`) deserialize from any
//! format.

use core::fmt;

use serde::de::{self, Deserialize, Deserializer, Visitor};
use serde::ser::{Serialize, Serializer};

use crate::filter::FilterRef;
use crate::retrieval::RetrievalRef;

impl Serialize for FilterRef<'_> {
    /// The serialized bytes, as serde bytes.
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_bytes(self.as_bytes())
    }
}

impl Serialize for RetrievalRef<'_> {
    /// The serialized bytes, as serde bytes.
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_bytes(self.as_bytes())
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for FilterRef<'a> {
    /// Borrows the bytes from the input and validates them as
    /// [`FilterRef::from_bytes`] does (checksum included); a validation
    /// error is the deserializer's error, with the [`crate::Error`]'s
    /// message. Needs a format that lends bytes (bincode or postcard from
    /// a slice, for example): bytes the format cannot lend (JSON, a
    /// reader) are an error, where the owning `Filter` would copy them.
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let bytes = deserializer.deserialize_bytes(BorrowedBytes)?;
        FilterRef::from_bytes(bytes).map_err(de::Error::custom)
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for RetrievalRef<'a> {
    /// As for [`FilterRef`]: borrowed bytes, validated as
    /// [`RetrievalRef::from_bytes`] does.
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let bytes = deserializer.deserialize_bytes(BorrowedBytes)?;
        RetrievalRef::from_bytes(bytes).map_err(de::Error::custom)
    }
}

/// Accepts only bytes borrowed from the input.
struct BorrowedBytes;

impl<'de> Visitor<'de> for BorrowedBytes {
    type Value = &'de [u8];

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(
            "bytes borrowed from the input (a view needs a format that lends bytes; \
             deserialize the owning Filter or Retrieval to copy them)",
        )
    }

    fn visit_borrowed_bytes<E: de::Error>(self, bytes: &'de [u8]) -> Result<&'de [u8], E> {
        Ok(bytes)
    }
}

#[cfg(feature = "alloc")]
mod owned {
    use alloc::vec::Vec;
    use core::fmt;

    use serde::de::{self, Deserialize, Deserializer, SeqAccess, Visitor};
    use serde::ser::{Serialize, Serializer};

    use crate::owned::Filter;
    use crate::owned_retrieval::Retrieval;

    impl<B: AsRef<[u8]>> Serialize for Filter<B> {
        /// The serialized bytes, as serde bytes (the same as the view's).
        fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
            serializer.serialize_bytes(self.as_bytes())
        }
    }

    impl<B: AsRef<[u8]>> Serialize for Retrieval<B> {
        /// The serialized bytes, as serde bytes (the same as the view's).
        fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
            serializer.serialize_bytes(self.as_bytes())
        }
    }

    impl<'de> Deserialize<'de> for Filter {
        /// Takes the bytes from any format (a buffer the format owns
        /// without a copy, borrowed bytes or a sequence of numbers with
        /// one) and validates them as [`Filter::from_bytes`] does; a
        /// validation error is the deserializer's error.
        fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
            let bytes = deserializer.deserialize_byte_buf(OwnedBytes)?;
            Filter::from_bytes(bytes).map_err(de::Error::custom)
        }
    }

    impl<'de> Deserialize<'de> for Retrieval {
        /// As for [`Filter`]: any format, validated as
        /// [`Retrieval::from_bytes`] does.
        fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
            let bytes = deserializer.deserialize_byte_buf(OwnedBytes)?;
            Retrieval::from_bytes(bytes).map_err(de::Error::custom)
        }
    }

    /// Bytes in any form, into a `Vec<u8>`.
    struct OwnedBytes;

    /// The most a sequence's length hint reserves up front: the hint
    /// comes from the input, which may lie.
    const MAX_RESERVE: usize = 64 * 1024;

    impl<'de> Visitor<'de> for OwnedBytes {
        type Value = Vec<u8>;

        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("the bytes of a serialized structure")
        }

        fn visit_bytes<E: de::Error>(self, bytes: &[u8]) -> Result<Vec<u8>, E> {
            Ok(bytes.to_vec())
        }

        fn visit_byte_buf<E: de::Error>(self, bytes: Vec<u8>) -> Result<Vec<u8>, E> {
            Ok(bytes)
        }

        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Vec<u8>, A::Error> {
            let mut bytes = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(MAX_RESERVE));
            while let Some(byte) = seq.next_element::<u8>()? {
                bytes.push(byte);
            }
            Ok(bytes)
        }
    }
}
