/* <stdint.h> for the portable test sources (tests/embedded/) compiled in a
 * Linux kernel module, where the C library's headers are not on the path:
 * the kernel's own types. */
#ifndef RIBBON_KTEST_COMPAT_STDINT_H
#define RIBBON_KTEST_COMPAT_STDINT_H
#include <linux/types.h>
#include <linux/limits.h>
#endif
