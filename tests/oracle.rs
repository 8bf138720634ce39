//! Banding and back-substitution checked against a dense GF(2) solver.
//!
//! For small systems, every `Banding::add` outcome must match what plain
//! Gaussian elimination over the full `m`-bit rows says (independent row ->
//! inserted; dependent and consistent -> redundant; dependent and
//! inconsistent -> inconsistent). The finished filter is then decoded from
//! its documented serialized layout and every added key's equation is
//! checked bit by bit against the solution matrix.

mod common;

use common::{Hashes, KINDS, WIDTHS};
use ribbon_kernel::{AddOutcome, Equation, Kind, Plan, Width};

/// A row over GF(2): `m` coefficient bits and the result bits.
#[derive(Clone)]
struct DenseRow {
    bits: Vec<u64>,
    result: u64,
}

impl DenseRow {
    fn from_equation(e: &Equation, m: usize) -> DenseRow {
        let mut bits = vec![0u64; m.div_ceil(64)];
        for k in 0..128 {
            if e.coeff >> k & 1 == 1 {
                let slot = e.start as usize + k;
                assert!(slot < m, "equation reaches past the last slot");
                bits[slot / 64] |= 1 << (slot % 64);
            }
        }
        DenseRow {
            bits,
            result: e.result,
        }
    }

    fn lowest_bit(&self) -> Option<usize> {
        self.bits
            .iter()
            .enumerate()
            .find(|(_, w)| **w != 0)
            .map(|(i, w)| i * 64 + w.trailing_zeros() as usize)
    }

    fn xor(&mut self, other: &DenseRow) {
        for (a, b) in self.bits.iter_mut().zip(&other.bits) {
            *a ^= b;
        }
        self.result ^= other.result;
    }
}

/// Incremental Gaussian elimination with one basis row per pivot column.
struct DenseSolver {
    basis: Vec<Option<DenseRow>>,
}

impl DenseSolver {
    fn new(m: usize) -> DenseSolver {
        DenseSolver {
            basis: vec![None; m],
        }
    }

    fn add(&mut self, mut row: DenseRow) -> AddOutcome {
        while let Some(p) = row.lowest_bit() {
            match &self.basis[p] {
                Some(b) => row.xor(b),
                None => {
                    self.basis[p] = Some(row);
                    return AddOutcome::Inserted;
                }
            }
        }
        if row.result == 0 {
            AddOutcome::Redundant
        } else {
            AddOutcome::Inconsistent
        }
    }

    fn rank(&self) -> usize {
        self.basis.iter().filter(|b| b.is_some()).count()
    }
}

/// Decodes solution bit (slot, column) from serialized filter bytes using
/// only the documented format: 40-byte header, then per block its columns
/// as little-endian `w`-bit words.
fn solution_bit(bytes: &[u8], slot: usize, column: u32) -> Option<u64> {
    let w = bytes[6] as usize;
    let lower = u32::from(bytes[7]);
    let usb = u64::from_le_bytes(bytes[32..40].try_into().unwrap()) as usize;
    let block = slot / w;
    let columns = lower + u32::from(block >= usb);
    if column >= columns {
        return None;
    }
    let word = block * lower as usize + block.saturating_sub(usb) + column as usize;
    let bit = word * w + slot % w;
    Some(u64::from(bytes[40 + bit / 8] >> (bit % 8) & 1))
}

fn check_against_oracle(kind: Kind, width: Width, n: usize, millibits: u32, seed: u64) {
    let plan = Plan::new(kind, width, n, millibits).unwrap();
    let m = plan.num_slots();
    let mut scratch = vec![0u64; plan.scratch_words()];
    let mut out = vec![0u8; plan.filter_bytes()];
    let mut banding = plan.banding(&mut scratch).unwrap();
    let mut dense = DenseSolver::new(m);
    let mut added = Vec::new();
    // Add more keys than planned so that full systems and (Standard)
    // inconsistencies are exercised too.
    for hash in Hashes::new(seed).take(n + n / 4 + 3) {
        let e = banding.equation(hash);
        assert_eq!(e.coeff & 1, 1);
        let expect = dense.add(DenseRow::from_equation(&e, m));
        let got = banding.add(hash);
        assert_eq!(got, expect, "{kind:?} {width:?} n={n} hash={hash:#x}");
        if got != AddOutcome::Inconsistent {
            added.push((hash, e));
        }
    }
    assert_eq!(banding.inserted() as usize, dense.rank());
    let filter = banding.finish(&mut out).unwrap();
    let out = filter.as_bytes();
    for (hash, e) in &added {
        assert!(filter.contains(*hash));
        assert_eq!(filter.equation(*hash), *e);
        let block_columns = (0..64)
            .take_while(|&j| solution_bit(out, e.start as usize, j).is_some())
            .count() as u32;
        for j in 0..block_columns {
            let mut parity = 0;
            for k in 0..128 {
                if e.coeff >> k & 1 == 1 {
                    parity ^= solution_bit(out, e.start as usize + k, j).unwrap();
                }
            }
            assert_eq!(parity, e.result >> j & 1, "column {j} of {hash:#x}");
        }
    }
}

#[test]
fn banding_matches_dense_gaussian_elimination() {
    let sizes: &[usize] = if cfg!(miri) {
        &[1, 40]
    } else {
        &[1, 2, 10, 40, 100, 300]
    };
    for kind in KINDS {
        for width in WIDTHS {
            for &n in sizes {
                for millibits in [1_000, 3_500, 8_000] {
                    check_against_oracle(kind, width, n, millibits, n as u64 * 31 + 7);
                }
            }
        }
    }
}

#[test]
fn duplicates_are_redundant() {
    for kind in KINDS {
        for width in WIDTHS {
            let plan = Plan::new(kind, width, 100, 8000).unwrap();
            let mut scratch = vec![0u64; plan.scratch_words()];
            let mut banding = plan.banding(&mut scratch).unwrap();
            assert_eq!(banding.add(42), AddOutcome::Inserted);
            for _ in 0..10 {
                assert_eq!(banding.add(42), AddOutcome::Redundant);
            }
        }
    }
}
