/*
 * query_only.c - the smallest useful image: a filter built elsewhere is
 * embedded as a const byte array (query_filter.h, from gen_query_filter.c)
 * and only opened and queried, so that the image's .text shows what the
 * query side of the library costs in flash. It still checks its answers:
 * every member found, a plausible number of non-member hits.
 */
#include "ribbon_kernel.h"

#include "platform.h"
#include "splitmix.h"
#include "query_filter.h"

#define QUERIES 8192u
#define CHUNK 64u

static void put_u32(uint32_t v) {
    char buf[11];
    int i = 10;
    buf[i] = '\0';
    do {
        buf[--i] = (char)('0' + v % 10);
        v /= 10;
    } while (v != 0);
    platform_write(buf + i);
}

int firmware_main(void) {
    static ribbon_filter view;
    static uint64_t hashes[CHUNK];
    static uint8_t answers[CHUNK];
    uint64_t state = QO_SEED;
    uint32_t i, j, missing = 0, hits = 0, expected;
    int32_t st = ribbon_filter_open(&view, qo_filter, sizeof qo_filter);

    if (st != RIBBON_OK) {
        platform_write("FAIL: ribbon_filter_open of the embedded filter: ");
        platform_write(ribbon_status_str(st));
        platform_write("\n");
        return 1;
    }
    /* Members: the generator's keys, half one at a time, half in batches. */
    for (i = 0; i < QO_KEYS; i += CHUNK) {
        uint32_t n = QO_KEYS - i < CHUNK ? QO_KEYS - i : CHUNK;
        for (j = 0; j < n; j++) {
            hashes[j] = splitmix64(&state);
        }
        if ((i / CHUNK) % 2 == 0) {
            for (j = 0; j < n; j++) {
                missing += ribbon_contains(&view, hashes[j]) != 1;
            }
        } else {
            if (ribbon_contains_batch(&view, hashes, n, answers) != RIBBON_OK) {
                missing += n;
            }
            for (j = 0; j < n; j++) {
                missing += answers[j] != 1;
            }
        }
    }
    /* Non-members: fresh random hashes. */
    for (i = 0; i < QUERIES; i += CHUNK) {
        for (j = 0; j < CHUNK; j++) {
            hashes[j] = splitmix64(&state);
        }
        if (ribbon_contains_batch(&view, hashes, CHUNK, answers) != RIBBON_OK) {
            missing++;
        }
        for (j = 0; j < CHUNK; j++) {
            hits += answers[j];
        }
    }
    expected = (uint32_t)((QUERIES * QO_FP_PPT + 500000000000ull) / 1000000000000ull);
    platform_write("query_only: ");
    put_u32(QO_KEYS - missing);
    platform_write(" of ");
    put_u32(QO_KEYS);
    platform_write(" members found, ");
    put_u32(hits);
    platform_write(" of ");
    put_u32(QUERIES);
    platform_write(" non-members hit (expected ");
    put_u32(expected);
    platform_write(")\n");
    if (missing != 0 || hits > 4 * expected + 16 || 4 * hits + 16 < expected) {
        platform_write("query_only: FAIL\n");
        return 1;
    }
    platform_write("query_only: PASS\n");
    return 0;
}
