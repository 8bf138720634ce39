//! Build script: detects what the compiler offers, nothing else.
//!
//! The AVX-512 intrinsics this crate's `arch/x86_64/avx512.rs` kernels use
//! became stable in Rust 1.89; on older compilers (the MSRV is 1.85) the
//! AVX-512 backend is compiled out and reported unavailable.

use std::env;
use std::process::Command;

fn rustc_minor() -> Option<u32> {
    let rustc = env::var_os("RUSTC")?;
    let out = Command::new(rustc).arg("--version").output().ok()?;
    let text = String::from_utf8(out.stdout).ok()?;
    // "rustc 1.89.0 (...)" or "rustc 1.97.0-nightly (...)"
    let version = text.split_whitespace().nth(1)?;
    let mut parts = version.split('.');
    if parts.next()? != "1" {
        return None;
    }
    parts.next()?.parse().ok()
}

fn main() {
    println!("cargo::rerun-if-changed=build.rs");
    println!("cargo::rerun-if-env-changed=RUSTC");
    println!("cargo::rustc-check-cfg=cfg(ribbon_avx512_intrinsics)");
    if rustc_minor().is_some_and(|minor| minor >= 89) {
        println!("cargo::rustc-cfg=ribbon_avx512_intrinsics");
    }
}
