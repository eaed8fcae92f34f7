/*
 * poe_bench_smoke.c - end-to-end check of poe-emu's bench counters
 *
 * Runs the row "getpid" twice (repetitions 1 and 2): 1000 getpid()
 * system calls between a BEGIN and an END marker. Under the plugin with
 * bench=FILE, FILE gets two records whose exceptions count is 1000 (plus
 * any interrupt-free page faults: none, the loop is warm) and whose
 * instruction counts agree; the host compares them. The guest side only
 * says that it ran. Without the plugin the markers are NOPs.
 */
#include <stdio.h>
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

int main(void)
{
	printf("TAP version 13\n1..1\n");
	syscall(SYS_getpid);		/* warm the path once */
	row(1);
	row(2);
	printf("ok 1 getpid rows 1 and 2 marked (%d calls each)\n", CALLS);
	return 0;
}
