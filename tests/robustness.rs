//! Builds stay inside the memory they were given, on every backend.

mod common;

use common::{KINDS, WIDTHS, hashes};
use ribbon_kernel::{AddOutcome, Backend, FilterRef, Kind, Plan};

const GUARD: usize = 64;
const SCRATCH_SENTINEL: u64 = 0xdead_beef_f00d_cafe;
const OUT_SENTINEL: u8 = 0xa5;

#[test]
fn builds_write_only_inside_out_and_scratch() {
    let counts: &[usize] = if cfg!(miri) {
        &[0, 3, 70]
    } else {
        &[0, 1, 3, 70, 1000, 5000]
    };
    for kind in KINDS {
        for width in WIDTHS {
            for &n in counts {
                let keys = hashes(n as u64 + 17, n);
                for backend in Backend::ALL.into_iter().filter(|b| b.is_available()) {
                    let plan = Plan::new(kind, width, n, 6_500)
                        .unwrap()
                        .with_backend(backend)
                        .unwrap();
                    let (sw, fb) = (plan.scratch_words(), plan.filter_bytes());
                    let mut scratch = vec![SCRATCH_SENTINEL; sw + 2 * GUARD];
                    // The output slice is longer than the filter: the bytes
                    // past filter_bytes() must stay untouched too.
                    let mut out = vec![OUT_SENTINEL; fb + 2 * GUARD + 13];
                    let view = plan
                        .build(
                            &keys,
                            &mut scratch[GUARD..GUARD + sw],
                            &mut out[GUARD..GUARD + fb + 13],
                        )
                        .unwrap();
                    // A Bumped build writes at most the plan's bytes.
                    let len = view.filter_bytes();
                    if kind == Kind::Bumped {
                        assert!(len <= fb);
                    } else {
                        assert_eq!(len, fb);
                    }
                    let (before, rest) = scratch.split_at(GUARD);
                    assert!(
                        before
                            .iter()
                            .chain(&rest[sw..])
                            .all(|&w| w == SCRATCH_SENTINEL)
                    );
                    assert!(out[..GUARD].iter().all(|&b| b == OUT_SENTINEL));
                    assert!(
                        out[GUARD + fb..].iter().all(|&b| b == OUT_SENTINEL),
                        "{kind:?} {width:?} n={n} {}: wrote past filter_bytes",
                        backend.name()
                    );
                    let view = FilterRef::from_bytes(&out[GUARD..GUARD + len]).unwrap();
                    assert!(keys.iter().all(|&h| view.contains(h)));
                }
            }
        }
    }
}

#[test]
fn incremental_banding_writes_only_inside_its_buffers() {
    // Bumped Ribbon has no fixed-size plans and no incremental banding.
    for kind in KINDS.into_iter().filter(|&k| k != Kind::Bumped) {
        for width in WIDTHS {
            let plan = Plan::with_slots(kind, width, 300, 5_500).unwrap();
            let (sw, fb) = (plan.scratch_words(), plan.filter_bytes());
            let mut scratch = vec![SCRATCH_SENTINEL; sw + 2 * GUARD];
            let mut out = vec![OUT_SENTINEL; fb + 2 * GUARD];
            let mut banding = plan.banding(&mut scratch[GUARD..GUARD + sw]).unwrap();
            // Far more keys than slots: Standard stops at the first
            // inconsistency, Homogeneous at its capacity.
            for h in hashes(4, if cfg!(miri) { 400 } else { 2000 }) {
                if matches!(banding.add(h), AddOutcome::Inconsistent | AddOutcome::Full) {
                    break;
                }
            }
            banding.finish(&mut out[GUARD..GUARD + fb]).unwrap();
            let (before, rest) = scratch.split_at(GUARD);
            assert!(
                before
                    .iter()
                    .chain(&rest[sw..])
                    .all(|&w| w == SCRATCH_SENTINEL)
            );
            assert!(
                out[..GUARD]
                    .iter()
                    .chain(&out[GUARD + fb..])
                    .all(|&b| b == OUT_SENTINEL)
            );
        }
    }
}
