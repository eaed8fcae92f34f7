// SPDX-License-Identifier: GPL-2.0
/*
 * swap_fork.c - fork and unmap swap entries
 *
 * Swap entries in page tables take paths that present pages do not: fork
 * duplicates them (copy_nonpresent_pte(): the swap cluster lock, the mm
 * on the swapoff list) and unmap releases them (zap_nonpresent_ptes()),
 * both inside the lazy MMU section of their page-table loop, which is a
 * page-table write window under kpkeys. The selftests run without swap,
 * so nothing else reaches them; under the emulator's windows= option
 * (make check's hardened row), what they run in a window is reported.
 *
 * Usage: swap_fork [DEVICE]  (default /dev/vda, which is overwritten)
 *
 * mkswap and swapon DEVICE, fill anonymous memory, page it out with
 * MADV_PAGEOUT, then fork CHILDREN children, which hold the swap entries
 * until all are forked: past the count a swap slot's table keeps
 * (SWP_TB_COUNT_MAX), fork allocates an extended count (GFP_ATOMIC).
 * Each child checks that it got swap entries, then every page; the
 * parent checks every page, and a second region is paged out and
 * unmapped untouched. swapoff at the end. Output: TAP.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/swap.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tap.h"

#define REGION (2UL << 20)
#define CHILDREN 20
#define PM_SWAP (1ULL << 62)

static long page_size;
static unsigned long pages;

/* A word per page that depends on the page and the region. */
static uint64_t pattern(unsigned int region, unsigned long i)
{
	return ((uint64_t)region << 32 | i) * 0x9e3779b97f4a7c15ULL;
}

static char *fill(unsigned int region)
{
	char *p = mmap(NULL, REGION, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	unsigned long i;

	if (p == MAP_FAILED)
		return NULL;
	for (i = 0; i < pages; i++)
		*(uint64_t *)(p + i * page_size) = pattern(region, i);
	return p;
}

/* Pages of the region at @p that are swap entries (pagemap bit 62). */
static long swapped(const char *p)
{
	size_t size = pages * sizeof(uint64_t);
	uint64_t *e = malloc(size);
	int fd = open("/proc/self/pagemap", O_RDONLY);
	long n = -1;
	unsigned long i;

	if (fd >= 0 && e &&
	    pread(fd, e, size, (uintptr_t)p / page_size * sizeof(e[0])) ==
	    (ssize_t)size)
		for (n = 0, i = 0; i < pages; i++)
			n += !!(e[i] & PM_SWAP);
	if (fd >= 0)
		close(fd);
	free(e);
	return n;
}

static unsigned long bad_pages(const char *p, unsigned int region)
{
	unsigned long i, bad = 0;

	for (i = 0; i < pages; i++)
		bad += *(const uint64_t *)(p + i * page_size) !=
		       pattern(region, i);
	return bad;
}

/* Pages them out; passes if at least half of them became swap entries. */
static void page_out(char *p, const char *name)
{
	char what[96];
	long n;

	if (madvise(p, REGION, MADV_PAGEOUT))
		printf("# MADV_PAGEOUT: %s\n", strerror(errno));
	n = swapped(p);
	printf("# %s: %ld of %lu pages are swap entries\n", name, n, pages);
	snprintf(what, sizeof(what), "%s paged out", name);
	report(n >= (long)pages / 2, what);
}

/*
 * A child: waits until the parent has forked them all, then exits 0 if it
 * got at least half of region @a as swap entries and reads every page back.
 */
static void child(int release, const char *a)
{
	char c;

	if (read(release, &c, 1) < 0)
		_exit(2);
	if (swapped(a) < (long)pages / 2)
		_exit(3);
	_exit(bad_pages(a, 1) ? 1 : 0);
}

/* Forks CHILDREN children that share region @a; true if each passed. */
static int fork_children(const char *a)
{
	int fds[2], i, status, forked = 0, passed = 0;
	pid_t pid;

	if (pipe(fds))
		return 0;
	fflush(stdout);
	for (i = 0; i < CHILDREN; i++) {
		pid = fork();
		if (pid == 0) {
			close(fds[1]);
			child(fds[0], a);
		}
		forked += pid > 0;
	}
	/* Releases them: their read() returns 0. */
	close(fds[0]);
	close(fds[1]);
	while (wait(&status) > 0) {
		if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
			passed++;
		else if (WIFEXITED(status))
			printf("# a child exited with %d\n", WEXITSTATUS(status));
		else
			printf("# a child was killed by signal %d\n",
			       WTERMSIG(status));
	}
	printf("# %d children forked, %d passed\n", forked, passed);
	return forked == CHILDREN && passed == CHILDREN;
}

int main(int argc, char **argv)
{
	const char *dev = argc > 1 ? argv[1] : "/dev/vda";
	char cmd[128];
	char *a, *b;
	int ret;

	page_size = sysconf(_SC_PAGESIZE);
	pages = REGION / page_size;
	printf("TAP version 13\n1..6\n");
	if (access(dev, W_OK)) {
		printf("# %s: %s (the row boots without a disk)\n", dev,
		       strerror(errno));
		printf("Bail out! no swap device\n");
		return 1;
	}
	snprintf(cmd, sizeof(cmd), "mkswap %s >/dev/null", dev);
	ret = system(cmd);
	if (ret) {
		printf("# mkswap %s: exit status %#x\n", dev, ret);
		printf("Bail out! no swap\n");
		return 1;
	}
	if (swapon(dev, 0)) {
		printf("# swapon %s: %s\n", dev, strerror(errno));
		printf("Bail out! no swap\n");
		return 1;
	}
	report(1, "swapon");

	a = fill(1);
	b = fill(2);
	if (!a || !b) {
		printf("Bail out! mmap: %s\n", strerror(errno));
		swapoff(dev);
		return 1;
	}
	page_out(a, "region a");

	/* The children's page tables are copied from the swap entries. */
	report(fork_children(a),
	       "every child got swap entries and read region a back");
	report(!bad_pages(a, 1), "parent read every page of region a back");

	/* Unmapped while paged out: zap releases the swap entries. */
	page_out(b, "region b");
	munmap(b, REGION);
	munmap(a, REGION);

	report(!swapoff(dev), "swapoff");
	return tap_failed;
}
