/*
 * poe.h - shared state of the poe-emu plugin
 *
 * One struct poe_vcpu per vCPU holds the emulated registers (POR_EL0,
 * POR_EL1, the TCR2_EL1 value the guest wrote), the soft TLB, the state of
 * a fault being delivered and the statistics. Only the vCPU's own thread
 * touches it while the guest runs. The few values that conditional
 * callbacks test live in a QEMU scoreboard (struct poe_score).
 */
#ifndef POE_H
#define POE_H

#include <stdio.h>

#include "qemu-plugin-api.h"
#include "decode.h"
#include "sysdec.h"
#include "count.h"

/* Architectural bits used throughout. */
#define TCR2_PIE	(1ull << 1)
#define TCR2_E0POE	(1ull << 2)
#define TCR2_POE	(1ull << 3)
#define CPACR_E0POE	(1ull << 29)
#define ESR_ISS2_OVERLAY (1ull << 38)
#define ESR_WNR		(1ull << 6)
#define MMFR3_S1POE_SHIFT 16

/* Values read by conditional callbacks; one element per vCPU. */
struct poe_score {
	/*
	 * Gates, per EL whose permissions apply: non-zero while that EL's
	 * overlay is enabled and its POR value denies some key R (rd), W
	 * (wr), or either (rw). "cur" is the set of the EL the vCPU is at
	 * (tracked at exception entry and ERET), for code in the TTBR0 half
	 * that may run at either EL; rw_any is rw_el1 | rw_el0. Loads test
	 * rd, stores wr, read-modify-writes rw.
	 */
	uint64_t rd_el1, wr_el1, rw_el1;
	uint64_t rd_el0, wr_el0, rw_el0;
	uint64_t rd_cur, wr_cur, rw_cur;
	uint64_t rw_any;
	uint64_t pending;	/* a fault is being delivered: patch MRS */
	uint64_t isb;		/* stats: ISBs executed (inline counter) */
};

#define POE_TLB_SIZE 256

struct poe_tlb_entry {
	uint64_t tag;		/* VA of the 4K page | 1, 0 = invalid */
	uint8_t po;		/* POIndex of the leaf */
	uint8_t pi;		/* PIIndex of the leaf */
	int8_t level;		/* level of the leaf */
};

struct poe_stats {
	uint64_t por_el1_writes, por_el0_writes, tlbi, checked, faults, walks;
};

struct poe_vcpu {
	unsigned index;
	GByteArray *buf;
	unsigned el;		/* current EL: 1 after an exception, ERET's */

	/* emulated / shadowed system registers */
	uint64_t por_el0, por_el1;
	uint64_t tcr2;		/* as written by the guest (QEMU drops POE) */
	uint64_t pir_el1, pire0_el1;
	/* overlay enabled and POR restricting, per EL (poe_update_gates) */
	bool live_el1, live_el0;

	/* translation registers, read lazily (mmu_valid) */
	bool mmu_valid;
	uint64_t tcr, ttbr0, ttbr1, sctlr;
	struct poe_tlb_entry tlb[POE_TLB_SIZE];

	/* fault delivery: PC moved to a bad address until the exception */
	bool redirect;
	uint8_t redirect_el;
	uint64_t redirect_pc;
	/* what the kernel must see when it reads ELR/ESR/FAR */
	bool elr_pending, esr_pending, far_pending, fault_wnr;
	uint64_t fault_va;
	int fault_level;
	/* for the log */
	unsigned fault_key;
	uint64_t fault_por;
	const char *fault_what;	/* instruction class */
	const char *fault_kind;	/* load, store, rmw, zva, mops */

	struct poe_stats st;
};

/* An instruction instrumented at translation time. */
struct poe_insn {
	struct ls_insn d;
	uint64_t pc;
	uint32_t word;
	bool high;		/* PC in the TTBR1 half: runs at EL1 */
};

/* plugin.c */
extern struct poe_vcpu *poe_vcpus;
extern struct qemu_plugin_scoreboard *poe_score;
extern FILE *poe_log;
extern bool poe_strict;
extern bool poe_force_el1;
struct poe_score *poe_score_of(unsigned vcpu);
void poe_log_fault(struct poe_vcpu *v, unsigned type);
bool poe_strict_expected(struct poe_vcpu *v, uint64_t pc);

/* regs.c: register access and system register emulation */
enum poe_sysreg_id {
	R_TCR_EL1, R_TTBR0_EL1, R_TTBR1_EL1, R_SCTLR_EL1, R_TCR2_EL1,
	R_PIR_EL1, R_PIRE0_EL1, R_CPACR_EL1, R_ID_AA64MMFR3_EL1, R_ESR_EL1,
	R_FAR_EL1, R_VBAR_EL1, R_DCZID_EL0, R_CPSR, R_SP, R_ELR_EL1, R_SPSR_EL1, R_NUM
};
extern struct qemu_plugin_register *poe_reg[R_NUM];
extern struct qemu_plugin_register *poe_xreg[31];
bool poe_regs_init(bool verbose);
uint64_t poe_read(struct poe_vcpu *v, struct qemu_plugin_register *h);
bool poe_write(struct poe_vcpu *v, struct qemu_plugin_register *h,
	       uint64_t val);
uint64_t poe_read_gpr(struct poe_vcpu *v, unsigned n, bool sp);
unsigned poe_current_el(struct poe_vcpu *v);
void poe_update_gates(struct poe_vcpu *v);
void poe_set_el(struct poe_vcpu *v, unsigned el);
/* instrument a system instruction; returns true if it was one of ours */
bool poe_sysreg_instrument(struct qemu_plugin_insn *insn,
			   const struct sys_insn *si, uint64_t pc, bool stats);

/* walk.c: stage-1 translation and soft TLB */
struct poe_leaf {
	uint64_t desc;
	int level;
};
bool poe_walk(struct poe_vcpu *v, uint64_t va, struct poe_leaf *leaf);
const struct poe_tlb_entry *poe_tlb_lookup(struct poe_vcpu *v, uint64_t va);
void poe_tlb_flush(struct poe_vcpu *v);

/* policy.c: the permission decision */
struct poe_verdict {
	bool allowed;
	uint64_t va;		/* first byte denied */
	int level;		/* leaf level of the denied page */
	unsigned key;		/* its POIndex */
};
bool poe_por_restricts(uint64_t por);
void poe_check(struct poe_vcpu *v, uint64_t va, uint64_t size, bool need_r,
	       bool need_w, bool el0_perms, struct poe_verdict *out);

/* fault.c: fault delivery */
void poe_fault_inject(struct poe_vcpu *v, const struct poe_insn *pi,
		      unsigned el, bool wnr, const struct poe_verdict *vd,
		      uint64_t por);
void poe_fault_discon(unsigned vcpu, enum qemu_plugin_discon_type type,
		      uint64_t from_pc, uint64_t to_pc, void *ud);
void poe_fault_instrument_mrs(struct qemu_plugin_insn *insn, unsigned which,
			      unsigned rt);

#endif
