/*
 * splitmix.h - the key generator of the embedded tests. The query-only
 * image regenerates the keys gen_query_filter.c built its filter from, so
 * both must use this one definition.
 */
#ifndef RIBBON_EMBEDDED_SPLITMIX_H
#define RIBBON_EMBEDDED_SPLITMIX_H

#include <stdint.h>

/* splitmix64: the next 64-bit hash from *state. */
static uint64_t splitmix64(uint64_t *state) {
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

#endif
