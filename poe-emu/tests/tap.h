/*
 * tap.h - TAP output for the host tests that number their checks as they
 * go (test-bench.c, test-walk.c): one "ok N - name" line per check(), the
 * plan and the "N passed, N failed" line that make test sums up at the end.
 */
#ifndef TAP_H
#define TAP_H

#include <stdio.h>

static unsigned tap_pass, tap_fail, tap_n;

static inline void check(int ok, const char *name)
{
	tap_n++;
	if (ok)
		tap_pass++;
	else
		tap_fail++;
	printf("%sok %u - %s\n", ok ? "" : "not ", tap_n, name);
}

/* The plan and the summary; returns the exit status. */
static inline int tap_done(void)
{
	printf("1..%u\n", tap_n);
	printf("%u passed, %u failed\n", tap_pass, tap_fail);
	return tap_fail ? 1 : 0;
}

#endif /* TAP_H */
