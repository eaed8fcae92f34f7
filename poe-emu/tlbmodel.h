/*
 * tlbmodel.h - a data TLB model for the bench counters (option tlb=on)
 *
 * Measurement only: nothing the guest sees depends on it. Per vCPU an L1
 * data TLB and an L2 TLB (sizes: tlb_l1=, tlb_l2=), looked up for every
 * data access QEMU reports; the misses go to the bench records (count.c).
 */
#ifndef POE_TLBMODEL_H
#define POE_TLBMODEL_H

#include <stdbool.h>
#include <stdint.h>

#include "qemu-plugin-api.h"
#include "state.h"
#include "sysdec.h"

/* after poe_state_init(): with tlb=on, the models of poe_opts' sizes */
void tlbm_init(unsigned max_vcpus);
bool tlbm_enabled(void);

/* translation time: a memory callback on every instruction */
void tlbm_instrument_insn(struct qemu_plugin_insn *insn, uint64_t vaddr);

/*
 * A data access at va by vcpu at EL el (0 or 1): the memory callback's
 * work, public for the host measurement of its cost.
 */
void tlbm_access(unsigned vcpu, unsigned el, uint64_t va);

/* TLBI word with operand xt, covering r: the issuer's or every model */
void tlbm_tlbi(struct poe_vcpu *v, uint32_t word, uint64_t xt,
	       const struct sys_tlbi_range *r, bool bcast);
/*
 * MSR TCR_EL1, SCTLR_EL1, TTBR0_EL1 or TTBR1_EL1 (reg: SR_*) of val, from
 * its callback, before the soft TLB hears of it (the registers still
 * hold their old values)
 */
void tlbm_mmu_write(struct poe_vcpu *v, unsigned reg, uint64_t val);
/* PSCI CPU_OFF: the vCPU's TLBs are empty when it comes back */
void tlbm_reset(struct poe_vcpu *v);

#endif
