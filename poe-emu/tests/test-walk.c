/*
 * test-walk.c - host unit test of walk.c and policy.c
 *
 * Builds stage-1 tables in a fake guest physical memory (the fake QEMU
 * API of tests/fake-qemu.c reads descriptors from it) for 4K,
 * 16K and 64K granules, 3 to 5 levels, TTBR0 and TTBR1, blocks and pages,
 * and checks the leaf the walker finds (level, POIndex) and the policy
 * decision (POR, PIE _O or not, page-crossing accesses).
 * Prints TAP and "N passed, N failed"; exits 1 on failure.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fake-qemu.h"
#include "tap.h"
#include "../policy.h"
#include "../walk.h"

/* guest RAM is the fake QEMU's (tests/fake-qemu.c) */
#define mem fake_mem

/* --- a tiny table builder --- */
static uint64_t next_free;

static uint64_t alloc_table(unsigned gshift)
{
	uint64_t pa = (next_free + (1ull << gshift) - 1) & ~((1ull << gshift) - 1);

	next_free = pa + (1ull << gshift);
	memset(mem + pa, 0, 1ull << gshift);
	return pa;
}

static uint64_t rd(uint64_t pa)
{
	uint64_t x;

	memcpy(&x, mem + pa, 8);
	return x;
}

static void wr(uint64_t pa, uint64_t x)
{
	memcpy(mem + pa, &x, 8);
}

/*
 * Map va with a leaf at leaf_level carrying extra descriptor bits; tables
 * start at root for a walk of the given granule and input size.
 */
static void map(uint64_t root, unsigned gshift, unsigned inputsize,
		uint64_t va, int leaf_level, uint64_t bits)
{
	unsigned stride = gshift - 3;
	int start = 4 - (int)((inputsize - gshift + stride - 1) / stride);
	uint64_t table = root;
	int lvl;

	for (lvl = start;; lvl++) {
		unsigned shift = gshift + (3 - lvl) * stride;
		unsigned width = lvl == start ? inputsize - shift : stride;
		uint64_t slot = table + ((va >> shift) & ((1ull << width) - 1)) * 8;

		if (lvl == leaf_level) {
			/* page at level 3 (0b11), block above (0b01); OA 0 */
			wr(slot, bits | (lvl == 3 ? 3 : 1) | (1ull << 10));
			return;
		}
		if (!(rd(slot) & 1))
			wr(slot, alloc_table(gshift) | 3);
		table = rd(slot) & ~0xfffull & 0x0000fffffffff000ull;
		table &= ~((1ull << gshift) - 1);
	}
}

static uint64_t tcr_for(unsigned gshift, unsigned inputsize, int hi)
{
	uint64_t tsz = 64 - inputsize;

	if (hi) {
		unsigned tg1 = gshift == 12 ? 2 : gshift == 14 ? 1 : 3;

		return tsz << 16 | (uint64_t)tg1 << 30;
	} else {
		unsigned tg0 = gshift == 12 ? 0 : gshift == 14 ? 2 : 1;

		return tsz | (uint64_t)tg0 << 14;
	}
}

#define PO(k)	((uint64_t)(k) << 60)

static void walk_case(const char *name, unsigned gshift, unsigned inputsize,
		      int hi, uint64_t va, int leaf_level, unsigned key)
{
	struct poe_vcpu v = { 0 };
	struct poe_leaf leaf;
	uint64_t root;
	bool ok;

	next_free = 0x1000;
	root = alloc_table(gshift);
	map(root, gshift, inputsize, va, leaf_level, PO(key));
	v.mmu_valid = true;
	v.sctlr = 1;
	v.tcr = tcr_for(gshift, inputsize, hi);
	if (inputsize == 52 && gshift == 12)
		v.tcr |= 1ull << 59;		/* DS: 4K with 52-bit VA */
	if (hi)
		v.ttbr1 = root;
	else
		v.ttbr0 = root;
	ok = poe_walk(&v, va, &leaf);
	check(ok && leaf.level == leaf_level &&
	      ((leaf.desc >> 60) & 7) == key, name);
}

/* A 4K/48-bit TTBR0 setup shared by the negative and policy cases. */
static uint64_t setup_4k(struct poe_vcpu *v)
{
	uint64_t root;

	memset(v, 0, sizeof(*v));
	next_free = 0x1000;
	root = alloc_table(12);
	map(root, 12, 48, 0x400000, 3, PO(0));		/* key 0 page */
	map(root, 12, 48, 0x401000, 3, PO(2));		/* key 2 page */
	/* key 3 page whose PIIndex is 0b0001 (AP[1] set) */
	map(root, 12, 48, 0x402000, 3, PO(3) | 1ull << 6);
	map(root, 12, 48, 0x600000, 2, PO(4));		/* key 4 block */
	v->mmu_valid = true;
	v->sctlr = 1;
	v->tcr = tcr_for(12, 48, 0) | tcr_for(12, 48, 1);
	v->ttbr0 = root;
	return root;
}

int main(void)
{
	struct poe_verdict vd;
	struct poe_leaf leaf;
	struct poe_vcpu v;

	poe_state_init(1);
	printf("TAP version 13\n");
	/* granules, levels, halves, blocks and pages */
	walk_case("4K 48-bit TTBR0 page", 12, 48, 0, 0x0000aaaabbbbc000ull, 3, 3);
	walk_case("4K 48-bit TTBR1 page", 12, 48, 1, 0xffff000012345000ull, 3, 1);
	walk_case("4K 48-bit TTBR1 2M block", 12, 48, 1, 0xffff800000200000ull, 2, 5);
	walk_case("4K 48-bit 1G block", 12, 48, 0, 0x0000004000000000ull, 1, 6);
	walk_case("4K 39-bit (3 levels) page", 12, 39, 0, 0x0000007fff001000ull, 3, 2);
	walk_case("4K 52-bit LPA2 (5 levels) page", 12, 52, 0, 0x000f00000000d000ull, 3, 7);
	walk_case("16K 47-bit (3 levels) page", 14, 47, 0, 0x00007ffff0004000ull, 3, 4);
	walk_case("16K 48-bit (4 levels) TTBR1 page", 14, 48, 1, 0xffff800000008000ull, 3, 1);
	walk_case("16K 32M block", 14, 47, 0, 0x0000000002000000ull, 2, 2);
	walk_case("64K 42-bit (2 levels) page", 16, 42, 0, 0x000003ff00010000ull, 3, 5);
	walk_case("64K 48-bit (3 levels) TTBR1 page", 16, 48, 1, 0xffff000000030000ull, 3, 3);
	walk_case("64K 512M block", 16, 48, 0, 0x0000000020000000ull, 2, 1);

	/* failures are reported as such (and never cached) */
	setup_4k(&v);
	check(!poe_walk(&v, 0x500000, &leaf), "unmapped VA fails");
	check(!poe_walk(&v, 0x0001000000400000ull, &leaf),
	      "VA above T0SZ range fails");
	check(poe_walk(&v, 0x5a00000000401000ull, &leaf) == false,
	      "tagged VA fails without TBI0");
	v.tcr |= 1ull << 37;				/* TBI0 */
	check(poe_walk(&v, 0x5a00000000401000ull, &leaf) && leaf.level == 3 &&
	      ((leaf.desc >> 60) & 7) == 2, "tagged VA walks with TBI0");
	v.tcr |= 1ull << 7;				/* EPD0 */
	check(!poe_walk(&v, 0x401000, &leaf), "EPD0 fails");
	v.tcr &= ~(1ull << 7);
	v.sctlr = 0;
	check(!poe_walk(&v, 0x401000, &leaf), "MMU off: no stage 1");
	v.sctlr = 1;
	check(poe_tlb_lookup(&v, 0x500000) == NULL && v.st.walks == 1 &&
	      poe_tlb_lookup(&v, 0x500000) == NULL && v.st.walks == 2,
	      "failed walks are not cached");
	check(poe_tlb_lookup(&v, 0x401000) && poe_tlb_lookup(&v, 0x401008) &&
	      v.st.walks == 3, "successful walks are cached");
	poe_tlb_flush(&v);
	check(poe_tlb_lookup(&v, 0x401000) && v.st.walks == 4,
	      "flush empties the soft TLB");

	/* the decision */
	v.eff.tcr2 = TCR2_POE | TCR2_E0POE;
	v.eff.por_el1 = 0x77777177;				/* key 2: R only */
	poe_check(&v, 0x401010, 8, NEED_W, false, &v.eff, &vd);
	check(!vd.allowed && vd.va == 0x401010 && vd.key == 2 &&
	      vd.level == 3, "store to a read-only key is denied");
	poe_check(&v, 0x401010, 8, NEED_R, false, &v.eff, &vd);
	check(vd.allowed, "load from a read-only key is allowed");
	poe_check(&v, 0x401010, 8, NEED_R|NEED_W, false, &v.eff, &vd);
	check(!vd.allowed, "RMW on a read-only key is denied");
	poe_check(&v, 0x400ffc, 8, NEED_W, false, &v.eff, &vd);
	check(!vd.allowed && vd.va == 0x401000,
	      "crossing into a denied page faults at the page start");
	v.eff.por_el0 = 0x77777777 & ~(0xfull << 16);	/* key 4: none */
	poe_check(&v, 0x612345, 1, NEED_R, true, &v.eff, &vd);
	check(!vd.allowed && vd.level == 2 && vd.key == 4,
	      "EL0 load from a no-access key in a block, level 2");
	poe_check(&v, 0x612345, 1, NEED_R, false, &v.eff, &vd);
	check(vd.allowed, "POR_EL1 governs EL1 accesses");
	/* PIE: overlay only where PIIndex selects an _O permission */
	v.eff.por_el1 = 0x77770777;				/* key 3: none */
	v.eff.tcr2 |= TCR2_PIE;
	v.pir_el1 = 0xcull << 4;			/* PI 1: RW (not _O) */
	poe_check(&v, 0x402000, 8, NEED_W, false, &v.eff, &vd);
	check(vd.allowed, "PIE non-_O permission: overlay not applied");
	v.pir_el1 = 0x5ull << 4;			/* PI 1: RW_O */
	poe_check(&v, 0x402000, 8, NEED_W, false, &v.eff, &vd);
	check(!vd.allowed && vd.key == 3, "PIE _O permission: overlay applied");
	v.pire0_el1 = 0xcull << 4;
	v.eff.por_el0 = 0x77770777;
	poe_check(&v, 0x402000, 8, NEED_W, true, &v.eff, &vd);
	check(vd.allowed, "EL0 accesses use PIRE0_EL1");
	v.eff.tcr2 &= ~TCR2_PIE;
	poe_check(&v, 0x402000, 8, NEED_W, true, &v.eff, &vd);
	check(!vd.allowed, "PIE off: overlay always applies");
	check(poe_por_restricts(0x77777717) && !poe_por_restricts(0x77777777) &&
	      !poe_por_restricts(0x55555555), "POR restricts");
	check(poe_por_denies(0x77777717) == (DENY_W | DENY_X) &&
	      poe_por_denies(0x55555555) == DENY_X &&
	      poe_por_denies(0x77777777) == 0 &&
	      poe_por_denies(0x77777787) == (DENY_R | DENY_W | DENY_X),
	      "POR denies R/W/X (reserved values deny all)");

	return tap_done();
}
