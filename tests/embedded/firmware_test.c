/*
 * firmware_test.c - the C ABI of ribbon-kernel in a freestanding image.
 *
 * No C library: no heap, no stdio, static buffers sized at compile time by
 * the header's RIBBON_*_MAX macros, output through platform_write(). The
 * same file runs on a Cortex-M4 under QEMU (cortex_m4/) and as a libc-free
 * static x86_64 Linux executable (x86_64_bare/); run.sh builds both.
 *
 * It builds a filter of every kind and width from a few thousand keys,
 * checks members, the false-positive rate against the filter's own
 * estimate, corrupted and truncated copies, streaming builds, the other
 * planners and the small API calls; builds retrieval structures of 1-, 8-
 * and 64-bit values (one on Bumped layers) and reads every value back; and
 * it measures the peak
 * stack of every entry point (stack_probe.h), printed as a markdown table.
 *
 * Every failed check prints a "FAIL" line; the exit status is 0 only if
 * all checks passed.
 *
 * Build-time switches:
 *   FW_EXPECT_SCALAR=1    the target has no SIMD kernels: the detected
 *                         backend must be scalar, the others unavailable.
 *   FW_INJECT_FAILURE=1   one deliberately wrong check, then exit (proves
 *                         that a failure reaches the exit status).
 *   FW_INJECT_FAILURE=2   trap at start (proves that a crash does).
 */
#include "ribbon_kernel.h"

#include "platform.h"
#include "splitmix.h"
#include "stack_probe.h"

#ifndef FW_EXPECT_SCALAR
#define FW_EXPECT_SCALAR 0
#endif
#ifndef FW_INJECT_FAILURE
#define FW_INJECT_FAILURE 0
#endif

/* ---- Sizes ---- */

#define FW_KEYS 3000u           /* keys per filter */
#define FW_MILLIBITS 7700u      /* bits per key x 1000 for ribbon_plan_init */
#define FW_MILLIBITS_CAP 10000u /* the buffers also hold plans up to 10 bits/key */
#define FW_QUERIES 16384u       /* non-member queries per filter */
#define FW_CHUNK 256u           /* queries per batch call */
#define FW_FP_ONE_IN 100u       /* ribbon_plan_init_fp_rate target */
#define FW_BUDGET_BYTES (FW_KEYS + 40u) /* ribbon_plan_init_bytes budget */
#define FW_RETRIEVAL_KEYS 2000u /* keys per retrieval structure */
/* Room for the largest of them (64-bit values, at most 10 % over 8 bytes
 * per key) plus the header and the odd offset. */
#define FW_RETRIEVAL_BYTES (FW_RETRIEVAL_KEYS * 9u + 1024u)
/* Keys of one retrieval structure on Bumped layers (w = 64 plans take them
 * from 10,000 keys), with 8-bit values: about 11.5 KB of layers (within
 * FW_RETRIEVAL_BYTES) from about 43,400 words of scratch. */
#define FW_BUMPED_RETRIEVAL_KEYS 10000u
#define FW_BUMPED_RETRIEVAL_SCRATCH_WORDS 44000u
#define FW_KEYS_MAX FW_MAX2(FW_KEYS, FW_BUMPED_RETRIEVAL_KEYS)

#define FW_MAX2(a, b) ((a) > (b) ? (a) : (b))
/* The largest of a sizing macro over every kind and width. */
#define FW_MAX_SHAPES(M, keys, mb)                                                          \
    FW_MAX2(FW_MAX2(FW_MAX2(FW_MAX2(M(RIBBON_KIND_HOMOGENEOUS, RIBBON_WIDTH_64, keys, mb),  \
                                    M(RIBBON_KIND_HOMOGENEOUS, RIBBON_WIDTH_128, keys, mb)), \
                            FW_MAX2(M(RIBBON_KIND_STANDARD, RIBBON_WIDTH_64, keys, mb),     \
                                    M(RIBBON_KIND_STANDARD, RIBBON_WIDTH_128, keys, mb))),  \
                    FW_MAX2(M(RIBBON_KIND_STANDARD_SMASH, RIBBON_WIDTH_64, keys, mb),       \
                            M(RIBBON_KIND_STANDARD_SMASH, RIBBON_WIDTH_128, keys, mb))),    \
            FW_MAX2(M(RIBBON_KIND_BUMPED, RIBBON_WIDTH_64, keys, mb),                       \
                    M(RIBBON_KIND_BUMPED, RIBBON_WIDTH_128, keys, mb)))

/* Enumerators, so that the sizing macros expand once each (every use of a
 * macro expands its whole formula). */
enum {
    FW_FILTER_BYTES = FW_MAX_SHAPES(RIBBON_FILTER_BYTES_MAX, FW_KEYS, FW_MILLIBITS_CAP),
    FW_SCRATCH_WORDS = FW_MAX_SHAPES(RIBBON_SCRATCH_WORDS_MAX, FW_KEYS, FW_MILLIBITS_CAP),
    FW_BANDING_WORDS = FW_MAX_SHAPES(RIBBON_BANDING_SCRATCH_WORDS_MAX, FW_KEYS, FW_MILLIBITS_CAP)
};

static uint64_t fw_keys[FW_KEYS_MAX];
/* One word more: the misaligned-scratch check passes the largest plan's
 * words from 4 bytes in. The Bumped retrieval build uses it too. */
static uint64_t fw_scratch[FW_MAX2(FW_SCRATCH_WORDS, FW_BUMPED_RETRIEVAL_SCRATCH_WORDS) + 1];
static uint64_t fw_banding_scratch[FW_BANDING_WORDS];
/* Filters are written at an odd offset (any alignment must work), with a
 * guard byte after them. */
static uint8_t fw_filter[FW_FILTER_BYTES + 8];
/* Corrupted copies; room for "longer than the header says". */
static uint8_t fw_copy[FW_FILTER_BYTES + 72];
static uint64_t fw_queries[FW_CHUNK];
/* Retrieval: a value per key, and a batch of values read back. */
static uint64_t fw_values[FW_MAX2(FW_RETRIEVAL_KEYS, FW_BUMPED_RETRIEVAL_KEYS)];
static uint8_t fw_retrieval[FW_RETRIEVAL_BYTES];
static uint64_t fw_got[FW_CHUNK];
static uint8_t fw_answers[FW_KEYS];

/* ---- Output: a line buffer flushed at each newline ---- */

static char out_buf[160];
static size_t out_len;

static void out_flush(void) {
    if (out_len > 0) {
        out_buf[out_len] = '\0';
        platform_write(out_buf);
        out_len = 0;
    }
}

static void out_char(char c) {
    if (out_len + 1 >= sizeof out_buf) {
        out_flush();
    }
    out_buf[out_len++] = c;
    if (c == '\n') {
        out_flush();
    }
}

static void out_str(const char *s) {
    while (*s != '\0') {
        out_char(*s++);
    }
}

static void out_u64(uint64_t v) {
    char digits[20];
    int n = 0;
    do {
        digits[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v != 0);
    while (n > 0) {
        out_char(digits[--n]);
    }
}

static void out_i64(int64_t v) {
    if (v < 0) {
        out_char('-');
        out_u64(0 - (uint64_t)v);
    } else {
        out_u64((uint64_t)v);
    }
}

/* v / 10^12 as a percentage with three decimals ("0.481 %"). */
static void out_ppt_percent(uint64_t ppt) {
    uint64_t milli_percent = (ppt + 5000000) / 10000000; /* 10^-5 units */
    out_u64(milli_percent / 1000);
    out_char('.');
    out_char((char)('0' + milli_percent / 100 % 10));
    out_char((char)('0' + milli_percent / 10 % 10));
    out_char((char)('0' + milli_percent % 10));
    out_str(" %");
}

static int str_eq(const char *a, const char *b) {
    while (*a != '\0' && *a == *b) {
        a++;
        b++;
    }
    return *a == *b;
}

/* ---- Checks ---- */

static uint32_t checks_run, checks_failed;
static const char *ctx_stage = "setup";
static int32_t ctx_kind = -1, ctx_width = -1;

static const char *kind_name(uint32_t kind) {
    switch (kind) {
    case RIBBON_KIND_HOMOGENEOUS:
        return "Homogeneous";
    case RIBBON_KIND_STANDARD:
        return "Standard";
    case RIBBON_KIND_STANDARD_SMASH:
        return "StandardSmash";
    case RIBBON_KIND_BUMPED:
        return "Bumped";
    default:
        return "?";
    }
}

static void set_context(int32_t kind, int32_t width, const char *stage) {
    ctx_kind = kind;
    ctx_width = width;
    ctx_stage = stage;
}

static void fail_begin(int line, const char *what) {
    checks_failed++;
    out_str("FAIL (firmware_test.c:");
    out_u64((uint64_t)line);
    out_str(", ");
    if (ctx_kind >= 0) {
        out_str(kind_name((uint32_t)ctx_kind));
        out_str(" w");
        out_u64((uint64_t)ctx_width);
        out_str(", ");
    }
    out_str(ctx_stage);
    out_str("): ");
    out_str(what);
}

static void fail_end(void) {
    out_char('\n');
    if (checks_failed >= 25) {
        out_str("FAIL: too many failures, stopping\n");
        platform_exit(1);
    }
}

#define CHECK(cond, what) check_true(__LINE__, (cond), (what))
#define CHECK_STATUS(got, want, what) check_status(__LINE__, (got), (want), (what))
#define CHECK_NEGATIVE(got, what) check_negative(__LINE__, (got), (what))
#define CHECK_EQ(got, want, what) check_eq(__LINE__, (uint64_t)(got), (uint64_t)(want), (what))
#define CHECK_LE(got, limit, what) check_le(__LINE__, (uint64_t)(got), (uint64_t)(limit), (what))

static int check_true(int line, int ok, const char *what) {
    checks_run++;
    if (!ok) {
        fail_begin(line, what);
        fail_end();
    }
    return ok;
}

static void out_status(int32_t s) {
    out_i64(s);
    out_str(" (");
    out_str(ribbon_status_str(s));
    out_char(')');
}

static int check_status(int line, int32_t got, int32_t want, const char *what) {
    checks_run++;
    if (got != want) {
        fail_begin(line, what);
        out_str(" returned ");
        out_status(got);
        out_str(", expected ");
        out_status(want);
        fail_end();
        return 0;
    }
    return 1;
}

static int check_negative(int line, int32_t got, const char *what) {
    checks_run++;
    if (got >= 0) {
        fail_begin(line, what);
        out_str(" returned ");
        out_status(got);
        out_str(", expected an error status");
        fail_end();
        return 0;
    }
    return 1;
}

static int check_eq(int line, uint64_t got, uint64_t want, const char *what) {
    checks_run++;
    if (got != want) {
        fail_begin(line, what);
        out_str(": got ");
        out_u64(got);
        out_str(", expected ");
        out_u64(want);
        fail_end();
        return 0;
    }
    return 1;
}

static int check_le(int line, uint64_t got, uint64_t limit, const char *what) {
    checks_run++;
    if (got > limit) {
        fail_begin(line, what);
        out_str(": ");
        out_u64(got);
        out_str(" > ");
        out_u64(limit);
        fail_end();
        return 0;
    }
    return 1;
}

/* ---- Keys ---- */

static void make_keys(uint64_t seed, uint64_t *out, size_t n) {
    size_t i;
    for (i = 0; i < n; i++) {
        out[i] = splitmix64(&seed);
    }
}

/* ---- Checks on a built filter ---- */

/* Every key is found, one at a time and in one batch. */
static void check_members(const ribbon_filter *view, const uint64_t *keys, size_t n) {
    size_t i, missing = 0, first_missing = 0;
    for (i = 0; i < n; i++) {
        int32_t r = probe_ribbon_contains(view, keys[i]);
        if (r != 1 && missing++ == 0) {
            first_missing = i;
        }
    }
    if (!CHECK_EQ(missing, 0, "members reported absent by ribbon_contains")) {
        out_str("  first missing key index ");
        out_u64(first_missing);
        out_char('\n');
    }
    for (i = 0; i < n; i++) {
        fw_answers[i] = 2;
    }
    CHECK_STATUS(probe_ribbon_contains_batch(view, keys, n, fw_answers), RIBBON_OK, "ribbon_contains_batch");
    missing = 0;
    for (i = 0; i < n; i++) {
        missing += fw_answers[i] != 1;
    }
    CHECK_EQ(missing, 0, "members not answered 1 by ribbon_contains_batch");
}

/* FW_QUERIES random non-members: the hit count must be plausible for the
 * filter's own rates (integer math, loose: more than 4x the expected count
 * plus 16, or under a quarter of it minus 16, fails). Batch answers must
 * agree with single queries. */
static void check_fp_rate(const ribbon_filter *view, uint64_t seed, const char *label) {
    uint64_t column = probe_ribbon_filter_column_fp_ppt(view);
    uint64_t estimate = probe_ribbon_filter_estimated_fp_ppt(view);
    uint64_t hits = 0, expected_low, expected_high, state = seed;
    uint32_t chunk, i, disagree = 0;

    CHECK(column > 0 && column < 1000000000000ull, "column FP rate in (0, 1)");
    CHECK(estimate >= column, "estimated FP rate >= column FP rate");
    CHECK_LE(estimate, 2 * column, "estimated FP rate at most twice the column rate");

    for (chunk = 0; chunk < FW_QUERIES / FW_CHUNK; chunk++) {
        for (i = 0; i < FW_CHUNK; i++) {
            fw_queries[i] = splitmix64(&state);
        }
        CHECK_STATUS(probe_ribbon_contains_batch(view, fw_queries, FW_CHUNK, fw_answers), RIBBON_OK,
                     "ribbon_contains_batch (non-members)");
        for (i = 0; i < FW_CHUNK; i++) {
            hits += fw_answers[i];
            if (chunk % 8 == 0 && probe_ribbon_contains(view, fw_queries[i]) != (int32_t)fw_answers[i]) {
                disagree++;
            }
        }
    }
    CHECK_EQ(disagree, 0, "ribbon_contains disagrees with ribbon_contains_batch");

    expected_low = ((uint64_t)FW_QUERIES * column + 500000000000ull) / 1000000000000ull;
    expected_high = ((uint64_t)FW_QUERIES * estimate + 500000000000ull) / 1000000000000ull;
    out_str("  ");
    out_str(label);
    out_str(": ");
    out_u64(hits);
    out_str(" of ");
    out_u64(FW_QUERIES);
    out_str(" non-members hit (expected ");
    out_u64(expected_high);
    out_str("; column rate ");
    out_ppt_percent(column);
    out_str(", estimate ");
    out_ppt_percent(estimate);
    out_str(")\n");
    CHECK_LE(hits, 4 * expected_high + 16, "non-member hits above 4x the expected count + 16");
    CHECK_LE(expected_low, 4 * hits + 16, "non-member hits under a quarter of the expected count - 16");
}

/* The view's getters agree with what was built. */
static void check_view_info(const ribbon_filter *view, uint32_t kind, uint32_t width, uint64_t keys,
                            size_t bytes) {
    CHECK_EQ(probe_ribbon_filter_kind(view), kind, "ribbon_filter_kind");
    CHECK_EQ(probe_ribbon_filter_width(view), width, "ribbon_filter_width");
    CHECK_EQ(probe_ribbon_filter_keys(view), keys, "ribbon_filter_keys");
    CHECK_EQ(probe_ribbon_filter_bytes(view), bytes, "ribbon_filter_bytes");
}

/* Answers of an accepted (corrupted) filter are 0 or 1. */
static void check_answers_safe(const ribbon_filter *view, uint64_t seed) {
    uint32_t i, bad = 0;
    for (i = 0; i < 8; i++) {
        int32_t r = probe_ribbon_contains(view, splitmix64(&seed));
        bad += r != 0 && r != 1;
    }
    CHECK_EQ(bad, 0, "a corrupted filter that opened answers neither 0 nor 1");
}

/* Header fields a single flipped bit may leave valid: the kind (while it
 * stays a known kind), the seed and the key count. Any other flip must be
 * refused: magic, version, width, columns, reserved, block counts (the last
 * three also change the implied length). */
/* Whether the header's structure checks may accept byte offset with this
 * value (the checksum, bytes 40..48, refuses every flip when verified). */
static int flip_may_be_valid(size_t offset, uint8_t flipped) {
    if (offset == 5) {
        return flipped <= RIBBON_KIND_BUMPED;
    }
    return (offset >= 8 && offset < 12) || (offset >= 16 && offset < 24) || (offset >= 40 && offset < 48);
}

static void copy_bytes(uint8_t *dst, const uint8_t *src, size_t n) {
    size_t i;
    for (i = 0; i < n; i++) {
        dst[i] = src[i];
    }
}

/* Corrupted, truncated and over-long copies are refused with an error
 * status; unverified (no checksum), a flip of a free header field may
 * open, and then answers 0 or 1. */
static void check_corruption(const uint8_t *filter, size_t len, uint64_t seed) {
    static const size_t cuts[] = {1, 8, 47, 48, 49};
    ribbon_filter view;
    size_t offset, i;
    uint32_t bit, accepted = 0, refused = 0;

    ctx_stage = "corrupted copies";
    copy_bytes(fw_copy, filter, len);

    for (offset = 0; offset < 48; offset++) {
        for (bit = 0; bit < 8; bit++) {
            int32_t st;
            fw_copy[offset] ^= (uint8_t)(1u << bit);
            CHECK_NEGATIVE(probe_ribbon_filter_open(&view, fw_copy, len), "ribbon_filter_open of a flipped header");
            st = probe_ribbon_filter_open_unverified(&view, fw_copy, len);
            if (flip_may_be_valid(offset, fw_copy[offset])) {
                if (st == RIBBON_OK) {
                    accepted++;
                    check_answers_safe(&view, seed + offset * 8 + bit);
                } else {
                    CHECK_NEGATIVE(st, "ribbon_filter_open of a header with a free field flipped");
                }
            } else if (CHECK_NEGATIVE(st, "ribbon_filter_open of a header with one bit flipped")) {
                refused++;
            } else {
                out_str("  (header byte ");
                out_u64(offset);
                out_str(", bit ");
                out_u64(bit);
                out_str(")\n");
            }
            /* ribbon_filter_size agrees with ribbon_filter_open: a header
             * it accepts with the full length opens, and a length it
             * reports opens (or is refused) without harm. */
            {
                size_t n = 1;
                int32_t size_st = probe_ribbon_filter_size(fw_copy, len + 64, &n);
                if (size_st == RIBBON_OK) {
                    CHECK(n >= 48, "ribbon_filter_size at least the header");
                    CHECK((n == len) == (st == RIBBON_OK),
                          "ribbon_filter_size and ribbon_filter_open_unverified disagree on a corrupted header");
                    if (n < len && probe_ribbon_filter_open_unverified(&view, fw_copy, n) == RIBBON_OK) {
                        check_answers_safe(&view, seed ^ offset);
                    }
                } else {
                    CHECK_NEGATIVE(size_st, "ribbon_filter_size");
                    CHECK_EQ(n, 0, "ribbon_filter_size leaves 0 on error");
                    CHECK(st != RIBBON_OK, "ribbon_filter_size refused a header that opens");
                }
            }
            fw_copy[offset] ^= (uint8_t)(1u << bit);
        }
    }

    /* Truncated: every cut must be refused. */
    for (i = 0; i < sizeof cuts / sizeof cuts[0]; i++) {
        CHECK_NEGATIVE(probe_ribbon_filter_open(&view, fw_copy, len - cuts[i]),
                       "ribbon_filter_open of a truncated copy");
    }
    CHECK_NEGATIVE(probe_ribbon_filter_open(&view, fw_copy, len / 2), "ribbon_filter_open of half a filter");
    CHECK_NEGATIVE(probe_ribbon_filter_open(&view, fw_copy, 47), "ribbon_filter_open of 47 bytes");
    CHECK_NEGATIVE(probe_ribbon_filter_open(&view, fw_copy, 0), "ribbon_filter_open of 0 bytes");
    /* Longer than the header says. */
    for (i = 1; i <= 64; i *= 8) {
        CHECK_NEGATIVE(probe_ribbon_filter_open(&view, fw_copy, len + i), "ribbon_filter_open of an over-long copy");
    }
    {
        size_t n = 0;
        CHECK_STATUS(probe_ribbon_filter_size(fw_copy, len, &n), RIBBON_OK, "ribbon_filter_size (exact length)");
        CHECK_EQ(n, len, "ribbon_filter_size (exact length)");
        CHECK_STATUS(probe_ribbon_filter_size(fw_copy, len + 64, &n), RIBBON_OK, "ribbon_filter_size (longer block)");
        CHECK_EQ(n, len, "ribbon_filter_size (longer block)");
        if (fw_copy[5] == RIBBON_KIND_BUMPED) {
            /* The length needs the layer table after the header too. */
            CHECK_STATUS(probe_ribbon_filter_size(fw_copy, 48, &n), RIBBON_ERR_TRUNCATED,
                         "ribbon_filter_size (Bumped header only)");
            CHECK_EQ(n, 0, "ribbon_filter_size (Bumped header only)");
        } else {
            CHECK_STATUS(probe_ribbon_filter_size(fw_copy, 48, &n), RIBBON_OK, "ribbon_filter_size (header only)");
            CHECK_EQ(n, len, "ribbon_filter_size (header only)");
        }
        CHECK_STATUS(probe_ribbon_filter_size(fw_copy, len < RIBBON_SIZE_PREFIX_BYTES ? len : RIBBON_SIZE_PREFIX_BYTES,
                                              &n),
                     RIBBON_OK, "ribbon_filter_size (RIBBON_SIZE_PREFIX_BYTES)");
        CHECK_EQ(n, len, "ribbon_filter_size (RIBBON_SIZE_PREFIX_BYTES)");
        CHECK_NEGATIVE(probe_ribbon_filter_size(fw_copy, 39, &n), "ribbon_filter_size of 39 bytes");
        CHECK_STATUS(probe_ribbon_filter_size(fw_copy, len, NULL), RIBBON_ERR_NULL, "ribbon_filter_size(NULL out)");
    }

    /* Random bytes behind a valid magic and version, random lengths. */
    {
        uint64_t state = seed;
        uint32_t round;
        for (round = 0; round < 200; round++) {
            size_t n = (size_t)(splitmix64(&state) % (len + 64));
            for (i = 0; i < n; i++) {
                fw_copy[i] = (uint8_t)splitmix64(&state);
            }
            if (n >= 8 && round % 2 == 0) {
                copy_bytes(fw_copy, filter, 8); /* magic, version, kind, width, columns */
            }
            if (probe_ribbon_filter_open(&view, fw_copy, n) == RIBBON_OK) {
                accepted++;
                check_answers_safe(&view, state);
            }
        }
    }
    out_str("  corrupted copies: ");
    out_u64(refused);
    out_str(" single-bit header flips refused, ");
    out_u64(accepted);
    out_str(" free-field or random copies accepted and queried safely\n");
}

/* ---- One kind and width ---- */

static void test_streaming(uint32_t kind, uint32_t width, uint64_t seed) {
    ribbon_plan plan;
    ribbon_banding banding;
    ribbon_filter view;
    uint8_t *out = fw_filter + 3;
    size_t words, bytes, i, added = 0;
    uint64_t capacity;
    int32_t last = RIBBON_ADD_INSERTED;

    set_context((int32_t)kind, (int32_t)width, "streaming");
    if (!CHECK_STATUS(probe_ribbon_plan_init(&plan, kind, width, FW_KEYS, FW_MILLIBITS), RIBBON_OK,
                      "ribbon_plan_init")) {
        return;
    }
    if (kind == RIBBON_KIND_BUMPED) {
        /* Bumped Ribbon sizes its layers for the keys: no streaming. */
        CHECK_STATUS(probe_ribbon_banding_init(&banding, &plan, fw_banding_scratch, FW_BANDING_WORDS),
                     RIBBON_ERR_UNSUPPORTED, "ribbon_banding_init of a Bumped plan");
        return;
    }
    words = probe_ribbon_plan_banding_scratch_words(&plan);
    bytes = probe_ribbon_plan_filter_bytes(&plan);
    capacity = probe_ribbon_plan_banding_capacity(&plan);
    CHECK(words > 0 && words < probe_ribbon_plan_scratch_words(&plan), "banding scratch below build scratch");
    CHECK_LE(capacity, FW_KEYS, "ribbon_plan_banding_capacity at most the planned keys");
    CHECK_LE(FW_KEYS * 95, capacity * 100, "ribbon_plan_banding_capacity at least 95 % of the keys");
    if (!CHECK_LE(words, FW_BANDING_WORDS, "banding scratch fits the static buffer") ||
        !CHECK_LE(bytes, FW_FILTER_BYTES, "filter fits the static buffer")) {
        return;
    }

    CHECK_STATUS(probe_ribbon_banding_init(&banding, &plan, fw_banding_scratch, words - 1),
                 RIBBON_ERR_SCRATCH_TOO_SMALL, "ribbon_banding_init with one word too few");
    CHECK_STATUS(probe_ribbon_banding_add(&banding, 1), RIBBON_ERR_UNINITIALIZED,
                 "ribbon_banding_add after a failed init");
    CHECK_STATUS(probe_ribbon_banding_init(&banding, &plan, fw_banding_scratch, words), RIBBON_OK,
                 "ribbon_banding_init");

    for (i = 0; i < FW_KEYS; i++) {
        last = probe_ribbon_banding_add(&banding, fw_keys[i]);
        if (last != RIBBON_ADD_INSERTED && last != RIBBON_ADD_REDUNDANT) {
            break;
        }
        added++;
    }
    CHECK(last == RIBBON_ADD_INSERTED || last == RIBBON_ADD_REDUNDANT || last == RIBBON_ADD_FULL ||
              (last == RIBBON_ADD_INCONSISTENT && kind != RIBBON_KIND_HOMOGENEOUS),
          "ribbon_banding_add outcome");
    CHECK_EQ(probe_ribbon_banding_added(&banding), added, "ribbon_banding_added");
    CHECK_LE(FW_KEYS * 95, added * 100, "a stream takes at least 95 % of the planned keys");
    if (last == RIBBON_ADD_FULL) {
        CHECK_EQ(added, capacity, "a stream is full at its capacity");
        CHECK_STATUS(probe_ribbon_banding_add(&banding, fw_keys[0] ^ 1), RIBBON_ADD_FULL, "a full stream stays full");
    }

    out[bytes] = 0xa5;
    CHECK_STATUS(probe_ribbon_banding_finish(&banding, out, bytes - 1), RIBBON_ERR_OUTPUT_TOO_SMALL,
                 "ribbon_banding_finish into one byte too few");
    CHECK_STATUS(probe_ribbon_banding_finish(&banding, out, bytes), RIBBON_OK, "ribbon_banding_finish");
    CHECK_STATUS(probe_ribbon_banding_finish(&banding, out, bytes), RIBBON_ERR_UNINITIALIZED,
                 "ribbon_banding_finish of a spent banding");
    CHECK_EQ(out[bytes], 0xa5, "ribbon_banding_finish wrote past the filter");
    if (!CHECK_STATUS(probe_ribbon_filter_open(&view, out, bytes), RIBBON_OK, "ribbon_filter_open")) {
        return;
    }
    check_view_info(&view, kind, width, added, bytes);
    check_members(&view, fw_keys, added);
    check_fp_rate(&view, seed ^ 0x5157, "streaming   ");
}

/* The length a build wrote into *bytes (the plan's bytes): all of it, or
 * for Bumped Ribbon at most that, as ribbon_filter_size reads it. */
static int check_written(const uint8_t *out, size_t *bytes, uint32_t kind) {
    size_t written = 0;
    if (!CHECK_STATUS(probe_ribbon_filter_size(out, *bytes, &written), RIBBON_OK, "ribbon_filter_size")) {
        return 0;
    }
    CHECK_LE(written, *bytes, "a build writes at most the plan's bytes");
    if (kind != RIBBON_KIND_BUMPED) {
        CHECK_EQ(written, *bytes, "a build writes the plan's bytes");
    }
    *bytes = written;
    return 1;
}

/* A plan from another planner: build, open, members, FP rate; the column
 * rate at most max_column_ppt unless that is 0. */
static void build_and_check(const ribbon_plan *plan, uint32_t kind, uint32_t width, uint64_t seed,
                            uint64_t max_column_ppt, const char *label) {
    ribbon_filter view;
    size_t words = probe_ribbon_plan_scratch_words(plan);
    size_t bytes = probe_ribbon_plan_filter_bytes(plan);
    uint8_t *out = fw_filter + 5;
    (void)kind;
    (void)width;
    if (!CHECK_LE(words, FW_SCRATCH_WORDS, "scratch fits the static buffer") ||
        !CHECK_LE(bytes, FW_FILTER_BYTES, "filter fits the static buffer")) {
        return;
    }
    if (!CHECK_STATUS(probe_ribbon_build(plan, fw_keys, FW_KEYS, fw_scratch, words, out, bytes), RIBBON_OK,
                      "ribbon_build") ||
        !check_written(out, &bytes, kind) ||
        !CHECK_STATUS(probe_ribbon_filter_open(&view, out, bytes), RIBBON_OK, "ribbon_filter_open")) {
        return;
    }
    check_view_info(&view, kind, width, FW_KEYS, bytes);
    check_members(&view, fw_keys, FW_KEYS);
    check_fp_rate(&view, seed, label);
    if (max_column_ppt != 0) {
        CHECK_LE(probe_ribbon_filter_column_fp_ppt(&view), max_column_ppt, "column FP rate within the plan's target");
    }
}

static void test_shape(uint32_t kind, uint32_t width) {
    const uint64_t seed = 0x1000 + kind * 0x100 + width;
    const size_t max_bytes = RIBBON_FILTER_BYTES_MAX(kind, width, FW_KEYS, FW_MILLIBITS);
    const size_t max_words = RIBBON_SCRATCH_WORDS_MAX(kind, width, FW_KEYS, FW_MILLIBITS);
    const size_t max_banding = RIBBON_BANDING_SCRATCH_WORDS_MAX(kind, width, FW_KEYS, FW_MILLIBITS);
    ribbon_plan plan;
    ribbon_filter view;
    size_t words, bytes, banding_words;
    uint8_t *out = fw_filter + 1;

    set_context((int32_t)kind, (int32_t)width, "build");
    make_keys(seed, fw_keys, FW_KEYS);
    if (!CHECK_STATUS(probe_ribbon_plan_init(&plan, kind, width, FW_KEYS, FW_MILLIBITS), RIBBON_OK,
                      "ribbon_plan_init")) {
        return;
    }
    /* A caller's seed (as for keys from untrusted parties). */
    CHECK_STATUS(probe_ribbon_plan_set_seed(&plan, (uint32_t)seed), RIBBON_OK, "ribbon_plan_set_seed");
    words = probe_ribbon_plan_scratch_words(&plan);
    bytes = probe_ribbon_plan_filter_bytes(&plan);
    banding_words = probe_ribbon_plan_banding_scratch_words(&plan);
    out_str(kind_name(kind));
    out_str(" w");
    out_u64(width);
    out_str(": ");
    out_u64(FW_KEYS);
    out_str(" keys, filter ");
    out_u64(bytes);
    out_str(" B (max ");
    out_u64(max_bytes);
    out_str("), scratch ");
    out_u64(words);
    out_str(" words (max ");
    out_u64(max_words);
    out_str("), banding ");
    out_u64(banding_words);
    out_str(" words (max ");
    out_u64(max_banding);
    out_str(")\n");
    CHECK(bytes > 48 && words > 0 && (banding_words > 0 || kind == RIBBON_KIND_BUMPED),
          "plan sizes are non-zero (no banding for Bumped Ribbon)");
    CHECK_LE(bytes, max_bytes, "ribbon_plan_filter_bytes <= RIBBON_FILTER_BYTES_MAX");
    CHECK_LE(words, max_words, "ribbon_plan_scratch_words <= RIBBON_SCRATCH_WORDS_MAX");
    CHECK_LE(banding_words, max_banding, "ribbon_plan_banding_scratch_words <= RIBBON_BANDING_SCRATCH_WORDS_MAX");
    CHECK_EQ(probe_ribbon_max_filter_bytes(kind, width, FW_KEYS, FW_MILLIBITS), max_bytes,
             "ribbon_max_filter_bytes equals RIBBON_FILTER_BYTES_MAX");
    CHECK_EQ(probe_ribbon_max_scratch_words(kind, width, FW_KEYS, FW_MILLIBITS), max_words,
             "ribbon_max_scratch_words equals RIBBON_SCRATCH_WORDS_MAX");
    CHECK_EQ(probe_ribbon_max_banding_scratch_words(kind, width, FW_KEYS, FW_MILLIBITS), max_banding,
             "ribbon_max_banding_scratch_words equals RIBBON_BANDING_SCRATCH_WORDS_MAX");
    if (!CHECK_LE(words, FW_SCRATCH_WORDS, "scratch fits the static buffer") ||
        !CHECK_LE(bytes, FW_FILTER_BYTES, "filter fits the static buffer")) {
        return;
    }

    /* Buffers one unit short are refused; then the real build, which
     * writes exactly `bytes` bytes at an odd address. */
    CHECK_STATUS(probe_ribbon_build(&plan, fw_keys, FW_KEYS, fw_scratch, words - 1, out, bytes),
                 RIBBON_ERR_SCRATCH_TOO_SMALL, "ribbon_build with one scratch word too few");
    CHECK_STATUS(probe_ribbon_build(&plan, fw_keys, FW_KEYS, fw_scratch, words, out, bytes - 1),
                 RIBBON_ERR_OUTPUT_TOO_SMALL, "ribbon_build into one byte too few");
    CHECK_STATUS(probe_ribbon_build(&plan, fw_keys, FW_KEYS, (uint64_t *)(void *)((uint8_t *)fw_scratch + 4), words,
                                    out, bytes),
                 RIBBON_ERR_MISALIGNED, "ribbon_build with misaligned scratch");
    out[bytes] = 0xa5;
    if (!CHECK_STATUS(probe_ribbon_build(&plan, fw_keys, FW_KEYS, fw_scratch, words, out, bytes), RIBBON_OK,
                      "ribbon_build")) {
        return;
    }
    out_str("  ribbon_build took ");
    out_u64(probe_results.last);
    out_str(" B of stack\n");
    CHECK_EQ(out[bytes], 0xa5, "ribbon_build wrote past the filter");
    if (!check_written(out, &bytes, kind)) {
        return;
    }
    if (!CHECK_STATUS(probe_ribbon_filter_open(&view, out, bytes), RIBBON_OK, "ribbon_filter_open")) {
        return;
    }
    check_view_info(&view, kind, width, FW_KEYS, bytes);
    check_members(&view, fw_keys, FW_KEYS);
    check_fp_rate(&view, seed ^ 0xf00d, "built       ");
    check_corruption(out, bytes, seed);

    test_streaming(kind, width, seed);

    set_context((int32_t)kind, (int32_t)width, "fp-rate plan");
    if (CHECK_STATUS(probe_ribbon_plan_init_fp_rate(&plan, kind, width, FW_KEYS, FW_FP_ONE_IN), RIBBON_OK,
                     "ribbon_plan_init_fp_rate")) {
        build_and_check(&plan, kind, width, seed ^ 0xfa11, 1000000000000ull / FW_FP_ONE_IN, "1-in-100    ");
    }
    set_context((int32_t)kind, (int32_t)width, "byte-budget plan");
    if (CHECK_STATUS(probe_ribbon_plan_init_bytes(&plan, kind, width, FW_KEYS, FW_BUDGET_BYTES), RIBBON_OK,
                     "ribbon_plan_init_bytes")) {
        CHECK_LE(probe_ribbon_plan_filter_bytes(&plan), FW_BUDGET_BYTES, "ribbon_plan_init_bytes keeps the budget");
        build_and_check(&plan, kind, width, seed ^ 0xb0d9, 0, "byte budget ");
    }
}

/* Filters of more than 32 columns (an FP rate below 2^-32) take the FP
 * measurement's wider rank basis on 32-bit targets: their build and
 * estimate are measured and printed apart from the table (which covers the
 * filters above). */
#define FW_WIDE_KEYS 600u
#define FW_WIDE_MILLIBITS 40000u

static void test_many_columns(uint32_t width) {
    const uint32_t kind = RIBBON_KIND_HOMOGENEOUS;
    ribbon_plan plan;
    ribbon_filter view;
    size_t words, bytes;
    uint64_t estimate;

    set_context((int32_t)kind, (int32_t)width, "40 bits per key");
    make_keys(0x4040 + width, fw_keys, FW_WIDE_KEYS);
    if (!CHECK_STATUS(probe_ribbon_plan_init(&plan, kind, width, FW_WIDE_KEYS, FW_WIDE_MILLIBITS), RIBBON_OK,
                      "ribbon_plan_init")) {
        return;
    }
    words = probe_ribbon_plan_scratch_words(&plan);
    bytes = probe_ribbon_plan_filter_bytes(&plan);
    if (!CHECK_LE(words, FW_SCRATCH_WORDS, "scratch fits the static buffer") ||
        !CHECK_LE(bytes, FW_FILTER_BYTES, "filter fits the static buffer")) {
        return;
    }
    if (!CHECK_STATUS(probe_ribbon_build(&plan, fw_keys, FW_WIDE_KEYS, fw_scratch, words, fw_filter, bytes),
                      RIBBON_OK, "ribbon_build")) {
        return;
    }
    out_str(kind_name(kind));
    out_str(" w");
    out_u64(width);
    out_str(", 40 bits per key (");
    out_u64(FW_WIDE_KEYS);
    out_str(" keys): ribbon_build took ");
    out_u64(probe_results.last);
    out_str(" B of stack, ");
    if (!CHECK_STATUS(probe_ribbon_filter_open(&view, fw_filter, bytes), RIBBON_OK, "ribbon_filter_open")) {
        return;
    }
    estimate = probe_ribbon_filter_estimated_fp_ppt(&view);
    out_str("ribbon_filter_estimated_fp_ppt ");
    out_u64(probe_results.last);
    out_str(" B\n");
    check_members(&view, fw_keys, FW_WIDE_KEYS);
    CHECK(probe_ribbon_filter_column_fp_ppt(&view) < 1000, "more than 30 columns: the rate is below 1e-9");
    CHECK_LE(estimate, 1000000, "the estimate is below 1e-6");
}

/* ---- Small calls and argument errors ---- */

static void fill_bytes(void *p, size_t n, uint8_t value) {
    uint8_t *b = (uint8_t *)p;
    size_t i;
    for (i = 0; i < n; i++) {
        b[i] = value;
    }
}

static void test_api_basics(void) {
    static const uint32_t others[3] = {RIBBON_BACKEND_AVX2, RIBBON_BACKEND_AVX512, RIBBON_BACKEND_NEON};
    ribbon_plan plan;
    ribbon_filter view;
    ribbon_banding banding;
    uint32_t detected, i;
    int32_t s;
    uint8_t byte = 0;

    set_context(-1, -1, "API basics");
    CHECK(str_eq(probe_ribbon_status_str(RIBBON_OK), "ok"), "ribbon_status_str(RIBBON_OK) is \"ok\"");
    for (s = -25; s <= 1; s++) {
        const char *text = probe_ribbon_status_str(s);
        CHECK(text != NULL && text[0] != '\0', "ribbon_status_str gives a non-empty string");
        if (s >= RIBBON_ERR_OVERLAP && s <= RIBBON_OK) {
            CHECK(!str_eq(text, probe_ribbon_status_str(-1000)), "every defined status has its own text");
        }
    }

    CHECK_STATUS(probe_ribbon_plan_init(NULL, RIBBON_KIND_HOMOGENEOUS, 64, 10, 8000), RIBBON_ERR_NULL,
                 "ribbon_plan_init(NULL)");
    CHECK_STATUS(probe_ribbon_plan_init(&plan, 4, 64, 10, 8000), RIBBON_ERR_INVALID_ARGUMENT,
                 "ribbon_plan_init with kind 4");
    CHECK_STATUS(probe_ribbon_plan_init(&plan, RIBBON_KIND_HOMOGENEOUS, 32, 10, 8000), RIBBON_ERR_INVALID_ARGUMENT,
                 "ribbon_plan_init with width 32");
    CHECK_STATUS(probe_ribbon_plan_init(&plan, RIBBON_KIND_HOMOGENEOUS, 64, 10, 0), RIBBON_ERR_INVALID_BITS_PER_KEY,
                 "ribbon_plan_init with 0 bits per key");
    CHECK_STATUS(probe_ribbon_plan_init_fp_rate(&plan, RIBBON_KIND_STANDARD, 64, 10, 1), RIBBON_ERR_INVALID_FP_RATE,
                 "ribbon_plan_init_fp_rate with one_in 1");
    CHECK_STATUS(probe_ribbon_plan_init_bytes(&plan, RIBBON_KIND_STANDARD, 64, 10, 41), RIBBON_ERR_BUDGET_TOO_SMALL,
                 "ribbon_plan_init_bytes with 41 bytes");

    /* Structs no init call filled in are refused. */
    fill_bytes(&plan, sizeof plan, 0xab);
    CHECK_EQ(probe_ribbon_plan_scratch_words(&plan), 0, "ribbon_plan_scratch_words of garbage");
    CHECK_EQ(probe_ribbon_plan_filter_bytes(&plan), 0, "ribbon_plan_filter_bytes of garbage");
    CHECK_EQ(probe_ribbon_plan_banding_scratch_words(&plan), 0, "ribbon_plan_banding_scratch_words of garbage");
    CHECK_EQ(probe_ribbon_plan_banding_capacity(&plan), 0, "ribbon_plan_banding_capacity of garbage");
    CHECK_STATUS(probe_ribbon_build(&plan, fw_keys, 4, fw_scratch, 64, &byte, 1), RIBBON_ERR_UNINITIALIZED,
                 "ribbon_build with a garbage plan");
    CHECK_STATUS(probe_ribbon_build(NULL, fw_keys, 4, fw_scratch, 64, &byte, 1), RIBBON_ERR_NULL,
                 "ribbon_build(NULL plan)");
    fill_bytes(&view, sizeof view, 0x5a);
    CHECK_STATUS(probe_ribbon_contains(&view, 3), RIBBON_ERR_UNINITIALIZED, "ribbon_contains with a garbage view");
    CHECK_STATUS(probe_ribbon_contains_batch(&view, fw_keys, 1, &byte), RIBBON_ERR_UNINITIALIZED,
                 "ribbon_contains_batch with a garbage view");
    CHECK_EQ(probe_ribbon_filter_column_fp_ppt(&view), 0, "ribbon_filter_column_fp_ppt of a garbage view");
    CHECK_EQ(probe_ribbon_filter_estimated_fp_ppt(&view), 0, "ribbon_filter_estimated_fp_ppt of a garbage view");
    CHECK_STATUS(probe_ribbon_contains(NULL, 3), RIBBON_ERR_NULL, "ribbon_contains(NULL)");
    CHECK_STATUS(probe_ribbon_filter_open(NULL, fw_filter, 100), RIBBON_ERR_NULL, "ribbon_filter_open(NULL view)");
    CHECK_STATUS(probe_ribbon_filter_open(&view, NULL, 100), RIBBON_ERR_NULL, "ribbon_filter_open(NULL bytes)");
    fill_bytes(&banding, sizeof banding, 0x33);
    CHECK_STATUS(probe_ribbon_banding_add(&banding, 7), RIBBON_ERR_UNINITIALIZED, "ribbon_banding_add of garbage");
    CHECK_EQ(probe_ribbon_banding_added(&banding), 0, "ribbon_banding_added of garbage");
    CHECK_STATUS(probe_ribbon_banding_finish(&banding, &byte, 1), RIBBON_ERR_UNINITIALIZED,
                 "ribbon_banding_finish of garbage");
    CHECK_STATUS(probe_ribbon_banding_init(&banding, NULL, fw_banding_scratch, 16), RIBBON_ERR_NULL,
                 "ribbon_banding_init(NULL plan)");

    /* Backends: forcing one the target lacks is refused; AUTO restores. */
    detected = probe_ribbon_backend();
    out_str("backend detected: ");
    out_u64(detected);
    out_str(detected == RIBBON_BACKEND_SCALAR ? " (scalar)\n" : " (SIMD)\n");
    CHECK_STATUS(probe_ribbon_set_backend(7), RIBBON_ERR_INVALID_ARGUMENT, "ribbon_set_backend(7)");
    for (i = 0; i < 3; i++) {
        s = probe_ribbon_set_backend(others[i]);
        CHECK(s == RIBBON_OK || s == RIBBON_ERR_BACKEND_UNAVAILABLE, "ribbon_set_backend of a SIMD backend");
        if (FW_EXPECT_SCALAR) {
            CHECK_STATUS(s, RIBBON_ERR_BACKEND_UNAVAILABLE, "a SIMD backend on a target without SIMD kernels");
        }
    }
    if (FW_EXPECT_SCALAR) {
        CHECK_EQ(detected, RIBBON_BACKEND_SCALAR, "detected backend on a target without SIMD kernels");
    }
    CHECK_STATUS(probe_ribbon_set_backend(RIBBON_BACKEND_SCALAR), RIBBON_OK, "ribbon_set_backend(SCALAR)");
    CHECK_EQ(probe_ribbon_backend(), RIBBON_BACKEND_SCALAR, "ribbon_backend after forcing scalar");
    CHECK_STATUS(probe_ribbon_set_backend(RIBBON_BACKEND_AUTO), RIBBON_OK, "ribbon_set_backend(AUTO)");
    CHECK_EQ(probe_ribbon_backend(), detected, "ribbon_backend after AUTO");

    CHECK_EQ(probe_ribbon_version(), RIBBON_VERSION_NUMBER, "ribbon_version matches the header");
    CHECK(str_eq(probe_ribbon_version_str(), RIBBON_VERSION_STRING), "ribbon_version_str matches the header");
    CHECK_EQ(probe_ribbon_max_filter_bytes(4, 64, 100, 8000), 0, "ribbon_max_filter_bytes of kind 4");
    CHECK_EQ(probe_ribbon_max_scratch_words(0, 32, 100, 8000), 0, "ribbon_max_scratch_words of width 32");
    CHECK_EQ(probe_ribbon_max_banding_scratch_words(4, 64, 100, 8000), 0,
             "ribbon_max_banding_scratch_words of kind 4");
}

/* ---- Retrieval ---- */

/* keys keys to value_bits-bit values (the structure at an odd offset, the
 * scratch the filters'): every key's value back from ribbon_retrieval_get
 * and ribbon_retrieval_get_batch, the getters, and a conflicting duplicate
 * refused without leaving a structure behind. A plan of
 * FW_BUMPED_RETRIEVAL_KEYS keys at w = 64 builds Bumped layers, whose
 * structure may be shorter than the plan's bytes. */
static void test_retrieval(uint32_t width, uint32_t value_bits, size_t keys) {
    const uint64_t mask = value_bits >= 64 ? ~(uint64_t)0 : (((uint64_t)1 << value_bits) - 1);
    const int bumped = keys >= FW_BUMPED_RETRIEVAL_KEYS;
    ribbon_retrieval_plan plan;
    ribbon_retrieval map;
    uint64_t state = 5150 + width + value_bits;
    size_t words, bytes, i, at, wrong = 0, len = 0;

    set_context(-1, -1,
                bumped ? "retrieval w64, Bumped layers" : width == RIBBON_WIDTH_64 ? "retrieval w64" : "retrieval w128");
    make_keys(6160 + width + value_bits, fw_keys, keys);
    for (i = 0; i < keys; i++) {
        fw_values[i] = splitmix64(&state) & mask;
    }
    CHECK_STATUS(probe_ribbon_retrieval_plan_init(&plan, width, keys, value_bits), RIBBON_OK,
                 "ribbon_retrieval_plan_init");
    CHECK_STATUS(probe_ribbon_retrieval_plan_set_seed(&plan, 0x5eedu), RIBBON_OK, "ribbon_retrieval_plan_set_seed");
    words = probe_ribbon_retrieval_plan_scratch_words(&plan);
    bytes = probe_ribbon_retrieval_plan_bytes(&plan);
    if (!CHECK_LE(words, FW_MAX2(FW_SCRATCH_WORDS, FW_BUMPED_RETRIEVAL_SCRATCH_WORDS),
                  "retrieval scratch words within the scratch buffer") ||
        !CHECK_LE(bytes + 1, FW_RETRIEVAL_BYTES, "retrieval bytes within their buffer")) {
        return;
    }
    CHECK_STATUS(probe_ribbon_retrieval_build(&plan, fw_keys, fw_values, keys, fw_scratch, words, fw_retrieval + 1,
                                              bytes),
                 RIBBON_OK, "ribbon_retrieval_build");
    out_str(bumped ? "Bumped retrieval w64, " : "Standard retrieval w");
    if (!bumped) {
        out_u64(width);
        out_str(", ");
    }
    out_u64(value_bits);
    out_str("-bit values: ribbon_retrieval_build took ");
    out_u64(probe_results.last);
    out_str(" B of stack\n");
    CHECK_STATUS(probe_ribbon_retrieval_size(fw_retrieval + 1, bytes, &len), RIBBON_OK, "ribbon_retrieval_size");
    if (bumped) {
        /* Bumped layers write at most the plan's bytes; a layer table
         * follows the header. */
        CHECK_LE(len, bytes, "ribbon_retrieval_size of Bumped layers: at most the planned bytes");
        CHECK(len > bytes / 2, "ribbon_retrieval_size of Bumped layers: most of the planned bytes");
    } else {
        CHECK_EQ(len, bytes, "ribbon_retrieval_size of a Standard structure: the planned bytes");
    }
    bytes = len;
    CHECK_STATUS(probe_ribbon_retrieval_open_unverified(&map, fw_retrieval + 1, bytes), RIBBON_OK,
                 "ribbon_retrieval_open_unverified");
    CHECK_STATUS(probe_ribbon_retrieval_open(&map, fw_retrieval + 1, bytes), RIBBON_OK, "ribbon_retrieval_open");
    CHECK_EQ(probe_ribbon_retrieval_value_bits(&map), value_bits, "ribbon_retrieval_value_bits");
    CHECK_EQ(probe_ribbon_retrieval_keys(&map), keys, "ribbon_retrieval_keys");
    CHECK_EQ(probe_ribbon_retrieval_bytes(&map), bytes, "ribbon_retrieval_bytes");
    for (i = 0; i < keys; i++) {
        wrong += probe_ribbon_retrieval_get(&map, fw_keys[i]) != fw_values[i];
    }
    CHECK_EQ(wrong, 0, "values wrong from ribbon_retrieval_get");
    wrong = 0;
    for (at = 0; at < keys; at += FW_CHUNK) {
        size_t n = keys - at < FW_CHUNK ? keys - at : FW_CHUNK;
        CHECK_STATUS(probe_ribbon_retrieval_get_batch(&map, fw_keys + at, n, fw_got), RIBBON_OK,
                     "ribbon_retrieval_get_batch");
        for (i = 0; i < n; i++) {
            wrong += fw_got[i] != fw_values[at + i];
        }
    }
    CHECK_EQ(wrong, 0, "values wrong from ribbon_retrieval_get_batch");
    /* Refusals go through the same checks: measure them too. */
    CHECK_STATUS(probe_ribbon_retrieval_open(&map, fw_retrieval + 1, bytes - 1), RIBBON_ERR_TRUNCATED,
                 "truncated retrieval bytes refused");
    CHECK_EQ(probe_ribbon_retrieval_get(&map, fw_keys[0]), 0, "ribbon_retrieval_get on a refused view");
    fw_keys[1] = fw_keys[0];
    fw_values[1] = fw_values[0] ^ 1;
    CHECK_STATUS(probe_ribbon_retrieval_build(&plan, fw_keys, fw_values, keys, fw_scratch, words,
                                              fw_retrieval + 1, probe_ribbon_retrieval_plan_bytes(&plan)),
                 RIBBON_ERR_CONFLICTING_VALUES, "conflicting values refused");
    CHECK_STATUS(probe_ribbon_retrieval_open(&map, fw_retrieval + 1, bytes), RIBBON_ERR_BAD_MAGIC,
                 "a failed retrieval build leaves no structure");
}

/* ---- Report ---- */

static void print_stack_table(void) {
    int id;
    out_str("\n### Peak stack per entry point: ");
    out_str(platform_name());
    out_str("\n\n| entry point | peak stack (bytes) | calls measured |\n|---|---:|---:|\n");
    for (id = 0; id < PROBE_COUNT; id++) {
        if (probe_results.calls[id] == 0) {
            continue;
        }
        out_str("| ");
        out_str(probe_names[id]);
        out_str(" | ");
        out_u64(probe_results.peak[id]);
        out_str(" | ");
        out_u64(probe_results.calls[id]);
        out_str(" |\n");
    }
    out_str("\nstack probe window: ");
    out_u64(probe_window_bytes);
    out_str(" bytes below the call site\n\n");
}

int firmware_main(void) {
    static const uint32_t widths[2] = {RIBBON_WIDTH_64, RIBBON_WIDTH_128};
    uint32_t kind, w;

    out_str("firmware_test: ");
    out_str(platform_name());
    out_char('\n');
    out_str("library ");
    out_str(ribbon_version_str());
    out_str(", header ");
    out_str(RIBBON_VERSION_STRING);
    out_char('\n');
    out_str("static buffers: filter ");
    out_u64(FW_FILTER_BYTES);
    out_str(" B, scratch ");
    out_u64(FW_SCRATCH_WORDS);
    out_str(" words, banding scratch ");
    out_u64(FW_BANDING_WORDS);
    out_str(" words\n");

    if (!CHECK(probe_init(), "the stack has room for the probe window")) {
        return 1;
    }
#if FW_INJECT_FAILURE == 1
    CHECK_STATUS(ribbon_plan_init(NULL, 0, 64, 10, 8000), RIBBON_OK,
                 "deliberately wrong expectation (FW_INJECT_FAILURE=1)");
    return checks_failed != 0;
#elif FW_INJECT_FAILURE == 2
    out_str("trapping on purpose (FW_INJECT_FAILURE=2)\n");
    __builtin_trap();
#endif

    test_api_basics();
    for (kind = RIBBON_KIND_HOMOGENEOUS; kind <= RIBBON_KIND_BUMPED; kind++) {
        for (w = 0; w < 2; w++) {
            test_shape(kind, widths[w]);
        }
    }

    test_retrieval(RIBBON_WIDTH_64, 8, FW_RETRIEVAL_KEYS);
    test_retrieval(RIBBON_WIDTH_128, 8, FW_RETRIEVAL_KEYS);
    test_retrieval(RIBBON_WIDTH_64, 1, FW_RETRIEVAL_KEYS);
    test_retrieval(RIBBON_WIDTH_128, 64, FW_RETRIEVAL_KEYS);
    test_retrieval(RIBBON_WIDTH_64, 8, FW_BUMPED_RETRIEVAL_KEYS);

    set_context(-1, -1, "stack probe");
    CHECK_EQ(probe_results.overflows, 0, "calls deeper than the probe window");
    CHECK_EQ(probe_results.unusable, 0, "calls where the probe window crossed the stack limit");
    print_stack_table();
    test_many_columns(64);
    test_many_columns(128);
    CHECK_EQ(probe_results.overflows, 0, "calls deeper than the probe window");

    out_u64(checks_run - checks_failed);
    out_str(" passed, ");
    out_u64(checks_failed);
    out_str(" failed\n");
    out_str(checks_failed == 0 ? "firmware_test: PASS\n" : "firmware_test: FAIL\n");
    return checks_failed == 0 ? 0 : 1;
}
