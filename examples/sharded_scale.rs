//! One large sharded build, for peak memory and build time at 10^8-10^9
//! keys (issue 42): the hashes, the build on `THREADS` threads, every
//! member queried back, the FP rate on fresh hashes, and the peak resident
//! memory against the budget "input + output + 2 bytes per key".
//!
//! `cargo run --release --example sharded_scale [-- N KIND THREADS [MILLIBITS]]`
//!
//! `N` keys (default 10^8), `KIND` `homogeneous` (default), `standard`,
//! `smash` or `bumped`, `THREADS` (default 1), `MILLIBITS` thousandths of a bit per
//! key (default 8,700 for Homogeneous, else 8,000), width 64. Run it under
//! `/usr/bin/time -v` for the kernel's own peak figure; the program prints
//! its `VmHWM` (Linux) too.

use std::time::Instant;

use ribbon_kernel::{Kind, Plan, ShardedFilter, ShardedPlan, Width};

#[path = "../tests/common/kit.rs"]
mod kit;
use kit::splitmix64;

#[path = "common/args.rs"]
mod args;

/// The process's peak resident memory in bytes (`VmHWM`), where Linux
/// reports it.
fn peak_rss() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

fn gb(bytes: u64) -> f64 {
    bytes as f64 / 1e9
}

fn main() {
    let mut argv = std::env::args().skip(1);
    let n: usize = argv
        .next()
        .and_then(|a| a.parse().ok())
        .unwrap_or(100_000_000);
    let kind = match argv.next().as_deref().map(args::parse_kind) {
        None => Kind::Homogeneous,
        Some(Ok(kind)) => kind,
        Some(Err(message)) => {
            eprintln!("{message}");
            std::process::exit(args::EXIT_USAGE);
        }
    };
    let threads: usize = argv.next().and_then(|a| a.parse().ok()).unwrap_or(1);
    let default_millibits = if kind == Kind::Homogeneous {
        8_700
    } else {
        8_000
    };
    let millibits: u32 = argv
        .next()
        .and_then(|a| a.parse().ok())
        .unwrap_or(default_millibits);

    let plan = match ShardedPlan::new(kind, Width::W64, n, millibits) {
        Ok(plan) => plan,
        Err(e) => {
            eprintln!("cannot plan {n} keys: {e}");
            std::process::exit(1);
        }
    };
    println!(
        "{n} keys, {kind:?} w64 at {millibits} millibits/key, {} shards of about {} keys, {threads} thread(s)",
        plan.shards(),
        n.div_ceil(plan.shards())
    );

    let t = Instant::now();
    let mut state = 0x5eed_u64;
    let mut hashes: Vec<u64> = (0..n).map(|_| splitmix64(&mut state)).collect();
    println!("hashes: {:.1} s", t.elapsed().as_secs_f64());

    let t = Instant::now();
    let filter = match ShardedFilter::build(&plan, &mut hashes, threads) {
        Ok(f) => f,
        Err(e) => {
            eprintln!("build failed: {e}");
            std::process::exit(1);
        }
    };
    let build = t.elapsed().as_secs_f64();
    let bytes = filter.as_bytes().len() as u64;
    println!(
        "build: {build:.2} s, {:.1} ns/key; {bytes} bytes, {:.4} bits/key",
        build * 1e9 / n as f64,
        bytes as f64 * 8.0 / n as f64
    );
    // The unsharded filter's length for comparison (a plan only: nothing
    // is built). For Bumped this is the most a build writes.
    if let Ok(unsharded) = Plan::new(kind, Width::W64, n, millibits) {
        println!(
            "space vs the unsharded plan: {:.5}",
            bytes as f64 / unsharded.filter_bytes() as f64
        );
    }

    let t = Instant::now();
    let mut answers = vec![false; 1 << 20];
    let mut missing = 0usize;
    for chunk in hashes.chunks(1 << 20) {
        let out = &mut answers[..chunk.len()];
        filter.contains_batch(chunk, out).expect("lengths match");
        missing += out.iter().filter(|&&a| !a).count();
    }
    println!(
        "members: {} of {n} found ({:.1} s)",
        n - missing,
        t.elapsed().as_secs_f64()
    );
    let probes = 10_000_000usize;
    let mut hits = 0usize;
    let mut fresh = vec![0u64; 1 << 20];
    let mut done = 0;
    while done < probes {
        let k = (probes - done).min(fresh.len());
        for h in &mut fresh[..k] {
            *h = splitmix64(&mut state);
        }
        let out = &mut answers[..k];
        filter
            .contains_batch(&fresh[..k], out)
            .expect("lengths match");
        hits += out.iter().filter(|&&a| a).count();
        done += k;
    }
    println!(
        "FP: {hits} of {probes} fresh hashes ({:.4} %)",
        hits as f64 * 100.0 / probes as f64
    );

    let input = (n * 8) as u64;
    let budget = input + bytes + 2 * n as u64;
    match peak_rss() {
        Some(peak) => println!(
            "peak resident {:.3} GB; input {:.3} GB + output {:.3} GB + 2 B/key {:.3} GB = {:.3} GB: {}",
            gb(peak),
            gb(input),
            gb(bytes),
            gb(2 * n as u64),
            gb(budget),
            if peak <= budget { "within" } else { "OVER" }
        ),
        None => println!("peak resident memory: not reported here (run under /usr/bin/time -v)"),
    }
    if missing > 0 {
        std::process::exit(1);
    }
}
