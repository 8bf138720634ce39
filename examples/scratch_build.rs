use ribbon_kernel::*;
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
        .unwrap_or(200_000);
    let std128 = std::env::args().nth(2).is_some();
    let mut st = 1u64;
    let keys: Vec<u64> = (0..n).map(|_| splitmix(&mut st)).collect();
    let plan = if std128 {
        Plan::new(Kind::Standard, Width::W128, n, 7410)
    } else {
        Plan::new(Kind::Homogeneous, Width::W64, n, 7630)
    }
    .unwrap()
    .with_backend(Backend::Avx2)
    .unwrap();
    let mut scratch = vec![0u64; plan.scratch_words()];
    let mut out = vec![0u8; plan.filter_bytes()];
    plan.build(&keys, &mut scratch, &mut out).unwrap();
}
