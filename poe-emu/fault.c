/*
 * fault.c - delivering an overlay permission fault
 *
 * The plugin cannot raise a guest exception itself, and QEMU's MMU knows
 * nothing of overlays, so a violation is turned into a real data abort by
 * redirect-and-restore:
 *  1. before the access executes, its base register is rewritten so that
 *     the access lands, at the same page offset, on an address that faults
 *     at any EL and TCR setting (bit 55 set, bits 63:56 and 54:52 clear:
 *     never canonical, with or without TBI, for VA sizes up to 52 bits);
 *  2. QEMU takes the data abort: ELR, SPSR, PSTATE and the SP switch are
 *     architectural and the access (and any writeback) does not happen;
 *  3. in the discontinuity callback the base register gets its original
 *     value back before the handler's first instruction, so pt_regs hold
 *     what hardware would leave (no writeback after a fault);
 *  4. the handler's next MRS ESR_EL1 / MRS FAR_EL1 are emulated: ESR is
 *     the real one with DFSC = permission fault at the leaf's level and
 *     ISS2.Overlay set, FAR is the first denied byte.
 * SP as a base at EL0 is restored through the kernel's first MRS SP_EL0
 * after the exception (the "sp" register seen by the plugin is SP_EL1 by
 * then). If anything other than the redirected access is taken first (an
 * interrupt), the register is restored and nothing is reported: the
 * access is re-executed, and re-checked, after the return.
 */
#include <stdlib.h>

#include "poe.h"

#define REDIRECT_BASE 0x0080000000000000ull

static struct qemu_plugin_register *reg_handle(unsigned reg)
{
	return reg == 31 ? poe_reg[R_SP] : poe_xreg[reg];
}

void poe_fault_inject(struct poe_vcpu *v, const struct poe_insn *pi,
		      unsigned el, unsigned reg, uint64_t regval,
		      uint64_t ea, const struct poe_verdict *vd, uint64_t por)
{
	uint64_t target = REDIRECT_BASE | (ea & 0xfff);

	if (!poe_write(v, reg_handle(reg), regval + (target - ea))) {
		fprintf(stderr, "poe-emu: cannot redirect x%u at pc %#llx\n",
			reg, (unsigned long long)pi->pc);
		return;
	}
	if (getenv("POE_DEBUG"))
		fprintf(stderr, "poe-debug: redirect vcpu=%u el=%u pc=%#llx "
			"x%u=%#llx ea=%#llx va=%#llx key=%u level=%d por=%#llx\n",
			v->index, el, (unsigned long long)pi->pc, reg,
			(unsigned long long)regval, (unsigned long long)ea,
			(unsigned long long)vd->va, vd->key, vd->level,
			(unsigned long long)por);
	v->redirect = true;
	v->redirect_reg = reg;
	v->redirect_el = el;
	v->redirect_pc = pi->pc;
	v->redirect_val = regval;
	v->fault_va = vd->va;
	v->fault_level = vd->level;
	v->fault_key = vd->key;
	v->fault_por = por;
	v->fault_what = pi->d.name;
}

static void update_pending(struct poe_vcpu *v)
{
	poe_score_of(v->index)->pending =
		v->esr_pending || v->far_pending || v->sp_el0_pending;
}

void poe_fault_discon(unsigned vcpu, enum qemu_plugin_discon_type type,
		      uint64_t from_pc, uint64_t to_pc, void *ud)
{
	struct poe_vcpu *v = &poe_vcpus[vcpu];

	(void)to_pc;
	(void)ud;
	if (!v->redirect)
		return;
	v->redirect = false;
	if (getenv("POE_DEBUG"))
		fprintf(stderr, "poe-debug: discon vcpu=%u type=%d from=%#llx "
			"to=%#llx\n", vcpu, type, (unsigned long long)from_pc,
			(unsigned long long)to_pc);
	if (v->redirect_reg == 31 && v->redirect_el == 0) {
		v->sp_el0_pending = true;
		v->sp_el0_val = v->redirect_val;
	} else {
		poe_write(v, reg_handle(v->redirect_reg), v->redirect_val);
	}
	if (type == QEMU_PLUGIN_DISCON_EXCEPTION && from_pc == v->redirect_pc) {
		v->esr_pending = true;
		v->far_pending = true;
		v->st.faults++;
		poe_log_fault(v, type);
	}
	update_pending(v);
}

struct mrs_insn {
	uint64_t pc;
	uint8_t which, rt;
};

static void mrs_cb(unsigned vcpu, void *ud)
{
	const struct mrs_insn *m = ud;
	struct poe_vcpu *v = &poe_vcpus[vcpu];
	uint64_t val;

	switch (m->which) {
	case R_ESR_EL1:
		if (!v->esr_pending)
			return;
		v->esr_pending = false;
		val = poe_read(v, poe_reg[R_ESR_EL1]);
		val &= ~(0x3full | 1ull << 10);		/* DFSC, FnV */
		val |= 0xc | (v->fault_level & 3);	/* permission, level */
		val |= ESR_ISS2_OVERLAY;
		break;
	case R_FAR_EL1:
		if (!v->far_pending)
			return;
		v->far_pending = false;
		val = v->fault_va;
		break;
	default:	/* SP_EL0 */
		if (!v->sp_el0_pending)
			return;
		v->sp_el0_pending = false;
		val = v->sp_el0_val;
		break;
	}
	update_pending(v);
	if (m->rt != 31)
		poe_write(v, poe_xreg[m->rt], val);
	qemu_plugin_set_pc(m->pc + 4);
}

void poe_fault_instrument_mrs(struct qemu_plugin_insn *insn, unsigned which,
			      unsigned rt)
{
	struct mrs_insn *m = g_new0(struct mrs_insn, 1);
	qemu_plugin_u64 pending = {
		poe_score, offsetof(struct poe_score, pending)
	};

	m->pc = qemu_plugin_insn_vaddr(insn);
	m->which = which;
	m->rt = rt;
	qemu_plugin_register_vcpu_insn_exec_cond_cb(
		insn, mrs_cb, QEMU_PLUGIN_CB_RW_REGS_PC, QEMU_PLUGIN_COND_NE,
		pending, 0, m);
}
