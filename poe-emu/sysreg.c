/*
 * sysreg.c - emulation of the POE system registers, TLB maintenance,
 * context synchronisation and PSCI power-down
 *
 * QEMU 11.1 has no POR_EL0/POR_EL1 and silently drops TCR2_EL1.POE/E0POE,
 * so the plugin emulates them: MRS/MSR of POR_ELx are executed here against
 * per-vCPU shadow values and skipped (qemu_plugin_set_pc), MRS
 * ID_AA64MMFR3_EL1 gets S1POE = 1, MSR TCR2_EL1 is shadowed (QEMU performs
 * the rest of the write) and MRS TCR2_EL1 returns the shadowed enables.
 * With bbm=N, MRS ID_AA64MMFR2_EL1 at EL1 gets BBM = N: Linux splits the
 * linear map's blocks without break-before-make at level 3, which is safe
 * under TCG (no TLB conflict aborts: QEMU's TLB holds one page per entry
 * and is refilled from the tables).
 * Written values take effect at the next ISB, exception entry or ERET
 * (state.c); ISBs get a callback only while a write awaits one.
 * EL0 may use POR_EL0 only when CPACR_EL1.E0POE is set; otherwise, and for
 * every EL0 access to an EL1 register, QEMU's own UNDEF is left to happen.
 *
 * Soft TLB: writes to TCR/SCTLR flush the vCPU's, writes to TTBRx the
 * entries of that half; a local TLBI
 * invalidates what its operand covers in the issuer's, a broadcast one
 * (*IS, *OS) in every vCPU's, before the issuer's next instruction (walk.c).
 * PIR_EL1/PIRE0_EL1 values are recorded when written (the soft TLB keeps
 * PIIndex, not permissions, so nothing needs flushing). With tlb=on the
 * TLB model hears of the same TLBIs and register writes (tlbmodel.c has
 * its own rules for the writes).
 *
 * A write of VBAR_EL1 with an address in the TTBR1 half (the kernel
 * installs its vectors) flushes QEMU's translations (see plugin.c).
 *
 * PSTATE.UAO (LDTR/STTR at EL1 privileged while set, check.c): MSR UAO
 * and ERET tell whether it may be set; exception entry clears it.
 *
 * PSCI CPU_OFF: QEMU resets a vCPU that it powers on again, so the
 * plugin's state of the calling vCPU goes back to reset values (POR_ELx
 * and TCR2 zero, EL1, soft TLB empty, translation registers re-read):
 * cpu_do_resume and the secondary bring-up really restore them. Only a
 * call from EL1: at EL0, HVC and SMC are UNDEFINED.
 */
#include <string.h>

#include "sysreg.h"
#include "state.h"
#include "regs.h"
#include "walk.h"
#include "fault.h"
#include "count.h"
#include "profile.h"
#include "sysmap.h"
#include "tlbmodel.h"

#define PSCI_CPU_OFF		0x84000002u

enum sr_op {
	OP_MRS_POR_EL0, OP_MSR_POR_EL0, OP_MRS_POR_EL1, OP_MSR_POR_EL1,
	OP_MRS_MMFR2, OP_MRS_MMFR3, OP_MRS_TCR2, OP_MSR_TCR2, OP_MSR_PIR, OP_MSR_PIRE0,
	OP_MSR_MMU, OP_MSR_TTBR0, OP_MSR_TTBR1, OP_MSR_VBAR, OP_TLBI,
	OP_TLBI_BCAST, OP_ERET, OP_ISB, OP_PSCI, OP_MSR_UAO_IMM,
	OP_MSR_UAO_REG,
};

struct sr_insn {
	uint64_t vaddr;		/* at translation: see poe_insn_pc() */
	uint32_t word;
	uint8_t op, rt;
	bool high;
};

static void tlbi(struct poe_vcpu *v, const struct sr_insn *s, bool bcast)
{
	bool ds = (poe_reg_read(R_TCR_EL1) >> 59) & 1;	/* LPA2 ranges */
	uint64_t xt = poe_gpr_read(v->index, s->rt, false);
	struct sys_tlbi_range r;

	v->st.tlbi++;
	sys_tlbi_range(s->word, xt, ds, &r);
	tlbm_tlbi(v, s->word, xt, &r, bcast);
	if (bcast)
		poe_tlb_broadcast(&r);	/* the issuer's too, at its lookup */
	else
		poe_tlb_invalidate(v, &r);
}

/* EL of an MSR/MRS in the TTBR0 half (idmap at EL1, or EL0) */
static unsigned insn_el(const struct sr_insn *s)
{
	return s->high ? 1 : (poe_reg_read(R_CPSR) >> 2) & 3;
}

static void eret(struct poe_vcpu *v)
{
	uint64_t spsr = poe_reg_read(R_SPSR_EL1);
	bool aarch32 = spsr & 0x10;	/* SPSR.M[4]: to AArch32 (EL0) */
	unsigned el = aarch32 ? 0 : (spsr >> 2) & 3;

	poe_context_sync(v);
	poe_set_el(v, el, aarch32);
	poe_set_uao(v, el == 1 && (spsr >> 23 & 1));	/* SPSR.UAO */
}

/*
 * MSR UAO, #imm (the value in CRm[0]) or MSR UAO, Xt (bit 23), UNDEFINED
 * at EL0: QEMU performs it, the plugin notes what PSTATE.UAO becomes.
 */
static void uao_write(struct poe_vcpu *v, const struct sr_insn *s)
{
	bool set;

	if (insn_el(s) == 0)
		return;
	if (s->op == OP_MSR_UAO_IMM)
		set = s->word >> 8 & 1;
	else
		set = poe_gpr_read(v->index, s->rt, false) >> 23 & 1;
	poe_set_uao(v, set);
}

/*
 * A TTBRx write that only changes the ASID (Linux switches ASIDs in TTBR1
 * on every context switch) changes no translation the soft TLB holds: it
 * is not tagged by ASID, and the tables are the same.
 */
static void ttbr_write(struct poe_vcpu *v, bool ttbr1, uint64_t val)
{
	uint64_t *cached = ttbr1 ? &v->ttbr1 : &v->ttbr0;
	uint64_t baddr = 0x0000fffffffffffeull;

	if (v->mmu_valid && !((*cached ^ val) & baddr)) {
		*cached = val;
		return;
	}
	poe_mmu_changed(v, ttbr1);
}

/*
 * HVC and SMC are UNDEFINED at EL0 (an AArch32 EL0 word misread as one
 * is at EL0 too): a program that sets w0 to CPU_OFF and calls them powers
 * nothing down, so only a call from EL1 resets the vCPU's state. Whether
 * EL1's call reaches PSCI (the conduit, HCR_EL2/SCR_EL3 traps) is not
 * visible to the plugin: QEMU virt has neither EL2 nor EL3 here, and a
 * kernel calls PSCI through its one conduit.
 */
static void psci(struct poe_vcpu *v, const struct sr_insn *s)
{
	if (insn_el(s) == 0)
		return;
	if ((uint32_t)poe_gpr_read(v->index, 0, false) == PSCI_CPU_OFF) {
		v->st.resets++;
		poe_vcpu_reset(v);
		tlbm_reset(v);
	}
}

/* the SYSREG() key of an MSR/MRS: op0:op1:CRn:CRm:op2 */
static unsigned sysreg_of(const struct sr_insn *s)
{
	return (s->word >> 5) & 0xffff;
}

static void sr_cb(unsigned vcpu, void *ud)
{
	const struct sr_insn *s = ud;
	struct poe_vcpu *v = poe_vcpu(vcpu);
	uint64_t val;

	switch (s->op) {
	case OP_ERET:
		eret(v);
		return;
	case OP_ISB:
		poe_context_sync(v);
		return;
	case OP_TLBI_BCAST:
	case OP_TLBI:
		tlbi(v, s, s->op == OP_TLBI_BCAST);
		return;
	case OP_MSR_VBAR:
		/* the kernel installs its vectors: see plugin.c; and its
		 * KASLR slide is known (window.c) */
		val = poe_gpr_read(vcpu, s->rt, false);
		if (val >> 55 & 1) {
			sysmap_set_vbar(val);
			poe_flush_translations(v);
		}
		return;
	case OP_MSR_MMU:
		val = poe_gpr_read(vcpu, s->rt, false);
		tlbm_mmu_write(v, sysreg_of(s), val);
		poe_mmu_changed(v, -1);
		return;
	case OP_MSR_TTBR0:
	case OP_MSR_TTBR1:
		val = poe_gpr_read(vcpu, s->rt, false);
		tlbm_mmu_write(v, sysreg_of(s), val);
		ttbr_write(v, s->op == OP_MSR_TTBR1, val);
		return;
	case OP_PSCI:
		psci(v, s);
		return;
	case OP_MSR_UAO_IMM:
	case OP_MSR_UAO_REG:
		uao_write(v, s);
		return;
	}
	if (insn_el(s) == 0) {
		/* only POR_EL0, and only if CPACR_EL1.E0POE lets EL0 in */
		if (s->op != OP_MRS_POR_EL0 && s->op != OP_MSR_POR_EL0)
			return;
		if (!(poe_reg_read(R_CPACR_EL1) & CPACR_E0POE))
			return;
	}
	switch (s->op) {
	case OP_MRS_POR_EL0:
		poe_gpr_write(s->rt, v->wr.por_el0);
		break;
	case OP_MSR_POR_EL0:
		poe_write_por_el0(v, poe_gpr_read(vcpu, s->rt, false));
		v->st.por_el0_writes++;
		break;
	case OP_MRS_POR_EL1:
		poe_gpr_write(s->rt, v->wr.por_el1);
		break;
	case OP_MSR_POR_EL1:
		val = poe_gpr_read(vcpu, s->rt, false);
		poe_write_por_el1(v, val);
		v->st.por_el1_writes++;
		count_por_el1_write(vcpu);
		/* a window's value grants write to every key */
		profile_por_el1_write(s->vaddr, poe_gpr_read(vcpu, 30, false),
				      !(poe_por_denies(val) & DENY_W));
		break;
	case OP_MRS_MMFR2:
		val = poe_reg_read(R_ID_AA64MMFR2_EL1);
		val &= ~(0xfull << MMFR2_BBM_SHIFT);
		val |= (uint64_t)poe_opts.bbm << MMFR2_BBM_SHIFT;
		poe_gpr_write(s->rt, val);
		break;
	case OP_MRS_MMFR3:
		val = poe_reg_read(R_ID_AA64MMFR3_EL1);
		val &= ~(0xfull << MMFR3_S1POE_SHIFT);
		val |= 1ull << MMFR3_S1POE_SHIFT;
		poe_gpr_write(s->rt, val);
		break;
	case OP_MRS_TCR2:
		val = poe_reg_read(R_TCR2_EL1);
		val |= v->wr.tcr2 & (TCR2_POE | TCR2_E0POE);
		poe_gpr_write(s->rt, val);
		break;
	case OP_MSR_TCR2:
		poe_write_tcr2(v, poe_gpr_read(vcpu, s->rt, false));
		return;		/* QEMU performs the write (minus POE bits) */
	case OP_MSR_PIR:
		v->pir_el1 = poe_gpr_read(vcpu, s->rt, false);
		return;
	case OP_MSR_PIRE0:
		v->pire0_el1 = poe_gpr_read(vcpu, s->rt, false);
		return;
	}
	/* skip the instruction, where it runs; does not return */
	qemu_plugin_set_pc(poe_insn_pc(vcpu, s->vaddr) + 4);
}

static void add_cb(struct qemu_plugin_insn *insn, uint64_t vaddr,
		   enum sr_op op, unsigned rt)
{
	struct sr_insn *s = g_new0(struct sr_insn, 1);

	s->vaddr = vaddr;
	qemu_plugin_insn_data(insn, &s->word, 4);
	s->op = op;
	s->rt = rt;
	s->high = vaddr >> 63;
	if (op == OP_ISB) {
		/* free unless a POR/TCR2 write awaits synchronisation */
		qemu_plugin_register_vcpu_insn_exec_cond_cb(
			insn, sr_cb, QEMU_PLUGIN_CB_R_REGS, QEMU_PLUGIN_COND_NE,
			poe_score_u64(offsetof(struct poe_score, unsynced)), 0,
			s);
		return;
	}
	qemu_plugin_register_vcpu_insn_exec_cb(insn, sr_cb,
					       QEMU_PLUGIN_CB_RW_REGS_PC, s);
}

static bool instrument_reg(struct qemu_plugin_insn *insn,
			   const struct sys_insn *si, uint64_t vaddr)
{
	bool msr = si->kind == SYS_MSR;
	unsigned rt = si->rt;

	switch (si->reg) {
	case SR_POR_EL0:
		add_cb(insn, vaddr, msr ? OP_MSR_POR_EL0 : OP_MRS_POR_EL0, rt);
		return true;
	case SR_POR_EL1:
		add_cb(insn, vaddr, msr ? OP_MSR_POR_EL1 : OP_MRS_POR_EL1, rt);
		return true;
	case SR_TCR2_EL1:
		add_cb(insn, vaddr, msr ? OP_MSR_TCR2 : OP_MRS_TCR2, rt);
		return true;
	}
	if (!msr) {
		switch (si->reg) {
		case SR_ID_AA64MMFR3_EL1:
			add_cb(insn, vaddr, OP_MRS_MMFR3, rt);
			return true;
		case SR_ID_AA64MMFR2_EL1:
			/* QEMU's value as it is, unless bbm= says */
			if (poe_opts.bbm < 0 ||
			    !poe_reg_found(R_ID_AA64MMFR2_EL1))
				return false;
			add_cb(insn, vaddr, OP_MRS_MMFR2, rt);
			return true;
		case SR_ESR_EL1:
			poe_fault_instrument_mrs(insn, R_ESR_EL1, rt);
			return true;
		case SR_FAR_EL1:
			poe_fault_instrument_mrs(insn, R_FAR_EL1, rt);
			return true;
		case SR_ELR_EL1:
			poe_fault_instrument_mrs(insn, R_ELR_EL1, rt);
			return true;
		}
		return false;
	}
	switch (si->reg) {
	case SR_PIR_EL1:
		add_cb(insn, vaddr, OP_MSR_PIR, rt);
		return true;
	case SR_PIRE0_EL1:
		add_cb(insn, vaddr, OP_MSR_PIRE0, rt);
		return true;
	case SR_TTBR0_EL1:
		add_cb(insn, vaddr, OP_MSR_TTBR0, rt);
		return true;
	case SR_TTBR1_EL1:
		add_cb(insn, vaddr, OP_MSR_TTBR1, rt);
		return true;
	case SR_TCR_EL1:
	case SR_SCTLR_EL1:
		add_cb(insn, vaddr, OP_MSR_MMU, rt);
		return true;
	case SR_VBAR_EL1:
		add_cb(insn, vaddr, OP_MSR_VBAR, rt);
		return true;
	case SR_UAO:
		add_cb(insn, vaddr, OP_MSR_UAO_REG, rt);
		return true;
	}
	return false;
}

bool poe_sysreg_instrument(struct qemu_plugin_insn *insn,
			   const struct sys_insn *si, uint64_t vaddr)
{
	switch (si->kind) {
	case SYS_ISB:
		if (poe_opts.stats)
			qemu_plugin_register_vcpu_insn_exec_inline_per_vcpu(
				insn, QEMU_PLUGIN_INLINE_ADD_U64,
				poe_score_u64(offsetof(struct poe_score, isb)),
				1);
		add_cb(insn, vaddr, OP_ISB, 0);
		return true;
	case SYS_ERET:
		add_cb(insn, vaddr, OP_ERET, 0);
		return true;
	case SYS_TLBI:
		add_cb(insn, vaddr, si->bcast ? OP_TLBI_BCAST : OP_TLBI,
		       si->rt);
		return true;
	case SYS_HVC:
	case SYS_SMC:
		add_cb(insn, vaddr, OP_PSCI, 0);
		return true;
	case SYS_MSR_UAO:
		add_cb(insn, vaddr, OP_MSR_UAO_IMM, 0);
		return true;
	case SYS_MRS:
	case SYS_MSR:
		return instrument_reg(insn, si, vaddr);
	default:
		return false;
	}
}
