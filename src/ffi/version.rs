//! The library's version (checked against the header's at compile time,
//! with the status codes), the status strings and the backend choice.

use core::ffi::c_char;

use super::{
    RIBBON_BACKEND_AUTO, RIBBON_ERR_INVALID_ARGUMENT, RIBBON_ERR_MISALIGNED, RIBBON_ERR_NULL,
    RIBBON_ERR_OVERLAP, RIBBON_ERR_UNINITIALIZED, RIBBON_OK, status,
};
use crate::backend::Backend;
use crate::error::Error;

/// A static, NUL-terminated description of a status code.
#[unsafe(no_mangle)]
pub extern "C" fn ribbon_status_str(status: i32) -> *const c_char {
    let text: &'static core::ffi::CStr = match status {
        RIBBON_OK => c"ok",
        RIBBON_ERR_NULL => c"NULL pointer",
        RIBBON_ERR_INVALID_ARGUMENT => c"unknown kind, width or backend",
        RIBBON_ERR_MISALIGNED => c"uint64_t pointer not 8-byte aligned",
        RIBBON_ERR_UNINITIALIZED => c"plan, filter, banding or retrieval struct not initialized",
        RIBBON_ERR_OVERLAP => c"buffers overlap",
        code => match Error::ALL.iter().find(|e| e.code() == code) {
            Some(e) => e.message(),
            None => c"unknown status",
        },
    };
    text.as_ptr().cast()
}

/// The backend new views and builds use (`RIBBON_BACKEND_*`).
#[unsafe(no_mangle)]
pub extern "C" fn ribbon_backend() -> u32 {
    Backend::current().code()
}

/// Forces the backend for views opened and builds run afterwards, or
/// returns to detection with `RIBBON_BACKEND_AUTO`.
#[unsafe(no_mangle)]
pub extern "C" fn ribbon_set_backend(backend: u32) -> i32 {
    let choice = match backend {
        RIBBON_BACKEND_AUTO => None,
        code => match Backend::from_code(code) {
            Some(b) => Some(b),
            None => return RIBBON_ERR_INVALID_ARGUMENT,
        },
    };
    status(Backend::force(choice).map_err(Error::code))
}

/// The library version as `(major << 16) | (minor << 8) | patch`; compare
/// with `RIBBON_VERSION_NUMBER` of the header a program was compiled with.
#[unsafe(no_mangle)]
pub extern "C" fn ribbon_version() -> u32 {
    VERSION_NUMBER
}

/// The library version as a static, NUL-terminated string ("0.1.0").
#[unsafe(no_mangle)]
pub extern "C" fn ribbon_version_str() -> *const c_char {
    VERSION_CSTR.as_ptr().cast()
}

const VERSION_MAJOR: u32 = parse_u32(env!("CARGO_PKG_VERSION_MAJOR"));
const VERSION_MINOR: u32 = parse_u32(env!("CARGO_PKG_VERSION_MINOR"));
const VERSION_PATCH: u32 = parse_u32(env!("CARGO_PKG_VERSION_PATCH"));
const VERSION_NUMBER: u32 = (VERSION_MAJOR << 16) | (VERSION_MINOR << 8) | VERSION_PATCH;
const VERSION_CSTR: &core::ffi::CStr =
    match core::ffi::CStr::from_bytes_with_nul(concat!(env!("CARGO_PKG_VERSION"), "\0").as_bytes())
    {
        Ok(s) => s,
        Err(_) => panic!("the package version has a NUL byte"),
    };

// The header's version macros must match Cargo.toml: checked at compile
// time, so a release cannot ship a stale header.
const HEADER: &str = include_str!("../../include/ribbon_kernel.h");
const _: () = {
    assert!(header_define(HEADER, "RIBBON_VERSION_MAJOR") == VERSION_MAJOR);
    assert!(header_define(HEADER, "RIBBON_VERSION_MINOR") == VERSION_MINOR);
    assert!(header_define(HEADER, "RIBBON_VERSION_PATCH") == VERSION_PATCH);
    assert!(VERSION_MINOR < 256 && VERSION_PATCH < 256);
};

/// The decimal number at the start of `bytes[from..]` and its digit count
/// (compile-time helper).
const fn decimal_at(bytes: &[u8], from: usize) -> (u32, usize) {
    let (mut value, mut digits) = (0u32, 0);
    while from + digits < bytes.len() && bytes[from + digits].is_ascii_digit() {
        value = value * 10 + (bytes[from + digits] - b'0') as u32;
        digits += 1;
    }
    (value, digits)
}

/// `text` as a decimal number (compile-time helper; anything else fails
/// the build).
const fn parse_u32(text: &str) -> u32 {
    let (value, digits) = decimal_at(text.as_bytes(), 0);
    assert!(digits > 0 && digits == text.len());
    value
}

/// Where the value of `#define NAME ` starts in `text` (compile-time
/// helper; a missing macro fails the build).
const fn define_value_at(text: &[u8], name: &[u8]) -> usize {
    let prefix = b"#define ";
    let mut at = 0;
    while at + prefix.len() + name.len() < text.len() {
        let mut matches = true;
        let mut i = 0;
        while i < prefix.len() + name.len() + 1 {
            let want = if i < prefix.len() {
                prefix[i]
            } else if i < prefix.len() + name.len() {
                name[i - prefix.len()]
            } else {
                b' '
            };
            if text[at + i] != want {
                matches = false;
                break;
            }
            i += 1;
        }
        if matches {
            return at + prefix.len() + name.len() + 1;
        }
        at += 1;
    }
    panic!("a macro the ABI checks is missing from include/ribbon_kernel.h")
}

/// The value of `#define NAME <decimal>` in `text` (compile-time helper).
const fn header_define(text: &str, name: &str) -> u32 {
    let text = text.as_bytes();
    let (value, digits) = decimal_at(text, define_value_at(text, name.as_bytes()));
    assert!(digits > 0);
    value
}

/// The value of `#define NAME 0` or `#define NAME (-<decimal>)` in `text`:
/// a status code (compile-time helper).
const fn header_status(text: &str, name: &str) -> i32 {
    let text = text.as_bytes();
    let at = define_value_at(text, name.as_bytes());
    if at + 2 < text.len() && text[at] == b'(' && text[at + 1] == b'-' {
        let (value, digits) = decimal_at(text, at + 2);
        assert!(digits > 0 && at + 2 + digits < text.len() && text[at + 2 + digits] == b')');
        -(value as i32)
    } else {
        let (value, digits) = decimal_at(text, at);
        assert!(digits > 0);
        value as i32
    }
}

// The status codes only the C ABI has (the others are `Error::code`, which
// tests/c_abi.rs compares with the header) must match the header too.
const _: () = {
    assert!(header_status(HEADER, "RIBBON_OK") == RIBBON_OK);
    assert!(header_status(HEADER, "RIBBON_ERR_NULL") == RIBBON_ERR_NULL);
    assert!(header_status(HEADER, "RIBBON_ERR_INVALID_ARGUMENT") == RIBBON_ERR_INVALID_ARGUMENT);
    assert!(header_status(HEADER, "RIBBON_ERR_MISALIGNED") == RIBBON_ERR_MISALIGNED);
    assert!(header_status(HEADER, "RIBBON_ERR_UNINITIALIZED") == RIBBON_ERR_UNINITIALIZED);
    assert!(header_status(HEADER, "RIBBON_ERR_OVERLAP") == RIBBON_ERR_OVERLAP);
};
