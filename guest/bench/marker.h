/*
 * marker.h - row markers for poe-emu's bench counters
 *
 * A row is the code between bench_begin() and bench_end(). Under the POE
 * emulator with the plugin option bench=FILE, every vCPU counts
 * instructions, barriers, TLBIs, exceptions and POR_EL1 writes, and each
 * completed row appends one "poe-bench: row=NAME rep=N ..." record to FILE
 * (the record format is in poe-emu/README.md).
 *
 * The marker is HINT #0x75 with x0 = magic | op, x1 = row name, x2 = the
 * repetition number. The hint is unallocated: a NOP on hardware, in QEMU
 * without the plugin and in the plugin without bench=, so marked code runs
 * everywhere. Header-only, no libc: usable at EL0 and (copied) at EL1.
 */
#ifndef KPKEYS_BENCH_MARKER_H
#define KPKEYS_BENCH_MARKER_H

#define BENCH_MARKER_BEGIN	0x6b706b0000000001UL	/* "kpk", op 1 */
#define BENCH_MARKER_END	0x6b706b0000000002UL	/* "kpk", op 2 */
#define BENCH_NAME_MAX		63	/* [A-Za-z0-9_.:/+-] */

static inline void bench_marker(unsigned long op, const char *name,
				unsigned long rep)
{
	register unsigned long x0 asm("x0") = op;
	register const char *x1 asm("x1") = name;
	register unsigned long x2 asm("x2") = rep;

	/* "memory": the name is in memory, and no access crosses a marker */
	asm volatile("hint #0x75" : : "r"(x0), "r"(x1), "r"(x2) : "memory");
}

/* Open row @name (NUL-terminated, readable), repetition @rep. */
static inline void bench_begin(const char *name, unsigned long rep)
{
	bench_marker(BENCH_MARKER_BEGIN, name, rep);
}

/* Close the row opened by the last bench_begin(), on any CPU. */
static inline void bench_end(void)
{
	bench_marker(BENCH_MARKER_END, 0, 0);
}

#endif
