//! A Bumped filter's first-layer threshold check several keys at a time,
//! for batch queries: the vector twin of `Expander::remix_and_start` and
//! `ThresholdsRef::bumped_flag` (remix, start, bucket, and
//! `ThresholdsRef::threshold`'s decoding of a threshold group), bit for bit, written once over [`GatherLanes`]; AVX2 (four
//! lanes) and AVX-512 (eight) implement it. A lane whose bucket may have a
//! listed threshold (under 2 % of keys) is checked by the scalar code.

use super::expand::{U64Lanes, remix_and_draw};
use crate::arch::scalar;
use crate::bumped_layout::{BumpedKey, GROUP_BUCKETS, GROUP_BYTES, ThresholdsRef};
use crate::probe::Parts;

// The group math below: 128 buckets of 22 bytes, the slots in the last 6.
const _: () = assert!(GROUP_BUCKETS == 128 && GROUP_BYTES == 22);

/// What the threshold check needs of 64-bit lanes beyond [`U64Lanes`].
///
/// # Safety
/// Every method requires that the CPU supports the implementing
/// instruction set.
pub(crate) trait GatherLanes: U64Lanes {
    /// In each lane, the little-endian `u64` at byte `offsets[lane]` of
    /// `bytes`.
    ///
    /// # Safety
    /// See the trait; every offset is at most `bytes.len() - 8`.
    unsafe fn gather(bytes: &[u8], offsets: Self) -> Self;
    /// Bit `i` set where lane `i` of `m` is.
    ///
    /// # Safety
    /// See the trait.
    unsafe fn mask_bits(m: Self::Mask) -> u32;
    /// Writes `BumpedKey { x: x[lane], at: first + lane }` of each lane
    /// set in `lanes` (below `1 << LANES`), in lane order, to the first
    /// entries of `out`; the entries after them get unspecified pairs.
    ///
    /// # Safety
    /// See the trait; `out` has `LANES` entries (all are written) and
    /// `usize` is 64 bits wide.
    unsafe fn store_packed(x: Self, first: u64, lanes: u32, out: &mut [BumpedKey]);
}

// `store_packed` writes pairs as two u64 lanes.
const _: () = assert!(size_of::<BumpedKey>() == 16 && size_of::<usize>() == 8);

/// For each mask of eight lanes, its set lanes in ascending order, then
/// zeros: the lane permutation that packs those lanes to the front.
pub(super) static PACKED_LANES: [[u8; 8]; 256] = packed_lanes();

const fn packed_lanes() -> [[u8; 8]; 256] {
    let mut table = [[0u8; 8]; 256];
    let mut mask = 0;
    while mask < 256 {
        let (mut lane, mut packed) = (0, 0);
        while lane < 8 {
            if mask >> lane & 1 == 1 {
                table[mask][packed] = lane as u8;
                packed += 1;
            }
            lane += 1;
        }
        mask += 1;
    }
    table
}

/// The scalar check of a lane the vector code leaves to it: out of line,
/// so that the scan's loop keeps its constants in registers.
#[cold]
#[inline(never)]
fn bumped_slowly(parts: &Parts, thresholds: &ThresholdsRef<'_>, hash: Option<&u64>) -> bool {
    hash.is_some_and(|&h| thresholds.bumped_flag(parts.expander.remix_and_start(h).1))
}

/// `scalar::scan_bumped`, `V::LANES` keys at a time: the same pairs in
/// `out`, but it may stop sooner, once `out` has room for fewer than
/// `V::LANES` more (a scalar scan of the keys it took writes the same
/// pairs and count). It takes at least one key when `hashes` and `out`
/// are not empty.
///
/// # Safety
/// The CPU supports `V`'s instruction set.
#[inline(always)]
pub(crate) unsafe fn scan_bumped<V: GatherLanes>(
    parts: &Parts,
    thresholds: &ThresholdsRef<'_>,
    hashes: &[u64],
    first: usize,
    out: &mut [BumpedKey],
) -> (usize, usize) {
    let e = &parts.expander;
    let groups = thresholds.groups;
    let buckets = thresholds.buckets;
    // The vector start math needs fewer than 2^32 starts; the gathers, a
    // whole group.
    if e.num_starts > u64::from(u32::MAX) || e.num_starts == 0 || groups.len() < GROUP_BYTES {
        return scalar::scan_bumped(parts, thresholds, hashes, first, out);
    }
    let (mut scanned, mut written) = (0, 0);
    // SAFETY: the caller guarantees the instruction set; the gathers'
    // offsets are clamped to `groups.len() - 8`.
    unsafe {
        let set = |v: u64| V::splat(v);
        let (seed_mix, draws) = (set(e.seed_mix), set(e.num_starts));
        let bits = set(u64::from(buckets.bits));
        let last = set(u64::from(buckets.size()) - 1);
        let (zero, one, all) = (set(0), set(1), set(u64::MAX));
        let (standard, size) = (
            set(u64::from(buckets.standard_back)),
            set(u64::from(buckets.size())),
        );
        let within_mask = set(GROUP_BUCKETS - 1);
        let slot_mask = set(0xffff);
        let slot_bucket = set(127);
        // Groups whose 22 bytes lie in `groups`; anything else reads as
        // the scalar code says.
        let groups_end = set((groups.len() - GROUP_BYTES) as u64 + 1);
        let last_u64 = set((groups.len() - 8) as u64);
        let clamp = |offsets: V| V::select(offsets.lt(last_u64), offsets, last_u64);
        let eq = |a: V, b: V| a.xor(b).lt(one);
        let lane_bits = (1u32 << V::LANES) - 1;
        while let Some(chunk) = hashes.get(scanned..scanned + V::LANES)
            && written + V::LANES <= out.len()
        {
            let (x, start) = remix_and_draw(V::load(chunk), seed_mix, draws);
            // `Buckets::locate`: the bucket, and how far back it lies.
            let bucket = start.shr_var(bits);
            let back = start.xor(all).and(last);
            // The group: 22 bytes at `group * 22`.
            let group = bucket.shr::<7>();
            let within = bucket.and(within_mask);
            let at = group.shl::<4>().add(group.shl::<2>()).add(group.shl::<1>());
            let codes = V::gather(groups, clamp(at.add(within.shr::<6>().shl::<3>())));
            let nothing_bumped = eq(codes.shr_var(within.and(set(63))).and(one), one);
            let slots = V::gather(groups, clamp(at.add(set(GROUP_BYTES as u64 - 8)))).shr::<16>();
            let mut t = standard;
            let s0 = slots.and(slot_mask);
            let s1 = slots.shr::<16>().and(slot_mask);
            let s2 = slots.shr::<32>().and(slot_mask);
            for s in [s0, s1, s2] {
                t = V::select(eq(s.and(slot_bucket), within), s.shr::<7>(), t);
            }
            let t = V::select(nothing_bumped, size, t);
            let bumped = V::mask_bits(back.ge(t));
            // The list may hold the threshold of a bumping bucket past the
            // second slot's, in a group whose second slot names a later
            // bucket than its third.
            let (b1, b2) = (s1.and(slot_bucket), s2.and(slot_bucket));
            let listed_past = V::select(b2.lt(b1), b1, set(GROUP_BUCKETS));
            let bumping_within = V::select(nothing_bumped, zero, within);
            let maybe_listed = V::mask_bits(listed_past.lt(bumping_within));
            let outside = lane_bits & !V::mask_bits(at.lt(groups_end));
            let scalar_lanes = maybe_listed | outside;
            let bumped = bumped & lane_bits;
            if scalar_lanes == 0 {
                // The bumped lanes' pairs, packed, with vector code and
                // no branch: about half the chunks bump a key (1 in 12 at
                // w = 64, eight lanes), so a branch on "any bumped"
                // mispredicted on half of them.
                if let Some(dst) = out.get_mut(written..written + V::LANES) {
                    V::store_packed(x, (first + scanned) as u64, bumped, dst);
                }
                written += bumped.count_ones() as usize;
            } else {
                // A lane for the scalar check (about 1 chunk in 7): lane by
                // lane, in order.
                let mut xs = [0u64; 8];
                x.store(&mut xs);
                let mut lanes = bumped | scalar_lanes;
                while lanes != 0 {
                    let lane = lanes.trailing_zeros() as usize;
                    lanes &= lanes - 1;
                    let is_bumped = match scalar_lanes >> lane & 1 {
                        0 => true,
                        _ => bumped_slowly(parts, thresholds, chunk.get(lane)),
                    };
                    if let (Some(slot), Some(&x)) = (out.get_mut(written), xs.get(lane)) {
                        *slot = BumpedKey {
                            x,
                            at: first + scanned + lane,
                        };
                    }
                    written += usize::from(is_bumped);
                }
            }
            scanned += V::LANES;
        }
    }
    // The last keys, fewer than a vector, go through the scalar code; so do
    // all keys when `out` had no room for a vector's worth. Otherwise the
    // scan stops here, with room left for fewer than a vector's bumped
    // keys: the caller empties `out` and comes back (the scalar code
    // would take about 12 keys for each pair it still had room for).
    if hashes.len() - scanned >= V::LANES && scanned > 0 {
        return (scanned, written);
    }
    let (rest, more) = scalar::scan_bumped(
        parts,
        thresholds,
        hashes.get(scanned..).unwrap_or(&[]),
        first + scanned,
        out.get_mut(written..).unwrap_or(&mut []),
    );
    (scanned + rest, written + more)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::Backend;
    use crate::bumped_layout::test_support::random_thresholds;
    use crate::bumped_layout::{Buckets, encode_thresholds, listed_exceptions, threshold_groups};
    use crate::hash::Expander;
    use crate::layout::{Geometry, Kind, Width};
    use crate::test_kit::splitmix64;
    use std::vec;

    type Scan =
        unsafe fn(&Parts, &ThresholdsRef<'_>, &[u64], usize, &mut [BumpedKey]) -> (usize, usize);

    /// Whether `backend` runs here; says why not, and fails when
    /// `RIBBON_REQUIRE_BACKENDS` demands it.
    fn available(backend: Backend) -> bool {
        crate::test_kit::runnable(backend.name(), backend.is_available())
    }

    #[test]
    fn avx2_threshold_scan_equals_scalar() {
        if available(Backend::Avx2) {
            sweep(super::super::avx2::scan_bumped);
        }
    }

    #[cfg(ribbon_avx512_kernels)]
    #[test]
    fn avx512_threshold_scan_equals_scalar() {
        if available(Backend::Avx512) {
            sweep(super::super::avx512::scan_bumped);
        }
    }

    /// Layers of both widths whose groups list exceptions (dense ones) or
    /// hardly any, keys covering the first and last buckets: the vector
    /// scan writes the same pairs as the scalar one and reports the same
    /// counts, for `out` of every length around the lane count.
    fn sweep(scan: Scan) {
        let mut state = 3u64;
        let (blocks, keys, out_lens): (&[usize], usize, &[usize]) = if cfg!(miri) {
            (&[1, 300], 40, &[1, 4, 9, 64])
        } else {
            (
                &[1, 2, 5, 300, 5000],
                3000,
                &[1, 3, 4, 5, 8, 9, 17, 64, 1 << 12],
            )
        };
        for width in [Width::W64, Width::W128] {
            let buckets = Buckets::for_width(width);
            for &num_blocks in blocks {
                for exceptions_per_1000 in [300u64, 5] {
                    let g =
                        Geometry::new(Kind::Standard, width, num_blocks, 8, num_blocks).unwrap();
                    let num_buckets = buckets.count(g.num_starts()) as usize;
                    let thresholds =
                        random_thresholds(buckets, num_buckets, exceptions_per_1000, &mut state);
                    let groups_len = threshold_groups(num_buckets as u64) as usize * GROUP_BYTES;
                    let mut groups = vec![0u8; groups_len];
                    let mut listed = vec![0u8; 4 * listed_exceptions(buckets, &thresholds)];
                    encode_thresholds(buckets, &thresholds, &mut groups, &mut listed).unwrap();
                    let t = ThresholdsRef {
                        buckets,
                        groups: &groups,
                        listed: &listed,
                    };
                    let parts = Parts {
                        geometry: g,
                        expander: Expander::new(&g, 7),
                    };
                    let mut hashes = vec![0, 1, u64::MAX, u64::MAX - 1, 1 << 63];
                    hashes.extend((0..keys).map(|_| splitmix64(&mut state)));
                    for &out_len in out_lens {
                        for from in [0, 1, 5] {
                            let hashes = &hashes[from..];
                            let context = || {
                                std::format!(
                                    "{width:?} blocks {num_blocks} exceptions {exceptions_per_1000} out {out_len} from {from}"
                                )
                            };
                            // Scanned to the end, `out_len` pairs at most
                            // per call as `BumpedTop::batch` does: the same
                            // pairs, and each call takes a key.
                            let scanned_all = |scan: Scan| {
                                let mut out = vec![BumpedKey::default(); out_len];
                                let (mut pairs, mut at) = (vec![], 0);
                                while at < hashes.len() {
                                    // SAFETY: the caller checked the
                                    // instruction set (the scalar scan
                                    // needs none).
                                    let (n, w) = unsafe {
                                        scan(&parts, &t, &hashes[at..], 10 + at, &mut out)
                                    };
                                    assert!(n > 0 && w <= out_len, "{}", context());
                                    pairs.extend_from_slice(&out[..w]);
                                    at += n;
                                }
                                pairs
                            };
                            let want = scanned_all(scalar::scan_bumped);
                            let got = scanned_all(scan);
                            assert_eq!(want, got, "{}", context());
                            // A bumped key at all: the comparison means something.
                            if out_len == 1 << 12 && keys > 1000 && num_blocks >= 300 {
                                assert!(!want.is_empty(), "{}", context());
                            }
                            // One call: a prefix of the scalar scan's pairs.
                            let mut want = vec![BumpedKey::default(); out_len];
                            let mut got = vec![BumpedKey::default(); out_len];
                            let a = scalar::scan_bumped(&parts, &t, hashes, 10, &mut want);
                            // SAFETY: the caller checked the instruction set.
                            let b = unsafe { scan(&parts, &t, hashes, 10, &mut got) };
                            assert!(b.0 <= a.0 && b.1 <= a.1, "{}", context());
                            assert!(b.0 > 0 || hashes.is_empty(), "{}", context());
                            assert_eq!(want[..b.1], got[..b.1], "{}", context());
                        }
                    }
                }
            }
        }
    }
}
