/*
 * kpkeys_bench.c - the rows of "make bench", run in the guest
 *
 * Each repetition of a row is bracketed by bench_begin()/bench_end()
 * (marker.h); under the POE emulator with bench=FILE every bracket becomes
 * one record of exact counts (instructions, ISBs, POR_EL1 writes, TLBIs,
 * DSBs, exceptions). Whatever prepares or cleans up after a row (mapping
 * and populating a region, waiting for a child) runs outside the bracket.
 *
 * Rows (the seed's table, see bench/README.md):
 *   mprotect/h:N, munmap/h:N, fork/h:N   a 1 GiB private anonymous
 *       region, PTE-mapped, with page-size folios (h:0: MADV_NOHUGEPAGE)
 *       or 2 MiB folios (h:1: MADV_HUGEPAGE, then an mprotect() of one page
 *       per 2 MiB and back, which splits each PMD mapping but not the
 *       folio). The layout is checked through /proc/meminfo,
 *       /proc/self/pagemap and /proc/kpageflags (region_check()). Every
 *       repetition starts from the state of a freshly populated region;
 *       region_get() says when one is reused. fork: the child blocks on a
 *       pipe, so its teardown is not in the row. mprotect: PROT_READ then
 *       PROT_READ|PROT_WRITE over the region.
 *   sparse/touch, sparse/munmap   one page touched per 2 MiB of a 16 GiB
 *       region (a new PTE table per touch), then the region unmapped.
 *   vmalloc/empty, fix_size_alloc/p:P/h:H, random_size_alloc/p:1/h:0,
 *   vm_map_ram/p:1/h:0   finit_module() of lib/test_vmalloc.ko with the
 *       row's parameters (one worker, the row's loop count); vmalloc/empty
 *       loads it with no test selected, so the host can subtract module
 *       loading and the worker's set-up from the other rows.
 *   shell-loop   busybox sh: fork, exec and exit of small programs and a
 *       small file written, read and removed, per iteration.
 *   pagecache/read   a 256 MiB file in tmpfs read with read() into a
 *       64 KiB buffer: the kernel copies every page of it through the
 *       linear map, which is where a page-granular linear map costs TLB
 *       reach. The file is written before, and removed after, each
 *       repetition, outside the bracket.
 *   idle/1s   one second asleep: what timer ticks and background work
 *       cost in a row.
 *   ctxsw/pipe   two processes on CPU 0 pass a byte back and forth over
 *       two pipes: two switches between address spaces (TTBR0 loads) per
 *       round trip.
 *   smoke/fork   fork of a 16 MiB region, for make check.
 *
 * Selection on the kernel command line (or in argv[1..]):
 *   kpkeys.bench=all|smoke|ROW,ROW...   (default: smoke)
 *   kpkeys.bench_reps=N (default 5; smoke: 1)   kpkeys.bench_mib=1024
 *   kpkeys.bench_sparse_gib=16   kpkeys.bench_pagecache_mib=256
 *   kpkeys.bench_loops_pct=100 (vmalloc loop
 *   counts and shell-loop iterations, in percent of the defaults)
 *   kpkeys.bench_warmup=1   unmarked repetitions before the first one (the
 *   first repetition of a row after another one measured up to 22% more)
 *   kpkeys.bench_mark_setup=0   1: also record the set-up (setup_begin())
 *
 * Output: TAP, one test per row (all its repetitions), and lines
 * "kpkeys-bench: row=NAME rep=N key=value..." describing what each marked
 * repetition did (ticks=: the timer ticks it lasted). Exit status 0 if
 * every row passed.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/klog.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/times.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "marker.h"

#define SZ_2M		(2UL << 20)
#define PAGE_SZ		4096UL
#define PTES_PER_2M	(SZ_2M / PAGE_SZ)

#define KPF_COMPOUND_HEAD	15
#define KPF_COMPOUND_TAIL	16
#define KPF_THP			22

#define VMALLOC_MODULE	"/lib/modules/test_vmalloc.ko"

/*
 * Every region is mapped at the same address in every repetition and
 * kernel: with address-space randomisation the upper-level page tables a
 * region needs (and the instructions to allocate them) would change from
 * one repetition to the next. 1 GiB aligned, below 512 GiB (39-bit VAs).
 */
#define REGION_ADDR	(128UL << 30)
#define SPARSE_ADDR	(256UL << 30)

struct row;
typedef int (*row_fn)(const struct row *row, unsigned long rep);

struct row {
	const char *name;
	row_fn fn;
	int huge;		/* micromm: 2 MiB folios; vmalloc: use_huge */
	unsigned long mask;	/* vmalloc: run_test_mask */
	unsigned long pages;	/* vmalloc: nr_pages */
	unsigned long loops;	/* vmalloc: test_loop_count; shell: iterations */
	bool in_all;
};

static struct {
	unsigned long reps, mib, sparse_gib, loops_pct, warmup, mark_setup;
	unsigned long pagecache_mib;
	bool marking;
} opt = { .reps = 5, .mib = 1024, .sparse_gib = 16, .loops_pct = 100,
	  .warmup = 1, .pagecache_mib = 256 };

static char why[256];	/* the reason of the last failure */

static int fail(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	return -1;
}

static void info(const struct row *row, unsigned long rep, const char *fmt, ...)
{
	va_list ap;

	if (!opt.marking)
		return;
	printf("kpkeys-bench: row=%s rep=%lu ", row->name, rep);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
}

/*
 * Markers only for the measured repetitions, not for the warm-up ones.
 * Each marked repetition also reports the timer ticks (jiffies, through
 * times()) it lasted: under TCG their number follows host time, and the
 * host subtracts their cost (see bench/README.md).
 */
static struct {
	const char *name;
	unsigned long rep;
	clock_t start;
} cur;

/*
 * The page-table cache's counters (hits, misses, refills, drains, TLB
 * flushes, direct allocations), read before and after each marked
 * repetition, outside the row, and reported as differences: they say how
 * much of a row's keying cost the cache saved and what it still paid.
 * Kernels without the cache have no such file and report nothing.
 */
#define PGT_CACHE_FILE	"/sys/kernel/debug/kpkeys/pgtable_cache"
#define PGT_CACHE_MAX	8

struct pgt_cache_stats {
	int n;
	char name[PGT_CACHE_MAX][24];
	unsigned long value[PGT_CACHE_MAX];
};

static struct pgt_cache_stats pgt_cache_before;

static void pgt_cache_read(struct pgt_cache_stats *st)
{
	FILE *f = fopen(PGT_CACHE_FILE, "r");

	st->n = 0;
	if (!f)
		return;
	while (st->n < PGT_CACHE_MAX &&
	       fscanf(f, "%23s %lu", st->name[st->n], &st->value[st->n]) == 2)
		st->n++;
	fclose(f);
}

static void pgt_cache_report(void)
{
	struct pgt_cache_stats after;
	int i;

	pgt_cache_read(&after);
	if (!after.n || after.n != pgt_cache_before.n)
		return;
	printf("kpkeys-bench: row=%s rep=%lu", cur.name, cur.rep);
	for (i = 0; i < after.n; i++) {
		if (!strcmp(after.name[i], "cached"))
			printf(" pgt_cache_cached=%lu", after.value[i]);
		else
			printf(" pgt_cache_%s=%lu", after.name[i],
			       after.value[i] - pgt_cache_before.value[i]);
	}
	putchar('\n');
}

static void begin(const struct row *row, unsigned long rep)
{
	if (!opt.marking)
		return;
	cur.name = row->name;
	cur.rep = rep;
	pgt_cache_read(&pgt_cache_before);
	cur.start = times(NULL);
	bench_begin(row->name, rep);
}

static void end(void)
{
	clock_t ticks;

	if (!opt.marking)
		return;
	bench_end();
	ticks = times(NULL) - cur.start;
	printf("kpkeys-bench: row=%s rep=%lu ticks=%ld\n", cur.name, cur.rep,
	       (long)ticks);
	pgt_cache_report();
	fflush(stdout);
}

/*
 * With kpkeys.bench_mark_setup=1 what prepares and cleans up after the rows
 * is recorded too, as rows "setup/WHAT": where the run time goes, in
 * instructions.
 */
static void setup_begin(const char *what)
{
	if (opt.mark_setup && opt.marking)
		bench_begin(what, 0);
}

static void setup_end(void)
{
	if (opt.mark_setup && opt.marking)
		bench_end();
}

static unsigned long scaled(unsigned long n)
{
	n = n * opt.loops_pct / 100;
	return n ? n : 1;
}

static int write_file(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC), ok;

	if (fd < 0)
		return -1;
	ok = write(fd, s, strlen(s)) == (ssize_t)strlen(s);
	close(fd);
	return ok ? 0 : -1;
}

/* ---- a PTE-mapped anonymous region (the micromm rows) ---- */

struct region {
	char *p;
	size_t len;
	int huge;
	unsigned long large;	/* 2 MiB ranges that are one folio */
	long pgtables_kb;	/* PageTables before it was mapped */
};

/* Rss (kB) of the VMA starting at @p. */
static long smaps_rss_kb(const void *p)
{
	char line[256], start[32];
	bool in_vma = false;
	long kb = -1;
	FILE *f = fopen("/proc/self/smaps", "re");

	if (!f)
		return -1;
	snprintf(start, sizeof(start), "%lx-", (unsigned long)p);
	while (fgets(line, sizeof(line), f)) {
		if (line[0] != ' ' && strchr(line, '-') &&
		    strchr(line, '-') < strchr(line, ' ')) {
			/* a VMA header line: "start-end perms ..." */
			if (in_vma)
				break;
			in_vma = !strncmp(line, start, strlen(start));
		} else if (in_vma && !strncmp(line, "Rss:", 4)) {
			kb = strtol(line + 4, NULL, 10);
			break;
		}
	}
	fclose(f);
	return kb;
}

/* A field of /proc/meminfo, in kB. */
static long meminfo_kb(const char *field)
{
	char line[128];
	size_t n = strlen(field);
	long kb = -1;
	FILE *f = fopen("/proc/meminfo", "re");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, field, n) && line[n] == ':') {
			kb = strtol(line + n + 1, NULL, 10);
			break;
		}
	}
	fclose(f);
	return kb;
}

/*
 * Page-table pages are freed an RCU grace period after they were unmapped
 * (arm64 has MMU_GATHER_RCU_TABLE_FREE), by whatever runs then: a later row
 * would pay for them, or not, depending on timing. So whoever unmaps page
 * tables waits, inside its row, until /proc/meminfo's PageTables is back
 * to @kb (or has stopped moving: the kernel may have kept a table of its
 * own meanwhile, e.g. for a vmalloc'ed stack).
 */
static void wait_pgtables(long kb)
{
	struct timespec ts = { .tv_nsec = 20 * 1000 * 1000 };	/* 2 ticks */
	long now, last = -1;
	int still = 0, i;

	for (i = 0; i < 500 && still < 5; i++) {
		nanosleep(&ts, NULL);
		now = meminfo_kb("PageTables");
		if (now <= kb)
			return;
		still = now == last ? still + 1 : 0;
		last = now;
	}
}

static int pread_u64(int fd, uint64_t idx, uint64_t *v)
{
	return pread(fd, v, sizeof(*v), idx * sizeof(*v)) == sizeof(*v) ? 0 : -1;
}

/*
 * Check the layout: every page present (pagemap) and nothing PMD-mapped
 * (AnonHugePages = 0), and for each 2 MiB either one large folio (h:1: the
 * first page a THP head, the last page its tail, physically contiguous) or
 * page-size folios (h:0: the first page neither head nor tail).
 */
static int region_check(const struct region *r, unsigned long *large)
{
	uint64_t ent[PTES_PER_2M], flags;
	int pm, kf, rc = -1;
	long anon_huge;
	size_t off;

	/* nothing PMD-mapped (cheaper than our VMA's smaps; we are alone) */
	anon_huge = meminfo_kb("AnonHugePages");
	if (anon_huge != 0)
		return fail("%ld kB of anonymous THPs PMD-mapped", anon_huge);

	pm = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
	kf = open("/proc/kpageflags", O_RDONLY | O_CLOEXEC);
	if (pm < 0 || kf < 0) {
		fail("cannot open pagemap/kpageflags: %s", strerror(errno));
		goto out;
	}
	*large = 0;
	for (off = 0; off < r->len; off += SZ_2M) {
		uint64_t first, i;

		if (pread(pm, ent, sizeof(ent), ((uintptr_t)r->p + off) / PAGE_SZ * 8) !=
		    sizeof(ent)) {
			fail("pagemap read failed: %s", strerror(errno));
			goto out;
		}
		for (i = 0; i < PTES_PER_2M; i++) {
			if (!(ent[i] >> 63)) {
				fail("page at +%#zx not present", off + i * PAGE_SZ);
				goto out;
			}
		}
		first = ent[0] & ((1ULL << 55) - 1);
		if (pread_u64(kf, first, &flags)) {
			fail("kpageflags read failed: %s", strerror(errno));
			goto out;
		}
		if ((flags >> KPF_COMPOUND_HEAD & 1) && (flags >> KPF_THP & 1) &&
		    (ent[PTES_PER_2M - 1] & ((1ULL << 55) - 1)) == first + PTES_PER_2M - 1 &&
		    !pread_u64(kf, first + PTES_PER_2M - 1, &flags) &&
		    (flags >> KPF_COMPOUND_TAIL & 1))
			(*large)++;
		else if (flags >> KPF_COMPOUND_HEAD & 1 || flags >> KPF_COMPOUND_TAIL & 1) {
			fail("+%#zx: a large folio that is not one 2 MiB THP", off);
			goto out;
		}
	}
	if (*large != (r->huge ? r->len / SZ_2M : 0)) {
		fail("%lu of %zu 2 MiB ranges are one large folio, expected %s",
		     *large, r->len / SZ_2M, r->huge ? "all" : "none");
		goto out;
	}
	rc = 0;
out:
	if (pm >= 0)
		close(pm);
	if (kf >= 0)
		close(kf);
	return rc;
}

static int region_map(struct region *r, size_t len, int huge)
{
	size_t off;

	r->len = len;
	r->huge = huge;
	r->pgtables_kb = meminfo_kb("PageTables");
	/* 2 MiB aligned, so that every 2 MiB of it can be one THP */
	r->p = mmap((void *)REGION_ADDR, len, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	if (r->p == MAP_FAILED) {
		r->p = NULL;
		return fail("mmap %zu MiB at %#lx: %s", len >> 20, REGION_ADDR,
			    strerror(errno));
	}

	if (madvise(r->p, len, huge ? MADV_HUGEPAGE : MADV_NOHUGEPAGE))
		return fail("madvise(%s): %s", huge ? "HUGEPAGE" : "NOHUGEPAGE",
			    strerror(errno));
	if (madvise(r->p, len, MADV_POPULATE_WRITE))
		return fail("MADV_POPULATE_WRITE: %s", strerror(errno));
	if (huge) {
		/*
		 * Changing the protection of one page splits the PMD mapping
		 * into a PTE table; the folio stays whole. Then keep
		 * khugepaged from collapsing it back.
		 */
		for (off = 0; off < len; off += SZ_2M) {
			if (mprotect(r->p + off, PAGE_SZ, PROT_READ) ||
			    mprotect(r->p + off, PAGE_SZ, PROT_READ | PROT_WRITE))
				return fail("mprotect split: %s", strerror(errno));
		}
		if (madvise(r->p, len, MADV_NOHUGEPAGE))
			return fail("madvise(NOHUGEPAGE): %s", strerror(errno));
	}
	return 0;
}

/*
 * A region is handed out only in the state of a freshly populated one:
 * every PTE writable and dirty, every folio exclusive to us. Mapping and
 * populating 1 GiB of page-size folios costs several times what most rows
 * measure, so that region is kept between repetitions and rows when the
 * state can be had back cheaply (the instruction counts of the rows were
 * checked to be the same as on a new region): mprotect() to read-only and
 * back restores it by itself; after a fork the parent's PTEs are read-only
 * and its folios shared until the child exits, so the region is written
 * again through MADV_POPULATE_WRITE (a write fault that reuses each
 * folio). Not for munmap: freeing a region that was forked costs 8% more
 * than freeing a new one. The 2 MiB-folio region is cheap to make and is
 * made anew for every repetition: arm64 maps a PTE-mapped THP with
 * contiguous-range PTEs, and the first mprotect or write fault in a range
 * unfolds it for good.
 */
static struct region cache[2];
static bool cache_forked;	/* the page-size-folio region was forked */

static int row_munmap(const struct row *row, unsigned long rep);

static void region_drop(struct region *r)
{
	if (r->p) {
		setup_begin("setup/unmap");
		munmap(r->p, r->len);
		wait_pgtables(r->pgtables_kb);
		setup_end();
	}
	r->p = NULL;
}

static int region_get(const struct row *row, unsigned long rep, struct region **out)
{
	struct region *r = &cache[row->huge];
	const char *how = "reused";
	unsigned long large;
	int rc;

	/* only one 1 GiB region at a time */
	region_drop(&cache[!row->huge]);
	if (row->huge || (cache_forked && row->fn == row_munmap))
		region_drop(r);
	if (!r->p) {
		setup_begin(row->huge ? "setup/map/h:1" : "setup/map/h:0");
		rc = region_map(r, opt.mib << 20, row->huge);
		setup_end();
		if (rc)
			return -1;
		how = "new";
	} else if (cache_forked) {
		setup_begin("setup/rewrite/h:0");
		rc = madvise(r->p, r->len, MADV_POPULATE_WRITE);
		setup_end();
		if (rc)
			return fail("MADV_POPULATE_WRITE after fork: %s", strerror(errno));
		how = "rewritten";
	}
	cache_forked = false;
	/* mprotect() to read-only and back leaves the layout alone */
	if (strcmp(how, "reused")) {
		setup_begin("setup/check");
		rc = region_check(r, &large);
		setup_end();
		if (rc)
			return -1;
		r->large = large;
	}
	large = r->large;
	info(row, rep, "mib=%lu ptes=%lu large_folios=%lu region=%s", opt.mib,
	     r->len / PAGE_SZ, large, how);
	*out = r;
	return 0;
}

static int row_fork(const struct row *row, unsigned long rep)
{
	struct region *r;
	int fds[2], status, rc;
	long pid, kb;
	char c = 0;

	if (region_get(row, rep, &r))
		return -1;
	if (pipe(fds))
		return fail("pipe: %s", strerror(errno));
	kb = meminfo_kb("PageTables");
	begin(row, rep);
	/* the bare system call: no libc atfork work inside the row */
	pid = syscall(SYS_clone, SIGCHLD, 0, NULL, NULL, 0);
	if (pid == 0) {
		/* block until the row is closed; exit outside the row */
		if (read(fds[0], &c, 1) < 0)
			_exit(2);
		_exit(0);
	}
	end();
	if (pid < 0)
		return fail("fork: %s", strerror(errno));
	cache_forked = !row->huge;
	setup_begin("setup/child-exit");
	rc = write(fds[1], &c, 1) != 1 || waitpid(pid, &status, 0) != pid ||
	     !WIFEXITED(status) || WEXITSTATUS(status);
	/* the child's page tables, before the next row */
	wait_pgtables(kb);
	setup_end();
	if (rc)
		return fail("child did not exit cleanly");
	close(fds[0]);
	close(fds[1]);
	return 0;
}

static int row_munmap(const struct row *row, unsigned long rep)
{
	struct region *r;
	int rc;

	if (region_get(row, rep, &r))
		return -1;
	begin(row, rep);
	rc = munmap(r->p, r->len);
	wait_pgtables(r->pgtables_kb);
	end();
	r->p = NULL;
	return rc ? fail("munmap: %s", strerror(errno)) : 0;
}

static int row_mprotect(const struct row *row, unsigned long rep)
{
	struct region *r;
	int rc;

	if (region_get(row, rep, &r))
		return -1;
	begin(row, rep);
	rc = mprotect(r->p, r->len, PROT_READ) ||
	     mprotect(r->p, r->len, PROT_READ | PROT_WRITE);
	end();
	return rc ? fail("mprotect: %s", strerror(errno)) : 0;
}

/* ---- sparse: many PTE tables allocated, then freed ---- */

static int row_sparse(const struct row *row, unsigned long rep)
{
	static const struct row munmap_row = { .name = "sparse/munmap" };
	size_t len = opt.sparse_gib << 30, off;
	volatile char *p;
	long kb;
	int rc;

	kb = meminfo_kb("PageTables");
	p = mmap((void *)SPARSE_ADDR, len, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED_NOREPLACE,
		 -1, 0);
	if (p == MAP_FAILED)
		return fail("mmap %lu GiB at %#lx: %s", opt.sparse_gib, SPARSE_ADDR,
			    strerror(errno));
	if (madvise((void *)p, len, MADV_NOHUGEPAGE))
		return fail("madvise: %s", strerror(errno));
	begin(row, rep);
	for (off = 0; off < len; off += SZ_2M)
		p[off] = 1;
	end();
	info(row, rep, "gib=%lu pte_tables=%zu rss_kb=%ld", opt.sparse_gib,
	     len / SZ_2M, smaps_rss_kb((void *)p));
	begin(&munmap_row, rep);
	rc = munmap((void *)p, len);
	wait_pgtables(kb);
	end();
	info(&munmap_row, rep, "gib=%lu pte_tables=%zu", opt.sparse_gib, len / SZ_2M);
	return rc ? fail("munmap: %s", strerror(errno)) : 0;
}

/* ---- lib/test_vmalloc.c, loaded with the row's parameters ---- */

/* The module's last "Summary: ..." line in the kernel log. */
static int vmalloc_summary(char *out, size_t len)
{
	static char buf[1 << 17];
	int n = klogctl(3 /* SYSLOG_ACTION_READ_ALL */, buf, sizeof(buf) - 1);
	char *s, *last = NULL;

	if (n < 0)
		return -1;
	buf[n] = 0;
	for (s = strstr(buf, "Summary: "); s; s = strstr(s + 1, "Summary: "))
		last = s;
	if (!last)
		return -1;
	snprintf(out, len, "%.*s", (int)strcspn(last, "\n"), last);
	return 0;
}

static int row_vmalloc(const struct row *row, unsigned long rep)
{
	char params[256], summary[256] = "";
	long ret;
	int fd, err;

	snprintf(params, sizeof(params),
		 "run_test_mask=%lu nr_pages=%lu use_huge=%d test_loop_count=%lu "
		 "nr_threads=1 sequential_test_order=1 test_repeat_count=1",
		 row->mask, row->pages, row->huge, scaled(row->loops));
	fd = open(VMALLOC_MODULE, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return fail("%s: %s", VMALLOC_MODULE, strerror(errno));
	begin(row, rep);
	ret = syscall(SYS_finit_module, fd, params, 0);
	err = errno;
	end();
	close(fd);
	/* test_vmalloc runs its tests in its init and then refuses to load */
	if (ret != -1 || err != EAGAIN)
		return fail("finit_module returned %ld (%s), expected EAGAIN", ret,
			    strerror(err));
	if (row->mask) {
		if (vmalloc_summary(summary, sizeof(summary)))
			return fail("no test_vmalloc summary in the kernel log");
		if (!strstr(summary, "passed: 1 failed: 0"))
			return fail("test_vmalloc: %s", summary);
	}
	info(row, rep, "loops=%lu params=\"%s\"", row->mask ? scaled(row->loops) : 0,
	     params);
	return 0;
}

/* ---- page cache: a large file read through the linear map ---- */

#define PAGECACHE_FILE	"/tmp/bench.pagecache"

static int pagecache_fill(int fd, char *buf, size_t bufsz, size_t len)
{
	size_t done;
	ssize_t n;

	memset(buf, 0x5a, bufsz);
	for (done = 0; done < len; done += n) {
		n = write(fd, buf, bufsz < len - done ? bufsz : len - done);
		if (n <= 0)
			return -1;
	}
	return lseek(fd, 0, SEEK_SET) == 0 ? 0 : -1;
}

static int row_pagecache(const struct row *row, unsigned long rep)
{
	static char buf[64 << 10];
	size_t len = opt.pagecache_mib << 20, done = 0;
	ssize_t n = 0;
	int fd;

	fd = open(PAGECACHE_FILE, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return fail("%s: %s", PAGECACHE_FILE, strerror(errno));
	if (pagecache_fill(fd, buf, sizeof(buf), len)) {
		close(fd);
		unlink(PAGECACHE_FILE);
		return fail("writing %lu MiB to %s: %s", opt.pagecache_mib,
			    PAGECACHE_FILE, strerror(errno));
	}
	begin(row, rep);
	while (done < len && (n = read(fd, buf, sizeof(buf))) > 0)
		done += n;
	end();
	close(fd);
	unlink(PAGECACHE_FILE);
	if (n < 0 || done != len)
		return fail("read %zu of %zu bytes: %s", done, len,
			    n < 0 ? strerror(errno) : "short file");
	info(row, rep, "mib=%lu pages=%zu", opt.pagecache_mib, len / PAGE_SZ);
	return 0;
}

/* ---- macro: a process-heavy shell loop ---- */

static int row_shell(const struct row *row, unsigned long rep)
{
	char script[512];
	int status;
	pid_t pid;
	long kb;

	/*
	 * Every program is named by its path, so that busybox sh forks and
	 * execs it rather than running the applet inside the shell.
	 */
	snprintf(script, sizeof(script),
		 "i=0; while [ $i -lt %lu ]; do "
		 "/bin/busybox true; "
		 "echo $i >/tmp/bench.$i; "
		 "/bin/busybox cat /tmp/bench.$i >/dev/null; "
		 "echo $i | /bin/busybox wc -c >/dev/null; "
		 "/bin/busybox rm /tmp/bench.$i; "
		 "i=$((i + 1)); done", scaled(row->loops));
	kb = meminfo_kb("PageTables");
	begin(row, rep);
	pid = fork();
	if (pid == 0) {
		execl("/bin/sh", "sh", "-c", script, (char *)NULL);
		_exit(127);
	}
	if (pid > 0 && waitpid(pid, &status, 0) != pid)
		pid = -1;
	/* the last processes' page tables too */
	wait_pgtables(kb);
	end();
	if (pid < 0 || !WIFEXITED(status) || WEXITSTATUS(status))
		return fail("shell loop failed");
	info(row, rep, "iterations=%lu", scaled(row->loops));
	return 0;
}

/* ---- context switches between two address spaces ---- */

static int ctxsw_child(int in, int out)
{
	char c;

	/* echo every byte until the parent closes its end */
	while (read(in, &c, 1) == 1) {
		if (write(out, &c, 1) != 1)
			return 2;
	}
	return 0;
}

static int row_ctxsw(const struct row *row, unsigned long rep)
{
	unsigned long i, n = scaled(row->loops);
	int to_child[2], to_parent[2], status, rc = 0;
	cpu_set_t old, cpu0;
	pid_t pid;
	char c = 0;

	if (sched_getaffinity(0, sizeof(old), &old))
		return fail("sched_getaffinity: %s", strerror(errno));
	CPU_ZERO(&cpu0);
	CPU_SET(0, &cpu0);
	/* both tasks on one CPU: every round trip is two context switches */
	if (sched_setaffinity(0, sizeof(cpu0), &cpu0))
		return fail("sched_setaffinity: %s", strerror(errno));
	if (pipe(to_child) || pipe(to_parent))
		return fail("pipe: %s", strerror(errno));
	pid = fork();
	if (pid == 0) {
		close(to_child[1]);
		close(to_parent[0]);
		_exit(ctxsw_child(to_child[0], to_parent[1]));
	}
	close(to_child[0]);
	close(to_parent[1]);
	/* one round trip before the row: the child runs and waits */
	if (pid < 0 || write(to_child[1], &c, 1) != 1 ||
	    read(to_parent[0], &c, 1) != 1)
		rc = -1;
	begin(row, rep);
	for (i = 0; i < n && !rc; i++) {
		if (write(to_child[1], &c, 1) != 1 ||
		    read(to_parent[0], &c, 1) != 1)
			rc = -1;
	}
	end();
	close(to_child[1]);
	if (pid > 0 && (waitpid(pid, &status, 0) != pid ||
			!WIFEXITED(status) || WEXITSTATUS(status)))
		rc = -1;
	close(to_parent[0]);
	sched_setaffinity(0, sizeof(old), &old);
	if (rc)
		return fail("ping-pong over pipes failed after %lu round trips", i);
	info(row, rep, "switches=%lu", 2 * n);
	return 0;
}

static int row_idle(const struct row *row, unsigned long rep)
{
	struct timespec ts = { .tv_sec = 1 };

	begin(row, rep);
	nanosleep(&ts, NULL);
	end();
	return 0;
}

static int row_smoke(const struct row *row, unsigned long rep)
{
	unsigned long mib = opt.mib;
	int rc;

	opt.mib = 16;
	rc = row_fork(row, rep);
	opt.mib = mib;
	region_drop(&cache[row->huge]);
	cache_forked = false;
	return rc;
}

#define VMALLOC(n, m, p, h, l) \
	{ .name = n, .fn = row_vmalloc, .mask = m, .pages = p, .huge = h, \
	  .loops = l, .in_all = true }

/* In the order they run; the vmalloc loop counts keep each row near 50 M
 * instructions on the base kernel and several lazy-purge cycles of vfree
 * long (see bench/README.md). */
static const struct row rows[] = {
	{ .name = "idle/1s", .fn = row_idle, .in_all = true },
	{ .name = "mprotect/h:0", .fn = row_mprotect, .huge = 0, .in_all = true },
	{ .name = "munmap/h:0", .fn = row_munmap, .huge = 0, .in_all = true },
	{ .name = "fork/h:0", .fn = row_fork, .huge = 0, .in_all = true },
	{ .name = "mprotect/h:1", .fn = row_mprotect, .huge = 1, .in_all = true },
	{ .name = "munmap/h:1", .fn = row_munmap, .huge = 1, .in_all = true },
	{ .name = "fork/h:1", .fn = row_fork, .huge = 1, .in_all = true },
	{ .name = "sparse/touch", .fn = row_sparse, .in_all = true },
	VMALLOC("vmalloc/empty", 0, 1, 0, 1),
	VMALLOC("fix_size_alloc/p:1/h:0", 1, 1, 0, 20000),
	VMALLOC("fix_size_alloc/p:4/h:0", 1, 4, 0, 10000),
	VMALLOC("fix_size_alloc/p:16/h:0", 1, 16, 0, 4000),
	VMALLOC("fix_size_alloc/p:64/h:0", 1, 64, 0, 1000),
	VMALLOC("fix_size_alloc/p:256/h:0", 1, 256, 0, 250),
	VMALLOC("fix_size_alloc/p:16/h:1", 1, 16, 1, 4000),
	VMALLOC("fix_size_alloc/p:64/h:1", 1, 64, 1, 1000),
	VMALLOC("fix_size_alloc/p:256/h:1", 1, 256, 1, 250),
	VMALLOC("random_size_alloc/p:1/h:0", 8, 1, 0, 2000),
	VMALLOC("vm_map_ram/p:1/h:0", 1024, 1, 0, 20000),
	{ .name = "shell-loop", .fn = row_shell, .loops = 50, .in_all = true },
	{ .name = "pagecache/read", .fn = row_pagecache, .in_all = true },
	{ .name = "ctxsw/pipe", .fn = row_ctxsw, .loops = 5000, .in_all = true },
	{ .name = "smoke/fork", .fn = row_smoke },
};

#define NROWS (sizeof(rows) / sizeof(rows[0]))

/* The value of "kpkeys.bench@key=" in @cmdline, or NULL. */
static const char *param(const char *cmdline, const char *key, char *buf, size_t len)
{
	char pat[64];
	const char *s;

	snprintf(pat, sizeof(pat), "kpkeys.bench%s=", key);
	for (s = strstr(cmdline, pat); s; s = strstr(s + 1, pat)) {
		if (s == cmdline || s[-1] == ' ')
			break;
	}
	if (!s)
		return NULL;
	s += strlen(pat);
	snprintf(buf, len, "%.*s", (int)strcspn(s, " \n"), s);
	return buf;
}

static void read_params(int argc, char **argv, char *sel, size_t len)
{
	static char cmdline[4096];
	char buf[64];
	FILE *f;
	int i;

	if (argc > 1) {
		cmdline[0] = 0;
		for (i = 1; i < argc; i++) {
			strncat(cmdline, " ", sizeof(cmdline) - strlen(cmdline) - 1);
			strncat(cmdline, argv[i], sizeof(cmdline) - strlen(cmdline) - 1);
		}
	} else if ((f = fopen("/proc/cmdline", "re"))) {
		if (!fgets(cmdline, sizeof(cmdline), f))
			cmdline[0] = 0;
		fclose(f);
	}
	if (!param(cmdline, "", sel, len))
		snprintf(sel, len, "smoke");
	if (!strcmp(sel, "smoke")) {
		opt.reps = 1;
		opt.warmup = 0;
	}
#define NUM(key, field) \
	if (param(cmdline, key, buf, sizeof(buf))) \
		opt.field = strtoul(buf, NULL, 0)
	NUM("_reps", reps);
	NUM("_mib", mib);
	NUM("_sparse_gib", sparse_gib);
	NUM("_pagecache_mib", pagecache_mib);
	NUM("_loops_pct", loops_pct);
	NUM("_warmup", warmup);
	NUM("_mark_setup", mark_setup);
#undef NUM
}

static bool selected(const struct row *row, const char *sel)
{
	size_t n = strlen(row->name);
	const char *s;

	if (!strcmp(sel, "all"))
		return row->in_all;
	if (!strcmp(sel, "smoke"))
		return !strcmp(row->name, "smoke/fork");
	for (s = sel; (s = strstr(s, row->name)); s++) {
		if ((s == sel || s[-1] == ',') && (s[n] == ',' || !s[n]))
			return true;
	}
	return false;
}

/*
 * Quiet, predictable mm settings: fixed per-CPU page lists, THP only where
 * asked, no khugepaged.
 */
static void setup_system(void)
{
	/*
	 * Fixed per-CPU page-list limits: by default the page allocator tunes
	 * them over time (a delayed work), so freeing 1 GiB cost from 226 M
	 * to 231 M instructions from one repetition to the next.
	 */
	write_file("/proc/sys/vm/percpu_pagelist_high_fraction", "8");
	write_file("/sys/kernel/mm/transparent_hugepage/enabled", "madvise");
	write_file("/sys/kernel/mm/transparent_hugepage/defrag", "madvise");
	write_file("/sys/kernel/mm/transparent_hugepage/khugepaged/scan_sleep_millisecs",
		   "86400000");
	write_file("/sys/kernel/mm/transparent_hugepage/khugepaged/alloc_sleep_millisecs",
		   "86400000");
}

int main(int argc, char **argv)
{
	unsigned long rep, w;
	struct timespec t0, t1;
	int n = 0, failed = 0;
	char sel[1024];
	size_t i;

	read_params(argc, argv, sel, sizeof(sel));
	setup_system();
	printf("kpkeys-bench: rows=%s reps=%lu mib=%lu sparse_gib=%lu loops_pct=%lu warmup=%lu mark_setup=%lu\n",
	       sel, opt.reps, opt.mib, opt.sparse_gib, opt.loops_pct, opt.warmup,
	       opt.mark_setup);
	fflush(stdout);
	for (i = 0; i < NROWS; i++) {
		const struct row *row = &rows[i];
		int rc = 0;

		if (!selected(row, sel))
			continue;
		why[0] = 0;
		clock_gettime(CLOCK_MONOTONIC, &t0);
		if (row->fn != row_fork && row->fn != row_munmap && row->fn != row_mprotect) {
			region_drop(&cache[0]);
			region_drop(&cache[1]);
		}
		opt.marking = false;
		for (w = 0; w < opt.warmup && !rc; w++)
			rc = row->fn(row, w);
		if (!rc) {
			opt.marking = true;
			for (rep = 0; rep < opt.reps && !rc; rep++)
				rc = row->fn(row, rep);
		}
		clock_gettime(CLOCK_MONOTONIC, &t1);
		/* guest time (not a result): which rows the run time goes to */
		printf("kpkeys-bench: row-time row=%s seconds=%.1f\n", row->name,
		       t1.tv_sec - t0.tv_sec + (t1.tv_nsec - t0.tv_nsec) / 1e9);
		n++;
		if (rc) {
			failed++;
			printf("not ok %d %s # %s%s\n", n, row->name,
			       opt.marking ? "" : "warm-up: ", why);
		} else {
			printf("ok %d %s\n", n, row->name);
		}
		fflush(stdout);
	}
	printf("1..%d\n", n);
	if (!n) {
		printf("kpkeys-bench: no row matches \"%s\"\n", sel);
		return 1;
	}
	return failed ? 1 : 0;
}
