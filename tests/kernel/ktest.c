// SPDX-License-Identifier: MIT OR Apache-2.0
/*
 * ktest.c - ribbon-kernel's C ABI inside a running Linux kernel.
 *
 * An out-of-tree module (Kbuild here; tests/kernel/run.sh builds it against
 * Debian's headers and loads it in a kernel booted under QEMU). Loading it
 * runs, on a kernel thread of its own (16 KiB stack, nothing below it):
 *
 *  1. the portable firmware test (tests/embedded/firmware_test.c): every
 *     kind and width from static buffers, corrupted and truncated bytes,
 *     streaming builds, retrieval, and the peak stack of every C entry
 *     point, painted and scanned on this thread's stack with interrupts
 *     off around each measured call;
 *  2. this file's checks at kernel sizes, from vmalloc buffers: filters of
 *     every kind and both widths from 10^5 keys and one of 10^6, every
 *     member found (single and batch), the FP rate of 10^6 non-members
 *     within a binomial tolerance of the filter's own estimate, flipped
 *     bytes refused, retrieval structures, a streaming build equal byte
 *     for byte to the one-call build;
 *  3. every backend the CPU offers, SIMD ones only between
 *     kernel_fpu_begin() and kernel_fpu_end() in batches of
 *     KTEST_FPU_CHUNK keys, answering exactly as the scalar one does; a
 *     timing table of single and batch queries per backend.
 *
 * Every check prints "ribbon_ktest: ok ..." or "ribbon_ktest: FAIL ...";
 * the last line is "ribbon_ktest: PASS ..." or "ribbon_ktest: FAIL ...".
 * run.sh fails on any FAIL, oops, BUG or WARNING, or a missing last line.
 *
 * KTEST_INJECT_FALSE_NEGATIVE=1 (run.sh --inject) drops one member from
 * the keys a filter is built from and still expects it back: the check
 * must fail, and CI with it.
 */
#include <linux/completion.h>
#include <linux/irqflags.h>
#include <linux/kernel.h>
#include <linux/kthread.h>
#include <linux/ktime.h>
#include <linux/math.h>
#include <linux/math64.h>
#include <linux/module.h>
#include <linux/sched/task_stack.h>
#include <linux/string.h>
#include <linux/vmalloc.h>
#include <asm/cpufeature.h>
#include <asm/fpu/api.h>

#include "ribbon_kernel.h"

#include "platform.h"
#include "splitmix.h"

#ifndef KTEST_INJECT_FALSE_NEGATIVE
#define KTEST_INJECT_FALSE_NEGATIVE 0
#endif

/* Keys per batch call between kernel_fpu_begin() and kernel_fpu_end():
 * preemption is off in between, so each stretch is bounded (1024 keys:
 * a few to a few tens of microseconds, see docs/c-guide.md). */
#define KTEST_FPU_CHUNK 1024u
#define KTEST_KEYS 100000u
#define KTEST_BIG_KEYS 1000000u
#define KTEST_QUERIES 1000000u
#define KTEST_MILLIBITS 7700u

static unsigned int checks_run, checks_failed;

/* ---- The platform hooks of tests/embedded/platform.h ---- */

static char line_buf[256];
static size_t line_len;

static void flush_line(void)
{
	line_buf[line_len] = '\0';
	pr_info("ribbon_ktest: %s\n", line_buf);
	line_len = 0;
}

void platform_write(const char *s)
{
	for (; *s != '\0'; s++) {
		if (*s == '\n') {
			flush_line();
		} else {
			if (line_len == sizeof(line_buf) - 1)
				flush_line();
			line_buf[line_len++] = *s;
		}
	}
}

static DECLARE_COMPLETION(ktest_done);
static int ktest_status = -1;

void platform_exit(int code)
{
	if (line_len != 0)
		flush_line();
	pr_info("ribbon_ktest: FAIL firmware test stopped early (%d)\n", code);
	ktest_status = code ? code : 1;
	kthread_complete_and_exit(&ktest_done, 0);
}

/* The caller's stack pointer at its call instruction: this function's
 * frame pointer (the frame address asks for one) is two words below it,
 * the return address and the saved frame pointer. */
noinline uintptr_t platform_stack_pointer(void)
{
	return (uintptr_t)__builtin_frame_address(0) + 2 * sizeof(void *);
}

/* The bottom of this thread's stack, above the end marker word. */
uintptr_t platform_stack_limit(void)
{
	return (uintptr_t)task_stack_page(current) + 64;
}

size_t platform_probe_window(void)
{
	return 8 * 1024;
}

const char *platform_name(void)
{
	return "Linux kernel module (x86_64, kernel thread)";
}

/* Interrupts off around each measured call (stack_probe.h calls these
 * before painting and after scanning), so that an interrupt's frame on
 * this stack is never counted as the call's. */
static unsigned long probe_irq_flags;

void platform_probe_begin(void)
{
	local_irq_save(probe_irq_flags);
}

void platform_probe_end(void)
{
	local_irq_restore(probe_irq_flags);
}

/* ---- Checks ---- */

static bool check(bool ok, const char *fmt, ...)
{
	struct va_format vaf;
	va_list args;

	va_start(args, fmt);
	vaf.fmt = fmt;
	vaf.va = &args;
	checks_run++;
	if (!ok)
		checks_failed++;
	pr_info("ribbon_ktest: %s %pV\n", ok ? "ok" : "FAIL", &vaf);
	va_end(args);
	return ok;
}

static const char *kind_name(u32 kind)
{
	static const char *const names[] = { "Homogeneous", "Standard", "StandardSmash", "Bumped" };

	return kind < 4 ? names[kind] : "?";
}

static const char *backend_name(u32 backend)
{
	static const char *const names[] = { "scalar", "avx2", "avx512", "neon", "portable" };

	return backend < 5 ? names[backend] : "?";
}

static void fill_keys(u64 *keys, size_t n, u64 seed)
{
	size_t i;

	for (i = 0; i < n; i++)
		keys[i] = splitmix64(&seed);
}

/* Whether backend uses vector registers: callers bracket its calls. */
static bool uses_fpu(u32 backend)
{
	return backend == RIBBON_BACKEND_AVX2 || backend == RIBBON_BACKEND_AVX512;
}

/* ribbon_contains_batch over n hashes in chunks of KTEST_FPU_CHUNK, each
 * between kernel_fpu_begin() and kernel_fpu_end() when fpu is set. */
static int batch_in_chunks(const ribbon_filter *f, const u64 *hashes, size_t n, u8 *out, bool fpu)
{
	size_t at;
	int s = RIBBON_OK;

	for (at = 0; at < n && s == RIBBON_OK; at += KTEST_FPU_CHUNK) {
		size_t len = min_t(size_t, KTEST_FPU_CHUNK, n - at);

		if (fpu)
			kernel_fpu_begin();
		s = ribbon_contains_batch(f, hashes + at, len, out + at);
		if (fpu)
			kernel_fpu_end();
		cond_resched();
	}
	return s;
}

/* The filter in bytes (len) of keys[0..n], built from keys[0..built]
 * (all of them, but for the injected false negative): every member found
 * by single and batch queries, the FP rate of the non-members within a
 * binomial tolerance of the filter's own estimate, and single-bit flips
 * anywhere refused by the verified open. */
static void check_view(const char *name, u8 *bytes, size_t len, const u64 *keys, size_t n,
		       size_t built, const u64 *others, size_t queries)
{
	ribbon_filter view;
	u8 *answers = vmalloc(max(n, queries));
	size_t i, missing = 0, single_missing = 0, fp = 0, refused = 0;
	u64 est_ppt, expected, tol;
	int s;

	s = ribbon_filter_open(&view, bytes, len);
	if (!check(s == RIBBON_OK && answers, "%s: open (%d)", name, s))
		goto out;
	for (i = 0; i < n; i++)
		single_missing += ribbon_contains(&view, keys[i]) != 1;
	s = batch_in_chunks(&view, keys, n, answers, false);
	for (i = 0; i < n; i++)
		missing += answers[i] != 1;
	check(s == RIBBON_OK && missing == 0 && single_missing == 0,
	      "%s: members found (%zu of them built): single %zu missing, batch %zu missing", name,
	      built, single_missing, missing);

	s = batch_in_chunks(&view, others, queries, answers, false);
	for (i = 0; i < queries; i++)
		fp += answers[i];
	/* Binomial: expected q p, tolerance 6 standard deviations plus 6
	 * (integers only: no floating point in a kernel). */
	est_ppt = ribbon_filter_estimated_fp_ppt(&view);
	expected = div64_u64((u64)queries * est_ppt, 1000000000000ull);
	tol = int_sqrt64(expected) * 6 + 6;
	check(s == RIBBON_OK && fp + tol >= expected && fp <= expected + tol,
	      "%s: %zu false positives in %zu non-members, estimate %llu, tolerance %llu", name, fp,
	      queries, expected, tol);

	for (i = 0; i < 16; i++) {
		size_t at = (size_t)div64_u64((u64)len * i, 16) + i;
		ribbon_filter bad;

		if (at >= len)
			continue;
		bytes[at] ^= 0x10;
		refused += ribbon_filter_open(&bad, bytes, len) < 0;
		bytes[at] ^= 0x10;
	}
	check(refused == 16, "%s: %zu of 16 single-bit corruptions refused", name, refused);
out:
	vfree(answers);
}

/* One filter of n keys built by ribbon_build from vmalloc buffers, then
 * check_view. The bytes stay in *bytes_out (vmalloc'd, *len_out long)
 * when asked for, for the backend checks. */
static bool check_filter(u32 kind, u32 width, size_t n, const u64 *keys, const u64 *others,
			 size_t queries, u8 **bytes_out, size_t *len_out)
{
	ribbon_plan plan;
	u64 *scratch = NULL;
	u8 *bytes = NULL;
	size_t words, cap, len = 0, built = n;
	int s;
	bool ok = false;
	char name[48];

	snprintf(name, sizeof(name), "%s w%u n=%zu", kind_name(kind), width, n);
	s = ribbon_plan_init(&plan, kind, width, n, KTEST_MILLIBITS);
	if (!check(s == RIBBON_OK, "%s: plan (%d)", name, s))
		return false;
	words = ribbon_plan_scratch_words(&plan);
	cap = ribbon_plan_filter_bytes(&plan);
	scratch = vmalloc(array_size(words, sizeof(u64)));
	bytes = vmalloc(cap);
	if (!check(scratch && bytes, "%s: vmalloc %zu + %zu bytes", name, words * 8, cap))
		goto out;
	if (KTEST_INJECT_FALSE_NEGATIVE && kind == RIBBON_KIND_HOMOGENEOUS && width == 64)
		built = n - 1; /* the last key is left out, and still expected */
	s = ribbon_build(&plan, keys, built, scratch, words, bytes, cap);
	if (!check(s == RIBBON_OK, "%s: build (%d)", name, s))
		goto out;
	s = ribbon_filter_size(bytes, cap, &len);
	if (!check(s == RIBBON_OK && len <= cap, "%s: size %zu of %zu planned (%d)", name, len, cap, s))
		goto out;
	check_view(name, bytes, len, keys, n, built, others, queries);
	ok = true;
out:
	vfree(scratch);
	if (ok && bytes_out) {
		*bytes_out = bytes;
		*len_out = len;
	} else {
		vfree(bytes);
	}
	return ok;
}

/* A streaming build (ribbon_banding_*, no copy of the keys) of the same
 * keys: every member found, the FP rate within tolerance. (Its bytes may
 * differ from ribbon_build's: the two add keys in different orders.) */
static void check_streaming(u32 kind, u32 width, size_t n, const u64 *keys, const u64 *others,
			    size_t queries)
{
	ribbon_plan plan;
	ribbon_banding banding;
	u64 *scratch;
	u8 *bytes;
	size_t bwords, cap, i;
	int s, added;
	char name[48];

	snprintf(name, sizeof(name), "%s w%u n=%zu streaming", kind_name(kind), width, n);
	if (ribbon_plan_init(&plan, kind, width, n, KTEST_MILLIBITS) != RIBBON_OK)
		return;
	bwords = ribbon_plan_banding_scratch_words(&plan);
	cap = ribbon_plan_filter_bytes(&plan);
	scratch = vmalloc(array_size(bwords, sizeof(u64)));
	bytes = vmalloc(cap);
	if (!check(scratch && bytes, "%s: vmalloc %zu + %zu bytes", name, bwords * 8, cap))
		goto out;
	/* As the header's example: add until the banding is full (about 97 %
	 * of the planned keys for Homogeneous Ribbon) or, for the Standard
	 * kinds, a key is inconsistent; every key added before is a member. */
	s = ribbon_banding_init(&banding, &plan, scratch, bwords);
	for (i = 0; i < n && s == RIBBON_OK; i++) {
		added = ribbon_banding_add(&banding, keys[i]);
		if (added < 0)
			s = added;
		if (added == RIBBON_ADD_FULL || added == RIBBON_ADD_INCONSISTENT)
			break;
	}
	if (s == RIBBON_OK)
		s = ribbon_banding_finish(&banding, bytes, cap);
	if (check(s == RIBBON_OK && i > 0,
		  "%s: %zu banding words, %zu keys added (capacity %llu), built (%d)", name, bwords, i,
		  ribbon_plan_banding_capacity(&plan), s))
		check_view(name, bytes, cap, keys, i, i, others, queries);
out:
	vfree(scratch);
	vfree(bytes);
}

static void check_retrieval(u32 width, u32 value_bits, size_t n, const u64 *keys)
{
	ribbon_retrieval_plan plan;
	ribbon_retrieval map;
	u64 *scratch = NULL, *values = NULL, *got = NULL;
	u64 mask = value_bits >= 64 ? ~0ull : (1ull << value_bits) - 1;
	u8 *bytes = NULL;
	size_t words, cap, len = 0, i, wrong = 0;
	int s;

	s = ribbon_retrieval_plan_init(&plan, width, n, value_bits);
	if (!check(s == RIBBON_OK, "retrieval w%u %u-bit n=%zu: plan (%d)", width, value_bits, n, s))
		return;
	words = ribbon_retrieval_plan_scratch_words(&plan);
	cap = ribbon_retrieval_plan_bytes(&plan);
	scratch = vmalloc(array_size(words, sizeof(u64)));
	values = vmalloc(array_size(n, sizeof(u64)));
	got = vmalloc(array_size(n, sizeof(u64)));
	bytes = vmalloc(cap);
	if (!check(scratch && values && got && bytes, "retrieval w%u: buffers", width))
		goto out;
	for (i = 0; i < n; i++)
		values[i] = (keys[i] * 0x9e3779b97f4a7c15ull) & mask;
	s = ribbon_retrieval_build(&plan, keys, values, n, scratch, words, bytes, cap);
	if (s == RIBBON_OK)
		s = ribbon_retrieval_size(bytes, cap, &len);
	if (s == RIBBON_OK)
		s = ribbon_retrieval_open(&map, bytes, len);
	if (s == RIBBON_OK)
		s = ribbon_retrieval_get_batch(&map, keys, n, got);
	for (i = 0; i < n && s == RIBBON_OK; i++)
		wrong += got[i] != values[i] || ribbon_retrieval_get(&map, keys[i]) != values[i];
	check(s == RIBBON_OK && wrong == 0, "retrieval w%u %u-bit n=%zu: %zu bytes, %zu wrong values (%d)",
	      width, value_bits, n, len, wrong, s);
out:
	vfree(scratch);
	vfree(values);
	vfree(got);
	vfree(bytes);
}

/* Every backend this CPU offers answers as the scalar one does; SIMD
 * backends only inside kernel_fpu_begin/end, in chunks. Prints ns per
 * key of single and batch queries (the least of three rounds). */
static void check_backends(const char *name, const u8 *bytes, size_t len, const u64 *queries, size_t q,
			   u8 *want, u8 *got)
{
	static const u32 backends[] = { RIBBON_BACKEND_SCALAR, RIBBON_BACKEND_PORTABLE, RIBBON_BACKEND_AVX2,
					RIBBON_BACKEND_AVX512 };
	ribbon_filter view;
	size_t b, i, round, differ;
	unsigned long positives = 0;
	u64 one_ns, batch_ns;
	int s;

	for (i = 0; i < q; i++)
		positives += want[i];
	for (b = 0; b < ARRAY_SIZE(backends); b++) {
		u32 be = backends[b];
		bool fpu = uses_fpu(be);
		unsigned long sum = 0;

		s = ribbon_set_backend(be);
		if (s == RIBBON_ERR_BACKEND_UNAVAILABLE) {
			/* The soft-float archive a module links has no SIMD kernels
			 * (docs/c-guide.md, "SIMD inside the kernel"); say whether
			 * this CPU would have run them. */
			bool cpu_has = be == RIBBON_BACKEND_AVX2 ? boot_cpu_has(X86_FEATURE_AVX2) :
				       be == RIBBON_BACKEND_AVX512 ?
						boot_cpu_has(X86_FEATURE_AVX512F) &&
						boot_cpu_has(X86_FEATURE_AVX512_VPOPCNTDQ) :
						false;

			pr_info("ribbon_ktest: skip %s: backend %s: not in the archive (the CPU %s it)\n", name,
				backend_name(be), cpu_has ? "has" : "lacks");
			check(fpu, "%s: only a SIMD backend may be missing (%s)", name, backend_name(be));
			continue;
		}
		s = s == RIBBON_OK ? ribbon_filter_open(&view, bytes, len) : s;
		/* Views keep the backend they were opened with; builds and later
		 * opens return to the scalar default. */
		ribbon_set_backend(RIBBON_BACKEND_AUTO);
		if (!check(s == RIBBON_OK, "%s: open with backend %s (%d)", name, backend_name(be), s))
			continue;
		one_ns = batch_ns = U64_MAX;
		for (round = 0; round < 3; round++) {
			u64 t = ktime_get_ns();

			if (fpu) {
				for (i = 0; i < q; i += KTEST_FPU_CHUNK) {
					size_t j, end = min_t(size_t, q, i + KTEST_FPU_CHUNK);

					kernel_fpu_begin();
					for (j = i; j < end; j++)
						sum += ribbon_contains(&view, queries[j]) == 1;
					kernel_fpu_end();
				}
			} else {
				for (i = 0; i < q; i++)
					sum += ribbon_contains(&view, queries[i]) == 1;
			}
			one_ns = min(one_ns, ktime_get_ns() - t);
			t = ktime_get_ns();
			s = batch_in_chunks(&view, queries, q, got, fpu);
			batch_ns = min(batch_ns, ktime_get_ns() - t);
		}
		differ = 0;
		for (i = 0; i < q; i++)
			differ += got[i] != want[i];
		check(s == RIBBON_OK && differ == 0 && sum == 3 * positives,
		      "%s: backend %s answers as scalar (batch: %zu differ; single: %lu positives, %lu wanted)",
		      name, backend_name(be), differ, sum, 3 * positives);
		pr_info("ribbon_ktest: time | %s | %s%s | %llu.%llu | %llu.%llu |\n", name, backend_name(be),
			fpu ? " (kernel_fpu)" : "", div64_u64(one_ns, q), div64_u64(one_ns * 10, q) % 10,
			div64_u64(batch_ns, q), div64_u64(batch_ns * 10, q) % 10);
	}
}

static void kernel_checks(void)
{
	static const u32 widths[] = { 64, 128 };
	u64 *keys, *others;
	u8 *want = NULL, *got = NULL;
	u32 kind;
	size_t w;

	keys = vmalloc(array_size(KTEST_BIG_KEYS, sizeof(u64)));
	others = vmalloc(array_size(KTEST_QUERIES, sizeof(u64)));
	want = vmalloc(KTEST_QUERIES);
	got = vmalloc(KTEST_QUERIES);
	if (!check(keys && others && want && got, "vmalloc of %u keys and %u queries", KTEST_BIG_KEYS,
		   KTEST_QUERIES))
		goto out;
	fill_keys(keys, KTEST_BIG_KEYS, 0x6b65726e656c);
	fill_keys(others, KTEST_QUERIES, 0x6f7468657273);

	pr_info("ribbon_ktest: time | filter | backend | contains ns/key | contains_batch ns/key |\n");
	for (kind = RIBBON_KIND_HOMOGENEOUS; kind <= RIBBON_KIND_BUMPED; kind++) {
		for (w = 0; w < ARRAY_SIZE(widths); w++) {
			u8 *bytes = NULL;
			size_t len = 0;
			char name[40];

			if (!check_filter(kind, widths[w], KTEST_KEYS, keys, others, KTEST_QUERIES, &bytes,
					  &len))
				continue;
			/* The scalar answers every backend must give. */
			{
				ribbon_filter view;

				if (ribbon_filter_open(&view, bytes, len) == RIBBON_OK)
					batch_in_chunks(&view, others, KTEST_QUERIES, want, false);
			}
			snprintf(name, sizeof(name), "%s w%u", kind_name(kind), widths[w]);
			check_backends(name, bytes, len, others, KTEST_QUERIES, want, got);
			vfree(bytes);
			cond_resched();
		}
		if (kind != RIBBON_KIND_BUMPED) /* Bumped has no streaming build */
			check_streaming(kind, 64, KTEST_KEYS, keys, others, KTEST_QUERIES);
	}
	check_filter(RIBBON_KIND_HOMOGENEOUS, 64, KTEST_BIG_KEYS, keys, others, KTEST_QUERIES, NULL, NULL);
	check_filter(RIBBON_KIND_BUMPED, 64, KTEST_BIG_KEYS, keys, others, KTEST_QUERIES, NULL, NULL);
	check_retrieval(64, 8, KTEST_KEYS, keys);
	check_retrieval(128, 1, KTEST_KEYS, keys);
	check_retrieval(64, 64, KTEST_KEYS, keys);
out:
	vfree(keys);
	vfree(others);
	vfree(want);
	vfree(got);
}

static int ktest_thread(void *unused)
{
	int fw;

	pr_info("ribbon_ktest: library %s, backend detected %s\n", ribbon_version_str(),
		backend_name(ribbon_backend()));
	fw = firmware_main();
	if (line_len != 0)
		flush_line();
	check(fw == 0, "the firmware test passed in the kernel");
	kernel_checks();
	ktest_status = checks_failed == 0 && fw == 0 ? 0 : 1;
	kthread_complete_and_exit(&ktest_done, 0);
}

static int __init ktest_init(void)
{
	struct task_struct *t = kthread_run(ktest_thread, NULL, "ribbon_ktest");

	if (IS_ERR(t))
		return PTR_ERR(t);
	wait_for_completion(&ktest_done);
	if (ktest_status == 0)
		pr_info("ribbon_ktest: PASS %u checks\n", checks_run);
	else
		pr_info("ribbon_ktest: FAIL %u of %u checks failed\n", checks_failed, checks_run);
	/* The verdict is the log's last line. Loading succeeds either way:
	 * busybox's insmod loads a module again when the first load fails,
	 * which would run every check twice. */
	return 0;
}

static void __exit ktest_exit(void)
{
}

module_init(ktest_init);
module_exit(ktest_exit);
MODULE_LICENSE("Dual MIT/GPL");
MODULE_DESCRIPTION("ribbon-kernel's C ABI checked inside the kernel");
