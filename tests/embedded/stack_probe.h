/*
 * stack_probe.h - peak stack depth of each C ABI entry point.
 *
 * Every call goes through a wrapper probe_<name>() that
 *   1. reads the stack pointer SP it will call from (platform_stack_pointer,
 *      an assembly routine without a frame),
 *   2. paints the window [SP - window, SP) with a pattern,
 *   3. calls the library function,
 *   4. scans the window from its far (lowest) end for the first word that
 *      no longer holds the pattern: the callee's high-water mark.
 * The depth recorded is SP minus that word's address: everything the
 * callee and its callees pushed below the call site (on x86_64 this
 * includes the 8-byte return address; on Arm the callee pushes lr itself).
 *
 * Painting and scanning are inlined into the wrapper and use only its
 * registers and its own frame, which lies above SP, so no gap below SP is
 * needed and nothing of the measuring code lands in the window. The
 * wrappers are noinline and make no other call between painting and
 * scanning; the x86 builds use -maccumulate-outgoing-args so that stack
 * arguments are stored in the wrapper's frame instead of pushed below SP.
 *
 * A deepest word that happens to hold the pattern would under-read by one
 * word; a call that writes the lowest word of the window is reported as an
 * overflow (a failure), never as a number.
 *
 * The includer provides the platform hooks of platform.h and includes
 * ribbon_kernel.h first.
 */
#ifndef RIBBON_EMBEDDED_STACK_PROBE_H
#define RIBBON_EMBEDDED_STACK_PROBE_H

#include "platform.h"

/* The measured entry points, in report order. */
#define PROBE_ENTRY_POINTS(X)                                   \
    X(PLAN_INIT, "ribbon_plan_init")                            \
    X(PLAN_INIT_FP_RATE, "ribbon_plan_init_fp_rate")            \
    X(PLAN_INIT_BYTES, "ribbon_plan_init_bytes")                \
    X(PLAN_SCRATCH_WORDS, "ribbon_plan_scratch_words")          \
    X(PLAN_FILTER_BYTES, "ribbon_plan_filter_bytes")            \
    X(PLAN_SET_SEED, "ribbon_plan_set_seed")                    \
    X(PLAN_BANDING_WORDS, "ribbon_plan_banding_scratch_words")  \
    X(PLAN_BANDING_CAPACITY, "ribbon_plan_banding_capacity")    \
    X(BUILD, "ribbon_build")                                    \
    X(BANDING_INIT, "ribbon_banding_init")                      \
    X(BANDING_ADD, "ribbon_banding_add")                        \
    X(BANDING_ADDED, "ribbon_banding_added")                    \
    X(BANDING_FINISH, "ribbon_banding_finish")                  \
    X(FILTER_OPEN, "ribbon_filter_open")                        \
    X(FILTER_OPEN_UNVERIFIED, "ribbon_filter_open_unverified")  \
    X(FILTER_SIZE, "ribbon_filter_size")                        \
    X(FILTER_KIND, "ribbon_filter_kind")                        \
    X(FILTER_WIDTH, "ribbon_filter_width")                      \
    X(FILTER_KEYS, "ribbon_filter_keys")                        \
    X(FILTER_BYTES, "ribbon_filter_bytes")                      \
    X(CONTAINS, "ribbon_contains")                              \
    X(CONTAINS_BATCH, "ribbon_contains_batch")                  \
    X(COLUMN_FP_PPT, "ribbon_filter_column_fp_ppt")             \
    X(ESTIMATED_FP_PPT, "ribbon_filter_estimated_fp_ppt")       \
    X(BACKEND, "ribbon_backend")                                \
    X(SET_BACKEND, "ribbon_set_backend")                        \
    X(STATUS_STR, "ribbon_status_str")                          \
    X(VERSION, "ribbon_version")                                \
    X(VERSION_STR, "ribbon_version_str")                        \
    X(MAX_FILTER_BYTES, "ribbon_max_filter_bytes")              \
    X(MAX_SCRATCH_WORDS, "ribbon_max_scratch_words")            \
    X(MAX_BANDING_WORDS, "ribbon_max_banding_scratch_words")   \
    X(RETRIEVAL_PLAN_INIT, "ribbon_retrieval_plan_init")        \
    X(RETRIEVAL_PLAN_SCRATCH_WORDS, "ribbon_retrieval_plan_scratch_words") \
    X(RETRIEVAL_PLAN_BYTES, "ribbon_retrieval_plan_bytes")      \
    X(RETRIEVAL_PLAN_SET_SEED, "ribbon_retrieval_plan_set_seed") \
    X(RETRIEVAL_BUILD, "ribbon_retrieval_build")                \
    X(RETRIEVAL_OPEN, "ribbon_retrieval_open")                  \
    X(RETRIEVAL_OPEN_UNVERIFIED, "ribbon_retrieval_open_unverified") \
    X(RETRIEVAL_SIZE, "ribbon_retrieval_size")                  \
    X(RETRIEVAL_GET, "ribbon_retrieval_get")                    \
    X(RETRIEVAL_GET_BATCH, "ribbon_retrieval_get_batch")        \
    X(RETRIEVAL_VALUE_BITS, "ribbon_retrieval_value_bits")      \
    X(RETRIEVAL_KEYS, "ribbon_retrieval_keys")                  \
    X(RETRIEVAL_BYTES, "ribbon_retrieval_bytes")

#define PROBE_ENUM_ITEM(id, name) PROBE_##id,
enum probe_id { PROBE_ENTRY_POINTS(PROBE_ENUM_ITEM) PROBE_COUNT };
#undef PROBE_ENUM_ITEM

#define PROBE_NAME_ITEM(id, name) name,
static const char *const probe_names[PROBE_COUNT] = {PROBE_ENTRY_POINTS(PROBE_NAME_ITEM)};
#undef PROBE_NAME_ITEM

#define PROBE_PATTERN 0xC5A3E17Du

/* Results: peak depth in bytes and number of measured calls per entry
 * point, and the depth of the latest call; overflows counts calls that
 * reached the bottom of the window, unusable counts calls made where the
 * window would cross the stack limit (both are failures). */
struct probe_results {
    size_t peak[PROBE_COUNT];
    uint32_t calls[PROBE_COUNT];
    size_t last;
    uint32_t overflows;
    uint32_t unusable;
};

static struct probe_results probe_results;
static uintptr_t probe_window_bytes; /* multiple of 4, set by probe_init */
static uintptr_t probe_floor;        /* lowest address a window may reach */

static void probe_reset(void) {
    struct probe_results empty = {{0}, {0}, 0, 0, 0};
    probe_results = empty;
}

/* Sets up the window and clears the results; 0 if the stack is too small
 * for the window. */
static int probe_init(void) {
    uintptr_t sp = platform_stack_pointer();
    probe_window_bytes = (uintptr_t)platform_probe_window() & ~(uintptr_t)3;
    probe_floor = platform_stack_limit();
    probe_reset();
    /* Room for the window plus a few frames of the test around it. */
    return sp > probe_floor && sp - probe_floor >= probe_window_bytes + 4096;
}

static PLATFORM_ALWAYS_INLINE uintptr_t probe_paint(void) {
    uintptr_t sp = platform_stack_pointer() & ~(uintptr_t)3;
    volatile uint32_t *p, *end = (volatile uint32_t *)sp;
    if (sp - probe_floor < probe_window_bytes || sp < probe_floor) {
        return 0;
    }
    for (p = (volatile uint32_t *)(sp - probe_window_bytes); p < end; p++) {
        *p = PROBE_PATTERN;
    }
    return sp;
}

static PLATFORM_NOINLINE void probe_note(enum probe_id id, uintptr_t depth) {
    if (depth == (uintptr_t)-1) {
        probe_results.unusable++;
        return;
    }
    if (depth >= probe_window_bytes) {
        probe_results.overflows++;
    }
    probe_results.last = depth;
    if (depth > probe_results.peak[id]) {
        probe_results.peak[id] = depth;
    }
    probe_results.calls[id]++;
}

/* The depth below sp of the deepest word written since probe_paint. */
static PLATFORM_ALWAYS_INLINE uintptr_t probe_scan(uintptr_t sp) {
    volatile uint32_t *p, *end = (volatile uint32_t *)sp;
    if (sp == 0) {
        return (uintptr_t)-1;
    }
    p = (volatile uint32_t *)(sp - probe_window_bytes);
    while (p < end && *p == PROBE_PATTERN) {
        p++;
    }
    return sp - (uintptr_t)p;
}

#if PLATFORM_PROBE_HOOKS
#define PROBE_BEGIN() platform_probe_begin()
#define PROBE_END() platform_probe_end()
#else
#define PROBE_BEGIN() ((void)0)
#define PROBE_END() ((void)0)
#endif

/* Wraps one call: paint, call, scan, then record (after the scan). The
 * platform's hooks, if any, run before the paint and after the scan. */
#define PROBE_CALL(id, call)                  \
    do {                                      \
        uintptr_t probe_sp_;                  \
        uintptr_t probe_depth_;               \
        PROBE_BEGIN();                        \
        probe_sp_ = probe_paint();            \
        call;                                 \
        probe_depth_ = probe_scan(probe_sp_); \
        PROBE_END();                          \
        probe_note(PROBE_##id, probe_depth_); \
    } while (0)

/* ---- One noinline wrapper per entry point ---- */

/* probe_<name>(params): name(args) under PROBE_CALL. */
#define PROBE_WRAPPER(id, type, name, params, args) \
    static PLATFORM_NOINLINE type probe_##name params { \
        type r;                                         \
        PROBE_CALL(id, r = name args);                  \
        return r;                                       \
    }

PROBE_WRAPPER(PLAN_INIT, int32_t, ribbon_plan_init, (ribbon_plan *p, uint32_t kind, uint32_t width, uint64_t num_keys, uint32_t millibits), (p, kind, width, num_keys, millibits))
PROBE_WRAPPER(PLAN_INIT_FP_RATE, int32_t, ribbon_plan_init_fp_rate, (ribbon_plan *p, uint32_t kind, uint32_t width, uint64_t num_keys, uint64_t one_in), (p, kind, width, num_keys, one_in))
PROBE_WRAPPER(PLAN_INIT_BYTES, int32_t, ribbon_plan_init_bytes, (ribbon_plan *p, uint32_t kind, uint32_t width, uint64_t num_keys, size_t bytes), (p, kind, width, num_keys, bytes))
PROBE_WRAPPER(PLAN_SCRATCH_WORDS, size_t, ribbon_plan_scratch_words, (const ribbon_plan *p), (p))
PROBE_WRAPPER(PLAN_FILTER_BYTES, size_t, ribbon_plan_filter_bytes, (const ribbon_plan *p), (p))
PROBE_WRAPPER(PLAN_BANDING_WORDS, size_t, ribbon_plan_banding_scratch_words, (const ribbon_plan *p), (p))
PROBE_WRAPPER(PLAN_BANDING_CAPACITY, uint64_t, ribbon_plan_banding_capacity, (const ribbon_plan *p), (p))
PROBE_WRAPPER(BUILD, int32_t, ribbon_build, (const ribbon_plan *p, const uint64_t *hashes, size_t n, uint64_t *scratch, size_t scratch_words, uint8_t *out, size_t out_len), (p, hashes, n, scratch, scratch_words, out, out_len))
PROBE_WRAPPER(BANDING_INIT, int32_t, ribbon_banding_init, (ribbon_banding *b, const ribbon_plan *p, uint64_t *scratch, size_t scratch_words), (b, p, scratch, scratch_words))
PROBE_WRAPPER(BANDING_ADD, int32_t, ribbon_banding_add, (ribbon_banding *b, uint64_t hash), (b, hash))
PROBE_WRAPPER(BANDING_ADDED, uint64_t, ribbon_banding_added, (const ribbon_banding *b), (b))
PROBE_WRAPPER(BANDING_FINISH, int32_t, ribbon_banding_finish, (ribbon_banding *b, uint8_t *out, size_t out_len), (b, out, out_len))
PROBE_WRAPPER(FILTER_OPEN, int32_t, ribbon_filter_open, (ribbon_filter *f, const uint8_t *bytes, size_t len), (f, bytes, len))
PROBE_WRAPPER(FILTER_OPEN_UNVERIFIED, int32_t, ribbon_filter_open_unverified, (ribbon_filter *f, const uint8_t *bytes, size_t len), (f, bytes, len))
PROBE_WRAPPER(PLAN_SET_SEED, int32_t, ribbon_plan_set_seed, (ribbon_plan *p, uint32_t seed), (p, seed))
PROBE_WRAPPER(CONTAINS, int32_t, ribbon_contains, (const ribbon_filter *f, uint64_t hash), (f, hash))
PROBE_WRAPPER(CONTAINS_BATCH, int32_t, ribbon_contains_batch, (const ribbon_filter *f, const uint64_t *hashes, size_t n, uint8_t *out), (f, hashes, n, out))
PROBE_WRAPPER(COLUMN_FP_PPT, uint64_t, ribbon_filter_column_fp_ppt, (const ribbon_filter *f), (f))
PROBE_WRAPPER(ESTIMATED_FP_PPT, uint64_t, ribbon_filter_estimated_fp_ppt, (const ribbon_filter *f), (f))
PROBE_WRAPPER(BACKEND, uint32_t, ribbon_backend, (void), ())
PROBE_WRAPPER(SET_BACKEND, int32_t, ribbon_set_backend, (uint32_t backend), (backend))
PROBE_WRAPPER(STATUS_STR, const char *, ribbon_status_str, (int32_t status), (status))
PROBE_WRAPPER(FILTER_SIZE, int32_t, ribbon_filter_size, (const uint8_t *bytes, size_t len, size_t *filter_len), (bytes, len, filter_len))
PROBE_WRAPPER(FILTER_KIND, int32_t, ribbon_filter_kind, (const ribbon_filter *f), (f))
PROBE_WRAPPER(FILTER_WIDTH, int32_t, ribbon_filter_width, (const ribbon_filter *f), (f))
PROBE_WRAPPER(FILTER_KEYS, uint64_t, ribbon_filter_keys, (const ribbon_filter *f), (f))
PROBE_WRAPPER(FILTER_BYTES, size_t, ribbon_filter_bytes, (const ribbon_filter *f), (f))
PROBE_WRAPPER(VERSION, uint32_t, ribbon_version, (void), ())
PROBE_WRAPPER(VERSION_STR, const char *, ribbon_version_str, (void), ())
PROBE_WRAPPER(MAX_FILTER_BYTES, size_t, ribbon_max_filter_bytes, (uint32_t kind, uint32_t width, uint64_t keys, uint32_t millibits), (kind, width, keys, millibits))
PROBE_WRAPPER(MAX_SCRATCH_WORDS, size_t, ribbon_max_scratch_words, (uint32_t kind, uint32_t width, uint64_t keys, uint32_t millibits), (kind, width, keys, millibits))
PROBE_WRAPPER(MAX_BANDING_WORDS, size_t, ribbon_max_banding_scratch_words, (uint32_t kind, uint32_t width, uint64_t keys, uint32_t millibits), (kind, width, keys, millibits))
PROBE_WRAPPER(RETRIEVAL_PLAN_INIT, int32_t, ribbon_retrieval_plan_init, (ribbon_retrieval_plan *p, uint32_t width, uint64_t num_keys, uint32_t value_bits), (p, width, num_keys, value_bits))
PROBE_WRAPPER(RETRIEVAL_PLAN_SCRATCH_WORDS, size_t, ribbon_retrieval_plan_scratch_words, (const ribbon_retrieval_plan *p), (p))
PROBE_WRAPPER(RETRIEVAL_PLAN_BYTES, size_t, ribbon_retrieval_plan_bytes, (const ribbon_retrieval_plan *p), (p))
PROBE_WRAPPER(RETRIEVAL_BUILD, int32_t, ribbon_retrieval_build, (const ribbon_retrieval_plan *p, const uint64_t *hashes, const uint64_t *values, size_t n, uint64_t *scratch, size_t scratch_words, uint8_t *out, size_t out_len), (p, hashes, values, n, scratch, scratch_words, out, out_len))
PROBE_WRAPPER(RETRIEVAL_OPEN, int32_t, ribbon_retrieval_open, (ribbon_retrieval *m, const uint8_t *bytes, size_t len), (m, bytes, len))
PROBE_WRAPPER(RETRIEVAL_OPEN_UNVERIFIED, int32_t, ribbon_retrieval_open_unverified, (ribbon_retrieval *m, const uint8_t *bytes, size_t len), (m, bytes, len))
PROBE_WRAPPER(RETRIEVAL_PLAN_SET_SEED, int32_t, ribbon_retrieval_plan_set_seed, (ribbon_retrieval_plan *p, uint32_t seed), (p, seed))
PROBE_WRAPPER(RETRIEVAL_SIZE, int32_t, ribbon_retrieval_size, (const uint8_t *bytes, size_t len, size_t *retrieval_len), (bytes, len, retrieval_len))
PROBE_WRAPPER(RETRIEVAL_GET, uint64_t, ribbon_retrieval_get, (const ribbon_retrieval *m, uint64_t hash), (m, hash))
PROBE_WRAPPER(RETRIEVAL_GET_BATCH, int32_t, ribbon_retrieval_get_batch, (const ribbon_retrieval *m, const uint64_t *hashes, size_t n, uint64_t *out), (m, hashes, n, out))
PROBE_WRAPPER(RETRIEVAL_VALUE_BITS, uint32_t, ribbon_retrieval_value_bits, (const ribbon_retrieval *m), (m))
PROBE_WRAPPER(RETRIEVAL_KEYS, uint64_t, ribbon_retrieval_keys, (const ribbon_retrieval *m), (m))
PROBE_WRAPPER(RETRIEVAL_BYTES, size_t, ribbon_retrieval_bytes, (const ribbon_retrieval *m), (m))

#endif
