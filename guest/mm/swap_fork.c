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
 * MADV_PAGEOUT, then: fork, the child checks every page, the parent
 * checks every page, and a second region is paged out and unmapped
 * untouched. swapoff at the end. Output: TAP.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/swap.h>
#include <sys/wait.h>
#include <unistd.h>

#define PAGES 512
#define PM_SWAP (1ULL << 62)

static long page_size;
static int test_nr;
static int failed;

static void report(int ok, const char *what)
{
	printf("%sok %d %s\n", ok ? "" : "not ", ++test_nr, what);
	if (!ok)
		failed = 1;
}

/* A word per page that depends on the page and the region. */
static uint64_t pattern(unsigned int region, unsigned long i)
{
	return ((uint64_t)region << 32 | i) * 0x9e3779b97f4a7c15ULL;
}

static char *fill(unsigned int region)
{
	char *p = mmap(NULL, PAGES * page_size, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	unsigned long i;

	if (p == MAP_FAILED)
		return NULL;
	for (i = 0; i < PAGES; i++)
		*(uint64_t *)(p + i * page_size) = pattern(region, i);
	return p;
}

/* Pages of [p, p + PAGES pages) that are swap entries (pagemap bit 62). */
static long swapped(const char *p)
{
	uint64_t e[PAGES];
	long n = 0, i;
	int fd = open("/proc/self/pagemap", O_RDONLY);

	if (fd < 0)
		return -1;
	if (pread(fd, e, sizeof(e), (uintptr_t)p / page_size * sizeof(e[0])) !=
	    sizeof(e)) {
		close(fd);
		return -1;
	}
	close(fd);
	for (i = 0; i < PAGES; i++)
		n += !!(e[i] & PM_SWAP);
	return n;
}

static unsigned long bad_pages(const char *p, unsigned int region)
{
	unsigned long i, bad = 0;

	for (i = 0; i < PAGES; i++)
		bad += *(const uint64_t *)(p + i * page_size) !=
		       pattern(region, i);
	return bad;
}

/* Pages them out; passes if at least half of them became swap entries. */
static int page_out(char *p, const char *name)
{
	char what[96];
	long n;

	if (madvise(p, PAGES * page_size, MADV_PAGEOUT))
		printf("# MADV_PAGEOUT: %s\n", strerror(errno));
	n = swapped(p);
	printf("# %s: %ld of %d pages are swap entries\n", name, n, PAGES);
	snprintf(what, sizeof(what), "%s paged out", name);
	report(n >= PAGES / 2, what);
	return n >= PAGES / 2;
}

int main(int argc, char **argv)
{
	const char *dev = argc > 1 ? argv[1] : "/dev/vda";
	char cmd[128];
	char *a, *b;
	int status;
	pid_t pid;

	page_size = sysconf(_SC_PAGESIZE);
	printf("TAP version 13\n1..6\n");
	if (access(dev, W_OK)) {
		printf("# %s: %s (the row boots without a disk)\n", dev,
		       strerror(errno));
		printf("Bail out! no swap device\n");
		return 1;
	}
	snprintf(cmd, sizeof(cmd), "mkswap %s >/dev/null", dev);
	if (system(cmd) || swapon(dev, 0)) {
		printf("# mkswap/swapon %s: %s\n", dev, strerror(errno));
		printf("Bail out! no swap\n");
		return 1;
	}
	report(1, "swapon");

	a = fill(1);
	b = fill(2);
	if (!a || !b) {
		printf("Bail out! mmap: %s\n", strerror(errno));
		return 1;
	}
	page_out(a, "region a");

	/* The child's page tables are copied from the parent's swap entries. */
	fflush(stdout);
	pid = fork();
	if (pid == 0)
		_exit(bad_pages(a, 1) ? 1 : 0);
	report(pid > 0 && waitpid(pid, &status, 0) == pid &&
	       WIFEXITED(status) && WEXITSTATUS(status) == 0,
	       "child read every page of region a back");
	report(!bad_pages(a, 1), "parent read every page of region a back");

	/* Unmapped while paged out: zap releases the swap entries. */
	page_out(b, "region b");
	munmap(b, PAGES * page_size);
	munmap(a, PAGES * page_size);

	report(!swapoff(dev), "swapoff");
	return failed;
}
