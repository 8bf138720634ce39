//! A filter's exact FP rate over uniformly random non-member hashes,
//! computed from its bytes: an oracle for the statistical tests and the
//! calibration, independent of the crate's own estimate.
//!
//! A non-member whose window starts at slot `s` has a uniformly random
//! coefficient row with its lowest bit set. It matches every column `j`
//! exactly when the row is orthogonal to each column's `w`-bit window
//! `Z_j[s..s+w]`: probability `2^-rank` for the rank of those windows (0 if
//! their span holds the unit vector `e_0`, which every such row hits). The
//! filter's rate is the mean over starts (uniform for Homogeneous Ribbon).

use ribbon_kernel::{FilterRef, HEADER_BYTES};

/// The exact FP rate of a Homogeneous filter (starts drawn uniformly).
pub fn exact_fp(view: FilterRef<'_>) -> f64 {
    let bytes = view.as_bytes();
    let field = |at: usize| u64::from_le_bytes(bytes[at..at + 8].try_into().expect("8 bytes"));
    let w = view.width().bits() as usize;
    let lower = usize::from(bytes[7]);
    let blocks = field(24) as usize;
    let upper_start = field(32) as usize;
    if blocks == 0 {
        return 0.0;
    }
    let payload = &bytes[HEADER_BYTES..];
    let columns = |b: usize| lower + usize::from(b >= upper_start);
    let offset = |b: usize| b * lower + b.saturating_sub(upper_start);
    let word = |i: usize| -> u128 {
        let size = w / 8;
        payload[i * size..(i + 1) * size]
            .iter()
            .rev()
            .fold(0u128, |acc, &b| (acc << 8) | u128::from(b))
    };
    let mask = if w == 128 {
        u128::MAX
    } else {
        u128::from(u64::MAX)
    };
    let mut sum = 0.0;
    // Basis vectors indexed by their highest bit.
    let mut basis = [0u128; 128];
    let (mut lo, mut hi) = ([0u128; 64], [0u128; 64]);
    for b in 0..blocks {
        let c = columns(b);
        for j in 0..c {
            lo[j] = word(offset(b) + j);
            hi[j] = if b + 1 < blocks {
                word(offset(b + 1) + j)
            } else {
                0
            };
        }
        // The last block holds one start.
        let offsets = if b + 1 < blocks { w } else { 1 };
        for o in 0..offsets {
            let mut used = [0usize; 64];
            let mut rank = 0;
            for j in 0..c {
                let mut v = if o == 0 {
                    lo[j]
                } else {
                    ((lo[j] >> o) | (hi[j] << (w - o))) & mask
                };
                while v != 0 {
                    let top = 127 - v.leading_zeros() as usize;
                    if basis[top] == 0 {
                        basis[top] = v;
                        used[rank] = top;
                        rank += 1;
                        break;
                    }
                    v ^= basis[top];
                }
            }
            if basis[0] == 0 {
                sum += 0.5f64.powi(rank as i32);
            }
            for &top in &used[..rank] {
                basis[top] = 0;
            }
        }
    }
    sum / (blocks * w - w + 1) as f64
}
