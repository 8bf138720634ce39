/*
 * platform.h - what a freestanding test image provides to the portable
 * tests (firmware_test.c, query_only.c).
 *
 * Each platform directory (cortex_m4/, x86_64_bare/) implements these hooks
 * plus the C entry into firmware_main(). Nothing else of a C library is
 * used: no malloc, no stdio, no string.h beyond the mem* functions of mem.c
 * that the Rust archive and the compiler need.
 */
#ifndef RIBBON_EMBEDDED_PLATFORM_H
#define RIBBON_EMBEDDED_PLATFORM_H

#include <stddef.h>
#include <stdint.h>

#if defined(__GNUC__) || defined(__clang__)
#define PLATFORM_NOINLINE __attribute__((__noinline__))
#define PLATFORM_ALWAYS_INLINE inline __attribute__((__always_inline__))
/* A build may define it empty: a Linux module's objtool cannot see that a
 * function in another object never returns, and reports the call's
 * caller as falling through. */
#ifndef PLATFORM_NORETURN
#define PLATFORM_NORETURN __attribute__((__noreturn__))
#endif
#else
#error "these tests need GCC or Clang (attributes and inline assembly)"
#endif

/* Writes a NUL-terminated string to the console (no newline added). */
void platform_write(const char *s);

/* Ends the program with this status (0: success). Never returns. */
PLATFORM_NORETURN void platform_exit(int code);

/* The caller's stack pointer at the call instruction: the value the stack
 * pointer will have again when the caller makes its next call. Written in
 * assembly so that it has no frame of its own. */
uintptr_t platform_stack_pointer(void);

/* The lowest address the stack may reach; the probes refuse to paint
 * below it. */
uintptr_t platform_stack_limit(void);

/* Bytes below the stack pointer the stack probes paint and scan: an upper
 * bound for any measured call's depth (a call reaching the bottom of the
 * window is reported as a failure, never as a number). */
size_t platform_probe_window(void);

/* Optional: PLATFORM_PROBE_HOOKS=1 (set by the platform's build) calls
 * these around each measured call, before the paint and after the scan
 * (the kernel module turns interrupts off in between). */
#ifndef PLATFORM_PROBE_HOOKS
#define PLATFORM_PROBE_HOOKS 0
#endif
#if PLATFORM_PROBE_HOOKS
void platform_probe_begin(void);
void platform_probe_end(void);
#endif

/* A short name of the target for the report ("thumbv7em", ...). */
const char *platform_name(void);

/* The test program: 0 on success. Called by the platform's entry code,
 * which passes the result to platform_exit. */
int firmware_main(void);

#endif
