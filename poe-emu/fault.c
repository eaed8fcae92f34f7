/*
 * fault.c - delivering an overlay permission fault
 *
 * The plugin cannot raise a guest exception itself and QEMU's MMU knows
 * nothing of overlays, so a violation is turned into a real exception and
 * then dressed up as the abort hardware would have taken:
 *  1. before the denied access (or the denied instruction fetch) executes,
 *     the callback moves the PC (qemu_plugin_set_pc) to an address that can
 *     never be fetched at any EL and TCR setting (bit 55 set, bits 63:56
 *     and 54:52 clear: never canonical, with or without TBI, for VA sizes
 *     up to 52 bits). The access does not happen and no register changes;
 *  2. QEMU takes an instruction abort there: exception entry, SPSR (the
 *     PSTATE of the access), the SP switch and the vector (synchronous,
 *     as for any abort from that EL) are architectural;
 *  3. the discontinuity callback marks the fault pending, and the
 *     handler's next MRS ELR_EL1, MRS ESR_EL1 and MRS FAR_EL1 are
 *     emulated: ELR = the access, ESR = a syndrome built here, FAR = the
 *     first denied byte (for a fetch, the instruction's address).
 * The syndrome is the plugin's own, not QEMU's: EC data abort (0x24/0x25)
 * or instruction abort (0x20/0x21) by the EL taken from, IL = 1, WnR (an
 * atomic read-modify-write denied for lack of R has WnR = 0), CM for cache
 * maintenance, FSC = permission fault at the level of the leaf, ISS2
 * Overlay (ESR bit 38) set; ISV = 0 (no instruction syndrome: Linux does
 * not need one for a permission fault).
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

#include "fault.h"
#include "strict.h"

#define BAD_PC 0x0080000000000000ull

#define EC_IABT_LOW	0x20
#define EC_IABT_CUR	0x21
#define EC_DABT_LOW	0x24
#define EC_DABT_CUR	0x25
#define ESR_IL		(1ull << 25)
#define ESR_WNR		(1ull << 6)
#define ESR_CM		(1ull << 8)
#define ESR_ISS2_OVERLAY (1ull << 38)

void poe_fault_deliver(struct poe_vcpu *v, const struct poe_fault_info *fi,
		       const struct poe_verdict *vd)
{
	struct poe_fault *f = &v->f;

	if (getenv("POE_DEBUG"))
		fprintf(stderr, "poe-debug: fault vcpu=%u el=%u pc=%#llx "
			"va=%#llx key=%u level=%d por=%#llx exec=%d\n",
			v->index, fi->el, (unsigned long long)fi->pc,
			(unsigned long long)vd->va, vd->key, vd->level,
			(unsigned long long)fi->por, fi->exec);
	v->redirect = true;
	f->el = fi->el;
	f->exec = fi->exec;
	f->wnr = fi->wnr;
	f->cm = fi->cm;
	f->pc = fi->pc;
	f->va = vd->va;
	f->level = vd->level;
	f->key = vd->key;
	f->por = fi->por;
	f->what = fi->what;
	f->kind = fi->kind;
	qemu_plugin_set_pc(BAD_PC);	/* does not return */
	abort();
}

uint64_t poe_fault_esr(const struct poe_fault *f)
{
	uint64_t ec, esr;

	if (f->exec)
		ec = f->el ? EC_IABT_CUR : EC_IABT_LOW;
	else
		ec = f->el ? EC_DABT_CUR : EC_DABT_LOW;
	esr = ec << 26 | ESR_IL | ESR_ISS2_OVERLAY;
	if (!f->exec) {
		esr |= f->wnr ? ESR_WNR : 0;
		esr |= f->cm ? ESR_CM : 0;
	}
	return esr | 0xc | (f->level & 3);	/* permission fault, level */
}

static void update_pending(struct poe_vcpu *v)
{
	poe_score_of(v->index)->pending =
		v->f.esr_pending || v->f.far_pending || v->f.elr_pending;
}

void poe_fault_discon(struct poe_vcpu *v, enum qemu_plugin_discon_type type)
{
	if (!v->redirect)
		return;
	v->redirect = false;
	if (getenv("POE_DEBUG"))
		fprintf(stderr, "poe-debug: discon vcpu=%u type=%d\n",
			v->index, type);
	v->f.elr_pending = true;
	if (type == QEMU_PLUGIN_DISCON_EXCEPTION) {
		v->f.esr_pending = true;
		v->f.far_pending = true;
		v->st.faults++;
		poe_log_fault(v);
	}
	update_pending(v);
}

struct mrs_insn {
	uint64_t vaddr;		/* at translation: see poe_insn_pc() */
	uint8_t which, rt;
};

static void mrs_cb(unsigned vcpu, void *ud)
{
	const struct mrs_insn *m = ud;
	struct poe_vcpu *v = poe_vcpu(vcpu);
	uint64_t val;

	switch (m->which) {
	case R_ESR_EL1:
		if (!v->f.esr_pending)
			return;
		v->f.esr_pending = false;
		val = poe_fault_esr(&v->f);
		break;
	case R_FAR_EL1:
		if (!v->f.far_pending)
			return;
		v->f.far_pending = false;
		val = v->f.va;
		break;
	default:	/* ELR_EL1 */
		if (!v->f.elr_pending)
			return;
		v->f.elr_pending = false;
		val = v->f.pc;
		break;
	}
	update_pending(v);
	poe_gpr_write(m->rt, val);
	qemu_plugin_set_pc(poe_insn_pc(vcpu, m->vaddr) + 4);
}

void poe_fault_instrument_mrs(struct qemu_plugin_insn *insn,
			      enum poe_reg_id which, unsigned rt)
{
	struct mrs_insn *m = g_new0(struct mrs_insn, 1);

	m->vaddr = qemu_plugin_insn_vaddr(insn);
	m->which = which;
	m->rt = rt;
	qemu_plugin_register_vcpu_insn_exec_cond_cb(
		insn, mrs_cb, QEMU_PLUGIN_CB_RW_REGS_PC, QEMU_PLUGIN_COND_NE,
		poe_score_u64(offsetof(struct poe_score, pending)), 0, m);
}
