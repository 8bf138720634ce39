//! Bumped builds of crafted keys (issue 38): what hashes aimed at the
//! seeds a default build tries cost it. For each case it builds Bumped
//! filters of random keys and of keys with a share crafted against the
//! first layer (sets of dependent coefficients at a bucket's last start,
//! which make the bucket bump all its keys; `tests/common/crafted.rs`),
//! rounds interleaved, and prints build ns per key (medians), their
//! ratio, the first layer's seed (the plan's when it held, one from the
//! keys' digest when the attack defeated it), the kind built and the FP
//! rate against the planned one. Every key is checked (exit status 1 on a
//! false negative).
//!
//! `cargo run --release --example crafted_keys [-- --keys N --rounds R]`
//! (10^6 keys, 5 rounds).

use std::hint::black_box;
use std::time::Instant;

use ribbon_kernel::{Filter, Kind, Plan, Width};

#[path = "../tests/common/kit.rs"]
mod kit;

#[path = "../tests/common/crafted.rs"]
mod crafted;
use crafted::{Sets, against_first_layer};

#[path = "common/args.rs"]
mod args;
use args::{CommandLine, OptionSpec};

const SUMMARY: &str = "Bumped builds of keys crafted against the default seeds: build time \
    against random keys, the seed the first layer took, FP.";

const OPTIONS: &[OptionSpec] = &[
    args::KEYS_OPTION,
    OptionSpec {
        name: "--rounds",
        value: Some("R"),
        help: "timed builds of each key set, median reported (default 5)",
    },
];

fn random(seed: u64, n: usize) -> Vec<u64> {
    let mut state = seed;
    (0..n).map(|_| kit::splitmix64(&mut state)).collect()
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let line = CommandLine::parse("crafted_keys", SUMMARY, OPTIONS);
    let n = line.value("--keys", args::parse_keys).unwrap_or(1_000_000);
    let rounds = line
        .value("--rounds", |t| {
            t.parse::<usize>()
                .ok()
                .filter(|&r| r > 0)
                .ok_or(format!("{t:?} is not a round count"))
        })
        .unwrap_or(5);
    let others = random(0x0dd, n);
    println!("{n} keys, 8 bits per key, {rounds} rounds interleaved, build ns per key (medians)");
    println!();
    println!(
        "| width | crafted | sets | seeds aimed at | back | random keys | crafted keys | ratio | first layer seed | kind | FP % (planned) |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|---|");
    // Back 0: the sets at the buckets' last start (the attack);
    // a quarter of the bucket back: where a build does not tell them at
    // once (an attacker who knows it).
    let cases = [
        (Width::W64, 0.0041, Sets::Four, 16, 0),
        (Width::W64, 0.006, Sets::Four, 16, 32),
        (Width::W64, 0.02, Sets::Dense, 1, 0),
        (Width::W64, 0.10, Sets::Dense, 16, 0),
        (Width::W64, 0.10, Sets::Dense, 16, 32),
        (Width::W64, 0.10, Sets::Dense, 1, 0),
        (Width::W128, 0.0289, Sets::Dense, 16, 0),
        (Width::W128, 0.0289, Sets::Dense, 16, 128),
        (Width::W128, 0.10, Sets::Dense, 16, 0),
        (Width::W128, 0.10, Sets::Dense, 1, 0),
    ];
    let mut state = 0x3838;
    for (width, fraction, sets, seeds, back) in cases {
        let w = u64::from(width.bits());
        let count = (n as f64 * fraction) as usize;
        let mut keys = against_first_layer(w, n as u64, 8, 0..seeds, count, sets, back, &mut state);
        keys.extend(random(state, n - keys.len()));
        let honest = random(state ^ 1, n);
        let plan = Plan::new(Kind::Bumped, width, n, 8_000).expect("plan");
        let (mut t_random, mut t_crafted) = (Vec::new(), Vec::new());
        let mut built = None;
        for _ in 0..rounds {
            for (set, times) in [(&honest, &mut t_random), (&keys, &mut t_crafted)] {
                let t = Instant::now();
                let f = Filter::build(&plan, black_box(set)).expect("a Bumped build never fails");
                times.push(t.elapsed().as_nanos() as f64 / n as f64);
                if std::ptr::eq(set, &keys) {
                    built = Some(f);
                }
            }
        }
        let f = built.expect("built");
        if !keys.iter().all(|&k| f.contains(k)) {
            eprintln!("false negative");
            std::process::exit(1);
        }
        let fp = others.iter().filter(|&&h| f.contains(h)).count() as f64 / n as f64;
        let first_seed = u32::from_le_bytes(f.as_bytes()[48..52].try_into().expect("entry"));
        let (random_ns, crafted_ns) = (median(t_random), median(t_crafted));
        println!(
            "| {} | {:.2} % | {sets:?} | {seeds} | {back} | {random_ns:.1} | {crafted_ns:.1} | {:.2} | {} | {:?} | {:.3} ({:.3}) |",
            width.bits(),
            fraction * 100.0,
            crafted_ns / random_ns,
            if first_seed == plan.seed() {
                "the plan's".to_string()
            } else {
                format!("{first_seed:#010x}")
            },
            f.view().kind(),
            fp * 100.0,
            plan.column_fp_ppt() as f64 * 1e-10,
        );
    }
}
