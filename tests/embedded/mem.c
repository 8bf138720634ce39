/*
 * mem.c - the memory functions a freestanding image must bring: the Rust
 * archive calls memcpy/memset (x86_64) or the Arm EABI __aeabi_mem*
 * helpers (thumbv7em), and GCC may emit memcpy/memset/memmove/memcmp for
 * struct copies and loops even with -ffreestanding.
 *
 * Compile with -fno-builtin -fno-tree-loop-distribute-patterns so that the
 * compiler does not turn these loops back into calls to themselves.
 * Aligned runs are copied a machine word at a time (may_alias keeps the
 * word accesses legal under strict aliasing), the rest byte by byte.
 */
#include <stddef.h>
#include <stdint.h>

typedef uintptr_t __attribute__((may_alias)) mem_word;
#define WORD sizeof(mem_word)
#define ALIGNED(p) (((uintptr_t)(p) & (WORD - 1)) == 0)

void *memcpy(void *restrict dest, const void *restrict src, size_t n);
void *memmove(void *dest, const void *src, size_t n);
void *memset(void *dest, int c, size_t n);
int memcmp(const void *a, const void *b, size_t n);
int bcmp(const void *a, const void *b, size_t n);

void *memcpy(void *restrict dest, const void *restrict src, size_t n) {
    unsigned char *d = (unsigned char *)dest;
    const unsigned char *s = (const unsigned char *)src;
    if (ALIGNED(d) && ALIGNED(s)) {
        for (; n >= WORD; n -= WORD, d += WORD, s += WORD) {
            *(mem_word *)d = *(const mem_word *)s;
        }
    }
    for (; n > 0; n--) {
        *d++ = *s++;
    }
    return dest;
}

void *memmove(void *dest, const void *src, size_t n) {
    unsigned char *d = (unsigned char *)dest;
    const unsigned char *s = (const unsigned char *)src;
    if (d == s || n == 0) {
        return dest;
    }
    if ((uintptr_t)d < (uintptr_t)s) {
        /* Forward: each word is read before the write that could clobber it. */
        if (ALIGNED(d) && ALIGNED(s)) {
            for (; n >= WORD; n -= WORD, d += WORD, s += WORD) {
                *(mem_word *)d = *(const mem_word *)s;
            }
        }
        for (; n > 0; n--) {
            *d++ = *s++;
        }
    } else {
        /* Backward from the end. */
        d += n;
        s += n;
        if (ALIGNED(d) && ALIGNED(s)) {
            for (; n >= WORD; n -= WORD) {
                d -= WORD;
                s -= WORD;
                *(mem_word *)d = *(const mem_word *)s;
            }
        }
        for (; n > 0; n--) {
            *--d = *--s;
        }
    }
    return dest;
}

void *memset(void *dest, int c, size_t n) {
    unsigned char *d = (unsigned char *)dest;
    unsigned char byte = (unsigned char)c;
    for (; n > 0 && !ALIGNED(d); n--) {
        *d++ = byte;
    }
    if (n >= WORD) {
        mem_word fill = (mem_word)-1 / 0xff * byte; /* byte in every lane */
        for (; n >= WORD; n -= WORD, d += WORD) {
            *(mem_word *)d = fill;
        }
    }
    for (; n > 0; n--) {
        *d++ = byte;
    }
    return dest;
}

int memcmp(const void *a, const void *b, size_t n) {
    const unsigned char *x = (const unsigned char *)a;
    const unsigned char *y = (const unsigned char *)b;
    for (; n > 0; n--, x++, y++) {
        if (*x != *y) {
            return *x < *y ? -1 : 1;
        }
    }
    return 0;
}

int bcmp(const void *a, const void *b, size_t n) {
    return memcmp(a, b, n);
}

#if defined(__arm__)
/* Arm run-time ABI helpers (RTABI 4.3.4). Note the argument order of
 * __aeabi_memset: (dest, n, c). The 4/8 variants only promise alignment. */
void __aeabi_memcpy(void *dest, const void *src, size_t n);
void __aeabi_memcpy4(void *dest, const void *src, size_t n);
void __aeabi_memcpy8(void *dest, const void *src, size_t n);
void __aeabi_memmove(void *dest, const void *src, size_t n);
void __aeabi_memmove4(void *dest, const void *src, size_t n);
void __aeabi_memmove8(void *dest, const void *src, size_t n);
void __aeabi_memset(void *dest, size_t n, int c);
void __aeabi_memset4(void *dest, size_t n, int c);
void __aeabi_memset8(void *dest, size_t n, int c);
void __aeabi_memclr(void *dest, size_t n);
void __aeabi_memclr4(void *dest, size_t n);
void __aeabi_memclr8(void *dest, size_t n);

void __aeabi_memcpy(void *dest, const void *src, size_t n) { memcpy(dest, src, n); }
void __aeabi_memcpy4(void *dest, const void *src, size_t n) { memcpy(dest, src, n); }
void __aeabi_memcpy8(void *dest, const void *src, size_t n) { memcpy(dest, src, n); }
void __aeabi_memmove(void *dest, const void *src, size_t n) { memmove(dest, src, n); }
void __aeabi_memmove4(void *dest, const void *src, size_t n) { memmove(dest, src, n); }
void __aeabi_memmove8(void *dest, const void *src, size_t n) { memmove(dest, src, n); }
void __aeabi_memset(void *dest, size_t n, int c) { memset(dest, c, n); }
void __aeabi_memset4(void *dest, size_t n, int c) { memset(dest, c, n); }
void __aeabi_memset8(void *dest, size_t n, int c) { memset(dest, c, n); }
void __aeabi_memclr(void *dest, size_t n) { memset(dest, 0, n); }
void __aeabi_memclr4(void *dest, size_t n) { memset(dest, 0, n); }
void __aeabi_memclr8(void *dest, size_t n) { memset(dest, 0, n); }
#endif
