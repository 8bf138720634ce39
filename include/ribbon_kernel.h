/*
 * ribbon_kernel.h - C interface of the ribbon-kernel library (static and shared).
 *
 * Ribbon filters (Dillinger & Walzer 2021): static approximate-membership
 * filters built from 64-bit key hashes, 5-10 % above the space minimum,
 * and retrieval structures (1- to 64-bit values per key hash) on the same
 * machinery.
 *
 * Build and install the libraries (Rust toolchain required; docs/c-guide.md):
 *   make install PREFIX=/usr/local
 * then link through pkg-config (cc app.c $(pkg-config --cflags --libs
 * ribbon_kernel)) or CMake (find_package(ribbon_kernel), target
 * ribbon_kernel::ribbon_kernel). Both the static library and the shared one
 * define no global symbol but the ribbon_* functions below, so they link
 * beside other Rust libraries.
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
 * Contexts (a Linux kernel module, an interrupt handler): no function
 * sleeps, allocates, takes a lock or blocks, so any may be called in
 * atomic context. Stack is the limit: on x86_64 single queries take at
 * most ~1 KiB, batch queries and builds up to ~6 KiB (docs/c-guide.md,
 * "Stack and code size"); keep those out of hard-interrupt context. Batch
 * time is linear in the keys: split a batch into chunks to bound a
 * non-preemptible stretch. In a Linux module, link the x86_64-unknown-none
 * archive relinked as docs/c-guide.md "From a Linux kernel module" shows
 * (tests/kernel/ loads it in a booted kernel); it has no SIMD kernels.
 *
 * This header is C99 and C++ compatible.
 */
#ifndef RIBBON_KERNEL_H
#define RIBBON_KERNEL_H

#ifdef __KERNEL__
/* A Linux kernel build: no C library headers (tests/kernel/). */
#include <linux/types.h>
#include <linux/limits.h>
#else
#include <stddef.h>
#include <stdint.h>
#endif

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
 * most 10 % above the plan's from 1,000 keys on (up to 64 bits per key).
 * Arguments are evaluated many times: pass constants (or variables of the
 * C API's types: uint32_t kind, width and millibits, uint64_t keys). One
 * use expands to under 10 KB of preprocessed text (a RIBBON_KIND_BUMPED
 * filter's layers take most of it; twice that where size_t has 32 bits);
 * they are valid for keys <= 2^40 and millibits <= 131072, and past 64
 * bits per key a Bumped plan's bounds are SIZE_MAX (no such plan exists).
 * Sizes past SIZE_MAX are SIZE_MAX, as ribbon_max_* answer, never a
 * wrapped value (an array of it fails to compile). The same numbers at run
 * time: ribbon_max_*. Rust: ribbon_kernel::bounds, which explains the
 * formulas; the macros below compute them with precomputed tables (the key
 * counts at which a Bumped filter gets another layer) in C's integer
 * arithmetic, and tests/c/ribbon_test.c checks both agree. */
#define RIBBON_FILTER_BYTES_MAX(kind, width, keys, millibits) \
    RIBBON__SIZE(keys, (kind) == 3 ? RIBBON__BBYTES(width, keys, millibits) \
                                   : RIBBON__FBYTES(width, keys, millibits))
#define RIBBON_BANDING_SCRATCH_WORDS_MAX(kind, width, keys, millibits) \
    ((kind) == 3 ? RIBBON__ZU(0) \
                 : RIBBON__SIZE(keys, RIBBON__SLOTS(kind, width, keys, millibits) * \
                                          RIBBON__RW(kind, width)))
#define RIBBON_SCRATCH_WORDS_MAX(kind, width, keys, millibits) \
    ((kind) == 3 ? RIBBON__SIZE(keys, (millibits) > 64000 ? ~0ull : RIBBON__BSCRATCH(width, keys)) \
                 : RIBBON__SIZE(keys, RIBBON__SCRATCH(kind, width, keys, millibits)))

size_t ribbon_max_filter_bytes(uint32_t kind, uint32_t width,
                               uint64_t num_keys, uint32_t millibits);
size_t ribbon_max_scratch_words(uint32_t kind, uint32_t width,
                                uint64_t num_keys, uint32_t millibits);
size_t ribbon_max_banding_scratch_words(uint32_t kind, uint32_t width,
                                        uint64_t num_keys, uint32_t millibits);

/* Helpers of the bounds above (not part of the API). Each use of a bound
 * expands to their bodies, so these are written without spaces; n is the
 * keys, m the millibits, w the width, k the kind. Casts are C++'s own in
 * C++ (the header is clean under -Wold-style-cast). */
#ifdef __cplusplus
#define RIBBON__LL(x) static_cast<long long>(x)
#define RIBBON__ZU(x) static_cast<size_t>(x)
#else
#define RIBBON__LL(x) ((long long)(x))
#define RIBBON__ZU(x) ((size_t)(x))
#endif
/* A bound x for n keys as a size_t: where size_t is narrower than 64 bits,
 * a bound past SIZE_MAX, or more keys than SIZE_MAX (no plan takes them),
 * is SIZE_MAX (this doubles the text of each use there). */
#if defined(__KERNEL__)
#if BITS_PER_LONG < 64 /* the kernel's SIZE_MAX is not a preprocessor number */
#define RIBBON__SIZE_NARROW 1
#endif
#elif SIZE_MAX < 0xffffffffffffffffull
#define RIBBON__SIZE_NARROW 1
#endif
#ifdef RIBBON__SIZE_NARROW
#define RIBBON__SIZE(n, x) ((n)>SIZE_MAX||(x)>SIZE_MAX?SIZE_MAX:RIBBON__ZU(x))
#else
#define RIBBON__SIZE(n, x) RIBBON__ZU(x)
#endif
#define RIBBON__MAX(a, b) ((a)>(b)?(a):(b))
/* Filter bytes of the Ribbon kinds: the header and the budget in words,
 * at least one block of the columns. */
#define RIBBON__FBYTES(w, n, m) \
    (48+(w)/8*RIBBON__MAX((1ull*(n)*(m)+1000*(w)-1)/(1000*(w)),((m)+999ull)/1000))
/* uint64_t words per slot of the banded system. */
#define RIBBON__RW(k, w) ((w)/64+((k)!=0))
/* Scratch of the Ribbon kinds: the banded system, a word per key and the
 * start buckets (of 16 KiB of rows, at most 2^20). */
#define RIBBON__SCRATCH(k, w, n, m) \
    (RIBBON__SLOTS(k,w,n,m)*RIBBON__RW(k,w)+RIBBON__LL(n)+ \
     RIBBON__MIN(1ll<<20,2*((2*RIBBON__LL(n)+255+(4096>>RIBBON__RW(k,w)))/(4096>>RIBBON__RW(k,w)))))
#define RIBBON__MIN(a, b) ((a)<(b)?(a):(b))
/* Slots of the Ribbon kinds (bounds.rs max_slots): Homogeneous Ribbon up to
 * 2^15 keys with the plan's own overhead and rounding (RIBBON__HA), larger
 * ones and the Standard kinds with n (1 + eps) slots rounded up to blocks
 * (RIBBON__SB). */
#define RIBBON__SLOTS(k, w, n, m) \
    (((k)==0&&(n)<=32768?RIBBON__HA(w,RIBBON__LL(n),m): \
      RIBBON__SB(w,RIBBON__LL(n),(k)==0?RIBBON__EPSB(w,n,m):RIBBON__EPSS(k,w,n)))*(w))
#define RIBBON__SB(w, N, e) (((N)*(1000000+(e))+1000000ll*(w)-1)/(1000000ll*(w)))
/* Homogeneous Ribbon: eq. 7 at r columns (thousandths), as epsilon in ppm
 * (per_width), and one step r = bits / (1 + epsilon(r)) of the plan. */
#define RIBBON__EQ7(w, r) ((16000+(r))/4*(115-(w)/64*5)/100)
#define RIBBON__PW(w, e) ((e)*1000/(w))
#define RIBBON__STEP(w, m, r) ((m)*1000000ll/(1000000+RIBBON__PW(w,RIBBON__EQ7(w,r))))
/* Up to 2^15 keys: eq. 7 at the plan's columns (four steps from the bits
 * per key), or past 70 bits per key at 6 columns more than the bits per
 * key. */
#define RIBBON__EPSA(w, m) \
    RIBBON__PW(w,RIBBON__EQ7(w,(m)<=70000?RIBBON__STEP(w,m,RIBBON__STEP(w,m,RIBBON__STEP(w,m, \
        RIBBON__STEP(w,m,m))))+((m)==1):(m)+6000ll))
/* The plan's blocks for that overhead: the nearest block for n (1 + eps)
 * slots, or enough for n + max(3/4 n eps, 8 + columns) slots. With z = n
 * eps, zf the free slots as overhead and D = 4 10^6 w: nearest is
 * (4z + a) / D, the other (3z + a + k) / D, and the larger of both, at
 * max(z, zf), is (a + (z <= zf ? 3zf + zk : z <= zk ? 3z + zk : 4z)) / D
 * with zk = max(zf, k). */
#define RIBBON__ZF(m) (4000000ll*(8+((m)+999)/1000)/3)
#define RIBBON__ZK(w, m) RIBBON__MAX(RIBBON__ZF(m),2000000ll*(w)-3999997)
#define RIBBON__HA(w, N, m) RIBBON__HZ(w,N,m,(N)*RIBBON__EPSA(w,m))
#define RIBBON__HZ(w, N, m, z) \
    (((z)<=RIBBON__ZF(m)?3*RIBBON__ZF(m)+RIBBON__ZK(w,m):(z)<=RIBBON__ZK(w,m)?3*(z)+RIBBON__ZK(w,m):4*(z))+ \
     4*(1000000*((N)+(w)/2)+999999))/(4000000ll*(w))
/* Past 2^15 keys: eq. 7 or the tail term at the bits per key, with log10 of
 * the keys from above (log2 rounded up), capped at 301 r / 1000 + 3900: the
 * keys at most 2^RIBBON__CAP (min(l10, t) is l10 exactly then). */
#define RIBBON__T(m) (301*(m)/1000+3900ll)
#define RIBBON__CAP(m) RIBBON__MIN((100*RIBBON__T(m)+99)/30103,41)
#define RIBBON__TAIL(w, m, n) \
    (6600+(400-(w)/64*100)*((m)-7000ll)/1000+1300*(((n)<=1ull<<RIBBON__CAP(m)?RIBBON__L2_16(n)*30103/100: \
     RIBBON__T(m))-6000)/1000)
#define RIBBON__EPSB(w, n, m) RIBBON__PW(w,RIBBON__MAX(RIBBON__EQ7(w,m),RIBBON__TAIL(w,m,n)))
/* Standard kinds: with w = 128 and 512 to 2047 keys the plan's table at
 * log2 of the keys in 1/256 units (linear in the keys there); elsewhere a
 * line above the table, base + per doubling * log2 of the keys, or its
 * floor below the key count where the line starts to be the larger. */
#define RIBBON__EPSS(k, w, n) \
    ((w)==128&&(n)>=512&&(n)<2048?RIBBON__S128(k,RIBBON__X128(n)): \
     (n)>((k)==1?8192:(w)==64?256:4096) \
         ?((k)==1?((w)==64?-46707:-26022):((w)==64?-47432:-26322))+((w)==64?8300:3800)*RIBBON__L2_9(n) \
         :((k)==1?((w)==64?61900:24000):((w)==64?26700:19900)))
#define RIBBON__X128(n) ((n)<1024?2048+RIBBON__LL(n)/2:2304+RIBBON__LL(n)/4)
#define RIBBON__SEG(x, xa, ya, xb, yb) ((ya)+((yb)-(ya))*((x)-(xa))/((xb)-(xa)))
#define RIBBON__S128(k, x) \
    ((x)<=2386?((k)==1?24000ll:RIBBON__SEG(x,2048,19900ll,2386,7900ll)): \
     (k)==1?RIBBON__SEG(x,2386,24000ll,2839,20200ll):RIBBON__SEG(x,2386,7900ll,2839,4600ll))
/* log2 of n rounded up (exact to 2^41), for n above 2^8 and above 2^15. */
#define RIBBON__L2_9(n) \
    (9+((n)>512)+((n)>1024)+((n)>2048)+((n)>4096)+((n)>8192)+((n)>16384)+ \
     ((n)>32768)+((n)>65536)+((n)>131072)+((n)>262144)+((n)>524288)+((n)>1048576)+ \
     ((n)>2097152)+((n)>4194304)+((n)>8388608)+((n)>16777216)+((n)>33554432)+((n)>67108864)+ \
     ((n)>134217728)+((n)>268435456)+((n)>536870912)+((n)>1073741824)+((n)>2147483648)+((n)>4294967296)+ \
     ((n)>8589934592)+((n)>17179869184)+((n)>34359738368)+((n)>68719476736)+((n)>137438953472)+((n)>274877906944)+ \
     ((n)>549755813888)+((n)>1099511627776))
#define RIBBON__L2_16(n) \
    (16+((n)>65536)+((n)>131072)+((n)>262144)+((n)>524288)+((n)>1048576)+((n)>2097152)+ \
     ((n)>4194304)+((n)>8388608)+((n)>16777216)+((n)>33554432)+((n)>67108864)+((n)>134217728)+ \
     ((n)>268435456)+((n)>536870912)+((n)>1073741824)+((n)>2147483648)+((n)>4294967296)+((n)>8589934592)+ \
     ((n)>17179869184)+((n)>34359738368)+((n)>68719476736)+((n)>137438953472)+((n)>274877906944)+((n)>549755813888)+ \
     ((n)>1099511627776))
/* Bumped Ribbon (src/bumped_layout/sizing.rs, layer_bounds), exact: each
 * layer's keys capped at 8.5 % (w = 64) or 3.8 % (w = 128) of the layer
 * before plus 512 (RIBBON__NEXT); a layer with more than 2048 keys bumps,
 * in 0.92 or 0.965 slots per key in whole blocks, with 26 bytes per group
 * of 128 buckets of 128 or 512 starts, 64 bytes of listed exceptions and a
 * 32-byte table entry (RIBBON__BUMP); the last layer has up to 2048 keys in
 * 47/32 of their slots. Each bumping layer takes the larger of that and a
 * last layer of 2048 keys, which only the last bumping one (its keys at
 * most 3400) can fall short of (RIBBON__X). Payload of b blocks at m / 1000
 * columns: m b / 1000 words rounded as the plan's upper blocks round them,
 * w / 8 bytes each (RIBBON__PAY). The precomputed tables: the key counts up
 * to which a filter has 1, 2, 3, ... layers (the largest n whose k-th cap
 * is at most 2048; tests/c_abi.rs recomputes them). */
#define RIBBON__NEXT64(c) (c*17/200+512)
#define RIBBON__NEXT128(c) (c*19/500+512)
#define RIBBON__PAY64(b, m) (8*(((m)*(b)+999+(1000-((m)+999)%1000)*63/64)/1000))
#define RIBBON__PAY128(b, m) (16*(((m)*(b)+999+(1000-((m)+999)%1000)*127/128)/1000))
#define RIBBON__BUMP64(c, m) (96+26*((c*23ull+409599)/409600)+RIBBON__PAY64((c*23ull+1599)/1600,m))
#define RIBBON__BUMP128(c, m) (96+26*((c*193ull+13107199)/13107200)+RIBBON__PAY128((c*193ull+25599)/25600,m))
#define RIBBON__X(PL, P) ((PL)>90+(P)?(PL)-90-(P):0)
/* A filter of n keys: the header, the bumping layers, the last bumping
 * layer's shortfall and the last layer (its keys: the next cap after the
 * last bumping layer's, or n). */
#define RIBBON__BBYTES(w, n, m) \
    ((m)>64000?~0ull:(w)==64?RIBBON__B64(n,m,RIBBON__PREV64(n)):RIBBON__B128(n,m,RIBBON__PREV128(n)))
#define RIBBON__B64(n, m, p) \
    (80+RIBBON__SUM64(n,m)+RIBBON__X(RIBBON__PAY64(47,m),RIBBON__PAY64((p*23+1599)/1600,m))+ \
     ((n)!=0)*RIBBON__PAY64((47*((n)<=2048?(n):RIBBON__NEXT64(p))/32+63)/64,m))
#define RIBBON__B128(n, m, p) \
    (80+RIBBON__SUM128(n,m)+RIBBON__X(RIBBON__PAY128(24,m),RIBBON__PAY128((p*193+25599)/25600,m))+ \
     ((n)!=0)*RIBBON__PAY128((47*((n)<=2048?(n):RIBBON__NEXT128(p))/32+127)/128,m))
/* Scratch (scratch_parts): rows of the first layer, the second layer's
 * keys, the keys, the counting sort of its buckets and their thresholds. */
#define RIBBON__BSCRATCH(w, n) \
    ((w)==64?((n)<=2048?(47ull*(n)/32+63)/64*128+(n): \
              RIBBON__BS(n,((n)*23ull+1599)/1600,47,128,RIBBON__C64_1(n),1,2,672)) \
            :((n)<=2048?(47ull*(n)/32+127)/128*384+(n): \
              RIBBON__BS(n,((n)*193ull+25599)/25600,24,384,RIBBON__C128_1(n),3,4,2240)))
#define RIBBON__BS(n, b, bl, rw, next, r, d, order) \
    (RIBBON__MAX(bl,b)*rw+next+(n)+RIBBON__MAX((b+r)/d,order)+((b+r)/d+3)/4)
/* The caps of the layers after the first (RIBBON__C<w>_<k>), what the
 * bumping layers take (RIBBON__SUM) and the last bumping layer's cap
 * (RIBBON__PREV; 2^40, which takes no shortfall, where only one layer). */

#define RIBBON__C64_1(n) ((n)*17ull/200+512)
#define RIBBON__C64_2(n) RIBBON__NEXT64(RIBBON__C64_1(n))
#define RIBBON__C64_3(n) RIBBON__NEXT64(RIBBON__C64_2(n))
#define RIBBON__C64_4(n) RIBBON__NEXT64(RIBBON__C64_3(n))
#define RIBBON__C64_5(n) RIBBON__NEXT64(RIBBON__C64_4(n))
#define RIBBON__C64_6(n) RIBBON__NEXT64(RIBBON__C64_5(n))
#define RIBBON__C64_7(n) RIBBON__NEXT64(RIBBON__C64_6(n))
#define RIBBON__C64_8(n) RIBBON__NEXT64(RIBBON__C64_7(n))
#define RIBBON__C64_9(n) RIBBON__NEXT64(RIBBON__C64_8(n))
#define RIBBON__SUM64(n, m) \
    (((n)>2048)*RIBBON__BUMP64((n),m)+((n)>18082)*RIBBON__BUMP64(RIBBON__C64_1(n),m)+ \
     ((n)>206717)*RIBBON__BUMP64(RIBBON__C64_2(n),m)+((n)>2425952)*RIBBON__BUMP64(RIBBON__C64_3(n),m)+ \
     ((n)>28534599)*RIBBON__BUMP64(RIBBON__C64_4(n),m)+((n)>335695152)*RIBBON__BUMP64(RIBBON__C64_5(n),m)+ \
     ((n)>3949348717)*RIBBON__BUMP64(RIBBON__C64_6(n),m)+((n)>46462920070)*RIBBON__BUMP64(RIBBON__C64_7(n),m)+ \
     ((n)>546622583047)*RIBBON__BUMP64(RIBBON__C64_8(n),m))
#define RIBBON__PREV64(n) \
    ((n)<=2048?1ull<<40: \
     ((n)<=18082?(n): \
     ((n)<=206717?RIBBON__C64_1(n): \
     ((n)<=2425952?RIBBON__C64_2(n): \
     ((n)<=28534599?RIBBON__C64_3(n): \
     ((n)<=335695152?RIBBON__C64_4(n): \
     ((n)<=3949348717?RIBBON__C64_5(n): \
     ((n)<=46462920070?RIBBON__C64_6(n): \
     ((n)<=546622583047?RIBBON__C64_7(n): \
     RIBBON__C64_8(n))))))))))
#define RIBBON__C128_1(n) ((n)*19ull/500+512)
#define RIBBON__C128_2(n) RIBBON__NEXT128(RIBBON__C128_1(n))
#define RIBBON__C128_3(n) RIBBON__NEXT128(RIBBON__C128_2(n))
#define RIBBON__C128_4(n) RIBBON__NEXT128(RIBBON__C128_3(n))
#define RIBBON__C128_5(n) RIBBON__NEXT128(RIBBON__C128_4(n))
#define RIBBON__C128_6(n) RIBBON__NEXT128(RIBBON__C128_5(n))
#define RIBBON__C128_7(n) RIBBON__NEXT128(RIBBON__C128_6(n))
#define RIBBON__SUM128(n, m) \
    (((n)>2048)*RIBBON__BUMP128((n),m)+((n)>40447)*RIBBON__BUMP128(RIBBON__C128_1(n),m)+ \
     ((n)>1050947)*RIBBON__BUMP128(RIBBON__C128_2(n),m)+((n)>27643052)*RIBBON__BUMP128(RIBBON__C128_3(n),m)+ \
     ((n)>727435289)*RIBBON__BUMP128(RIBBON__C128_4(n),m)+((n)>19143020473)*RIBBON__BUMP128(RIBBON__C128_5(n),m)+ \
     ((n)>503763683210)*RIBBON__BUMP128(RIBBON__C128_6(n),m))
#define RIBBON__PREV128(n) \
    ((n)<=2048?1ull<<40: \
     ((n)<=40447?(n): \
     ((n)<=1050947?RIBBON__C128_1(n): \
     ((n)<=27643052?RIBBON__C128_2(n): \
     ((n)<=727435289?RIBBON__C128_3(n): \
     ((n)<=19143020473?RIBBON__C128_4(n): \
     ((n)<=503763683210?RIBBON__C128_5(n): \
     RIBBON__C128_6(n))))))))

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
