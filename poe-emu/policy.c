/*
 * policy.c - the overlay permission decision
 *
 * For each 4K page touched by an access: find the leaf descriptor (soft TLB
 * or walk), and if the overlay applies to it, look up the POR field of its
 * POIndex. The EL1 overlay (POR_EL1) is on only while TCR2_EL1.POE is set,
 * the EL0 one (POR_EL0) only while TCR2_EL1.E0POE is. Where it is on, it
 * applies to every page while TCR2_EL1.PIE is clear; while PIE is set,
 * only if the descriptor's PIIndex selects, in PIR_EL1 (EL1
 * accesses) or PIRE0_EL1 (EL0 and unprivileged accesses), one of the
 * overlay-applying "_O" permissions, i.e. an encoding with bit 3 clear. So
 * a kernel that leaves its own PIE permissions in the non-_O form is not
 * protected by POR_EL1, exactly as on hardware.
 *
 * A read needs POE R (bit 0), a write POE W (bit 2), an instruction fetch
 * POE X (bit 1); read-modify-write atomics need R and W, and the verdict
 * says which one the page lacks: an atomic denied for lack of R reports
 * WnR = 0, like hardware (the read is what faults). Reserved POR values
 * (bit 3 set) grant nothing. Stage-1 base permissions are QEMU's
 * business: the plugin decides before QEMU executes the access, so where
 * both deny, the overlay fault is the one delivered (ISS2.Overlay set).
 * Pages whose walk fails are allowed here: QEMU faults on them itself.
 */
#include <string.h>

#include "policy.h"
#include "walk.h"

/* pages checked per access at most (MOPS ranges): 256 MiB */
#define MAX_PAGES 65536

static bool page_allowed(struct poe_vcpu *v, uint64_t va, unsigned need,
			 bool el0_perms, const struct poe_regs *r,
			 struct poe_verdict *out)
{
	const struct poe_tlb_entry *e = poe_tlb_lookup(v, va);
	uint64_t por = el0_perms ? r->por_el0 : r->por_el1;
	unsigned perm, missing = 0;

	if (!e)
		return true;
	if (e->cont_mixed && !out->cont_mixed) {
		out->cont_mixed = true;
		out->va = va;
		out->key = e->po;
	}
	if (r->tcr2 & TCR2_PIE) {
		uint64_t pir = el0_perms ? v->pire0_el1 : v->pir_el1;

		if ((pir >> (4 * e->pi)) & 8)
			return true;	/* not an _O permission */
	}
	perm = (por >> (4 * e->po)) & 0xf;
	if (perm & 8)
		perm = 0;
	if ((need & NEED_R) && !(perm & POE_R))
		missing |= NEED_R;
	if ((need & NEED_W) && !(perm & POE_W))
		missing |= NEED_W;
	if ((need & NEED_X) && !(perm & POE_X))
		missing |= NEED_X;
	if (!missing)
		return true;
	out->missing = missing;
	out->va = va;
	out->level = e->level;
	out->key = e->po;
	return false;
}

void poe_check(struct poe_vcpu *v, uint64_t va, uint64_t size, unsigned need,
	       bool el0_perms, const struct poe_regs *r,
	       struct poe_verdict *out)
{
	uint64_t last = va + (size ? size - 1 : 0), page;
	unsigned n = 0;

	out->allowed = true;
	out->cont_mixed = false;
	out->missing = 0;
	/*
	 * An instruction with a privileged and an unprivileged side (CPY*WT,
	 * CPY*RT) is checked when either overlay is on: the side whose
	 * overlay is off is allowed here.
	 */
	if (!poe_overlay_on(r, el0_perms))
		return;
	if (!page_allowed(v, va, need, el0_perms, r, out)) {
		out->allowed = false;
		return;
	}
	/* the following pages of an access that crosses a page boundary */
	for (page = (va & ~0xfffull) + 0x1000;
	     page - 1 < last && page != 0 && n < MAX_PAGES;
	     page += 0x1000, n++) {
		if (!page_allowed(v, page, need, el0_perms, r, out)) {
			out->allowed = false;
			return;
		}
	}
}

/* Does leaf descriptor d at this level let the overlay grant X? */
static bool desc_x_ok(struct poe_vcpu *v, uint64_t d, int level,
		      bool el0_perms, const struct poe_regs *r)
{
	uint64_t por = el0_perms ? r->por_el0 : r->por_el1;
	unsigned pi, perm;

	if ((d & 3) != (level == 3 ? 3u : 1u))
		return false;		/* invalid, or a table */
	if (r->tcr2 & TCR2_PIE) {
		uint64_t pir = el0_perms ? v->pire0_el1 : v->pir_el1;

		pi = ((d >> 6) & 1) | ((d >> 51) & 1) << 1 |
		     ((d >> 53) & 1) << 2 | ((d >> 54) & 1) << 3;
		if ((pir >> (4 * pi)) & 8)
			return true;	/* not an _O permission */
	}
	perm = (por >> (4 * ((d >> 60) & 7))) & 0xf;
	return !(perm & 8) && (perm & POE_X);
}

#define RUN_MAX 64

void poe_fetch_run(struct poe_vcpu *v, uint64_t pc, bool el0_perms,
		   const struct poe_regs *r, uint64_t *lo, uint64_t *hi)
{
	static __thread GByteArray *buf __attribute__((tls_model("initial-exec")));
	unsigned first, last, i, below = 0, above = 0;
	struct poe_leaf leaf;
	uint64_t esize, base, d;

	if (!buf)
		buf = g_byte_array_new();
	buf->len = 0;		/* faster than g_byte_array_set_size() */
	*lo = *hi = pc & ~0xfffull;
	if (!poe_overlay_on(r, el0_perms)) {	/* overlay off: X everywhere */
		*lo = 0;
		*hi = ~0ull;
		return;
	}
	if (!poe_walk(v, pc, &leaf)) {
		if (!(v->sctlr & 1)) {		/* MMU off: no overlay */
			*lo = 0;
			*hi = ~0ull;
		}
		return;
	}
	first = leaf.index > RUN_MAX ? leaf.index - RUN_MAX : 0;
	last = leaf.index + RUN_MAX < leaf.entries ? leaf.index + RUN_MAX :
	       leaf.entries - 1;
	if (qemu_plugin_read_memory_hwaddr(leaf.slot_pa - (leaf.index - first) * 8,
					   buf, (last - first + 1) * 8) ||
	    buf->len != (last - first + 1) * 8)
		return;
	for (i = leaf.index; i > first; i--, below++) {
		memcpy(&d, buf->data + (i - 1 - first) * 8, 8);
		if (!desc_x_ok(v, d, leaf.level, el0_perms, r))
			break;
	}
	for (i = leaf.index; i < last; i++, above++) {
		memcpy(&d, buf->data + (i + 1 - first) * 8, 8);
		if (!desc_x_ok(v, d, leaf.level, el0_perms, r))
			break;
	}
	esize = 1ull << leaf.entry_shift;
	base = pc & ~(esize - 1);
	*lo = base - below * esize;
	*hi = base + above * esize + esize - 0x1000;
}
