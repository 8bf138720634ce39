//! The measurements behind the sizing constants in `src/plan.rs`.
//!
//! `cargo run --release --example calibrate -- standard [trials]`
//!
//! Standard Ribbon: how much space gives a given chance that a build fails
//! with its first seed (the `STANDARD_*` tables). Method ("add till
//! failure", paper section 5.4): for a fixed number of slots `m`, add
//! random keys one at a time until the first inconsistent one. A build of
//! `n` keys succeeds with the first seed exactly when the first failure
//! comes after `n` keys, so the 5 % quantile `n_q` of the failure point
//! over many trials gives the overhead `m / n_q - 1` at which 1 build in 20
//! needs a second seed. The 0.1 % quantile shows how early a stream can
//! meet its first inconsistency.
//!
//! `cargo run --release --example calibrate -- homogeneous [options]`
//!
//! Homogeneous Ribbon: the FP rate of every filter over many fresh random
//! key sets, the tail and not only the mean (`epsilon_ppm` and the retry
//! limit). Per key set it computes the filter's *exact* FP rate over random
//! non-member hashes, without sampling noise: a non-member starting at slot
//! `s` matches with probability `2^-rank`, where `rank` is the rank of the
//! `r` columns' `w`-bit windows at `s` (0 if the unit vector is in their
//! span), averaged over all starts. Beside it: the crate's own estimate
//! ([`FilterRef::estimated_fp_ppt`]), an FP rate sampled with random
//! queries, and whether the build needed another seed.
//!
//! Options: `--width 64|128` (default both), `--millibits a,b,..`
//! (default 4000,7700,12000,16000), `--keys N` (10^6), `--sets N` (60),
//! `--first-set N` (1), `--queries N` (10^6 sampled queries per filter),
//! `--seeds N` (seeds a build may try; 1 shows single-seed filters), `--eps
//! PCT` (slots for `PCT` % of the planned overhead, same payload bits),
//! `--stream` (build through `Plan::banding` up to its capacity), `--list`
//! (one line per key set), `--no-exact` (the estimate stands in for the
//! exact rate: much faster for large filters).

use std::sync::Mutex;
use std::time::Instant;

use ribbon_kernel::{AddOutcome, Filter, Kind, Plan, Width};

#[path = "../tests/common/exact_fp.rs"]
mod exact;
use exact::exact_fp;

#[path = "../tests/common/kit.rs"]
mod kit;
use kit::splitmix64;

fn key_set(set: u64, n: usize) -> Vec<u64> {
    let mut state = set.wrapping_mul(0x2545_f491_4f6c_dd1d);
    (0..n).map(|_| splitmix64(&mut state)).collect()
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
        while matches!(
            banding.add(splitmix64(&mut state)),
            AddOutcome::Inserted | AddOutcome::Redundant
        ) {
            added += 1;
        }
        points.push(added);
    }
    points
}

fn standard(trials: u64) {
    println!(
        "kind width log2(m) m | eps at 5% fail | eps at 50% fail | first failure at 0.1% | trials"
    );
    for kind in [Kind::Standard, Kind::StandardSmash] {
        for width in [Width::W64, Width::W128] {
            for log2_keys in (7..=21).step_by(2) {
                let n = 1usize << log2_keys;
                let sized = Plan::new(kind, width, n, 16_000).expect("plan");
                // A plan for the slots, not the keys: its banding accepts
                // keys until the first inconsistency.
                let plan = Plan::with_slots(kind, width, sized.num_slots(), 16_000).expect("plan");
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
                let q001 = points[points.len() / 1000] as f64;
                let q05 = points[points.len() / 20] as f64;
                let q50 = points[points.len() / 2] as f64;
                println!(
                    "{kind:?} {width:?} {:.2} {m} | {:.2}% | {:.2}% | {:.1}% of n | {}",
                    m.log2(),
                    (m / q05 - 1.0) * 100.0,
                    (m / q50 - 1.0) * 100.0,
                    q001 / n as f64 * 100.0,
                    points.len()
                );
            }
        }
    }
}

struct Options {
    widths: Vec<Width>,
    millibits: Vec<u32>,
    keys: usize,
    sets: u64,
    first_set: u64,
    queries: usize,
    seeds: Option<u32>,
    eps_percent: Option<f64>,
    stream: bool,
    list: bool,
    exact: bool,
}

fn parse(args: &[String]) -> Options {
    let value = |name: &str| {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1))
            .cloned()
    };
    let widths = match value("--width").as_deref() {
        Some("64") => vec![Width::W64],
        Some("128") => vec![Width::W128],
        _ => vec![Width::W64, Width::W128],
    };
    let millibits = value("--millibits").map_or(vec![4000, 7700, 12_000, 16_000], |v| {
        v.split(',')
            .map(|x| x.parse().expect("millibits"))
            .collect()
    });
    let number = |name: &str, default: u64| value(name).map_or(default, |v| v.parse().expect(name));
    Options {
        widths,
        millibits,
        keys: number("--keys", 1_000_000) as usize,
        sets: number("--sets", 60),
        first_set: number("--first-set", 1),
        queries: number("--queries", 1_000_000) as usize,
        seeds: value("--seeds").map(|v| v.parse().expect("seeds")),
        eps_percent: value("--eps").map(|v| v.parse().expect("eps")),
        stream: args.iter().any(|a| a == "--stream"),
        exact: !args.iter().any(|a| a == "--no-exact"),
        list: args.iter().any(|a| a == "--list"),
    }
}

struct KeySet {
    set: u64,
    /// Exact FP rate over random non-members, relative to the columns'.
    exact: f64,
    /// The crate's estimate, relative to the columns'.
    estimate: f64,
    /// FP rate sampled with random non-member queries.
    sampled: f64,
    retried: bool,
    keys: usize,
    build_ns: f64,
}

fn plan_for(kind: Kind, width: Width, o: &Options, millibits: u32) -> Plan {
    let plan = Plan::new(kind, width, o.keys, millibits).expect("plan");
    let plan = match o.eps_percent {
        None => plan,
        Some(pct) => {
            let eps = plan.num_slots() as f64 / o.keys as f64 - 1.0;
            let slots = (o.keys as f64 * (1.0 + eps * pct / 100.0)) as usize;
            let millicolumns = (plan.payload_bits() as f64 * 1000.0 / slots as f64) as u32;
            Plan::with_slots(kind, width, slots, millicolumns).expect("plan")
        }
    };
    match o.seeds {
        Some(seeds) => plan.with_max_seeds(seeds),
        None => plan,
    }
}

fn measure(plan: &Plan, o: &Options, set: u64) -> KeySet {
    let keys = key_set(set, o.keys);
    let start = Instant::now();
    let (filter, used) = if o.stream {
        let mut scratch = vec![0u64; plan.banding_scratch_words()];
        let mut bytes = vec![0u8; plan.filter_bytes()];
        let mut banding = plan.banding(&mut scratch).expect("scratch");
        let used = match banding.add_all(&keys) {
            Ok(()) => keys.len(),
            Err(at) => at,
        };
        banding.finish(&mut bytes).expect("finish");
        (Filter::from_bytes(bytes).expect("valid"), used)
    } else {
        (Filter::build(plan, &keys).expect("build"), keys.len())
    };
    let build_ns = start.elapsed().as_nanos() as f64 / o.keys as f64;
    let view = filter.view();
    assert!(
        keys[..used].iter().all(|&k| view.contains(k)),
        "false negative"
    );
    let columns = view.column_fp_ppt() as f64 / 1e12;
    let mut state = !set;
    let negatives: Vec<u64> = (0..o.queries).map(|_| splitmix64(&mut state)).collect();
    let mut answers = vec![false; negatives.len()];
    view.contains_batch(&negatives, &mut answers)
        .expect("lengths");
    let estimate = view.estimated_fp_ppt() as f64 / 1e12 / columns;
    KeySet {
        set,
        exact: if o.exact {
            exact_fp(view) / columns
        } else {
            estimate
        },
        estimate,
        sampled: answers.iter().filter(|&&a| a).count() as f64 / o.queries as f64,
        retried: view.seed() != plan.seed(),
        keys: used,
        build_ns,
    }
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn homogeneous(o: &Options) {
    println!(
        "width bits/key eps | sets keys | exact FP / column FP: median mean worst | estimate: worst, \
         over the retry limit, most below exact | sampled FP / column FP: worst (4 sigma) | overhead median \
         | retried | build ns/key"
    );
    for &width in &o.widths {
        for &millibits in &o.millibits {
            let plan = plan_for(Kind::Homogeneous, width, o, millibits);
            let results = Mutex::new(Vec::new());
            std::thread::scope(|s| {
                for worker in 0..2 {
                    let results = &results;
                    let plan = &plan;
                    s.spawn(move || {
                        for set in (o.first_set..o.first_set + o.sets).skip(worker).step_by(2) {
                            let r = measure(plan, o, set);
                            results.lock().expect("lock").push(r);
                        }
                    });
                }
            });
            let mut results = results.into_inner().expect("lock");
            results.sort_by(|a, b| a.exact.total_cmp(&b.exact));
            let columns = plan.column_fp_ppt() as f64 / 1e12;
            let sigma = (columns * (1.0 - columns) / o.queries as f64).sqrt();
            let worst = results.last().expect("sets");
            let worst_sampled = results
                .iter()
                .map(|r| r.sampled / columns)
                .fold(0.0, f64::max);
            let bits = plan.payload_bits() as f64 / o.keys as f64;
            let overhead = median(
                results
                    .iter()
                    .map(|r| bits / (1.0 / (r.exact * columns)).log2() - 1.0)
                    .collect(),
            );
            let limit = 1.0 + ribbon_kernel::HOMOGENEOUS_EXCESS_LIMIT_PPM as f64 / 1e6;
            println!(
                "w{} {:.2} {:.2}% | {} {} | {:.4} {:.4} {:.4} (set {}) | {:.4} {} {:.4} | {:.4} ({:.4}) | {:.2}% | {} | {:.1}",
                width.bits(),
                bits,
                (plan.num_slots() as f64 / o.keys as f64 - 1.0) * 100.0,
                results.len(),
                median(results.iter().map(|r| r.keys as f64).collect()),
                median(results.iter().map(|r| r.exact).collect()),
                results.iter().map(|r| r.exact).sum::<f64>() / results.len() as f64,
                worst.exact,
                worst.set,
                results.iter().map(|r| r.estimate).fold(0.0, f64::max),
                results.iter().filter(|r| r.estimate > limit).count(),
                results
                    .iter()
                    .map(|r| r.exact - r.estimate)
                    .fold(0.0, f64::max),
                worst_sampled,
                4.0 * sigma / columns,
                overhead * 100.0,
                results.iter().filter(|r| r.retried).count(),
                median(results.iter().map(|r| r.build_ns).collect()),
            );
            if o.list {
                for r in &results {
                    println!(
                        "  set {} keys {} exact {:.4} estimate {:.4} sampled {:.4} retried {}",
                        r.set,
                        r.keys,
                        r.exact,
                        r.estimate,
                        r.sampled / columns,
                        r.retried
                    );
                }
            }
        }
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    match args.get(1).map(String::as_str) {
        Some("homogeneous") => homogeneous(&parse(&args)),
        Some("standard") => standard(args.get(2).and_then(|a| a.parse().ok()).unwrap_or(200)),
        _ => eprintln!("usage: calibrate standard [trials] | calibrate homogeneous [options]"),
    }
}
