// SPDX-License-Identifier: GPL-2.0
/*
 * pagemap_wp.c - PAGEMAP_SCAN's write-protection of the pages it reports
 *
 * PAGEMAP_SCAN with PM_SCAN_WP_MATCHING reports the written pages of a
 * range registered for asynchronous userfaultfd write-protection
 * (UFFD_FEATURE_WP_ASYNC) and write-protects them again, PTE by PTE.
 * The PTEs are written in a lazy MMU section, which is a page-table write
 * window under kpkeys; the report goes to a kernel buffer of the scan.
 * Under the emulator's windows= and window_stores= options (make check's
 * hardened row) what runs in those windows is reported; the selftests
 * that use PAGEMAP_SCAN (pagemap_ioctl) are not in make check.
 *
 * Each of the scan's PTE loops is run: the one without output (no vec),
 * the one for written-only masks, the general one; and the two ways a
 * scan stops early, max_pages and a full vec, which must leave the PTEs
 * past the stop writable-and-written. Every answer is checked against the
 * pages this program wrote, and the data of every page at the end.
 * Output: TAP.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/fs.h>
#include <linux/userfaultfd.h>

#include "tap.h"

/* The cross toolchain's headers may predate PAGEMAP_SCAN (Linux 6.7). */
#ifndef PAGEMAP_SCAN
struct page_region {
	uint64_t start;
	uint64_t end;
	uint64_t categories;
};

struct pm_scan_arg {
	uint64_t size;
	uint64_t flags;
	uint64_t start;
	uint64_t end;
	uint64_t walk_end;
	uint64_t vec;
	uint64_t vec_len;
	uint64_t max_pages;
	uint64_t category_inverted;
	uint64_t category_mask;
	uint64_t category_anyof_mask;
	uint64_t return_mask;
};

#define PAGEMAP_SCAN		_IOWR('f', 16, struct pm_scan_arg)
#define PAGE_IS_WRITTEN		(1 << 1)
#define PAGE_IS_PRESENT		(1 << 3)
#define PM_SCAN_WP_MATCHING	(1 << 0)
#define PM_SCAN_CHECK_WPASYNC	(1 << 1)
#endif
#ifndef UFFD_FEATURE_WP_ASYNC
#define UFFD_FEATURE_WP_ASYNC	(1 << 15)
#endif
#ifndef UFFD_USER_MODE_ONLY
#define UFFD_USER_MODE_ONLY	1
#endif

/*
 * Two PTE tables with 4K pages (the region is aligned to 2 MiB): the scan
 * runs its loops once per table. The early stops below fall in the first.
 */
#define REGION		(4UL << 20)
#define ALIGN_TO	(2UL << 20)
#define VEC_LEN		4096

static long page_size;
static unsigned long pages;
static char *region;
static int pagemap_fd;
static uint64_t *last;		/* the last word written to each page */
static struct page_region vec[VEC_LEN];

static void write_page(unsigned long i, unsigned int round)
{
	uint64_t v = ((uint64_t)round << 32 | i) * 0x9e3779b97f4a7c15ULL;

	*(volatile uint64_t *)(region + i * page_size) = v;
	last[i] = v;
}

static int in_set_a(unsigned long i)
{
	return i % 3 == 0 || (i >= 100 && i < 200) || i == pages - 1;
}

static int in_set_b(unsigned long i)
{
	return i % 5 == 0;
}

static void write_set(int (*in_set)(unsigned long), unsigned int round)
{
	unsigned long i;

	for (i = 0; i < pages; i++)
		if (in_set(i))
			write_page(i, round);
}

/*
 * One scan from @start (a page index) to the end of the region. Returns
 * the number of regions, or -1 with errno; *walk_end gets the page index
 * the scan stopped at.
 */
static long scan(unsigned long start, uint64_t flags, uint64_t return_mask,
		 uint64_t vec_len, uint64_t max_pages, unsigned long *walk_end)
{
	struct pm_scan_arg arg = {
		.size = sizeof(arg),
		.flags = flags,
		.start = (uintptr_t)(region + start * page_size),
		.end = (uintptr_t)(region + REGION),
		.vec = vec_len ? (uintptr_t)vec : 0,
		.vec_len = vec_len,
		.max_pages = max_pages,
		.category_mask = PAGE_IS_WRITTEN,
		.return_mask = return_mask,
	};
	long ret = ioctl(pagemap_fd, PAGEMAP_SCAN, &arg);

	if (walk_end)
		*walk_end = (arg.walk_end - (uintptr_t)region) / page_size;
	return ret;
}

/*
 * Do the @n regions of vec describe exactly the pages in @expect from
 * @from (a page index) to @to, each with @categories?
 */
static int regions_match(long n, int (*expect)(unsigned long),
			 unsigned long from, unsigned long to,
			 uint64_t categories)
{
	unsigned long i = from;
	long r;

	for (r = 0; r < n; r++) {
		unsigned long s = (vec[r].start - (uintptr_t)region) / page_size;
		unsigned long e = (vec[r].end - (uintptr_t)region) / page_size;

		if (vec[r].categories != categories || s < i || e <= s)
			return 0;
		for (; i < s; i++)
			if (expect(i))
				return 0;
		for (; i < e; i++)
			if (!expect(i))
				return 0;
	}
	for (; i < to; i++)
		if (expect(i))
			return 0;
	return 1;
}

static int all(unsigned long i)
{
	return 1;
}

/* Nothing written since the last write-protecting scan? */
static int nothing_written(void)
{
	return scan(0, 0, PAGE_IS_WRITTEN, VEC_LEN, 0, NULL) == 0;
}

static int uffd_register_wp_async(void)
{
	struct uffdio_api api = {
		.api = UFFD_API,
		.features = UFFD_FEATURE_WP_ASYNC,
	};
	struct uffdio_register reg = {
		.range = { .start = (uintptr_t)region, .len = REGION },
		.mode = UFFDIO_REGISTER_MODE_WP,
	};
	int fd;

	fd = syscall(__NR_userfaultfd,
		     O_CLOEXEC | O_NONBLOCK | UFFD_USER_MODE_ONLY);
	if (fd < 0) {
		printf("# userfaultfd: %s\n", strerror(errno));
		return 0;
	}
	if (ioctl(fd, UFFDIO_API, &api) ||
	    !(api.features & UFFD_FEATURE_WP_ASYNC)) {
		printf("# UFFDIO_API: %s, features %#llx\n", strerror(errno),
		       (unsigned long long)api.features);
		return 0;
	}
	if (ioctl(fd, UFFDIO_REGISTER, &reg)) {
		printf("# UFFDIO_REGISTER: %s\n", strerror(errno));
		return 0;
	}
	return 1;
}

static unsigned long count_set(int (*in_set)(unsigned long),
			       unsigned long from, unsigned long to)
{
	unsigned long i, n = 0;

	for (i = from; i < to; i++)
		n += in_set(i);
	return n;
}

/* Index of the @n-th page (from 0) of a set. */
static unsigned long nth_of_set(int (*in_set)(unsigned long), unsigned long n)
{
	unsigned long i;

	for (i = 0; i < pages; i++)
		if (in_set(i) && n-- == 0)
			return i;
	return pages;
}

static unsigned long stop_at;

static int in_set_a_from_stop(unsigned long i)
{
	return i >= stop_at && in_set_a(i);
}

int main(void)
{
	const uint64_t wp = PM_SCAN_WP_MATCHING | PM_SCAN_CHECK_WPASYNC;
	unsigned long i, end;
	long n;
	int ok;

	page_size = sysconf(_SC_PAGESIZE);
	pages = REGION / page_size;
	printf("TAP version 13\n1..12\n");

	last = calloc(pages, sizeof(*last));
	region = mmap(NULL, REGION + ALIGN_TO, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	pagemap_fd = open("/proc/self/pagemap", O_RDONLY);
	if (!last || region == MAP_FAILED || pagemap_fd < 0) {
		printf("Bail out! set-up: %s\n", strerror(errno));
		return 1;
	}
	region = (char *)(((uintptr_t)region + ALIGN_TO - 1) & ~(ALIGN_TO - 1));
	/* PTE tables, not a PMD mapping: the PTE loops are what is tested. */
	report(!madvise(region, REGION, MADV_NOHUGEPAGE), "MADV_NOHUGEPAGE");
	for (i = 0; i < pages; i++)
		write_page(i, 0);

	if (!uffd_register_wp_async()) {
		printf("Bail out! no asynchronous userfaultfd write-protection\n");
		return 1;
	}

	n = scan(0, 0, PAGE_IS_WRITTEN, VEC_LEN, 0, NULL);
	report(n >= 1 && regions_match(n, all, 0, pages, PAGE_IS_WRITTEN),
	       "every page written before the first protection");

	/* The loop without output: no vec. */
	n = scan(0, wp, PAGE_IS_WRITTEN, 0, 0, NULL);
	report(n == 0 && nothing_written(), "write-protect all without a vec");

	/* The loop for a written-only category and return mask. */
	write_set(in_set_a, 1);
	n = scan(0, wp, PAGE_IS_WRITTEN, VEC_LEN, 0, NULL);
	report(n > 0 && regions_match(n, in_set_a, 0, pages, PAGE_IS_WRITTEN),
	       "report and protect the written pages (written-only masks)");
	report(nothing_written(), "no page left written after it");

	/* The general loop: another return mask. */
	write_set(in_set_b, 2);
	n = scan(0, wp, PAGE_IS_WRITTEN | PAGE_IS_PRESENT, VEC_LEN, 0, NULL);
	report(n > 0 && regions_match(n, in_set_b, 0, pages,
				      PAGE_IS_WRITTEN | PAGE_IS_PRESENT),
	       "report and protect the written pages (general loop)");
	report(nothing_written(), "no page left written after it");

	/* max_pages stops the scan: the pages after it stay written. */
	write_set(in_set_a, 3);
	n = scan(0, wp, PAGE_IS_WRITTEN, VEC_LEN, 70, &end);
	stop_at = nth_of_set(in_set_a, 70);
	report(n > 0 && end == stop_at &&
	       regions_match(n, in_set_a, 0, stop_at, PAGE_IS_WRITTEN),
	       "max_pages: the first 70 written pages reported");
	n = scan(0, 0, PAGE_IS_WRITTEN, VEC_LEN, 0, NULL);
	report(n > 0 && regions_match(n, in_set_a_from_stop, 0, pages,
				      PAGE_IS_WRITTEN),
	       "max_pages: only those 70 protected");

	/* A full vec stops the scan: after two regions of set A. */
	n = scan(stop_at, wp, PAGE_IS_WRITTEN | PAGE_IS_PRESENT, 2, 0, &end);
	ok = n == 2 && end > stop_at && end < pages &&
	     count_set(in_set_a, stop_at, end) ==
	     (vec[0].end - vec[0].start + vec[1].end - vec[1].start) / page_size;
	report(ok, "full vec: two regions reported");
	stop_at = end;
	n = scan(0, 0, PAGE_IS_WRITTEN, VEC_LEN, 0, NULL);
	report(n > 0 && regions_match(n, in_set_a_from_stop, 0, pages,
				      PAGE_IS_WRITTEN),
	       "full vec: only those protected");

	ok = 1;
	for (i = 0; i < pages; i++)
		if (*(volatile uint64_t *)(region + i * page_size) != last[i])
			ok = 0;
	report(ok, "every page holds what was last written to it");

	return tap_failed;
}
