/*
 * start.c - a libc-free static Linux x86_64 executable: its own _start,
 * and console output and exit through raw write / exit_group syscalls.
 * Built with -ffreestanding -nostdlib -static and linked against the
 * x86_64-unknown-none archive (soft-float, no SIMD), like kernel code.
 */
#include <stdint.h>

#include "../platform.h"

/* The kernel enters _start with rsp pointing at argc, 16-byte aligned;
 * align again anyway, clear the frame pointer, and pass the entry sp. */
__asm__(
    ".text\n"
    ".globl _start\n"
    ".type _start, @function\n"
    "_start:\n"
    "    xor %ebp, %ebp\n"
    "    mov %rsp, %rdi\n"
    "    and $-16, %rsp\n"
    "    call bare_main\n"
    "    mov %eax, %edi\n"
    "    mov $231, %eax\n" /* exit_group */
    "    syscall\n"
    "    hlt\n"
    ".size _start, . - _start\n"

    /* The caller's rsp at its call instruction: skip the return address. */
    ".globl platform_stack_pointer\n"
    ".type platform_stack_pointer, @function\n"
    "platform_stack_pointer:\n"
    "    lea 8(%rsp), %rax\n"
    "    ret\n"
    ".size platform_stack_pointer, . - platform_stack_pointer\n");

static uintptr_t entry_sp;

static long syscall3(long nr, long a, long b, long c) {
    long ret;
    __asm__ volatile("syscall" : "=a"(ret) : "a"(nr), "D"(a), "S"(b), "d"(c) : "rcx", "r11", "memory");
    return ret;
}

void platform_write(const char *s) {
    long n = 0, done = 0;
    while (s[n] != '\0') {
        n++;
    }
    while (done < n) {
        long r = syscall3(1 /* write */, 1, (long)(s + done), n - done);
        if (r == -4 /* EINTR */) {
            continue;
        }
        if (r <= 0) {
            return;
        }
        done += r;
    }
}

void platform_exit(int code) {
    for (;;) {
        syscall3(231 /* exit_group */, code, 0, 0);
    }
}

/* The main thread's stack grows on demand up to RLIMIT_STACK (8 MiB by
 * default); the tests use at most 1 MiB of it. */
uintptr_t platform_stack_limit(void) {
    return entry_sp - 1024 * 1024;
}

size_t platform_probe_window(void) {
    return 64 * 1024;
}

const char *platform_name(void) {
    return "x86_64-unknown-none (static, no libc, Linux syscalls)";
}

int bare_main(uintptr_t sp);
int bare_main(uintptr_t sp) {
    entry_sp = sp;
    return firmware_main();
}
