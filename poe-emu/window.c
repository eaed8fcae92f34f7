/*
 * window.c - kernel instructions run in page-table write windows, by
 * function (see window.h)
 *
 * kpkeys opens a page-table write window by granting POR_EL1 write to
 * every key: code that runs in it may write page tables through any
 * pointer. The functions meant to do so are few; every other function
 * that runs while a window is open is a leak (an interrupt handler taken
 * in the window, a caller that forgot to close it, a window opened around
 * more than it needs). This module says which functions ran in windows,
 * and how much, against an allow list.
 *
 * Counting. Each translation block in the TTBR1 half gets, on the first
 * instruction of each run of its instructions in one function (a block
 * seldom runs over the end of one), a conditional callback keyed on the
 * vCPU's window word (struct poe_score), which adds the run's length to
 * the function's count: while no window is open the only cost is the
 * gate. The window opens and closes at context synchronisation, and QEMU
 * ends a block at each (ISB, exception entry, ERET; the MSR before an
 * ISB leaves its block too, being emulated), so a block runs on one side.
 * The callbacks run before the rest of an instruction's instrumentation,
 * so, as with the bench counters' window_insns, the ISB that opens a
 * window is outside it and the one that closes it inside. A block left
 * early (an exception in its middle) counts whole, as in profile.c.
 *
 * Functions. An instruction's function is found at translation: its
 * address minus the KASLR slide (VBAR_EL1 minus "vectors", known once the
 * kernel installs its vectors, which flushes QEMU's translations: see
 * plugin.c), looked up in the System.map (sysmap.c). Code outside the
 * kernel's text (a module, BPF) counts as function "?". Functions of one
 * name (static functions in different files) are added up. EL1 code in
 * the TTBR0 half (the idmap) is not counted.
 *
 * The allow list: one entry per line, "#" comments. An entry is a
 * function name, which also matches the compiler's clones and parts of it
 * (NAME.constprop.0, NAME.isra.0, NAME.part.0, NAME.cold), or a prefix
 * followed by "*".
 *
 * Callers. A block that starts at the first instruction of a function
 * the allow list does not name (a leak's entry) gets, instead of the
 * plain counting callback, one that declares register access, reads x30
 * and tells caller.c: the same gate, so nothing more while no window is
 * open, and no register read anywhere else. Whether a function is
 * allowed is decided once per function, at install. An entry is a block
 * that starts at the function's first instruction: a BL ends QEMU's
 * block, so every call starts one there. Other ways in count too, with
 * whatever x30 holds: a tail call names the caller's caller, which is
 * still the code that made the window's call chain. Falling through into
 * the next function is no entry. x30 is the return address, not the
 * call's: a call that ends its function (to a noreturn function) names
 * the one after it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "window.h"
#include "caller.h"
#include "regs.h"
#include "state.h"
#include "sysmap.h"

struct window_seg {
	uint64_t *count;	/* of its function */
	uint64_t n;		/* instructions */
	unsigned fn;		/* entry_exec(): the leak function entered */
};

static FILE *out;
static uint64_t *counts;	/* per sysmap function; [nfuncs]: "?" */
static unsigned nfuncs;
static GPtrArray *allow;	/* entries of the allow list */
static bool *fn_allowed;	/* per sysmap function */
static struct caller_table *callers;	/* of the leak functions */

static bool read_allow(const char *path)
{
	char line[512];
	FILE *f = fopen(path, "r");

	if (!f)
		return false;
	while (fgets(line, sizeof(line), f)) {
		char *hash = strchr(line, '#');

		if (hash)
			*hash = 0;
		g_strstrip(line);
		if (*line)
			g_ptr_array_add(allow, g_strdup(line));
	}
	fclose(f);
	return true;
}

static bool allowed(const char *fn)
{
	unsigned i;

	for (i = 0; i < allow->len; i++) {
		const char *e = g_ptr_array_index(allow, i);
		size_t len = strlen(e);

		if (e[len - 1] == '*') {
			if (!strncmp(fn, e, len - 1))
				return true;
		} else if (!strncmp(fn, e, len) &&
			   (fn[len] == 0 || fn[len] == '.')) {
			return true;
		}
	}
	return false;
}

/* the allow list's verdict on every function, once */
static void judge_funcs(void)
{
	unsigned i;

	g_free(fn_allowed);
	fn_allowed = g_new(bool, nfuncs);
	for (i = 0; i < nfuncs; i++)
		fn_allowed[i] = allowed(sysmap_func_name(i));
}

bool window_open(const char *path, const char *allow_path)
{
	if (!path) {
		fprintf(stderr, "poe-emu: window_allow= needs windows=FILE\n");
		return false;
	}
	if (!sysmap_loaded()) {
		fprintf(stderr, "poe-emu: windows= needs sysmap=System.map\n");
		return false;
	}
	allow = g_ptr_array_new();
	if (allow_path && !read_allow(allow_path)) {
		fprintf(stderr, "poe-emu: cannot read window_allow=%s\n",
			allow_path);
		return false;
	}
	out = fopen(path, "w");
	if (!out) {
		fprintf(stderr, "poe-emu: cannot write windows=%s\n", path);
		return false;
	}
	nfuncs = sysmap_nfuncs();
	counts = g_new0(uint64_t, nfuncs + 1);
	judge_funcs();
	callers = caller_table_new("poe-window-caller", "calls");
	return true;
}

static void seg_exec(unsigned vcpu, void *ud)
{
	struct window_seg *s = ud;

	(void)vcpu;
	__atomic_fetch_add(s->count, s->n, __ATOMIC_RELAXED);
}

/* seg_exec() of a leak function's first block: who called it, too */
static void entry_exec(unsigned vcpu, void *ud)
{
	struct window_seg *s = ud;

	__atomic_fetch_add(s->count, s->n, __ATOMIC_RELAXED);
	caller_add(callers, s->fn, poe_gpr_read(vcpu, 30, false));
}

void window_instrument_insn(struct window_tb *w,
			    struct qemu_plugin_insn *insn, uint64_t vaddr)
{
	uint64_t addr;
	bool entry;
	long f;

	if (!out || !(vaddr >> 63))
		return;
	addr = vaddr - sysmap_slide();
	if (w->seg && w->start <= addr && addr < w->end) {
		w->seg->n++;	/* registered, not run before translation ends */
		return;
	}
	/* the block's first instruction, at a leak function's first? */
	entry = !w->seg;
	f = sysmap_func(addr, &w->start, &w->end);
	entry = entry && f >= 0 && addr == w->start && !fn_allowed[f];
	w->seg = g_new0(struct window_seg, 1);
	w->seg->count = &counts[f < 0 ? nfuncs : (unsigned long)f];
	w->seg->n = 1;
	if (entry)
		w->seg->fn = f;
	qemu_plugin_register_vcpu_insn_exec_cond_cb(
		insn, entry ? entry_exec : seg_exec,
		entry ? QEMU_PLUGIN_CB_R_REGS : QEMU_PLUGIN_CB_NO_REGS,
		QEMU_PLUGIN_COND_NE,
		poe_score_u64(offsetof(struct poe_score, window)), 0, w->seg);
}

void window_exit(void)
{
	uint64_t total = 0, leaks = 0, leak_fns = 0;
	GPtrArray *rows, *leak_names;
	unsigned i;

	if (!out)
		return;
	rows = sysmap_rows(counts);
	leak_names = g_ptr_array_new();
	for (i = 0; i < rows->len; i++) {
		const struct sysmap_row *r = g_ptr_array_index(rows, i);
		bool ok = allowed(r->name);

		fprintf(out, "poe-window: fn=%s insns=%llu allowed=%d\n",
			r->name, (unsigned long long)r->n, ok);
		total += r->n;
		if (!ok) {
			leaks += r->n;
			leak_fns++;
			g_ptr_array_add(leak_names, (gpointer)r->name);
		}
	}
	fprintf(out, "poe-window-total: insns=%llu leaks=%llu leak_fns=%llu\n",
		(unsigned long long)total, (unsigned long long)leaks,
		(unsigned long long)leak_fns);
	/* their callers, in the order of their lines above */
	caller_write(callers, out, (const char *const *)leak_names->pdata,
		     leak_names->len);
	g_ptr_array_free(leak_names, true);
	g_ptr_array_free(rows, true);
	fclose(out);
	out = NULL;
}
