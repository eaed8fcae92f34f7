/*
 * test-store.c - host test of the window stores (store.c) through the
 * whole plugin on the fake QEMU API (tests/fake-qemu.c)
 *
 * Guest tables in the fake RAM map a page of key 1, a page of key 2 and
 * a data page of key 0; a System.map (run-time addresses minus a KASLR
 * slide learnt from MSR VBAR_EL1) has the init task's stack 32K long.
 * Stores run with the overlay off, with the window closed (POR_EL1
 * denying key 1 write), written but not synchronised, open, and closed
 * again, on this vCPU and on one without a window, in the kernel's text,
 * past it and at EL0. In the window they are classified (key 1: pgtable;
 * in the 32K region of SP, also with SP at its top: stack; else other),
 * by every store class (STP, an atomic, STXR, DC ZVA, a MOPS prologue
 * and not its main instruction nor a zero-size one, STTR; loads and
 * PRFM not at all), other ones by function (two static functions of
 * one name added up, code past the image "?"), and by caller: x30 in a
 * leaf, the frame record (with a PAC to strip) after a call, "?" with
 * no frame. The file is checked exactly. Then the page-table keys come
 * from the POR_EL1 value that closed the window (key 2 there, key 1 a
 * store to other memory), and stacks are 16K without the init stack's
 * symbols. Only the store's callback runs in a window, and none with the
 * overlay off.
 * Prints TAP and "N passed, N failed"; exits 1 on failure.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fake-qemu.h"
#include "tap.h"

#define ISB		0xd5033fdfu
#define MSR_POR_EL1_X3	0xd518a283u
#define MSR_TCR2_X4	0xd5182064u
#define MSR_VBAR_X5	0xd518c005u
#define STR_X1_X2	0xf9000041u	/* str x1, [x2] */
#define STR_X1_SP8	0xf90007e1u	/* str x1, [sp, #8] */
#define LDR_X1_X2	0xf9400041u	/* ldr x1, [x2] */
#define PRFM_X2		0xf9800040u	/* prfm pldl1keep, [x2] */
#define STP_X1_X3_X2	0xa9000c41u	/* stp x1, x3, [x2] */
#define STXR_W4_X1_X2	0xc8047c41u	/* stxr w4, x1, [x2] */
#define DC_ZVA_X2	0xd50b7422u	/* dc zva, x2 */
#define LDADD_X1_X3_X2	0xf8210043u	/* ldadd x1, x3, [x2] */
#define SETP_X2_X5_X1	0x19c104a2u	/* setp [x2]!, x5!, x1 */
#define SETM_X2_X5_X1	0x19c144a2u	/* setm [x2]!, x5!, x1 */
#define CPYFP_X2_X6_X5	0x190604a2u	/* cpyfp [x2]!, [x6]!, x5! */
#define STTR_X1_X2	0xf8000841u	/* sttr x1, [x2] */

/* guest layout: 4K granule, 48-bit VAs, tables from PA 0x10000 */
#define K	0xffff000000100000ull	/* kernel text, run-time */
#define KD	0xffff000000200000ull	/* kernel data */
#define PT1	(KD + 0x0000)		/* a page of key 1 */
#define PT2	(KD + 0x1000)		/* a page of key 2 */
#define DATA	(KD + 0x2000)		/* key 0 */
#define FRAME	(KD + 0x3000)		/* frame records, in the fake RAM */
#define STACK	0xffff000000300000ull	/* a 32K-aligned stack region */
#define VEC	0xffff000000000800ull	/* vectors, run-time */
#define U	0x0000000000400000ull	/* user text */
#define SLIDE	0x1234000ull		/* run-time minus System.map */
#define PO(k)	((uint64_t)(k) << 60)
#define PCPU	0x100000ull		/* vCPU 0's per-CPU offset */
#define TASK	(KD + 0x4000)		/* the current task, SP_EL0 */

#define CLOSED_KEY1	0x77777737ull	/* key 1 read and execute */
#define CLOSED_KEY2	0x77777377ull	/* key 2 read and execute */
#define OPEN		0x77777777ull	/* every key RWX: the window */

static char map_path[] = "/tmp/poe-store-map.XXXXXX";
static char map16_path[] = "/tmp/poe-store-map16.XXXXXX";
static uint64_t next_table, root1;

static void sym(FILE *f, uint64_t run, char type, const char *name)
{
	fprintf(f, "%016llx %c %s\n", (unsigned long long)(run - SLIDE), type,
		name);
}

/* the System.map; with the init task's stack (32K) or without it */
static void write_map(char *path, bool init_stack)
{
	FILE *f = fdopen(mkstemp(path), "w");

	sym(f, VEC, 'T', "vectors");
	sym(f, K, 'T', "_text");
	sym(f, K, 't', "store_fn");
	sym(f, K + 0x100, 't', "nonleaf_fn");
	sym(f, K + 0x200, 'T', "caller_a");
	sym(f, K + 0x300, 'T', "caller_b");
	sym(f, K + 0x400, 't', "dup_fn");	/* two static functions */
	sym(f, K + 0x480, 't', "dup_fn");
	sym(f, K + 0x500, 'T', "kpkeys_fn");
	sym(f, K + 0x600, 'T', "memset");
	sym(f, K + 0x700, 't', "noframe_fn");
	sym(f, K + 0x800, 't', "framed_fn");
	if (init_stack) {
		sym(f, K + 0x1000, 'D', "__start_init_stack");
		sym(f, K + 0x1000, 'D', "init_stack");
		sym(f, K + 0x9000, 'D', "__end_init_stack");
	}
	sym(f, K + 0xa000, 'D', "vm_node_stat");
	sym(f, K + 0xb000, 'D', "init_task");
	sym(f, K + 0xb400, 'd', "init_cred");
	sym(f, K + 0xc000, 'D', "__per_cpu_start");
	sym(f, K + 0xc100, 'd', "pcpu_var");
	sym(f, K + 0xd000, 'D', "__per_cpu_end");
	sym(f, K + 0x10000, 'B', "_end");
	fclose(f);
}

/* the level-3 descriptor slot of a TTBR1 va, allocating tables */
static uint64_t slot(uint64_t va)
{
	uint64_t table = root1, s;
	int lvl;

	for (lvl = 0;; lvl++) {
		s = table + ((va >> (39 - 9 * lvl)) & 511) * 8;
		if (lvl == 3)
			return s;
		if (!(fake_rd64(s) & 1)) {
			fake_wr64(s, next_table | 3);
			memset(fake_mem + next_table, 0, 4096);
			next_table += 4096;
		}
		table = fake_rd64(s) & 0x0000fffffffff000ull;
	}
}

static void map(uint64_t va, uint64_t attrs)
{
	fake_wr64(slot(va), 0x100000 | (va & 0xff000) | attrs | 3 | 1 << 10);
}

static void setup(const char *opts)
{
	unsigned i, r;

	if (fake_install(2, opts)) {
		printf("# install failed\n");
		exit(1);
	}
	fake_init_vcpus();
	/* distinct values: the fast register path (regs.c) */
	for (i = 0; i < 2; i++) {
		for (r = 0; r < 31; r++)
			fake_cpus[i].x[r] = 0x5a5a000000000000ull | r << 12 | i;
		fake_cpus[i].sp = STACK + 0x7000;
	}
	memset(fake_mem, 0, 0x100000);
	next_table = 0x10000;
	root1 = next_table;
	next_table += 4096;
	for (i = 0; i < 2; i++) {
		*fake_sys(i, "TCR_EL1") = 16 | 16 << 16 | 2ull << 30;
		*fake_sys(i, "TTBR1_EL1") = root1;
		*fake_sys(i, "SCTLR_EL1") = 1;
	}
	map(PT1, PO(1));
	map(PT2, PO(2));
	map(DATA, PO(0));
	map(FRAME, PO(0));
	*fake_sys(0, "TPIDR_EL1") = PCPU;
	*fake_sys(0, "SP_EL0") = TASK;
	fake_cpus[0].x[5] = VEC;		/* the KASLR slide */
	fake_exec(0, K + 0x540, MSR_VBAR_X5);
}

/* MSR POR_EL1 in kpkeys_fn, and its ISB if isb */
static void por_el1(uint64_t val, bool isb)
{
	fake_cpus[0].x[3] = val;
	fake_exec(0, K + 0x500, MSR_POR_EL1_X3);
	if (isb)
		fake_exec(0, K + 0x504, ISB);
}

static void poe_on(void)
{
	fake_cpus[0].x[4] = 8;			/* TCR2_EL1.POE */
	fake_exec(0, K + 0x508, MSR_TCR2_X4);
}

/*
 * A frame record at va, on a page map() mapped: the caller's frame
 * pointer, its return address
 */
static void frame(uint64_t va, uint64_t fp, uint64_t lr)
{
	uint64_t pa = 0x100000 | (va & 0xfffff);

	fake_wr64(pa, fp);
	fake_wr64(pa + 8, lr);
}

/*
 * The frames above a function called from caller_a: caller_a's (return
 * to caller_b, with a PAC), caller_b's (to kpkeys_fn), kpkeys_fn's (to
 * caller_a), caller_a's (to store_fn: past PATH_DEPTH); one that returns
 * to user space; one whose caller's is below it, returning to memset; a
 * function's own, returning (with a PAC) to caller_a as its x30 does.
 */
static void frames(void)
{
	frame(FRAME, FRAME + 0x100, 0x12b5000000100310ull);
	frame(FRAME + 0x100, FRAME + 0x200, K + 0x520);
	frame(FRAME + 0x200, FRAME + 0x280, K + 0x204);
	frame(FRAME + 0x280, 0, K + 0x8);
	frame(FRAME + 0x300, 0, U + 0x10);
	frame(FRAME + 0x400, FRAME + 0x100, K + 0x604);
	frame(FRAME - 0x100, FRAME, 0x3ac5000000100208ull);
}

/* a store to x2 at pc on vCPU 0: the callbacks it ran */
static unsigned st(uint64_t pc, uint32_t word, uint64_t x2)
{
	fake_cpus[0].x[2] = x2;
	fake_exec(0, pc, word);
	return fake_callbacks_run();
}

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
	"poe-window-store: fn=memset stores=6\n"
	"poe-window-store: fn=dup_fn stores=2\n"
	"poe-window-store: fn=store_fn stores=2\n"
	"poe-window-store: fn=? stores=1\n"
	"poe-window-store: fn=framed_fn stores=1\n"
	"poe-window-store: fn=noframe_fn stores=1\n"
	"poe-window-store: fn=nonleaf_fn stores=1\n"
	"poe-window-stores-total: pgtable=1 stack=3 other=14 other_fns=7\n"
	"poe-window-store-caller: fn=memset caller=caller_a stores=6\n"
	"poe-window-store-caller: fn=dup_fn caller=caller_b stores=2\n"
	"poe-window-store-caller: fn=store_fn caller=caller_a stores=2\n"
	"poe-window-store-caller: fn=framed_fn caller=caller_a stores=1\n"
	"poe-window-store-caller: fn=noframe_fn caller=? stores=1\n"
	"poe-window-store-caller: fn=nonleaf_fn caller=caller_b stores=1\n"
	"poe-window-store-target: fn=memset target=dynamic stores=5\n"
	"poe-window-store-target: fn=memset target=user stores=1\n"
	"poe-window-store-target: fn=dup_fn target=image:vm_node_stat "
	"stores=1\n"
	"poe-window-store-target: fn=dup_fn target=percpu:pcpu_var stores=1\n"
	"poe-window-store-target: fn=store_fn target=dynamic stores=2\n"
	"poe-window-store-target: fn=framed_fn target=dynamic stores=1\n"
	"poe-window-store-target: fn=noframe_fn target=current stores=1\n"
	"poe-window-store-target: fn=nonleaf_fn target=dynamic stores=1\n"
	"poe-window-store-path: fn=memset path=caller_a<caller_b<kpkeys_fn<"
	"caller_a stores=6\n"
	"poe-window-store-path: fn=dup_fn path=caller_b<? stores=1\n"
	"poe-window-store-path: fn=dup_fn path=caller_b<memset stores=1\n"
	"poe-window-store-path: fn=store_fn path=caller_a stores=2\n"
	"poe-window-store-path: fn=framed_fn path=caller_a<caller_b<"
	"kpkeys_fn<caller_a stores=1\n"
	"poe-window-store-path: fn=noframe_fn path=? stores=1\n"
	"poe-window-store-path: fn=nonleaf_fn path=caller_b<kpkeys_fn<"
	"caller_a<store_fn stores=1\n";

static void classify(void)
{
	char out[] = "/tmp/poe-store-out.XXXXXX", opts[256];
	const char *text;
	unsigned n;

	close(mkstemp(out));
	snprintf(opts, sizeof(opts), "window_stores=%s,sysmap=%s", out,
		 map_path);
	setup(opts);
	frames();

	n = st(K + 0x10, STR_X1_X2, DATA);	/* overlay off */
	check(n == 0, "overlay off: no callback runs for a store");
	poe_on();
	por_el1(CLOSED_KEY1, true);
	st(K + 0x10, STR_X1_X2, DATA);		/* closed */
	por_el1(OPEN, false);
	st(K + 0x10, STR_X1_X2, DATA);		/* not synchronised yet */
	fake_exec(0, K + 0x504, ISB);		/* the window opens */

	/* store_fn, a leaf: called from caller_a */
	fake_cpus[0].x[30] = K + 0x208;
	st(K + 0x10, STR_X1_X2, PT2);		/* other: key 2 */
	n = st(K + 0x10, STR_X1_X2, PT1);	/* pgtable */
	check(n == 1, "window open: the store's callback runs, no check");
	st(K + 0x10, STR_X1_X2, DATA);		/* other */
	st(K + 0x14, STR_X1_X2, STACK + 0x100);	/* stack: 32K region */
	st(K + 0x18, STR_X1_SP8, 0);		/* stack: [sp, #8] */
	fake_cpus[0].sp = STACK + 0x8000;	/* an empty stack */
	st(K + 0x14, STR_X1_X2, STACK + 0x7ff0);	/* stack */
	fake_cpus[0].sp = STACK + 0x7000;

	/* every store class, in memset, a leaf called from caller_a */
	fake_cpus[0].x[29] = FRAME;		/* caller_a's frame */
	fake_cpus[0].x[5] = 64;
	st(K + 0x600, STP_X1_X3_X2, DATA);
	st(K + 0x604, LDADD_X1_X3_X2, DATA);
	st(K + 0x608, STXR_W4_X1_X2, DATA);
	st(K + 0x60c, DC_ZVA_X2, DATA + 0x48);
	st(K + 0x610, SETP_X2_X5_X1, DATA);	/* counted once... */
	st(K + 0x614, SETM_X2_X5_X1, DATA);	/* ...not here */
	st(K + 0x618, STTR_X1_X2, U + 0x100);	/* to user space */
	fake_cpus[0].x[5] = 0;
	st(K + 0x61c, CPYFP_X2_X6_X5, DATA);	/* nothing to copy */
	st(K + 0x620, LDR_X1_X2, DATA);		/* no store */
	st(K + 0x624, PRFM_X2, DATA);

	/* nonleaf_fn after a call: caller_b from the frame record, PAC'd */
	fake_cpus[0].x[30] = K + 0x120;
	fake_cpus[0].x[29] = FRAME;
	st(K + 0x140, STR_X1_X2, DATA);
	/* framed_fn before its first call: its own record, skipped */
	fake_cpus[0].x[30] = K + 0x208;
	fake_cpus[0].x[29] = FRAME - 0x100;
	st(K + 0x810, STR_X1_X2, TASK + 0x400);	/* past init_task's size */
	/* noframe_fn after a call, x29 0: no caller */
	fake_cpus[0].x[30] = K + 0x710;
	fake_cpus[0].x[29] = 0;
	st(K + 0x740, STR_X1_X2, TASK + 0x10);	/* current */
	/* two static dup_fn, called from caller_b; the path ends in user
	 * space, or at a frame record below the last one */
	fake_cpus[0].x[30] = K + 0x304;
	fake_cpus[0].x[29] = FRAME + 0x300;
	st(K + 0x400, STR_X1_X2, K + 0xa008);	/* a global */
	fake_cpus[0].x[29] = FRAME + 0x400;
	st(K + 0x480, STR_X1_X2, K + 0xc108 + PCPU);	/* per-CPU */
	/* past the image (a module): "?", no caller */
	st(K + 0x20000, STR_X1_X2, DATA);
	/* EL0, and vCPU 1 without a window: not counted */
	st(U, STR_X1_X2, DATA);
	fake_cpus[1].x[2] = DATA;
	fake_exec(1, K + 0x10, STR_X1_X2);
	por_el1(CLOSED_KEY1, true);		/* closes */
	st(K + 0x10, STR_X1_X2, DATA);
	fake_exit();

	text = slurp(out);
	show(text);
	check(strstr(text, "pgtable=1 stack=3 ") != NULL,
	      "a key-1 page is pgtable, SP's 32K region is stack");
	check(strstr(text, "fn=memset stores=6\n") != NULL,
	      "STP, LDADD, STXR, DC ZVA, SETP, STTR; not SETM, a zero "
	      "CPYFP, LDR, PRFM");
	check(strstr(text, "fn=nonleaf_fn caller=caller_b ") != NULL,
	      "after a call: the caller from the frame record, PAC stripped");
	check(strstr(text, "fn=dup_fn target=image:vm_node_stat ") &&
	      strstr(text, "fn=dup_fn target=percpu:pcpu_var ") &&
	      strstr(text, "fn=memset target=user "),
	      "targets: a global, this CPU's per-CPU variable, user space");
	check(strstr(text, "fn=noframe_fn target=current ") &&
	      strstr(text, "fn=framed_fn target=dynamic "),
	      "target current: SP_EL0's task, init_task's size");
	check(strstr(text, "fn=memset path=caller_a<caller_b<kpkeys_fn<"
			   "caller_a ") != NULL,
	      "a leaf's path: x30, then the frame records, PATH_DEPTH long");
	check(!strcmp(text, expected),
	      "by function, \"?\" past the image, callers, order, exact file");
	unlink(out);
}

/* the page-table keys are the ones the closed window denied write */
static void derived(void)
{
	char out[] = "/tmp/poe-store-out.XXXXXX", opts[256];
	const char *text;

	close(mkstemp(out));
	snprintf(opts, sizeof(opts), "window_stores=%s,sysmap=%s", out,
		 map16_path);
	setup(opts);
	poe_on();
	por_el1(CLOSED_KEY2, true);
	por_el1(OPEN, true);
	fake_cpus[0].x[30] = K + 0x208;
	st(K + 0x10, STR_X1_X2, PT1);		/* key 1: other now */
	st(K + 0x10, STR_X1_X2, PT2);		/* key 2: pgtable */
	st(K + 0x14, STR_X1_X2, STACK + 0x100);	/* another 16K: other */
	st(K + 0x14, STR_X1_X2, STACK + 0x4100);	/* stack */
	fake_exit();

	text = slurp(out);
	show(text);
	check(strstr(text, "poe-window-stores-total: pgtable=1 stack=1 "
			   "other=2 other_fns=1\n") != NULL,
	      "key 2 write-denied outside the window: its pages are "
	      "pgtable, key 1's other; 16K stacks without init_stack");
	unlink(out);
}

int main(void)
{
	printf("TAP version 13\n");
	write_map(map_path, true);
	write_map(map16_path, false);
	check(fake_install(1, "window_stores=/dev/null") != 0,
	      "window_stores= without sysmap= is refused");
	classify();
	derived();
	unlink(map_path);
	unlink(map16_path);
	return tap_done();
}
