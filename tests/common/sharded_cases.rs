//! The sharded fuzz target's check (issue 42): arbitrary bytes into
//! `ShardedFilterRef`'s opens, refused or queried without a panic, single
//! and batch queries agreeing with the shard each hash belongs to.

use ribbon_kernel::{Error, ShardedFilterRef, shard_of};

/// Hashes every accepted structure is queried with: the ends of the hash
/// range, the first hashes of shards, and mixed values.
fn probes(shards: usize) -> Vec<u64> {
    let mut hs = vec![0, 1, u64::MAX, u64::MAX - 1, 1 << 63];
    for i in 1..shards.min(64) as u128 {
        let first = ((i << 64) / shards as u128 + 1) as u64;
        hs.extend([first - 1, first]);
    }
    let mut x = 0x1234_5678u64;
    for _ in 0..64 {
        x = x.wrapping_mul(0x9e37_79b9_7f4a_7c15).rotate_left(17) ^ 0xa5a5;
        hs.push(x);
    }
    hs
}

/// Opens `data` verified and unverified: both refuse alike but for the
/// checksum, and an accepted structure answers single and batch queries
/// alike, each as its shard's filter does.
pub fn check_sharded_bytes(data: &[u8]) {
    let verified = ShardedFilterRef::from_bytes(data);
    let unverified = ShardedFilterRef::from_bytes_unverified(data);
    match (&verified, &unverified) {
        (Ok(_), Ok(_)) | (Err(Error::ChecksumMismatch), Ok(_)) => {}
        (Err(v), Err(u)) if v == u => {}
        // A shard's checksum fails in the verified open, where the
        // unverified one goes on to a later check.
        (Err(Error::ChecksumMismatch), Err(_)) => {}
        (v, u) => panic!("{v:?} against {u:?} unverified"),
    }
    let Ok(view) = unverified else { return };
    let s = view.shards();
    assert!(s >= 1);
    let hs = probes(s);
    let mut out = vec![false; hs.len()];
    view.contains_batch(&hs, &mut out).unwrap();
    let mut keys = 0;
    for i in 0..s {
        keys += view.shard(i).unwrap().num_keys();
    }
    assert_eq!(keys, view.num_keys());
    for (&h, &batch) in hs.iter().zip(&out) {
        let single = view.contains(h);
        assert_eq!(single, batch, "hash {h:#x}");
        let shard = view.shard(shard_of(h, s)).unwrap();
        assert_eq!(single, shard.contains(h), "hash {h:#x}");
    }
}
