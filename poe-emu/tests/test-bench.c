/*
 * test-bench.c - host test of the bench counters (count.c) through the
 * whole plugin on the fake QEMU API (tests/fake-qemu.c)
 *
 * Checks that without bench= nothing is instrumented; that with it
 * instructions (by half), barriers, broadcast/local TLBIs, POR_EL1
 * writes, exceptions and interrupts of every vCPU are counted; that the
 * marker delimits rows (the BEGIN marker outside, the END marker inside),
 * ignores other x0 values and an END without BEGIN; that window_insns
 * counts EL1 instructions run while the effective POR_EL1 grants write to
 * every key (from the ISB after the opening MSR to the closing ISB);
 * and the exact record and total lines.
 * Prints TAP and "N passed, N failed"; exits 1 on failure.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fake-qemu.h"
#include "tap.h"
#include "../count.h"

#define NOP		0xd503201fu
#define ISB		0xd5033fdfu
#define DSB_ISH		0xd5033b9fu
#define DSB_ISHNXS	0xd5033a3fu
#define DMB_ISH		0xd5033bbfu
#define TLBI_VALE1IS_X1	0xd50883a1u
#define TLBI_VALE1_X1	0xd50887a1u
#define MSR_POR_EL1_X3	0xd518a283u
#define MSR_TCR2_X4	0xd5182064u
#define MARKER		0xd5032ebfu

#define K	0xffff800000010000ull	/* kernel text (TTBR1 half) */
#define U	0x0000000000400000ull	/* user text (TTBR0 half) */
#define NAME_PA	0x1000

static void marker(unsigned vcpu, uint64_t op, const char *name,
		   uint64_t rep)
{
	if (name)
		fake_poke(NAME_PA, name, strlen(name) + 1);
	fake_cpus[vcpu].x[0] = op;
	fake_cpus[vcpu].x[1] = NAME_PA;
	fake_cpus[vcpu].x[2] = rep;
	fake_exec(vcpu, K + 0x800, MARKER);
}

/* MSR POR_EL1 and the ISB that makes it take effect */
static void por_el1(unsigned vcpu, uint64_t val)
{
	fake_cpus[vcpu].x[3] = val;
	fake_exec(vcpu, K + 0x900, MSR_POR_EL1_X3);
	fake_exec(vcpu, K + 0x904, ISB);
}

static void run(unsigned vcpu, uint64_t pc, uint32_t word, unsigned times)
{
	while (times--)
		fake_exec(vcpu, pc, word);
}

static char *slurp(const char *path)
{
	static char text[4096];
	FILE *f = fopen(path, "r");
	size_t len = f ? fread(text, 1, sizeof(text) - 1, f) : 0;

	if (f)
		fclose(f);
	text[len] = 0;
	return text;
}

static void pure_helpers(void)
{
	char a[64] = "ok_row.1:/+-Z9", b[64] = "bad name!", c[64] = "";

	check(count_marker_op(0x6b706b0000000001ull) == COUNT_OP_BEGIN &&
	      count_marker_op(0x6b706b0000000002ull) == COUNT_OP_END &&
	      !count_marker_op(0x6b706b0000000003ull) &&
	      !count_marker_op(0x6b706c0000000001ull) && !count_marker_op(0),
	      "marker op: BEGIN, END, anything else ignored");
	count_sanitize_name(a);
	count_sanitize_name(b);
	count_sanitize_name(c);
	check(!strcmp(a, "ok_row.1:/+-Z9") && !strcmp(b, "bad?name?") &&
	      !strcmp(c, "?"), "row names are sanitised");
}

/*
 * profile=FILE: EL1 blocks (here one instruction each) counted while a
 * row is open, summed over the row's repetitions; EL0 blocks and
 * instructions outside rows are not. The END marker is part of its row.
 * The POR_EL1 writes of a row by MSR address: those that grant write to
 * every key as opens, the others as other; none outside rows.
 */
static void profile(const char *bench)
{
	char path[] = "/tmp/poe-profile-test.XXXXXX", opts[128];
	const char *text;
	int fd;

	check(fake_install(1, "profile=/dev/null") != 0,
	      "profile= without bench= is refused");
	fd = mkstemp(path);
	close(fd);
	snprintf(opts, sizeof(opts), "bench=%s,profile=%s", bench, path);
	check(fake_install(1, opts) == 0, "install with bench= and profile=");
	fake_init_vcpus();
	fake_cpus[0].x[30] = K + 0x2340;	/* the opener's caller */
	run(0, K + 0x40, NOP, 5);		/* before the row */
	por_el1(0, 0x77777777);
	marker(0, COUNT_MAGIC | COUNT_OP_BEGIN, "p", 0);
	run(0, K + 0x40, NOP, 3);
	run(0, U, NOP, 2);
	por_el1(0, 0x77777717);			/* closes */
	por_el1(0, 0x77777777);			/* opens */
	marker(0, COUNT_MAGIC | COUNT_OP_END, NULL, 0);
	run(0, K + 0x40, NOP, 5);		/* between the rows */
	por_el1(0, 0x77777717);
	marker(0, COUNT_MAGIC | COUNT_OP_BEGIN, "p", 1);
	run(0, K + 0x44, NOP, 1);
	run(0, K + 0x40, NOP, 1);
	por_el1(0, 0x77777777);
	marker(0, COUNT_MAGIC | COUNT_OP_END, NULL, 0);
	fake_exit();

	text = slurp(path);
	printf("# %s", text);
	check(strstr(text, "poe-profile: row=p pc=0xffff800000010040 insns=4\n") &&
	      strstr(text, "poe-profile: row=p pc=0xffff800000010044 insns=1\n") &&
	      strstr(text, "poe-profile: row=p pc=0xffff800000010800 insns=2\n"),
	      "profile: EL1 blocks of both repetitions, END marker included");
	check(!strstr(text, "pc=0x400000 ") && !strstr(text, "insns=9") &&
	      !strstr(text, "insns=14"),
	      "profile: no EL0 block, nothing outside the rows");
	check(strstr(text, "poe-profile-por: row=p pc=0xffff800000010900 "
		     "lr=0xffff800000012340 opens=2 other=1\n") != NULL,
	      "profile: the rows' POR_EL1 writes by MSR, opens apart");
	unlink(path);
	unlink(bench);
}

int main(void)
{
	char path[] = "/tmp/poe-bench-test.XXXXXX", opts[128];
	const char *text;
	unsigned nop_ops;
	int fd;

	printf("TAP version 13\n");
	pure_helpers();

	/* without bench=: no counting instrumentation (a fetch check on
	 * the first instruction of a TB: here every instruction is a TB) */
	check(fake_install(2, "") == 0, "install without bench=");
	fake_init_vcpus();
	nop_ops = fake_ops_on(K, NOP);
	check(nop_ops > 0 && fake_ops_on(K + 4, DSB_ISH) == nop_ops &&
	      fake_ops_on(K + 8, MARKER) == nop_ops,
	      "no bench=: NOP, DSB and the marker are not counted");
	fake_exit();

	fd = mkstemp(path);
	close(fd);
	snprintf(opts, sizeof(opts), "bench=%s", path);
	check(fake_install(2, opts) == 0, "install with bench=FILE");
	fake_init_vcpus();
	check(fake_ops_on(K, NOP) == nop_ops + 1 &&
	      fake_ops_on(K + 4, DSB_ISH) == nop_ops + 2 &&
	      fake_ops_on(K + 8, MARKER) == nop_ops + 2,
	      "bench=: one inline add per insn, one per event, the marker");

	marker(0, 0, NULL, 0);			/* x0 = 0: not a marker */
	marker(0, COUNT_MAGIC | COUNT_OP_END, NULL, 0);	/* no row open */
	check(!*slurp(path), "non-marker hint and END without BEGIN: no record");

	marker(0, COUNT_MAGIC | COUNT_OP_BEGIN, "row.a/1", 7);
	run(0, U, NOP, 3);
	run(0, K, ISB, 1);
	run(0, K + 4, DSB_ISH, 1);
	run(0, K + 8, DSB_ISHNXS, 1);
	run(0, K + 12, DMB_ISH, 1);
	run(0, K + 16, TLBI_VALE1IS_X1, 1);
	run(0, K + 20, TLBI_VALE1_X1, 1);
	fake_discon(0, QEMU_PLUGIN_DISCON_EXCEPTION, K, K + 0x400);
	fake_discon(0, QEMU_PLUGIN_DISCON_INTERRUPT, K, K + 0x480);
	run(1, K + 24, NOP, 2);			/* the other vCPU */
	fake_cpus[0].x[4] = 0xc;		/* TCR2_EL1.POE | E0POE */
	run(0, K + 28, MSR_TCR2_X4, 1);
	por_el1(0, 0x77777717);			/* key 1 read-only */
	por_el1(0, 0x77777777);			/* window opens */
	run(0, K + 32, NOP, 4);
	por_el1(0, 0x77777717);			/* window closes */
	marker(0, COUNT_MAGIC | COUNT_OP_END, NULL, 0);

	fake_cpus[1].x[4] = 0xc;
	run(1, K + 28, MSR_TCR2_X4, 1);
	marker(1, COUNT_MAGIC | COUNT_OP_BEGIN, "bad name!", 8);
	por_el1(1, 0x77777777);
	run(1, K + 36, NOP, 2);
	marker(0, COUNT_MAGIC | COUNT_OP_END, NULL, 0);	/* from vCPU 0 */
	por_el1(1, 0x77777717);
	fake_exit();

	text = slurp(path);
	printf("# %s", text);
	check(strstr(text, "poe-bench: row=row.a/1 rep=7 insns=23 insns_el0=3 "
		     "insns_el1=20 por_el1_writes=3 isb=4 dsb=2 tlbi_bcast=1 "
		     "tlbi_local=1 exceptions=1 irqs=1 window_insns=6 dmb=1\n")
	      == text, "row 1: every counter, END marker counted, BEGIN not");
	check(strstr(text, "\npoe-bench: row=bad?name? rep=8 insns=5 "
		     "insns_el0=0 insns_el1=5 por_el1_writes=1 isb=1 dsb=0 "
		     "tlbi_bcast=0 tlbi_local=0 exceptions=0 irqs=0 "
		     "window_insns=2 dmb=0\n") != NULL,
	      "row 2: opened on vCPU 1, closed on vCPU 0, window open at END");
	check(strstr(text, "\npoe-bench-total: insns=35 insns_el0=3 "
		     "insns_el1=32 por_el1_writes=5 isb=6 dsb=2 tlbi_bcast=1 "
		     "tlbi_local=1 exceptions=1 irqs=1 window_insns=10 dmb=1\n")
	      != NULL, "total line at exit");
	unlink(path);

	profile(path);

	return tap_done();
}
