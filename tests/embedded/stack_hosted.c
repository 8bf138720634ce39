/*
 * stack_hosted.c - peak stack of every C ABI entry point on this x86_64
 * host, once per backend the CPU has (scalar, AVX2, AVX-512, portable), with the
 * probes of stack_probe.h (paint below the call site, call, scan). Linked
 * against the host archive; may use libc. Builds 10^5-key filters of every
 * kind and width and 10^5-key retrieval structures (8-bit values at w = 64,
 * 64-bit ones at w = 128) per backend and checks the answers it gets along
 * the way.
 *
 * Hot calls are sampled: ribbon_contains on 4,000 hashes per filter,
 * ribbon_retrieval_get on 4,000 keys per structure and ribbon_banding_add
 * on every 64th key; every other call is measured.
 * Prints a markdown table with one column per backend; exit status 0 when
 * every backend available ran cleanly.
 */
#include "ribbon_kernel.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "platform.h"
#include "splitmix.h"
#include "stack_probe.h"

#if !defined(__x86_64__)
#error "stack_hosted.c measures the x86_64 backends"
#endif

/* ---- Platform hooks used by the probes ---- */

__asm__(".text\n"
        ".globl platform_stack_pointer\n"
        ".type platform_stack_pointer, @function\n"
        "platform_stack_pointer:\n"
        "    lea 8(%rsp), %rax\n" /* the caller's rsp at its call */
        "    ret\n"
        ".size platform_stack_pointer, . - platform_stack_pointer\n");

static uintptr_t main_sp;

uintptr_t platform_stack_limit(void) {
    return main_sp - 4 * 1024 * 1024; /* well inside the default 8 MiB */
}

size_t platform_probe_window(void) {
    return 64 * 1024;
}

const char *platform_name(void) {
    return "x86_64 hosted";
}

/* ---- Workload ---- */

#define KEYS 100000u
#define MILLIBITS 7700u
#define SAMPLE 4000u

static int failures;

#define EXPECT(cond, what)                                                                       \
    do {                                                                                         \
        if (!(cond)) {                                                                           \
            fprintf(stderr, "FAIL (stack_hosted.c:%d, %s): %s\n", __LINE__, backend_name, what); \
            failures++;                                                                          \
        }                                                                                        \
    } while (0)

static const char *backend_name = "";
/* ribbon_build's depth per backend and shape (kind * 2 + width index). */
/* Backends measured: scalar, AVX2, AVX-512, portable. */
#define BACKENDS 4
static size_t build_depth[BACKENDS][8];
static uint32_t current_backend;

static void *xmalloc(size_t n) {
    void *p = malloc(n ? n : 1);
    if (!p) {
        fprintf(stderr, "out of memory\n");
        exit(2);
    }
    return p;
}

/* Queries a view: sampled single calls, full batches, rates, getters. */
static void query_view(const ribbon_filter *view, const uint64_t *keys, size_t n, const uint64_t *others,
                       uint8_t *answers) {
    size_t i, missing = 0, hits = 0;
    for (i = 0; i < SAMPLE && i < n; i++) {
        missing += probe_ribbon_contains(view, keys[i]) != 1;
        hits += probe_ribbon_contains(view, others[i]) == 1;
    }
    EXPECT(missing == 0, "members found by ribbon_contains");
    EXPECT(hits < SAMPLE / 20, "few non-members hit");
    EXPECT(probe_ribbon_contains_batch(view, keys, n, answers) == RIBBON_OK, "ribbon_contains_batch");
    for (i = 0, missing = 0; i < n; i++) {
        missing += answers[i] != 1;
    }
    EXPECT(missing == 0, "members found by ribbon_contains_batch");
    EXPECT(probe_ribbon_contains_batch(view, others, KEYS, answers) == RIBBON_OK, "ribbon_contains_batch");
    EXPECT(probe_ribbon_filter_column_fp_ppt(view) > 0, "column FP rate");
    EXPECT(probe_ribbon_filter_estimated_fp_ppt(view) >= probe_ribbon_filter_column_fp_ppt(view), "estimate");
    EXPECT(probe_ribbon_filter_kind(view) >= 0, "ribbon_filter_kind");
    EXPECT(probe_ribbon_filter_width(view) > 0, "ribbon_filter_width");
    EXPECT(probe_ribbon_filter_keys(view) > 0, "ribbon_filter_keys");
    EXPECT(probe_ribbon_filter_bytes(view) > 48, "ribbon_filter_bytes");
}

static void run_shape(uint32_t kind, uint32_t width, uint64_t *keys, const uint64_t *others, uint8_t *answers) {
    ribbon_plan plan;
    ribbon_filter view;
    ribbon_banding banding;
    size_t words, bytes, banding_words, i, added = 0;
    uint64_t *scratch;
    uint8_t *filter;
    int32_t r = RIBBON_ADD_INSERTED;

    EXPECT(probe_ribbon_plan_init(&plan, kind, width, KEYS, MILLIBITS) == RIBBON_OK, "ribbon_plan_init");
    EXPECT(probe_ribbon_plan_set_seed(&plan, 0x5eedu) == RIBBON_OK, "ribbon_plan_set_seed");
    words = probe_ribbon_plan_scratch_words(&plan);
    bytes = probe_ribbon_plan_filter_bytes(&plan);
    banding_words = probe_ribbon_plan_banding_scratch_words(&plan);
    EXPECT(probe_ribbon_plan_banding_capacity(&plan) > 0 || kind == RIBBON_KIND_BUMPED,
           "ribbon_plan_banding_capacity (none for Bumped Ribbon)");
    EXPECT(probe_ribbon_max_filter_bytes(kind, width, KEYS, MILLIBITS) >= bytes, "ribbon_max_filter_bytes");
    EXPECT(probe_ribbon_max_scratch_words(kind, width, KEYS, MILLIBITS) >= words, "ribbon_max_scratch_words");
    EXPECT(probe_ribbon_max_banding_scratch_words(kind, width, KEYS, MILLIBITS) >= banding_words,
           "ribbon_max_banding_scratch_words");
    scratch = (uint64_t *)xmalloc(words * sizeof *scratch);
    filter = (uint8_t *)xmalloc(bytes);

    /* Batch build. */
    EXPECT(probe_ribbon_build(&plan, keys, KEYS, scratch, words, filter, bytes) == RIBBON_OK, "ribbon_build");
    build_depth[current_backend][kind * 2 + (width == RIBBON_WIDTH_128)] = probe_results.last;
    {
        /* A Bumped build writes at most the plan's bytes. */
        size_t n = 0;
        EXPECT(probe_ribbon_filter_size(filter, bytes, &n) == RIBBON_OK && n <= bytes &&
                   (n == bytes || kind == RIBBON_KIND_BUMPED),
               "ribbon_filter_size");
        bytes = n;
    }
    EXPECT(probe_ribbon_filter_open_unverified(&view, filter, bytes) == RIBBON_OK,
           "ribbon_filter_open_unverified");
    EXPECT(probe_ribbon_filter_open(&view, filter, bytes) == RIBBON_OK, "ribbon_filter_open");
    query_view(&view, keys, KEYS, others, answers);
    /* Refusals go through the same checks: measure them too. */
    EXPECT(probe_ribbon_filter_open(&view, filter, bytes - 1) < 0, "truncated copy refused");

    if (kind == RIBBON_KIND_BUMPED) {
        /* No streaming builds of Bumped Ribbon. */
        EXPECT(probe_ribbon_banding_init(&banding, &plan, scratch, words) == RIBBON_ERR_UNSUPPORTED,
               "ribbon_banding_init of a Bumped plan");
        free(scratch);
        free(filter);
        return;
    }
    /* Streaming build: every 64th add measured. */
    EXPECT(probe_ribbon_banding_init(&banding, &plan, scratch, banding_words) == RIBBON_OK, "ribbon_banding_init");
    for (i = 0; i < KEYS; i++) {
        r = i % 64 == 0 ? probe_ribbon_banding_add(&banding, keys[i]) : ribbon_banding_add(&banding, keys[i]);
        if (r != RIBBON_ADD_INSERTED && r != RIBBON_ADD_REDUNDANT) {
            break;
        }
        added++;
    }
    EXPECT(added * 100 >= (size_t)KEYS * 95, "streaming took 95 % of the keys");
    EXPECT(probe_ribbon_banding_added(&banding) == added, "ribbon_banding_added");
    EXPECT(probe_ribbon_banding_finish(&banding, filter, bytes) == RIBBON_OK, "ribbon_banding_finish");
    EXPECT(probe_ribbon_filter_open(&view, filter, bytes) == RIBBON_OK, "ribbon_filter_open (streamed)");
    query_view(&view, keys, added, others, answers);

    /* The other planners (sizes only; the builds above cover building). */
    EXPECT(probe_ribbon_plan_init_fp_rate(&plan, kind, width, KEYS, 100) == RIBBON_OK, "ribbon_plan_init_fp_rate");
    EXPECT(probe_ribbon_plan_init_bytes(&plan, kind, width, KEYS, KEYS) == RIBBON_OK, "ribbon_plan_init_bytes");
    free(scratch);
    free(filter);
}

/* A retrieval structure of KEYS keys to value_bits-bit values (the keys'
 * own bits): build, open, getters, every value back (ribbon_retrieval_get
 * sampled on SAMPLE keys), and a truncated copy refused. */
static void run_retrieval(uint32_t width, uint32_t value_bits, const uint64_t *keys, uint64_t *got) {
    const uint64_t mask = value_bits >= 64 ? ~(uint64_t)0 : (((uint64_t)1 << value_bits) - 1);
    ribbon_retrieval_plan plan;
    ribbon_retrieval map;
    size_t words, bytes, i, wrong = 0;
    uint64_t *values = (uint64_t *)xmalloc(KEYS * sizeof *values);
    uint64_t *scratch;
    uint8_t *out;

    for (i = 0; i < KEYS; i++) {
        values[i] = (keys[i] >> 7) & mask;
    }
    EXPECT(probe_ribbon_retrieval_plan_init(&plan, width, KEYS, value_bits) == RIBBON_OK,
           "ribbon_retrieval_plan_init");
    EXPECT(probe_ribbon_retrieval_plan_set_seed(&plan, 0x5eedu) == RIBBON_OK,
           "ribbon_retrieval_plan_set_seed");
    words = probe_ribbon_retrieval_plan_scratch_words(&plan);
    bytes = probe_ribbon_retrieval_plan_bytes(&plan);
    scratch = (uint64_t *)xmalloc(words * sizeof *scratch);
    out = (uint8_t *)xmalloc(bytes);
    EXPECT(probe_ribbon_retrieval_build(&plan, keys, values, KEYS, scratch, words, out, bytes) == RIBBON_OK,
           "ribbon_retrieval_build");
    {
        /* Bumped layers (from 10,000 / 30,000 keys) write at most the
         * planned bytes. */
        size_t len = 0;
        EXPECT(probe_ribbon_retrieval_size(out, bytes, &len) == RIBBON_OK && len <= bytes && len >= 48,
               "ribbon_retrieval_size");
        bytes = len;
    }
    EXPECT(probe_ribbon_retrieval_open_unverified(&map, out, bytes) == RIBBON_OK,
           "ribbon_retrieval_open_unverified");
    EXPECT(probe_ribbon_retrieval_open(&map, out, bytes) == RIBBON_OK, "ribbon_retrieval_open");
    EXPECT(probe_ribbon_retrieval_value_bits(&map) == value_bits, "ribbon_retrieval_value_bits");
    EXPECT(probe_ribbon_retrieval_keys(&map) == KEYS, "ribbon_retrieval_keys");
    EXPECT(probe_ribbon_retrieval_bytes(&map) == bytes, "ribbon_retrieval_bytes");
    for (i = 0; i < SAMPLE; i++) {
        wrong += probe_ribbon_retrieval_get(&map, keys[i]) != values[i];
    }
    EXPECT(probe_ribbon_retrieval_get_batch(&map, keys, KEYS, got) == RIBBON_OK, "ribbon_retrieval_get_batch");
    for (i = 0; i < KEYS; i++) {
        wrong += got[i] != values[i];
    }
    EXPECT(wrong == 0, "every key's value back");
    EXPECT(probe_ribbon_retrieval_open(&map, out, bytes - 1) == RIBBON_ERR_TRUNCATED, "truncated copy refused");
    free(values);
    free(scratch);
    free(out);
}

static int cpu_has(const char *feature) {
    __builtin_cpu_init();
    if (strcmp(feature, "avx2") == 0) {
        return __builtin_cpu_supports("avx2");
    }
    /* The AVX-512 kernels need AVX512F and AVX512_VPOPCNTDQ. */
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vpopcntdq");
}

int main(void) {
    static const struct {
        uint32_t code;
        const char *name;
    } backends[BACKENDS] = {{RIBBON_BACKEND_SCALAR, "scalar"},
                            {RIBBON_BACKEND_AVX2, "avx2"},
                            {RIBBON_BACKEND_AVX512, "avx512"},
                            {RIBBON_BACKEND_PORTABLE, "portable"}};
    static struct probe_results results[BACKENDS];
    int ran[BACKENDS] = {0, 0, 0, 0};
    uint64_t *keys = (uint64_t *)xmalloc(KEYS * sizeof *keys);
    uint64_t *others = (uint64_t *)xmalloc(KEYS * sizeof *others);
    uint8_t *answers = (uint8_t *)xmalloc(KEYS);
    uint64_t *got = (uint64_t *)xmalloc(KEYS * sizeof *got);
    uint64_t state = 42;
    uint32_t kind, b, i;
    int id;
    volatile char here = 0;

    main_sp = (uintptr_t)&here;
    if (!probe_init()) {
        fprintf(stderr, "stack too small for the probe window\n");
        return 2;
    }
    for (i = 0; i < KEYS; i++) {
        keys[i] = splitmix64(&state);
        others[i] = splitmix64(&state);
    }
    printf("CPU: avx2 %s, avx512f+vpopcntdq %s; detected backend %u\n", cpu_has("avx2") ? "yes" : "no",
           cpu_has("avx512") ? "yes" : "no", (unsigned)ribbon_backend());
    for (b = 0; b < BACKENDS; b++) {
        int32_t st = ribbon_set_backend(backends[b].code);
        backend_name = backends[b].name;
        if (st == RIBBON_ERR_BACKEND_UNAVAILABLE) {
            printf("backend %s: skipped: %s (%s)\n", backends[b].name, ribbon_status_str(st),
                   backends[b].code == RIBBON_BACKEND_SCALAR || backends[b].code == RIBBON_BACKEND_PORTABLE ||
                           cpu_has(backends[b].name)
                       ? "the CPU has it: the library was built without its kernels"
                                                       : "the CPU lacks it");
            continue;
        }
        if (st != RIBBON_OK) {
            fprintf(stderr, "ribbon_set_backend(%s): %s\n", backends[b].name, ribbon_status_str(st));
            return 1;
        }
        probe_reset();
        current_backend = b;
        /* The small calls, once per backend. */
        EXPECT(probe_ribbon_backend() == backends[b].code, "ribbon_backend");
        EXPECT(probe_ribbon_set_backend(backends[b].code) == RIBBON_OK, "ribbon_set_backend");
        EXPECT(probe_ribbon_status_str(RIBBON_ERR_TRUNCATED) != NULL, "ribbon_status_str");
        EXPECT(probe_ribbon_version() == RIBBON_VERSION_NUMBER, "ribbon_version");
        EXPECT(probe_ribbon_version_str() != NULL, "ribbon_version_str");
        for (kind = RIBBON_KIND_HOMOGENEOUS; kind <= RIBBON_KIND_BUMPED; kind++) {
            run_shape(kind, RIBBON_WIDTH_64, keys, others, answers);
            run_shape(kind, RIBBON_WIDTH_128, keys, others, answers);
        }
        run_retrieval(RIBBON_WIDTH_64, 8, keys, got);
        run_retrieval(RIBBON_WIDTH_128, 64, keys, got);
        EXPECT(probe_results.overflows == 0, "no call deeper than the probe window");
        EXPECT(probe_results.unusable == 0, "probe window inside the stack");
        results[b] = probe_results;
        ran[b] = 1;
        printf("backend %s: measured\n", backends[b].name);
    }
    ribbon_set_backend(RIBBON_BACKEND_AUTO);

    printf("\n### Peak stack per entry point and backend: x86_64 hosted (bytes)\n\n| entry point |");
    for (b = 0; b < BACKENDS; b++) {
        printf(" %s |", backends[b].name);
    }
    printf("\n|---|---:|---:|---:|---:|\n");
    for (id = 0; id < PROBE_COUNT; id++) {
        int any = 0;
        for (b = 0; b < BACKENDS; b++) {
            any |= ran[b] && results[b].calls[id] > 0;
        }
        if (!any) {
            continue;
        }
        printf("| %s |", probe_names[id]);
        for (b = 0; b < BACKENDS; b++) {
            if (ran[b]) {
                printf(" %zu |", results[b].peak[id]);
            } else {
                printf(" skipped |");
            }
        }
        printf("\n");
    }
    printf("\n#### ribbon_build by kind and width (bytes)\n\n| kind, width |");
    for (b = 0; b < BACKENDS; b++) {
        printf(" %s |", backends[b].name);
    }
    printf("\n|---|---:|---:|---:|---:|\n");
    for (kind = 0; kind < 8; kind++) {
        static const char *const shapes[8] = {"Homogeneous w64", "Homogeneous w128", "Standard w64",
                                              "Standard w128", "StandardSmash w64", "StandardSmash w128",
                                              "Bumped w64", "Bumped w128"};
        printf("| %s |", shapes[kind]);
        for (b = 0; b < BACKENDS; b++) {
            if (ran[b]) {
                printf(" %zu |", build_depth[b][kind]);
            } else {
                printf(" skipped |");
            }
        }
        printf("\n");
    }
    printf("\nstack probe window: %zu bytes; ribbon_contains sampled on %u hashes per filter, "
           "ribbon_banding_add on every 64th key\n\n",
           (size_t)probe_window_bytes, 2 * SAMPLE);
    free(keys);
    free(others);
    free(answers);
    free(got);
    if (failures) {
        printf("stack_hosted: FAIL (%d checks failed)\n", failures);
        return 1;
    }
    printf("stack_hosted: PASS\n");
    return 0;
}
