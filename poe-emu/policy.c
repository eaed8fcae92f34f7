/*
 * policy.c - the overlay permission decision
 *
 * For each 4K page touched by an access: find the leaf descriptor (soft TLB
 * or walk), and if the overlay applies to it, look up the POR field of its
 * POIndex. The overlay applies always when TCR2_EL1.PIE is clear; when it
 * is set, only if the descriptor's PIIndex selects, in PIR_EL1 (EL1
 * accesses) or PIRE0_EL1 (EL0 and unprivileged accesses), one of the
 * overlay-applying "_O" permissions, i.e. an encoding with bit 3 clear. So
 * a kernel that leaves its own PIE permissions in the non-_O form is not
 * protected by POR_EL1, exactly as on hardware.
 *
 * A read needs POE R (bit 0), a write POE W (bit 2); read-modify-write
 * atomics need both. Reserved POR values (bit 3 set) grant nothing.
 * Pages whose walk fails are allowed here: QEMU faults on them itself.
 */
#include "poe.h"

#define POE_R	1
#define POE_W	4
/* pages checked per access at most (MOPS ranges): 256 MiB */
#define MAX_PAGES 65536

bool poe_por_restricts(uint64_t por)
{
	unsigned k;

	for (k = 0; k < 8; k++)
		if (((por >> (4 * k)) & 0xd) != (POE_R | POE_W))
			return true;
	return false;
}

static bool page_allowed(struct poe_vcpu *v, uint64_t va, bool need_r,
			 bool need_w, bool el0_perms, uint64_t por,
			 struct poe_verdict *out)
{
	const struct poe_tlb_entry *e = poe_tlb_lookup(v, va);
	unsigned perm;

	if (!e)
		return true;
	if (v->tcr2 & TCR2_PIE) {
		uint64_t pir = el0_perms ? v->pire0_el1 : v->pir_el1;

		if ((pir >> (4 * e->pi)) & 8)
			return true;	/* not an _O permission */
	}
	perm = (por >> (4 * e->po)) & 0xf;
	if (perm & 8)
		perm = 0;
	if ((need_r && !(perm & POE_R)) || (need_w && !(perm & POE_W))) {
		out->va = va;
		out->level = e->level;
		out->key = e->po;
		return false;
	}
	return true;
}

void poe_check(struct poe_vcpu *v, uint64_t va, uint64_t size, bool need_r,
	       bool need_w, bool el0_perms, struct poe_verdict *out)
{
	uint64_t por = el0_perms ? v->por_el0 : v->por_el1;
	uint64_t last = va + (size ? size - 1 : 0), page;
	unsigned n = 0;

	out->allowed = true;
	if (!page_allowed(v, va, need_r, need_w, el0_perms, por, out)) {
		out->allowed = false;
		return;
	}
	/* the following pages of an access that crosses a page boundary */
	for (page = (va & ~0xfffull) + 0x1000;
	     page - 1 < last && page != 0 && n < MAX_PAGES;
	     page += 0x1000, n++) {
		if (!page_allowed(v, page, need_r, need_w, el0_perms, por,
				  out)) {
			out->allowed = false;
			return;
		}
	}
}
