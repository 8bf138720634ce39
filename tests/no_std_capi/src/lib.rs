//! Firmware-style use of the C ABI from Rust: the opaque C structs and
//! entry points, static buffers sized by the const bounds, and this
//! crate's own `#[panic_handler]`.
#![no_std]

use core::panic::PanicInfo;
use core::ptr::addr_of_mut;

use ribbon_kernel::bounds::{max_filter_bytes, max_scratch_words};
use ribbon_kernel::ffi::{
    ribbon_build, ribbon_contains, ribbon_filter, ribbon_filter_open, ribbon_plan,
    ribbon_plan_filter_bytes, ribbon_plan_init,
};
use ribbon_kernel::{Kind, Width};

const KEYS: usize = 256;
const BYTES: usize = max_filter_bytes(Kind::Homogeneous, Width::W64, KEYS, 8_000);
const WORDS: usize = max_scratch_words(Kind::Homogeneous, Width::W64, KEYS, 8_000);

static mut FILTER: [u8; BYTES] = [0; BYTES];
static mut SCRATCH: [u64; WORDS] = [0; WORDS];

/// Builds a filter of `KEYS` keys `seed, seed + 1, ...` in static memory
/// and returns 1 if the first key is found.
#[unsafe(no_mangle)]
pub extern "C" fn firmware_check(seed: u64) -> i32 {
    let mut keys = [0u64; KEYS];
    for (i, k) in keys.iter_mut().enumerate() {
        *k = (seed + i as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }
    let mut plan = ribbon_plan::zeroed();
    let mut view = ribbon_filter::zeroed();
    // SAFETY: single-threaded firmware entry point: the statics are used
    // by this function only, every pointer is valid for the length given.
    unsafe {
        if ribbon_plan_init(&mut plan, 0, 64, KEYS as u64, 8_000) != 0 {
            return -1;
        }
        let filter = &mut *addr_of_mut!(FILTER);
        let scratch = &mut *addr_of_mut!(SCRATCH);
        let status = ribbon_build(
            &plan,
            keys.as_ptr(),
            KEYS,
            scratch.as_mut_ptr(),
            WORDS,
            filter.as_mut_ptr(),
            BYTES,
        );
        if status != 0 {
            return status;
        }
        let len = ribbon_plan_filter_bytes(&plan);
        if ribbon_filter_open(&mut view, filter.as_ptr(), len) != 0 {
            return -2;
        }
        ribbon_contains(&view, keys[0])
    }
}

#[panic_handler]
fn panic(_: &PanicInfo<'_>) -> ! {
    loop {}
}
