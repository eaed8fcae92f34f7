/*
 * test-window.c - host test of the window attribution (window.c) through
 * the whole plugin on the fake QEMU API (tests/fake-qemu.c)
 *
 * A System.map whose addresses are the kernel's run-time ones minus a
 * KASLR slide, learnt from the kernel's MSR VBAR_EL1; an allow list with
 * comments, a name, a name whose clone runs, and a prefix glob. Blocks of
 * several instructions run with the window (POR_EL1 granting write to
 * every key, TCR2_EL1.POE) closed, written but not yet synchronised, open
 * on this vCPU only, and closed again; one block runs over the end of a
 * function into the next, one in data past a function, one at EL0. The
 * per-function counts are checked exactly, without and with bench=, whose
 * window_insns must be the same total. Then the callers of the leak
 * functions (x30 at their entry blocks): in another function, in an
 * allowed one, in user space, past the kernel's image; none for an
 * allowed function, a block in mid-function or falling into a function,
 * a vCPU without a window or the window closed.
 * Prints TAP and "N passed, N failed"; exits 1 on failure.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fake-qemu.h"
#include "tap.h"

#define NOP		0xd503201fu
#define ISB		0xd5033fdfu
#define MSR_POR_EL1_X3	0xd518a283u
#define MSR_TCR2_X4	0xd5182064u
#define MSR_VBAR_X5	0xd518c005u

#define K	0xffff800000010000ull	/* kernel text, run-time */
#define SLIDE	0x1234000ull		/* run-time minus System.map */
#define VEC	0xffff800000000800ull	/* vectors, run-time */
#define U	0x0000000000400000ull	/* user text */

#define WINDOW_OPEN	0x77777777ull	/* every key RWX */
#define WINDOW_CLOSED	0x77777737ull	/* key 1 read and execute */

static char map_path[] = "/tmp/poe-window-map.XXXXXX";
static char allow_path[] = "/tmp/poe-window-allow.XXXXXX";

/* one line of the System.map: a run-time address, linked SLIDE lower */
static void sym(FILE *f, uint64_t run, char type, const char *name)
{
	fprintf(f, "%016llx %c %s\n", (unsigned long long)(run - SLIDE), type,
		name);
}

static void write_files(void)
{
	FILE *f = fdopen(mkstemp(map_path), "w");

	sym(f, VEC, 'T', "vectors");
	sym(f, K, 't', "early_fn");
	sym(f, K + 0x100, 'T', "allowed_fn");
	sym(f, K + 0x180, 'T', "allowed_fn2");
	sym(f, K + 0x200, 't', "leaky_fn");
	sym(f, K + 0x300, 't', "set_pte.constprop.0");
	sym(f, K + 0x400, 'W', "weak_fn");
	sym(f, K + 0x500, 'd', "some_table");
	sym(f, K + 0x600, 't', "dup_fn");	/* two static functions */
	sym(f, K + 0x680, 't', "dup_fn");
	sym(f, K + 0x900, 'T', "kpkeys_set_level");
	sym(f, K + 0x1000, 'A', "an_absolute");
	sym(f, K + 0x2000, 'B', "_end");
	fclose(f);
	f = fdopen(mkstemp(allow_path), "w");
	fprintf(f, "# functions that may run in a window\n\n"
		   "allowed_fn\n"
		   "  set_pte   # its clones too\n"
		   "kpkeys_*\n");
	fclose(f);
}

static void tb(unsigned vcpu, uint64_t pc, unsigned n, unsigned times)
{
	uint32_t words[8];
	unsigned i;

	for (i = 0; i < n; i++)
		words[i] = NOP;
	while (times--)
		fake_exec_tb(vcpu, pc, words, n);
}

/* MSR POR_EL1 and the ISB, each its own block, in kpkeys_set_level */
static void por_el1(uint64_t val, bool isb)
{
	fake_cpus[0].x[3] = val;
	fake_exec(0, K + 0x900, MSR_POR_EL1_X3);
	if (isb)
		fake_exec(0, K + 0x904, ISB);
}

/* the file, as TAP comments */
static void show(const char *text)
{
	char **lines = g_strsplit(text, "\n", -1), **l;

	for (l = lines; *l; l++)
		if (**l)
			printf("# %s\n", *l);
	g_strfreev(lines);
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

static const char expected[] =
	"poe-window: fn=allowed_fn insns=9 allowed=1\n"
	"poe-window: fn=leaky_fn insns=6 allowed=0\n"
	"poe-window: fn=dup_fn insns=3 allowed=0\n"
	"poe-window: fn=? insns=2 allowed=0\n"
	"poe-window: fn=kpkeys_set_level insns=2 allowed=1\n"
	"poe-window: fn=set_pte.constprop.0 insns=2 allowed=1\n"
	"poe-window: fn=allowed_fn2 insns=1 allowed=0\n"
	"poe-window: fn=weak_fn insns=1 allowed=0\n"
	"poe-window-total: insns=26 leaks=13 leak_fns=5\n"
	"poe-window-caller: fn=leaky_fn caller=kpkeys_set_level calls=1\n"
	"poe-window-caller: fn=dup_fn caller=kpkeys_set_level calls=2\n"
	"poe-window-caller: fn=allowed_fn2 caller=kpkeys_set_level calls=1\n"
	"poe-window-caller: fn=weak_fn caller=kpkeys_set_level calls=1\n";

static void scenario(const char *bench)
{
	char out[] = "/tmp/poe-window-out.XXXXXX", opts[256];
	const char *text;

	close(mkstemp(out));
	snprintf(opts, sizeof(opts), "windows=%s,sysmap=%s,window_allow=%s%s%s",
		 out, map_path, allow_path, bench ? ",bench=" : "",
		 bench ? bench : "");
	check(fake_install(2, opts) == 0, "install with windows=");
	fake_init_vcpus();
	fake_cpus[0].x[5] = VEC;		/* the KASLR slide */
	fake_exec(0, K + 0x40, MSR_VBAR_X5);

	tb(0, K + 0x100, 3, 1);			/* overlay off */
	fake_cpus[0].x[4] = 8;			/* TCR2_EL1.POE */
	fake_exec(0, K + 0x908, MSR_TCR2_X4);
	por_el1(WINDOW_CLOSED, true);
	tb(0, K + 0x100, 3, 1);			/* closed */
	tb(0, K + 0x200, 4, 1);
	por_el1(WINDOW_OPEN, false);
	tb(0, K + 0x100, 3, 1);			/* not synchronised yet */
	fake_exec(0, K + 0x904, ISB);		/* opens: outside */
	fake_cpus[0].x[30] = K + 0x90c;		/* called from there */

	tb(0, K + 0x100, 3, 3);			/* allowed_fn: 9 */
	tb(0, K + 0x180, 1, 1);			/* allowed_fn2: 1 */
	tb(0, K + 0x200, 4, 1);			/* leaky_fn: 4 */
	tb(0, K + 0x2f8, 4, 1);			/* leaky_fn 2, set_pte 2 */
	tb(0, K + 0x400, 1, 1);			/* weak_fn: 1 */
	tb(0, K + 0x500, 2, 1);			/* data: "?" 2 */
	tb(0, K + 0x600, 1, 1);			/* dup_fn: 1 + 2 */
	tb(0, K + 0x680, 2, 1);
	tb(0, U, 4, 1);				/* EL0: not the kernel's */
	tb(1, K + 0x200, 4, 2);			/* vCPU 1: no window */
	por_el1(WINDOW_CLOSED, true);		/* closes: both inside */
	tb(0, K + 0x100, 3, 2);			/* closed again */
	fake_exit();

	text = slurp(out);
	show(text);
	check(!strcmp(text, expected), bench ?
	      "per-function counts, allow list, total (with bench=)" :
	      "per-function counts, allow list, total (no bench=)");
	if (bench) {
		text = slurp(bench);
		check(strstr(text, "poe-bench-total:") &&
		      strstr(text, " window_insns=26 "),
		      "bench= window_insns is the same total");
		unlink(bench);
	}
	unlink(out);
}

static const char expected_callers[] =
	"poe-window: fn=weak_fn insns=14 allowed=0\n"
	"poe-window: fn=allowed_fn insns=2 allowed=1\n"
	"poe-window: fn=kpkeys_set_level insns=2 allowed=1\n"
	"poe-window: fn=leaky_fn insns=1 allowed=0\n"
	"poe-window: fn=set_pte.constprop.0 insns=1 allowed=1\n"
	"poe-window-total: insns=20 leaks=15 leak_fns=2\n"
	"poe-window-caller: fn=weak_fn caller=leaky_fn calls=3\n"
	"poe-window-caller: fn=weak_fn caller=? calls=2\n"
	"poe-window-caller: fn=weak_fn caller=allowed_fn calls=1\n"
	"poe-window-caller: fn=leaky_fn caller=weak_fn calls=1\n";

/* entries into weak_fn and leaky_fn (leaks) and allowed_fn, by caller */
static void callers(void)
{
	char out[] = "/tmp/poe-window-out.XXXXXX", opts[256];
	const char *text;

	close(mkstemp(out));
	snprintf(opts, sizeof(opts), "windows=%s,sysmap=%s,window_allow=%s",
		 out, map_path, allow_path);
	check(fake_install(2, opts) == 0, "install with windows= (callers)");
	fake_init_vcpus();
	fake_cpus[0].x[5] = VEC;
	fake_exec(0, K + 0x40, MSR_VBAR_X5);
	fake_cpus[0].x[4] = 8;
	fake_exec(0, K + 0x908, MSR_TCR2_X4);
	por_el1(WINDOW_OPEN, true);		/* opens at the ISB */

	fake_cpus[0].x[30] = K + 0x210;		/* in leaky_fn */
	tb(0, K + 0x400, 2, 3);			/* weak_fn: 3 calls */
	fake_cpus[0].x[30] = K + 0x104;		/* in allowed_fn */
	tb(0, K + 0x400, 2, 1);
	fake_cpus[0].x[30] = U + 0x10;		/* user space: "?" */
	tb(0, K + 0x400, 2, 1);
	fake_cpus[0].x[30] = K + 0x2100;	/* past _end, a module: "?" */
	tb(0, K + 0x400, 2, 1);
	fake_cpus[0].x[30] = K + 0x404;		/* in weak_fn */
	tb(0, K + 0x200, 1, 1);			/* leaky_fn: 1 call */
	fake_cpus[0].x[30] = K + 0x210;
	tb(0, K + 0x100, 2, 1);			/* allowed: no caller */
	tb(0, K + 0x404, 1, 1);			/* mid-function: no entry */
	tb(0, K + 0x3fc, 2, 1);			/* falls into weak_fn: none */
	fake_cpus[1].x[30] = K + 0x610;		/* in dup_fn */
	tb(1, K + 0x400, 2, 1);			/* vCPU 1: no window */
	por_el1(WINDOW_CLOSED, true);		/* closes */
	fake_cpus[0].x[30] = K + 0x610;
	tb(0, K + 0x400, 2, 2);			/* closed: no caller */
	fake_exit();

	text = slurp(out);
	show(text);
	check(strstr(text, "poe-window-caller: fn=weak_fn caller=leaky_fn "
			   "calls=3\n") != NULL,
	      "a leak entered from another function: its caller, counted");
	check(!strstr(text, "fn=allowed_fn caller="),
	      "no caller line for an allowed function");
	check(!strstr(text, "caller=dup_fn"),
	      "no caller with the window closed or on another vCPU");
	check(!strcmp(text, expected_callers),
	      "callers: \"?\" outside the text, order, exact file");
	unlink(out);
}

int main(void)
{
	char bench[] = "/tmp/poe-window-bench.XXXXXX";

	printf("TAP version 13\n");
	write_files();
	check(fake_install(1, "windows=/dev/null") != 0,
	      "windows= without sysmap= is refused");
	check(fake_install(1, "window_allow=/dev/null") != 0,
	      "window_allow= without windows= is refused");
	scenario(NULL);
	close(mkstemp(bench));
	scenario(bench);
	callers();
	unlink(map_path);
	unlink(allow_path);
	return tap_done();
}
