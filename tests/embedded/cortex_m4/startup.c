/*
 * startup.c - bare-metal start-up and platform hooks for a Cortex-M4 under
 * QEMU (mps2-an386): vector table, reset handler, fault handlers, and
 * console output and exit status through Arm semihosting.
 *
 * Run with: qemu-system-arm -M mps2-an386 -nographic
 *               -semihosting-config enable=on,target=native -kernel fw.elf
 * QEMU's exit status is the program's (0 success, non-zero failure).
 */
#include <stdint.h>

#include "../platform.h"

/* Symbols of mps2_an386.ld. */
extern uint32_t __stack_limit[], __stack_top[];
extern uint32_t __data_start[], __data_end[], __data_load[];
extern uint32_t __bss_start[], __bss_end[];

/* ---- Semihosting (Arm semihosting v2, BKPT 0xAB on M-profile) ---- */

#define SYS_WRITE0 0x04
#define SYS_EXIT 0x18
#define SYS_EXIT_EXTENDED 0x20
#define ADP_STOPPED_APPLICATION_EXIT 0x20026u
#define ADP_STOPPED_RUN_TIME_ERROR 0x20023u

static uint32_t semihost(uint32_t op, const void *arg) {
    register uint32_t r0 __asm__("r0") = op;
    register const void *r1 __asm__("r1") = arg;
    __asm__ volatile("bkpt 0xab" : "+r"(r0) : "r"(r1) : "memory");
    return r0;
}

void platform_write(const char *s) {
    semihost(SYS_WRITE0, s);
}

void platform_exit(int code) {
    /* SYS_EXIT_EXTENDED carries the status itself; a host without it
     * returns, and plain SYS_EXIT then reports success or a run-time
     * error (QEMU: exit status 0 or 1). */
    uint32_t block[2] = {ADP_STOPPED_APPLICATION_EXIT, (uint32_t)code};
    semihost(SYS_EXIT_EXTENDED, block);
    semihost(SYS_EXIT, (const void *)(uintptr_t)(code == 0 ? ADP_STOPPED_APPLICATION_EXIT
                                                           : ADP_STOPPED_RUN_TIME_ERROR));
    for (;;) {
        __asm__ volatile("wfi");
    }
}

/* Returns the caller's sp: bl does not touch the stack. */
__attribute__((naked)) uintptr_t platform_stack_pointer(void) {
    __asm__ volatile("mov r0, sp\n\tbx lr\n");
}

uintptr_t platform_stack_limit(void) {
    return (uintptr_t)__stack_limit;
}

size_t platform_probe_window(void) {
    return 32 * 1024;
}

const char *platform_name(void) {
    return "thumbv7em-none-eabihf (Cortex-M4F, QEMU mps2-an386)";
}

/* ---- Fault reporting ---- */

static void put_hex(const char *label, uint32_t v) {
    char buf[24];
    int i;
    for (i = 0; label[i] != '\0' && i < 8; i++) {
        buf[i] = label[i];
    }
    buf[i++] = '=';
    buf[i++] = '0';
    buf[i++] = 'x';
    for (int shift = 28; shift >= 0; shift -= 4) {
        buf[i++] = "0123456789abcdef"[(v >> shift) & 0xf];
    }
    buf[i++] = ' ';
    buf[i] = '\0';
    platform_write(buf);
}

#define SCB_CFSR (*(volatile uint32_t *)0xE000ED28u)
#define SCB_HFSR (*(volatile uint32_t *)0xE000ED2Cu)
#define SCB_MMFAR (*(volatile uint32_t *)0xE000ED34u)
#define SCB_BFAR (*(volatile uint32_t *)0xE000ED38u)

/* Called by the handlers below with the exception frame the core pushed
 * (r0-r3, r12, lr, pc, xpsr) and the exception number. */
void fault_report(const uint32_t *frame, uint32_t exception);
void fault_report(const uint32_t *frame, uint32_t exception) {
    platform_write("\nFATAL: ");
    platform_write(exception == 3 ? "HardFault" : "unexpected exception");
    platform_write("\n  ");
    put_hex("exc", exception);
    put_hex("pc", frame[6]);
    put_hex("lr", frame[5]);
    put_hex("xpsr", frame[7]);
    platform_write("\n  ");
    put_hex("cfsr", SCB_CFSR);
    put_hex("hfsr", SCB_HFSR);
    put_hex("mmfar", SCB_MMFAR);
    put_hex("bfar", SCB_BFAR);
    platform_write("\n  ");
    put_hex("r0", frame[0]);
    put_hex("r1", frame[1]);
    put_hex("r2", frame[2]);
    put_hex("r3", frame[3]);
    put_hex("sp", (uint32_t)(uintptr_t)frame);
    platform_write("\n");
    platform_exit(3);
}

/* Every exception lands here: pick the stack the frame was pushed on
 * (bit 2 of EXC_RETURN) and the exception number (IPSR). */
__attribute__((naked)) void Fault_Handler(void) {
    __asm__ volatile(
        "tst lr, #4\n\t"
        "ite eq\n\t"
        "mrseq r0, msp\n\t"
        "mrsne r0, psp\n\t"
        "mrs r1, ipsr\n\t"
        "b fault_report\n");
}

/* ---- Reset ---- */

void Reset_Handler(void);

/* .data copy and .bss clear; compiled with -fno-tree-loop-distribute-patterns
 * so they stay loops and do not call memcpy/memset. */
static void init_memory(void) {
    uint32_t *src = __data_load, *dst = __data_start;
    while (dst < __data_end) {
        *dst++ = *src++;
    }
    for (dst = __bss_start; dst < __bss_end; dst++) {
        *dst = 0;
    }
}

__attribute__((naked, noreturn)) void Reset_Handler(void) {
    /* Full access to the FPU (CP10, CP11) before any C code: the image is
     * built for the hard-float ABI. Then a fresh stack and C. */
    __asm__ volatile(
        "ldr r0, =0xE000ED88\n\t"
        "ldr r1, [r0]\n\t"
        "orr r1, r1, #(0xF << 20)\n\t"
        "str r1, [r0]\n\t"
        "dsb\n\t"
        "isb\n\t"
        "ldr r0, =__stack_top\n\t"
        "mov sp, r0\n\t"
        "b reset_c\n");
}

PLATFORM_NORETURN void reset_c(void);
PLATFORM_NORETURN void reset_c(void) {
    init_memory();
    platform_exit(firmware_main());
}

/* ---- Vector table (the 16 system exceptions; no interrupt is enabled) ---- */

typedef void (*vector)(void);

__attribute__((section(".vectors"), used)) static const vector vectors[16] = {
    (vector)(uintptr_t)__stack_top, /* initial SP */
    Reset_Handler,
    Fault_Handler, /* NMI */
    Fault_Handler, /* HardFault */
    Fault_Handler, /* MemManage */
    Fault_Handler, /* BusFault */
    Fault_Handler, /* UsageFault */
    0,
    0,
    0,
    0,
    Fault_Handler, /* SVCall */
    Fault_Handler, /* DebugMonitor */
    0,
    Fault_Handler, /* PendSV */
    Fault_Handler, /* SysTick */
};
