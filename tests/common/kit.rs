//! The kit every test, bench and example shares: the SplitMix64 stream
//! and the backend check that `RIBBON_REQUIRE_BACKENDS` drives. It does not
//! name the crate, so that the crate's own unit tests (as
//! `crate::test_kit`), `tests/common`, `benches/` and `examples/` all
//! include this one file (`#[path = ".../tests/common/kit.rs"] mod kit;`).
#![allow(dead_code)]

/// One step of SplitMix64: a fixed, portable stream of well-mixed 64-bit
/// values from any starting `state`.
pub fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The backend names `RIBBON_REQUIRE_BACKENDS` lists (comma-separated;
/// `.ci/run` sets it from the CPU's flags).
pub fn required_backends() -> std::vec::Vec<std::string::String> {
    std::env::var("RIBBON_REQUIRE_BACKENDS")
        .unwrap_or_default()
        .split(',')
        .map(str::trim)
        .filter(|name| !name.is_empty())
        .map(std::string::String::from)
        .collect()
}

/// Whether the backend `name` runs here (`available`). When it does not,
/// says so on stderr, and fails if `RIBBON_REQUIRE_BACKENDS` lists it: a
/// skipped backend is never reported as passed.
pub fn runnable(name: &str, available: bool) -> bool {
    if available {
        return true;
    }
    assert!(
        !required_backends().iter().any(|required| required == name),
        "backend {name} is required by RIBBON_REQUIRE_BACKENDS but not available"
    );
    std::eprintln!("SKIPPED: backend {name} is not available on this CPU or build");
    false
}
