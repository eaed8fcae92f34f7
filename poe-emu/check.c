/*
 * check.c - the run-time checks of data accesses and instruction fetches
 *
 * Every data access instruction gets a conditional callback that runs only
 * while the overlay of the EL whose permissions it uses is enabled and the
 * current POR value denies some key what the access needs (the struct
 * poe_score gates, kept by state.c): loads only while some key lacks R,
 * stores while some key lacks W. A guest that does not use overlays pays
 * (almost) nothing, and in kpkeys' default context (key 1 read-only) EL1
 * loads are free. Code in the TTBR1 half runs at EL1 (unprivileged
 * LDTR/STTR use EL0 permissions, unless PSTATE.UAO is set); code in the
 * TTBR0 half is normally EL0 but the idmap runs there at EL1, so those use
 * the gates of the EL the vCPU is at, tracked at exception entry and
 * ERET, which avoids reading PSTATE on every access. AArch32 EL0 code is not checked at all (its
 * words would be misread as A64): its gates are closed.
 *
 * Addresses: a TB runs at every virtual address that maps its physical
 * page (QEMU's CF_PCREL, see poe_insn_pc()), so the address seen at
 * translation is used for nothing but its page offset and its half
 * (TTBR0/TTBR1): EL0 code is never in the TTBR1 half, and the kernel's
 * text is mapped at one address there. Whatever needs the address an
 * instruction runs at (a fault's ELR, a literal's address, a strict
 * report, a fetch check in the TTBR0 half) reads it at run time.
 *
 * Instruction fetch: the first instruction of each TB, and the first one
 * on the TB's second page if it crosses one, checks X for its page,
 * never while no key lacks X, and only when execution leaves the run of
 * pages last found executable (the leaf entries next to the fetched one in
 * its table that also grant X, found by reading the table). The bounds of
 * that run are reset whenever the answer may change (POR, TCR2, EL, TLB
 * invalidation). In the TTBR1 half the bounds are a gate: two conditional
 * callbacks compare them with the TB's page, which the kernel's text maps
 * at one address only. In the TTBR0 half a program's text or a shared
 * library is the same TB in every process, at another address in each, so
 * the page known at translation cannot be compared: a callback runs at
 * every TB start while some key lacks X (which, for EL0 under Linux, is
 * always once a process runs with POE), reads the address and compares.
 *
 * MOPS (CPY*, SET*): each of the prologue, main and epilogue instructions
 * is checked, every time it executes, for the bytes that QEMU's
 * implementation of that stage processes (the "option A" register format
 * QEMU uses after the prologue): the prologue up to the first page
 * boundary, the main instruction the whole pages, the epilogue the rest.
 * A denied byte faults at the stage that would write it, before it writes
 * anything, with the registers showing the progress of the earlier stages.
 * Hardware may progress further (up to the denied byte); less progress
 * is an outcome the architecture allows (the registers are consistent and
 * the copy restarts from them), so a caller that depended on more would be
 * broken on some hardware too.
 */
#include <string.h>

#include "check.h"
#include "decode.h"
#include "fault.h"
#include "policy.h"
#include "regs.h"
#include "state.h"
#include "strict.h"
#include "walk.h"

#define PAGE	0x1000ull
#define PSTATE_UAO	(1ull << 23)	/* in QEMU's cpsr, as in SPSR */
#define likely(x)	__builtin_expect(!!(x), 1)
#define unlikely(x)	__builtin_expect(!!(x), 0)

/* An instruction instrumented at translation time. */
struct poe_insn {
	struct ls_insn d;
	uint64_t vaddr;		/* at translation: see poe_insn_pc() */
	uint32_t word;
	bool high;		/* in the TTBR1 half: runs at EL1 */
};

struct fetch_insn {
	uint64_t vaddr;
	bool high;
};

/*
 * LDTR/STTR-class accesses at EL1, and the unprivileged sides of MOPS
 * instructions, use EL0's permissions unless PSTATE.UAO is set: then they
 * are privileged accesses, checked against POR_EL1. Only MSR UAO and an
 * ERET can set it (and Linux does neither), so PSTATE, a register read
 * through the API, is read only after one of them may have.
 */
static bool unpriv_as_el0(struct poe_vcpu *v)
{
	return !v->uao_maybe || !(poe_reg_read(R_CPSR) & PSTATE_UAO);
}

static bool overlay_live(const struct poe_vcpu *v, bool el0_perms)
{
	return el0_perms ? v->live_el0 : v->live_el1;
}

static const char *insn_text(const struct poe_insn *pi, char *buf,
			     size_t len)
{
	snprintf(buf, len, "%s %s", ls_kind_name(pi->d.kind), pi->d.name);
	return buf;
}

/* Strict mode: mixed contiguous groups, accesses before an ISB. */
static void check_strict(struct poe_vcpu *v, const struct poe_insn *pi,
			 bool el0_perms, uint64_t va, uint64_t size,
			 unsigned need, const struct poe_verdict *vd,
			 uint64_t por)
{
	struct poe_verdict vw;
	char text[64];

	if (vd->cont_mixed)
		poe_strict_abort(v, "access through a contiguous group whose "
				 "POIndex is not uniform",
				 poe_insn_pc(v->index, pi->vaddr), pi->word,
				 insn_text(pi, text, sizeof(text)), vd->va,
				 vd->key, por);
	if (!v->unsynced || el0_perms)
		return;
	poe_check(v, va, size, need, false, &v->wr, &vw);
	if (vw.allowed != vd->allowed)
		poe_strict_abort(v, "EL1 access between a POR_EL1/TCR2_EL1 "
				 "write and the next context synchronisation, "
				 "with another verdict under each value "
				 "(missing ISB?)",
				 poe_insn_pc(v->index, pi->vaddr), pi->word,
				 insn_text(pi, text, sizeof(text)), va,
				 vd->allowed ? vw.key : vd->key,
				 v->wr.por_el1);
}

__attribute__((noreturn))
static void deliver(struct poe_vcpu *v, const struct poe_insn *pi,
		    uint64_t pc, unsigned el, bool write_side,
		    const struct poe_verdict *vd, uint64_t por)
{
	struct poe_fault_info fi = {
		.pc = pc, .el = el, .por = por, .what = pi->d.name,
		.kind = ls_kind_name(pi->d.kind),
		.cm = pi->d.flags & LS_F_CM,
		/* an atomic that lacks R faults on its read: WnR = 0 */
		.wnr = write_side && !(vd->missing & NEED_R),
	};

	poe_fault_deliver(v, &fi, vd);
}

/*
 * Check one range of one access with the effective registers, apply strict
 * mode, deliver the fault if denied.
 */
static void check_range(struct poe_vcpu *v, const struct poe_insn *pi,
			unsigned el, bool el0_perms, uint64_t va,
			uint64_t size, unsigned need, bool write_side)
{
	uint64_t por = el0_perms ? v->eff.por_el0 : v->eff.por_el1;
	struct poe_verdict vd;
	char text[64];
	uint64_t pc;

	v->checked++;
	/* strict mode has nothing to compare while nothing is unsynced */
	if (likely(!v->unsynced) &&
	    poe_check_fast(v, va, size, need, el0_perms, &v->eff))
		return;
	poe_check(v, va, size, need, el0_perms, &v->eff, &vd);
	if (unlikely(poe_opts.strict))
		check_strict(v, pi, el0_perms, va, size, need, &vd, por);
	if (likely(vd.allowed))
		return;
	pc = poe_insn_pc(v->index, pi->vaddr);
	if (el == 1 && poe_opts.strict && !poe_strict_expected(pc) &&
	    !poe_strict_allowed(v, pc, vd.va, vd.key, por))
		poe_strict_abort(v, "unexpected EL1 overlay violation (no "
				 "exception-table fixup for this pc: the "
				 "kernel would oops)", pc, pi->word,
				 insn_text(pi, text, sizeof(text)), vd.va,
				 vd.key, por);
	deliver(v, pi, pc, el, write_side, &vd, por);
}

/* bytes from a to the next page boundary */
static uint64_t to_page_end(uint64_t a)
{
	return PAGE - (a & (PAGE - 1));
}

/* bytes from the start of the page of the byte before a, up to a */
static uint64_t from_page_start(uint64_t a)
{
	return a & (PAGE - 1) ? a & (PAGE - 1) : PAGE;
}

static uint64_t min64(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

/*
 * The bytes the MOPS instruction processes now: [*dst, *dst + len) and,
 * for CPY, [*src, *src + len). Registers before the prologue: Xd, Xs
 * start addresses, Xn the size. After it (option A): forward, Xd and Xs
 * point past the end and Xn is minus the bytes left; backward (a CPY whose
 * destination overlaps the source from above), Xd and Xs are the current
 * top and Xn the bytes left.
 */
static uint64_t mops_range(const struct ls_insn *d, uint64_t xd, uint64_t xs,
			   uint64_t xn, uint64_t *dst, uint64_t *src)
{
	bool cpy = d->flags & LS_F_MOPS_CPY;
	uint64_t len, rem;

	if (d->kind == LS_MOPS) {			/* prologue */
		if (xn > INT64_MAX)
			xn = INT64_MAX;
		if (cpy && !(d->flags & LS_F_MOPS_FWD) && xd > xs &&
		    xd - xs < xn) {			/* backward */
			len = min64(xn, min64(from_page_start(xd + xn),
					      from_page_start(xs + xn)));
			*dst = xd + xn - len;
			*src = xs + xn - len;
			return len;
		}
		len = min64(xn, to_page_end(xd));
		if (cpy)
			len = min64(len, to_page_end(xs));
		*dst = xd;
		*src = xs;
		return len;
	}
	if ((int64_t)xn < 0) {				/* forward */
		rem = -xn;
		len = d->flags & LS_F_MOPS_MAIN ? rem & ~(PAGE - 1) : rem;
		*dst = xd - rem;
		*src = xs - rem;
		return len;
	}
	rem = xn;					/* backward */
	len = d->flags & LS_F_MOPS_MAIN ? rem & ~(PAGE - 1) : rem;
	*dst = xd - len;
	*src = xs - len;
	return len;
}

static void mops_check(struct poe_vcpu *v, const struct poe_insn *pi,
		       unsigned el)
{
	const struct ls_insn *d = &pi->d;
	bool unpriv = el == 0 ||
		      ((d->flags & (LS_F_UNPRIV | LS_F_SRC_UNPRIV)) &&
		       unpriv_as_el0(v));
	bool dst_el0 = el == 0 || (unpriv && (d->flags & LS_F_UNPRIV));
	bool src_el0 = el == 0 || (unpriv && (d->flags & LS_F_SRC_UNPRIV));
	bool cpy = d->flags & LS_F_MOPS_CPY;
	uint64_t len, dst, src;

	if (!overlay_live(v, dst_el0) && !(cpy && overlay_live(v, src_el0)) &&
	    !v->unsynced)
		return;
	len = mops_range(d, poe_gpr_read(v->index, d->rn, false),
			 cpy ? poe_gpr_read(v->index, d->rs, false) : 0,
			 poe_gpr_read(v->index, d->rm, false), &dst, &src);
	if (!len)
		return;
	if (cpy)
		check_range(v, pi, el, src_el0, src, len, NEED_R, false);
	check_range(v, pi, el, dst_el0, dst, len, NEED_W, true);
}

static unsigned access_need(const struct ls_insn *d)
{
	switch (d->kind) {
	case LS_LOAD:
		return NEED_R;
	case LS_RMW:
		return NEED_R | NEED_W;
	default:
		return NEED_W;
	}
}

static void ls_cb(unsigned vcpu, void *ud)
{
	const struct poe_insn *pi = ud;
	const struct ls_insn *d = &pi->d;
	struct poe_vcpu *v = poe_vcpu(vcpu);
	unsigned el = pi->high ? 1 : v->el;
	bool el0_perms;
	uint64_t base, index = 0, ea;

	if (v->redirect || (!pi->high && v->aarch32))
		return;
	if (d->kind == LS_MOPS || d->kind == LS_MOPS_CONT) {
		mops_check(v, pi, el);
		return;
	}
	el0_perms = el == 0 || ((d->flags & LS_F_UNPRIV) && unpriv_as_el0(v));
	if (!overlay_live(v, el0_perms) && !v->unsynced)
		return;
	base = (d->flags & LS_F_LITERAL) ? 0 :
	       poe_gpr_read(vcpu, d->rn, !(d->flags & LS_F_XZR));
	if (d->flags & LS_F_REGOFF)
		index = poe_gpr_read(vcpu, d->rm, false);
	/* the only address an access needs from its instruction's */
	ea = ls_ea(d, base, index, (d->flags & LS_F_LITERAL) ?
				   poe_insn_pc(v->index, pi->vaddr) : 0);
	if (d->flags & LS_F_PAC)
		ea = poe_strip_pac(v, ea);
	check_range(v, pi, el, el0_perms, ea, d->size, access_need(d),
		    d->kind != LS_LOAD);
}

/*
 * The scoreboard word that must be non-zero for this access to need a
 * check: by the EL whose permissions apply (TTBR1 code runs at EL1,
 * TTBR0 code at either) and by what it needs (R, W or both).
 */
static size_t gate_field(const struct ls_insn *d, bool high)
{
	static const size_t field[3][3] = {
		{ offsetof(struct poe_score, rd_el1),
		  offsetof(struct poe_score, wr_el1),
		  offsetof(struct poe_score, rw_el1) },
		{ offsetof(struct poe_score, rd_unpriv),
		  offsetof(struct poe_score, wr_unpriv),
		  offsetof(struct poe_score, rw_unpriv) },
		{ offsetof(struct poe_score, rd_cur),
		  offsetof(struct poe_score, wr_cur),
		  offsetof(struct poe_score, rw_cur) },
	};
	bool mops = d->kind == LS_MOPS || d->kind == LS_MOPS_CONT;
	unsigned who, need;

	if (d->kind == LS_LOAD)
		need = 0;
	else if (d->kind == LS_RMW || mops)
		need = 2;
	else
		need = 1;
	if (high && mops && (d->flags & (LS_F_UNPRIV | LS_F_SRC_UNPRIV)))
		return offsetof(struct poe_score, rw_any);
	if (!high)
		who = 2;
	else if (d->flags & LS_F_UNPRIV)
		who = 1;
	else
		who = 0;
	return field[who][need];
}

bool poe_check_instrument_access(struct qemu_plugin_insn *insn,
				 uint32_t word, uint64_t vaddr)
{
	struct poe_insn *pi;
	struct ls_insn d;

	if (!ls_decode(word, &d) || d.kind == LS_PRFM)
		return false;
	/* (flushed when that changes) */
	if ((vaddr >> 63) && d.kind == LS_LOAD && !(d.flags & LS_F_UNPRIV) &&
	    !poe_el1_reads_checked())
		return false;
	pi = g_new0(struct poe_insn, 1);
	pi->d = d;
	pi->vaddr = vaddr;
	pi->word = word;
	pi->high = vaddr >> 63;
	qemu_plugin_register_vcpu_insn_exec_cond_cb(
		insn, ls_cb, QEMU_PLUGIN_CB_RW_REGS_PC, QEMU_PLUGIN_COND_NE,
		poe_score_u64(gate_field(&d, pi->high)), 0, pi);
	return true;
}

/*
 * Execution often alternates between a few runs of pages (a caller and a
 * callee in different tables): the last runs found, until forgotten. The
 * ring is filled from xruns[0] after each poe_fetch_forget(), so the
 * first xruns_n entries are exactly the runs found since.
 */
static bool xrun_find(struct poe_vcpu *v, unsigned who, uint64_t page,
		      uint64_t *lo, uint64_t *hi)
{
	unsigned i;

	for (i = 0; i < v->xruns_n; i++) {
		const struct poe_xrun *r = &v->xruns[i];

		if (r->who == who && r->lo <= page && page <= r->hi) {
			*lo = r->lo;
			*hi = r->hi;
			return true;
		}
	}
	return false;
}

static void xrun_add(struct poe_vcpu *v, unsigned who, uint64_t lo,
		     uint64_t hi)
{
	unsigned n = sizeof(v->xruns) / sizeof(v->xruns[0]);
	struct poe_xrun *r = &v->xruns[v->xruns_next];

	r->lo = lo;
	r->hi = hi;
	r->who = who;
	v->xruns_next = (v->xruns_next + 1) % n;
	if (v->xruns_n < n)
		v->xruns_n++;
}

/* Check the fetch of pc, at EL1 if high; bounds or a fault follow. */
static void fetch_check(struct poe_vcpu *v, uint64_t pc, bool high)
{
	uint64_t gen = poe_tlb_generation();
	unsigned el = high ? 1 : v->el;
	unsigned who = high ? 1 : el ? 2 : 0;
	uint64_t page = pc & ~(PAGE - 1);
	struct poe_verdict vd;
	uint64_t lo, hi;

	if (v->redirect)
		return;
	if (!(el ? v->x_el1 : v->x_el0) || (el == 0 && v->aarch32)) {
		poe_fetch_known(v, high, 0, ~0ull);	/* no key lacks X */
		return;
	}
	if (xrun_find(v, who, page, &lo, &hi)) {
		poe_fetch_known(v, high, lo, hi);
		return;
	}
	v->st.fetch_checks++;
	poe_check(v, pc, 4, NEED_X, el == 0, &v->eff, &vd);
	if (!vd.allowed) {
		struct poe_fault_info f = {
			.pc = pc, .el = el, .exec = true,
			.por = el ? v->eff.por_el1 : v->eff.por_el0,
			.what = "fetch", .kind = "exec",
		};

		if (el == 1 && poe_opts.strict)
			poe_strict_abort(v, "EL1 instruction fetch denied by "
					 "the overlay (the kernel would hang)",
					 pc, 0, "fetch", pc, vd.key, f.por);
		poe_fault_deliver(v, &f, &vd);
	}
	poe_fetch_run(v, pc, el == 0, &v->eff, &lo, &hi);
	poe_fetch_known(v, high, lo, hi);
	xrun_add(v, who, lo, hi);
	if (poe_tlb_generation() != gen)	/* raced with a TLBI */
		poe_fetch_forget(v);
}

/* TTBR1 half: outside the bounds (the gate compared them) */
static void fetch_high_cb(unsigned vcpu, void *ud)
{
	const struct fetch_insn *fi = ud;
	struct poe_vcpu *v = poe_vcpu(vcpu);

	v->st.fetch_calls++;
	fetch_check(v, fi->vaddr, true);
}

/* TTBR0 half: some key lacks X; compare the page it runs at */
static void fetch_low_cb(unsigned vcpu, void *ud)
{
	const struct fetch_insn *fi = ud;
	struct poe_vcpu *v = poe_vcpu(vcpu);
	uint64_t pc = poe_insn_pc(vcpu, fi->vaddr), page = pc & ~(PAGE - 1);

	v->st.fetch_calls++;
	if (v->xlo_cur <= page && page <= v->xhi_cur)
		return;
	fetch_check(v, pc, false);
}

/*
 * TTBR1 half: two conditional callbacks bound the known-executable pages
 * [lo, hi]: one runs if lo > page, the other if hi < page, so neither runs
 * inside the bounds, nor at all while no key lacks X (lo 0, hi ~0).
 * TTBR0 half: one, while some key lacks X.
 */
void poe_check_instrument_fetch(struct qemu_plugin_insn *insn, uint64_t vaddr)
{
	struct fetch_insn *fi = g_new0(struct fetch_insn, 1);
	uint64_t page = vaddr & ~(PAGE - 1);

	fi->vaddr = vaddr;
	fi->high = vaddr >> 63;
	if (!fi->high) {
		qemu_plugin_register_vcpu_insn_exec_cond_cb(
			insn, fetch_low_cb, QEMU_PLUGIN_CB_RW_REGS_PC,
			QEMU_PLUGIN_COND_NE,
			poe_score_u64(offsetof(struct poe_score, x_cur)), 0,
			fi);
		return;
	}
	qemu_plugin_register_vcpu_insn_exec_cond_cb(
		insn, fetch_high_cb, QEMU_PLUGIN_CB_RW_REGS_PC,
		QEMU_PLUGIN_COND_GT,
		poe_score_u64(offsetof(struct poe_score, xlo_el1)), page, fi);
	qemu_plugin_register_vcpu_insn_exec_cond_cb(
		insn, fetch_high_cb, QEMU_PLUGIN_CB_RW_REGS_PC,
		QEMU_PLUGIN_COND_LT,
		poe_score_u64(offsetof(struct poe_score, xhi_el1)), page, fi);
}
