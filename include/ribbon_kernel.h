/*
 * ribbon_kernel.h - C interface of the ribbon-kernel static library.
 *
 * Ribbon filters (Dillinger & Walzer 2021): static approximate-membership
 * filters built from 64-bit key hashes, 5-10 % above the space minimum.
 *
 * Build the library (Rust toolchain required):
 *   cargo rustc --release --lib --no-default-features --features capi \
 *       --crate-type staticlib
 * which writes target/release/libribbon_kernel.a. Link it like any static
 * archive: cc app.c -Iinclude target/release/libribbon_kernel.a
 * The library needs nothing from the platform but memcpy, memmove, memset,
 * memcmp and bcmp. It never allocates, never uses floating point, never
 * unwinds, and returns a status code instead of crashing on bad input.
 *
 * Memory: every buffer is the caller's. Plans and filter views are small
 * opaque structs the caller allocates (on the stack is fine). Scratch and
 * filter buffers are plain arrays; the filter buffer may have any alignment.
 *
 * SIMD: queries and builds use AVX2 / AVX-512 / NEON when the CPU has them
 * (detected at run time). Code running where vector registers must not be
 * touched (interrupt handlers, kernels without FPU save/restore) must call
 * ribbon_set_backend(RIBBON_BACKEND_SCALAR) first, or wrap calls in its
 * FPU/SIMD save-restore (e.g. kernel_fpu_begin/end on Linux).
 *
 * Threads: all functions are reentrant. A view may be queried from many
 * threads at once. ribbon_set_backend is process-wide and affects views
 * opened afterwards.
 *
 * This header is C99 and C++ compatible.
 */
#ifndef RIBBON_KERNEL_H
#define RIBBON_KERNEL_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Opaque structs (64 bytes each; they change size only in a major
 * version). Fill them with ribbon_plan_init* / ribbon_filter_open before any
 * other use: uninitialized structs are refused (RIBBON_ERR_UNINITIALIZED). */

/** A sized filter configuration. Plain data: may be copied with memcpy. */
typedef struct {
    uint64_t opaque[8];
} ribbon_plan;

/** A validated view over serialized filter bytes the caller keeps alive. */
typedef struct {
    uint64_t opaque[8];
} ribbon_filter;

/* ---- Kinds (see the README for guidance) ---- */
/** Homogeneous Ribbon: never fails to build; the default choice. */
#define RIBBON_KIND_HOMOGENEOUS 0u
/** Standard Ribbon: FP rate exactly 2^-r; retries seeds when building. */
#define RIBBON_KIND_STANDARD 1u
/** Standard Ribbon with smash: smaller for filters under ~10^4 keys. */
#define RIBBON_KIND_STANDARD_SMASH 2u

/* ---- Ribbon widths in bits ---- */
#define RIBBON_WIDTH_64 64u
#define RIBBON_WIDTH_128 128u

/* ---- Backends ---- */
#define RIBBON_BACKEND_SCALAR 0u
#define RIBBON_BACKEND_AVX2 1u
#define RIBBON_BACKEND_AVX512 2u
#define RIBBON_BACKEND_NEON 3u
/** ribbon_set_backend argument: return to the detected best backend. */
#define RIBBON_BACKEND_AUTO 0xffffffffu

/* ---- Status codes: 0 is success, every error is negative ---- */
#define RIBBON_OK 0
/** A required pointer was NULL. */
#define RIBBON_ERR_NULL (-1)
/** millibits_per_key is 0 or needs more than 64 columns per slot. */
#define RIBBON_ERR_INVALID_BITS_PER_KEY (-2)
/** one_in is below 2 or needs more than 64 columns per slot. */
#define RIBBON_ERR_INVALID_FP_RATE (-3)
/** The byte budget cannot hold the header and one block. */
#define RIBBON_ERR_BUDGET_TOO_SMALL (-4)
/** More hashes than the plan was made for. */
#define RIBBON_ERR_TOO_MANY_KEYS (-5)
/** A size does not fit in this platform's address space. */
#define RIBBON_ERR_TOO_LARGE (-6)
/** scratch_words is below ribbon_plan_scratch_words(). */
#define RIBBON_ERR_SCRATCH_TOO_SMALL (-7)
/** out_len is below ribbon_plan_filter_bytes(). */
#define RIBBON_ERR_OUTPUT_TOO_SMALL (-8)
/** A batch output length differs from the number of hashes. */
#define RIBBON_ERR_LENGTH_MISMATCH (-9)
/** Standard Ribbon: every seed tried failed; the output is not a filter. */
#define RIBBON_ERR_CONSTRUCTION_FAILED (-10)
/** The bytes do not start with the filter magic. */
#define RIBBON_ERR_BAD_MAGIC (-11)
/** The format version is not one this library reads. */
#define RIBBON_ERR_UNSUPPORTED_VERSION (-12)
/** A header field is out of range or inconsistent. */
#define RIBBON_ERR_CORRUPT_HEADER (-13)
/** The bytes are shorter than the header says. */
#define RIBBON_ERR_TRUNCATED (-14)
/** The bytes are longer than the header says. */
#define RIBBON_ERR_TRAILING_BYTES (-15)
/** The backend is not available on this CPU or build. */
#define RIBBON_ERR_BACKEND_UNAVAILABLE (-16)
/** An unknown kind, width or backend code. */
#define RIBBON_ERR_INVALID_ARGUMENT (-17)
/** A uint64_t pointer that is not 8-byte aligned. */
#define RIBBON_ERR_MISALIGNED (-18)
/** A plan or filter struct no init/open call filled in. */
#define RIBBON_ERR_UNINITIALIZED (-19)

/* ---- Planning ---- */

/**
 * Plans a filter for num_keys keys using millibits_per_key / 1000 payload
 * bits per key (7700: 7.7 bits, about 1 % false positives). Filters for a
 * handful of keys keep their FP rate and take more space than the budget.
 */
int32_t ribbon_plan_init(ribbon_plan *p, uint32_t kind, uint32_t width,
                         uint64_t num_keys, uint32_t millibits_per_key);

/** Plans the smallest filter with an FP rate of at most 1 / one_in. */
int32_t ribbon_plan_init_fp_rate(ribbon_plan *p, uint32_t kind, uint32_t width,
                                 uint64_t num_keys, uint64_t one_in);

/** Plans the best filter whose serialized size is at most filter_bytes. */
int32_t ribbon_plan_init_bytes(ribbon_plan *p, uint32_t kind, uint32_t width,
                               uint64_t num_keys, size_t filter_bytes);

/** uint64_t words of scratch ribbon_build needs (0 for a bad plan). */
size_t ribbon_plan_scratch_words(const ribbon_plan *p);

/** Exact serialized filter size in bytes (0 for a bad plan). */
size_t ribbon_plan_filter_bytes(const ribbon_plan *p);

/* ---- Building ---- */

/**
 * Builds a filter from n key hashes (at most the planned number; any
 * order; duplicates allowed) into out, using scratch as working memory.
 * Writes exactly ribbon_plan_filter_bytes(p) bytes at the start of out,
 * which may have any alignment; scratch and hashes must be 8-byte aligned.
 * scratch may be freed or reused once this returns. On failure the first
 * bytes of out are zeroed so they never pass for a filter.
 */
int32_t ribbon_build(const ribbon_plan *p, const uint64_t *hashes, size_t n,
                     uint64_t *scratch, size_t scratch_words, uint8_t *out,
                     size_t out_len);

/* ---- Querying ---- */

/**
 * Validates len bytes as a serialized filter (untrusted input is fine: bad
 * bytes give an error, never a crash) and fills in the view f. The bytes
 * must stay alive and unchanged while f is used. len must be the exact
 * filter size.
 */
int32_t ribbon_filter_open(ribbon_filter *f, const uint8_t *bytes, size_t len);

/** 1 if hash may be in the set, 0 if it is not, a negative status on error. */
int32_t ribbon_contains(const ribbon_filter *f, uint64_t hash);

/** Writes 1 or 0 into out[i] for each hashes[i]; returns a status. */
int32_t ribbon_contains_batch(const ribbon_filter *f, const uint64_t *hashes,
                              size_t n, uint8_t *out);

/* ---- Backends ---- */

/** The backend views opened and builds run from now on use (RIBBON_BACKEND_*). */
uint32_t ribbon_backend(void);

/**
 * Forces a backend for views opened and builds run afterwards (existing
 * views keep theirs); RIBBON_BACKEND_AUTO returns to the detected best.
 * Refuses a backend the CPU lacks (RIBBON_ERR_BACKEND_UNAVAILABLE).
 */
int32_t ribbon_set_backend(uint32_t backend);

/** A static, NUL-terminated description of a status code. */
const char *ribbon_status_str(int32_t status);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* RIBBON_KERNEL_H */
