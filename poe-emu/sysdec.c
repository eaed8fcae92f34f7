/*
 * sysdec.c - A64 system instruction classifier (see sysdec.h)
 *
 * Encodings from the Arm ARM (DDI 0487), "System instructions" and
 * "Barriers": HINT/barriers are 1101 0101 0000 0011 0011 CRm op2 11111,
 * SYS (TLBI) is 1101 0101 0000 1 op1 CRn CRm op2 Rt, SYSP (TLBIP) the same
 * with bits [23:21] = 010, MRS/MSR are 1101 0101 00 L 1 o0 op1 CRn CRm op2 Rt,
 * MSR (immediate) is 1101 0101 0000 0 op1 0100 CRm op2 11111 (UAO: op1 0,
 * op2 3, the value in CRm).
 */
#include <string.h>

#include "sysdec.h"

static inline unsigned bits(uint32_t x, unsigned hi, unsigned lo)
{
	return (x >> lo) & ((1u << (hi - lo + 1)) - 1);
}

/*
 * The TLBI encodings (CRn = 8, or 9 for nXS) group by CRm: 0 (IPAS2*IS),
 * 1 (*OS), 2 (R*IS), 3 (*IS) and 5 (R*OS) broadcast; 6 (R*) and 7 (the
 * plain forms) are local; CRm 4 mixes the stage-2 IPAS2E1/RIPAS2E1 (local,
 * op2 1/2/5/6) with their OS forms (op2 0/3/4/7), and RPAOS/RPALOS at EL3
 * (op2 3/7). TLBI by EL1 code only uses op1 = 0; the EL2/EL3 rows follow
 * the same pattern.
 */
bool sys_tlbi_broadcast(unsigned op1, unsigned crm, unsigned op2)
{
	(void)op1;
	switch (crm) {
	case 0: case 1: case 2: case 3: case 5:
		return true;
	case 4:
		return (op2 & 3) == 0 || (op2 & 3) == 3;
	default:
		return false;
	}
}

bool sys_tlbi_range_all(const struct sys_tlbi_range *r)
{
	return r->start == 0 && r->end == ~0ull;
}

void sys_tlbi_range(uint32_t insn, uint64_t xt, bool ds,
		    struct sys_tlbi_range *r)
{
	unsigned op1 = bits(insn, 18, 16), crm = bits(insn, 11, 8);
	unsigned op2 = bits(insn, 7, 5), tg, shift, base, scale, num;
	bool sysp = bits(insn, 22, 22);

	r->start = 0;
	r->end = ~0ull;
	r->mask = ~0ull;
	if (sysp || op1 != 0 || !(op2 & 1))
		return;			/* TLBIP, EL2/EL3, VMALL, ASID */
	if (crm == 1 || crm == 3 || crm == 7) {	/* by VA */
		r->mask = (1ull << 56) - 1;
		r->start = (xt & ((1ull << 44) - 1)) << 12;
		r->end = r->start + 1;
		return;
	}
	if (crm != 2 && crm != 5 && crm != 6)
		return;
	/* by range: BaseADDR [36:0], NUM [43:39], SCALE [45:44], TG [47:46] */
	tg = (xt >> 46) & 3;
	if (!tg)
		return;			/* reserved: invalidate everything */
	shift = tg == 1 ? 12 : tg == 2 ? 14 : 16;
	/* with 52-bit VAs (TCR_EL1.DS) the base is VA[52:16] whatever TG */
	base = ds ? 16 : shift;
	scale = (xt >> 44) & 3;
	num = (xt >> 39) & 31;
	r->mask = (1ull << (37 + base)) - 1;
	r->start = (xt & ((1ull << 37) - 1)) << base;
	r->end = r->start + ((uint64_t)(num + 1) << (5 * scale + 1) << shift);
}

/*
 * At EL1 (op1 0), op2 1 and 5 are VAE1/VALE1 in the by-VA rows (CRm 1, 3,
 * 7) and RVAE1/RVALE1 in the range rows (CRm 2, 5, 6), op2 2 ASIDE1 in the
 * by-VA rows: the forms that name an ASID.
 */
bool sys_tlbi_asid(uint32_t insn, uint64_t xt, uint16_t *asid)
{
	unsigned op1 = bits(insn, 18, 16), crm = bits(insn, 11, 8);
	unsigned op2 = bits(insn, 7, 5);
	bool va_row = crm == 1 || crm == 3 || crm == 7;
	bool range_row = crm == 2 || crm == 5 || crm == 6;

	if (bits(insn, 22, 22) || op1 != 0)
		return false;		/* TLBIP, EL2/EL3 */
	if (!((op2 == 1 || op2 == 5) && (va_row || range_row)) &&
	    !(op2 == 2 && va_row))
		return false;
	*asid = xt >> 48;
	return true;
}

static bool dec_barrier(uint32_t insn, struct sys_insn *s)
{
	unsigned crm = bits(insn, 11, 8), op2 = bits(insn, 7, 5);

	switch (op2) {
	case 1:				/* DSB nXS: CRm = imm2:10 */
		if ((crm & 3) != 2)
			return false;
		s->kind = SYS_DSB;
		return true;
	case 4:				/* DSB; CRm 0/4 are SSBB/PSSBB */
		if (crm == 0 || crm == 4)
			return false;
		s->kind = SYS_DSB;
		return true;
	case 5:
		s->kind = SYS_DMB;
		return true;
	case 6:
		s->kind = SYS_ISB;
		return true;
	default:			/* CLREX, SB, TCOMMIT... */
		return false;
	}
}

static bool dec_tlbi(uint32_t insn, struct sys_insn *s)
{
	unsigned crn = bits(insn, 15, 12);

	if (crn != 8 && crn != 9)
		return false;
	s->kind = SYS_TLBI;
	s->rt = bits(insn, 4, 0);
	s->bcast = sys_tlbi_broadcast(bits(insn, 18, 16), bits(insn, 11, 8),
				      bits(insn, 7, 5));
	return true;
}

bool sys_decode(uint32_t insn, struct sys_insn *s)
{
	memset(s, 0, sizeof(*s));
	if (insn == SYS_MARKER_INSN) {
		s->kind = SYS_MARKER;
	} else if ((insn & 0xfffff01f) == 0xd503301f) {
		if (!dec_barrier(insn, s))
			goto none;
	} else if (insn == 0xd4000002) {
		s->kind = SYS_HVC;
	} else if (insn == 0xd4000003) {
		s->kind = SYS_SMC;
	} else if ((insn & 0xfffff0ff) == 0xd500407f) {
		s->kind = SYS_MSR_UAO;
		s->imm = bits(insn, 11, 8);
	} else if (insn == 0xd69f03e0 || insn == 0xd69f0bff ||
		   insn == 0xd69f0fff) {
		s->kind = SYS_ERET;
	} else if ((insn & 0xfff80000) == 0xd5080000 ||	/* SYS */
		   (insn & 0xfff80000) == 0xd5480000) {	/* SYSP */
		if (!dec_tlbi(insn, s))
			goto none;
	} else if ((insn & 0xffd00000) == 0xd5100000) {	/* op0 = 2, 3 */
		s->kind = bits(insn, 21, 21) ? SYS_MRS : SYS_MSR;
		s->rt = bits(insn, 4, 0);
		s->reg = bits(insn, 20, 5);
	} else {
		goto none;
	}
	return true;
none:
	memset(s, 0, sizeof(*s));
	return false;
}

const char *sys_kind_name(unsigned kind)
{
	static const char *const names[] = {
		"none", "isb", "dsb", "dmb", "tlbi", "eret", "mrs", "msr",
		"marker", "hvc", "smc", "msr uao",
	};

	return kind < sizeof(names) / sizeof(names[0]) ? names[kind] : "?";
}
