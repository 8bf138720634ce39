//! How fast this machine's memory serves the lines a query reads, without
//! any filter: the floor under batch and single-key queries of filters
//! that do not fit in the core's caches (issue 17's 10^7-key figures).
//!
//! `cargo run --release --example memory_lines [-- MB [ROUNDS]]`
//!
//! An array of `MB` megabytes (default 11: a Homogeneous w64 filter of
//! 10^7 keys at 8.7 bits per key) is read at random places, per "key":
//!
//! * 3 random lines: what BinaryFuse8's `contains` reads (three bytes in
//!   three random places);
//! * 3 adjacent lines: a Ribbon query's two adjacent blocks when they
//!   span more than 128 bytes (w = 64 with 9 columns: 144 bytes);
//! * 2 adjacent lines: the least any Ribbon window of more than 64 bytes
//!   can read.
//!
//! Every loop is the same plain loop of independent loads, so the
//! out-of-order core overlaps as many keys as its miss buffers allow; the
//! figures are medians of interleaved rounds, ns per key, and the ratios
//! to the random reads are what no query layout can beat on this machine.

use std::time::Instant;

/// The lines one key reads, from three random ones, and how many.
type Pattern = (&'static str, fn([u32; 3]) -> [u32; 3], usize);

fn main() {
    let mut args = std::env::args().skip(1);
    let mb: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(11);
    let rounds: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(5);
    let lines = (mb << 20) / 64;
    // One word per line is enough: a load of it brings the whole line in.
    let memory: Vec<u64> = (0..lines as u64 * 8).collect();
    let keys = 4_000_000;
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let mut line = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state % (lines as u64 - 3)) as u32
    };
    let places: Vec<[u32; 3]> = (0..keys).map(|_| [line(), line(), line()]).collect();
    let patterns: [Pattern; 3] = [
        ("3 random lines", |p| p, 3),
        ("3 adjacent lines", |p| [p[0], p[0] + 1, p[0] + 2], 3),
        ("2 adjacent lines", |p| [p[0], p[0] + 1, p[0] + 1], 2),
    ];
    let mut times = vec![Vec::new(); patterns.len()];
    for _ in 0..rounds {
        for (times, &(_, lines_of, count)) in times.iter_mut().zip(&patterns) {
            let start = Instant::now();
            let mut sum = 0u64;
            for &p in &places {
                for l in lines_of(p).into_iter().take(count) {
                    sum = sum.wrapping_add(memory[l as usize * 8]);
                }
            }
            std::hint::black_box(sum);
            times.push(start.elapsed().as_nanos() as f64 / keys as f64);
        }
    }
    let median = |t: &mut Vec<f64>| {
        t.sort_by(f64::total_cmp);
        t[t.len() / 2]
    };
    let medians: Vec<f64> = times.iter_mut().map(median).collect();
    println!("{mb} MB, {keys} keys per round, median of {rounds} rounds:");
    for ((name, _, _), ns) in patterns.iter().zip(&medians) {
        println!(
            "  {name:<17} {ns:6.2} ns per key, {:.2} of the random reads",
            ns / medians[0]
        );
    }
}
