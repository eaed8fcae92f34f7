/*
 * decode.c - table-driven A64 load/store decoder
 *
 * Each row of the table below names one encoding class of the "Loads and
 * Stores" group (and the two system instructions that write memory, DC ZVA
 * and MOPS) by a mask/value pair and a function that extracts the fields.
 * The first matching row wins, so more specific rows come first. Field
 * layouts follow the Arm ARM (DDI 0487) encoding index.
 */
#include <string.h>

#include "decode.h"

unsigned ls_zva_bytes = 64;
unsigned ls_gm_bytes = 256;

static inline unsigned bits(uint32_t x, unsigned hi, unsigned lo)
{
	return (x >> lo) & ((1u << (hi - lo + 1)) - 1);
}

static inline int64_t sext(uint64_t x, unsigned width)
{
	return (int64_t)(x << (64 - width)) >> (64 - width);
}

static unsigned ilog2(unsigned x)
{
	unsigned r = 0;

	while (x > 1) {
		x >>= 1;
		r++;
	}
	return r;
}

/*
 * Size and direction of the single-register forms (LDR/STR/LDUR/LDTR/
 * register offset), from size:V:opc. Returns false if unallocated.
 */
static bool ldst_reg_size_kind(uint32_t insn, struct ls_insn *d)
{
	unsigned size = bits(insn, 31, 30), v = bits(insn, 26, 26);
	unsigned opc = bits(insn, 23, 22);

	if (v) {
		d->flags |= LS_F_SIMD;
		if (opc & 2) {
			if (size)
				return false;
			d->size = 16;		/* Q */
		} else {
			d->size = 1u << size;	/* B H S D */
		}
		d->kind = (opc & 1) ? LS_LOAD : LS_STORE;
		return true;
	}
	d->size = 1u << size;
	switch (opc) {
	case 0:
		d->kind = LS_STORE;
		return true;
	case 1:
		d->kind = LS_LOAD;
		return true;
	case 2:	/* LDRS* to X, or PRFM for size 3 */
		d->kind = size == 3 ? LS_PRFM : LS_LOAD;
		return true;
	default: /* LDRS* to W */
		if (size >= 2)
			return false;
		d->kind = LS_LOAD;
		return true;
	}
}

/* LDR/STR (immediate, unsigned offset): size 111 V 01 opc imm12 Rn Rt */
static bool dec_uimm(uint32_t insn, struct ls_insn *d)
{
	if (!ldst_reg_size_kind(insn, d))
		return false;
	d->imm = (int64_t)bits(insn, 21, 10) << ilog2(d->size);
	d->name = "ldst-uimm";
	return true;
}

/* LDUR/STUR, post-index, LDTR/STTR, pre-index: imm9 and op2 in [11:10] */
static bool dec_imm9(uint32_t insn, struct ls_insn *d)
{
	static const char *const names[] = {
		"ldst-unscaled", "ldst-post", "ldst-unpriv", "ldst-pre",
	};
	unsigned op2 = bits(insn, 11, 10);

	if (!ldst_reg_size_kind(insn, d))
		return false;
	d->imm = sext(bits(insn, 20, 12), 9);
	d->name = names[op2];
	switch (op2) {
	case 1:
		d->wb = WB_POST;
		break;
	case 2:
		if (d->flags & LS_F_SIMD)
			return false;
		d->flags |= LS_F_UNPRIV;
		break;
	case 3:
		d->wb = WB_PRE;
		break;
	}
	if (d->wb != WB_NONE && d->kind == LS_PRFM)
		return false;
	return true;
}

/* LDR/STR (register offset): ... 1 Rm option S 10 Rn Rt */
static bool dec_regoff(uint32_t insn, struct ls_insn *d)
{
	unsigned option = bits(insn, 15, 13);

	if (!(option & 2) || !ldst_reg_size_kind(insn, d))
		return false;
	d->flags |= LS_F_REGOFF;
	d->rm = bits(insn, 20, 16);
	d->ext = option;
	d->shift = bits(insn, 12, 12) ? ilog2(d->size) : 0;
	d->name = "ldst-regoff";
	return true;
}

/* LSE atomics: size 111 V 00 A R 1 Rs o3 opc 00 Rn Rt */
static bool dec_atomic(uint32_t insn, struct ls_insn *d)
{
	unsigned o3 = bits(insn, 15, 15), opc = bits(insn, 14, 12);

	if (bits(insn, 26, 26))
		return false;		/* FP atomics: not decoded */
	d->size = 1u << bits(insn, 31, 30);
	if (bits(insn, 23, 22))
		d->flags |= LS_F_ACQREL;
	if (!o3) {
		d->kind = LS_RMW;	/* LD<op>, and ST<op> with Rt = XZR */
		d->name = "lse-ldop";
	} else if (opc == 0) {
		d->kind = LS_RMW;
		d->name = "lse-swp";
	} else if (opc == 4) {
		d->kind = LS_LOAD;	/* LDAPR */
		d->name = "ldapr";
	} else if (bits(insn, 31, 22) == 0x3e0 && opc != 4 && opc != 6 &&
		   opc != 7) {
		/* FEAT_LS64: LD64B (101), ST64B (001), ST64BV(0) (011/010) */
		d->kind = opc == 5 ? LS_LOAD : LS_STORE;
		d->size = 64;
		d->flags = 0;
		d->name = "ls64";
	} else {
		return false;
	}
	return true;
}

/* FEAT_LSE128: 00011001 A R 1 Rt2 o3 opc 00 Rn Rt (LDCLRP, LDSETP, SWPP) */
static bool dec_lse128(uint32_t insn, struct ls_insn *d)
{
	unsigned op = bits(insn, 15, 12);

	if (op != 1 && op != 3 && op != 8)
		return false;
	d->kind = LS_RMW;
	d->size = 16;
	d->flags |= LS_F_PAIR;
	if (bits(insn, 23, 22))
		d->flags |= LS_F_ACQREL;
	d->name = "lse128";
	return true;
}

/*
 * FEAT_LRCPC3, general registers: size 011001 opc 0 Rt2 opc2 10 Rn Rt.
 * LDIAPP (opc 01) / STILP (00) pairs, without writeback (opc2 0001) or
 * with it (0000: LDIAPP post-index, STILP pre-index, by the pair's size);
 * STLR pre-index (10) and LDAPR post-index (11) by one register's size.
 */
static bool dec_rcpc3(uint32_t insn, struct ls_insn *d)
{
	unsigned size = bits(insn, 31, 30), opc = bits(insn, 23, 22);
	unsigned opc2 = bits(insn, 15, 12), esize = 1u << size;

	if (size < 2)
		return false;
	d->flags |= LS_F_ACQREL;
	d->name = "rcpc3";
	if (opc >= 2) {
		if (opc2 || bits(insn, 20, 16))
			return false;
		d->kind = opc == 3 ? LS_LOAD : LS_STORE;
		d->size = esize;
		d->wb = opc == 3 ? WB_POST : WB_PRE;
		d->imm = opc == 3 ? 0 : -(int64_t)esize;
		return true;
	}
	if (opc2 > 1)
		return false;
	d->kind = opc ? LS_LOAD : LS_STORE;
	d->size = 2 * esize;
	d->flags |= LS_F_PAIR;
	if (opc2 == 0) {
		d->wb = opc ? WB_POST : WB_PRE;
		d->imm = opc ? 0 : -(int64_t)d->size;
	}
	return true;
}

/* FEAT_LRCPC3, SIMD&FP: LDAPUR/STLUR size 011101 opc 0 imm9 10 Rn Rt */
static bool dec_rcpc3_simd(uint32_t insn, struct ls_insn *d)
{
	unsigned size = bits(insn, 31, 30), opc = bits(insn, 23, 22);

	if (opc >= 2 && size)
		return false;
	d->kind = opc & 1 ? LS_LOAD : LS_STORE;
	d->size = opc >= 2 ? 16 : 1u << size;
	d->imm = sext(bits(insn, 20, 12), 9);
	d->flags |= LS_F_SIMD | LS_F_ACQREL;
	d->name = "rcpc3-simd";
	return true;
}

/* FEAT_LRCPC3 LDAP1/STL1 {Vt.D}[i], [Xn]: 0 Q 001101 0 L 000001 100001 */
static bool dec_rcpc3_lane(uint32_t insn, struct ls_insn *d)
{
	d->kind = bits(insn, 22, 22) ? LS_LOAD : LS_STORE;
	d->size = 8;
	d->flags |= LS_F_SIMD | LS_F_ACQREL;
	d->name = "rcpc3-lane";
	return true;
}

/*
 * MTE: 11011001 opc 1 imm9 op2 Rn Rt. op2 00: STZGM (opc 00), LDG (01,
 * imm9 offset), STGM (10), LDGM (11); otherwise STG, STZG, ST2G, STZ2G by
 * opc, post-index (01), signed offset (10) or pre-index (11). Tag stores
 * need write permission (STZG* also zero the data), tag loads read.
 */
static bool dec_mte(uint32_t insn, struct ls_insn *d)
{
	static const char *const names[] = { "stg", "stzg", "st2g", "stz2g" };
	unsigned opc = bits(insn, 23, 22), op2 = bits(insn, 11, 10);
	int64_t imm = sext(bits(insn, 20, 12), 9) * 16;

	if (op2 == 0) {
		if (opc == 1) {			/* LDG */
			d->kind = LS_LOAD;
			d->size = 16;
			d->imm = imm;
			d->flags |= LS_F_ALIGN;
			d->name = "ldg";
			return true;
		}
		if (bits(insn, 20, 12))
			return false;
		d->kind = opc == 3 ? LS_LOAD : LS_ZVA;
		d->size = ls_gm_bytes;
		d->flags |= opc == 3 ? LS_F_ALIGN : 0;
		d->name = opc == 0 ? "stzgm" : opc == 2 ? "stgm" : "ldgm";
		return true;
	}
	d->kind = LS_STORE;
	d->size = opc >= 2 ? 32 : 16;
	d->imm = imm;
	d->wb = op2 == 1 ? WB_POST : op2 == 3 ? WB_PRE : WB_NONE;
	d->name = names[opc];
	return true;
}

/* DC IVAC, Xt: invalidation may discard data, so it needs W */
static bool dec_dc_ivac(uint32_t insn, struct ls_insn *d)
{
	d->kind = LS_STORE;
	d->size = 1;
	d->rn = bits(insn, 4, 0);
	d->flags |= LS_F_CM | (d->rn == 31 ? LS_F_XZR : 0);
	d->name = "dc-ivac";
	return true;
}

/* LDRAA/LDRAB: 11 111 0 00 M S 1 imm9 W 1 Rn Rt (PAC stripped at run time) */
static bool dec_pac(uint32_t insn, struct ls_insn *d)
{
	d->kind = LS_LOAD;
	d->flags |= LS_F_PAC;
	d->size = 8;
	d->imm = sext((bits(insn, 22, 22) << 9) | bits(insn, 20, 12), 10) * 8;
	d->wb = bits(insn, 11, 11) ? WB_PRE : WB_NONE;
	d->name = "ldra";
	return true;
}

/* Pairs: opc 101 V 0 type L imm7 Rt2 Rn Rt */
static bool dec_pair(uint32_t insn, struct ls_insn *d)
{
	unsigned opc = bits(insn, 31, 30), v = bits(insn, 26, 26);
	unsigned type = bits(insn, 24, 23), l = bits(insn, 22, 22);
	unsigned scale, imm_scale;

	if (v) {
		if (opc == 3)
			return false;
		scale = 2 + opc;
		d->flags |= LS_F_SIMD;
	} else if (opc == 0 || opc == 2) {
		scale = opc ? 3 : 2;
	} else if (opc == 1 && type != 0) {
		scale = l ? 2 : 3;	/* LDPSW, or STGP (2 x 8 bytes) */
	} else {
		return false;
	}
	imm_scale = (opc == 1 && !l && !v) ? 4 : scale;
	d->kind = l ? LS_LOAD : LS_STORE;
	d->flags |= LS_F_PAIR;
	d->size = 2u << scale;
	d->imm = sext(bits(insn, 21, 15), 7) * (1 << imm_scale);
	d->wb = type == 1 ? WB_POST : type == 3 ? WB_PRE : WB_NONE;
	d->name = type == 0 ? "pair-nt" : "pair";
	return true;
}

/* LDR (literal): opc 011 V 00 imm19 Rt */
static bool dec_literal(uint32_t insn, struct ls_insn *d)
{
	unsigned opc = bits(insn, 31, 30), v = bits(insn, 26, 26);

	if (v) {
		if (opc == 3)
			return false;
		d->size = 4u << opc;
		d->flags |= LS_F_SIMD;
		d->kind = LS_LOAD;
	} else {
		d->size = opc == 1 ? 8 : 4;
		d->kind = opc == 3 ? LS_PRFM : LS_LOAD;
	}
	d->flags |= LS_F_LITERAL;
	d->imm = sext(bits(insn, 23, 5), 19) * 4;
	d->rn = 0;
	d->name = "literal";
	return true;
}

/* Exclusive, ordered, CAS, CASP: size 001000 o2 L o1 Rs o0 Rt2 Rn Rt */
static bool dec_excl(uint32_t insn, struct ls_insn *d)
{
	unsigned size = bits(insn, 31, 30), o2 = bits(insn, 23, 23);
	unsigned l = bits(insn, 22, 22), o1 = bits(insn, 21, 21);
	unsigned o0 = bits(insn, 15, 15);

	if (o0 || (o2 && l))
		d->flags |= LS_F_ACQREL;
	if (!o2 && !o1) {
		d->kind = l ? LS_LOAD : LS_STORE;
		d->size = 1u << size;
		d->flags |= LS_F_EXCL;
		d->name = "excl";
	} else if (!o2 && o1) {
		d->flags |= LS_F_PAIR;
		if (size >= 2) {
			d->kind = l ? LS_LOAD : LS_STORE;
			d->size = 2u << size;
			d->flags |= LS_F_EXCL;
			d->name = "excl-pair";
		} else {
			if (bits(insn, 14, 10) != 31)
				return false;
			d->kind = LS_RMW;
			d->size = 8u << size;
			d->name = "casp";
		}
	} else if (o2 && !o1) {
		d->kind = l ? LS_LOAD : LS_STORE;
		d->size = 1u << size;
		d->flags |= LS_F_ACQREL;
		d->name = "ordered";
	} else {
		if (bits(insn, 14, 10) != 31)
			return false;
		d->kind = LS_RMW;
		d->size = 1u << size;
		d->name = "cas";
	}
	return true;
}

/* LDAPUR/STLUR: size 011001 opc 0 imm9 00 Rn Rt */
static bool dec_rcpc_unscaled(uint32_t insn, struct ls_insn *d)
{
	unsigned size = bits(insn, 31, 30), opc = bits(insn, 23, 22);

	if ((opc == 2 && size == 3) || (opc == 3 && size >= 2))
		return false;
	d->kind = opc == 0 ? LS_STORE : LS_LOAD;
	d->size = 1u << size;
	d->imm = sext(bits(insn, 20, 12), 9);
	d->flags |= LS_F_ACQREL;
	d->name = "rcpc-unscaled";
	return true;
}

/* LD1-4/ST1-4 multiple structures, with or without post-index */
static bool dec_simd_multi(uint32_t insn, struct ls_insn *d)
{
	static const signed char nregs[16] = {
		[0] = 4, [2] = 4, [4] = 3, [6] = 3, [7] = 1, [8] = 2, [10] = 2,
	};
	unsigned opcode = bits(insn, 15, 12);

	if (!nregs[opcode])
		return false;
	d->kind = bits(insn, 22, 22) ? LS_LOAD : LS_STORE;
	d->size = nregs[opcode] * (bits(insn, 30, 30) ? 16 : 8);
	d->flags |= LS_F_SIMD;
	if (bits(insn, 23, 23)) {
		d->wb = WB_POST;
		d->rm = bits(insn, 20, 16);
	}
	d->name = "simd-multi";
	return true;
}

/* LD1-4/ST1-4 single structure (lane) and LD1R-LD4R */
static bool dec_simd_single(uint32_t insn, struct ls_insn *d)
{
	unsigned opcode = bits(insn, 15, 13), s = bits(insn, 12, 12);
	unsigned size = bits(insn, 11, 10), l = bits(insn, 22, 22);
	unsigned selem = (((opcode & 1) << 1) | bits(insn, 21, 21)) + 1;
	unsigned esize;

	switch (opcode >> 1) {
	case 0:
		esize = 1;
		break;
	case 1:
		if (size & 1)
			return false;
		esize = 2;
		break;
	case 2:
		if (size == 0)
			esize = 4;
		else if (size == 1 && !s)
			esize = 8;
		else
			return false;
		break;
	default:
		if (!l || s)
			return false;
		esize = 1u << size;
		break;
	}
	d->kind = l ? LS_LOAD : LS_STORE;
	d->size = selem * esize;
	d->flags |= LS_F_SIMD;
	if (bits(insn, 23, 23)) {
		d->wb = WB_POST;
		d->rm = bits(insn, 20, 16);
	}
	d->name = "simd-single";
	return true;
}

/* DC ZVA / DC GVA / DC GZVA, Xt: a store of one aligned block */
static bool dec_dczva(uint32_t insn, struct ls_insn *d)
{
	d->kind = LS_ZVA;
	d->size = ls_zva_bytes;
	d->rn = bits(insn, 4, 0);
	if (d->rn == 31)
		d->flags |= LS_F_XZR;
	d->name = "dc-zva";
	return true;
}

/* CPY*, SET*: sz 011 o0 01 op1 0 Rs op2 01 Rn Rd */
static bool dec_mops(uint32_t insn, struct ls_insn *d)
{
	unsigned op1 = bits(insn, 23, 22), op2 = bits(insn, 15, 12);
	bool set = op1 == 3;
	unsigned stage = set ? op2 >> 2 : op1;	/* 0 P, 1 M, 2 E */

	if (bits(insn, 31, 30) || stage == 3)
		return false;
	d->kind = stage == 0 ? LS_MOPS : LS_MOPS_CONT;
	d->rn = bits(insn, 4, 0);
	d->rm = bits(insn, 9, 5);
	d->rs = bits(insn, 20, 16);
	if (!set)
		d->flags |= LS_F_MOPS_CPY;
	if (op2 & 1)			/* SET*T*, CPY*WT*: unprivileged write */
		d->flags |= LS_F_UNPRIV;
	if (!set && (op2 & 2))		/* CPY*RT*: unprivileged read */
		d->flags |= LS_F_SRC_UNPRIV;
	if (!set && !bits(insn, 26, 26))	/* CPYF*: forward only */
		d->flags |= LS_F_MOPS_FWD;
	if (stage == 1)
		d->flags |= LS_F_MOPS_MAIN;
	else if (stage == 2)
		d->flags |= LS_F_MOPS_EPI;
	d->size = 0;
	d->name = set ? "mops-set" : "mops-cpy";
	return true;
}

struct ls_row {
	uint32_t mask, value;
	bool (*decode)(uint32_t insn, struct ls_insn *d);
};

static const struct ls_row ls_table[] = {
	{ 0xffffffe0, 0xd50b7420, dec_dczva },	/* DC ZVA */
	{ 0xffffffe0, 0xd50b7460, dec_dczva },	/* DC GVA */
	{ 0xffffffe0, 0xd50b7480, dec_dczva },	/* DC GZVA */
	{ 0xffffffe0, 0xd5087620, dec_dc_ivac },	/* DC IVAC */
	{ 0xff200000, 0xd9200000, dec_mte },
	{ 0xff200c00, 0x19200000, dec_lse128 },
	{ 0x3f200c00, 0x19000800, dec_rcpc3 },
	{ 0x3f200c00, 0x1d000800, dec_rcpc3_simd },
	{ 0xbfbffc00, 0x0d018400, dec_rcpc3_lane },
	{ 0x3b200c00, 0x19000400, dec_mops },
	{ 0x3f200c00, 0x19000000, dec_rcpc_unscaled },
	{ 0x3f000000, 0x08000000, dec_excl },
	{ 0x3b000000, 0x18000000, dec_literal },
	{ 0x3a000000, 0x28000000, dec_pair },
	{ 0x3b000000, 0x39000000, dec_uimm },
	{ 0xff200400, 0xf8200400, dec_pac },
	{ 0x3b200c00, 0x38200800, dec_regoff },
	{ 0x3b200c00, 0x38200000, dec_atomic },
	{ 0x3b200000, 0x38000000, dec_imm9 },
	{ 0xbfbf0000, 0x0c000000, dec_simd_multi },
	{ 0xbfa00000, 0x0c800000, dec_simd_multi },
	{ 0xbf9f0000, 0x0d000000, dec_simd_single },
	{ 0xbf800000, 0x0d800000, dec_simd_single },
};

bool ls_decode(uint32_t insn, struct ls_insn *d)
{
	unsigned i;

	for (i = 0; i < sizeof(ls_table) / sizeof(ls_table[0]); i++) {
		if ((insn & ls_table[i].mask) != ls_table[i].value)
			continue;
		memset(d, 0, sizeof(*d));
		d->rn = bits(insn, 9, 5);
		d->rm = 31;
		if (ls_table[i].decode(insn, d))
			return true;
		break;
	}
	memset(d, 0, sizeof(*d));
	return false;
}

static uint64_t extend(uint64_t x, unsigned ext)
{
	switch (ext) {
	case EXT_UXTW:
		return (uint32_t)x;
	case EXT_SXTW:
		return (uint64_t)(int64_t)(int32_t)x;
	default:
		return x;
	}
}

uint64_t ls_ea(const struct ls_insn *d, uint64_t base, uint64_t index,
	       uint64_t pc)
{
	if (d->flags & LS_F_LITERAL)
		return pc + d->imm;
	if (d->kind == LS_ZVA)
		return base & ~(uint64_t)(d->size - 1);
	if (d->flags & LS_F_ALIGN)
		return (base + d->imm) & ~(uint64_t)(d->size - 1);
	if (d->wb == WB_POST)
		return base;
	if (d->flags & LS_F_REGOFF)
		return base + (extend(index, d->ext) << d->shift);
	return base + d->imm;
}

const char *ls_kind_name(unsigned kind)
{
	static const char *const names[] = {
		"none", "load", "store", "rmw", "prfm", "zva", "mops",
		"mops-cont",
	};

	return kind < sizeof(names) / sizeof(names[0]) ? names[kind] : "?";
}
