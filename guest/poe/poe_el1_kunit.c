// SPDX-License-Identifier: GPL-2.0-only
/*
 * poe_el1_kunit.c - EL1 controls for the POE emulator (poe-emu)
 *
 * Meant to be added to a kernel build by a patch (e.g. as
 * arch/arm64/mm/poe_el1_kunit.c, obj-$(CONFIG_KUNIT) += ...); it needs
 * nothing but CONFIG_ARM64_POE and KUnit, and works on an unmodified 7.3.
 *
 * Each case gives one page of the linear map key 1 (POIndex in its PTE),
 * switches the PIE permission of _PAGE_KERNEL to its overlay-applying
 * "_O" form (or not), enables the EL1 overlay (TCR2_EL1.POE) and writes
 * POR_EL1, then writes the page with copy_to_kernel_nofault():
 *  - key 1 read-only, PIE RW_O:  -EFAULT and the memory is unchanged;
 *  - key 1 read-write, PIE RW_O: the write succeeds;
 *  - key 1 read-only, PIE RW (not _O): the write succeeds, because the
 *    overlay does not apply (as on hardware).
 * All registers and the PTE are restored; preemption is off meanwhile
 * because POR_EL1, TCR2_EL1 and PIR_EL1 are per CPU. Key 0 stays RWX so
 * the rest of the kernel (and interrupts) is unaffected.
 */
#include <kunit/test.h>
#include <linux/gfp.h>
#include <linux/mm.h>
#include <linux/moduleparam.h>
#include <linux/pgtable.h>
#include <linux/uaccess.h>
#include <asm/cpufeature.h>
#include <asm/pgtable-prot.h>
#include <asm/sysreg.h>
#include <asm/tlbflush.h>

#define TEST_KEY	1
#define PATTERN		0x5a5a5a5a5a5a5a5aull

struct poe_ctx {
	struct page *page;
	u64 *addr;
	pte_t *ptep;
	pte_t old_pte;
	u64 old_por, old_pir, old_tcr2;
};

/* The linear-map PTE of addr, or NULL if it is block-mapped. */
static pte_t *linear_pte(unsigned long addr)
{
	pgd_t *pgdp = pgd_offset_k(addr);
	p4d_t *p4dp;
	pud_t *pudp;
	pmd_t *pmdp;

	if (pgd_none(READ_ONCE(*pgdp)))
		return NULL;
	p4dp = p4d_offset(pgdp, addr);
	if (p4d_none(READ_ONCE(*p4dp)))
		return NULL;
	pudp = pud_offset(p4dp, addr);
	if (pud_none(READ_ONCE(*pudp)) || pud_leaf(READ_ONCE(*pudp)))
		return NULL;
	pmdp = pmd_offset(pudp, addr);
	if (pmd_none(READ_ONCE(*pmdp)) || pmd_leaf(READ_ONCE(*pmdp)))
		return NULL;
	return pte_offset_kernel(pmdp, addr);
}

static void set_key(struct poe_ctx *c, u64 key)
{
	pte_t pte = __pte((pte_val(c->old_pte) & ~PTE_PO_IDX_MASK) |
			  (key << 60));

	__set_pte(c->ptep, pte);
	flush_tlb_kernel_range((unsigned long)c->addr,
			       (unsigned long)c->addr + PAGE_SIZE);
}

static int poe_setup(struct kunit *test, struct poe_ctx *c, bool pie_o,
		     u64 key_perm)
{
	unsigned int idx = pte_pi_index(_PAGE_KERNEL);
	u64 pir;

	if (!system_supports_poe())
		kunit_skip(test, "no POE");
	c->page = alloc_page(GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, c->page);
	c->addr = page_address(c->page);
	c->addr[0] = PATTERN;
	c->ptep = linear_pte((unsigned long)c->addr);
	if (!c->ptep) {
		__free_page(c->page);
		kunit_skip(test, "linear map is block-mapped here");
	}
	c->old_pte = READ_ONCE(*c->ptep);

	preempt_disable();
	c->old_por = read_sysreg_s(SYS_POR_EL1);
	c->old_pir = read_sysreg_s(SYS_PIR_EL1);
	c->old_tcr2 = read_sysreg_s(SYS_TCR2_EL1);

	set_key(c, TEST_KEY);
	pir = c->old_pir;
	if (pie_o) {
		pir &= ~PIRx_ELx_PERM_PREP(idx, PIE_MASK);
		pir |= PIRx_ELx_PERM_PREP(idx, PIE_RW_O);
	}
	write_sysreg_s(pir, SYS_PIR_EL1);
	write_sysreg_s(POR_ELx_PERM_PREP(0, POE_RWX) |
		       POR_ELx_PERM_PREP(TEST_KEY, key_perm), SYS_POR_EL1);
	isb();
	write_sysreg_s(c->old_tcr2 | TCR2_EL1_POE, SYS_TCR2_EL1);
	isb();
	/* PIR and TCR2 feed the TLB: invalidate as the architecture asks */
	local_flush_tlb_all();
	return 0;
}

static void poe_teardown(struct poe_ctx *c)
{
	write_sysreg_s(c->old_tcr2, SYS_TCR2_EL1);
	isb();
	write_sysreg_s(c->old_pir, SYS_PIR_EL1);
	write_sysreg_s(c->old_por, SYS_POR_EL1);
	isb();
	local_flush_tlb_all();
	__set_pte(c->ptep, c->old_pte);
	flush_tlb_kernel_range((unsigned long)c->addr,
			       (unsigned long)c->addr + PAGE_SIZE);
	preempt_enable();
	__free_page(c->page);
}

/*
 * Write @val to a fresh page with key TEST_KEY, @key_perm being that key's
 * permission in POR_EL1 and @pie_o whether the page's permission applies
 * the overlay, and return what copy_to_kernel_nofault() returned; @seen
 * gets what the page holds afterwards (reading is always allowed).
 */
static long poe_try_write(struct kunit *test, bool pie_o, u64 key_perm,
			  u64 val, u64 *seen)
{
	struct poe_ctx c;
	long ret;

	poe_setup(test, &c, pie_o, key_perm);
	ret = copy_to_kernel_nofault(c.addr, &val, sizeof(val));
	*seen = READ_ONCE(c.addr[0]);
	poe_teardown(&c);
	return ret;
}

static void poe_el1_write_denied(struct kunit *test)
{
	u64 seen;

	KUNIT_EXPECT_EQ(test, poe_try_write(test, true, POE_R, 0x1234, &seen),
			-EFAULT);
	KUNIT_EXPECT_EQ(test, seen, PATTERN);
}

static void poe_el1_write_granted(struct kunit *test)
{
	u64 seen;

	KUNIT_EXPECT_EQ(test, poe_try_write(test, true, POE_RW, 0x1234, &seen),
			0);
	KUNIT_EXPECT_EQ(test, seen, 0x1234);
}

static void poe_el1_not_o_not_applied(struct kunit *test)
{
	u64 seen;

	KUNIT_EXPECT_EQ(test, poe_try_write(test, false, POE_R, 0x1234, &seen),
			0);
	KUNIT_EXPECT_EQ(test, seen, 0x1234);
}

/*
 * Opt-in (poe_el1_kunit.oops=1 on the command line): a plain store, with
 * no exception-table fixup, to the write-denied page. On hardware, and
 * under poe-emu, this oopses ("Unable to handle kernel write to read-only
 * memory", ISS2 Overlay = 1); under poe-emu strict=on QEMU stops with a
 * report instead. It shows what a missing kpkeys switch looks like.
 */
static bool oops;
module_param(oops, bool, 0444);

static void poe_el1_plain_write_oops(struct kunit *test)
{
	struct poe_ctx c;

	if (!oops)
		kunit_skip(test, "opt-in: poe_el1_kunit.oops=1");
	poe_setup(test, &c, true, POE_R);
	WRITE_ONCE(c.addr[0], 0x1234);	/* faults: never returns */
	poe_teardown(&c);
	KUNIT_FAIL(test, "plain write to a write-denied key did not fault");
}

static struct kunit_case poe_el1_cases[] = {
	KUNIT_CASE(poe_el1_write_denied),
	KUNIT_CASE(poe_el1_write_granted),
	KUNIT_CASE(poe_el1_not_o_not_applied),
	KUNIT_CASE(poe_el1_plain_write_oops),
	{}
};

static struct kunit_suite poe_el1_suite = {
	.name = "poe_el1",
	.test_cases = poe_el1_cases,
};
kunit_test_suite(poe_el1_suite);

MODULE_DESCRIPTION("EL1 permission overlay controls for the POE emulator");
MODULE_LICENSE("GPL");
