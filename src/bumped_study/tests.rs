//! Unit tests of `bumped_study` (`src/bumped_study.rs`), in a file of their own: see
//! "Tests" in ARCHITECTURE.md.

use super::*;
use crate::test_kit::splitmix64;

fn keys(n: usize, seed: u64) -> Vec<u64> {
    let mut state = seed;
    (0..n).map(|_| splitmix64(&mut state)).collect()
}

/// A study setting from the environment, or `default`.
fn study_setting(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn check_members(w: u32, p: &Params, n: usize) {
    let ks = keys(n, 7 + n as u64);
    let model = build(w, p, &ks);
    for &k in &ks {
        assert!(model.contains(k), "w {w}, n {n}: member {k:#x} missing");
    }
}

#[test]
#[cfg_attr(miri, ignore = "safe code: minutes under Miri")]
fn every_member_is_found() {
    // Miri interprets every row operation: the small sizes cover the
    // same paths there.
    let sizes: &[usize] = if cfg!(miri) {
        &[0, 1, 2, 65, 200]
    } else {
        &[0, 1, 2, 63, 64, 65, 1000, 30_000]
    };
    for &n in sizes {
        check_members(64, &Params::with_paper_classes(128, 965_000, 8), n);
        check_members(128, &Params::with_paper_classes(512, 980_000, 7), n);
        check_members(64, &chosen_params(64, 7), n);
        check_members(128, &chosen_params(128, 8), n);
    }
}

/// The chosen parameters over 20 fresh key sets: worst overhead, and the
/// FP rate of the worst set over 4 * 10^6 non-members.
/// `cargo test --release --lib bumped_study::tests::chosen -- --ignored --nocapture`
#[test]
#[ignore]
fn chosen() {
    let n = study_setting("RIBBON_STUDY_KEYS", 1_000_000) as usize;
    let widths = match study_setting("RIBBON_STUDY_W", 0) {
        0 => vec![64u32, 128],
        w => vec![w as u32],
    };
    for r in [7u32, 8] {
        for &w in &widths {
            let p = chosen_params(w, r);
            let mut worst = (i64::MIN, 0u64);
            for set in 0..20u64 {
                let ppm = build(w, &p, &keys(n, 1000 + set)).overhead_ppm();
                worst = worst.max((ppm, set));
            }
            let model = build(w, &p, &keys(n, 1000 + worst.1));
            let probes = 4_000_000u64;
            let non_members = keys(probes as usize, u64::MAX - worst.1);
            let fp = non_members.iter().filter(|&&k| model.contains(k)).count() as u64;
            std::println!(
                "w {w} r {r} {p:?}: worst overhead of 20 sets {:.3} % (set {}); its FP {fp} / {probes} = {:.4} % (2^-r = {:.4} %)",
                worst.0 as f64 / 1e4,
                worst.1,
                fp as f64 * 100.0 / probes as f64,
                100.0 / f64::from(1u32 << r)
            );
        }
    }
}

/// Threshold schemes side by side for one width, bucket size and
/// layer load, worst of `RIBBON_STUDY_SETS` (4) key sets:
/// `RIBBON_STUDY_W` (64), `RIBBON_STUDY_B` (128), `RIBBON_STUDY_LOAD`
/// (slots per key in millionths, 950000), `RIBBON_STUDY_R` (8).
#[test]
#[ignore]
fn schemes() {
    let n = study_setting("RIBBON_STUDY_KEYS", 1_000_000) as usize;
    let (w, bucket, load, r, num_sets) = (
        study_setting("RIBBON_STUDY_W", 64) as u32,
        study_setting("RIBBON_STUDY_B", 128),
        study_setting("RIBBON_STUDY_LOAD", 950_000),
        study_setting("RIBBON_STUDY_R", 8) as u32,
        study_setting("RIBBON_STUDY_SETS", 4),
    );
    // Overheads vary with the key set (a bucket that bumps a whole
    // class frees its rows): the worst set decides.
    let sets: Vec<Vec<u64>> = (0..num_sets).map(|s| keys(n, 2000 + s)).collect();
    // `RIBBON_STUDY_SCHEMES`: `;`-separated, each `paper` (the paper's
    // 2-bit classes), `t` (1+-bit with bound t, listed exceptions),
    // `t,0,G,S` (1 bit, S exception slots per G buckets), `u,l` (2-bit
    // with listed exceptions) or `u,l,0` (2-bit, the whole bucket below
    // `l`).
    let list = std::env::var("RIBBON_STUDY_SCHEMES").unwrap_or_else(|_| {
        "paper;920000,850000,0;920000,850000;950000,900000;880000;900000;920000".into()
    });
    let schemes: Vec<Params> = list
        .split(';')
        .map(|scheme| {
            let b: Vec<u64> = scheme.split(',').filter_map(|v| v.parse().ok()).collect();
            match b[..] {
                [] => Params::with_paper_classes(bucket, load, r),
                [t] => Params::one_plus_bit(bucket, load, t, Exceptions::List, r),
                [t, 0, group, slots] => {
                    Params::one_plus_bit(bucket, load, t, Exceptions::Grouped { group, slots }, r)
                }
                [u, l] => Params::two_bit(bucket, load, [u, l], Exceptions::List, r),
                [u, l, _] => Params::two_bit(bucket, load, [u, l], Exceptions::Never, r),
                _ => panic!("scheme {scheme:?}"),
            }
        })
        .collect();
    for p in &schemes {
        let models: Vec<Model> = sets.iter().map(|ks| build(w, p, ks)).collect();
        let overheads: Vec<f64> = models
            .iter()
            .map(|m| m.overhead_ppm() as f64 / 1e4)
            .collect();
        let exceptions: Vec<u64> = models.iter().map(Model::exceptions).collect();
        let unbumped: Vec<usize> = models
            .iter()
            .map(|m| {
                m.layers[0]
                    .thresholds
                    .iter()
                    .filter(|&&t| t == bucket)
                    .count()
            })
            .collect();
        // Every slot holds one key's row or is empty, so the overhead is
        // the empty slots' bits plus the metadata.
        let empty: Vec<&[u64]> = models.iter().map(|m| &m.empty[..]).collect();
        let worst = overheads.iter().cloned().fold(f64::MIN, f64::max);
        std::println!(
            "w {w} r {r} B {bucket} load {load} bits {} bounds {:?} exceptions {:?}: worst {worst:.3} % of {overheads:.3?}, exceptions {exceptions:?}, unbumped buckets in layer 1 {unbumped:?} of {}, empty slots {empty:?}, metadata {:.3} %, keys per layer {:?}",
            p.bucket_bits,
            &p.bounds_ppm[..p.num_bounds],
            p.exceptions,
            models[0].layers[0].thresholds.len(),
            models[0].metadata_bits() as f64 * 100.0 / (n as f64 * f64::from(r)),
            models[0].keys
        );
    }
}

/// The parameter sweep: `cargo test --release --lib bumped_study::tests::sweep -- --ignored --nocapture`
/// (n from `RIBBON_STUDY_KEYS`, default 10^6).
#[test]
#[ignore]
fn sweep() {
    let n = study_setting("RIBBON_STUDY_KEYS", 1_000_000) as usize;
    let r = 8;
    std::println!("n = {n}, r = {r}");
    for (w, buckets, loads) in [
        (
            64u32,
            &[128u64][..],
            &[920_000u64, 935_000, 950_000, 960_000][..],
        ),
        (
            128,
            &[256, 512][..],
            &[950_000, 960_000, 970_000, 975_000][..],
        ),
    ] {
        for &bucket in buckets {
            for &load in loads {
                let p = Params::with_paper_classes(bucket, load, r);
                let model = build(w, &p, &keys(n, 1));
                std::println!(
                    "w {w} B {bucket} slots/key {load} bounds {:?}: overhead {:.3} %, keys per layer {:?}, empty {:?}",
                    &p.bounds_ppm[..p.num_bounds],
                    model.overhead_ppm() as f64 / 1e4,
                    model.keys,
                    model.empty
                );
            }
        }
    }
}
