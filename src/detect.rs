//! CPU feature detection without `std`, cached in an atomic.
//!
//! x86_64: CPUID (after checking the maximum leaf) and XGETBV, which says
//! whether the OS saves YMM (AVX2) and opmask/ZMM (AVX-512) state. Features
//! enabled at compile time need no CPUID. Under Miri (no CPUID) and on
//! freestanding targets (`target_os = "none"`, where the kernel decides
//! whether vector registers may be used) only compile-time features count.
//! aarch64: NEON is part of the target (`target_feature = "neon"`).

use core::sync::atomic::{AtomicU8, Ordering};

/// Detected instruction-set support, as bits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Features(u8);

impl Features {
    pub(crate) const AVX2: u8 = 1;
    pub(crate) const AVX512: u8 = 2;
    pub(crate) const NEON: u8 = 4;
    /// `wide`'s lane types are vector registers in this build (the
    /// portable backend then beats scalar): SSE2 on x86_64, `simd128` on
    /// wasm32, not under Miri. A compile-time fact; the backend itself
    /// runs everywhere.
    pub(crate) const PORTABLE_VECTORS: u8 = 8;
    /// Set once detection ran, so that 0 means "not yet".
    const KNOWN: u8 = 0x80;

    pub(crate) fn has(self, bit: u8) -> bool {
        self.0 & bit != 0
    }
}

static CACHE: AtomicU8 = AtomicU8::new(0);

/// The CPU's features, detected once and cached. Races are harmless: every
/// thread computes the same value.
pub(crate) fn features() -> Features {
    let cached = CACHE.load(Ordering::Relaxed);
    if cached & Features::KNOWN != 0 {
        return Features(cached);
    }
    let detected = detect() | Features::KNOWN;
    CACHE.store(detected, Ordering::Relaxed);
    Features(detected)
}

/// Features known at compile time (Miri, freestanding targets, or
/// `-C target-feature` / `target-cpu` builds).
fn compile_time() -> u8 {
    let mut bits = 0;
    if cfg!(all(ribbon_x86_kernels, target_feature = "avx2")) {
        bits |= Features::AVX2;
    }
    if cfg!(all(
        ribbon_avx512_kernels,
        target_feature = "avx2",
        target_feature = "avx512f",
        target_feature = "avx512vpopcntdq"
    )) {
        bits |= Features::AVX512;
    }
    if cfg!(ribbon_neon_kernels) {
        bits |= Features::NEON;
    }
    // Not under Miri: interpreted, `wide`'s intrinsics are far slower than
    // the scalar kernel (the whole suite ran twice as long), and the
    // backend tests still force the portable one there.
    if cfg!(all(
        not(miri),
        any(
            all(target_arch = "x86_64", target_feature = "sse2"),
            all(target_arch = "wasm32", target_feature = "simd128")
        )
    )) {
        bits |= Features::PORTABLE_VECTORS;
    }
    bits
}

#[cfg(all(ribbon_x86_kernels, not(miri), not(target_os = "none")))]
// CPUID intrinsics are safe functions from Rust 1.87 on, unsafe before.
#[allow(unused_unsafe)]
fn detect() -> u8 {
    use core::arch::x86_64::{__cpuid, __cpuid_count};

    let mut bits = compile_time();
    if bits & Features::AVX512 != 0 {
        return bits;
    }
    // SAFETY: CPUID exists on every x86_64 processor; leaf 0 is always valid.
    let max_leaf = unsafe { __cpuid(0) }.eax;
    if max_leaf < 7 {
        return bits;
    }
    // SAFETY: leaf 1 <= max_leaf (checked above).
    let leaf1 = unsafe { __cpuid(1) };
    let osxsave = leaf1.ecx & (1 << 27) != 0;
    let avx = leaf1.ecx & (1 << 28) != 0;
    if !(osxsave && avx) {
        return bits;
    }
    let xcr0 = xgetbv0();
    // XMM and YMM state (bits 1, 2); opmask, ZMM_Hi256, Hi16_ZMM (5, 6, 7).
    let ymm = xcr0 & 0b0000_0110 == 0b0000_0110;
    let zmm = xcr0 & 0b1110_0110 == 0b1110_0110;
    // SAFETY: leaf 7 <= max_leaf (checked above).
    let leaf7 = unsafe { __cpuid_count(7, 0) };
    let avx2 = leaf7.ebx & (1 << 5) != 0;
    let avx512f = leaf7.ebx & (1 << 16) != 0;
    let vpopcntdq = leaf7.ecx & (1 << 14) != 0;
    if ymm && avx2 {
        bits |= Features::AVX2;
        if cfg!(ribbon_avx512_kernels) && zmm && avx512f && vpopcntdq {
            bits |= Features::AVX512;
        }
    }
    bits
}

/// XCR0, the OS-enabled state components.
#[cfg(all(ribbon_x86_kernels, not(miri), not(target_os = "none")))]
fn xgetbv0() -> u64 {
    let (lo, hi): (u32, u32);
    // SAFETY: only called when CPUID.1:ECX.OSXSAVE is set, which means the OS
    // enabled XGETBV; reading XCR0 (ecx = 0) has no side effects.
    unsafe {
        core::arch::asm!(
            "xgetbv",
            in("ecx") 0u32,
            out("eax") lo,
            out("edx") hi,
            options(nomem, nostack, preserves_flags)
        );
    }
    (u64::from(hi) << 32) | u64::from(lo)
}

#[cfg(not(all(ribbon_x86_kernels, not(miri), not(target_os = "none"))))]
fn detect() -> u8 {
    compile_time()
}

#[cfg(all(test, feature = "std", target_arch = "x86_64", not(miri)))]
mod tests {
    use super::*;

    #[test]
    fn detection_agrees_with_std() {
        let f = Features(detect());
        let avx2 = std::is_x86_feature_detected!("avx2");
        assert_eq!(f.has(Features::AVX2), avx2);
        #[cfg(ribbon_avx512_kernels)]
        let avx512 = avx2
            && std::is_x86_feature_detected!("avx512f")
            && std::is_x86_feature_detected!("avx512vpopcntdq");
        #[cfg(not(ribbon_avx512_kernels))]
        let avx512 = false;
        assert_eq!(f.has(Features::AVX512), avx512);
        std::println!("detected: avx2 {avx2}, avx512 {avx512}");
        assert!(!f.has(Features::NEON));
    }
}
