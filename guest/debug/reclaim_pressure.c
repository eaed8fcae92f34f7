/*
 * reclaim_pressure.c - page-table frees, then memory pressure, so that
 * reclaim runs the shrinkers, kpkeys' page-table cache's among them
 *
 * For lockdep (make debug-check): a shrinker's locks are only ordered
 * against fs_reclaim (and what reclaim holds) once reclaim has called it,
 * and the page-table cache only has something to give back after page
 * tables were freed. Each round maps one page every 2 MiB of a 1 GiB
 * region (one PTE table each), unmaps it, then allocates anonymous memory
 * until free memory is under the zones' low watermarks, where kswapd
 * reclaims (the kernel has no swap here: reclaim can only take caches and
 * shrink slabs), holds it a moment, then frees it.
 *
 * Below the low watermarks, with nothing left that reclaim can take, the
 * kernel's own allocations soon reach the min watermarks and call the OOM
 * killer: by default low is only min plus a quarter of it (5.5 MiB on the
 * debug row's 2 GiB), and the debug kernel came within 260 KiB of min. So
 * the distance between the two is made 10% of memory
 * (vm.watermark_scale_factor) while this runs. It asks to be the OOM
 * killer's first choice all the same.
 *
 * Output: TAP. "reclaim ran" passes if the kernel's slabs_scanned count
 * grew (shrinkers were called); the page-table cache's counts, where
 * debugfs has them, are printed as diagnostics.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define ROUNDS 2
#define SPARSE (1UL << 30)
#define STEP (2UL << 20)
#define CHUNK (1UL << 20)
#define SCALE "/proc/sys/vm/watermark_scale_factor"
#define MAX_CHUNKS 16384

static unsigned long field(const char *path, const char *name)
{
	char line[256];
	size_t n = strlen(name);
	unsigned long v = 0;
	FILE *f = fopen(path, "r");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, name, n) && (line[n] == ' ' || line[n] == ':')) {
			v = strtoul(line + n + 1 + (line[n] == ':'), NULL, 10);
			break;
		}
	fclose(f);
	return v;
}

/* The sum over the zones of /proc/zoneinfo's watermark @name, in KiB. */
static unsigned long watermark_kb(const char *name)
{
	char line[256], key[32];
	unsigned long v, sum = 0;
	FILE *f = fopen("/proc/zoneinfo", "r");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, " %31s %lu", key, &v) == 2 && !strcmp(key, name))
			sum += v;
	fclose(f);
	return sum * (sysconf(_SC_PAGESIZE) >> 10);
}

/* Write @val to the sysctl file @path; returns its old value, or -1. */
static long sysctl_swap(const char *path, long val)
{
	long old = -1;
	FILE *f = fopen(path, "r+");

	if (!f)
		return -1;
	if (fscanf(f, "%ld", &old) == 1) {
		rewind(f);
		fprintf(f, "%ld\n", val);
	}
	fclose(f);
	return old;
}

static void cache_line(const char *when)
{
	const char *p = "/sys/kernel/debug/kpkeys/pgtable_cache";

	if (access(p, R_OK))
		return;
	printf("# %s: page-table cache holds %lu pages (drains %lu)\n", when,
	       field(p, "cached"), field(p, "drains"));
}

static void free_page_tables(void)
{
	char *p = mmap(NULL, SPARSE, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	unsigned long off;

	if (p == MAP_FAILED)
		return;
	madvise(p, SPARSE, MADV_NOHUGEPAGE);
	for (off = 0; off < SPARSE; off += STEP)
		p[off] = 1;
	munmap(p, SPARSE);
}

static unsigned long pressure(void)
{
	static char *chunks[MAX_CHUNKS];
	unsigned long low = watermark_kb("low"), min = watermark_kb("min");
	unsigned long n = 0, i;

	while (n < MAX_CHUNKS && field("/proc/meminfo", "MemFree") > low) {
		chunks[n] = mmap(NULL, CHUNK, PROT_READ | PROT_WRITE,
				 MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
		if (chunks[n] == MAP_FAILED)
			break;
		memset(chunks[n], 0x5a, CHUNK);
		n++;
	}
	/* Under the low watermarks: kswapd runs while this holds it. */
	sleep(2);
	printf("# watermarks low %lu KiB, min %lu KiB; MemFree %lu KiB 2 s later\n",
	       low, min, field("/proc/meminfo", "MemFree"));
	for (i = 0; i < n; i++)
		munmap(chunks[i], CHUNK);
	return n * (CHUNK >> 20);
}

int main(void)
{
	unsigned long scanned = field("/proc/vmstat", "slabs_scanned");
	unsigned long mib = 0;
	FILE *f = fopen("/proc/self/oom_score_adj", "w");
	long scale;
	int r;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (f) {
		fputs("1000", f);
		fclose(f);
	}
	printf("TAP version 13\n1..1\n");
	scale = sysctl_swap(SCALE, 1000);
	printf("# watermark_scale_factor %ld -> 1000\n", scale);
	for (r = 0; r < ROUNDS; r++) {
		free_page_tables();
		cache_line("after the page-table frees");
		mib += pressure();
		cache_line("after the pressure");
	}
	if (scale >= 0)
		sysctl_swap(SCALE, scale);
	scanned = field("/proc/vmstat", "slabs_scanned") - scanned;
	printf("# %d rounds, %lu MiB allocated in all, slabs_scanned +%lu\n",
	       ROUNDS, mib, scanned);
	printf("%s 1 reclaim ran\n", scanned ? "ok" : "not ok");
	return scanned ? 0 : 1;
}
