/*
 * C test of the ribbon-kernel static library, using only the public header.
 * Built by tests/c_abi.rs as C99, C11 and C++ with -Wall -Wextra -Werror
 * -pedantic, linked with --gc-sections, and run. Exit status 0 = pass.
 */
#include "ribbon_kernel.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__cplusplus) && __cplusplus >= 201103L
#define STATIC_ASSERT(c, m) static_assert(c, m)
#elif defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L
#define STATIC_ASSERT(c, m) _Static_assert(c, m)
#else
#define STATIC_ASSERT_JOIN2(a, b) a##b
#define STATIC_ASSERT_JOIN(a, b) STATIC_ASSERT_JOIN2(a, b)
#define STATIC_ASSERT(c, m) typedef char STATIC_ASSERT_JOIN(static_assertion_, __LINE__)[(c) ? 1 : -1]
#endif

/* The ABI: struct sizes and constants are fixed until a major version. */
STATIC_ASSERT(sizeof(ribbon_plan) == 64, "ribbon_plan is 64 bytes");
STATIC_ASSERT(sizeof(ribbon_filter) == 160, "ribbon_filter is 160 bytes");
STATIC_ASSERT(sizeof(ribbon_banding) == 128, "ribbon_banding is 128 bytes");
STATIC_ASSERT(sizeof(ribbon_retrieval_plan) == 64, "ribbon_retrieval_plan is 64 bytes");
STATIC_ASSERT(sizeof(ribbon_retrieval) == 160, "ribbon_retrieval is 160 bytes");
STATIC_ASSERT(RIBBON_ADD_INSERTED == 0 && RIBBON_ADD_REDUNDANT == 1 && RIBBON_ADD_INCONSISTENT == 2 &&
                  RIBBON_ADD_FULL == 3,
              "banding outcomes");
STATIC_ASSERT(RIBBON_KIND_HOMOGENEOUS == 0 && RIBBON_KIND_STANDARD == 1 && RIBBON_KIND_STANDARD_SMASH == 2 &&
                  RIBBON_KIND_BUMPED == 3,
              "kind codes");
STATIC_ASSERT(RIBBON_WIDTH_64 == 64 && RIBBON_WIDTH_128 == 128, "widths");
STATIC_ASSERT(RIBBON_BACKEND_SCALAR == 0 && RIBBON_BACKEND_AVX2 == 1 && RIBBON_BACKEND_AVX512 == 2 &&
                  RIBBON_BACKEND_NEON == 3 && RIBBON_BACKEND_PORTABLE == 4,
              "backend codes");
STATIC_ASSERT(RIBBON_OK == 0 && RIBBON_ERR_NULL == -1 && RIBBON_ERR_MISALIGNED == -18 &&
                  RIBBON_ERR_UNINITIALIZED == -19 && RIBBON_ERR_OVERLAP == -20,
              "status codes");
STATIC_ASSERT(RIBBON_ERR_INVALID_VALUE_BITS == -22 && RIBBON_ERR_VALUE_TOO_WIDE == -23 &&
                  RIBBON_ERR_CONFLICTING_VALUES == -24,
              "retrieval status codes");

static int failures = 0;

#define CHECK(cond)                                                                  \
    do {                                                                             \
        if (!(cond)) {                                                               \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
            failures++;                                                              \
        }                                                                            \
    } while (0)

#define CHECK_STATUS(expr, expected)                                                        \
    do {                                                                                    \
        int32_t got_ = (expr);                                                              \
        if (got_ != (expected)) {                                                           \
            fprintf(stderr, "%s:%d: %s returned %d (%s), expected %d\n", __FILE__, __LINE__, \
                    #expr, (int)got_, ribbon_status_str(got_), (int)(expected));            \
            failures++;                                                                     \
        }                                                                                   \
    } while (0)

static uint64_t splitmix(uint64_t *state) {
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static uint64_t *random_hashes(uint64_t seed, size_t n) {
    uint64_t *h = (uint64_t *)malloc((n ? n : 1) * sizeof(uint64_t));
    size_t i;
    if (!h) {
        abort();
    }
    for (i = 0; i < n; i++) {
        h[i] = splitmix(&seed);
    }
    return h;
}

static void check_fp_promise(const ribbon_filter *view, size_t queries, uint64_t seed);

/* Builds one filter in malloc'd buffers, the filter at an odd address, and
 * checks members, FP rate and batch-versus-single agreement. */
static void check_filter(uint32_t kind, uint32_t width, size_t n) {
    ribbon_plan plan;
    ribbon_filter view;
    uint64_t *keys = random_hashes(1000 + n * 7 + kind * 3 + width, n);
    const size_t queries = 20000;
    uint64_t *others = random_hashes(99 + n, queries);
    uint8_t *answers = (uint8_t *)malloc(queries + n + 1);
    size_t scratch_words, filter_bytes, i, hits = 0;
    uint64_t *scratch;
    uint8_t *buffer;

    CHECK_STATUS(ribbon_plan_init(&plan, kind, width, n, 7700), RIBBON_OK);
    scratch_words = ribbon_plan_scratch_words(&plan);
    filter_bytes = ribbon_plan_filter_bytes(&plan);
    CHECK(filter_bytes >= 40);
    scratch = (uint64_t *)malloc((scratch_words ? scratch_words : 1) * sizeof(uint64_t));
    buffer = (uint8_t *)malloc(filter_bytes + 1);
    if (!scratch || !buffer || !answers) {
        abort();
    }
    CHECK_STATUS(ribbon_build(&plan, keys, n, scratch, scratch_words, buffer + 1, filter_bytes), RIBBON_OK);
    free(scratch); /* the filter does not need it */
    /* A Bumped build writes at most the plan's bytes; the header says how
     * many. The other kinds write exactly that many. */
    {
        size_t written = 0;
        CHECK_STATUS(ribbon_filter_size(buffer + 1, filter_bytes, &written), RIBBON_OK);
        CHECK(written <= filter_bytes && (kind == RIBBON_KIND_BUMPED || written == filter_bytes));
        filter_bytes = written;
    }
    CHECK_STATUS(ribbon_filter_open(&view, buffer + 1, filter_bytes), RIBBON_OK);
    CHECK(ribbon_filter_kind(&view) == (int32_t)kind);
    CHECK(ribbon_filter_bytes(&view) == filter_bytes);
    if (n >= 10000) {
        check_fp_promise(&view, 400000, 31 + n);
    }
    for (i = 0; i < n; i++) {
        CHECK(ribbon_contains(&view, keys[i]) == 1);
    }
    CHECK_STATUS(ribbon_contains_batch(&view, keys, n, answers), RIBBON_OK);
    for (i = 0; i < n; i++) {
        CHECK(answers[i] == 1);
    }
    CHECK_STATUS(ribbon_contains_batch(&view, others, queries, answers), RIBBON_OK);
    for (i = 0; i < queries; i++) {
        int single = ribbon_contains(&view, others[i]);
        CHECK(single == answers[i]);
        hits += (size_t)single;
    }
    if (n == 0) {
        CHECK(hits == 0);
    } else if (n >= 10000) {
        /* 7.7 bits per key: about 0.5-1 % false positives. */
        CHECK(hits > queries / 400 && hits < queries / 50);
    }
    free(keys);
    free(others);
    free(answers);
    free(buffer);
}

/* FP rate within the promise: at most 1.10 x the column rate plus four
 * binomial standard deviations of the sample. */
static void check_fp_promise(const ribbon_filter *view, size_t queries, uint64_t seed) {
    uint64_t *others = random_hashes(seed, queries);
    uint8_t *answers = (uint8_t *)malloc(queries);
    double p = (double)ribbon_filter_column_fp_ppt(view) / 1e12;
    double estimate = (double)ribbon_filter_estimated_fp_ppt(view) / 1e12;
    double sigma, measured;
    size_t i, hits = 0;
    if (!answers) {
        abort();
    }
    CHECK_STATUS(ribbon_contains_batch(view, others, queries, answers), RIBBON_OK);
    for (i = 0; i < queries; i++) {
        hits += answers[i];
    }
    measured = (double)hits / (double)queries;
    /* sqrt(p (1 - p) / queries) by Newton steps: no libm needed. */
    {
        double v = p * (1.0 - p) / (double)queries, x = v > 1.0 ? v : 1.0;
        int k;
        for (k = 0; k < 100; k++) {
            x = 0.5 * (x + v / x);
        }
        sigma = x;
    }
    CHECK(p > 0.0);
    CHECK(estimate >= p && estimate <= 1.10 * p);
    CHECK(measured <= 1.10 * p + 4.0 * sigma);
    CHECK(measured >= p - 4.0 * sigma);
    free(others);
    free(answers);
}

/* A streaming build fed twice its planned keys stops with FULL or
 * INCONSISTENT after at least 95 % of them; every key added is in the
 * finished filter, which keeps the FP promise. */
static void check_streaming(uint32_t kind, uint32_t width, size_t n) {
    ribbon_plan plan;
    ribbon_banding banding, copy;
    ribbon_filter view;
    uint64_t *keys = random_hashes(77 + n + kind * 5 + width, 2 * n);
    size_t words, bytes, added = 0, i;
    uint64_t capacity;
    uint64_t *scratch;
    uint8_t *out;
    int32_t last = RIBBON_ADD_INSERTED;

    CHECK_STATUS(ribbon_plan_init(&plan, kind, width, n, 7700), RIBBON_OK);
    words = ribbon_plan_banding_scratch_words(&plan);
    bytes = ribbon_plan_filter_bytes(&plan);
    capacity = ribbon_plan_banding_capacity(&plan);
    CHECK(words > 0 && words < ribbon_plan_scratch_words(&plan));
    CHECK(capacity <= n && capacity * 100 >= (uint64_t)n * 95);
    scratch = (uint64_t *)malloc(words * sizeof(uint64_t));
    out = (uint8_t *)malloc(bytes + 3);
    if (!scratch || !out) {
        abort();
    }
    CHECK_STATUS(ribbon_banding_init(&banding, &plan, scratch, words - 1), RIBBON_ERR_SCRATCH_TOO_SMALL);
    CHECK_STATUS(ribbon_banding_add(&banding, 1), RIBBON_ERR_UNINITIALIZED);
    CHECK_STATUS(ribbon_banding_init(&banding, &plan, scratch, words), RIBBON_OK);
    for (i = 0; i < 2 * n; i++) {
        last = ribbon_banding_add(&banding, keys[i]);
        if (last != RIBBON_ADD_INSERTED && last != RIBBON_ADD_REDUNDANT) {
            break;
        }
        added++;
    }
    CHECK(last == RIBBON_ADD_FULL || (last == RIBBON_ADD_INCONSISTENT && kind != RIBBON_KIND_HOMOGENEOUS));
    CHECK(ribbon_banding_added(&banding) == added);
    CHECK(added * 100 >= n * 95);
    if (last == RIBBON_ADD_FULL) {
        CHECK(added == capacity);
        /* Full stays full and changes nothing. */
        CHECK_STATUS(ribbon_banding_add(&banding, keys[0] ^ 1), RIBBON_ADD_FULL);
    } else {
        /* The inconsistent key was not added: a duplicate of an added key
         * is still redundant, and the count did not move. */
        CHECK_STATUS(ribbon_banding_add(&banding, keys[0]), RIBBON_ADD_REDUNDANT);
        added++;
    }
    CHECK(ribbon_banding_added(&banding) == added);
    copy = banding;
    copy.opaque[6] ^= 1; /* a corrupted struct is refused */
    CHECK_STATUS(ribbon_banding_add(&copy, 5), RIBBON_ERR_UNINITIALIZED);
    CHECK_STATUS(ribbon_banding_finish(&banding, out + 3, bytes - 1), RIBBON_ERR_OUTPUT_TOO_SMALL);
    CHECK_STATUS(ribbon_banding_finish(&banding, out + 3, bytes), RIBBON_OK);
    CHECK_STATUS(ribbon_banding_finish(&banding, out + 3, bytes), RIBBON_ERR_UNINITIALIZED);
    free(scratch);
    CHECK_STATUS(ribbon_filter_open(&view, out + 3, bytes), RIBBON_OK);
    for (i = 0; i < added && i < 2 * n; i++) {
        CHECK(ribbon_contains(&view, keys[i]) == 1);
    }
    check_fp_promise(&view, 400000, 4242 + n);
    free(keys);
    free(out);
}

static void check_errors(void) {
    ribbon_plan plan, garbage;
    ribbon_filter view;
    uint64_t keys[4] = {1, 2, 3, 4};
    uint64_t scratch_storage[2048];
    uint8_t out[4096];
    size_t words;

    CHECK_STATUS(ribbon_plan_init(NULL, 0, 64, 10, 8000), RIBBON_ERR_NULL);
    CHECK_STATUS(ribbon_plan_init(&plan, 4, 64, 10, 8000), RIBBON_ERR_INVALID_ARGUMENT);
    /* Bumped Ribbon sizes its layers for the keys: no streaming builds. */
    CHECK_STATUS(ribbon_plan_init(&plan, RIBBON_KIND_BUMPED, 64, 10, 8000), RIBBON_OK);
    {
        ribbon_banding banding;
        CHECK_STATUS(ribbon_banding_init(&banding, &plan, scratch_storage, 2048), RIBBON_ERR_UNSUPPORTED);
    }
    CHECK_STATUS(ribbon_plan_init(&plan, 0, 32, 10, 8000), RIBBON_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(ribbon_plan_init(&plan, 0, 64, 10, 0), RIBBON_ERR_INVALID_BITS_PER_KEY);
    CHECK_STATUS(ribbon_plan_init_fp_rate(&plan, 1, 64, 10, 1), RIBBON_ERR_INVALID_FP_RATE);
    CHECK_STATUS(ribbon_plan_init_bytes(&plan, 1, 64, 10, 41), RIBBON_ERR_BUDGET_TOO_SMALL);
    CHECK_STATUS(ribbon_plan_init_fp_rate(&plan, 1, 128, 100, 1000), RIBBON_OK);
    CHECK_STATUS(ribbon_plan_init_bytes(&plan, 0, 128, 100, 300), RIBBON_OK);
    CHECK(ribbon_plan_filter_bytes(&plan) <= 300);
    /* Generous budgets plan the best filter within them (64 columns). */
    CHECK_STATUS(ribbon_plan_init_bytes(&plan, 0, 128, 100, 4096), RIBBON_OK);
    CHECK(ribbon_plan_filter_bytes(&plan) <= 4096);
    CHECK_STATUS(ribbon_plan_init_bytes(&plan, 0, 128, 100, SIZE_MAX), RIBBON_OK);
    CHECK(ribbon_plan_filter_bytes(&plan) <= 4096);

    memset(&garbage, 0xab, sizeof garbage);
    CHECK(ribbon_plan_scratch_words(&garbage) == 0);
    CHECK(ribbon_plan_filter_bytes(NULL) == 0);
    CHECK_STATUS(ribbon_build(&garbage, keys, 4, scratch_storage, 2048, out, sizeof out),
                 RIBBON_ERR_UNINITIALIZED);

    CHECK_STATUS(ribbon_plan_init(&plan, 1, 64, 4, 8000), RIBBON_OK);
    words = ribbon_plan_scratch_words(&plan);
    CHECK(words > 0 && words <= 2048);
    CHECK_STATUS(ribbon_build(NULL, keys, 4, scratch_storage, words, out, sizeof out), RIBBON_ERR_NULL);
    CHECK_STATUS(ribbon_build(&plan, NULL, 4, scratch_storage, words, out, sizeof out), RIBBON_ERR_NULL);
    CHECK_STATUS(ribbon_build(&plan, keys, 4, NULL, words, out, sizeof out), RIBBON_ERR_NULL);
    CHECK_STATUS(ribbon_build(&plan, keys, 4, scratch_storage, words - 1, out, sizeof out),
                 RIBBON_ERR_SCRATCH_TOO_SMALL);
    CHECK_STATUS(ribbon_build(&plan, keys, 4, scratch_storage, words, out, 39), RIBBON_ERR_OUTPUT_TOO_SMALL);
    CHECK_STATUS(ribbon_build(&plan, keys, 5, scratch_storage, words, out, sizeof out),
                 RIBBON_ERR_TOO_MANY_KEYS);
    CHECK_STATUS(ribbon_build(&plan, keys, 4, (uint64_t *)((uint8_t *)scratch_storage + 1), words, out,
                              sizeof out),
                 RIBBON_ERR_MISALIGNED);
    CHECK_STATUS(ribbon_build(&plan, keys, 4, scratch_storage, words, out, sizeof out), RIBBON_OK);

    CHECK_STATUS(ribbon_filter_open(NULL, out, ribbon_plan_filter_bytes(&plan)), RIBBON_ERR_NULL);
    CHECK_STATUS(ribbon_filter_open(&view, NULL, 100), RIBBON_ERR_NULL);
    CHECK_STATUS(ribbon_filter_open(&view, out, 10), RIBBON_ERR_TRUNCATED);
    CHECK_STATUS(ribbon_filter_open(&view, out, ribbon_plan_filter_bytes(&plan) + 1), RIBBON_ERR_TRAILING_BYTES);
    CHECK_STATUS(ribbon_filter_open(&view, out, ribbon_plan_filter_bytes(&plan)), RIBBON_OK);
    CHECK(ribbon_contains(&view, 3) == 1);
    CHECK_STATUS(ribbon_contains(NULL, 3), RIBBON_ERR_NULL);
    CHECK_STATUS(ribbon_contains_batch(&view, keys, 4, NULL), RIBBON_ERR_NULL);
    CHECK_STATUS(ribbon_contains_batch(&view, NULL, 0, NULL), RIBBON_OK);
    memset(&view, 0x5a, sizeof view);
    CHECK_STATUS(ribbon_contains(&view, 3), RIBBON_ERR_UNINITIALIZED);

    /* A flipped payload bit: refused, unless the caller skips the checksum. */
    out[ribbon_plan_filter_bytes(&plan) - 1] ^= 0x10;
    CHECK_STATUS(ribbon_filter_open(&view, out, ribbon_plan_filter_bytes(&plan)), RIBBON_ERR_CHECKSUM_MISMATCH);
    CHECK_STATUS(ribbon_filter_open_unverified(&view, out, ribbon_plan_filter_bytes(&plan)), RIBBON_OK);
    out[ribbon_plan_filter_bytes(&plan) - 1] ^= 0x10;
    CHECK_STATUS(ribbon_filter_open(&view, out, ribbon_plan_filter_bytes(&plan)), RIBBON_OK);

    out[0] ^= 1;
    CHECK_STATUS(ribbon_filter_open(&view, out, ribbon_plan_filter_bytes(&plan)), RIBBON_ERR_BAD_MAGIC);
    out[0] ^= 1;
    out[4] = 9;
    CHECK_STATUS(ribbon_filter_open(&view, out, ribbon_plan_filter_bytes(&plan)), RIBBON_ERR_UNSUPPORTED_VERSION);

    CHECK(strcmp(ribbon_status_str(RIBBON_OK), "ok") == 0);
    {
        int32_t s;
        for (s = -30; s <= 1; s++) {
            CHECK(ribbon_status_str(s) != NULL && strlen(ribbon_status_str(s)) > 0);
            /* Every defined code, RIBBON_ERR_CHECKSUM_MISMATCH the last, has its own text. */
            if (s >= RIBBON_ERR_CHECKSUM_MISMATCH && s <= RIBBON_OK) {
                CHECK(strcmp(ribbon_status_str(s), ribbon_status_str(-1000)) != 0);
            }
        }
    }
}

/* Random and nearly valid bytes must be refused cleanly; any accepted
 * buffer must answer queries with 0 or 1. */
static void check_hostile_bytes(void) {
    uint64_t state = 0x1234;
    uint8_t bytes[512];
    ribbon_filter view;
    int round, accepted = 0;
    for (round = 0; round < 40000; round++) {
        size_t len = (size_t)(splitmix(&state) % sizeof bytes);
        size_t i;
        for (i = 0; i < len; i++) {
            bytes[i] = (uint8_t)splitmix(&state);
        }
        if (round % 2 == 0 && len >= 48) {
            memcpy(bytes, "RbnK\002", 5);
            bytes[5] %= 4;
            bytes[6] = (bytes[6] & 1) ? 128 : 64;
            bytes[7] %= 70;
            memset(bytes + 12, 0, 4);
            memset(bytes + 25, 0, 7);
            memset(bytes + 33, 0, 7);
            bytes[24] %= 4;
            bytes[32] %= 5;
            /* Usually the length the header implies, to reach the payload. */
            if (round % 4 == 0 && bytes[32] <= bytes[24]) {
                size_t words = (size_t)bytes[24] * bytes[7] + (size_t)(bytes[24] - bytes[32]);
                size_t implied = 48 + words * (bytes[6] / 8);
                if (implied <= sizeof bytes) {
                    len = implied;
                }
            }
        }
        {
            /* The length in the header agrees with what opens (the
             * structure: random bytes do not carry their checksum). */
            size_t size = 1;
            int32_t st = ribbon_filter_size(bytes, len, &size);
            if (st == RIBBON_OK) {
                CHECK(size >= 48);
                if (size <= len) {
                    CHECK(ribbon_filter_open_unverified(&view, bytes, size) == RIBBON_OK);
                }
            } else {
                CHECK(st < 0 && size == 0);
                CHECK(ribbon_filter_open_unverified(&view, bytes, len) != RIBBON_OK);
            }
        }
        if (ribbon_filter_open_unverified(&view, bytes, len) == RIBBON_OK) {
            int q;
            size_t size = 0;
            CHECK(ribbon_filter_size(bytes, len, &size) == RIBBON_OK && size == len);
            accepted++;
            for (q = 0; q < 16; q++) {
                int r = ribbon_contains(&view, splitmix(&state));
                CHECK(r == 0 || r == 1);
            }
            /* Their checksum is random: verified, they are refused. */
            CHECK_STATUS(ribbon_filter_open(&view, bytes, len), RIBBON_ERR_CHECKSUM_MISMATCH);
        }
    }
    printf("hostile bytes: %d of 40000 buffers accepted, all queried safely\n", accepted);
}

/* Forcing each backend gives identical answers; AUTO restores detection. */
static void check_backends(void) {
    const uint32_t detected = ribbon_backend();
    const size_t n = 3000, queries = 5000;
    uint64_t *keys = random_hashes(5, n);
    uint64_t *others = random_hashes(6, queries);
    uint8_t reference[5000], got[5000];
    ribbon_plan plan;
    ribbon_filter view;
    uint64_t *scratch;
    uint8_t *bytes;
    uint32_t b;
    size_t i;

    CHECK_STATUS(ribbon_set_backend(RIBBON_BACKEND_SCALAR), RIBBON_OK);
    CHECK(ribbon_backend() == RIBBON_BACKEND_SCALAR);
    CHECK_STATUS(ribbon_plan_init(&plan, RIBBON_KIND_HOMOGENEOUS, RIBBON_WIDTH_64, n, 8000), RIBBON_OK);
    scratch = (uint64_t *)malloc(ribbon_plan_scratch_words(&plan) * sizeof(uint64_t));
    bytes = (uint8_t *)malloc(ribbon_plan_filter_bytes(&plan));
    if (!scratch || !bytes) {
        abort();
    }
    CHECK_STATUS(ribbon_build(&plan, keys, n, scratch, ribbon_plan_scratch_words(&plan), bytes,
                              ribbon_plan_filter_bytes(&plan)),
                 RIBBON_OK);
    CHECK_STATUS(ribbon_filter_open(&view, bytes, ribbon_plan_filter_bytes(&plan)), RIBBON_OK);
    CHECK_STATUS(ribbon_contains_batch(&view, others, queries, reference), RIBBON_OK);

    for (b = 0; b <= RIBBON_BACKEND_PORTABLE; b++) {
        int32_t rc = ribbon_set_backend(b);
        if (rc == RIBBON_ERR_BACKEND_UNAVAILABLE) {
            printf("backend %u: not available on this CPU\n", (unsigned)b);
            continue;
        }
        CHECK_STATUS(rc, RIBBON_OK);
        CHECK(ribbon_backend() == b);
        CHECK_STATUS(ribbon_filter_open(&view, bytes, ribbon_plan_filter_bytes(&plan)), RIBBON_OK);
        CHECK_STATUS(ribbon_contains_batch(&view, others, queries, got), RIBBON_OK);
        CHECK(memcmp(got, reference, queries) == 0);
        for (i = 0; i < queries; i += 97) {
            CHECK(ribbon_contains(&view, others[i]) == reference[i]);
        }
        printf("backend %u: answers identical to scalar\n", (unsigned)b);
    }
    CHECK_STATUS(ribbon_set_backend(7), RIBBON_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(ribbon_set_backend(RIBBON_BACKEND_AUTO), RIBBON_OK);
    CHECK(ribbon_backend() == detected);
    free(keys);
    free(others);
    free(scratch);
    free(bytes);
}

/* The static sizing macros are integer constant expressions, equal to the
 * run-time ribbon_max_* functions (the Rust bounds), and never below what a
 * plan asks for. */
#define STATIC_KEYS 3000u
static uint8_t static_filter[RIBBON_FILTER_BYTES_MAX(RIBBON_KIND_STANDARD, RIBBON_WIDTH_128,
                                                     STATIC_KEYS, 7700)];
static uint64_t static_scratch[RIBBON_SCRATCH_WORDS_MAX(RIBBON_KIND_STANDARD, RIBBON_WIDTH_128,
                                                        STATIC_KEYS, 7700)];

static void check_static_bounds(void) {
    static const uint32_t widths[2] = {RIBBON_WIDTH_64, RIBBON_WIDTH_128};
    static const uint32_t millibits[7] = {500, 1000, 4000, 7700, 12000, 16000, 64000};
    uint32_t kind;
    int w, m;
    uint64_t n;
    size_t points = 0;
    ribbon_plan plan;
    uint64_t *keys = random_hashes(77, STATIC_KEYS);
    ribbon_filter view;
    size_t i;
    for (kind = 0; kind <= 3; kind++) {
        for (w = 0; w < 2; w++) {
            for (m = 0; m < 7; m++) {
                for (n = 0; n < ((uint64_t)1 << 40); n = n < 3000 ? n + 7 : n + n / 8) {
                    uint32_t wd = widths[w], mb = millibits[m];
                    size_t bytes = RIBBON_FILTER_BYTES_MAX(kind, wd, n, mb);
                    size_t words = RIBBON_SCRATCH_WORDS_MAX(kind, wd, n, mb);
                    size_t banding = RIBBON_BANDING_SCRATCH_WORDS_MAX(kind, wd, n, mb);
                    CHECK(bytes == ribbon_max_filter_bytes(kind, wd, n, mb));
                    CHECK(words == ribbon_max_scratch_words(kind, wd, n, mb));
                    CHECK(banding == ribbon_max_banding_scratch_words(kind, wd, n, mb));
                    if (ribbon_plan_init(&plan, kind, wd, n, mb) != RIBBON_OK) {
                        continue;
                    }
                    CHECK(bytes >= ribbon_plan_filter_bytes(&plan));
                    CHECK(words >= ribbon_plan_scratch_words(&plan));
                    CHECK(banding >= ribbon_plan_banding_scratch_words(&plan));
                    if (n >= 1000) {
                        CHECK(bytes == ribbon_plan_filter_bytes(&plan));
                    }
                    points++;
                }
            }
        }
    }
    /* Edges: bits per key about the macros' case splits (70 bits per key,
     * 64 for Bumped Ribbon), and key counts about 2^15 and about the
     * header's tables of Bumped layer counts. */
    {
        static const uint32_t edge_millibits[] = {1, 999, 1001, 7777, 63999, 64000, 64001,
                                                  70000, 70001, 85000, 131072};
        static const uint64_t edge_keys[] = {
            0, 1, 2047, 2048, 2049, 3400, 18082, 18083, 32767, 32768, 32769, 40447, 40448,
            206717, 206718, 1050947, 1050948, 2425952, 2425953, 27643052, 27643053, 28534599,
            28534600, 335695152, 335695153, 727435289, 727435290, 3949348717u, 3949348718u,
            19143020473u, 19143020474u, 46462920070u, 46462920071u, 503763683210u,
            503763683211u, 546622583047u, 546622583048u, (uint64_t)1 << 40};
        size_t e, j;
        for (kind = 0; kind <= 3; kind++) {
            for (w = 0; w < 2; w++) {
                for (e = 0; e < sizeof edge_millibits / sizeof edge_millibits[0]; e++) {
                    for (j = 0; j < sizeof edge_keys / sizeof edge_keys[0]; j++) {
                        uint32_t wd = widths[w], mb = edge_millibits[e];
                        n = edge_keys[j];
                        CHECK(RIBBON_FILTER_BYTES_MAX(kind, wd, n, mb) ==
                              ribbon_max_filter_bytes(kind, wd, n, mb));
                        CHECK(RIBBON_SCRATCH_WORDS_MAX(kind, wd, n, mb) ==
                              ribbon_max_scratch_words(kind, wd, n, mb));
                        CHECK(RIBBON_BANDING_SCRATCH_WORDS_MAX(kind, wd, n, mb) ==
                              ribbon_max_banding_scratch_words(kind, wd, n, mb));
                        points++;
                    }
                }
            }
        }
        /* No Bumped plan has more than 64 bits per key: its bounds say so. */
        CHECK(RIBBON_FILTER_BYTES_MAX(RIBBON_KIND_BUMPED, RIBBON_WIDTH_64, 1000, 64001) ==
              SIZE_MAX);
        CHECK(RIBBON_SCRATCH_WORDS_MAX(RIBBON_KIND_BUMPED, RIBBON_WIDTH_128, 1000, 64001) ==
              SIZE_MAX);
    }
    CHECK(ribbon_max_filter_bytes(7, 64, 1000, 7700) == 0);
    CHECK(ribbon_max_scratch_words(0, 96, 1000, 7700) == 0);
    /* The static arrays hold a real build. */
    CHECK_STATUS(ribbon_plan_init(&plan, RIBBON_KIND_STANDARD, RIBBON_WIDTH_128, STATIC_KEYS, 7700),
                 RIBBON_OK);
    CHECK_STATUS(ribbon_build(&plan, keys, STATIC_KEYS, static_scratch,
                              sizeof static_scratch / sizeof static_scratch[0], static_filter,
                              sizeof static_filter),
                 RIBBON_OK);
    CHECK_STATUS(ribbon_filter_open(&view, static_filter, ribbon_plan_filter_bytes(&plan)),
                 RIBBON_OK);
    for (i = 0; i < STATIC_KEYS; i++) {
        CHECK(ribbon_contains(&view, keys[i]) == 1);
    }
    free(keys);
    printf("static sizing macros: %lu plans within their bounds\n", (unsigned long)points);
}

/* Version, getters, and a filter read back from a larger block. */
static void check_packaging(void) {
    const size_t n = 500;
    uint64_t *keys = random_hashes(91, n);
    static uint64_t scratch[RIBBON_SCRATCH_WORDS_MAX(RIBBON_KIND_STANDARD_SMASH, RIBBON_WIDTH_64,
                                                     500, 9000)];
    static uint8_t block[RIBBON_FILTER_BYTES_MAX(RIBBON_KIND_STANDARD_SMASH, RIBBON_WIDTH_64, 500,
                                                 9000) +
                         100];
    ribbon_plan plan;
    ribbon_filter view;
    size_t size = 0, i, bytes;
    CHECK(ribbon_version() == RIBBON_VERSION_NUMBER);
    CHECK(strcmp(ribbon_version_str(), RIBBON_VERSION_STRING) == 0);
    CHECK_STATUS(ribbon_plan_init(&plan, RIBBON_KIND_STANDARD_SMASH, RIBBON_WIDTH_64, n, 9000),
                 RIBBON_OK);
    bytes = ribbon_plan_filter_bytes(&plan);
    memset(block, 0xa5, sizeof block);
    CHECK_STATUS(ribbon_build(&plan, keys, n, scratch, sizeof scratch / sizeof scratch[0], block,
                              bytes),
                 RIBBON_OK);
    CHECK_STATUS(ribbon_filter_size(block, sizeof block, &size), RIBBON_OK);
    CHECK(size == bytes);
    CHECK_STATUS(ribbon_filter_size(block, 39, &size), RIBBON_ERR_TRUNCATED);
    CHECK(size == 0);
    CHECK_STATUS(ribbon_filter_size(NULL, 100, &size), RIBBON_ERR_NULL);
    CHECK_STATUS(ribbon_filter_size(block, 100, NULL), RIBBON_ERR_NULL);
    CHECK_STATUS(ribbon_filter_open(&view, block, sizeof block), RIBBON_ERR_TRAILING_BYTES);
    CHECK_STATUS(ribbon_filter_kind(&view), RIBBON_ERR_UNINITIALIZED);
    CHECK_STATUS(ribbon_filter_width(NULL), RIBBON_ERR_NULL);
    CHECK(ribbon_filter_keys(&view) == 0 && ribbon_filter_bytes(&view) == 0);
    CHECK_STATUS(ribbon_filter_open(&view, block, bytes), RIBBON_OK);
    CHECK(ribbon_filter_kind(&view) == (int32_t)RIBBON_KIND_STANDARD_SMASH);
    CHECK(ribbon_filter_width(&view) == 64);
    CHECK(ribbon_filter_keys(&view) == n);
    CHECK(ribbon_filter_bytes(&view) == bytes);
    for (i = 0; i < n; i++) {
        CHECK(ribbon_contains(&view, keys[i]) == 1);
    }
    free(keys);
    printf("packaging: version %s, getters and filter size checked\n", ribbon_version_str());
}

/* XXH3-64 key hashes: pinned values (the same as tests/key_hash.rs, from
 * xxhash-rust and python-xxhash), NULL as the empty key, and the batch. */
static void check_key_hash(void) {
    static const struct {
        size_t len;
        uint64_t seed0, seeded;
    } pinned[] = {
        {3, 0xa9088dda485b481cull, 0xd1c495b136b5cbb0ull},
        {8, 0x60539db630471163ull, 0x5c5363c8008e62daull},
        {16, 0xb8c859b0f030b585ull, 0x5fd51fc102af6f6bull},
        {17, 0x714a04408e79b80full, 0x30950a9d13f8427bull},
        {128, 0x67425a03650261bfull, 0xfa029fbeb6516b5full},
        {129, 0xc664bf3311c6abc4ull, 0x5a0c0ca85e1e65d7ull},
        {240, 0x64556dc6b462a6cfull, 0xaec1cacdf9edcfd2ull},
        {241, 0x8beadd3a8874fe17ull, 0x7c89685cf1ecb411ull},
        {1025, 0x806c2072ed713576ull, 0xf7ffae37496acc48ull},
        {4097, 0xa51ead018cadb378ull, 0x30feb7b43903a895ull},
    };
    const uint64_t seed = 0x0123456789abcdefull;
    const uint64_t empty = 0x2d06800538d394c2ull;
    static uint8_t pattern[4097];
    const uint8_t *keys[4];
    size_t lens[4];
    uint64_t out[4];
    uint64_t storage[5];
    size_t i;
    for (i = 0; i < sizeof pattern; i++) {
        pattern[i] = (uint8_t)(i * 7 + 3);
    }
    CHECK(ribbon_hash_key(pattern, 0) == empty);
    CHECK(ribbon_hash_key(NULL, 0) == empty);
    CHECK(ribbon_hash_key(NULL, 5) == empty);
    CHECK(ribbon_hash_key((const uint8_t *)"a", 1) == 0xe6c632b61e964e1full);
    CHECK(ribbon_hash_key((const uint8_t *)"abc", 3) == 0x78af5f94892f3950ull);
    CHECK(ribbon_hash_key_with_seed(NULL, 0, seed) == 0xcc1ca35a1b089c5cull);
    CHECK(ribbon_hash_key_with_seed((const uint8_t *)"abc", 3, seed) == 0x4a2ec311f0e180a4ull);
    CHECK(ribbon_hash_key_with_seed((const uint8_t *)"abc", 3, 0) == 0x78af5f94892f3950ull);
    for (i = 0; i < sizeof pinned / sizeof pinned[0]; i++) {
        CHECK(ribbon_hash_key(pattern, pinned[i].len) == pinned[i].seed0);
        CHECK(ribbon_hash_key_with_seed(pattern, pinned[i].len, seed) == pinned[i].seeded);
    }

    keys[0] = (const uint8_t *)"abc";
    lens[0] = 3;
    keys[1] = NULL;
    lens[1] = 0;
    keys[2] = pattern + 1; /* any alignment */
    lens[2] = 241;
    keys[3] = pattern;
    lens[3] = 4097;
    CHECK_STATUS(ribbon_hash_keys(keys, lens, 4, out), RIBBON_OK);
    CHECK(out[0] == 0x78af5f94892f3950ull);
    CHECK(out[1] == empty);
    CHECK(out[2] == ribbon_hash_key(pattern + 1, 241));
    CHECK(out[3] == 0xa51ead018cadb378ull);
    CHECK_STATUS(ribbon_hash_keys(NULL, NULL, 0, NULL), RIBBON_OK);
    CHECK_STATUS(ribbon_hash_keys(NULL, lens, 1, out), RIBBON_ERR_NULL);
    CHECK_STATUS(ribbon_hash_keys(keys, NULL, 1, out), RIBBON_ERR_NULL);
    CHECK_STATUS(ribbon_hash_keys(keys, lens, 1, NULL), RIBBON_ERR_NULL);
    CHECK_STATUS(ribbon_hash_keys(keys, lens, 1, (uint64_t *)((uint8_t *)storage + 1)), RIBBON_ERR_MISALIGNED);
    /* A NULL key with a length: refused before anything is written. */
    keys[1] = NULL;
    lens[1] = 1;
    out[0] = 7;
    CHECK_STATUS(ribbon_hash_keys(keys, lens, 4, out), RIBBON_ERR_NULL);
    CHECK(out[0] == 7);
    printf("key hashes: pinned XXH3-64 values and the batch\n");
}

/* Fills n words with a pattern, so that "nothing was written" can be checked. */
static void fill_pattern(uint64_t *words, size_t n, uint64_t seed) {
    size_t i;
    for (i = 0; i < n; i++) {
        words[i] = splitmix(&seed);
    }
}

/* The members of keys[0..n) the filter in bytes misses (n + 1 if it does
 * not open). */
static size_t missing_members(const uint8_t *bytes, size_t len, const uint64_t *keys, size_t n) {
    ribbon_filter view;
    size_t i, missing = 0;
    if (ribbon_filter_open(&view, bytes, len) != RIBBON_OK) {
        return n + 1;
    }
    for (i = 0; i < n; i++) {
        missing += ribbon_contains(&view, keys[i]) != 1;
    }
    return missing;
}

/* ribbon_build with overlapping buffers must answer RIBBON_ERR_OVERLAP; the
 * members an accepted build lost say why. */
static void check_overlapping_build(const ribbon_plan *plan, const uint64_t *hashes, size_t n, uint64_t *scratch,
                                    size_t words, uint8_t *out, size_t bytes, const uint64_t *keys, int line) {
    int32_t st = ribbon_build(plan, hashes, n, scratch, words, out, bytes);
    if (st != RIBBON_ERR_OVERLAP) {
        fprintf(stderr, "%s:%d: overlapping ribbon_build returned %d (%s)", __FILE__, line, (int)st,
                ribbon_status_str(st));
        if (st == RIBBON_OK) {
            fprintf(stderr, ", %lu of %lu members missing", (unsigned long)missing_members(out, bytes, keys, n),
                    (unsigned long)n);
        }
        fprintf(stderr, "\n");
        failures++;
    }
}

/* Buffers that overlap are refused with RIBBON_ERR_OVERLAP before anything
 * is written (they once gave RIBBON_OK and a filter missing members);
 * buffers that only touch, and empty ones, are fine. */
static void check_overlap(void) {
    const size_t n = 5000;
    uint64_t *keys = random_hashes(2024, n);
    ribbon_plan plan, *plan_copy;
    ribbon_filter view, *view_copy;
    ribbon_banding banding, *banding_copy;
    size_t words, band_words, bytes, arena_words, i, filter_len = 7;
    uint64_t *arena, *snapshot, *scratch;
    uint8_t *out, *filter;
    const uint8_t **key_ptrs;
    size_t *key_lens;
    uint64_t key_hashes[4];
    void *block;

    CHECK_STATUS(ribbon_plan_init(&plan, RIBBON_KIND_HOMOGENEOUS, RIBBON_WIDTH_64, n, 7700), RIBBON_OK);
    words = ribbon_plan_scratch_words(&plan);
    band_words = ribbon_plan_banding_scratch_words(&plan);
    bytes = ribbon_plan_filter_bytes(&plan);
    arena_words = n + words + bytes / 8 + 64;
    arena = (uint64_t *)malloc(arena_words * sizeof(uint64_t));
    snapshot = (uint64_t *)malloc(arena_words * sizeof(uint64_t));
    scratch = (uint64_t *)malloc(words * sizeof(uint64_t));
    out = (uint8_t *)malloc(bytes + 64);
    if (!arena || !snapshot || !scratch || !out) {
        abort();
    }
#define ARENA_SAVE() memcpy(snapshot, arena, arena_words * sizeof(uint64_t))
#define ARENA_UNCHANGED() (memcmp(snapshot, arena, arena_words * sizeof(uint64_t)) == 0)

    /* ribbon_build: scratch over the first 16 bytes of out. */
    fill_pattern(arena, arena_words, 1);
    ARENA_SAVE();
    check_overlapping_build(&plan, keys, n, arena, words, (uint8_t *)(arena + words - 2), bytes, keys, __LINE__);
    CHECK(ARENA_UNCHANGED());
    /* The last 16 bytes of out over the start of scratch. */
    check_overlapping_build(&plan, keys, n, arena + bytes / 8 + 2, words,
                            (uint8_t *)(arena + bytes / 8 + 2) - (bytes - 16), bytes, keys, __LINE__);
    CHECK(ARENA_UNCHANGED());
    /* scratch and out at the same address. */
    check_overlapping_build(&plan, keys, n, arena, words, (uint8_t *)arena, bytes, keys, __LINE__);
    CHECK(ARENA_UNCHANGED());
    /* hashes over the start of scratch, out elsewhere: out is not zeroed. */
    memcpy(arena, keys, n * sizeof(uint64_t));
    ARENA_SAVE();
    memset(out, 0xa5, bytes);
    check_overlapping_build(&plan, arena, n, arena + 36, words, out, bytes, keys, __LINE__);
    CHECK(ARENA_UNCHANGED());
    CHECK(out[0] == 0xa5 && out[39] == 0xa5);
    /* hashes over out, at an odd address. */
    check_overlapping_build(&plan, arena, n, scratch, words, (uint8_t *)(arena + n - 1) + 3, bytes, keys, __LINE__);
    CHECK(ARENA_UNCHANGED());
    /* out or scratch over the plan struct. */
    plan_copy = (ribbon_plan *)(arena + n);
    memcpy(plan_copy, &plan, sizeof plan);
    ARENA_SAVE();
    CHECK_STATUS(ribbon_build(plan_copy, keys, n, scratch, words, (uint8_t *)(arena + n) + 8, bytes),
                 RIBBON_ERR_OVERLAP);
    CHECK_STATUS(ribbon_build(plan_copy, keys, n, arena + n + 7, words, out, bytes), RIBBON_ERR_OVERLAP);
    CHECK(ARENA_UNCHANGED());
    /* Empty buffers never overlap: no hashes at the scratch's address. */
    CHECK_STATUS(ribbon_build(&plan, arena, 0, arena, words, out, bytes), RIBBON_OK);
    CHECK(missing_members(out, bytes, keys, 0) == 0);
    /* Touching is not overlapping: hashes, scratch and out back to back,
     * out right after scratch. The filter has every member. */
    memcpy(arena, keys, n * sizeof(uint64_t));
    CHECK_STATUS(ribbon_build(&plan, arena, n, arena + n, words, (uint8_t *)(arena + n + words), bytes),
                 RIBBON_OK);
    filter = (uint8_t *)(arena + n + words);
    CHECK(missing_members(filter, bytes, keys, n) == 0);

    /* ribbon_contains_batch: answers over the hashes, the filter bytes or
     * the view struct. */
    CHECK_STATUS(ribbon_filter_open(&view, filter, bytes), RIBBON_OK);
    ARENA_SAVE();
    CHECK_STATUS(ribbon_contains_batch(&view, arena, n, (uint8_t *)arena), RIBBON_ERR_OVERLAP);
    CHECK_STATUS(ribbon_contains_batch(&view, arena, n, (uint8_t *)(arena + n - 1) + 7), RIBBON_ERR_OVERLAP);
    CHECK_STATUS(ribbon_contains_batch(&view, keys, n, filter + bytes - 1), RIBBON_ERR_OVERLAP);
    CHECK(ARENA_UNCHANGED());
    view_copy = (ribbon_filter *)out;
    memcpy(view_copy, &view, sizeof view);
    CHECK_STATUS(ribbon_contains_batch(view_copy, keys, 16, out + 8), RIBBON_ERR_OVERLAP);
    CHECK(memcmp(view_copy, &view, sizeof view) == 0);
    CHECK_STATUS(ribbon_contains_batch(&view, arena, 0, (uint8_t *)arena), RIBBON_OK);
    CHECK_STATUS(ribbon_contains_batch(&view, arena, n, (uint8_t *)(arena + n)), RIBBON_OK);
    for (i = 0; i < n; i++) {
        CHECK(((uint8_t *)(arena + n))[i] == 1);
    }

    /* ribbon_filter_open and ribbon_filter_size: the struct or the length
     * written inside the (read-only) filter bytes. */
    memcpy(arena, filter, bytes);
    ARENA_SAVE();
    CHECK_STATUS(ribbon_filter_open((ribbon_filter *)(arena + 2), (const uint8_t *)arena, bytes),
                 RIBBON_ERR_OVERLAP);
    CHECK_STATUS(ribbon_filter_size((const uint8_t *)arena, bytes, (size_t *)(arena + 4)), RIBBON_ERR_OVERLAP);
    CHECK(ARENA_UNCHANGED());
    CHECK_STATUS(ribbon_filter_size((const uint8_t *)arena, bytes, &filter_len), RIBBON_OK);
    CHECK(filter_len == bytes);

    /* Streaming: the struct inside its scratch; out over the scratch or
     * over the struct. */
    fill_pattern(arena, arena_words, 2);
    ARENA_SAVE();
    CHECK_STATUS(ribbon_banding_init((ribbon_banding *)(arena + 10), &plan, arena, band_words),
                 RIBBON_ERR_OVERLAP);
    CHECK_STATUS(ribbon_banding_init((ribbon_banding *)arena, (const ribbon_plan *)(arena + 8), arena + 32,
                                     band_words),
                 RIBBON_ERR_OVERLAP);
    CHECK(ARENA_UNCHANGED());
    CHECK_STATUS(ribbon_banding_init(&banding, &plan, arena, band_words), RIBBON_OK);
    for (i = 0; i < 1000; i++) {
        int32_t r = ribbon_banding_add(&banding, keys[i]);
        CHECK(r == RIBBON_ADD_INSERTED || r == RIBBON_ADD_REDUNDANT);
    }
    ARENA_SAVE();
    CHECK_STATUS(ribbon_banding_finish(&banding, (uint8_t *)(arena + band_words - 1), bytes),
                 RIBBON_ERR_OVERLAP);
    CHECK(ARENA_UNCHANGED());
    banding_copy = (ribbon_banding *)out;
    memcpy(banding_copy, &banding, sizeof banding);
    CHECK_STATUS(ribbon_banding_finish(banding_copy, out + 64, bytes - 64), RIBBON_ERR_OVERLAP);
    CHECK(memcmp(banding_copy, &banding, sizeof banding) == 0);
    CHECK(ribbon_banding_added(&banding) == 1000);
    /* Touching the scratch is fine, and the banding was not spent. */
    CHECK_STATUS(ribbon_banding_finish(&banding, (uint8_t *)(arena + band_words), bytes), RIBBON_OK);
    CHECK(missing_members((uint8_t *)(arena + band_words), bytes, keys, 1000) == 0);

    /* ribbon_hash_keys: out over the keys array, the lens array or a
     * key's bytes. Keys may overlap anything read-only. */
    block = malloc(16 * sizeof(uint64_t));
    if (!block) {
        abort();
    }
    key_ptrs = (const uint8_t **)block;
    key_ptrs[0] = (const uint8_t *)"abc";
    key_ptrs[1] = (const uint8_t *)block; /* the array's own bytes */
    key_lens = (size_t *)((uint64_t *)block + 8);
    key_lens[0] = 3;
    key_lens[1] = 2 * sizeof(void *);
    /* out from the second key pointer on: over the keys array. */
    CHECK_STATUS(ribbon_hash_keys(key_ptrs, key_lens, 2, (uint64_t *)(void *)(key_ptrs + 1)), RIBBON_ERR_OVERLAP);
    CHECK_STATUS(ribbon_hash_keys(key_ptrs, key_lens, 2, (uint64_t *)block + 7), RIBBON_ERR_OVERLAP);
    CHECK(key_ptrs[1] == (const uint8_t *)block && key_lens[0] == 3);
    key_hashes[0] = 7;
    key_hashes[1] = 8;
    key_hashes[2] = 9;
    key_ptrs[1] = (const uint8_t *)(key_hashes + 2);
    key_lens[1] = 8;
    CHECK_STATUS(ribbon_hash_keys(key_ptrs, key_lens, 2, key_hashes + 1), RIBBON_ERR_OVERLAP);
    CHECK(key_hashes[0] == 7 && key_hashes[1] == 8 && key_hashes[2] == 9);
    key_ptrs[1] = (const uint8_t *)key_lens;
    key_lens[1] = sizeof(size_t);
    CHECK_STATUS(ribbon_hash_keys(key_ptrs, key_lens, 2, key_hashes), RIBBON_OK);
    CHECK(key_hashes[0] == 0x78af5f94892f3950ull);
    CHECK(key_hashes[1] == ribbon_hash_key((const uint8_t *)key_lens, sizeof(size_t)));
    CHECK(key_hashes[2] == 9);
    free(block);
#undef ARENA_SAVE
#undef ARENA_UNCHANGED

    free(keys);
    free(arena);
    free(snapshot);
    free(scratch);
    free(out);
    printf("overlapping buffers: refused before anything was written\n");
}

/* A failed build never leaves a filter behind: out held a valid filter,
 * and after each failure its first min(out_len, 40) bytes are zero and it
 * no longer opens. Only NULL out, an impossible out_len and overlapping
 * buffers leave out untouched. */
static void check_failed_build_leaves_no_filter(void) {
    const size_t n = 3000;
    uint64_t *keys = random_hashes(303, n + 1);
    ribbon_plan plan, garbage;
    ribbon_filter view;
    size_t words, bytes, i, zeroed;
    uint64_t *scratch;
    uint8_t *out, *saved;
    int c;

    CHECK_STATUS(ribbon_plan_init(&plan, RIBBON_KIND_STANDARD, RIBBON_WIDTH_64, n, 7700), RIBBON_OK);
    memset(&garbage, 0xab, sizeof garbage);
    words = ribbon_plan_scratch_words(&plan);
    bytes = ribbon_plan_filter_bytes(&plan);
    scratch = (uint64_t *)malloc((words + 1) * sizeof(uint64_t));
    out = (uint8_t *)malloc(bytes + 8);
    saved = (uint8_t *)malloc(bytes + 8);
    if (!scratch || !out || !saved) {
        abort();
    }
    for (c = 0; c < 12; c++) {
        int32_t st = RIBBON_OK, expected = RIBBON_OK;
        size_t out_len = bytes;
        memset(out, 0x5a, bytes + 8);
        CHECK_STATUS(ribbon_build(&plan, keys, n, scratch, words, out, bytes), RIBBON_OK);
        CHECK(missing_members(out, bytes, keys, n) == 0);
        memcpy(saved, out, bytes + 8);
        switch (c) {
        case 0: /* one word of scratch too little */
            expected = RIBBON_ERR_SCRATCH_TOO_SMALL;
            st = ribbon_build(&plan, keys, n, scratch, words - 1, out, out_len);
            break;
        case 1: /* misaligned scratch */
            expected = RIBBON_ERR_MISALIGNED;
            st = ribbon_build(&plan, keys, n, (uint64_t *)((char *)scratch + 1), words, out, out_len);
            break;
        case 2: /* a plan no init call filled in */
            expected = RIBBON_ERR_UNINITIALIZED;
            st = ribbon_build(&garbage, keys, n, scratch, words, out, out_len);
            break;
        case 3: /* NULL hashes with n > 0 */
            expected = RIBBON_ERR_NULL;
            st = ribbon_build(&plan, NULL, n, scratch, words, out, out_len);
            break;
        case 4: /* NULL plan */
            expected = RIBBON_ERR_NULL;
            st = ribbon_build(NULL, keys, n, scratch, words, out, out_len);
            break;
        case 5: /* misaligned hashes */
            expected = RIBBON_ERR_MISALIGNED;
            st = ribbon_build(&plan, (const uint64_t *)((const char *)keys + 1), n - 1, scratch, words, out,
                              out_len);
            break;
        case 6: /* NULL scratch */
            expected = RIBBON_ERR_NULL;
            st = ribbon_build(&plan, keys, n, NULL, words, out, out_len);
            break;
        case 7: /* more keys than planned */
            expected = RIBBON_ERR_TOO_MANY_KEYS;
            st = ribbon_build(&plan, keys, n + 1, scratch, words, out, out_len);
            break;
        case 8: /* out one byte short */
            expected = RIBBON_ERR_OUTPUT_TOO_SMALL;
            out_len = bytes - 1;
            st = ribbon_build(&plan, keys, n, scratch, words, out, out_len);
            break;
        case 9: /* a scratch length no object has */
            expected = RIBBON_ERR_TOO_LARGE;
            st = ribbon_build(&plan, keys, n, scratch, (size_t)-1, out, out_len);
            break;
        case 10: /* out shorter than the header: all of it is zeroed */
            expected = RIBBON_ERR_UNINITIALIZED;
            out_len = 10;
            st = ribbon_build(&garbage, keys, n, scratch, words, out, out_len);
            break;
        default: /* out of 48 bytes and too little scratch */
            expected = RIBBON_ERR_SCRATCH_TOO_SMALL;
            out_len = 48;
            st = ribbon_build(&plan, keys, n, scratch, words - 1, out, out_len);
            break;
        }
        if (st != expected) {
            fprintf(stderr, "failed build case %d: status %d (%s), expected %d\n", c, (int)st,
                    ribbon_status_str(st), (int)expected);
            failures++;
        }
        zeroed = out_len < 40 ? out_len : 40;
        for (i = 0; i < zeroed; i++) {
            if (out[i] != 0) {
                fprintf(stderr, "failed build case %d: out[%lu] = %u, not zeroed\n", c, (unsigned long)i,
                        (unsigned)out[i]);
                failures++;
                break;
            }
        }
        /* Nothing past out_len is written. */
        CHECK(memcmp(out + out_len, saved + out_len, bytes + 8 - out_len) == 0);
        if (ribbon_filter_open(&view, out, bytes) != RIBBON_ERR_BAD_MAGIC) {
            fprintf(stderr, "failed build case %d: out still opens as a filter\n", c);
            failures++;
        }
    }

    /* The exceptions: nothing is written. */
    CHECK_STATUS(ribbon_build(&plan, keys, n, scratch, words, out, bytes), RIBBON_OK);
    memcpy(saved, out, bytes);
    CHECK_STATUS(ribbon_build(&plan, keys, n, scratch, words, out, (size_t)-1), RIBBON_ERR_TOO_LARGE);
    CHECK_STATUS(ribbon_build(&plan, keys, n, scratch, words, NULL, bytes), RIBBON_ERR_NULL);
    CHECK_STATUS(ribbon_build(&plan, (const uint64_t *)out + 5, 1, scratch, words, out, bytes),
                 RIBBON_ERR_OVERLAP);
    CHECK(memcmp(saved, out, bytes) == 0);
    CHECK(missing_members(out, bytes, keys, n) == 0);

    /* ribbon_banding_finish changes nothing on error: out keeps its bytes. */
    {
        ribbon_banding b;
        size_t band_words = ribbon_plan_banding_scratch_words(&plan);
        CHECK_STATUS(ribbon_banding_init(&b, &plan, scratch, band_words), RIBBON_OK);
        for (i = 0; i < 100; i++) {
            int32_t r = ribbon_banding_add(&b, keys[i]);
            CHECK(r == RIBBON_ADD_INSERTED || r == RIBBON_ADD_REDUNDANT);
        }
        CHECK_STATUS(ribbon_banding_finish(&b, out, bytes - 1), RIBBON_ERR_OUTPUT_TOO_SMALL);
        CHECK_STATUS(ribbon_banding_finish(&b, out, (size_t)-1), RIBBON_ERR_TOO_LARGE);
        CHECK(memcmp(saved, out, bytes) == 0);
        CHECK(ribbon_banding_added(&b) == 100);
        CHECK_STATUS(ribbon_banding_finish(&b, out, bytes), RIBBON_OK);
        CHECK(missing_members(out, bytes, keys, 100) == 0);
    }
    free(keys);
    free(scratch);
    free(out);
    free(saved);
    printf("failed builds: no filter left behind in out\n");
}

/* ---- Retrieval ---- */

static uint64_t value_mask(uint32_t bits) {
    return bits >= 64 ? ~(uint64_t)0 : (((uint64_t)1 << bits) - 1);
}

/* Builds keys -> values of value_bits bits from C (out at an odd address),
 * checks every key's value with get and get_batch, then reopens a copy at
 * another odd address and checks again, and that other hashes get values
 * below 2^value_bits. */
static void check_retrieval(uint32_t width, uint32_t value_bits, size_t n) {
    ribbon_retrieval_plan plan;
    ribbon_retrieval map, copy_map;
    uint64_t *keys = random_hashes(4000 + n + value_bits * 13 + width, n);
    uint64_t *values = random_hashes(5000 + n + value_bits, n);
    const size_t queries = 4000;
    uint64_t *others = random_hashes(6000 + value_bits, queries);
    uint64_t *got = (uint64_t *)malloc((n + queries + 1) * sizeof(uint64_t));
    const uint64_t mask = value_mask(value_bits);
    size_t words, bytes, planned, longer, i, wrong = 0, wrong_batch = 0;
    uint64_t *scratch;
    uint8_t *buffer, *copy;

    for (i = 0; i < n; i++) {
        values[i] &= mask;
    }
    CHECK_STATUS(ribbon_retrieval_plan_init(&plan, width, n, value_bits), RIBBON_OK);
    words = ribbon_retrieval_plan_scratch_words(&plan);
    bytes = ribbon_retrieval_plan_bytes(&plan);
    CHECK(bytes >= 40);
    scratch = (uint64_t *)malloc((words ? words : 1) * sizeof(uint64_t));
    buffer = (uint8_t *)malloc(bytes + 1);
    copy = (uint8_t *)malloc(bytes + 3);
    if (!got || !scratch || !buffer || !copy) {
        abort();
    }
    buffer[0] = 0;
    CHECK_STATUS(ribbon_retrieval_build(&plan, keys, values, n, scratch, words, buffer + 1, bytes), RIBBON_OK);
    free(scratch); /* the structure does not need it */
    /* The structure's own length: the plan's on Standard Ribbon, at most
     * that on Bumped layers (from 10,000 / 30,000 keys); read from a
     * longer block too. */
    planned = bytes;
    CHECK_STATUS(ribbon_retrieval_size(buffer + 1, planned, &bytes), RIBBON_OK);
    CHECK(bytes <= planned && bytes >= 40);
    CHECK(n >= 10000 || bytes == planned);
    CHECK_STATUS(ribbon_retrieval_size(buffer + 1, bytes, &longer), RIBBON_OK);
    CHECK(longer == bytes);
    CHECK_STATUS(ribbon_retrieval_size(buffer + 1, 39, &longer), RIBBON_ERR_TRUNCATED);
    CHECK(longer == 0);
    CHECK_STATUS(ribbon_retrieval_size(buffer + 1, bytes, NULL), RIBBON_ERR_NULL);
    CHECK_STATUS(ribbon_retrieval_size(NULL, bytes, &longer), RIBBON_ERR_NULL);
    /* About value_bits bits per key: at most 12 % (w = 64) or 7 % (w =
     * 128) over, from a few thousand keys on; on Bumped layers (40,000
     * keys, whose last layer and thresholds still weigh) at most 5 % for
     * 1-bit values and 1.2 % for wider ones. */
    if (n >= 1000) {
        CHECK((bytes - 40) * 8 <= (size_t)((double)n * value_bits * (width == 64 ? 1.12 : 1.07)));
    }
    if (n >= 40000) {
        CHECK((double)bytes * 8 <= (double)n * value_bits * (value_bits == 1 ? 1.05 : 1.012));
    }
    CHECK_STATUS(ribbon_retrieval_open(&map, buffer + 1, bytes), RIBBON_OK);
    CHECK(ribbon_retrieval_value_bits(&map) == value_bits);
    CHECK(ribbon_retrieval_keys(&map) == n);
    CHECK(ribbon_retrieval_bytes(&map) == bytes);
    for (i = 0; i < n; i++) {
        wrong += ribbon_retrieval_get(&map, keys[i]) != values[i];
    }
    CHECK_STATUS(ribbon_retrieval_get_batch(&map, keys, n, got), RIBBON_OK);
    for (i = 0; i < n; i++) {
        wrong_batch += got[i] != values[i];
    }
    if (wrong || wrong_batch) {
        fprintf(stderr, "retrieval w%u %u bits n = %lu: %lu single and %lu batch values wrong\n",
                (unsigned)width, (unsigned)value_bits, (unsigned long)n, (unsigned long)wrong,
                (unsigned long)wrong_batch);
        failures++;
    }
    /* A copy at another alignment opens and answers the same. */
    memcpy(copy + 3, buffer + 1, bytes);
    CHECK_STATUS(ribbon_retrieval_open(&copy_map, copy + 3, bytes), RIBBON_OK);
    CHECK_STATUS(ribbon_retrieval_get_batch(&copy_map, keys, n, got), RIBBON_OK);
    wrong = 0;
    for (i = 0; i < n; i++) {
        wrong += got[i] != values[i] || ribbon_retrieval_get(&copy_map, keys[i]) != values[i];
    }
    CHECK(wrong == 0);
    /* Other hashes: values below 2^value_bits, single equal to batch. */
    CHECK_STATUS(ribbon_retrieval_get_batch(&copy_map, others, queries, got), RIBBON_OK);
    wrong = 0;
    for (i = 0; i < queries; i++) {
        wrong += (got[i] & ~mask) != 0 || ribbon_retrieval_get(&map, others[i]) != got[i];
    }
    CHECK(wrong == 0);
    /* Not a filter, and a truncated or extended copy does not open. */
    {
        ribbon_filter view;
        CHECK_STATUS(ribbon_filter_open(&view, copy + 3, bytes), RIBBON_ERR_BAD_MAGIC);
    }
    CHECK_STATUS(ribbon_retrieval_open(&copy_map, copy + 3, bytes - 1), RIBBON_ERR_TRUNCATED);
    CHECK(ribbon_retrieval_get(&copy_map, keys[0]) == 0 && ribbon_retrieval_value_bits(&copy_map) == 0);
    CHECK_STATUS(ribbon_retrieval_open(&copy_map, buffer, bytes + 1), RIBBON_ERR_BAD_MAGIC);
    CHECK_STATUS(ribbon_retrieval_open(&copy_map, buffer + 1, bytes - (bytes > 40 ? 8 : 0)),
                 bytes > 40 ? RIBBON_ERR_TRUNCATED : RIBBON_OK);
    free(keys);
    free(values);
    free(others);
    free(got);
    free(buffer);
    free(copy);
}

/* The retrieval calls' errors: planning, building (conflicting values,
 * values too wide, NULLs, short buffers, overlaps), opening (truncated or
 * foreign bytes) and views no open filled in. */
static void check_retrieval_errors(void) {
    const size_t n = 2000;
    uint64_t *keys = random_hashes(707, n + 1);
    uint64_t *values = random_hashes(708, n + 1);
    ribbon_retrieval_plan plan, garbage, empty;
    ribbon_retrieval map, bad;
    size_t words, bytes, i;
    uint64_t *scratch, *got;
    uint8_t *out, *saved;
    uint64_t keep;

    for (i = 0; i <= n; i++) {
        values[i] &= 0xff;
    }
    /* Planning. */
    CHECK_STATUS(ribbon_retrieval_plan_init(NULL, 64, 10, 8), RIBBON_ERR_NULL);
    CHECK_STATUS(ribbon_retrieval_plan_init(&plan, 32, 10, 8), RIBBON_ERR_INVALID_ARGUMENT);
    CHECK(ribbon_retrieval_plan_bytes(&plan) == 0 && ribbon_retrieval_plan_scratch_words(&plan) == 0);
    CHECK_STATUS(ribbon_retrieval_plan_init(&plan, 64, 10, 0), RIBBON_ERR_INVALID_VALUE_BITS);
    CHECK_STATUS(ribbon_retrieval_plan_init(&plan, 128, 10, 65), RIBBON_ERR_INVALID_VALUE_BITS);
    CHECK_STATUS(ribbon_retrieval_plan_init(&plan, 64, ((uint64_t)1 << 40) + 1, 8), RIBBON_ERR_TOO_MANY_KEYS);
    /* 2^40 keys: planned where the sizes fit the address space. */
    {
        int32_t st = ribbon_retrieval_plan_init(&plan, 64, (uint64_t)1 << 40, 64);
        CHECK(sizeof(size_t) < 8 ? st == RIBBON_ERR_TOO_LARGE || st == RIBBON_ERR_TOO_MANY_KEYS : st == RIBBON_OK);
    }
    CHECK_STATUS(ribbon_retrieval_plan_init(&empty, 128, 0, 1), RIBBON_OK);
    CHECK(ribbon_retrieval_plan_bytes(&empty) == 48);
    memset(&garbage, 0xab, sizeof garbage);
    CHECK(ribbon_retrieval_plan_scratch_words(&garbage) == 0 && ribbon_retrieval_plan_bytes(NULL) == 0);

    CHECK_STATUS(ribbon_retrieval_plan_init(&plan, 64, n, 8), RIBBON_OK);
    words = ribbon_retrieval_plan_scratch_words(&plan);
    bytes = ribbon_retrieval_plan_bytes(&plan);
    scratch = (uint64_t *)malloc((words + 1) * sizeof(uint64_t));
    got = (uint64_t *)malloc((n + 1) * sizeof(uint64_t));
    out = (uint8_t *)malloc(bytes + 8);
    saved = (uint8_t *)malloc(bytes + 8);
    if (!scratch || !got || !out || !saved) {
        abort();
    }

    /* Building: each failure after a good build zeroes the header, so the
     * old structure no longer opens. */
    {
        int c;
        for (c = 0; c < 15; c++) {
            int32_t st = RIBBON_OK, expected = RIBBON_OK;
            size_t out_len = bytes;
            CHECK_STATUS(ribbon_retrieval_build(&plan, keys, values, n, scratch, words, out, bytes), RIBBON_OK);
            CHECK_STATUS(ribbon_retrieval_open(&map, out, bytes), RIBBON_OK);
            switch (c) {
            case 0: /* the same hash twice with different values */
                expected = RIBBON_ERR_CONFLICTING_VALUES;
                keep = keys[n / 2];
                keys[n / 2] = keys[7];
                values[n / 2] ^= values[7] == values[n / 2] ? 1 : 0;
                st = ribbon_retrieval_build(&plan, keys, values, n, scratch, words, out, out_len);
                keys[n / 2] = keep;
                break;
            case 1: /* a value with a bit at value_bits */
                expected = RIBBON_ERR_VALUE_TOO_WIDE;
                keep = values[n - 1];
                values[n - 1] = 0x100;
                st = ribbon_retrieval_build(&plan, keys, values, n, scratch, words, out, out_len);
                values[n - 1] = keep;
                break;
            case 2: /* the top bit of a 64-bit word */
                expected = RIBBON_ERR_VALUE_TOO_WIDE;
                keep = values[0];
                values[0] = (uint64_t)1 << 63;
                st = ribbon_retrieval_build(&plan, keys, values, n, scratch, words, out, out_len);
                values[0] = keep;
                break;
            case 3:
                expected = RIBBON_ERR_NULL;
                st = ribbon_retrieval_build(NULL, keys, values, n, scratch, words, out, out_len);
                break;
            case 4:
                expected = RIBBON_ERR_NULL;
                st = ribbon_retrieval_build(&plan, NULL, values, n, scratch, words, out, out_len);
                break;
            case 5:
                expected = RIBBON_ERR_NULL;
                st = ribbon_retrieval_build(&plan, keys, NULL, n, scratch, words, out, out_len);
                break;
            case 6:
                expected = RIBBON_ERR_NULL;
                st = ribbon_retrieval_build(&plan, keys, values, n, NULL, words, out, out_len);
                break;
            case 7: /* one word of scratch too little */
                expected = RIBBON_ERR_SCRATCH_TOO_SMALL;
                st = ribbon_retrieval_build(&plan, keys, values, n, scratch, words - 1, out, out_len);
                break;
            case 8: /* out one byte short */
                expected = RIBBON_ERR_OUTPUT_TOO_SMALL;
                out_len = bytes - 1;
                st = ribbon_retrieval_build(&plan, keys, values, n, scratch, words, out, out_len);
                break;
            case 9: /* more keys than planned */
                expected = RIBBON_ERR_TOO_MANY_KEYS;
                st = ribbon_retrieval_build(&plan, keys, values, n + 1, scratch, words, out, out_len);
                break;
            case 10: /* misaligned values */
                expected = RIBBON_ERR_MISALIGNED;
                st = ribbon_retrieval_build(&plan, keys, (const uint64_t *)((const char *)values + 1), n - 1,
                                            scratch, words, out, out_len);
                break;
            case 11: /* misaligned scratch */
                expected = RIBBON_ERR_MISALIGNED;
                st = ribbon_retrieval_build(&plan, keys, values, n, (uint64_t *)((char *)scratch + 1), words, out,
                                            out_len);
                break;
            case 12: /* a plan no init call filled in */
                expected = RIBBON_ERR_UNINITIALIZED;
                st = ribbon_retrieval_build(&garbage, keys, values, n, scratch, words, out, out_len);
                break;
            case 13: /* a filter plan is not a retrieval plan */
            {
                ribbon_plan filter_plan;
                ribbon_retrieval_plan cross;
                CHECK_STATUS(ribbon_plan_init(&filter_plan, RIBBON_KIND_STANDARD, 64, n, 8000), RIBBON_OK);
                memcpy(&cross, &filter_plan, sizeof cross);
                expected = RIBBON_ERR_UNINITIALIZED;
                st = ribbon_retrieval_build(&cross, keys, values, n, scratch, words, out, out_len);
                break;
            }
            default: /* out shorter than the header: all of it is zeroed */
                expected = RIBBON_ERR_OUTPUT_TOO_SMALL;
                out_len = 20;
                st = ribbon_retrieval_build(&plan, keys, values, n, scratch, words, out, out_len);
                break;
            }
            if (st != expected) {
                fprintf(stderr, "failed retrieval build case %d: status %d (%s), expected %d\n", c, (int)st,
                        ribbon_status_str(st), (int)expected);
                failures++;
            }
            for (i = 0; i < (out_len < 40 ? out_len : 40); i++) {
                if (out[i] != 0) {
                    fprintf(stderr, "failed retrieval build case %d: out[%lu] not zeroed\n", c, (unsigned long)i);
                    failures++;
                    break;
                }
            }
            CHECK_STATUS(ribbon_retrieval_open(&map, out, bytes), RIBBON_ERR_BAD_MAGIC);
        }
    }
    /* Equal hashes with equal values are one key. */
    keys[n / 2] = keys[3];
    values[n / 2] = values[3];
    CHECK_STATUS(ribbon_retrieval_build(&plan, keys, values, n, scratch, words, out, bytes), RIBBON_OK);
    CHECK_STATUS(ribbon_retrieval_open(&map, out, bytes), RIBBON_OK);
    CHECK(ribbon_retrieval_get(&map, keys[3]) == values[3] && ribbon_retrieval_keys(&map) == n);
    /* The write-nothing failures: out NULL, an impossible out_len, and
     * overlapping buffers (values over out, out over scratch, the plan in
     * scratch). Hashes and values may overlap: both are only read. */
    memcpy(saved, out, bytes);
    CHECK_STATUS(ribbon_retrieval_build(&plan, keys, values, n, scratch, words, NULL, bytes), RIBBON_ERR_NULL);
    CHECK_STATUS(ribbon_retrieval_build(&plan, keys, values, n, scratch, words, out, (size_t)-1),
                 RIBBON_ERR_TOO_LARGE);
    CHECK_STATUS(ribbon_retrieval_build(&plan, keys, (const uint64_t *)out + 1, 2, scratch, words, out, bytes),
                 RIBBON_ERR_OVERLAP);
    CHECK_STATUS(ribbon_retrieval_build(&plan, keys, values, n, scratch, words,
                                        (uint8_t *)(scratch + words - 1), 16),
                 RIBBON_ERR_OVERLAP);
    CHECK(memcmp(saved, out, bytes) == 0);
    {
        ribbon_retrieval_plan *in_scratch = (ribbon_retrieval_plan *)(scratch + 1);
        memcpy(in_scratch, &plan, sizeof plan);
        CHECK_STATUS(ribbon_retrieval_build(in_scratch, keys, values, n, scratch, words, out, bytes),
                     RIBBON_ERR_OVERLAP);
        CHECK(memcmp(saved, out, bytes) == 0);
    }
    {
        /* 64-bit values that are the hashes themselves: hashes == values. */
        ribbon_retrieval_plan wide;
        size_t wide_words, wide_bytes;
        uint64_t *wide_scratch;
        uint8_t *wide_out;
        CHECK_STATUS(ribbon_retrieval_plan_init(&wide, 128, n, 64), RIBBON_OK);
        wide_words = ribbon_retrieval_plan_scratch_words(&wide);
        wide_bytes = ribbon_retrieval_plan_bytes(&wide);
        wide_scratch = (uint64_t *)malloc(wide_words * sizeof(uint64_t));
        wide_out = (uint8_t *)malloc(wide_bytes);
        if (!wide_scratch || !wide_out) {
            abort();
        }
        CHECK_STATUS(ribbon_retrieval_build(&wide, keys, keys, n, wide_scratch, wide_words, wide_out, wide_bytes),
                     RIBBON_OK);
        CHECK_STATUS(ribbon_retrieval_open(&bad, wide_out, wide_bytes), RIBBON_OK);
        for (i = 0; i < n; i++) {
            CHECK(ribbon_retrieval_get(&bad, keys[i]) == keys[i]);
        }
        free(wide_scratch);
        free(wide_out);
    }

    /* Opening. */
    CHECK_STATUS(ribbon_retrieval_open(NULL, out, bytes), RIBBON_ERR_NULL);
    CHECK_STATUS(ribbon_retrieval_open(&bad, NULL, bytes), RIBBON_ERR_NULL);
    CHECK_STATUS(ribbon_retrieval_open(&bad, out, 10), RIBBON_ERR_TRUNCATED);
    CHECK_STATUS(ribbon_retrieval_open(&bad, out, 47), RIBBON_ERR_TRUNCATED);
    CHECK_STATUS(ribbon_retrieval_open(&bad, out, bytes - 1), RIBBON_ERR_TRUNCATED);
    CHECK_STATUS(ribbon_retrieval_open(&bad, out, bytes + 1), RIBBON_ERR_TRAILING_BYTES);
    out[4] = 9;
    CHECK_STATUS(ribbon_retrieval_open(&bad, out, bytes), RIBBON_ERR_UNSUPPORTED_VERSION);
    out[4] = 2;
    out[7] = 65;
    CHECK_STATUS(ribbon_retrieval_open(&bad, out, bytes), RIBBON_ERR_CORRUPT_HEADER);
    out[7] = 8;
    memcpy(saved, out, bytes);
    /* The struct inside the bytes it opens: refused, bytes untouched. */
    {
        uint64_t *aligned = (uint64_t *)malloc(bytes + sizeof(ribbon_retrieval));
        if (!aligned) {
            abort();
        }
        memcpy(aligned, out, bytes);
        CHECK_STATUS(ribbon_retrieval_open((ribbon_retrieval *)(aligned + 2), (const uint8_t *)aligned, bytes),
                     RIBBON_ERR_OVERLAP);
        CHECK(memcmp(aligned, out, bytes) == 0);
        free(aligned);
    }
    {
        ribbon_filter view;
        CHECK_STATUS(ribbon_filter_open(&view, out, bytes), RIBBON_ERR_BAD_MAGIC);
    }
    CHECK_STATUS(ribbon_retrieval_open(&map, out, bytes), RIBBON_OK);

    /* Queries on NULL, unopened and corrupted views; bad batch buffers. */
    memset(&bad, 0x5a, sizeof bad);
    CHECK(ribbon_retrieval_get(NULL, keys[0]) == 0);
    CHECK(ribbon_retrieval_get(&bad, keys[0]) == 0);
    CHECK(ribbon_retrieval_value_bits(&bad) == 0 && ribbon_retrieval_keys(&bad) == 0 &&
          ribbon_retrieval_bytes(&bad) == 0);
    CHECK(ribbon_retrieval_value_bits(NULL) == 0 && ribbon_retrieval_keys(NULL) == 0 &&
          ribbon_retrieval_bytes(NULL) == 0);
    CHECK_STATUS(ribbon_retrieval_get_batch(NULL, keys, n, got), RIBBON_ERR_NULL);
    CHECK_STATUS(ribbon_retrieval_get_batch(&bad, keys, n, got), RIBBON_ERR_UNINITIALIZED);
    memcpy(&bad, &map, sizeof bad);
    bad.opaque[3] ^= 1;
    CHECK_STATUS(ribbon_retrieval_get_batch(&bad, keys, n, got), RIBBON_ERR_UNINITIALIZED);
    {
        /* A filter view is not a retrieval view. */
        ribbon_plan filter_plan;
        ribbon_filter view;
        uint8_t filter[512];
        CHECK_STATUS(ribbon_plan_init(&filter_plan, RIBBON_KIND_STANDARD, 64, 4, 8000), RIBBON_OK);
        CHECK_STATUS(ribbon_build(&filter_plan, keys, 4, scratch, words, filter, sizeof filter), RIBBON_OK);
        CHECK_STATUS(ribbon_filter_open(&view, filter, ribbon_plan_filter_bytes(&filter_plan)), RIBBON_OK);
        CHECK_STATUS(ribbon_retrieval_open(&bad, filter, ribbon_plan_filter_bytes(&filter_plan)),
                     RIBBON_ERR_BAD_MAGIC);
        memcpy(&bad, &view, sizeof bad);
        CHECK_STATUS(ribbon_retrieval_get_batch(&bad, keys, n, got), RIBBON_ERR_UNINITIALIZED);
        CHECK(ribbon_retrieval_get(&bad, keys[0]) == 0);
    }
    CHECK_STATUS(ribbon_retrieval_get_batch(&map, keys, n, NULL), RIBBON_ERR_NULL);
    CHECK_STATUS(ribbon_retrieval_get_batch(&map, NULL, n, got), RIBBON_ERR_NULL);
    CHECK_STATUS(ribbon_retrieval_get_batch(&map, NULL, 0, NULL), RIBBON_OK);
    CHECK_STATUS(ribbon_retrieval_get_batch(&map, keys, n, (uint64_t *)((uint8_t *)got + 1)),
                 RIBBON_ERR_MISALIGNED);
    CHECK_STATUS(ribbon_retrieval_get_batch(&map, keys, n, keys + 1), RIBBON_ERR_OVERLAP);
    {
        /* out over the view struct or the structure's bytes: the struct
         * in words [0, sw), one free word, then the bytes. */
        const size_t sw = sizeof(ribbon_retrieval) / sizeof(uint64_t);
        uint64_t *arena = (uint64_t *)malloc(bytes + sizeof(ribbon_retrieval) + 16);
        ribbon_retrieval *inside = (ribbon_retrieval *)arena;
        if (!arena) {
            abort();
        }
        memcpy(arena + sw + 1, out, bytes);
        CHECK_STATUS(ribbon_retrieval_open(inside, (const uint8_t *)(arena + sw + 1), bytes), RIBBON_OK);
        CHECK_STATUS(ribbon_retrieval_get_batch(inside, keys, 4, arena + sw - 3), RIBBON_ERR_OVERLAP);
        CHECK_STATUS(ribbon_retrieval_get_batch(inside, keys, 4, arena + sw + 2), RIBBON_ERR_OVERLAP);
        CHECK_STATUS(ribbon_retrieval_get_batch(inside, keys, 2, arena + sw), RIBBON_ERR_OVERLAP);
        /* Touching both is fine. */
        CHECK_STATUS(ribbon_retrieval_get_batch(inside, keys, 1, arena + sw), RIBBON_OK);
        CHECK(arena[sw] == values[0]);
        free(arena);
    }
    CHECK_STATUS(ribbon_retrieval_get_batch(&map, keys, n, got), RIBBON_OK);
    for (i = 0; i < n; i++) {
        CHECK(got[i] == values[i]);
    }

    /* Every backend answers the same. */
    {
        const uint32_t detected = ribbon_backend();
        uint32_t b;
        for (b = 0; b <= RIBBON_BACKEND_PORTABLE; b++) {
            ribbon_retrieval forced;
            if (ribbon_set_backend(b) != RIBBON_OK) {
                continue;
            }
            CHECK_STATUS(ribbon_retrieval_open(&forced, out, bytes), RIBBON_OK);
            CHECK_STATUS(ribbon_retrieval_get_batch(&forced, keys, n, got), RIBBON_OK);
            for (i = 0; i < n; i++) {
                CHECK(got[i] == values[i] && ribbon_retrieval_get(&forced, keys[i]) == values[i]);
            }
        }
        CHECK_STATUS(ribbon_set_backend(RIBBON_BACKEND_AUTO), RIBBON_OK);
        CHECK(ribbon_backend() == detected);
    }
    free(keys);
    free(values);
    free(scratch);
    free(got);
    free(out);
    free(saved);
    printf("retrieval errors: plans, builds, opens and bad views refused\n");
}

/* Random and nearly valid retrieval bytes are refused cleanly; any buffer
 * that opens answers with values below 2^value_bits. */
static void check_hostile_retrieval_bytes(void) {
    uint64_t state = 0x5678;
    uint8_t bytes[1024];
    uint64_t hashes[8], got[8];
    ribbon_retrieval map;
    int round, accepted = 0;
    for (round = 0; round < 20000; round++) {
        size_t len = (size_t)(splitmix(&state) % sizeof bytes);
        size_t i;
        for (i = 0; i < len; i++) {
            bytes[i] = (uint8_t)splitmix(&state);
        }
        if (round % 2 == 0 && len >= 48) {
            memcpy(bytes, "RbnR\002\001", 6);
            bytes[6] = (bytes[6] & 1) ? 128 : 64;
            bytes[7] = (uint8_t)(1 + bytes[7] % 64);
            memset(bytes + 12, 0, 4);
            memset(bytes + 17, 0, 7);
            memset(bytes + 25, 0, 15); /* 40..48: a random checksum */
            bytes[24] %= 4;
            bytes[16] = (uint8_t)(bytes[24] ? bytes[16] % (bytes[24] * bytes[6] + 1) : 0);
            /* Usually the length the header implies, to reach the payload. */
            if (round % 4 == 0) {
                size_t implied = 48 + (size_t)bytes[24] * bytes[7] * (bytes[6] / 8);
                if (implied <= sizeof bytes) {
                    len = implied;
                }
            }
        }
        if (ribbon_retrieval_open_unverified(&map, bytes, len) == RIBBON_OK) {
            uint64_t mask = value_mask(ribbon_retrieval_value_bits(&map));
            accepted++;
            CHECK(ribbon_retrieval_open(&map, bytes, len) == RIBBON_ERR_CHECKSUM_MISMATCH);
            CHECK_STATUS(ribbon_retrieval_open_unverified(&map, bytes, len), RIBBON_OK);
            for (i = 0; i < 8; i++) {
                hashes[i] = splitmix(&state);
            }
            CHECK_STATUS(ribbon_retrieval_get_batch(&map, hashes, 8, got), RIBBON_OK);
            for (i = 0; i < 8; i++) {
                CHECK((got[i] & ~mask) == 0 && ribbon_retrieval_get(&map, hashes[i]) == got[i]);
            }
        }
    }
    CHECK(accepted > 100);
    printf("hostile retrieval bytes: %d of 20000 buffers accepted, all queried safely\n", accepted);
}

int main(void) {
    static const uint32_t widths[2] = {RIBBON_WIDTH_64, RIBBON_WIDTH_128};
    static const size_t sizes[6] = {0, 1, 2, 100, 10000, 100000};
    uint32_t kind;
    int w, s;
    for (kind = 0; kind <= 3; kind++) {
        for (w = 0; w < 2; w++) {
            for (s = 0; s < 6; s++) {
                check_filter(kind, widths[w], sizes[s]);
            }
        }
    }
    for (kind = 0; kind <= 2; kind++) {
        for (w = 0; w < 2; w++) {
            check_streaming(kind, widths[w], 20000);
        }
    }
    printf("streaming builds: every kind and width stopped within the promise\n");
    check_key_hash();
    check_static_bounds();
    check_packaging();
    check_errors();
    check_overlap();
    check_failed_build_leaves_no_filter();
    check_hostile_bytes();
    check_backends();
    {
        static const uint32_t value_bits[3] = {1, 8, 64};
        static const size_t keys[5] = {0, 1, 100, 3000, 40000};
        int b, k;
        for (w = 0; w < 2; w++) {
            for (b = 0; b < 3; b++) {
                for (k = 0; k < 5; k++) {
                    check_retrieval(widths[w], value_bits[b], keys[k]);
                }
            }
        }
        printf("retrieval: every key's 1-, 8- and 64-bit value back, single and batch, at any alignment, "
               "on Standard Ribbon and Bumped layers\n");
    }
    check_retrieval_errors();
    check_hostile_retrieval_bytes();
    if (failures) {
        fprintf(stderr, "%d checks failed\n", failures);
        return 1;
    }
    printf("all C checks passed\n");
    return 0;
}
