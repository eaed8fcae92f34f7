/*
 * regs.c - register access and emulation of the POE system registers
 *
 * QEMU 11.1 has no POR_EL0/POR_EL1 and silently drops TCR2_EL1.POE/E0POE,
 * so the plugin emulates them: MRS/MSR of POR_ELx are executed here against
 * per-vCPU shadow values and skipped (qemu_plugin_set_pc), MRS
 * ID_AA64MMFR3_EL1 gets S1POE = 1, MSR TCR2_EL1 is shadowed and MRS
 * TCR2_EL1 returns the shadowed enable bits. Writes that change the
 * translation (TTBRx, TCR, SCTLR, TCR2, PIRx) and TLBIs flush the soft TLB.
 * EL0 may use POR_EL0 only when CPACR_EL1.E0POE is set; otherwise, and for
 * every EL0 access to an EL1 register, QEMU's own UNDEF is left to happen.
 */
#include <string.h>

#include "poe.h"

struct qemu_plugin_register *poe_reg[R_NUM];
struct qemu_plugin_register *poe_xreg[31];

static const char *const reg_names[R_NUM] = {
	[R_TCR_EL1] = "TCR_EL1", [R_TTBR0_EL1] = "TTBR0_EL1",
	[R_TTBR1_EL1] = "TTBR1_EL1", [R_SCTLR_EL1] = "SCTLR_EL1",
	[R_TCR2_EL1] = "TCR2_EL1", [R_PIR_EL1] = "PIR_EL1",
	[R_PIRE0_EL1] = "PIRE0_EL1", [R_CPACR_EL1] = "CPACR_EL1",
	[R_ID_AA64MMFR3_EL1] = "ID_AA64MMFR3_EL1", [R_ESR_EL1] = "ESR_EL1",
	[R_FAR_EL1] = "FAR_EL1", [R_VBAR_EL1] = "VBAR_EL1",
	[R_DCZID_EL0] = "DCZID_EL0", [R_CPSR] = "cpsr", [R_SP] = "sp",
	[R_ELR_EL1] = "ELR_EL1", [R_SPSR_EL1] = "SPSR_EL1",
};

bool poe_regs_init(bool verbose)
{
	GArray *regs = qemu_plugin_get_registers();
	bool ok = true;
	unsigned i, j;
	char name[8];

	for (i = 0; i < regs->len; i++) {
		qemu_plugin_reg_descriptor *r =
			&g_array_index(regs, qemu_plugin_reg_descriptor, i);

		for (j = 0; j < R_NUM; j++)
			if (!strcmp(r->name, reg_names[j]))
				poe_reg[j] = r->handle;
		for (j = 0; j < 31; j++) {
			snprintf(name, sizeof(name), "x%u", j);
			if (!strcmp(r->name, name))
				poe_xreg[j] = r->handle;
		}
	}
	g_array_free(regs, true);
	for (j = 0; j < R_NUM; j++) {
		if (!poe_reg[j] && j == R_DCZID_EL0) {
			continue;	/* optional: ZVA size defaults to 64 */
		} else if (!poe_reg[j]) {
			fprintf(stderr, "poe-emu: register %s not found\n",
				reg_names[j]);
			ok = false;
		} else if (verbose) {
			fprintf(stderr, "poe-emu: register %s found\n",
				reg_names[j]);
		}
	}
	for (j = 0; j < 31; j++)
		if (!poe_xreg[j])
			ok = false;
	return ok;
}

uint64_t poe_read(struct poe_vcpu *v, struct qemu_plugin_register *h)
{
	uint64_t x = 0;

	if (!h)
		return 0;
	g_byte_array_set_size(v->buf, 0);
	if (qemu_plugin_read_register(h, v->buf))
		memcpy(&x, v->buf->data, MIN(v->buf->len, sizeof(x)));
	return x;
}

bool poe_write(struct poe_vcpu *v, struct qemu_plugin_register *h,
	       uint64_t val)
{
	g_byte_array_set_size(v->buf, sizeof(val));
	memcpy(v->buf->data, &val, sizeof(val));
	return h && qemu_plugin_write_register(h, v->buf);
}

/* Xn, or for n == 31 the SP (sp true) or XZR. */
uint64_t poe_read_gpr(struct poe_vcpu *v, unsigned n, bool sp)
{
	if (n == 31)
		return sp ? poe_read(v, poe_reg[R_SP]) : 0;
	return poe_read(v, poe_xreg[n]);
}

unsigned poe_current_el(struct poe_vcpu *v)
{
	return (poe_read(v, poe_reg[R_CPSR]) >> 2) & 3;
}

/* Which of R (bit 0) and W (bit 1) does POR value por deny some key? */
static unsigned por_denies(uint64_t por)
{
	unsigned k, d = 0;

	for (k = 0; k < 8; k++) {
		unsigned p = (por >> (4 * k)) & 0xf;

		if (p & 8)
			p = 0;			/* reserved: no access */
		if (!(p & 1))
			d |= 1;
		if (!(p & 4))
			d |= 2;
	}
	return d;
}

void poe_update_gates(struct poe_vcpu *v)
{
	struct poe_score *s = poe_score_of(v->index);
	unsigned el1 = (v->tcr2 & TCR2_POE) ? por_denies(v->por_el1) : 0;
	unsigned el0 = (v->tcr2 & TCR2_E0POE) ? por_denies(v->por_el0) : 0;
	unsigned cur = v->el ? el1 : el0;

	s->rd_el1 = el1 & 1;
	s->wr_el1 = !!(el1 & 2);
	s->rw_el1 = !!el1;
	s->rd_el0 = el0 & 1;
	s->wr_el0 = !!(el0 & 2);
	s->rw_el0 = !!el0;
	s->rd_cur = cur & 1;
	s->wr_cur = !!(cur & 2);
	s->rw_cur = !!cur;
	s->rw_any = !!(el1 | el0);
	v->live_el1 = el1;
	v->live_el0 = el0;
	count_el1_window(v->index, (v->tcr2 & TCR2_POE) && !(el1 & 2));
}

void poe_set_el(struct poe_vcpu *v, unsigned el)
{
	if (v->el != el) {
		v->el = el;
		poe_update_gates(v);
	}
}

enum sr_op {
	OP_MRS_POR_EL0, OP_MSR_POR_EL0, OP_MRS_POR_EL1, OP_MSR_POR_EL1,
	OP_MRS_MMFR3, OP_MRS_TCR2, OP_MSR_TCR2, OP_MSR_PIR, OP_MSR_PIRE0,
	OP_MSR_MMU, OP_TLBI, OP_ERET,
};

struct sr_insn {
	uint64_t pc;
	uint8_t op, rt;
	bool high;
};

static void write_xt(struct poe_vcpu *v, unsigned rt, uint64_t val)
{
	if (rt != 31)
		poe_write(v, poe_xreg[rt], val);
}

static void sr_cb(unsigned vcpu, void *ud)
{
	const struct sr_insn *s = ud;
	struct poe_vcpu *v = &poe_vcpus[vcpu];
	unsigned el;
	uint64_t val;

	if (s->op == OP_ERET) {
		/* the EL we return to, for the TTBR0-half gates */
		poe_set_el(v, (poe_read(v, poe_reg[R_SPSR_EL1]) >> 2) & 3);
		return;
	}
	if (s->op == OP_TLBI) {
		v->st.tlbi++;
		poe_tlb_flush(v);
		return;
	}
	if (s->op == OP_MSR_MMU) {
		poe_tlb_flush(v);
		v->mmu_valid = false;
		return;
	}
	el = s->high ? 1 : poe_current_el(v);
	if (el == 0) {
		/* only POR_EL0, and only if CPACR_EL1.E0POE lets EL0 in */
		if (s->op != OP_MRS_POR_EL0 && s->op != OP_MSR_POR_EL0)
			return;
		if (!(poe_read(v, poe_reg[R_CPACR_EL1]) & CPACR_E0POE))
			return;
	}
	switch (s->op) {
	case OP_MRS_POR_EL0:
		write_xt(v, s->rt, v->por_el0);
		break;
	case OP_MSR_POR_EL0:
		v->por_el0 = poe_read_gpr(v, s->rt, false);
		v->st.por_el0_writes++;
		poe_update_gates(v);
		break;
	case OP_MRS_POR_EL1:
		write_xt(v, s->rt, v->por_el1);
		break;
	case OP_MSR_POR_EL1:
		v->por_el1 = poe_read_gpr(v, s->rt, false);
		v->st.por_el1_writes++;
		count_por_el1_write(vcpu);
		poe_update_gates(v);
		break;
	case OP_MRS_MMFR3:
		val = poe_read(v, poe_reg[R_ID_AA64MMFR3_EL1]);
		val &= ~(0xfull << MMFR3_S1POE_SHIFT);
		val |= 1ull << MMFR3_S1POE_SHIFT;
		write_xt(v, s->rt, val);
		break;
	case OP_MRS_TCR2:
		val = poe_read(v, poe_reg[R_TCR2_EL1]);
		val |= v->tcr2 & (TCR2_POE | TCR2_E0POE);
		write_xt(v, s->rt, val);
		break;
	case OP_MSR_TCR2:
		v->tcr2 = poe_read_gpr(v, s->rt, false);
		if (poe_force_el1)
			v->tcr2 |= TCR2_POE;
		poe_update_gates(v);
		poe_tlb_flush(v);
		return;		/* QEMU performs the write (minus POE bits) */
	case OP_MSR_PIR:
		v->pir_el1 = poe_read_gpr(v, s->rt, false);
		return;
	case OP_MSR_PIRE0:
		v->pire0_el1 = poe_read_gpr(v, s->rt, false);
		return;
	}
	qemu_plugin_set_pc(s->pc + 4);	/* skip the instruction; no return */
}

static void add_sr_cb(struct qemu_plugin_insn *insn, uint64_t pc,
		      enum sr_op op, unsigned rt)
{
	struct sr_insn *s = g_new0(struct sr_insn, 1);

	s->pc = pc;
	s->op = op;
	s->rt = rt;
	s->high = pc >> 63;
	qemu_plugin_register_vcpu_insn_exec_cb(insn, sr_cb,
					       QEMU_PLUGIN_CB_RW_REGS_PC, s);
}

bool poe_sysreg_instrument(struct qemu_plugin_insn *insn,
			   const struct sys_insn *si, uint64_t pc, bool stats)
{
	bool msr = si->kind == SYS_MSR;
	unsigned rt = si->rt;

	switch (si->kind) {
	case SYS_ISB:
		if (stats) {
			qemu_plugin_u64 isb = {
				poe_score, offsetof(struct poe_score, isb)
			};
			qemu_plugin_register_vcpu_insn_exec_inline_per_vcpu(
				insn, QEMU_PLUGIN_INLINE_ADD_U64, isb, 1);
		}
		return true;
	case SYS_ERET:
		add_sr_cb(insn, pc, OP_ERET, 0);
		return true;
	case SYS_TLBI:
		add_sr_cb(insn, pc, OP_TLBI, rt);
		return true;
	case SYS_MRS:
	case SYS_MSR:
		break;
	default:
		return false;
	}
	switch (si->reg) {
	case SR_POR_EL0:
		add_sr_cb(insn, pc, msr ? OP_MSR_POR_EL0 : OP_MRS_POR_EL0, rt);
		break;
	case SR_POR_EL1:
		add_sr_cb(insn, pc, msr ? OP_MSR_POR_EL1 : OP_MRS_POR_EL1, rt);
		break;
	case SR_ID_AA64MMFR3_EL1:
		if (!msr)
			add_sr_cb(insn, pc, OP_MRS_MMFR3, rt);
		break;
	case SR_TCR2_EL1:
		add_sr_cb(insn, pc, msr ? OP_MSR_TCR2 : OP_MRS_TCR2, rt);
		break;
	case SR_PIR_EL1:
		if (msr)
			add_sr_cb(insn, pc, OP_MSR_PIR, rt);
		break;
	case SR_PIRE0_EL1:
		if (msr)
			add_sr_cb(insn, pc, OP_MSR_PIRE0, rt);
		break;
	case SR_TCR_EL1:
	case SR_TTBR0_EL1:
	case SR_TTBR1_EL1:
	case SR_SCTLR_EL1:
		if (msr)
			add_sr_cb(insn, pc, OP_MSR_MMU, rt);
		break;
	case SR_ESR_EL1:
		if (!msr)
			poe_fault_instrument_mrs(insn, R_ESR_EL1, rt);
		break;
	case SR_FAR_EL1:
		if (!msr)
			poe_fault_instrument_mrs(insn, R_FAR_EL1, rt);
		break;
	case SR_ELR_EL1:
		if (!msr)
			poe_fault_instrument_mrs(insn, R_ELR_EL1, rt);
		break;
	default:
		return false;
	}
	return true;
}
