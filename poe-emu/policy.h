/*
 * policy.h - the overlay permission decision
 */
#ifndef POE_POLICY_H
#define POE_POLICY_H

#include "state.h"

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
 * May an access of size bytes at va that needs the NEED_* rights in
 * need proceed, with the EL0 (el0_perms) or EL1 overlay of registers r?
 */
void poe_check(struct poe_vcpu *v, uint64_t va, uint64_t size, unsigned need,
	       bool el0_perms, const struct poe_regs *r,
	       struct poe_verdict *out);

/*
 * The pages around pc whose overlay also grants X, for fetch checks to
 * skip: the run of valid leaf entries next to pc's in its table (at most
 * 64 either side) that grant X, as page addresses [*lo, *hi].
 */
void poe_fetch_run(struct poe_vcpu *v, uint64_t pc, bool el0_perms,
		   const struct poe_regs *r, uint64_t *lo, uint64_t *hi);

#endif
