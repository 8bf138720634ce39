//! `Backend::force` changes a process-wide setting, so its test is the only
//! one in this binary: cargo runs each test binary as a process of its own,
//! and no other test can see the forced backend.

use ribbon_kernel::{Backend, Filter, Kind, Plan, Width};

#[test]
fn forcing_the_backend_is_process_wide_and_reversible() {
    let keys: Vec<u64> = (1..=500u64)
        .map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15))
        .collect();
    let plan = Plan::new(Kind::Standard, Width::W128, keys.len(), 8000).unwrap();
    let reference = Filter::build(&plan.with_backend(Backend::Scalar).unwrap(), &keys).unwrap();
    assert_eq!(Backend::current(), Backend::detect());
    for b in Backend::ALL {
        let forced = Backend::force(Some(b));
        assert_eq!(forced.is_ok(), b.is_available(), "{}", b.name());
        if forced.is_err() {
            // Refused: the previous choice stays.
            continue;
        }
        assert_eq!(Backend::current(), b);
        // New plans and views take the forced backend, and build the
        // same bytes.
        let filter = Filter::build(&plan, &keys).unwrap();
        assert_eq!(filter.view().backend(), b);
        assert_eq!(filter.as_bytes(), reference.as_bytes(), "{}", b.name());
    }
    Backend::force(None).unwrap();
    assert_eq!(Backend::current(), Backend::detect());
}
