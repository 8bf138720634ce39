/* <stddef.h> for the portable test sources in a kernel module (see
 * stdint.h here). */
#ifndef RIBBON_KTEST_COMPAT_STDDEF_H
#define RIBBON_KTEST_COMPAT_STDDEF_H
#include <linux/stddef.h>
#include <linux/types.h>
#endif
