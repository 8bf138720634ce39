//! Measures how much space Standard Ribbon needs for a given chance that a
//! build fails with its first seed; the numbers feed `STANDARD_*` tables in
//! `src/plan.rs`.
//!
//! Method ("add till failure", paper section 5.4): for a fixed number of
//! slots `m`, add random keys one at a time until the first inconsistent
//! one. A build of `n` keys succeeds with the first seed exactly when the
//! first failure comes after `n` keys, so the 5 % quantile `n_q` of the
//! failure point over many trials gives the overhead `m / n_q - 1` at which
//! 1 build in 20 needs a second seed.
//!
//! `cargo run --release --example calibrate [trials]`
//!
//! With `homogeneous` as the argument it instead measures Homogeneous Ribbon
//! at whole numbers of columns for slot counts of `eps` = 95 % to 120 % of
//! the paper's eq. 7, over 8 key sets of 10^6 keys: the mean and worst space
//! overhead and the FP excess over `2^-r` per key set. This is the data
//! behind the 110 % / 105 % factors in `src/plan.rs`.

use ribbon_kernel::{AddOutcome, Kind, Plan, Width};

fn splitmix(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Keys added before the first inconsistent one, for `trials` random key
/// streams into the slots of `plan` (16 columns: almost every dependency is
/// inconsistent, the conservative case).
fn failure_points(plan: &Plan, trials: u64, first_trial: u64) -> Vec<u64> {
    let mut scratch = vec![0u64; plan.scratch_words()];
    let mut points = Vec::new();
    for trial in first_trial..first_trial + trials {
        let mut state = trial.wrapping_mul(0x1234_5678_9abc_def1);
        let mut banding = plan.banding(&mut scratch).expect("scratch sized by plan");
        let mut added = 0u64;
        while banding.add(splitmix(&mut state)) != AddOutcome::Inconsistent {
            added += 1;
        }
        points.push(added);
    }
    points
}

fn homogeneous() {
    let n = 1_000_000usize;
    let mut state = 777;
    let negatives: Vec<u64> = (0..3_000_000).map(|_| splitmix(&mut state)).collect();
    let key_sets: Vec<Vec<u64>> = (1..=8u64)
        .map(|set| {
            let mut state = set.wrapping_mul(0x2545_f491_4f6c_dd1d);
            (0..n).map(|_| splitmix(&mut state)).collect()
        })
        .collect();
    println!("width r eps% | overhead mean / worst | FP excess over 2^-r per key set");
    for width in [Width::W64, Width::W128] {
        let w = f64::from(width.bits());
        for r in [3u32, 5, 7, 9, 12] {
            for scale in [95.0, 100.0, 105.0, 110.0, 120.0] {
                let eps = (4.0 + f64::from(r) / 4.0) / w * scale / 100.0;
                let slots = (n as f64 * (1.0 + eps)) as usize;
                let plan =
                    Plan::with_slots(Kind::Homogeneous, width, slots, r * 1000).expect("plan");
                let mut overheads = Vec::new();
                let mut excess = Vec::new();
                for keys in &key_sets {
                    let filter = ribbon_kernel::Filter::build(&plan, keys).expect("build");
                    let hits = negatives.iter().filter(|&&h| filter.contains(h)).count();
                    let fp = hits as f64 / negatives.len() as f64;
                    let bits = plan.payload_bits() as f64 / n as f64;
                    overheads.push(bits / (1.0 / fp).log2() - 1.0);
                    excess.push(format!(
                        "{:+.0}%",
                        (fp * f64::from(1u32 << r) - 1.0) * 100.0
                    ));
                }
                let mean = overheads.iter().sum::<f64>() / overheads.len() as f64;
                let worst = overheads.iter().copied().fold(f64::MIN, f64::max);
                println!(
                    "{width:?} {r} {:.2} ({scale}% of eq. 7) | {:.2}% / {:.2}% | {}",
                    eps * 100.0,
                    mean * 100.0,
                    worst * 100.0,
                    excess.join(" ")
                );
            }
        }
    }
}

fn main() {
    if std::env::args().nth(1).as_deref() == Some("homogeneous") {
        return homogeneous();
    }
    let trials: u64 = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(200);
    println!("kind width log2(m) m | eps at 5% fail | eps at 50% fail | trials");
    for kind in [Kind::Standard, Kind::StandardSmash] {
        for width in [Width::W64, Width::W128] {
            for log2_keys in (7..=21).step_by(2) {
                let n = 1usize << log2_keys;
                let plan = Plan::new(kind, width, n, 16_000).expect("plan");
                let m = plan.num_slots() as f64;
                let trials = if log2_keys >= 20 { trials / 2 } else { trials };
                let mut points: Vec<u64> = std::thread::scope(|s| {
                    let a = s.spawn(|| failure_points(&plan, trials / 2, 0));
                    let b = failure_points(&plan, trials - trials / 2, trials / 2);
                    let mut v = a.join().expect("worker");
                    v.extend(b);
                    v
                });
                points.sort_unstable();
                let q05 = points[points.len() / 20] as f64;
                let q50 = points[points.len() / 2] as f64;
                println!(
                    "{kind:?} {width:?} {:.2} {m} | {:.2}% | {:.2}% | {}",
                    m.log2(),
                    (m / q05 - 1.0) * 100.0,
                    (m / q50 - 1.0) * 100.0,
                    points.len()
                );
            }
        }
    }
}
