//! Arbitrary bytes into `FilterRef::from_bytes`; accepted filters are queried
//! single and batch, which must agree and must not read out of bounds.
#![no_main]

use libfuzzer_sys::fuzz_target;
use ribbon_kernel::FilterRef;

fuzz_target!(|data: &[u8]| {
    if let Ok(filter) = FilterRef::from_bytes(data) {
        let probes: [u64; 6] = [0, 1, u64::MAX, 0x9e37_79b9_7f4a_7c15, 1 << 63, data.len() as u64];
        let mut batch = [false; 6];
        filter.contains_batch(&probes, &mut batch).unwrap();
        for (h, b) in probes.iter().zip(batch) {
            assert_eq!(filter.contains(*h), b);
        }
    }
});
