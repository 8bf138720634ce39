/*
 * tests/c/packaging_app.c - a C program as a user of the installed package
 * writes it: built through pkg-config and through CMake's find_package by
 * tests/c/packaging.sh, and linked beside another Rust static library
 * (with -DWITH_OTHER_RUST_LIB, which calls that library too). Exits 0 and
 * prints "ok" when every check passes.
 */
#include <ribbon_kernel.h>
#include <stdio.h>
#include <string.h>

#ifdef WITH_OTHER_RUST_LIB
/* tests/c/other_rust_lib: 42, through std, a caught panic included. */
uint32_t other_answer(void);
#endif

#define KEYS 1000
static uint64_t scratch[RIBBON_SCRATCH_WORDS_MAX(RIBBON_KIND_STANDARD, RIBBON_WIDTH_64, KEYS, 8000)];
static uint8_t bytes[RIBBON_FILTER_BYTES_MAX(RIBBON_KIND_STANDARD, RIBBON_WIDTH_64, KEYS, 8000)];

static int fail(const char *what) {
    printf("FAILED: %s\n", what);
    return 1;
}

int main(void) {
    static uint64_t hashes[KEYS];
    ribbon_plan plan;
    ribbon_filter filter;
    size_t i, found = 0;
    char key[16];
    if (ribbon_version() != RIBBON_VERSION_NUMBER) return fail("ribbon_version");
    if (strcmp(ribbon_version_str(), RIBBON_VERSION_STRING) != 0) return fail("ribbon_version_str");
    for (i = 0; i < KEYS; i++) {
        int len = sprintf(key, "key%u", (unsigned)i);
        hashes[i] = ribbon_hash_key((const uint8_t *)key, (size_t)len);
    }
    if (ribbon_plan_init(&plan, RIBBON_KIND_STANDARD, RIBBON_WIDTH_64, KEYS, 8000) != RIBBON_OK)
        return fail("ribbon_plan_init");
    if (ribbon_build(&plan, hashes, KEYS, scratch, sizeof scratch / sizeof scratch[0], bytes,
                     sizeof bytes) != RIBBON_OK)
        return fail("ribbon_build");
    if (ribbon_filter_open(&filter, bytes, ribbon_plan_filter_bytes(&plan)) != RIBBON_OK)
        return fail("ribbon_filter_open");
    for (i = 0; i < KEYS; i++) found += ribbon_contains(&filter, hashes[i]) == 1;
    if (found != KEYS) return fail("a key is missing");
    printf("ribbon_kernel %s: %u keys in %u bytes", ribbon_version_str(), (unsigned)KEYS,
           (unsigned)ribbon_plan_filter_bytes(&plan));
#ifdef WITH_OTHER_RUST_LIB
    if (other_answer() != 42) return fail("other_answer");
    printf("; the other Rust library answers %u", (unsigned)other_answer());
#endif
    printf("\nok\n");
    return 0;
}
