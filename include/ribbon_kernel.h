/*
 * ribbon_kernel.h - C interface of the ribbon-kernel static library.
 *
 * Ribbon filters (Dillinger & Walzer 2021): static approximate-membership
 * filters built from 64-bit key hashes, 5-10 % above the space minimum,
 * and retrieval structures (1- to 64-bit values per key hash) on the same
 * machinery.
 *
 * Build the library (Rust toolchain required):
 *   cargo rustc --release --lib --no-default-features --features staticlib \
 *       --crate-type staticlib
 * which writes target/release/libribbon_kernel.a. Link it like any static
 * archive: cc app.c -Iinclude target/release/libribbon_kernel.a
 * The library needs nothing from the platform but memcpy, memmove, memset,
 * memcmp and bcmp (on 32-bit Arm also the __aeabi_memcpy and __aeabi_memclr
 * families, as newlib provides; tests/embedded/mem.c has all of them). It
 * never allocates, does no floating-point arithmetic, never unwinds, and
 * returns a status code instead of crashing on bad input.
 *
 * Memory: every buffer is the caller's. Plans, filter views, streaming
 * bandings and their retrieval twins are small opaque structs the caller
 * allocates (on the stack is fine). Scratch and filter buffers are plain
 * arrays; the filter buffer may have any alignment.
 *
 * Overlap: a buffer or struct a function writes must not overlap anything
 * else passed to the same call (other buffers, structs, the scratch a
 * banding keeps); inputs that are only read may overlap each other. Every
 * function compares the address ranges first and returns
 * RIBBON_ERR_OVERLAP without writing anything. Empty buffers (length 0)
 * overlap nothing; ranges that merely touch are fine.
 *
 * SIMD: queries and builds use AVX2 / AVX-512 / NEON when the CPU has them
 * (detected at run time). The hosted x86_64 library uses SSE registers even
 * with RIBBON_BACKEND_SCALAR forced (SSE2 is that target's baseline and the
 * compiler copies, zeroes and vectorizes with it): call it only where SIMD
 * use is allowed, e.g. between kernel_fpu_begin() and kernel_fpu_end() on
 * Linux. Code that must not touch FPU/SIMD registers (kernels, interrupt
 * handlers) links the library built with --target x86_64-unknown-none
 * (soft-float) or, on Cortex-M, thumbv7em-none-eabihf; tests/embedded/run.sh
 * checks that no code a C program links from either has an FPU/SIMD
 * instruction. RIBBON_BACKEND_SCALAR only keeps calls off AVX2/AVX-512/NEON.
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

/* ---- Version of this header; ribbon_version() gives the library's ---- */
#define RIBBON_VERSION_MAJOR 0
#define RIBBON_VERSION_MINOR 1
#define RIBBON_VERSION_PATCH 0
#define RIBBON_VERSION_STRING "0.1.0"
/** (major << 16) | (minor << 8) | patch, as ribbon_version() returns. */
#define RIBBON_VERSION_NUMBER \
    ((RIBBON_VERSION_MAJOR << 16) | (RIBBON_VERSION_MINOR << 8) | RIBBON_VERSION_PATCH)

/** The library's version, as RIBBON_VERSION_NUMBER. */
uint32_t ribbon_version(void);
/** The library's version as a static, NUL-terminated string. */
const char *ribbon_version_str(void);

/* ---- Opaque structs (they change size only in a major version). Fill
 * them with ribbon_plan_init* / ribbon_filter_open / ribbon_banding_init /
 * ribbon_retrieval_plan_init / ribbon_retrieval_open before any other use:
 * uninitialized structs are refused (RIBBON_ERR_UNINITIALIZED). */

/** A sized filter configuration. Plain data: may be copied with memcpy. */
typedef struct {
    uint64_t opaque[8];
} ribbon_plan;

/** A validated view over serialized filter bytes the caller keeps alive.
 * It keeps the filter's first layer decoded, so a query reads no header
 * again. */
typedef struct {
    uint64_t opaque[20];
} ribbon_filter;

/** A streaming build in progress; its rows live in the caller's scratch. */
typedef struct {
    uint64_t opaque[16];
} ribbon_banding;

/** A sized retrieval configuration. Plain data: may be copied with memcpy. */
typedef struct {
    uint64_t opaque[8];
} ribbon_retrieval_plan;

/** A validated view over a serialized retrieval structure the caller keeps
 * alive (its first layer decoded, as ribbon_filter keeps a filter's). */
typedef struct {
    uint64_t opaque[20];
} ribbon_retrieval;

/* ---- Kinds (see docs/guide.md, "Choosing a kind and width") ---- */
/** Homogeneous Ribbon: never fails to build; the default choice. */
#define RIBBON_KIND_HOMOGENEOUS 0u
/** Standard Ribbon: FP rate exactly 2^-r; retries seeds when building. */
#define RIBBON_KIND_STANDARD 1u
/** Standard Ribbon with smash: smaller for filters under ~10^4 keys. */
#define RIBBON_KIND_STANDARD_SMASH 2u
/** Bumped Ribbon: layers of Standard Ribbon, 0.1-0.2 % over the minimum
 * space; FP rate exactly 2^-r. A build writes at most
 * ribbon_plan_filter_bytes() bytes and says how many. */
#define RIBBON_KIND_BUMPED 3u

/* ---- Ribbon widths in bits ---- */
#define RIBBON_WIDTH_64 64u
#define RIBBON_WIDTH_128 128u

/* ---- Backends ---- */
#define RIBBON_BACKEND_SCALAR 0u
#define RIBBON_BACKEND_AVX2 1u
#define RIBBON_BACKEND_AVX512 2u
#define RIBBON_BACKEND_NEON 3u
/** Portable SIMD (the build's own vector instructions); always available. */
#define RIBBON_BACKEND_PORTABLE 4u
/** ribbon_set_backend argument: return to the detected best backend. */
#define RIBBON_BACKEND_AUTO 0xffffffffu

/* ---- Outcomes of ribbon_banding_add (errors are negative) ---- */
/** The key's equation took a slot of its own. */
#define RIBBON_ADD_INSERTED 0
/** The key is represented by earlier equations (e.g. a duplicate hash). */
#define RIBBON_ADD_REDUNDANT 1
/** Standard Ribbon: the key contradicts earlier ones; it was not added. */
#define RIBBON_ADD_INCONSISTENT 2
/** The banding holds its capacity of keys; this one was not added. */
#define RIBBON_ADD_FULL 3

/* ---- Status codes: 0 is success, every error is negative ---- */
#define RIBBON_OK 0
/** A required pointer was NULL. */
#define RIBBON_ERR_NULL (-1)
/** millibits_per_key is below 1000 (one bit per key), above 131072, or
 * needs more than 64 columns per slot. */
#define RIBBON_ERR_INVALID_BITS_PER_KEY (-2)
/** one_in is below 2 or needs more than 64 columns per slot. */
#define RIBBON_ERR_INVALID_FP_RATE (-3)
/** The byte budget cannot hold the header and one bit per key. */
#define RIBBON_ERR_BUDGET_TOO_SMALL (-4)
/** More hashes than the plan was made for, or more keys than 2^40. */
#define RIBBON_ERR_TOO_MANY_KEYS (-5)
/** A size does not fit in this platform's address space. */
#define RIBBON_ERR_TOO_LARGE (-6)
/** scratch_words is below ribbon_plan_scratch_words(). */
#define RIBBON_ERR_SCRATCH_TOO_SMALL (-7)
/** out_len is below ribbon_plan_filter_bytes(). */
#define RIBBON_ERR_OUTPUT_TOO_SMALL (-8)
/** A batch output length differs from the number of hashes. */
#define RIBBON_ERR_LENGTH_MISMATCH (-9)
/** Every seed tried failed; the output is not a filter. Standard Ribbon
 * builds no longer return it (they fall back to a Homogeneous filter when
 * every seed fails); a Bumped build does when a layer finds no seed within
 * its caps, which takes hashes crafted against the seeds. */
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
/** A plan, filter, banding or retrieval struct no init/open call filled
 * in. */
#define RIBBON_ERR_UNINITIALIZED (-19)
/** Two buffers (or a buffer and a struct) passed to one call overlap and
 * one of them is written (see "Overlap" above); nothing was written. */
#define RIBBON_ERR_OVERLAP (-20)
/** The kind does not do this: RIBBON_KIND_BUMPED has no incremental
 * banding (ribbon_banding_init refuses its plans). */
#define RIBBON_ERR_UNSUPPORTED (-21)
/** A retrieval plan's value_bits is not in 1..=64. */
#define RIBBON_ERR_INVALID_VALUE_BITS (-22)
/** A value given to a retrieval build has bits at or above value_bits. */
#define RIBBON_ERR_VALUE_TOO_WIDE (-23)
/** A retrieval build got the same hash twice with different values. */
#define RIBBON_ERR_CONFLICTING_VALUES (-24)
/** The bytes' checksum does not match them (a flipped bit, a torn write,
 * two structures spliced, bytes changed since they were written): refused
 * by ribbon_filter_open and ribbon_retrieval_open. */
#define RIBBON_ERR_CHECKSUM_MISMATCH (-25)

/* ---- Key hashing ----
 *
 * Filters are built from and queried with 64-bit key hashes. Any hash with
 * well-spread values will do; these functions give XXH3-64 of xxHash 0.8
 * (XXH3_64bits / XXH3_64bits_withSeed), so a key hashed here, with the C
 * xxhash library or with any other xxh3 implementation gets the same value.
 * The values are stable on every platform and byte order and in every later
 * version, so filters built from them stay valid. The single-key functions
 * cannot fail: a NULL key (or a len past PTRDIFF_MAX, which no object has)
 * hashes as the empty key. */

/** XXH3-64 of the len bytes at key (any alignment), seed 0. */
uint64_t ribbon_hash_key(const uint8_t *key, size_t len);

/** XXH3-64 of the len bytes at key with seed; seed 0 is ribbon_hash_key. */
uint64_t ribbon_hash_key_with_seed(const uint8_t *key, size_t len, uint64_t seed);

/**
 * out[i] = ribbon_hash_key(keys[i], lens[i]) for each i < n. Returns
 * RIBBON_OK; RIBBON_ERR_NULL for a NULL array with n > 0 or a NULL keys[i]
 * with lens[i] > 0; RIBBON_ERR_MISALIGNED for an array not aligned for its
 * type (out: 8 bytes); RIBBON_ERR_TOO_LARGE for a size past PTRDIFF_MAX;
 * RIBBON_ERR_OVERLAP when out overlaps keys, lens or any key's bytes (the
 * keys may overlap each other and the two arrays). On error out is left
 * untouched.
 */
int32_t ribbon_hash_keys(const uint8_t *const *keys, const size_t *lens, size_t n,
                         uint64_t *out);

/* ---- Planning ---- */

/**
 * Plans a filter for num_keys keys using millibits_per_key / 1000 payload
 * bits per key (7700: 7.7 bits, about 1 % false positives). Filters for a
 * handful of keys keep their FP rate and take more space than the budget.
 *
 * All three ribbon_plan_init* functions return RIBBON_ERR_TOO_LARGE (or
 * RIBBON_ERR_TOO_MANY_KEYS past 2^40 keys) for a plan whose filter or
 * scratch would not fit this platform's address space in bytes, so
 * ribbon_plan_scratch_words(p) * sizeof(uint64_t) never wraps size_t (on
 * 32-bit targets, Standard w = 128 plans of 2^28 keys are too large).
 */
int32_t ribbon_plan_init(ribbon_plan *p, uint32_t kind, uint32_t width,
                         uint64_t num_keys, uint32_t millibits_per_key);

/** Plans the smallest filter with an FP rate of at most 1 / one_in. */
int32_t ribbon_plan_init_fp_rate(ribbon_plan *p, uint32_t kind, uint32_t width,
                                 uint64_t num_keys, uint64_t one_in);

/** Plans the best filter whose serialized size is at most filter_bytes.
 * Any budget from one bit per key up works, SIZE_MAX included: past 64
 * columns per slot the filter stops growing. Less is
 * RIBBON_ERR_BUDGET_TOO_SMALL. */
int32_t ribbon_plan_init_bytes(ribbon_plan *p, uint32_t kind, uint32_t width,
                               uint64_t num_keys, size_t filter_bytes);

/** uint64_t words of scratch ribbon_build needs (0 for a bad plan). */
size_t ribbon_plan_scratch_words(const ribbon_plan *p);

/** Exact serialized filter size in bytes (0 for a bad plan); for
 * RIBBON_KIND_BUMPED the most a build writes (ribbon_filter_size on the
 * output gives the filter's own). */
size_t ribbon_plan_filter_bytes(const ribbon_plan *p);

/** Sets the first seed builds with p try (0 after ribbon_plan_init*).
 * Where key hashes come from untrusted parties, draw it from a secret
 * random source: hashes crafted against the default seeds then land like
 * any others (a build retries with seeds from a digest of the keys anyway;
 * SECURITY.md says what that costs an attacker). RIBBON_OK, or
 * RIBBON_ERR_NULL / RIBBON_ERR_UNINITIALIZED for a bad plan. */
int32_t ribbon_plan_set_seed(ribbon_plan *p, uint32_t seed);

/* ---- Static sizing ----
 *
 * Upper bounds of ribbon_plan_filter_bytes, ribbon_plan_scratch_words and
 * ribbon_plan_banding_scratch_words for ribbon_plan_init(kind, width, keys,
 * millibits), as integer constant expressions for static arrays:
 *
 *   #define KEYS 10000u
 *   static uint8_t filter[RIBBON_FILTER_BYTES_MAX(RIBBON_KIND_HOMOGENEOUS,
 *                                                 RIBBON_WIDTH_64, KEYS, 7700)];
 *   static uint64_t scratch[RIBBON_SCRATCH_WORDS_MAX(RIBBON_KIND_HOMOGENEOUS,
 *                                                    RIBBON_WIDTH_64, KEYS, 7700)];
 *
 * The filter size is exact from 1,000 keys on; the scratch bounds are at
 * most 10 % above the plan's from 1,000 keys on. Arguments must be
 * constants (they are evaluated many times, and each use expands to about
 * 150 KB of preprocessed text: name a bound once, in an enum or a macro
 * used once); valid for keys <= 2^40 and millibits <= 131072 (past
 * them the arithmetic overflows: ribbon_max_* then answer SIZE_MAX). The same
 * numbers at run time: ribbon_max_*.
 * Rust: ribbon_kernel::bounds. The formulas are explained there. */
#define RIBBON_FILTER_BYTES_MAX(kind, width, keys, millibits) \
    ((kind) == RIBBON_KIND_BUMPED ? RIBBON__SIZE(keys, RIBBON__B_BYTES(width, keys, millibits)) : \
    RIBBON__SIZE(keys, 48 + RIBBON__MAX(RIBBON__DIV_CEIL(RIBBON__DIV_CEIL( \
        (long long)(keys) * (long long)(millibits), 1000), (long long)(width)), \
        RIBBON__DIV_CEIL((long long)(millibits), 1000)) * ((long long)(width) / 8)))
#define RIBBON_BANDING_SCRATCH_WORDS_MAX(kind, width, keys, millibits) \
    ((kind) == RIBBON_KIND_BUMPED ? (size_t)0 : \
    RIBBON__SIZE(keys, RIBBON__SLOTS_MAX(kind, width, keys, millibits) * \
              RIBBON__ROW_WORDS(kind, width)))
#define RIBBON_SCRATCH_WORDS_MAX(kind, width, keys, millibits) \
    ((kind) == RIBBON_KIND_BUMPED ? RIBBON__SIZE(keys, RIBBON__B_SCRATCH(width, keys)) : \
    RIBBON__SIZE(keys, RIBBON__SLOTS_MAX(kind, width, keys, millibits) * \
                  RIBBON__ROW_WORDS(kind, width) + \
              (long long)(keys) + RIBBON__MIN(1ll << 20, 2 * RIBBON__DIV_CEIL( \
                  2 * (long long)(keys) + 256, \
                  RIBBON__ROW_WORDS(kind, width) == 1 ? 2048 \
                  : RIBBON__ROW_WORDS(kind, width) == 2 ? 1024 : 512))))

size_t ribbon_max_filter_bytes(uint32_t kind, uint32_t width,
                               uint64_t num_keys, uint32_t millibits);
size_t ribbon_max_scratch_words(uint32_t kind, uint32_t width,
                                uint64_t num_keys, uint32_t millibits);
size_t ribbon_max_banding_scratch_words(uint32_t kind, uint32_t width,
                                        uint64_t num_keys, uint32_t millibits);

/* Helpers of the bounds above (not part of the API). */
/* A bound x for keys keys as a size_t: where size_t is narrower than 64
 * bits, a bound past SIZE_MAX, or more keys than SIZE_MAX (no plan takes
 * them), is SIZE_MAX, as ribbon_max_* answer, never a wrapped value; an
 * array of it fails to compile. (This doubles the text of each use there.) */
#if SIZE_MAX < 0xffffffffffffffffull
#define RIBBON__SIZE(keys, x) \
    ((unsigned long long)(keys) > (unsigned long long)SIZE_MAX || \
     (unsigned long long)(x) > (unsigned long long)SIZE_MAX ? SIZE_MAX : (size_t)(x))
#else
#define RIBBON__SIZE(keys, x) ((size_t)(x))
#endif
#define RIBBON__MAX(a, b) ((a) > (b) ? (a) : (b))
#define RIBBON__MIN(a, b) ((a) < (b) ? (a) : (b))
#define RIBBON__DIV_CEIL(a, b) (((a) + (b) - 1) / (b))
/* ceil(log2(n)), exact to n = 2^41 */
#define RIBBON__CEIL_LOG2(n) \
    (((n) > 1ull) + ((n) > 2ull) + ((n) > 4ull) + ((n) > 8ull) + \
     ((n) > (1ull << 4)) + ((n) > (1ull << 5)) + ((n) > (1ull << 6)) + \
     ((n) > (1ull << 7)) + ((n) > (1ull << 8)) + ((n) > (1ull << 9)) + \
     ((n) > (1ull << 10)) + ((n) > (1ull << 11)) + ((n) > (1ull << 12)) + \
     ((n) > (1ull << 13)) + ((n) > (1ull << 14)) + ((n) > (1ull << 15)) + \
     ((n) > (1ull << 16)) + ((n) > (1ull << 17)) + ((n) > (1ull << 18)) + \
     ((n) > (1ull << 19)) + ((n) > (1ull << 20)) + ((n) > (1ull << 21)) + \
     ((n) > (1ull << 22)) + ((n) > (1ull << 23)) + ((n) > (1ull << 24)) + \
     ((n) > (1ull << 25)) + ((n) > (1ull << 26)) + ((n) > (1ull << 27)) + \
     ((n) > (1ull << 28)) + ((n) > (1ull << 29)) + ((n) > (1ull << 30)) + \
     ((n) > (1ull << 31)) + ((n) > (1ull << 32)) + ((n) > (1ull << 33)) + \
     ((n) > (1ull << 34)) + ((n) > (1ull << 35)) + ((n) > (1ull << 36)) + \
     ((n) > (1ull << 37)) + ((n) > (1ull << 38)) + ((n) > (1ull << 39)) + \
     ((n) > (1ull << 40)))
#define RIBBON__ROW_WORDS(kind, width) \
    ((long long)(width) / 64 + ((kind) != RIBBON_KIND_HOMOGENEOUS))
/* Homogeneous: eq. 7 and the tail term at r columns (thousandths), with
 * log10 of the keys (thousandths) from above. The plan iterates
 * r = bits / (1 + eps(r)) four times from r = bits; the same steps with
 * eps from above and from below (eq. 7 alone) in turn end at least at the
 * plan's r (see src/bounds.rs). */
#define RIBBON__HOM_EQ7(width, r) ((16000 + (r)) / 4 * ((width) == 64 ? 110 : 105) / 100)
#define RIBBON__HOM_TAIL(width, r, log10_keys) \
    (6600 + ((width) == 64 ? 300 : 200) * ((r) - 7000) / 1000 + \
     1300 * (RIBBON__MIN(log10_keys, 301 * (r) / 1000 + 3900) - 6000) / 1000)
#define RIBBON__PER_WIDTH(width, eps_w_milli) ((eps_w_milli) * 1000 / (long long)(width))
#define RIBBON__HOM_STEP(width, mb, eps_w_milli) \
    ((long long)(mb) * 1000000 / (1000000 + RIBBON__PER_WIDTH(width, eps_w_milli)))
#define RIBBON__HOM_STEP_ABOVE(width, keys, mb, r) \
    RIBBON__HOM_STEP(width, mb, \
                     (keys) <= (1ull << 15) && (mb) <= 70000 \
                         ? RIBBON__HOM_EQ7(width, r) \
                         : RIBBON__MAX(RIBBON__HOM_EQ7(width, (long long)(mb)), \
                                       RIBBON__HOM_TAIL(width, (long long)(mb), 12342ll)))
#define RIBBON__HOM_STEP_BELOW(width, mb, r) RIBBON__HOM_STEP(width, mb, RIBBON__HOM_EQ7(width, r))
#define RIBBON__HOM_R2(width, keys, mb) \
    RIBBON__HOM_STEP_BELOW(width, mb, RIBBON__HOM_STEP_ABOVE(width, keys, mb, (long long)(mb)))
#define RIBBON__HOM_R4(width, keys, mb) \
    (RIBBON__HOM_STEP_BELOW(width, mb, RIBBON__HOM_STEP_ABOVE(width, keys, mb, RIBBON__HOM_R2(width, keys, mb))) + \
     ((mb) == 1))
#define RIBBON__HOM_EPS(width, keys, mb) \
    RIBBON__PER_WIDTH(width, RIBBON__MAX(RIBBON__HOM_EQ7(width, RIBBON__HOM_R4(width, keys, mb)), \
                                         RIBBON__HOM_TAIL(width, RIBBON__HOM_R4(width, keys, mb), \
                                                          RIBBON__CEIL_LOG2(keys) * 30103ll / 100)))
/* Standard: with w = 128 and 512 to 2047 keys (4 to 16 blocks) the plan's
 * table itself (src/plan.rs STANDARD_W128, STANDARD_SMASH_W128) at log2 of
 * the keys in 1/256 units, which is linear in the keys there; elsewhere a
 * line above the table per kind and width. */
#define RIBBON__X128(keys) \
    ((keys) < 1024 ? 2048 + ((long long)(keys) >> 1) : 2304 + ((long long)(keys) >> 2))
#define RIBBON__SEGMENT(x, xa, ya, xb, yb) ((ya) + ((yb) - (ya)) * ((x) - (xa)) / ((xb) - (xa)))
#define RIBBON__STD_EPS_128(kind, keys) \
    (RIBBON__X128(keys) <= 2386 \
         ? ((kind) == RIBBON_KIND_STANDARD ? 24000ll \
                                           : RIBBON__SEGMENT(RIBBON__X128(keys), 2048, 19900ll, 2386, 7900ll)) \
         : ((kind) == RIBBON_KIND_STANDARD \
                ? RIBBON__SEGMENT(RIBBON__X128(keys), 2386, 24000ll, 2839, 20200ll) \
                : RIBBON__SEGMENT(RIBBON__X128(keys), 2386, 7900ll, 2839, 4600ll)))
#define RIBBON__STD_EPS(kind, width, keys) \
    ((width) == 128 && (keys) >= 512 && (keys) < 2048 \
         ? RIBBON__STD_EPS_128(kind, keys) \
         : RIBBON__MAX((kind) == RIBBON_KIND_STANDARD ? ((width) == 64 ? 61900 : 24000) \
                                                     : ((width) == 64 ? 26700 : 19900), \
                       ((kind) == RIBBON_KIND_STANDARD \
                            ? ((width) == 64 ? -46707 : -26022) \
                            : ((width) == 64 ? -47432 : -26322)) + \
                           ((width) == 64 ? 8300 : 3800) * RIBBON__CEIL_LOG2(keys)))
#define RIBBON__EPS(kind, width, keys, mb) \
    ((kind) == RIBBON_KIND_HOMOGENEOUS ? RIBBON__HOM_EPS(width, keys, mb) \
                                       : RIBBON__STD_EPS(kind, width, keys))
#define RIBBON__SLOTS(kind, width, keys, mb) \
    RIBBON__DIV_CEIL((long long)(keys) * (1000000 + RIBBON__EPS(kind, width, keys, mb)), \
                     1000000)
#define RIBBON__SLOTS_MAX(kind, width, keys, mb) \
    ((kind) == RIBBON_KIND_HOMOGENEOUS \
         ? RIBBON__MAX((RIBBON__SLOTS(kind, width, keys, mb) + (long long)(width) / 2) / \
                           (long long)(width), \
                       RIBBON__DIV_CEIL((long long)(keys) + RIBBON__MAX( \
                           RIBBON__DIV_CEIL(3 * (long long)(keys) * \
                                                RIBBON__EPS(kind, width, keys, mb), 4000000), \
                           8 + RIBBON__DIV_CEIL((long long)(mb), 1000)), (long long)(width))) * \
               (long long)(width) \
         : RIBBON__DIV_CEIL(RIBBON__SLOTS(kind, width, keys, mb), (long long)(width)) * \
               (long long)(width))
/* Bumped Ribbon (src/bumped_layout.rs, layer_bounds): each layer's keys
 * capped at 8.5 % (w = 64) or 3.8 % (w = 128) of the layer before plus 512;
 * a layer with more than 2048 keys (its cap) bumps, at 0.92 or 0.965 slots
 * per key in whole blocks, with one threshold group of 22 bytes per 128
 * buckets of 128 or 512 starts and up to a group count plus 16 listed
 * exceptions of 4 bytes; the last layer has up to 2048 keys in up to
 * 47/32 of their slots. Every layer is sized as the larger of both and
 * has a 32-byte table entry. Unrolled for 12 layers (2^40 keys need at
 * most 10). */
#define RIBBON__B_NEXT(w, c) ((long long)(c) * ((w) == 64 ? 85000ll : 38000ll) / 1000000 + 512)
#define RIBBON__B_C0(w, n) ((long long)(n))
#define RIBBON__B_C1(w, n) RIBBON__B_NEXT(w, RIBBON__B_C0(w, n))
#define RIBBON__B_C2(w, n) RIBBON__B_NEXT(w, RIBBON__B_C1(w, n))
#define RIBBON__B_C3(w, n) RIBBON__B_NEXT(w, RIBBON__B_C2(w, n))
#define RIBBON__B_C4(w, n) RIBBON__B_NEXT(w, RIBBON__B_C3(w, n))
#define RIBBON__B_C5(w, n) RIBBON__B_NEXT(w, RIBBON__B_C4(w, n))
#define RIBBON__B_C6(w, n) RIBBON__B_NEXT(w, RIBBON__B_C5(w, n))
#define RIBBON__B_C7(w, n) RIBBON__B_NEXT(w, RIBBON__B_C6(w, n))
#define RIBBON__B_C8(w, n) RIBBON__B_NEXT(w, RIBBON__B_C7(w, n))
#define RIBBON__B_C9(w, n) RIBBON__B_NEXT(w, RIBBON__B_C8(w, n))
#define RIBBON__B_C10(w, n) RIBBON__B_NEXT(w, RIBBON__B_C9(w, n))
#define RIBBON__B_C11(w, n) RIBBON__B_NEXT(w, RIBBON__B_C10(w, n))
/* Blocks of a bumping layer for c > 2048 keys (at least one block). */
#define RIBBON__B_BLOCKS(w, c) \
    RIBBON__DIV_CEIL(RIBBON__DIV_CEIL((c) * ((w) == 64 ? 920000ll : 965000ll), 1000000), \
                     (long long)(w))
/* Blocks of the last layer's largest attempt for min(c, 2048) keys. */
#define RIBBON__B_LAST_BLOCKS(w, c) \
    RIBBON__DIV_CEIL(RIBBON__MIN(c, 2048ll) + RIBBON__MIN(c, 2048ll) * 15 / 32, (long long)(w))
/* Payload bytes of b blocks of mb / 1000 columns; the upper blocks are
 * the fewest last ones with mb % 1000 thousandths of the starts. */
#define RIBBON__B_NEED(w, b, mb) (((long long)(mb) % 1000) * (((b) - 1) * (long long)(w) + 1))
#define RIBBON__B_UPPER(w, b, mb) \
    ((long long)(mb) / 1000 >= 64 || (long long)(mb) % 1000 == 0 || (b) == 0 ? 0 \
     : RIBBON__MIN(b, 1 + (RIBBON__B_NEED(w, b, mb) > 1000 \
                               ? RIBBON__DIV_CEIL(RIBBON__B_NEED(w, b, mb) - 1000, 1000 * (long long)(w)) \
                               : 0)))
#define RIBBON__B_PAYLOAD(w, b, mb) \
    (((b) * ((long long)(mb) / 1000) + RIBBON__B_UPPER(w, b, mb)) * ((long long)(w) / 8))
#define RIBBON__B_BUCKETS(w, b) \
    RIBBON__DIV_CEIL((b) * (long long)(w) - (long long)(w) + 1, (w) == 64 ? 128 : 512)
#define RIBBON__B_GROUPS(w, b) RIBBON__DIV_CEIL(RIBBON__B_BUCKETS(w, b), 128)
#define RIBBON__B_BUMPING(w, c, mb) \
    (RIBBON__B_GROUPS(w, RIBBON__B_BLOCKS(w, c)) * 26 + 64 + \
     RIBBON__B_PAYLOAD(w, RIBBON__B_BLOCKS(w, c), mb))
#define RIBBON__B_LAST(w, c, mb) RIBBON__B_PAYLOAD(w, RIBBON__B_LAST_BLOCKS(w, c), mb)
/* Layer with cap c, after a layer with cap p (p > 2048: it exists). */
#define RIBBON__B_LAYER(w, p, c, mb) \
    ((p) > 2048 ? 32 + ((c) <= 2048 ? RIBBON__B_LAST(w, c, mb) \
                                    : RIBBON__MAX(RIBBON__B_LAST(w, c, mb), \
                                                  RIBBON__B_BUMPING(w, c, mb))) : 0)
#define RIBBON__B_BYTES(w, n, mb) \
    (48 + RIBBON__B_LAYER(w, 2049ll, RIBBON__B_C0(w, n), mb) + \
     RIBBON__B_LAYER(w, RIBBON__B_C0(w, n), RIBBON__B_C1(w, n), mb) + \
     RIBBON__B_LAYER(w, RIBBON__B_C1(w, n), RIBBON__B_C2(w, n), mb) + \
     RIBBON__B_LAYER(w, RIBBON__B_C2(w, n), RIBBON__B_C3(w, n), mb) + \
     RIBBON__B_LAYER(w, RIBBON__B_C3(w, n), RIBBON__B_C4(w, n), mb) + \
     RIBBON__B_LAYER(w, RIBBON__B_C4(w, n), RIBBON__B_C5(w, n), mb) + \
     RIBBON__B_LAYER(w, RIBBON__B_C5(w, n), RIBBON__B_C6(w, n), mb) + \
     RIBBON__B_LAYER(w, RIBBON__B_C6(w, n), RIBBON__B_C7(w, n), mb) + \
     RIBBON__B_LAYER(w, RIBBON__B_C7(w, n), RIBBON__B_C8(w, n), mb) + \
     RIBBON__B_LAYER(w, RIBBON__B_C8(w, n), RIBBON__B_C9(w, n), mb) + \
     RIBBON__B_LAYER(w, RIBBON__B_C9(w, n), RIBBON__B_C10(w, n), mb) + \
     RIBBON__B_LAYER(w, RIBBON__B_C10(w, n), RIBBON__B_C11(w, n), mb))
/* Scratch: rows of the largest (the first) layer, the second layer's keys,
 * the keys, a counter per bucket of the first (or, if more, the banding
 * lanes' kept lists: 7 of w + bucket size halfwords) and a threshold per
 * bucket of the first. */
#define RIBBON__B_FIRST_BUCKETS(w, n) \
    ((long long)(n) > 2048 ? RIBBON__B_BUCKETS(w, RIBBON__B_BLOCKS(w, (long long)(n))) : 0)
#define RIBBON__B_SCRATCH(w, n) \
    (RIBBON__MAX(RIBBON__B_LAST_BLOCKS(w, (long long)(n)), \
                 (long long)(n) > 2048 ? RIBBON__B_BLOCKS(w, (long long)(n)) : 0) * \
         (long long)(w) * ((long long)(w) / 64 + 1) + \
     ((long long)(n) > 2048 ? RIBBON__B_NEXT(w, n) : 0) + (long long)(n) + \
     ((long long)(n) > 2048 ? RIBBON__MAX(RIBBON__B_FIRST_BUCKETS(w, n), (w) == 64 ? 672 : 2240) : 0) + \
     RIBBON__DIV_CEIL(RIBBON__B_FIRST_BUCKETS(w, n), 4))

/* ---- Building ---- */

/**
 * Builds a filter from n key hashes (at most the planned number; any
 * order; duplicates allowed) into out, using scratch as working memory.
 * Writes exactly ribbon_plan_filter_bytes(p) bytes at the start of out,
 * which may have any alignment; scratch and hashes must be 8-byte aligned.
 * scratch may be freed or reused once this returns. hashes, scratch, out
 * and *p must not overlap one another (RIBBON_ERR_OVERLAP).
 *
 * Standard kinds try up to 64 seeds. Should every one fail (hashes crafted
 * against the public hashing constants and the known seeds can do that),
 * the build writes a Homogeneous filter of the same length instead, which
 * keeps every key at a slightly higher FP rate (ribbon_filter_kind tells;
 * SECURITY.md has the details), so a plan made by ribbon_plan_init* never
 * fails to build.
 *
 * On failure the first min(out_len, 48) bytes of out are zeroed, whatever
 * the error, so that a filter built there before never passes for the
 * result: ribbon_filter_open on out then fails. The only exceptions write
 * nothing at all: out NULL (RIBBON_ERR_NULL), out_len past PTRDIFF_MAX
 * (RIBBON_ERR_TOO_LARGE) and overlapping buffers (RIBBON_ERR_OVERLAP).
 * Bytes of out past the first 48 may hold partial output after a failure;
 * nothing past out_len is ever written.
 */
int32_t ribbon_build(const ribbon_plan *p, const uint64_t *hashes, size_t n,
                     uint64_t *scratch, size_t scratch_words, uint8_t *out,
                     size_t out_len);

/* ---- Building one key at a time ---- */

/*
 * A streaming build needs only ribbon_plan_banding_scratch_words(p) words
 * of scratch (the banded system, no copy of the keys), and takes keys as
 * they arrive:
 *
 *   ribbon_banding b;
 *   ribbon_banding_init(&b, &plan, scratch, words);
 *   while (have_key()) {
 *       int32_t r = ribbon_banding_add(&b, next_hash());
 *       if (r == RIBBON_ADD_FULL || r == RIBBON_ADD_INCONSISTENT) break;
 *   }
 *   ribbon_banding_finish(&b, out, ribbon_plan_filter_bytes(&plan));
 *
 * Every key added before the stop is in the filter. A banding accepts at
 * most ribbon_plan_banding_capacity(p) keys: the planned count for the
 * Standard kinds, about 97 % of it for Homogeneous Ribbon (a stream cannot
 * be retried with another seed, so it keeps a safety margin for its FP
 * rate). The scratch must stay alive and untouched between the calls.
 */

/** uint64_t words of scratch ribbon_banding_init needs (0 for a bad plan). */
size_t ribbon_plan_banding_scratch_words(const ribbon_plan *p);

/** Keys a banding accepts before RIBBON_ADD_FULL (0 for a bad plan). */
uint64_t ribbon_plan_banding_capacity(const ribbon_plan *p);

/**
 * Starts a streaming build of plan p over scratch (8-byte aligned). b, p
 * and scratch must not overlap one another (RIBBON_ERR_OVERLAP, which
 * leaves b as it was); any other error leaves b uninitialized.
 */
int32_t ribbon_banding_init(ribbon_banding *b, const ribbon_plan *p,
                            uint64_t *scratch, size_t scratch_words);

/** Adds one key hash: RIBBON_ADD_* (>= 0), or a negative status. */
int32_t ribbon_banding_add(ribbon_banding *b, uint64_t hash);

/** Keys added so far (0 for a bad banding). */
uint64_t ribbon_banding_added(const ribbon_banding *b);

/**
 * Writes the filter of the keys added (exactly ribbon_plan_filter_bytes(p)
 * bytes; out may have any alignment). out must not overlap the banding's
 * scratch or *b (RIBBON_ERR_OVERLAP). On success the banding is spent and
 * its scratch free. On error nothing is written, neither b nor any byte of
 * out: the banding can be finished again (with a larger out, say), and
 * whatever out held before is still there, so do not open it.
 */
int32_t ribbon_banding_finish(ribbon_banding *b, uint8_t *out, size_t out_len);

/* ---- Querying ---- */

/**
 * Validates len bytes as a serialized filter (untrusted input is fine: bad
 * bytes give an error, never a crash) and fills in the view f. The bytes
 * must stay alive and unchanged while f is used. len must be the exact
 * filter size. The checksum in the header is verified against every other
 * byte (one pass over them): a flipped bit anywhere, a filter cut short or
 * extended, or the header of one filter with another's payload is refused
 * (RIBBON_ERR_CHECKSUM_MISMATCH, RIBBON_ERR_TRUNCATED,
 * RIBBON_ERR_TRAILING_BYTES or a header error). f must not lie inside the
 * bytes (RIBBON_ERR_OVERLAP, which leaves f as it was); any other error
 * leaves f uninitialized.
 */
int32_t ribbon_filter_open(ribbon_filter *f, const uint8_t *bytes, size_t len);

/**
 * ribbon_filter_open without the checksum: every header field (and a
 * Bumped filter's layers) is still validated, so no query can read outside
 * the bytes, but the bytes are not hashed. Only for bytes the caller has
 * verified already (its own block checksum): bytes changed since they were
 * written then give wrong answers, false negatives included, silently.
 */
int32_t ribbon_filter_open_unverified(ribbon_filter *f, const uint8_t *bytes, size_t len);

/**
 * Reads the exact length of the serialized filter that starts at bytes from
 * its header (validated like ribbon_filter_open does, except that len may
 * be larger than the filter, e.g. a filter inside a larger block, and that
 * a Bumped filter's thresholds are checked only when it opens) into
 * *filter_len. len must cover at least the 48-byte header, and for
 * RIBBON_KIND_BUMPED also the layer table after it (32 bytes per layer;
 * with less, RIBBON_ERR_TRUNCATED): RIBBON_SIZE_PREFIX_BYTES always
 * suffice. On error *filter_len is 0, except for a filter_len inside the
 * bytes (RIBBON_ERR_OVERLAP), which is not written.
 */
int32_t ribbon_filter_size(const uint8_t *bytes, size_t len, size_t *filter_len);

/** Bytes from a filter's start that always suffice for ribbon_filter_size:
 * the 48-byte header and up to 16 layer table entries of 32 bytes (a reader
 * of filters stored back to back reads this many, or what is left). */
#define RIBBON_SIZE_PREFIX_BYTES 560u

/** The view's kind (RIBBON_KIND_*), or a negative status. */
int32_t ribbon_filter_kind(const ribbon_filter *f);
/** The view's ribbon width in bits (64 or 128), or a negative status. */
int32_t ribbon_filter_width(const ribbon_filter *f);
/** Keys the filter was built from (0 for a bad view). */
uint64_t ribbon_filter_keys(const ribbon_filter *f);
/** The filter's serialized length in bytes (0 for a bad view). */
size_t ribbon_filter_bytes(const ribbon_filter *f);

/** 1 if hash may be in the set, 0 if it is not, a negative status on error. */
int32_t ribbon_contains(const ribbon_filter *f, uint64_t hash);

/**
 * Writes 1 or 0 into out[i] for each hashes[i]; returns a status. out must
 * not overlap hashes, *f or the filter bytes f was opened on
 * (RIBBON_ERR_OVERLAP).
 */
int32_t ribbon_contains_batch(const ribbon_filter *f, const uint64_t *hashes,
                              size_t n, uint8_t *out);

/**
 * The FP rate of the filter's columns in parts per trillion (10^-12): exact
 * for the Standard kinds, a lower bound for Homogeneous Ribbon. 0 for a bad
 * view or an empty filter.
 */
uint64_t ribbon_filter_column_fp_ppt(const ribbon_filter *f);

/**
 * The filter's FP rate measured from its bytes, in parts per trillion: the
 * column rate, plus for Homogeneous Ribbon the excess of locally
 * overloaded stretches of its solution. Reads the whole filter once.
 */
uint64_t ribbon_filter_estimated_fp_ppt(const ribbon_filter *f);

/* ---- Retrieval: a value of 1 to 64 bits per key hash ----
 *
 * A retrieval structure (a static function) maps each key hash of a set to
 * a value of value_bits bits and takes about value_bits bits per key
 * (Standard Ribbon with the values as the equations' right sides; about
 * 10 % over that at w = 64, 5 % at w = 128) for small sets, and Bumped
 * Ribbon layers (0.1-0.4 % over value_bits at 10^6 keys) from 10,000 keys
 * (w = 64) or 30,000 (w = 128) on. It stores no keys: any other
 * hash gets an arbitrary value below 2^value_bits, so it answers "which
 * value", never "is this a key".
 *
 *   ribbon_retrieval_plan plan;
 *   ribbon_retrieval map;
 *   ribbon_retrieval_plan_init(&plan, RIBBON_WIDTH_128, n, 8);
 *   ribbon_retrieval_build(&plan, hashes, values, n, scratch,
 *                          ribbon_retrieval_plan_scratch_words(&plan),
 *                          out, ribbon_retrieval_plan_bytes(&plan));
 *   ribbon_retrieval_size(out, ribbon_retrieval_plan_bytes(&plan), &len);
 *   ribbon_retrieval_open(&map, out, len);
 *   value = ribbon_retrieval_get(&map, hash);
 *
 * Serialized structures have their own magic: a filter does not open as a
 * retrieval structure, nor the other way round. Backends are as for
 * filters (ribbon_set_backend applies to views opened afterwards). */

/**
 * Plans a retrieval structure for up to num_keys key hashes with values of
 * value_bits bits (1 to 64; otherwise RIBBON_ERR_INVALID_VALUE_BITS) on
 * ribbon width width (RIBBON_WIDTH_64 or RIBBON_WIDTH_128; otherwise
 * RIBBON_ERR_INVALID_ARGUMENT). RIBBON_ERR_TOO_MANY_KEYS past 2^40 keys,
 * RIBBON_ERR_TOO_LARGE where the structure or scratch would not fit this
 * platform's address space. Any error leaves p uninitialized.
 */
int32_t ribbon_retrieval_plan_init(ribbon_retrieval_plan *p, uint32_t width, uint64_t num_keys,
                                   uint32_t value_bits);

/** uint64_t words of scratch ribbon_retrieval_build needs (0 for a bad plan). */
size_t ribbon_retrieval_plan_scratch_words(const ribbon_retrieval_plan *p);

/** Serialized size in bytes of the structure a build writes: exact on
 * Standard Ribbon, the most a build writes on Bumped layers (0 for a bad
 * plan). */
size_t ribbon_retrieval_plan_bytes(const ribbon_retrieval_plan *p);

/** Sets the first seed builds with p try, as ribbon_plan_set_seed does. */
int32_t ribbon_retrieval_plan_set_seed(ribbon_retrieval_plan *p, uint32_t seed);

/**
 * Builds the structure that maps hashes[i] to values[i] for each i < n (at
 * most the planned number of keys; any order) into out, using scratch as
 * working memory. Writes at the start of out, which may have any
 * alignment: exactly ribbon_retrieval_plan_bytes(p) bytes on Standard
 * Ribbon, at most that many on Bumped layers (ribbon_retrieval_size on
 * out gives the structure's own length, either way); hashes, values and
 * scratch must be 8-byte aligned. scratch may be freed or reused once this
 * returns. hashes and values may overlap each other (they are only read);
 * scratch, out and *p must not overlap anything (RIBBON_ERR_OVERLAP).
 *
 * Equal hashes with equal values count as one key; equal hashes with
 * different values are RIBBON_ERR_CONFLICTING_VALUES. A value with a bit at
 * or above value_bits is RIBBON_ERR_VALUE_TOO_WIDE (nothing is cut off
 * silently). A Standard build whose equations are inconsistent (about 1 in
 * 20) is retried with the next of 64 seeds, a Bumped layer with the next
 * of 16; RIBBON_ERR_CONSTRUCTION_FAILED after the last, which takes hashes
 * crafted against the seeds.
 *
 * Errors as for ribbon_build: on failure the first min(out_len, 40) bytes
 * of out are zeroed, so that a structure built there before never passes
 * for the result, except that out NULL (RIBBON_ERR_NULL), out_len past
 * PTRDIFF_MAX (RIBBON_ERR_TOO_LARGE) and overlapping buffers
 * (RIBBON_ERR_OVERLAP) write nothing at all. Nothing past out_len is ever
 * written.
 */
int32_t ribbon_retrieval_build(const ribbon_retrieval_plan *p, const uint64_t *hashes,
                               const uint64_t *values, size_t n, uint64_t *scratch,
                               size_t scratch_words, uint8_t *out, size_t out_len);

/**
 * Validates len bytes as a serialized retrieval structure (untrusted input
 * is fine: bad bytes give an error, never a crash) and fills in the view r.
 * The bytes may have any alignment and must stay alive and unchanged while
 * r is used. len must be the exact size. r must not lie inside the bytes
 * (RIBBON_ERR_OVERLAP, which leaves r as it was); any other error leaves r
 * uninitialized.
 */
int32_t ribbon_retrieval_open(ribbon_retrieval *r, const uint8_t *bytes, size_t len);

/** ribbon_retrieval_open without the checksum, as
 * ribbon_filter_open_unverified (for bytes the caller has verified; bytes
 * changed since give wrong values silently). */
int32_t ribbon_retrieval_open_unverified(ribbon_retrieval *r, const uint8_t *bytes, size_t len);

/**
 * Reads the exact length of the serialized retrieval structure that starts
 * at bytes from its header into *retrieval_len, as ribbon_filter_size does
 * for filters (len may be larger than the structure; a Bumped structure's
 * thresholds are checked only when it opens; RIBBON_SIZE_PREFIX_BYTES
 * always suffice). On error *retrieval_len is 0, except for a
 * retrieval_len inside the bytes (RIBBON_ERR_OVERLAP), which is not
 * written.
 */
int32_t ribbon_retrieval_size(const uint8_t *bytes, size_t len, size_t *retrieval_len);

/**
 * The value of hash: the one it was built with for a key of the set, an
 * arbitrary value below 2^value_bits for any other hash. Returns 0 for a
 * NULL or bad view; since 0 is also a value, check ribbon_retrieval_open's
 * status (or use ribbon_retrieval_get_batch, which returns one).
 */
uint64_t ribbon_retrieval_get(const ribbon_retrieval *r, uint64_t hash);

/**
 * Writes the value of each hashes[i] into out[i] (8-byte aligned); returns
 * a status. out must not overlap hashes, *r or the bytes r was opened on
 * (RIBBON_ERR_OVERLAP, which writes nothing).
 */
int32_t ribbon_retrieval_get_batch(const ribbon_retrieval *r, const uint64_t *hashes, size_t n,
                                   uint64_t *out);

/** Bits per value, 1 to 64 (0 for a bad view). */
uint32_t ribbon_retrieval_value_bits(const ribbon_retrieval *r);
/** Keys the structure was built from, equal hashes counted each time (0
 * for a bad view). */
uint64_t ribbon_retrieval_keys(const ribbon_retrieval *r);
/** The structure's serialized length in bytes (0 for a bad view). */
size_t ribbon_retrieval_bytes(const ribbon_retrieval *r);

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
