//! Every `extern "C"` function of the C ABI, called from Rust with valid
//! and invalid arguments (feature `capi`), so that Miri checks the C entry
//! points for undefined behaviour: `.ci/run` runs this file natively, in
//! the Miri lanes (portable backend) and with the AVX-512 kernels under
//! Miri. `tests/c_abi.rs` runs the same functions from C.
//!
//! Buffers handed to the C functions are allocated once and then reached
//! only through the raw pointer taken at the start, as a C caller's
//! memory is: the tests that change bytes under an open view write
//! through that pointer, which Miri accepts only if the view kept the
//! caller's pointer (not one derived from a shared reference).

mod common;

use std::ffi::CStr;
use std::sync::Mutex;

use common::kit::runnable;
use ribbon_kernel::ffi::*;
use ribbon_kernel::{Backend, Error};

/// `ribbon_set_backend` is process-wide: tests that open views on a chosen
/// backend hold this while they set it and open.
static BACKEND: Mutex<()> = Mutex::new(());

/// Keys of the small structures: few under Miri, more natively.
fn small() -> usize {
    if cfg!(miri) { 40 } else { 500 }
}

/// The widths a test sweeps: both natively, w = 64 under Miri (the C
/// entry points are the same code for both; the kernels' widths run
/// under Miri in tests/backends.rs).
fn widths() -> &'static [u32] {
    if cfg!(miri) { &[64] } else { &[64, 128] }
}

/// Keys of the Bumped structures: natively more than one layer (a bumping
/// layer needs more than 2,048 keys); under Miri one layer, as Miri would
/// take minutes to build more.
fn layered() -> usize {
    if cfg!(miri) { 40 } else { 6000 }
}

/// The backends this CPU runs (those it lacks are named on stderr, and
/// fail the test where `RIBBON_REQUIRE_BACKENDS` lists them).
fn backends() -> Vec<Backend> {
    Backend::ALL
        .into_iter()
        .filter(|b| runnable(b.name(), b.is_available()))
        .collect()
}

/// A caller's buffer: allocated once, used only through `ptr`.
struct Buffer<T> {
    _storage: Vec<T>,
    ptr: *mut T,
    len: usize,
}

impl<T: Copy + Default> Buffer<T> {
    fn new(len: usize) -> Buffer<T> {
        let mut storage = vec![T::default(); len];
        let ptr = storage.as_mut_ptr();
        Buffer {
            _storage: storage,
            ptr,
            len,
        }
    }

    fn from(values: &[T]) -> Buffer<T> {
        let b: Buffer<T> = Buffer::new(values.len());
        for (i, &v) in values.iter().enumerate() {
            // SAFETY: `i < len`, inside the allocation.
            unsafe { b.ptr.add(i).write(v) };
        }
        b
    }

    fn get(&self, i: usize) -> T {
        assert!(i < self.len);
        // SAFETY: `i < len`.
        unsafe { self.ptr.add(i).read() }
    }

    fn set(&self, i: usize, v: T) {
        assert!(i < self.len);
        // SAFETY: `i < len`.
        unsafe { self.ptr.add(i).write(v) }
    }
}

fn hashes(seed: u64, n: usize) -> Vec<u64> {
    common::hashes(seed, n)
}

/// A filter of `n` keys built through the C ABI into a caller's buffer,
/// and its length.
fn c_filter(kind: u32, width: u32, keys: &[u64], millibits: u32) -> (Buffer<u8>, usize) {
    let mut plan = ribbon_plan::zeroed();
    // SAFETY: valid pointers and lengths throughout.
    unsafe {
        let status = ribbon_plan_init(&mut plan, kind, width, keys.len() as u64, millibits);
        assert_eq!(status, RIBBON_OK, "plan kind {kind} w{width}");
        let scratch = Buffer::<u64>::new(ribbon_plan_scratch_words(&plan));
        let out = Buffer::<u8>::new(ribbon_plan_filter_bytes(&plan));
        let hashes = Buffer::from(keys);
        let status = ribbon_build(
            &plan,
            hashes.ptr,
            hashes.len,
            scratch.ptr,
            scratch.len,
            out.ptr,
            out.len,
        );
        assert_eq!(status, RIBBON_OK, "build kind {kind} w{width}");
        let mut len = 0usize;
        assert_eq!(ribbon_filter_size(out.ptr, out.len, &mut len), RIBBON_OK);
        (out, len)
    }
}

/// A retrieval structure of `keys` (values `i % 2^bits`) built through the
/// C ABI, and its length.
fn c_retrieval(width: u32, keys: &[u64], bits: u32) -> (Buffer<u8>, usize, Vec<u64>) {
    let values: Vec<u64> = (0..keys.len() as u64)
        .map(|i| i.wrapping_mul(0x9e37_79b9) & (u64::MAX >> (64 - bits)))
        .collect();
    let mut plan = ribbon_retrieval_plan::zeroed();
    // SAFETY: valid pointers and lengths throughout.
    unsafe {
        let status = ribbon_retrieval_plan_init(&mut plan, width, keys.len() as u64, bits);
        assert_eq!(status, RIBBON_OK);
        let scratch = Buffer::<u64>::new(ribbon_retrieval_plan_scratch_words(&plan));
        let out = Buffer::<u8>::new(ribbon_retrieval_plan_bytes(&plan));
        let (h, v) = (Buffer::from(keys), Buffer::from(&values));
        let status = ribbon_retrieval_build(
            &plan,
            h.ptr,
            v.ptr,
            h.len,
            scratch.ptr,
            scratch.len,
            out.ptr,
            out.len,
        );
        assert_eq!(status, RIBBON_OK);
        let mut len = 0usize;
        assert_eq!(ribbon_retrieval_size(out.ptr, out.len, &mut len), RIBBON_OK);
        (out, len, values)
    }
}

/// Opens `bytes[..len]` as a filter view on `backend`.
fn open_filter(bytes: &Buffer<u8>, len: usize, backend: Backend) -> ribbon_filter {
    let _guard = BACKEND.lock().unwrap_or_else(|e| e.into_inner());
    let mut f = ribbon_filter::zeroed();
    assert_eq!(ribbon_set_backend(backend.code()), RIBBON_OK);
    // SAFETY: `bytes.ptr` is readable for `len <= bytes.len` bytes.
    let status = unsafe { ribbon_filter_open(&mut f, bytes.ptr, len) };
    assert_eq!(ribbon_set_backend(RIBBON_BACKEND_AUTO), RIBBON_OK);
    assert_eq!(status, RIBBON_OK);
    f
}

/// Opens `bytes[..len]` as a retrieval view on `backend`.
fn open_retrieval(bytes: &Buffer<u8>, len: usize, backend: Backend) -> ribbon_retrieval {
    let _guard = BACKEND.lock().unwrap_or_else(|e| e.into_inner());
    let mut r = ribbon_retrieval::zeroed();
    assert_eq!(ribbon_set_backend(backend.code()), RIBBON_OK);
    // SAFETY: `bytes.ptr` is readable for `len <= bytes.len` bytes.
    let status = unsafe { ribbon_retrieval_open(&mut r, bytes.ptr, len) };
    assert_eq!(ribbon_set_backend(RIBBON_BACKEND_AUTO), RIBBON_OK);
    assert_eq!(status, RIBBON_OK);
    r
}

/// Issue 38, defect 1: bytes rewritten under an open Standard retrieval
/// view (a header claiming 2^20 blocks) once made `ribbon_retrieval_get`
/// read past them with the NEON and AVX-512 kernels and return garbage
/// with the others. A view keeps what it decoded at open (issue 39): its
/// single and batch queries answer from the payload it validated, some
/// answer and nothing read outside the bytes (Miri checks that with the
/// AVX-512 kernels).
#[test]
fn bytes_rewritten_under_an_open_view_are_never_read_past() {
    let keys = hashes(38, small());
    for backend in backends() {
        for &width in widths() {
            let (bytes, len, values) = c_retrieval(width, &keys, 8);
            let r = open_retrieval(&bytes, len, backend);
            // SAFETY: the view's bytes are alive (changed on purpose).
            unsafe {
                assert_eq!(ribbon_retrieval_get(&r, keys[1]), values[1]);
                for (i, b) in (1u64 << 20).to_le_bytes().into_iter().enumerate() {
                    bytes.set(24 + i, b);
                }
                for &k in &keys {
                    assert!(
                        ribbon_retrieval_get(&r, k) < 1 << 8,
                        "{} w{width}: a value past 8 bits",
                        backend.name()
                    );
                }
                let out = Buffer::<u64>::new(keys.len());
                let h = Buffer::from(&keys);
                let status = ribbon_retrieval_get_batch(&r, h.ptr, h.len, out.ptr);
                assert_eq!(status, RIBBON_OK, "{} w{width}", backend.name());
                for i in 0..keys.len() {
                    assert!(
                        out.get(i) < 1 << 8,
                        "{} w{width}: a batch value past 8 bits",
                        backend.name()
                    );
                }
            }
            for kind in [0, 1, 2] {
                let (bytes, len) = c_filter(kind, width, &keys, 8000);
                let f = open_filter(&bytes, len, backend);
                // SAFETY: as above.
                unsafe {
                    assert_eq!(ribbon_contains(&f, keys[1]), 1);
                    for (i, b) in (1u64 << 20).to_le_bytes().into_iter().enumerate() {
                        bytes.set(24 + i, b);
                    }
                    // The view keeps its geometry: some answer, no read
                    // outside the bytes.
                    for &k in &keys {
                        let answer = ribbon_contains(&f, k);
                        assert!((0..=1).contains(&answer) || answer < 0);
                    }
                    let out = Buffer::<u8>::new(keys.len());
                    let h = Buffer::from(&keys);
                    let status = ribbon_contains_batch(&f, h.ptr, h.len, out.ptr);
                    assert!(status <= 0, "{} kind {kind} w{width}", backend.name());
                }
            }
        }
    }
}

/// Issue 39: the view structs keep the decoded first layer and the kernel
/// choice, which a query uses without decoding the bytes again. Every
/// byte of a valid filter and retrieval view, changed on its own (one bit,
/// or all of them), makes every entry point that takes the struct refuse
/// it: no answer from a changed struct, and so no read through a changed
/// pointer, length, geometry or kernel choice. Bumped views (a layer that
/// bumps) and Homogeneous ones; natively every byte and three changes,
/// under Miri a byte in seven and one change.
#[test]
fn every_changed_byte_of_a_view_struct_is_refused() {
    let keys = hashes(39, layered());
    let step = if cfg!(miri) { 7 } else { 1 };
    let changes: &[u8] = if cfg!(miri) {
        &[0x01]
    } else {
        &[0x01, 0x80, 0xff]
    };
    let h = Buffer::from(&keys[..8]);
    let out8 = Buffer::<u8>::new(8);
    let out64 = Buffer::<u64>::new(8);
    for kind in [0, 3] {
        let (bytes, len) = c_filter(kind, 64, &keys, 8000);
        let f = open_filter(&bytes, len, Backend::current());
        let size = core::mem::size_of::<ribbon_filter>();
        for at in (0..size).step_by(step) {
            for &change in changes {
                let mut bad = ribbon_filter::zeroed();
                // SAFETY: `bad` is a copy of a valid struct, changed as
                // plain bytes; the view's bytes are alive and unchanged.
                unsafe {
                    core::ptr::copy_nonoverlapping(&f, &mut bad, 1);
                    *(&mut bad as *mut ribbon_filter).cast::<u8>().add(at) ^= change;
                    let what = format!("kind {kind}, byte {at} ^ {change:#x}");
                    assert_eq!(
                        ribbon_contains(&bad, keys[0]),
                        RIBBON_ERR_UNINITIALIZED,
                        "{what}"
                    );
                    assert_eq!(
                        ribbon_contains_batch(&bad, h.ptr, h.len, out8.ptr),
                        RIBBON_ERR_UNINITIALIZED,
                        "{what}"
                    );
                    assert_eq!(ribbon_filter_kind(&bad), RIBBON_ERR_UNINITIALIZED, "{what}");
                    assert_eq!(
                        ribbon_filter_width(&bad),
                        RIBBON_ERR_UNINITIALIZED,
                        "{what}"
                    );
                    assert_eq!(ribbon_filter_keys(&bad), 0, "{what}");
                    assert_eq!(ribbon_filter_bytes(&bad), 0, "{what}");
                    assert_eq!(ribbon_filter_column_fp_ppt(&bad), 0, "{what}");
                    assert_eq!(ribbon_filter_estimated_fp_ppt(&bad), 0, "{what}");
                }
            }
        }
        // SAFETY: the unchanged struct still answers.
        unsafe { assert_eq!(ribbon_contains(&f, keys[0]), 1) };
    }
    let (bytes, len, values) = c_retrieval(64, &keys, 8);
    let r = open_retrieval(&bytes, len, Backend::current());
    let size = core::mem::size_of::<ribbon_retrieval>();
    for at in (0..size).step_by(step) {
        for &change in changes {
            let mut bad = ribbon_retrieval::zeroed();
            // SAFETY: as above.
            unsafe {
                core::ptr::copy_nonoverlapping(&r, &mut bad, 1);
                *(&mut bad as *mut ribbon_retrieval).cast::<u8>().add(at) ^= change;
                let what = format!("retrieval, byte {at} ^ {change:#x}");
                assert_eq!(ribbon_retrieval_get(&bad, keys[0]), 0, "{what}");
                assert_eq!(
                    ribbon_retrieval_get_batch(&bad, h.ptr, h.len, out64.ptr),
                    RIBBON_ERR_UNINITIALIZED,
                    "{what}"
                );
                assert_eq!(ribbon_retrieval_value_bits(&bad), 0, "{what}");
                assert_eq!(ribbon_retrieval_keys(&bad), 0, "{what}");
                assert_eq!(ribbon_retrieval_bytes(&bad), 0, "{what}");
            }
        }
    }
    // SAFETY: the unchanged struct still answers.
    unsafe { assert_eq!(ribbon_retrieval_get(&r, keys[0]), values[0]) };
}

/// Issue 38, defect 2: the batch entry points wrote their answers through
/// a pointer made from a shared slice (read-only provenance), which Miri
/// reports under Stacked and Tree Borrows on the first call. Natively this
/// checks the answers; under Miri, that writing them is sound.
#[test]
fn batch_entry_points_write_through_the_callers_pointer() {
    let keys = [b"apple".as_slice(), b"banana"];
    let ptrs = Buffer::from(&keys.map(|k| k.as_ptr()));
    let lens = Buffer::from(&keys.map(|k| k.len()));
    let out = Buffer::<u64>::new(2);
    // SAFETY: valid arrays of two entries.
    unsafe {
        assert_eq!(ribbon_hash_keys(ptrs.ptr, lens.ptr, 2, out.ptr), RIBBON_OK);
        assert_eq!(out.get(0), ribbon_hash_key(keys[0].as_ptr(), keys[0].len()));
        assert_eq!(out.get(1), ribbon_kernel::hash_key(keys[1]));
    }
    let hashes = hashes(2, small());
    let (bytes, len) = c_filter(0, 64, &hashes, 8000);
    let f = open_filter(&bytes, len, Backend::current());
    let h = Buffer::from(&hashes);
    let answers = Buffer::<u8>::new(hashes.len());
    // SAFETY: valid view and arrays.
    unsafe {
        assert_eq!(
            ribbon_contains_batch(&f, h.ptr, h.len, answers.ptr),
            RIBBON_OK
        );
    }
    assert!((0..hashes.len()).all(|i| answers.get(i) == 1));
    let (bytes, len, values) = c_retrieval(64, &hashes, 7);
    let r = open_retrieval(&bytes, len, Backend::current());
    let got = Buffer::<u64>::new(hashes.len());
    // SAFETY: valid view and arrays.
    unsafe {
        assert_eq!(
            ribbon_retrieval_get_batch(&r, h.ptr, h.len, got.ptr),
            RIBBON_OK
        );
    }
    assert!((0..hashes.len()).all(|i| got.get(i) == values[i]));
}

/// Every function of the C ABI on valid arguments, for every kind and
/// width, then on NULL pointers and structs no init or open call filled in.
#[test]
fn every_entry_point_on_valid_and_invalid_arguments() {
    let keys = hashes(7, small());
    let null_f: *const ribbon_filter = std::ptr::null();
    for kind in [0u32, 1, 2, 3] {
        for &width in widths() {
            let keys = if kind == 3 {
                hashes(8, layered())
            } else {
                keys.clone()
            };
            let n = keys.len() as u64;
            // SAFETY: valid pointers throughout; NULL where a NULL is the
            // point of the call.
            unsafe {
                let mut p = ribbon_plan::zeroed();
                assert_eq!(
                    ribbon_plan_init_fp_rate(&mut p, kind, width, n, 100),
                    RIBBON_OK
                );
                assert!(ribbon_plan_filter_bytes(&p) > 0);
                let budget = ribbon_plan_filter_bytes(&p);
                assert_eq!(
                    ribbon_plan_init_bytes(&mut p, kind, width, n, budget),
                    RIBBON_OK
                );
                assert!(ribbon_plan_filter_bytes(&p) <= budget);
                // A seed set on the plan is the one its builds start from.
                assert_eq!(ribbon_plan_init(&mut p, kind, width, n, 7500), RIBBON_OK);
                assert_eq!(ribbon_plan_set_seed(&mut p, 0x5eed), RIBBON_OK);
                let scratch = Buffer::<u64>::new(ribbon_plan_scratch_words(&p));
                let out = Buffer::<u8>::new(ribbon_plan_filter_bytes(&p));
                let h = Buffer::from(&keys);
                let status =
                    ribbon_build(&p, h.ptr, h.len, scratch.ptr, scratch.len, out.ptr, out.len);
                assert_eq!(status, RIBBON_OK);
                let seed = u32::from_le_bytes([out.get(8), out.get(9), out.get(10), out.get(11)]);
                assert_eq!(seed, 0x5eed);
                assert_eq!(
                    ribbon_plan_set_seed(std::ptr::null_mut(), 1),
                    RIBBON_ERR_NULL
                );
                assert_eq!(ribbon_plan_init(&mut p, kind, width, n, 7500), RIBBON_OK);
                assert!(
                    ribbon_plan_filter_bytes(&p) <= ribbon_max_filter_bytes(kind, width, n, 7500)
                );
                assert!(
                    ribbon_plan_scratch_words(&p) <= ribbon_max_scratch_words(kind, width, n, 7500)
                );
                assert!(
                    ribbon_plan_banding_scratch_words(&p)
                        <= ribbon_max_banding_scratch_words(kind, width, n, 7500)
                );
                let (bytes, len) = c_filter(kind, width, &keys, 7500);
                let f = open_filter(&bytes, len, Backend::current());
                // A flipped bit: refused, unless the checksum is skipped.
                let last = bytes.get(len - 1);
                bytes.set(len - 1, last ^ 4);
                let mut g = ribbon_filter::zeroed();
                assert_eq!(
                    ribbon_filter_open(&mut g, bytes.ptr, len),
                    Error::ChecksumMismatch.code()
                );
                assert_eq!(
                    ribbon_filter_open_unverified(&mut g, bytes.ptr, len),
                    RIBBON_OK
                );
                bytes.set(len - 1, last);
                assert_eq!(ribbon_filter_kind(&f), kind as i32);
                assert_eq!(ribbon_filter_width(&f), width as i32);
                assert_eq!(ribbon_filter_keys(&f), n);
                assert_eq!(ribbon_filter_bytes(&f), len);
                assert!(ribbon_filter_column_fp_ppt(&f) > 0);
                assert!(ribbon_filter_estimated_fp_ppt(&f) > 0);
                assert!(keys.iter().all(|&k| ribbon_contains(&f, k) == 1));
                // Streaming banding (not for Bumped Ribbon).
                let capacity = ribbon_plan_banding_capacity(&p);
                let words = ribbon_plan_banding_scratch_words(&p);
                let mut b = ribbon_banding::zeroed();
                let scratch = Buffer::<u64>::new(words.max(1));
                let status = ribbon_banding_init(&mut b, &p, scratch.ptr, words);
                if kind == 3 {
                    assert_eq!(status, Error::Unsupported.code());
                    assert_eq!((capacity, words), (0, 0));
                    continue;
                }
                assert_eq!(status, RIBBON_OK);
                // Standard keys that contradict earlier ones stay out.
                let mut added = Vec::new();
                for &k in &keys {
                    let outcome = ribbon_banding_add(&mut b, k);
                    assert!(outcome >= 0);
                    // RIBBON_ADD_INSERTED (0) or RIBBON_ADD_REDUNDANT (1).
                    if outcome <= 1 {
                        added.push(k);
                    }
                }
                assert_eq!(ribbon_banding_added(&b), added.len() as u64);
                let out = Buffer::<u8>::new(ribbon_plan_filter_bytes(&p));
                assert_eq!(ribbon_banding_finish(&mut b, out.ptr, out.len), RIBBON_OK);
                let f = open_filter(&out, out.len, Backend::current());
                assert!(added.iter().all(|&k| ribbon_contains(&f, k) == 1));
            }
        }
    }
    // Retrieval, both forms.
    for (width, n) in [(64, small()), (128, small()), (64, 10_001)] {
        let n = if cfg!(miri) { n.min(40) } else { n };
        let keys = hashes(9, n);
        let (bytes, len, values) = c_retrieval(width, &keys, 5);
        let r = open_retrieval(&bytes, len, Backend::current());
        // SAFETY: a valid view, and its bytes.
        unsafe {
            let mut g = ribbon_retrieval::zeroed();
            let last = bytes.get(len - 1);
            bytes.set(len - 1, last ^ 4);
            assert_eq!(
                ribbon_retrieval_open(&mut g, bytes.ptr, len),
                Error::ChecksumMismatch.code()
            );
            assert_eq!(
                ribbon_retrieval_open_unverified(&mut g, bytes.ptr, len),
                RIBBON_OK
            );
            bytes.set(len - 1, last);
            assert_eq!(ribbon_retrieval_value_bits(&r), 5);
            assert_eq!(ribbon_retrieval_keys(&r), n as u64);
            assert_eq!(ribbon_retrieval_bytes(&r), len);
            for (i, &k) in keys.iter().enumerate() {
                assert_eq!(ribbon_retrieval_get(&r, k), values[i]);
            }
        }
    }
    // Bounds for any key count: saturated past any plan, never a panic.
    for kind in [0, 1, 2, 3] {
        for keys in [1u64 << 41, 1 << 48, u64::MAX] {
            assert_eq!(ribbon_max_filter_bytes(kind, 64, keys, 8000), usize::MAX);
            assert_eq!(ribbon_max_scratch_words(kind, 128, keys, 8000), usize::MAX);
            let banding = ribbon_max_banding_scratch_words(kind, 64, keys, 8000);
            assert_eq!(banding, if kind == 3 { 0 } else { usize::MAX });
        }
    }
    // Process-wide calls and strings.
    assert!(Backend::from_code(ribbon_backend()).is_some());
    assert_eq!(ribbon_set_backend(99), RIBBON_ERR_INVALID_ARGUMENT);
    assert_eq!(ribbon_version() >> 16, 0);
    // SAFETY: static NUL-terminated strings.
    unsafe {
        let v = CStr::from_ptr(ribbon_version_str()).to_str().unwrap();
        assert_eq!(v, env!("CARGO_PKG_VERSION"));
        for e in Error::ALL {
            let s = CStr::from_ptr(ribbon_status_str(e.code()));
            assert_eq!(s, e.message());
        }
        assert!(!CStr::from_ptr(ribbon_status_str(12345)).is_empty());
        assert_eq!(
            ribbon_hash_key_with_seed(b"k".as_ptr(), 1, 0),
            ribbon_hash_key(b"k".as_ptr(), 1)
        );
        assert_eq!(
            ribbon_hash_key(std::ptr::null(), 0),
            ribbon_kernel::hash_key(b"")
        );
    }
    // NULL pointers and structs never filled in.
    // SAFETY: NULL, or pointers to zeroed / garbage structs.
    unsafe {
        let zero_p = ribbon_plan::zeroed();
        let mut p = ribbon_plan::zeroed();
        assert_eq!(
            ribbon_plan_init(std::ptr::null_mut(), 0, 64, 10, 8000),
            RIBBON_ERR_NULL
        );
        assert_eq!(
            ribbon_plan_init(&mut p, 9, 64, 10, 8000),
            RIBBON_ERR_INVALID_ARGUMENT
        );
        assert_eq!(
            ribbon_plan_init(&mut p, 0, 65, 10, 8000),
            RIBBON_ERR_INVALID_ARGUMENT
        );
        assert_eq!(
            ribbon_plan_init_fp_rate(std::ptr::null_mut(), 0, 64, 10, 100),
            RIBBON_ERR_NULL
        );
        assert_eq!(
            ribbon_plan_init_bytes(std::ptr::null_mut(), 0, 64, 10, 100),
            RIBBON_ERR_NULL
        );
        assert_eq!(ribbon_plan_scratch_words(&zero_p), 0);
        assert_eq!(ribbon_plan_filter_bytes(std::ptr::null()), 0);
        assert_eq!(ribbon_plan_banding_capacity(&zero_p), 0);
        assert_eq!(ribbon_plan_banding_scratch_words(&zero_p), 0);
        let mut out = [0u8; 64];
        assert_eq!(
            ribbon_build(
                &zero_p,
                std::ptr::null(),
                0,
                std::ptr::null_mut(),
                0,
                out.as_mut_ptr(),
                64
            ),
            RIBBON_ERR_UNINITIALIZED
        );
        let mut b = ribbon_banding::zeroed();
        assert_eq!(
            ribbon_banding_init(&mut b, &zero_p, std::ptr::null_mut(), 0),
            RIBBON_ERR_UNINITIALIZED
        );
        assert_eq!(ribbon_banding_add(&mut b, 1), RIBBON_ERR_UNINITIALIZED);
        assert_eq!(ribbon_banding_added(&b), 0);
        assert_eq!(
            ribbon_banding_finish(&mut b, out.as_mut_ptr(), 64),
            RIBBON_ERR_UNINITIALIZED
        );
        let mut f = ribbon_filter::zeroed();
        assert_eq!(
            ribbon_filter_open(&mut f, std::ptr::null(), 0),
            RIBBON_ERR_NULL
        );
        assert_eq!(
            ribbon_filter_open(&mut f, out.as_ptr(), 64),
            Error::BadMagic.code()
        );
        let mut filter_len = 0usize;
        assert!(ribbon_filter_size(out.as_ptr(), 8, &mut filter_len) < 0);
        assert!(ribbon_retrieval_size(out.as_ptr(), 8, &mut filter_len) < 0);
        assert_eq!(ribbon_contains(null_f, 1), RIBBON_ERR_NULL);
        assert_eq!(ribbon_contains(&f, 1), RIBBON_ERR_UNINITIALIZED);
        let mut answers = [0u8; 4];
        assert_eq!(
            ribbon_contains_batch(&f, keys.as_ptr(), 4, answers.as_mut_ptr()),
            RIBBON_ERR_UNINITIALIZED
        );
        assert_eq!(ribbon_filter_kind(&f), RIBBON_ERR_UNINITIALIZED);
        assert_eq!(ribbon_filter_width(null_f), RIBBON_ERR_NULL);
        assert_eq!(ribbon_filter_keys(&f), 0);
        assert_eq!(ribbon_filter_bytes(&f), 0);
        assert_eq!(ribbon_filter_column_fp_ppt(&f), 0);
        assert_eq!(ribbon_filter_estimated_fp_ppt(&f), 0);
        let mut rp = ribbon_retrieval_plan::zeroed();
        assert_eq!(ribbon_retrieval_plan_init(&mut rp, 64, 4, 8), RIBBON_OK);
        assert_eq!(ribbon_retrieval_plan_set_seed(&mut rp, 0x5eed), RIBBON_OK);
        let bytes = ribbon_retrieval_plan_bytes(&rp);
        let mut map = vec![0u8; bytes];
        let (vals, mut words) = (
            [1u64, 2, 3, 4],
            vec![0u64; ribbon_retrieval_plan_scratch_words(&rp)],
        );
        let status = ribbon_retrieval_build(
            &rp,
            keys.as_ptr(),
            vals.as_ptr(),
            4,
            words.as_mut_ptr(),
            words.len(),
            map.as_mut_ptr(),
            bytes,
        );
        assert_eq!(status, RIBBON_OK);
        assert_eq!(map[8..12], 0x5eedu32.to_le_bytes());
        assert_eq!(
            ribbon_retrieval_plan_set_seed(&mut ribbon_retrieval_plan::zeroed(), 1),
            RIBBON_ERR_UNINITIALIZED
        );
        assert_eq!(
            ribbon_retrieval_plan_init(&mut rp, 64, 10, 0),
            Error::InvalidValueBits.code()
        );
        assert_eq!(ribbon_retrieval_plan_scratch_words(&rp), 0);
        assert_eq!(ribbon_retrieval_plan_bytes(&rp), 0);
        assert_eq!(
            ribbon_retrieval_build(
                &rp,
                keys.as_ptr(),
                keys.as_ptr(),
                1,
                std::ptr::null_mut(),
                0,
                out.as_mut_ptr(),
                64
            ),
            RIBBON_ERR_UNINITIALIZED
        );
        let mut r = ribbon_retrieval::zeroed();
        assert_eq!(
            ribbon_retrieval_open(&mut r, out.as_ptr(), 64),
            Error::BadMagic.code()
        );
        assert_eq!(ribbon_retrieval_get(&r, 1), 0);
        let mut values = [0u64; 4];
        assert_eq!(
            ribbon_retrieval_get_batch(&r, keys.as_ptr(), 4, values.as_mut_ptr()),
            RIBBON_ERR_UNINITIALIZED
        );
        assert_eq!(ribbon_retrieval_value_bits(&r), 0);
        assert_eq!(ribbon_retrieval_keys(&r), 0);
        assert_eq!(ribbon_retrieval_bytes(&r), 0);
        // Garbage in every word: refused, never read through. The words
        // cover the largest struct (a smaller buffer would break the
        // functions' contract, which Miri reports).
        let words = [0x5242_4b5f_464c_5401u64; 20];
        for size in [
            std::mem::size_of::<ribbon_filter>(),
            std::mem::size_of::<ribbon_retrieval>(),
            std::mem::size_of::<ribbon_plan>(),
            std::mem::size_of::<ribbon_banding>(),
        ] {
            assert!(size <= words.len() * 8);
        }
        let f = words.as_ptr().cast::<ribbon_filter>();
        assert_eq!(ribbon_contains(f, 1), RIBBON_ERR_UNINITIALIZED);
        let r = words.as_ptr().cast::<ribbon_retrieval>();
        assert_eq!(ribbon_retrieval_get(r, 1), 0);
        let p = words.as_ptr().cast::<ribbon_plan>();
        assert_eq!(ribbon_plan_filter_bytes(p), 0);
        let b = words.as_ptr().cast::<ribbon_banding>();
        assert_eq!(ribbon_banding_added(b), 0);
        let mut out8 = [0u64; 2];
        assert_eq!(
            ribbon_hash_keys(std::ptr::null(), std::ptr::null(), 2, out8.as_mut_ptr()),
            RIBBON_ERR_NULL
        );
    }
}

/// Every `extern "C"` function of `src/ffi/` is called in this file
/// (so that the Miri lanes, which run it, cover the whole C ABI).
#[test]
#[cfg_attr(miri, ignore = "reads files: `cargo test` checks the sources")]
fn this_file_calls_every_extern_c_function() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/ffi");
    let mut sources = String::new();
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "rs") {
            sources += &std::fs::read_to_string(path).unwrap();
        }
    }
    let this = include_str!("capi.rs");
    let mut missing = Vec::new();
    let mut found = 0;
    for line in sources.lines() {
        let Some(rest) = line.split("extern \"C\" fn ").nth(1) else {
            continue;
        };
        let name: String = rest
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        // Called by nothing: the unwinding personality no code uses.
        if name == "rust_eh_personality" {
            continue;
        }
        found += 1;
        if !this.contains(&format!("{name}(")) {
            missing.push(name);
        }
    }
    assert!(found >= 40, "only {found} functions under {dir:?}");
    assert!(missing.is_empty(), "not called here: {missing:?}");
}

/// Hostile bytes through the C opens (the C test's loop, under Miri
/// too): random and nearly valid buffers (a real header, fields and
/// payload bytes changed) are refused, or open unverified and answer
/// every query without reading outside them; verified, each one the
/// structure's checks accept is refused by its checksum.
#[test]
fn hostile_bytes_through_the_c_opens() {
    let rounds = if cfg!(miri) { 30 } else { 4000 };
    let keys = hashes(11, small());
    let (filter, filter_len) = c_filter(3, 64, &keys, 8000);
    let (retrieval, retrieval_len, _) = c_retrieval(64, &keys, 8);
    let mut state = 0x0bad_u64;
    let (mut accepted, mut refused) = (0, 0);
    for round in 0..rounds {
        let (source, len) = if round % 2 == 0 {
            (&filter, filter_len)
        } else {
            (&retrieval, retrieval_len)
        };
        let mut bytes: Vec<u8> = (0..len).map(|i| source.get(i)).collect();
        // A few fields or bytes changed, or the length, or all random.
        match round % 4 {
            0 | 1 => {
                for _ in 0..1 + round % 3 {
                    let at = common::splitmix64(&mut state) as usize % bytes.len();
                    bytes[at] ^= common::splitmix64(&mut state) as u8 | 1;
                }
            }
            2 => bytes.truncate(common::splitmix64(&mut state) as usize % bytes.len()),
            _ => {
                for b in bytes.iter_mut() {
                    *b = common::splitmix64(&mut state) as u8;
                }
            }
        }
        let original: Vec<u8> = (0..len).map(|i| source.get(i)).collect();
        // What a verified open of them must answer.
        let expect = if bytes == original {
            RIBBON_OK
        } else {
            Error::ChecksumMismatch.code()
        };
        let buffer = Buffer::from(&bytes);
        let probes = Buffer::from(&hashes(round as u64, 8));
        // SAFETY: the buffers are valid for their lengths.
        unsafe {
            let (mut f, mut r) = (ribbon_filter::zeroed(), ribbon_retrieval::zeroed());
            let opened_filter = ribbon_filter_open_unverified(&mut f, buffer.ptr, buffer.len);
            let opened_map = ribbon_retrieval_open_unverified(&mut r, buffer.ptr, buffer.len);
            if opened_filter == RIBBON_OK {
                accepted += 1;
                let answers = Buffer::<u8>::new(8);
                assert_eq!(
                    ribbon_contains_batch(&f, probes.ptr, 8, answers.ptr),
                    RIBBON_OK
                );
                for i in 0..8 {
                    assert_eq!(
                        ribbon_contains(&f, probes.get(i)),
                        i32::from(answers.get(i))
                    );
                }
                let verified = ribbon_filter_open(&mut f, buffer.ptr, buffer.len);
                assert_eq!(verified, expect);
            } else if opened_map == RIBBON_OK {
                accepted += 1;
                let values = Buffer::<u64>::new(8);
                assert_eq!(
                    ribbon_retrieval_get_batch(&r, probes.ptr, 8, values.ptr),
                    RIBBON_OK
                );
                for i in 0..8 {
                    assert_eq!(ribbon_retrieval_get(&r, probes.get(i)), values.get(i));
                }
                let verified = ribbon_retrieval_open(&mut r, buffer.ptr, buffer.len);
                assert_eq!(verified, expect);
            } else {
                refused += 1;
                assert!(opened_filter < 0 && opened_map < 0);
                assert_eq!(ribbon_contains(&f, 1), RIBBON_ERR_UNINITIALIZED);
                assert_eq!(ribbon_retrieval_get(&r, 1), 0);
            }
        }
    }
    println!("{accepted} opened unverified and queried safely, {refused} refused");
    assert!(accepted > 0 && refused > 0);
}
