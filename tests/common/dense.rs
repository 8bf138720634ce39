//! A dense GF(2) solver and a decoder of the documented serialized layout:
//! the independent oracle for banding and back-substitution, shared by the
//! tests and the fuzz targets.

use ribbon_kernel::{AddOutcome, Equation};

/// A row over GF(2): `m` coefficient bits and the result bits.
#[derive(Clone)]
pub struct DenseRow {
    bits: Vec<u64>,
    result: u64,
}

impl DenseRow {
    pub fn from_equation(e: &Equation, m: usize) -> DenseRow {
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
pub struct DenseSolver {
    basis: Vec<Option<DenseRow>>,
}

impl DenseSolver {
    pub fn new(m: usize) -> DenseSolver {
        DenseSolver {
            basis: vec![None; m],
        }
    }

    pub fn add(&mut self, mut row: DenseRow) -> AddOutcome {
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

    pub fn rank(&self) -> usize {
        self.basis.iter().filter(|b| b.is_some()).count()
    }
}

/// Decodes solution bit (slot, column) from serialized filter bytes using
/// only the documented format: 48-byte header, then per block its columns
/// as little-endian `w`-bit words.
pub fn solution_bit(bytes: &[u8], slot: usize, column: u32) -> Option<u64> {
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
    Some(u64::from(bytes[48 + bit / 8] >> (bit % 8) & 1))
}

/// Checks every added equation against the solution decoded from `bytes`.
pub fn check_solution(bytes: &[u8], equations: &[Equation]) {
    for e in equations {
        let columns = (0..64)
            .take_while(|&j| solution_bit(bytes, e.start as usize, j).is_some())
            .count() as u32;
        for j in 0..columns {
            let mut parity = 0;
            for k in 0..128 {
                if e.coeff >> k & 1 == 1 {
                    parity ^= solution_bit(bytes, e.start as usize + k, j).unwrap();
                }
            }
            assert_eq!(parity, e.result >> j & 1, "column {j} of {e:?}");
        }
    }
}
