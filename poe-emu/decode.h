/*
 * decode.h - A64 load/store decoder for poe-emu
 *
 * Given one A64 instruction word, say whether it accesses data memory and
 * how: kind (load, store, read-modify-write, ...), the registers that form
 * the effective address, the immediate, the writeback mode and the number
 * of bytes accessed. The plugin uses it at translation time to decide which
 * instructions need a permission check and how to compute their address at
 * run time; it has no QEMU dependency so that it can be unit-tested on the
 * host (tests/).
 */
#ifndef POE_DECODE_H
#define POE_DECODE_H

#include <stdbool.h>
#include <stdint.h>

enum ls_kind {
	LS_NONE = 0,	/* not a data access */
	LS_LOAD,	/* needs read permission */
	LS_STORE,	/* needs write permission */
	LS_RMW,		/* atomic read-modify-write: needs both */
	LS_PRFM,	/* prefetch: never faults, ignored */
	LS_ZVA,		/* DC ZVA/GVA/GZVA, STGM, STZGM: a whole aligned block */
	LS_MOPS,	/* CPY* / SET* prologue: range known only at run time */
	LS_MOPS_CONT,	/* CPY* / SET* main and epilogue (LS_F_MOPS_*) */
};

enum ls_wb {
	WB_NONE = 0,
	WB_PRE,		/* base updated to the address before the access */
	WB_POST,	/* address is the base; base updated afterwards */
};

#define LS_F_UNPRIV	0x01	/* LDTR/STTR class, MOPS *WT/SET*T: EL0
				 * permissions at EL1 (MOPS: destination) */
#define LS_F_EXCL	0x02	/* exclusive (LDXR/STXR family) */
#define LS_F_PAIR	0x04	/* two registers (LDP, LDXP, CASP) */
#define LS_F_SIMD	0x08	/* SIMD&FP registers */
#define LS_F_LITERAL	0x10	/* PC-relative: address = pc + imm */
#define LS_F_ACQREL	0x20	/* acquire/release ordering */
#define LS_F_REGOFF	0x40	/* address = base + extend(Xm) << shift */
#define LS_F_MOPS_CPY	0x80	/* MOPS copy (has a source range) */
#define LS_F_SRC_UNPRIV	0x100	/* MOPS CPY*RT*: source read as EL0 */
#define LS_F_PAC	0x200	/* LDRAA/LDRAB: strip the PAC of the base */
#define LS_F_XZR	0x400	/* register 31 of the address is XZR */
#define LS_F_CM		0x800	/* cache maintenance (ESR.CM) */
#define LS_F_MOPS_MAIN	0x1000	/* MOPS main instruction (CPYM, SETM) */
#define LS_F_MOPS_EPI	0x2000	/* MOPS epilogue (CPYE, SETE) */
#define LS_F_MOPS_FWD	0x4000	/* CPYF*: forward-only copy */
#define LS_F_ALIGN	0x8000	/* address aligned down to the size */

#define LS_REG_SP	31	/* rn == 31 means SP as a base */

/* Register-offset extend kinds, as in the instruction's option field. */
enum ls_ext {
	EXT_UXTW = 2,
	EXT_LSL = 3,	/* UXTX */
	EXT_SXTW = 6,
	EXT_SXTX = 7,
};

struct ls_insn {
	uint8_t kind;	/* enum ls_kind */
	uint8_t wb;	/* enum ls_wb */
	uint16_t flags;	/* LS_F_* */
	uint8_t rn;	/* base register (31 = SP); MOPS: destination Xd */
	uint8_t rm;	/* index register (31 = XZR); MOPS: size Xn */
	uint8_t rs;	/* MOPS: source Xs of CPY */
	uint8_t ext;	/* enum ls_ext for LS_F_REGOFF */
	uint8_t shift;	/* left shift of the extended index */
	uint32_t size;	/* bytes accessed in total (pairs/structures: all) */
	int64_t imm;	/* offset added to the base (not for WB_POST) */
	const char *name; /* instruction class, for logs and tests */
};

/* DC ZVA block size in bytes (4 << DCZID_EL0.BS); 64 unless set. */
extern unsigned ls_zva_bytes;
/* STGM/STZGM/LDGM block size (4 << GMID_EL1.BS); QEMU's max CPU: 256 */
extern unsigned ls_gm_bytes;

/* Decode insn; returns false (and kind LS_NONE) if it is no data access. */
bool ls_decode(uint32_t insn, struct ls_insn *d);

/*
 * Effective address of the first byte accessed, given the base register
 * value, the index register value (if LS_F_REGOFF) and the instruction's PC.
 */
uint64_t ls_ea(const struct ls_insn *d, uint64_t base, uint64_t index,
	       uint64_t pc);

const char *ls_kind_name(unsigned kind);

#endif
