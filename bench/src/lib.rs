//! Empty: this package exists for its example (`examples/compare.rs`) and
//! its criterion bench (`benches/ribbon.rs`); see `Cargo.toml`.
