/*
 * regs.h - guest register access through the plugin API
 *
 * Handles of the registers poe-emu reads are looked up once by name; the
 * accessors use a per-thread buffer, so they need no vCPU state (each
 * vCPU runs on its own thread under MTTCG) and every module may use them.
 */
#ifndef POE_REGS_H
#define POE_REGS_H

#include <stdbool.h>
#include <stdint.h>

#include "qemu-plugin-api.h"

enum poe_reg_id {
	R_TCR_EL1, R_TTBR0_EL1, R_TTBR1_EL1, R_SCTLR_EL1, R_TCR2_EL1,
	R_PIR_EL1, R_PIRE0_EL1, R_CPACR_EL1, R_ID_AA64MMFR3_EL1, R_ESR_EL1,
	R_FAR_EL1, R_VBAR_EL1, R_DCZID_EL0, R_CPSR, R_SP, R_ELR_EL1,
	R_SPSR_EL1, R_PC, R_ID_AA64MMFR2_EL1, R_TPIDR_EL1,
	R_SP_EL0, R_NUM
};

/*
 * look the handles up (from a vCPU init callback); false if some lack;
 * fastregs: read x0-x30, sp, pc from QEMU's CPU state (see regs.c)
 */
bool poe_regs_init(bool verbose, unsigned max_vcpus, bool fastregs);
bool poe_regs_ready(void);
/* did QEMU list this register? (the optional ones may lack) */
bool poe_reg_found(enum poe_reg_id id);

uint64_t poe_reg_read(enum poe_reg_id id);
/* Xn of vcpu; n == 31 is SP if sp, else XZR (reads 0) */
uint64_t poe_gpr_read(unsigned vcpu, unsigned n, bool sp);
/* Xn = val; n == 31 (XZR) is ignored */
void poe_gpr_write(unsigned n, uint64_t val);
/*
 * The address the instruction translated at vaddr is running at now
 * (from a callback on that instruction, on vcpu): see regs.c.
 */
uint64_t poe_insn_pc(unsigned vcpu, uint64_t vaddr);
/* does vcpu read its registers from QEMU's CPU state? (tests) */
bool poe_regs_fast(unsigned vcpu);

#endif
