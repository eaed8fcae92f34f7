/*
 * policy.h - the overlay permission decision
 */
#ifndef POE_POLICY_H
#define POE_POLICY_H

#include "state.h"
#include "walk.h"

#define NEED_R	1
#define NEED_W	2
#define NEED_X	4

struct poe_verdict {
	bool allowed;
	bool cont_mixed;	/* a page in a mixed contiguous group */
	unsigned missing;	/* NEED_* the denied page lacks */
	uint64_t va;		/* first byte denied */
	int level;		/* leaf level of the denied page */
	unsigned key;		/* its POIndex */
};

/*
 * Does the EL0 (el0_perms) or the EL1 overlay apply at all? POR_EL0 only
 * while TCR2_EL1.E0POE is set, POR_EL1 only while TCR2_EL1.POE is set.
 */
static inline bool poe_overlay_on(const struct poe_regs *r, bool el0_perms)
{
	return r->tcr2 & (el0_perms ? TCR2_E0POE : TCR2_POE);
}

/*
 * May an access of size bytes at va that needs the NEED_* rights in
 * need proceed, with the EL0 (el0_perms) or EL1 overlay of registers r?
 */
void poe_check(struct poe_vcpu *v, uint64_t va, uint64_t size, unsigned need,
	       bool el0_perms, const struct poe_regs *r,
	       struct poe_verdict *out);

/*
 * The common case of poe_check(), inline: an access within one page whose
 * leaf is in the soft TLB, not in a mixed contiguous group. True if it is
 * allowed; false if poe_check() must decide.
 */
static inline bool poe_check_fast(struct poe_vcpu *v, uint64_t va,
				  uint64_t size, unsigned need, bool el0_perms,
				  const struct poe_regs *r)
{
	const struct poe_tlb_entry *e;
	unsigned perm, rights;

	if (!poe_overlay_on(r, el0_perms))
		return true;
	if ((va & 0xfff) + size > 0x1000 || !(e = poe_tlb_peek(v, va)) ||
	    e->cont_mixed)
		return false;
	if ((r->tcr2 & TCR2_PIE) &&
	    ((el0_perms ? v->pire0_el1 : v->pir_el1) >> (4 * e->pi) & 8))
		return true;		/* not an _O permission */
	perm = ((el0_perms ? r->por_el0 : r->por_el1) >> (4 * e->po)) & 0xf;
	if (perm & 8)
		return false;		/* reserved: none (poe_check says) */
	rights = (perm & POE_R ? NEED_R : 0) | (perm & POE_W ? NEED_W : 0) |
		 (perm & POE_X ? NEED_X : 0);
	return !(need & ~rights);
}

/*
 * The pages around pc whose overlay also grants X, for fetch checks to
 * skip: the run of valid leaf entries next to pc's in its table (at most
 * 64 either side) that grant X, as page addresses [*lo, *hi].
 */
void poe_fetch_run(struct poe_vcpu *v, uint64_t pc, bool el0_perms,
		   const struct poe_regs *r, uint64_t *lo, uint64_t *hi);

#endif
