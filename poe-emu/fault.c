/*
 * fault.c - delivering an overlay permission fault
 *
 * The plugin cannot raise a guest exception itself and QEMU's MMU knows
 * nothing of overlays, so a violation is turned into a real exception and
 * then dressed up as the data abort hardware would have taken:
 *  1. before the denied access executes, the callback moves the PC
 *     (qemu_plugin_set_pc) to an address that can never be fetched at any
 *     EL and TCR setting (bit 55 set, bits 63:56 and 54:52 clear: never
 *     canonical, with or without TBI, for VA sizes up to 52 bits). The
 *     access does not happen and no register changes;
 *  2. QEMU takes an instruction abort there: exception entry, SPSR (the
 *     PSTATE of the access), the SP switch and the vector (synchronous,
 *     same as a data abort from that EL) are architectural;
 *  3. the discontinuity callback marks the fault pending, and the
 *     handler's next MRS ELR_EL1, MRS ESR_EL1 and MRS FAR_EL1 are
 *     emulated: ELR = the access, ESR = data abort from the access's EL
 *     (IL, WnR, DFSC = permission fault at the leaf's level, ISS2.Overlay
 *     set), FAR = the first denied byte.
 * The kernel saves ELR into pt_regs with that MRS and returns with ERET
 * through the saved value, so the guest cannot tell the difference.
 * Moving the PC rather than the base register (the technique first tried)
 * also works for store-exclusives, which QEMU fails without any memory
 * access once the address differs from the monitor's, and for accesses
 * without a usable base register (literal, Rn == Rm).
 * If an interrupt is taken at the bad PC instead (it is pending when the
 * new TB starts), only ELR is emulated: the handler returns to the access,
 * which is executed, and checked, again.
 */
#include <stdlib.h>

#include "poe.h"

#define BAD_PC 0x0080000000000000ull

#define EC_DABT_LOW	0x24
#define EC_DABT_CUR	0x25
#define ESR_IL		(1ull << 25)

void poe_fault_inject(struct poe_vcpu *v, const struct poe_insn *pi,
		      unsigned el, bool wnr, const struct poe_verdict *vd,
		      uint64_t por)
{
	if (getenv("POE_DEBUG"))
		fprintf(stderr, "poe-debug: fault vcpu=%u el=%u pc=%#llx "
			"va=%#llx key=%u level=%d por=%#llx\n", v->index, el,
			(unsigned long long)pi->pc,
			(unsigned long long)vd->va, vd->key, vd->level,
			(unsigned long long)por);
	v->redirect = true;
	v->redirect_el = el;
	v->redirect_pc = pi->pc;
	v->fault_wnr = wnr;
	v->fault_va = vd->va;
	v->fault_level = vd->level;
	v->fault_key = vd->key;
	v->fault_por = por;
	v->fault_what = pi->d.name;
	v->fault_kind = ls_kind_name(pi->d.kind);
	qemu_plugin_set_pc(BAD_PC);	/* does not return */
}

static void update_pending(struct poe_vcpu *v)
{
	poe_score_of(v->index)->pending =
		v->esr_pending || v->far_pending || v->elr_pending;
}

void poe_fault_discon(unsigned vcpu, enum qemu_plugin_discon_type type,
		      uint64_t from_pc, uint64_t to_pc, void *ud)
{
	struct poe_vcpu *v = &poe_vcpus[vcpu];

	(void)ud;
	(void)from_pc;
	count_discon(vcpu, type);
	poe_set_el(v, 1);	/* exceptions are taken to EL1 */
	if (!v->redirect)
		return;
	v->redirect = false;
	if (getenv("POE_DEBUG"))
		fprintf(stderr, "poe-debug: discon vcpu=%u type=%d from=%#llx "
			"to=%#llx\n", vcpu, type, (unsigned long long)from_pc,
			(unsigned long long)to_pc);
	v->elr_pending = true;
	if (type == QEMU_PLUGIN_DISCON_EXCEPTION) {
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
		val = (uint64_t)(v->redirect_el ? EC_DABT_CUR : EC_DABT_LOW)
		      << 26;
		val |= ESR_IL | ESR_ISS2_OVERLAY;
		val |= v->fault_wnr ? ESR_WNR : 0;
		val |= 0xc | (v->fault_level & 3);	/* permission, level */
		break;
	case R_FAR_EL1:
		if (!v->far_pending)
			return;
		v->far_pending = false;
		val = v->fault_va;
		break;
	default:	/* ELR_EL1 */
		if (!v->elr_pending)
			return;
		v->elr_pending = false;
		val = v->redirect_pc;
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
