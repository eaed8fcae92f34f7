/*
 * walk.c - stage-1 translation table walk of the guest and the soft TLB
 *
 * The overlay permission of an access comes from the POIndex field of the
 * stage-1 leaf descriptor, which QEMU does not expose, so the plugin walks
 * the guest's tables itself: TTBR0/TTBR1 chosen by VA bit 55, granule
 * (4K/16K/64K), T0SZ/T1SZ, TBI, 2 to 5 levels including 52-bit output
 * addresses (64K LPA and LPA2/DS), block and page descriptors. Descriptors
 * are read from guest physical memory. Results are cached per vCPU in a
 * small direct-mapped soft TLB, keyed by the 4K page of the VA and flushed
 * on TLBI and on writes to TTBRx/TCR/SCTLR/TCR2/PIRx (regs.c). A failed
 * walk is never cached: QEMU raises the translation fault itself.
 */
#include <string.h>

#include "poe.h"

#define GENMASK(h, l)	((~0ull >> (63 - (h))) & (~0ull << (l)))

static void load_mmu_regs(struct poe_vcpu *v)
{
	if (v->mmu_valid)
		return;
	v->tcr = poe_read(v, poe_reg[R_TCR_EL1]);
	v->ttbr0 = poe_read(v, poe_reg[R_TTBR0_EL1]);
	v->ttbr1 = poe_read(v, poe_reg[R_TTBR1_EL1]);
	v->sctlr = poe_read(v, poe_reg[R_SCTLR_EL1]);
	v->mmu_valid = true;
}

static bool read_desc(struct poe_vcpu *v, uint64_t pa, uint64_t *desc)
{
	g_byte_array_set_size(v->buf, 0);
	if (qemu_plugin_read_memory_hwaddr(pa, v->buf, 8) != 0 ||
	    v->buf->len < 8)
		return false;
	memcpy(desc, v->buf->data, 8);	/* little-endian guest and host */
	return true;
}

/* Output address of a table/block/page descriptor. */
static uint64_t desc_oa(uint64_t desc, unsigned gshift, bool ds, bool pa52)
{
	if (ds)
		return (desc & GENMASK(49, gshift)) | ((desc >> 8) & 3) << 50;
	if (pa52 && gshift == 16)
		return (desc & GENMASK(47, 16)) | ((desc >> 12) & 0xf) << 48;
	return desc & GENMASK(47, gshift);
}

bool poe_walk(struct poe_vcpu *v, uint64_t va, struct poe_leaf *leaf)
{
	bool hi = (va >> 55) & 1;
	unsigned tsz, tg, gshift, stride, inputsize, top, level;
	uint64_t tcr, ttbr, table, desc, expect;
	bool ds, pa52, tbi;
	int lvl;

	load_mmu_regs(v);
	if (!(v->sctlr & 1))
		return false;		/* MMU off: no stage 1, no overlay */
	tcr = v->tcr;
	if (hi) {
		tsz = (tcr >> 16) & 63;
		tg = (tcr >> 30) & 3;	/* 1 = 16K, 2 = 4K, 3 = 64K */
		gshift = tg == 1 ? 14 : tg == 3 ? 16 : 12;
		tbi = (tcr >> 38) & 1;
		if ((tcr >> 23) & 1)
			return false;	/* EPD1 */
		ttbr = v->ttbr1;
	} else {
		tsz = tcr & 63;
		tg = (tcr >> 14) & 3;	/* 0 = 4K, 1 = 64K, 2 = 16K */
		gshift = tg == 2 ? 14 : tg == 1 ? 16 : 12;
		tbi = (tcr >> 37) & 1;
		if ((tcr >> 7) & 1)
			return false;	/* EPD0 */
		ttbr = v->ttbr0;
	}
	ds = (tcr >> 59) & 1;
	pa52 = ((tcr >> 32) & 7) == 6;
	inputsize = 64 - tsz;
	if (inputsize < 16 || inputsize > 52)
		return false;
	/* the bits above the input size must all equal bit 55 */
	top = tbi ? 55 : 63;
	expect = hi ? GENMASK(top, inputsize) : 0;
	if ((va & GENMASK(top, inputsize)) != expect)
		return false;

	stride = gshift - 3;
	/* number of levels needed to resolve inputsize - gshift bits */
	level = (inputsize - gshift + stride - 1) / stride;
	lvl = 4 - (int)level;		/* -1 .. 3 */

	if (ds || (pa52 && gshift == 16))
		table = (ttbr & GENMASK(47, 6)) | ((ttbr >> 2) & 0xf) << 48;
	else
		table = ttbr & GENMASK(47, 1);

	for (;; lvl++) {
		unsigned shift = gshift + (3 - lvl) * stride;
		unsigned width = lvl == 4 - (int)level ?
				 inputsize - shift : stride;
		uint64_t idx = (va >> shift) & ((1ull << width) - 1);

		table &= ~((8ull << width) - 1);
		if (!read_desc(v, table + idx * 8, &desc))
			return false;
		if (!(desc & 1))
			return false;
		if (lvl == 3) {
			if (!(desc & 2))
				return false;	/* reserved at level 3 */
			break;
		}
		if (!(desc & 2))
			break;			/* block */
		table = desc_oa(desc, gshift, ds, pa52);
	}
	leaf->desc = desc;
	leaf->level = lvl;
	return true;
}

void poe_tlb_flush(struct poe_vcpu *v)
{
	memset(v->tlb, 0, sizeof(v->tlb));
}

const struct poe_tlb_entry *poe_tlb_lookup(struct poe_vcpu *v, uint64_t va)
{
	uint64_t tag = (va & ~0xfffull) | 1;
	struct poe_tlb_entry *e = &v->tlb[(va >> 12) % POE_TLB_SIZE];
	struct poe_leaf leaf;

	if (e->tag == tag)
		return e;
	v->st.walks++;
	if (!poe_walk(v, va, &leaf))
		return NULL;
	e->tag = tag;
	e->po = (leaf.desc >> 60) & 7;
	e->pi = ((leaf.desc >> 6) & 1) | ((leaf.desc >> 51) & 1) << 1 |
		((leaf.desc >> 53) & 1) << 2 | ((leaf.desc >> 54) & 1) << 3;
	e->level = leaf.level;
	return e;
}
