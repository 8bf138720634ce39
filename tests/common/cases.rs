//! Fuzz cases and their checks, shared by the cargo-fuzz targets in `fuzz/`
//! and by `tests/fuzz_regressions.rs`, which replays saved inputs under
//! plain `cargo test`. A case's `Debug` output is a ready reproducer.

use arbitrary::Arbitrary;
use ribbon_kernel::{AddOutcome, Backend, Equation, Error, FilterRef, Kind, Plan, Width};

use super::dense::{DenseRow, DenseSolver, check_solution};

fn kind(code: u8) -> Kind {
    match code % 3 {
        0 => Kind::Homogeneous,
        1 => Kind::Standard,
        _ => Kind::StandardSmash,
    }
}

/// The kind of a build case: a quarter of the codes are Bumped Ribbon
/// (which has no fixed-size plans); the others keep [`kind`]'s meaning, so
/// saved inputs test what they tested.
fn build_kind(code: u8) -> Kind {
    match code % 4 {
        3 => Kind::Bumped,
        _ => kind(code),
    }
}

fn width(wide: bool) -> Width {
    if wide { Width::W128 } else { Width::W64 }
}

fn backends() -> impl Iterator<Item = Backend> {
    Backend::ALL.into_iter().filter(|b| b.is_available())
}

/// Queries `view` on every available backend, single and batch, and checks
/// they all agree with the scalar single answers, which are returned.
pub fn answers_on_every_backend(view: FilterRef<'_>, probes: &[u64]) -> Vec<bool> {
    let scalar = view.with_backend(Backend::Scalar).unwrap();
    let expect: Vec<bool> = probes.iter().map(|&h| scalar.contains(h)).collect();
    for backend in backends() {
        let v = view.with_backend(backend).unwrap();
        let mut batch = vec![false; probes.len()];
        v.contains_batch(probes, &mut batch).unwrap();
        assert_eq!(
            batch,
            expect,
            "{} batch differs from scalar",
            backend.name()
        );
        for (h, e) in probes.iter().zip(&expect) {
            assert_eq!(
                v.contains(*h),
                *e,
                "{} single differs from scalar",
                backend.name()
            );
        }
    }
    expect
}

/// Arbitrary bytes as a serialized filter: refused, or queryable.
pub fn check_bytes(data: &[u8]) {
    // The length in a header agrees with what opens, alone or followed by
    // other bytes.
    match FilterRef::serialized_len(data) {
        Ok(len) if len <= data.len() => match FilterRef::from_prefix(data) {
            Ok((view, rest)) => {
                assert_eq!((view.filter_bytes(), rest.len()), (len, data.len() - len));
            }
            // Arbitrary bytes rarely carry their checksum.
            Err(Error::ChecksumMismatch) => {}
            // The length comes from the header and the layer table; a
            // Bumped filter's thresholds are checked when it opens.
            Err(Error::CorruptHeader) if data.get(5) == Some(&3) => {}
            Err(e) => panic!("a valid prefix opens: {e:?}"),
        },
        Ok(_) => assert!(FilterRef::from_prefix(data).is_err()),
        Err(e) => {
            assert_eq!(FilterRef::from_bytes(data).err(), Some(e));
            assert_eq!(FilterRef::from_bytes_unverified(data).err(), Some(e));
            assert_eq!(FilterRef::from_prefix(data).err(), Some(e));
        }
    }
    // The structure's checks first, then the checksum: verified and
    // unverified opens refuse alike but for the checksum.
    match (
        FilterRef::from_bytes(data),
        FilterRef::from_bytes_unverified(data),
    ) {
        (Ok(_), Ok(_)) | (Err(Error::ChecksumMismatch), Ok(_)) => {}
        (Err(verified), Err(unverified)) => assert_eq!(verified, unverified),
        (verified, unverified) => panic!("{verified:?} against {unverified:?} unverified"),
    }
    if let Ok(view) = FilterRef::from_bytes_unverified(data) {
        assert_eq!(FilterRef::serialized_len(data), Ok(data.len()));
        let mut probes = vec![0, 1, u64::MAX, 1 << 63, data.len() as u64];
        probes.extend(data.chunks(8).map(|c| {
            let mut b = [0u8; 8];
            b[..c.len()].copy_from_slice(c);
            u64::from_le_bytes(b)
        }));
        answers_on_every_backend(view, &probes);
    }
}

/// A filter built from arbitrary hashes with an arbitrary plan.
#[derive(Arbitrary, Debug)]
pub struct BuildCase {
    pub kind: u8,
    pub wide: bool,
    pub millibits: u16,
    pub seed: u32,
    pub hashes: Vec<u64>,
    pub probes: Vec<u64>,
}

/// No false negative; single equals batch; every backend builds the same
/// bytes and answers the same.
pub fn check_build(case: &BuildCase) {
    let Ok(plan) = Plan::new(
        build_kind(case.kind),
        width(case.wide),
        case.hashes.len(),
        u32::from(case.millibits),
    ) else {
        // Refused only for less than one bit per key, or for more than 64
        // columns per slot.
        assert!(
            case.millibits < 1000 || case.millibits > 64_000,
            "plan refused for {} millibits",
            case.millibits
        );
        return;
    };
    let plan = plan.with_seed(case.seed);
    let mut scratch = vec![0u64; plan.scratch_words()];
    let mut reference = vec![0u8; plan.filter_bytes()];
    let scalar = plan.with_backend(Backend::Scalar).unwrap();
    // A plan for a number of keys never fails: a Standard system that is
    // inconsistent under every seed falls back to Homogeneous Ribbon.
    // (Bumped Ribbon writes at most the plan's bytes.)
    let len = match scalar.build(&case.hashes, &mut scratch, &mut reference) {
        Ok(view) => view.filter_bytes(),
        Err(e) => panic!("build failed: {e}"),
    };
    assert!(len <= plan.filter_bytes());
    let reference = &reference[..len];
    for backend in backends() {
        let mut bytes = vec![0u8; plan.filter_bytes()];
        let plan = plan.with_backend(backend).unwrap();
        plan.build(&case.hashes, &mut scratch, &mut bytes).unwrap();
        assert_eq!(
            &bytes[..len],
            reference,
            "{} builds different bytes",
            backend.name()
        );
    }
    let view = FilterRef::from_bytes(reference).unwrap();
    let mut probes = case.hashes.clone();
    probes.extend_from_slice(&case.probes);
    let answers = answers_on_every_backend(view, &probes);
    assert!(
        answers[..case.hashes.len()].iter().all(|&a| a),
        "false negative"
    );
}

/// An arbitrary fixed-size filter whose payload bits are then scribbled
/// on (payload bits are not validated): every backend must still agree.
#[derive(Arbitrary, Debug)]
pub struct BackendCase {
    pub kind: u8,
    pub wide: bool,
    pub blocks: u8,
    pub millicolumns: u16,
    pub hashes: Vec<u64>,
    pub scribbles: Vec<(u16, u8)>,
    pub probes: Vec<u64>,
}

pub fn check_backends(case: &BackendCase) {
    let w = width(case.wide);
    let slots = (usize::from(case.blocks) % 8 + 1) * w.bits() as usize;
    let Ok(plan) = Plan::with_slots(kind(case.kind), w, slots, u32::from(case.millicolumns)) else {
        return;
    };
    let mut scratch = vec![0u64; plan.scratch_words()];
    let mut bytes = vec![0u8; plan.filter_bytes()];
    let mut banding = plan.banding(&mut scratch).unwrap();
    for &h in &case.hashes {
        if matches!(banding.add(h), AddOutcome::Inconsistent | AddOutcome::Full) {
            break;
        }
    }
    banding.finish(&mut bytes).unwrap();
    let header = ribbon_kernel::HEADER_BYTES;
    let payload = bytes.len() - header;
    if payload > 0 {
        for &(at, bits) in &case.scribbles {
            bytes[header + usize::from(at) % payload] ^= bits;
        }
    }
    // Scribbled on: the structure still opens, unverified.
    let view = FilterRef::from_bytes_unverified(&bytes).unwrap();
    let mut probes = case.probes.clone();
    probes.extend_from_slice(&case.hashes);
    answers_on_every_backend(view, &probes);
}

/// Incremental banding of a small system against dense Gaussian
/// elimination, then the finished solution against every equation.
#[derive(Arbitrary, Debug)]
pub struct BandingCase {
    pub kind: u8,
    pub wide: bool,
    pub blocks: u8,
    pub millicolumns: u16,
    pub seed: u32,
    pub hashes: Vec<u64>,
}

pub fn check_banding(case: &BandingCase) {
    let w = width(case.wide);
    let slots = (usize::from(case.blocks) % 4 + 1) * w.bits() as usize;
    let Ok(plan) = Plan::with_slots(kind(case.kind), w, slots, u32::from(case.millicolumns)) else {
        return;
    };
    let plan = plan.with_seed(case.seed);
    let m = plan.num_slots();
    let mut scratch = vec![0u64; plan.scratch_words()];
    let mut bytes = vec![0u8; plan.filter_bytes()];
    let mut banding = plan.banding(&mut scratch).unwrap();
    let mut dense = DenseSolver::new(m);
    let mut added: Vec<(u64, Equation)> = Vec::new();
    for &h in case.hashes.iter().take(4 * m) {
        let e = banding.equation(h);
        let expect = if banding.added() == banding.capacity() {
            AddOutcome::Full
        } else {
            dense.add(DenseRow::from_equation(&e, m))
        };
        let got = banding.add(h);
        assert_eq!(got, expect, "outcome of {h:#x}");
        if matches!(got, AddOutcome::Inserted | AddOutcome::Redundant) {
            added.push((h, e));
        }
    }
    assert_eq!(banding.inserted() as usize, dense.rank());
    let filter = banding.finish(&mut bytes).unwrap();
    for (h, _) in &added {
        assert!(filter.contains(*h), "false negative {h:#x}");
    }
    let equations: Vec<Equation> = added.iter().map(|(_, e)| *e).collect();
    check_solution(filter.as_bytes(), &equations);
}
