/*
 * store.c - kernel stores in page-table write windows, by target (see
 * store.h)
 *
 * While a page-table write window is open, any store whose address an
 * attacker can steer can write a page table. This module measures which
 * stores run there and where they go:
 *
 * - pgtable: the target's leaf entry has a key that POR_EL1 denies write
 *   to outside windows. Which keys those are is not assumed: it is the
 *   last POR_EL1 value in effect on the vCPU with the overlay on and some
 *   key write-denied (state.c's wp_keys; kpkeys: key 1). Stores there are
 *   what a window is for.
 * - stack: the target is in the current kernel stack, the THREAD_SIZE
 *   aligned region that holds the byte below SP (so that an empty stack,
 *   SP at the top of its region, is that region). THREAD_SIZE is
 *   __end_init_stack - __start_init_stack in the System.map (16K, 32K
 *   with KASAN, 64K with 64K pages); 16K, with a message, if the map
 *   lacks them. The IRQ stacks have the same size and alignment; the
 *   overflow stack does not, and counts as other. Checked first: it
 *   needs no walk.
 * - other: everything else, counted by the kernel function of the store
 *   (found at translation, as in window.c; "?" outside the kernel's
 *   text), by that function's caller (caller.c) and call path (path.c),
 *   and by the kind of address it writes (target.c).
 *
 * The target of a store is its first byte, at the address the checks
 * compute (check.c): an STP, a DC ZVA block or an atomic counts once,
 * by its first byte. A MOPS SET or CPY counts once, at its prologue, by
 * the start of its destination (Xd; none when the size Xn is 0); its
 * main and epilogue instructions are not counted. Unprivileged stores
 * (STTR, SET*T, CPY*WT) count like the others although their EL0
 * permissions keep them off kernel memory: their functions say so. A
 * store whose walk fails is other; one that faults and is retried counts
 * each time, as window.c counts a block left early.
 *
 * Callers and paths: the return address into the caller of the store's
 * function is x30 while x30 points outside that function (a leaf
 * function, or one that has made no call yet), else the frame record's
 * (AAPCS64: [x29 + 8]), which a kernel function that made a call has set
 * up (arm64 builds with frame pointers). The functions above come from
 * the chain of frame records (x29, then each record's saved x29), up to
 * PATH_DEPTH in all, ending at a return address outside the kernel's
 * text, at a record no further up the stack than the last, or where
 * there is none (x29 not a 16-byte aligned kernel address, or not
 * readable). A function that has set up its frame record but made no
 * call has its own record first, which holds x30 again: skipped. Pointer
 * authentication codes are stripped. A tail call names the caller's
 * caller; a function without a frame record that made a call names the
 * caller's caller or nothing ("?"), and so does a store in a prologue
 * before the record is written. caller.c counts the callers, path.c the
 * paths.
 *
 * Cost: each store in the TTBR1 half gets a conditional callback keyed
 * on the vCPU's window word (struct poe_score): while no window is open
 * only the gate runs, and nothing is instrumented without the option.
 * In a window: register reads; for a store off the stack, a soft TLB
 * lookup (a walk if it misses); for one to other memory, a counter, one
 * or two system register reads, a System.map lookup per frame, up to
 * four guest memory reads and three table updates, each under its lock.
 */
#include <stdio.h>
#include <string.h>

#include "store.h"
#include "caller.h"
#include "decode.h"
#include "path.h"
#include "regs.h"
#include "state.h"
#include "sysmap.h"
#include "target.h"
#include "walk.h"

/* a store instrumented at translation */
struct store_insn {
	struct ls_insn d;
	long fn;		/* its function (sysmap.c), -1: none */
	uint64_t start, end;	/* that function (System.map addresses) */
};

static FILE *out;
static uint64_t thread_size;
static uint64_t *other;		/* per sysmap function; [nfuncs]: "?" */
static uint64_t n_pgtable, n_stack, n_other;
static unsigned nfuncs;
static struct caller_table *callers;
static struct path_table *paths;

/* THREAD_SIZE, from the init task's stack */
static uint64_t find_thread_size(void)
{
	uint64_t start = sysmap_addr("__start_init_stack");
	uint64_t end = sysmap_addr("__end_init_stack");
	uint64_t size = end - start;

	if (start && end > start && !(size & (size - 1)))
		return size;
	fprintf(stderr, "poe-emu: window_stores=: no __start_init_stack and "
		"__end_init_stack in the System.map: kernel stacks taken as "
		"16K\n");
	return 16384;
}

bool store_open(const char *path)
{
	if (!sysmap_loaded()) {
		fprintf(stderr, "poe-emu: window_stores= needs "
			"sysmap=System.map\n");
		return false;
	}
	out = fopen(path, "w");
	if (!out) {
		fprintf(stderr, "poe-emu: cannot write window_stores=%s\n",
			path);
		return false;
	}
	thread_size = find_thread_size();
	n_pgtable = n_stack = n_other = 0;
	nfuncs = sysmap_nfuncs();
	other = g_new0(uint64_t, nfuncs + 1);
	callers = caller_table_new("poe-window-store-caller", "stores");
	paths = path_table_new("poe-window-store-path", "stores");
	target_init();
	return true;
}

/* the kernel's canonical form of a TTBR1-half address: no tag */
static uint64_t untag(uint64_t a)
{
	return (a >> 55) & 1 ? a | 0xffull << 56 : a & ~(0xffull << 56);
}

/*
 * A frame record at fp: the caller's fp, the return address; false if
 * none. Through the soft TLB: most records are on pages it holds.
 */
static bool read_frame(struct poe_vcpu *v, uint64_t fp, uint64_t rec[2])
{
	static __thread GByteArray *buf
		__attribute__((tls_model("initial-exec")));
	uint64_t pa;

	if (!(fp >> 63) || (fp & 15))	/* a kernel stack, aligned */
		return false;
	if (!poe_va_to_pa(v, fp, &pa))
		return false;
	if (!buf)
		buf = g_byte_array_new();
	buf->len = 0;
	if (qemu_plugin_read_memory_hwaddr(pa, buf, 16) || buf->len != 16)
		return false;
	memcpy(rec, buf->data, 16);	/* little-endian both */
	return true;
}

/*
 * The return addresses of the functions above the store's, its caller's
 * first (see "Callers" above), into ret: how many, at most PATH_DEPTH.
 */
static unsigned return_addresses(struct poe_vcpu *v,
				 const struct store_insn *si, uint64_t *ret)
{
	uint64_t lr = poe_strip_pac(v, poe_gpr_read(v->index, 30, false));
	uint64_t fp = poe_gpr_read(v->index, 29, false), at, rec[2];
	bool leaf, first = true;
	unsigned n = 0;

	at = lr - sysmap_slide();
	leaf = at < si->start || at >= si->end;
	if (leaf)
		ret[n++] = lr;
	while (n < PATH_DEPTH && (!n || ret[n - 1] >> 63) &&
	       read_frame(v, fp, rec)) {
		uint64_t r = poe_strip_pac(v, rec[1]);

		if (!(first && leaf && r == lr))	/* not its own */
			ret[n++] = r;
		first = false;
		if (rec[0] <= fp)	/* not further up the stack */
			break;
		fp = rec[0];
	}
	return n;
}

/* the first byte the store writes; false if it writes none */
static bool target(unsigned vcpu, const struct ls_insn *d, uint64_t *ea)
{
	uint64_t base, index = 0;

	if (d->kind == LS_MOPS) {
		*ea = poe_gpr_read(vcpu, d->rn, false);
		return poe_gpr_read(vcpu, d->rm, false) != 0;
	}
	base = poe_gpr_read(vcpu, d->rn, !(d->flags & LS_F_XZR));
	if (d->flags & LS_F_REGOFF)
		index = poe_gpr_read(vcpu, d->rm, false);
	*ea = ls_ea(d, base, index, 0);
	return true;
}

static void store_exec(unsigned vcpu, void *ud)
{
	const struct store_insn *si = ud;
	struct poe_vcpu *v = poe_vcpu(vcpu);
	const struct poe_tlb_entry *e;
	uint64_t ea, sp, ret[PATH_DEPTH];
	unsigned n;

	if (v->redirect || !target(vcpu, &si->d, &ea))
		return;
	sp = untag(poe_gpr_read(vcpu, 31, true));
	if ((untag(ea) ^ (sp - 1)) < thread_size) {
		__atomic_fetch_add(&n_stack, 1, __ATOMIC_RELAXED);
		return;
	}
	e = poe_tlb_lookup(v, ea);
	if (e && (v->wp_keys >> e->po & 1)) {
		__atomic_fetch_add(&n_pgtable, 1, __ATOMIC_RELAXED);
		return;
	}
	__atomic_fetch_add(&n_other, 1, __ATOMIC_RELAXED);
	__atomic_fetch_add(&other[si->fn < 0 ? nfuncs : (unsigned long)si->fn],
			   1, __ATOMIC_RELAXED);
	if (si->fn < 0)
		return;
	target_add(si->fn, ea);
	n = return_addresses(v, si, ret);
	caller_add(callers, si->fn, n ? ret[0] : 0);
	path_add(paths, si->fn, ret, n);
}

void store_instrument_insn(struct qemu_plugin_insn *insn, uint32_t word,
			   uint64_t vaddr)
{
	struct store_insn *si;
	struct ls_insn d;

	if (!out || !(vaddr >> 63) || !ls_decode(word, &d))
		return;
	if (d.kind != LS_STORE && d.kind != LS_RMW && d.kind != LS_ZVA &&
	    d.kind != LS_MOPS)
		return;
	si = g_new0(struct store_insn, 1);
	si->d = d;
	si->fn = sysmap_func(vaddr - sysmap_slide(), &si->start, &si->end);
	qemu_plugin_register_vcpu_insn_exec_cond_cb(
		insn, store_exec, QEMU_PLUGIN_CB_R_REGS, QEMU_PLUGIN_COND_NE,
		poe_score_u64(offsetof(struct poe_score, window)), 0, si);
}

static unsigned long long load(const uint64_t *n)
{
	return __atomic_load_n(n, __ATOMIC_RELAXED);
}

void store_exit(void)
{
	GPtrArray *rows, *names;
	unsigned i;

	if (!out)
		return;
	rows = sysmap_rows(other);
	names = g_ptr_array_new();
	for (i = 0; i < rows->len; i++) {
		const struct sysmap_row *r = g_ptr_array_index(rows, i);

		fprintf(out, "poe-window-store: fn=%s stores=%llu\n", r->name,
			(unsigned long long)r->n);
		g_ptr_array_add(names, (gpointer)r->name);
	}
	fprintf(out, "poe-window-stores-total: pgtable=%llu stack=%llu "
		"other=%llu other_fns=%u\n", load(&n_pgtable), load(&n_stack),
		load(&n_other), rows->len);
	/* their callers, in the order of their lines above */
	caller_write(callers, out, (const char *const *)names->pdata,
		     names->len);
	target_write(out, (const char *const *)names->pdata, names->len);
	path_write(paths, out, (const char *const *)names->pdata, names->len);
	g_ptr_array_free(names, true);
	g_ptr_array_free(rows, true);
	fclose(out);
	out = NULL;
}
