//! Build script: decides which SIMD kernels can be compiled, and names
//! the compiler for reports (`RIBBON_RUSTC_VERSION`, the `rustc --version`
//! line, which `examples/report.rs` reads with `option_env!`; the library
//! itself never reads it).
//!
//! - `ribbon_x86_kernels`: x86_64 with SSE2 in the target's ABI. Soft-float
//!   targets such as `x86_64-unknown-none` cannot take vector kernels at all.
//! - `ribbon_avx512_kernels`: additionally Rust 1.89+, where the AVX-512
//!   intrinsics became stable (the MSRV is 1.89 now, so this holds for
//!   every supported compiler; the check stays for clarity).
//! - `ribbon_neon_kernels`: little-endian aarch64 with NEON.
//!
//! A backend whose kernels are compiled out is reported unavailable.
//!
//! - `ribbon_host_build`: the target is the host (the C ABI test drives
//!   cargo, cc and nm and cannot run from a cross-compiled test binary).
//! - `ribbon_unoptimized`: this crate is compiled without optimization
//!   (`opt-level = 0`, as in a dependent's debug build). The SIMD kernels'
//!   intrinsics are then function calls, slower than the scalar kernel,
//!   so `Backend::detect` picks scalar code.

use std::env;
use std::process::Command;

/// `rustc --version` of the compiler building this crate, one line.
fn rustc_version() -> Option<String> {
    let rustc = env::var_os("RUSTC")?;
    let out = Command::new(rustc).arg("--version").output().ok()?;
    let text = String::from_utf8(out.stdout).ok()?;
    Some(text.trim().to_string()).filter(|t| !t.is_empty() && !t.contains('\n'))
}

fn rustc_minor(version_line: &str) -> Option<u32> {
    // "rustc 1.89.0 (...)" or "rustc 1.97.0-nightly (...)"
    let version = version_line.split_whitespace().nth(1)?;
    let mut parts = version.split('.');
    if parts.next()? != "1" {
        return None;
    }
    parts.next()?.parse().ok()
}

fn main() {
    println!("cargo::rerun-if-changed=build.rs");
    println!("cargo::rerun-if-env-changed=RUSTC");
    for cfg in [
        "ribbon_x86_kernels",
        "ribbon_avx512_kernels",
        "ribbon_neon_kernels",
        "ribbon_host_build",
        "ribbon_unoptimized",
    ] {
        println!("cargo::rustc-check-cfg=cfg({cfg})");
    }
    let rustc = rustc_version();
    if let Some(line) = &rustc {
        println!("cargo::rustc-env=RIBBON_RUSTC_VERSION={line}");
    }
    let var = |name: &str| env::var(name).unwrap_or_default();
    let arch = var("CARGO_CFG_TARGET_ARCH");
    let features = var("CARGO_CFG_TARGET_FEATURE");
    let has = |feature: &str| features.split(',').any(|f| f == feature);
    if arch == "x86_64" && has("sse2") {
        println!("cargo::rustc-cfg=ribbon_x86_kernels");
        if rustc
            .as_deref()
            .and_then(rustc_minor)
            .is_some_and(|minor| minor >= 89)
        {
            println!("cargo::rustc-cfg=ribbon_avx512_kernels");
        }
    }
    if arch == "aarch64" && var("CARGO_CFG_TARGET_ENDIAN") == "little" && has("neon") {
        println!("cargo::rustc-cfg=ribbon_neon_kernels");
    }
    // OPT_LEVEL is this package's own (a profile override included).
    println!("cargo::rerun-if-env-changed=OPT_LEVEL");
    if var("OPT_LEVEL") == "0" {
        println!("cargo::rustc-cfg=ribbon_unoptimized");
    }
    // Tests that drive host tools (cargo, cc, nm) skip cross builds, whose
    // test binaries run under an emulator.
    if var("TARGET") == var("HOST") {
        println!("cargo::rustc-cfg=ribbon_host_build");
    }
}
