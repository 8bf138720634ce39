use ribbon_kernel::*;
use std::time::Instant;
fn splitmix(x: &mut u64) -> u64 {
    *x = x.wrapping_add(0x9e3779b97f4a7c15);
    let mut z = *x;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d049bb133111eb);
    z ^ (z >> 31)
}
fn main() {
    let n: usize = std::env::args()
        .nth(1)
        .map(|a| a.parse().unwrap())
        .unwrap_or(1_000_000);
    let mut st = 1u64;
    let keys: Vec<u64> = (0..n).map(|_| splitmix(&mut st)).collect();
    for (kind, width, mb) in [
        (Kind::Homogeneous, Width::W64, 7630),
        (Kind::Standard, Width::W128, 7410),
    ] {
        for b in [Backend::Scalar, Backend::Avx512] {
            let plan = Plan::new(kind, width, n, mb)
                .unwrap()
                .with_backend(b)
                .unwrap();
            let mut scratch = vec![0u64; plan.scratch_words()];
            let mut out = vec![0u8; plan.filter_bytes()];
            let mut band_t = vec![];
            let mut fin_t = vec![];
            for _ in 0..5 {
                let t = Instant::now();
                let mut banding = plan.banding(&mut scratch).unwrap();
                banding.add_all(&keys).unwrap();
                let t1 = t.elapsed();
                banding.finish(&mut out).unwrap();
                let t2 = t.elapsed();
                band_t.push(t1.as_nanos() as f64 / n as f64);
                fin_t.push((t2 - t1).as_nanos() as f64 / n as f64);
            }
            let mut build_t = vec![];
            for _ in 0..5 {
                let t = Instant::now();
                plan.build(&keys, &mut scratch, &mut out).unwrap();
                build_t.push(t.elapsed().as_nanos() as f64 / n as f64);
            }
            build_t.sort_by(f64::total_cmp);
            println!("   sorted build total {:.1} ns/key", build_t[2]);
            band_t.sort_by(f64::total_cmp);
            fin_t.sort_by(f64::total_cmp);
            println!(
                "{kind:?} {width:?} {}: banding {:.1} ns/key, back-sub {:.1} ns/key",
                b.name(),
                band_t[2],
                fin_t[2]
            );
        }
    }
}
