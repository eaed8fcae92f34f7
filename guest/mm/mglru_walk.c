// SPDX-License-Identifier: GPL-2.0
/*
 * mglru_walk.c - the multi-gen LRU's page-table walks
 *
 * MGLRU clears the accessed bit of PTEs in lazy MMU sections, which are
 * page-table write windows under kpkeys: the aging walk of every mm
 * (walk_pte_range(), walk_pmd_range_locked()) and the look-around of
 * eviction (lru_gen_look_around()), which the rmap walk starts on a young
 * PTE. Both update the folios they find and the walk's statistics; under
 * the emulator's windows= and window_stores= options (make check's
 * hardened row) what runs in those windows is reported. Nothing else in
 * the test boots ages or evicts through MGLRU on purpose.
 *
 * Usage: mglru_walk [DEVICE]  (default /dev/vda, which is overwritten)
 *
 * With the kernel's debugfs interface (/sys/kernel/debug/lru_gen, see
 * Documentation/admin-guide/mm/multigen_lru.rst): touch a region, age
 * with a forced walk of every mm and check that the walk counted the
 * region's young PTEs (its statistics, with CONFIG_LRU_GEN_STATS), age
 * twice more, touch half of the region again and evict the oldest
 * generation to swap on DEVICE: the young half is found by the rmap walk
 * and looked around. Every page's data is checked at the end, and the
 * region must have been partly paged out. Output: TAP.
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
#include <unistd.h>

#include "tap.h"

#define REGION		(8UL << 20)
#define LRU_GEN		"/sys/kernel/debug/lru_gen"
#define LRU_GEN_FULL	"/sys/kernel/debug/lru_gen_full"
#define PM_SWAP		(1ULL << 62)

static long page_size;
static unsigned long pages;

static uint64_t pattern(unsigned long i)
{
	return (i + 1) * 0x9e3779b97f4a7c15ULL;
}

static void touch(char *p, unsigned long step)
{
	unsigned long i;

	for (i = 0; i < pages; i += step)
		*(volatile uint64_t *)(p + i * page_size) = pattern(i);
}

/*
 * The oldest and the youngest generation of node 0 of the root memcg, from
 * the first lines of LRU_GEN: "memcg ID PATH", " node N", then one line
 * per generation, oldest first, that starts with its sequence number.
 */
static int generations(unsigned long *min_seq, unsigned long *max_seq)
{
	FILE *f = fopen(LRU_GEN, "r");
	char line[512];
	int node = 0, n = 0;
	unsigned long seq;

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, "memcg", 5)) {
			if (n)
				break;
			continue;
		}
		if (sscanf(line, " node %d", &node) == 1)
			continue;
		if (node == 0 && sscanf(line, " %lu", &seq) == 1) {
			if (!n++)
				*min_seq = seq;
			*max_seq = seq;
		}
	}
	fclose(f);
	return n > 0;
}

/*
 * The young leaf entries that the walk which ended generation @seq
 * counted, or -1. In LRU_GEN_FULL a generation's line is "SEQ AGE ANON[x]
 * FILE[x]"; its tier lines follow, then the mm walk's statistics of that
 * generation, "Nt Ny Nf Na" (with CONFIG_LRU_GEN_STATS).
 */
static long walk_young(unsigned long seq)
{
	FILE *f = fopen(LRU_GEN_FULL, "r");
	unsigned long s, t, y, anon, file;
	char line[512], m1, m2;
	unsigned int age;
	int in_gen = 0;
	long young = -1;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, " %lu %u %lu%c %lu%c", &s, &age, &anon, &m1,
			   &file, &m2) == 6)
			in_gen = s == seq;
		else if (in_gen && sscanf(line, " %lut %luy", &t, &y) == 2) {
			young = y;
			break;
		}
	}
	fclose(f);
	return young;
}

static int lru_gen_cmd(const char *cmd)
{
	int fd = open(LRU_GEN, O_WRONLY);
	int ok = fd >= 0 && write(fd, cmd, strlen(cmd)) == (ssize_t)strlen(cmd);

	if (!ok)
		printf("# %s: %s\n", cmd, strerror(errno));
	if (fd >= 0)
		close(fd);
	return ok;
}

static int age(void)
{
	unsigned long min_seq, max_seq;
	char cmd[64];

	if (!generations(&min_seq, &max_seq))
		return 0;
	/* swappiness 100, force_scan: walk every mm's page tables */
	snprintf(cmd, sizeof(cmd), "+ 0 0 %lu 100 1", max_seq);
	return lru_gen_cmd(cmd);
}

static long swapped(const char *p)
{
	int fd = open("/proc/self/pagemap", O_RDONLY);
	unsigned long i;
	uint64_t e;
	long n = 0;

	if (fd < 0)
		return -1;
	for (i = 0; i < pages; i++)
		if (pread(fd, &e, sizeof(e), ((uintptr_t)p / page_size + i) *
			  sizeof(e)) == sizeof(e) && (e & PM_SWAP))
			n++;
	close(fd);
	return n;
}

int main(int argc, char **argv)
{
	const char *dev = argc > 1 ? argv[1] : "/dev/vda";
	unsigned long min_seq, max_seq, before, i, bad = 0;
	char cmd[96], enabled[32] = "";
	long young, n;
	FILE *f;
	char *p;
	int ret;

	page_size = sysconf(_SC_PAGESIZE);
	pages = REGION / page_size;
	printf("TAP version 13\n1..8\n");

	/* Every component, the mm walk among them, where the CPU allows. */
	f = fopen("/sys/kernel/mm/lru_gen/enabled", "w");
	if (f) {
		fputs("y", f);
		fclose(f);
	}
	f = fopen("/sys/kernel/mm/lru_gen/enabled", "r");
	if (f) {
		if (!fgets(enabled, sizeof(enabled), f))
			enabled[0] = '\0';
		fclose(f);
	}
	/* 0x0002: the page-table walks of aging (LRU_GEN_MM_WALK) */
	if (!(strtoul(enabled, NULL, 0) & 2) ||
	    !generations(&min_seq, &max_seq)) {
		printf("Bail out! MGLRU with its mm walk and %s needed (enabled: %s)\n",
		       LRU_GEN, enabled[0] ? enabled : "no file");
		return 1;
	}
	report(1, "MGLRU enabled, with its mm walk");

	snprintf(cmd, sizeof(cmd), "mkswap %s >/dev/null", dev);
	ret = system(cmd);
	if (ret || swapon(dev, 0)) {
		printf("Bail out! swap on %s: mkswap %#x, %s\n", dev, ret,
		       strerror(errno));
		return 1;
	}

	p = mmap(NULL, REGION, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) {
		printf("Bail out! mmap: %s\n", strerror(errno));
		return 1;
	}
	/* Page-size folios: one walk update per young PTE. */
	report(!madvise(p, REGION, MADV_NOHUGEPAGE), "MADV_NOHUGEPAGE");
	touch(p, 1);

	before = max_seq;
	report(age() && generations(&min_seq, &max_seq) && max_seq == before + 1,
	       "aging with a walk of every mm");
	young = walk_young(before);
	printf("# the walk that ended generation %lu found %ld young leaf entries, the region has %lu\n",
	       before, young, pages);
	report(young >= (long)pages, "the walk counted the region's young PTEs");

	report(age() && age(), "two more generations");

	/* Young again: the rmap walk of eviction finds these, and looks around. */
	touch(p, 2);
	/* Everything older than the two youngest generations. */
	if (!generations(&min_seq, &max_seq))
		max_seq = 2;
	snprintf(cmd, sizeof(cmd), "- 0 0 %lu 100 %lu", max_seq - 2, 4 * pages);
	report(lru_gen_cmd(cmd), "eviction of the oldest generation");

	n = swapped(p);
	printf("# %ld of %lu pages are swap entries\n", n, pages);
	report(n > 0, "part of the region paged out");

	for (i = 0; i < pages; i++)
		bad += *(volatile uint64_t *)(p + i * page_size) != pattern(i);
	report(!bad, "every page holds its data");

	munmap(p, REGION);
	if (swapoff(dev))
		printf("# swapoff %s: %s\n", dev, strerror(errno));
	return tap_failed;
}
