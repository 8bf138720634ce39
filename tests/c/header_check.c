/*
 * tests/c/header_check.c - every macro of include/ribbon_kernel.h, used
 * once, in C and in C++ under the strictest warnings (tests/c_abi.rs
 * compiles it as C99 and C11 with -Wconversion -Wsign-conversion and as
 * C++11 and C++17 with -Wold-style-cast -Wconversion -Wuseless-cast, all
 * with -Werror, for the host and with -m32; tests/c_abi.rs also checks that
 * this file names every macro the header defines). It is valid C and C++
 * alike, and needs no cast itself.
 */
#include "ribbon_kernel.h"

/* The bounds as integer constant expressions: static array sizes. */
#define CHECK_KEYS 10000u
static uint8_t filter_hom[RIBBON_FILTER_BYTES_MAX(RIBBON_KIND_HOMOGENEOUS, RIBBON_WIDTH_64,
                                                  CHECK_KEYS, 7700)];
static uint64_t scratch_std[RIBBON_SCRATCH_WORDS_MAX(RIBBON_KIND_STANDARD, RIBBON_WIDTH_128,
                                                     CHECK_KEYS, 12000)];
static uint64_t banding_smash[RIBBON_BANDING_SCRATCH_WORDS_MAX(RIBBON_KIND_STANDARD_SMASH,
                                                               RIBBON_WIDTH_64, CHECK_KEYS, 9000)];
static uint8_t filter_bumped[RIBBON_FILTER_BYTES_MAX(RIBBON_KIND_BUMPED, RIBBON_WIDTH_128,
                                                     CHECK_KEYS, 16500)];
static uint64_t scratch_bumped[RIBBON_SCRATCH_WORDS_MAX(RIBBON_KIND_BUMPED, RIBBON_WIDTH_64,
                                                        CHECK_KEYS, 7700)];
static uint8_t prefix[RIBBON_SIZE_PREFIX_BYTES];

/* The same bounds from run-time values of the C API's own types. */
size_t check_bounds(uint32_t kind, uint32_t width, uint64_t keys, uint32_t millibits,
                    size_t out[3]);
size_t check_bounds(uint32_t kind, uint32_t width, uint64_t keys, uint32_t millibits,
                    size_t out[3]) {
    out[0] = RIBBON_FILTER_BYTES_MAX(kind, width, keys, millibits);
    out[1] = RIBBON_SCRATCH_WORDS_MAX(kind, width, keys, millibits);
    out[2] = RIBBON_BANDING_SCRATCH_WORDS_MAX(kind, width, keys, millibits);
    return sizeof filter_hom + sizeof scratch_std + sizeof banding_smash + sizeof filter_bumped +
           sizeof scratch_bumped + sizeof prefix;
}

/* Every other macro, in the type a caller compares it with. */
int check_constants(void);
int check_constants(void) {
    static const uint32_t kinds[] = {RIBBON_KIND_HOMOGENEOUS, RIBBON_KIND_STANDARD,
                                     RIBBON_KIND_STANDARD_SMASH, RIBBON_KIND_BUMPED};
    static const uint32_t widths[] = {RIBBON_WIDTH_64, RIBBON_WIDTH_128};
    static const uint32_t backends[] = {RIBBON_BACKEND_SCALAR, RIBBON_BACKEND_AVX2,
                                        RIBBON_BACKEND_AVX512, RIBBON_BACKEND_NEON,
                                        RIBBON_BACKEND_PORTABLE, RIBBON_BACKEND_AUTO};
    static const int32_t adds[] = {RIBBON_ADD_INSERTED, RIBBON_ADD_REDUNDANT,
                                   RIBBON_ADD_INCONSISTENT, RIBBON_ADD_FULL};
    static const int32_t statuses[] = {
        RIBBON_OK,
        RIBBON_ERR_NULL,
        RIBBON_ERR_INVALID_BITS_PER_KEY,
        RIBBON_ERR_INVALID_FP_RATE,
        RIBBON_ERR_BUDGET_TOO_SMALL,
        RIBBON_ERR_TOO_MANY_KEYS,
        RIBBON_ERR_TOO_LARGE,
        RIBBON_ERR_SCRATCH_TOO_SMALL,
        RIBBON_ERR_OUTPUT_TOO_SMALL,
        RIBBON_ERR_LENGTH_MISMATCH,
        RIBBON_ERR_CONSTRUCTION_FAILED,
        RIBBON_ERR_BAD_MAGIC,
        RIBBON_ERR_UNSUPPORTED_VERSION,
        RIBBON_ERR_CORRUPT_HEADER,
        RIBBON_ERR_TRUNCATED,
        RIBBON_ERR_TRAILING_BYTES,
        RIBBON_ERR_BACKEND_UNAVAILABLE,
        RIBBON_ERR_INVALID_ARGUMENT,
        RIBBON_ERR_MISALIGNED,
        RIBBON_ERR_UNINITIALIZED,
        RIBBON_ERR_OVERLAP,
        RIBBON_ERR_UNSUPPORTED,
        RIBBON_ERR_INVALID_VALUE_BITS,
        RIBBON_ERR_VALUE_TOO_WIDE,
        RIBBON_ERR_CONFLICTING_VALUES,
        RIBBON_ERR_CHECKSUM_MISMATCH,
    };
    static const char version[] = RIBBON_VERSION_STRING;
    const uint32_t number = RIBBON_VERSION_NUMBER;
    const uint32_t parts = (RIBBON_VERSION_MAJOR << 16) | (RIBBON_VERSION_MINOR << 8) |
                           RIBBON_VERSION_PATCH;
    return number == parts && sizeof version > 1 && kinds[3] == 3u && widths[1] == 128u &&
           backends[5] == 0xffffffffu && adds[3] == 3 && statuses[25] == -25 &&
           ribbon_version() == number;
}
