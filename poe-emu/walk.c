/*
 * walk.c - stage-1 translation table walk of the guest and the soft TLB
 *
 * The overlay permission of an access comes from the POIndex field of the
 * stage-1 leaf descriptor, which QEMU does not expose, so the plugin walks
 * the guest's tables itself: TTBR0/TTBR1 chosen by VA bit 55, granule
 * (4K/16K/64K), T0SZ/T1SZ, TBI, 2 to 5 levels including 52-bit output
 * addresses (64K LPA and LPA2/DS), block and page descriptors. Descriptors
 * are read from guest physical memory. Results are cached per vCPU in a
 * small direct-mapped soft TLB, keyed by the 4K page of the VA. A failed
 * walk is never cached: QEMU raises the translation fault itself.
 *
 * Invalidation: writes to TTBRx/TCR/SCTLR empty the vCPU's soft TLB; a
 * local TLBI invalidates what its operand covers in the issuer's; a
 * broadcast TLBI (*IS, *OS) is appended to a global ring of recent
 * invalidations and every vCPU applies the ones it has not seen at its
 * next lookup, so none uses a stale entry after the TLBI executed (the
 * issuer's next instruction included). A vCPU that fell more than the
 * ring behind empties its soft TLB. The soft TLB is not tagged by ASID:
 * an invalidation by VA drops the entries of that VA for every ASID, and
 * one by ASID drops everything; a by-VA or range operand drops every
 * entry whose leaf (page, contiguous group or block) overlaps it. More
 * invalidation than asked for is never less faithful, only slower.
 *
 * Contiguous entries: hardware may cache one translation for the whole
 * group from any of its entries, so a POIndex that differs inside a
 * group is a programming error (CONSTRAINED UNPREDICTABLE). The walk reads
 * the group on a soft-TLB miss and marks the entry; strict mode reports
 * an access through it (check.c).
 */
#include <string.h>

#include "walk.h"
#include "regs.h"

/* recent broadcast invalidations; entry g % RING is number g */
#define RING 64
static struct sys_tlbi_range ring[RING];
uint64_t poe_tlb_ring_gen;	/* broadcasts so far (atomic) */
static GMutex ring_lock;

#define GENMASK(h, l)	((~0ull >> (63 - (h))) & (~0ull << (l)))

void poe_mmu_load(struct poe_vcpu *v)
{
	if (v->mmu_valid)
		return;
	v->tcr = poe_reg_read(R_TCR_EL1);
	v->ttbr0 = poe_reg_read(R_TTBR0_EL1);
	v->ttbr1 = poe_reg_read(R_TTBR1_EL1);
	v->sctlr = poe_reg_read(R_SCTLR_EL1);
	v->mmu_valid = true;
}

static bool read_desc(uint64_t pa, uint64_t *desc)
{
	static __thread GByteArray *buf __attribute__((tls_model("initial-exec")));

	if (!buf)
		buf = g_byte_array_new();
	buf->len = 0;		/* faster than g_byte_array_set_size() */
	if (qemu_plugin_read_memory_hwaddr(pa, buf, 8) != 0 || buf->len < 8)
		return false;
	memcpy(desc, buf->data, 8);	/* little-endian guest and host */
	return true;
}

/*
 * Number of entries in a contiguous group at this level and granule
 * (Arm ARM, "The Contiguous bit"): 4K: 16; 16K: 128 at level 3, 32 at
 * level 2; 64K: 32.
 */
static unsigned cont_entries(unsigned gshift, int lvl)
{
	if (gshift == 12)
		return 16;
	if (gshift == 14)
		return lvl == 3 ? 128 : 32;
	return 32;
}

static bool cont_uniform(uint64_t slot_pa, unsigned n, uint64_t desc)
{
	uint64_t first = slot_pa & ~(n * 8ull - 1), d;
	unsigned i;

	for (i = 0; i < n; i++) {
		if (!read_desc(first + i * 8, &d))
			return true;	/* cannot tell: do not report */
		if ((d & 1) && ((d ^ desc) & (7ull << 60)))
			return false;
	}
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
	uint64_t tcr, ttbr, table, desc, expect, slot_pa = 0;
	bool ds, pa52, tbi;
	int lvl;

	poe_mmu_load(v);
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
		slot_pa = table + idx * 8;
		leaf->index = idx;
		leaf->entries = 1u << width;
		if (!read_desc(slot_pa, &desc))
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
	leaf->shift = gshift + (3 - lvl) * stride;
	leaf->entry_shift = leaf->shift;
	leaf->slot_pa = slot_pa;
	leaf->pa = (desc_oa(desc, gshift, ds, pa52) &
		    ~((1ull << leaf->shift) - 1)) |
		   (va & ((1ull << leaf->shift) - 1) & ~0xfffull);
	if ((desc >> 52) & 1) {
		unsigned n = cont_entries(gshift, lvl);

		leaf->shift += __builtin_ctz(n);
		/* reading the group costs: only strict mode reports it */
		leaf->cont_mixed = poe_opts.strict &&
				   !cont_uniform(slot_pa, n, desc);
	} else {
		leaf->cont_mixed = false;
	}
	return true;
}

void poe_tlb_flush(struct poe_vcpu *v)
{
	memset(v->tlb, 0, sizeof(v->tlb));
	poe_fetch_forget(v);
}

/* Drop the entries whose leaf overlaps r. */
static void invalidate(struct poe_vcpu *v, const struct sys_tlbi_range *r)
{
	unsigned i;

	if (sys_tlbi_range_all(r)) {
		memset(v->tlb, 0, sizeof(v->tlb));
		return;
	}
	for (i = 0; i < POE_TLB_SIZE; i++) {
		struct poe_tlb_entry *e = &v->tlb[i];
		uint64_t size, base;

		if (!e->tag)
			continue;
		size = 1ull << e->shift;
		base = (e->tag & r->mask) & ~(size - 1);
		if (base < r->end && r->start < base + size)
			e->tag = 0;
	}
}

void poe_tlb_invalidate(struct poe_vcpu *v, const struct sys_tlbi_range *r)
{
	invalidate(v, r);
	poe_fetch_forget(v);
}

void poe_tlb_broadcast(const struct sys_tlbi_range *r)
{
	unsigned i;

	g_mutex_lock(&ring_lock);
	ring[(poe_tlb_ring_gen + 1) % RING] = *r;
	__atomic_store_n(&poe_tlb_ring_gen, poe_tlb_ring_gen + 1,
			 __ATOMIC_RELEASE);
	g_mutex_unlock(&ring_lock);
	for (i = 0; i < poe_max_vcpus(); i++)
		poe_fetch_forget(poe_vcpu(i));
}

/* Apply the broadcast invalidations v has not seen yet. */
static void catch_up(struct poe_vcpu *v, uint64_t gen)
{
	uint64_t g;

	g_mutex_lock(&ring_lock);
	gen = poe_tlb_ring_gen;
	if (v->tlb_gen > gen || gen - v->tlb_gen >= RING)
		memset(v->tlb, 0, sizeof(v->tlb));
	else
		for (g = v->tlb_gen + 1; g <= gen; g++)
			invalidate(v, &ring[g % RING]);
	g_mutex_unlock(&ring_lock);
	v->tlb_gen = gen;
}

void poe_mmu_changed(struct poe_vcpu *v, int half)
{
	unsigned i;

	v->mmu_valid = false;
	if (half < 0) {
		poe_tlb_flush(v);
		return;
	}
	/* a TTBRx write only changes the translations of its half */
	for (i = 0; i < POE_TLB_SIZE; i++)
		if (((v->tlb[i].tag >> 55) & 1) == (unsigned)half)
			v->tlb[i].tag = 0;
	poe_fetch_forget(v);
}

const struct poe_tlb_entry *poe_tlb_lookup(struct poe_vcpu *v, uint64_t va)
{
	uint64_t tag = (va & ~0xfffull) | 1;
	struct poe_tlb_entry *e = &v->tlb[(va >> 12) % POE_TLB_SIZE];
	uint64_t gen = __atomic_load_n(&poe_tlb_ring_gen, __ATOMIC_ACQUIRE);
	struct poe_leaf leaf;

	if (v->tlb_gen != gen)
		catch_up(v, gen);	/* broadcast TLBIs since the last */
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
	e->shift = leaf.shift;
	e->cont_mixed = leaf.cont_mixed;
	e->ng = (leaf.desc >> 11) & 1;
	e->pa = leaf.pa;
	return e;
}

bool poe_va_to_pa(struct poe_vcpu *v, uint64_t va, uint64_t *pa)
{
	const struct poe_tlb_entry *e = poe_tlb_lookup(v, va);

	if (!e)
		return false;
	*pa = e->pa | (va & 0xfff);
	return true;
}

/*
 * The address a pointer-authenticated pointer (LDRAA/LDRAB) points to:
 * the PAC field, bits [54:VA size] and, without TBI, [63:56], replaced by
 * copies of bit 55, as a successful authentication leaves it. (A failed
 * one makes QEMU fault on the unmodified address itself.)
 */
uint64_t poe_strip_pac(struct poe_vcpu *v, uint64_t va)
{
	bool hi = (va >> 55) & 1;
	unsigned tsz, top;
	uint64_t mask;

	poe_mmu_load(v);
	tsz = hi ? (v->tcr >> 16) & 63 : v->tcr & 63;
	top = ((v->tcr >> (hi ? 38 : 37)) & 1) ? 55 : 63;
	if (tsz < 12)
		return va;
	mask = GENMASK(top, 64 - tsz);
	return hi ? va | mask : va & ~mask;
}

/*
 * The ASID of the translations in use: TTBR1's if TCR_EL1.A1 (bit 22)
 * is set (Linux), else TTBR0's; 16 bits if TCR_EL1.AS (bit 36) is, else 8.
 */
unsigned poe_asid(struct poe_vcpu *v)
{
	uint64_t ttbr;

	poe_mmu_load(v);
	ttbr = (v->tcr >> 22) & 1 ? v->ttbr1 : v->ttbr0;
	return (ttbr >> 48) & ((v->tcr >> 36) & 1 ? 0xffff : 0xff);
}

uint64_t poe_tlb_generation(void)
{
	return __atomic_load_n(&poe_tlb_ring_gen, __ATOMIC_ACQUIRE);
}
