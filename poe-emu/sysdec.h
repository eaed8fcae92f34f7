/*
 * sysdec.h - A64 system instruction classifier for poe-emu
 *
 * Recognises, from one instruction word, the system instructions the
 * plugin emulates or counts: barriers (ISB, DSB, DMB), TLB maintenance
 * (TLBI, its nXS forms and TLBIP, split into broadcast and local), the
 * exception returns, MRS/MSR of system registers, the bench marker and
 * the PSCI calls (HVC/SMC #0) and MSR UAO, #imm.
 * No QEMU dependency: unit-tested on the host (tests/test-sys.c).
 */
#ifndef POE_SYSDEC_H
#define POE_SYSDEC_H

#include <stdbool.h>
#include <stdint.h>

enum sys_kind {
	SYS_NONE = 0,
	SYS_ISB,
	SYS_DSB,	/* every DSB option, and DSB nXS (not SSBB/PSSBB) */
	SYS_DMB,
	SYS_TLBI,	/* TLBI, TLBI nXS, TLBIP: see bcast */
	SYS_ERET,	/* ERET, ERETAA, ERETAB */
	SYS_MRS,	/* MRS Xt, <sysreg>: see reg */
	SYS_MSR,	/* MSR <sysreg>, Xt */
	SYS_MARKER,	/* HINT #0x75: the bench row marker */
	SYS_HVC,	/* HVC #0 (PSCI conduit on QEMU virt) */
	SYS_SMC,	/* SMC #0 */
	SYS_MSR_UAO,	/* MSR UAO, #imm: see imm (MSR UAO, Xt is SYS_MSR) */
};

/* op0:op1:CRn:CRm:op2, as in the MRS/MSR encoding bits [20:5] */
#define SYSREG(op0, op1, crn, crm, op2) \
	(((op0) << 14) | ((op1) << 11) | ((crn) << 7) | ((crm) << 3) | (op2))

#define SR_POR_EL0		SYSREG(3, 3, 10, 2, 4)
#define SR_POR_EL1		SYSREG(3, 0, 10, 2, 4)
#define SR_PIR_EL1		SYSREG(3, 0, 10, 2, 3)
#define SR_PIRE0_EL1		SYSREG(3, 0, 10, 2, 2)
#define SR_ID_AA64MMFR2_EL1	SYSREG(3, 0, 0, 7, 2)
#define SR_ID_AA64MMFR3_EL1	SYSREG(3, 0, 0, 7, 3)
#define SR_TCR2_EL1		SYSREG(3, 0, 2, 0, 3)
#define SR_TCR_EL1		SYSREG(3, 0, 2, 0, 2)
#define SR_TTBR0_EL1		SYSREG(3, 0, 2, 0, 0)
#define SR_TTBR1_EL1		SYSREG(3, 0, 2, 0, 1)
#define SR_SCTLR_EL1		SYSREG(3, 0, 1, 0, 0)
#define SR_ESR_EL1		SYSREG(3, 0, 5, 2, 0)
#define SR_FAR_EL1		SYSREG(3, 0, 6, 0, 0)
#define SR_ELR_EL1		SYSREG(3, 0, 4, 0, 1)
#define SR_VBAR_EL1		SYSREG(3, 0, 12, 0, 0)
#define SR_UAO			SYSREG(3, 0, 4, 2, 4)

#define SYS_MARKER_INSN		0xd5032ebfu	/* HINT #0x75 */

struct sys_insn {
	uint8_t kind;	/* enum sys_kind */
	uint8_t rt;	/* MRS/MSR/TLBI: Xt (31 = XZR) */
	bool bcast;	/* TLBI: to the inner/outer shareable domain */
	uint16_t reg;	/* MRS/MSR: SYSREG() key */
	uint8_t imm;	/* MSR UAO, #imm: the immediate (CRm) */
};

/* Classify insn; returns false (kind SYS_NONE) if none of the above. */
bool sys_decode(uint32_t insn, struct sys_insn *s);

/* Is TLBI <op1, CRm, op2> (CRn 8 or 9) a broadcast invalidation? */
bool sys_tlbi_broadcast(unsigned op1, unsigned crm, unsigned op2);

/*
 * The VAs a TLBI instruction with register value xt invalidates, as a
 * range [start, end) compared under mask (the bits of a VA that the
 * operand gives): by VA, VA[55:12] (mask: bits 55:0, so any top-byte tag
 * is ignored); by range, VA[48:12], [50:14] or [52:16] by granule, and
 * always [52:16] when ds (TCR_EL1.DS, 52-bit VAs with 4K or 16K pages)
 * (mask: the bits up to the top one given, both halves); everything else
 * (VMALL, by ASID, EL2/EL3, TLBIP): all of it (start 0, end ~0, mask ~0).
 */
struct sys_tlbi_range {
	uint64_t start, end, mask;
};
void sys_tlbi_range(uint32_t insn, uint64_t xt, bool ds,
		    struct sys_tlbi_range *r);
bool sys_tlbi_range_all(const struct sys_tlbi_range *r);
/*
 * Is the TLBI limited to one ASID, given in xt[63:48]? True for by-ASID
 * (ASIDE1*), by-VA and by-range with an ASID (VAE1*, VALE1*, RVAE1*,
 * RVALE1*); false for VMALLE1*, the "all ASIDs" forms (VAAE1*, ...) and
 * everything else, which apply to every ASID.
 */
bool sys_tlbi_asid(uint32_t insn, uint64_t xt, uint16_t *asid);

const char *sys_kind_name(unsigned kind);

#endif
