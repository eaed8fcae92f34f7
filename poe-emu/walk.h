/*
 * walk.h - stage-1 table walk of the guest and the per-vCPU soft TLB
 */
#ifndef POE_WALK_H
#define POE_WALK_H

#include "state.h"
#include "sysdec.h"

struct poe_leaf {
	uint64_t desc;
	int level;
	unsigned shift;		/* log2 of the size it maps */
	unsigned entry_shift;	/* the same, one entry (contiguous or not) */
	uint64_t slot_pa;	/* where the descriptor is */
	unsigned index, entries; /* its index in its table, the table's size */
	/* strict mode: Contiguous bit set, the group's POIndex not uniform */
	bool cont_mixed;
	uint64_t pa;		/* the output address of va's 4K page */
};

bool poe_walk(struct poe_vcpu *v, uint64_t va, struct poe_leaf *leaf);
/* the leaf of va, from the soft TLB or a walk; NULL if the walk fails */
const struct poe_tlb_entry *poe_tlb_lookup(struct poe_vcpu *v, uint64_t va);
/*
 * The physical address of va, from the soft TLB or a walk (cheaper than
 * qemu_plugin_read_memory_vaddr()'s walk where the soft TLB holds it);
 * false if the walk fails
 */
bool poe_va_to_pa(struct poe_vcpu *v, uint64_t va, uint64_t *pa);
void poe_tlb_flush(struct poe_vcpu *v);
/* TLBI: local (the issuer's soft TLB), broadcast (every vCPU's) */
void poe_tlb_invalidate(struct poe_vcpu *v, const struct sys_tlbi_range *r);
void poe_tlb_broadcast(const struct sys_tlbi_range *r);
/* broadcast invalidations so far (a fetch check racing with one) */
uint64_t poe_tlb_generation(void);

extern uint64_t poe_tlb_ring_gen;	/* walk.c: use the functions */

/*
 * The soft TLB's entry for va if it holds one and no broadcast
 * invalidation is pending for v: the inline common case of
 * poe_tlb_lookup(), which does the rest (NULL here is no verdict).
 */
static inline const struct poe_tlb_entry *poe_tlb_peek(struct poe_vcpu *v,
						       uint64_t va)
{
	const struct poe_tlb_entry *e = &v->tlb[(va >> 12) % POE_TLB_SIZE];

	if (e->tag != ((va & ~0xfffull) | 1) ||
	    v->tlb_gen != __atomic_load_n(&poe_tlb_ring_gen, __ATOMIC_ACQUIRE))
		return NULL;
	return e;
}
/* TTBR0 (half 0), TTBR1 (1), TCR/SCTLR (-1) written: re-read, flush */
void poe_mmu_changed(struct poe_vcpu *v, int half);
/* read TCR/TTBRx/SCTLR_EL1 if not known (needs register access) */
void poe_mmu_load(struct poe_vcpu *v);
/* the current ASID (TCR_EL1.A1, .AS) */
unsigned poe_asid(struct poe_vcpu *v);
/* va with its pointer authentication code removed (TCR_EL1 sizes) */
uint64_t poe_strip_pac(struct poe_vcpu *v, uint64_t va);

#endif
