/*
 * walk.h - stage-1 table walk of the guest and the per-vCPU soft TLB
 */
#ifndef POE_WALK_H
#define POE_WALK_H

#include "state.h"

struct poe_leaf {
	uint64_t desc;
	int level;
	/* Contiguous bit set and the group's POIndex not all the same */
	bool cont_mixed;
};

bool poe_walk(struct poe_vcpu *v, uint64_t va, struct poe_leaf *leaf);
/* the leaf of va, from the soft TLB or a walk; NULL if the walk fails */
const struct poe_tlb_entry *poe_tlb_lookup(struct poe_vcpu *v, uint64_t va);
void poe_tlb_flush(struct poe_vcpu *v);
/* TTBRx/TCR/SCTLR written: re-read them, flush */
void poe_mmu_changed(struct poe_vcpu *v);
/* va with its pointer authentication code removed (TCR_EL1 sizes) */
uint64_t poe_strip_pac(struct poe_vcpu *v, uint64_t va);

#endif
