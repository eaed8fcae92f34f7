/*
 * poe_bench_smoke.c - end-to-end check of poe-emu's bench counters
 *
 * Runs the row "getpid" twice (repetitions 1 and 2): 1000 getpid()
 * system calls between a BEGIN and an END marker; under the plugin with
 * bench=FILE, FILE gets two records with exceptions=1000 (the loop is
 * warm: no page faults) and, without interrupts, the same instruction
 * counts. Then the row "mmap" twice: 100 times mmap() a page, touch it,
 * munmap() it: page-table writes (kpkeys windows, POR_EL1 writes on a
 * hardened kernel) and TLB invalidations. The guest side only says that
 * it ran. Without the plugin the markers are NOPs.
 */
#include <stdio.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../bench/marker.h"

#define CALLS 1000

static void row(unsigned long rep)
{
	int i;

	bench_begin("getpid", rep);
	for (i = 0; i < CALLS; i++)
		syscall(SYS_getpid);
	bench_end();
}

static void row_mmap(unsigned long rep)
{
	int i;

	bench_begin("mmap", rep);
	for (i = 0; i < 100; i++) {
		volatile char *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
					MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (p == MAP_FAILED)
			break;
		p[0] = 1;
		munmap((void *)p, 4096);
	}
	bench_end();
}

int main(void)
{
	printf("TAP version 13\n1..2\n");
	syscall(SYS_getpid);		/* warm the path once */
	row(1);
	row(2);
	printf("ok 1 getpid rows 1 and 2 marked (%d calls each)\n", CALLS);
	row_mmap(1);
	row_mmap(2);
	printf("ok 2 mmap rows 1 and 2 marked (100 mmap/touch/munmap)\n");
	return 0;
}
