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

/* The entry points that came with RIBBON_VERSION_* (version, run-time
 * size bounds, ribbon_filter_size and the view getters). */
#if defined(RIBBON_VERSION_MAJOR)
#define PROBE_NEW_API 1
#else
#define PROBE_NEW_API 0
#endif

/* The measured entry points, in report order. */
#define PROBE_ENTRY_POINTS(X)                                   \
    X(PLAN_INIT, "ribbon_plan_init")                            \
    X(PLAN_INIT_FP_RATE, "ribbon_plan_init_fp_rate")            \
    X(PLAN_INIT_BYTES, "ribbon_plan_init_bytes")                \
    X(PLAN_SCRATCH_WORDS, "ribbon_plan_scratch_words")          \
    X(PLAN_FILTER_BYTES, "ribbon_plan_filter_bytes")            \
    X(PLAN_BANDING_WORDS, "ribbon_plan_banding_scratch_words")  \
    X(PLAN_BANDING_CAPACITY, "ribbon_plan_banding_capacity")    \
    X(BUILD, "ribbon_build")                                    \
    X(BANDING_INIT, "ribbon_banding_init")                      \
    X(BANDING_ADD, "ribbon_banding_add")                        \
    X(BANDING_ADDED, "ribbon_banding_added")                    \
    X(BANDING_FINISH, "ribbon_banding_finish")                  \
    X(FILTER_OPEN, "ribbon_filter_open")                        \
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
    X(MAX_BANDING_WORDS, "ribbon_max_banding_scratch_words")

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

/* Wraps one call: paint, call, scan, then record (after the scan). */
#define PROBE_CALL(id, call)                  \
    do {                                      \
        uintptr_t probe_sp_ = probe_paint();  \
        uintptr_t probe_depth_;               \
        call;                                 \
        probe_depth_ = probe_scan(probe_sp_); \
        probe_note(PROBE_##id, probe_depth_); \
    } while (0)

/* ---- One noinline wrapper per entry point ---- */

static PLATFORM_NOINLINE int32_t probe_ribbon_plan_init(ribbon_plan *p, uint32_t kind, uint32_t width,
                                                        uint64_t num_keys, uint32_t millibits) {
    int32_t r;
    PROBE_CALL(PLAN_INIT, r = ribbon_plan_init(p, kind, width, num_keys, millibits));
    return r;
}

static PLATFORM_NOINLINE int32_t probe_ribbon_plan_init_fp_rate(ribbon_plan *p, uint32_t kind, uint32_t width,
                                                                uint64_t num_keys, uint64_t one_in) {
    int32_t r;
    PROBE_CALL(PLAN_INIT_FP_RATE, r = ribbon_plan_init_fp_rate(p, kind, width, num_keys, one_in));
    return r;
}

static PLATFORM_NOINLINE int32_t probe_ribbon_plan_init_bytes(ribbon_plan *p, uint32_t kind, uint32_t width,
                                                              uint64_t num_keys, size_t bytes) {
    int32_t r;
    PROBE_CALL(PLAN_INIT_BYTES, r = ribbon_plan_init_bytes(p, kind, width, num_keys, bytes));
    return r;
}

static PLATFORM_NOINLINE size_t probe_ribbon_plan_scratch_words(const ribbon_plan *p) {
    size_t r;
    PROBE_CALL(PLAN_SCRATCH_WORDS, r = ribbon_plan_scratch_words(p));
    return r;
}

static PLATFORM_NOINLINE size_t probe_ribbon_plan_filter_bytes(const ribbon_plan *p) {
    size_t r;
    PROBE_CALL(PLAN_FILTER_BYTES, r = ribbon_plan_filter_bytes(p));
    return r;
}

static PLATFORM_NOINLINE size_t probe_ribbon_plan_banding_scratch_words(const ribbon_plan *p) {
    size_t r;
    PROBE_CALL(PLAN_BANDING_WORDS, r = ribbon_plan_banding_scratch_words(p));
    return r;
}

static PLATFORM_NOINLINE uint64_t probe_ribbon_plan_banding_capacity(const ribbon_plan *p) {
    uint64_t r;
    PROBE_CALL(PLAN_BANDING_CAPACITY, r = ribbon_plan_banding_capacity(p));
    return r;
}

static PLATFORM_NOINLINE int32_t probe_ribbon_build(const ribbon_plan *p, const uint64_t *hashes, size_t n,
                                                    uint64_t *scratch, size_t scratch_words, uint8_t *out,
                                                    size_t out_len) {
    int32_t r;
    PROBE_CALL(BUILD, r = ribbon_build(p, hashes, n, scratch, scratch_words, out, out_len));
    return r;
}

static PLATFORM_NOINLINE int32_t probe_ribbon_banding_init(ribbon_banding *b, const ribbon_plan *p,
                                                           uint64_t *scratch, size_t scratch_words) {
    int32_t r;
    PROBE_CALL(BANDING_INIT, r = ribbon_banding_init(b, p, scratch, scratch_words));
    return r;
}

static PLATFORM_NOINLINE int32_t probe_ribbon_banding_add(ribbon_banding *b, uint64_t hash) {
    int32_t r;
    PROBE_CALL(BANDING_ADD, r = ribbon_banding_add(b, hash));
    return r;
}

static PLATFORM_NOINLINE uint64_t probe_ribbon_banding_added(const ribbon_banding *b) {
    uint64_t r;
    PROBE_CALL(BANDING_ADDED, r = ribbon_banding_added(b));
    return r;
}

static PLATFORM_NOINLINE int32_t probe_ribbon_banding_finish(ribbon_banding *b, uint8_t *out, size_t out_len) {
    int32_t r;
    PROBE_CALL(BANDING_FINISH, r = ribbon_banding_finish(b, out, out_len));
    return r;
}

static PLATFORM_NOINLINE int32_t probe_ribbon_filter_open(ribbon_filter *f, const uint8_t *bytes, size_t len) {
    int32_t r;
    PROBE_CALL(FILTER_OPEN, r = ribbon_filter_open(f, bytes, len));
    return r;
}

static PLATFORM_NOINLINE int32_t probe_ribbon_contains(const ribbon_filter *f, uint64_t hash) {
    int32_t r;
    PROBE_CALL(CONTAINS, r = ribbon_contains(f, hash));
    return r;
}

static PLATFORM_NOINLINE int32_t probe_ribbon_contains_batch(const ribbon_filter *f, const uint64_t *hashes,
                                                             size_t n, uint8_t *out) {
    int32_t r;
    PROBE_CALL(CONTAINS_BATCH, r = ribbon_contains_batch(f, hashes, n, out));
    return r;
}

static PLATFORM_NOINLINE uint64_t probe_ribbon_filter_column_fp_ppt(const ribbon_filter *f) {
    uint64_t r;
    PROBE_CALL(COLUMN_FP_PPT, r = ribbon_filter_column_fp_ppt(f));
    return r;
}

static PLATFORM_NOINLINE uint64_t probe_ribbon_filter_estimated_fp_ppt(const ribbon_filter *f) {
    uint64_t r;
    PROBE_CALL(ESTIMATED_FP_PPT, r = ribbon_filter_estimated_fp_ppt(f));
    return r;
}

static PLATFORM_NOINLINE uint32_t probe_ribbon_backend(void) {
    uint32_t r;
    PROBE_CALL(BACKEND, r = ribbon_backend());
    return r;
}

static PLATFORM_NOINLINE int32_t probe_ribbon_set_backend(uint32_t backend) {
    int32_t r;
    PROBE_CALL(SET_BACKEND, r = ribbon_set_backend(backend));
    return r;
}

static PLATFORM_NOINLINE const char *probe_ribbon_status_str(int32_t status) {
    const char *r;
    PROBE_CALL(STATUS_STR, r = ribbon_status_str(status));
    return r;
}

#if PROBE_NEW_API
static PLATFORM_NOINLINE int32_t probe_ribbon_filter_size(const uint8_t *bytes, size_t len, size_t *filter_len) {
    int32_t r;
    PROBE_CALL(FILTER_SIZE, r = ribbon_filter_size(bytes, len, filter_len));
    return r;
}

static PLATFORM_NOINLINE int32_t probe_ribbon_filter_kind(const ribbon_filter *f) {
    int32_t r;
    PROBE_CALL(FILTER_KIND, r = ribbon_filter_kind(f));
    return r;
}

static PLATFORM_NOINLINE int32_t probe_ribbon_filter_width(const ribbon_filter *f) {
    int32_t r;
    PROBE_CALL(FILTER_WIDTH, r = ribbon_filter_width(f));
    return r;
}

static PLATFORM_NOINLINE uint64_t probe_ribbon_filter_keys(const ribbon_filter *f) {
    uint64_t r;
    PROBE_CALL(FILTER_KEYS, r = ribbon_filter_keys(f));
    return r;
}

static PLATFORM_NOINLINE size_t probe_ribbon_filter_bytes(const ribbon_filter *f) {
    size_t r;
    PROBE_CALL(FILTER_BYTES, r = ribbon_filter_bytes(f));
    return r;
}

static PLATFORM_NOINLINE uint32_t probe_ribbon_version(void) {
    uint32_t r;
    PROBE_CALL(VERSION, r = ribbon_version());
    return r;
}

static PLATFORM_NOINLINE const char *probe_ribbon_version_str(void) {
    const char *r;
    PROBE_CALL(VERSION_STR, r = ribbon_version_str());
    return r;
}

static PLATFORM_NOINLINE size_t probe_ribbon_max_filter_bytes(uint32_t kind, uint32_t width, uint64_t keys,
                                                               uint32_t millibits) {
    size_t r;
    PROBE_CALL(MAX_FILTER_BYTES, r = ribbon_max_filter_bytes(kind, width, keys, millibits));
    return r;
}

static PLATFORM_NOINLINE size_t probe_ribbon_max_scratch_words(uint32_t kind, uint32_t width, uint64_t keys,
                                                                uint32_t millibits) {
    size_t r;
    PROBE_CALL(MAX_SCRATCH_WORDS, r = ribbon_max_scratch_words(kind, width, keys, millibits));
    return r;
}

static PLATFORM_NOINLINE size_t probe_ribbon_max_banding_scratch_words(uint32_t kind, uint32_t width,
                                                                        uint64_t keys, uint32_t millibits) {
    size_t r;
    PROBE_CALL(MAX_BANDING_WORDS, r = ribbon_max_banding_scratch_words(kind, width, keys, millibits));
    return r;
}
#endif

#endif
