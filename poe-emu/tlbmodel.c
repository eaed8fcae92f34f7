/*
 * tlbmodel.c - a data TLB model for the bench counters (option tlb=on)
 *
 * What kpkeys' bench wants to see is TLB reach: a linear map kept in 2M
 * blocks costs fewer TLB misses than one split into pages. QEMU's own TLB
 * says nothing about that (it holds one page per entry, however large
 * the mapping), so the plugin models the TLBs of a real core, for
 * counting only, never for a translation.
 *
 * Per vCPU, an L1 data TLB and an L2 TLB, each ENTRIES entries in sets of
 * WAYS, least recently used replacement (exact, by a use counter), looked
 * up for every data access QEMU reports to the plugin's memory callback
 * (every instruction gets one with tlb=on, so SIMD, atomics and whatever
 * QEMU's helpers report are included). L1 first, then L2 (which fills
 * L1), then a walk (which fills both): the soft TLB of walk.c, which walks
 * the guest's tables on its own misses. The counts go to count.c, by the
 * EL of the code that made the access.
 *
 * An entry covers the whole leaf the walk found: a page, a contiguous
 * group (the Contiguous bit makes it one larger leaf, as hardware may
 * cache it) or a block. Its set is picked by the VA bits above the leaf's
 * size, so a lookup probes one set per leaf size the level holds (one
 * way to keep several page sizes in one set-associative array); a fully
 * associative level has one set. Entries of non-global leaves (nG) are
 * tagged by the ASID in use, global ones match every ASID; no VMID (no
 * EL2 here).
 *
 * Invalidation follows the architecture for what the operand names
 * (sysdec.c): by VA and range, the entries whose leaf overlaps it, of the
 * named ASID (and global ones) or of every ASID; by ASID, that ASID's
 * non-global entries; VMALLE1 and anything else, everything. A local TLBI
 * reaches the issuer's model at once, a broadcast one every vCPU's before
 * its next access: a ring of recent broadcasts, as walk.c does for the
 * soft TLB (a vCPU that fell more than the ring behind empties its TLBs).
 * Register writes: hardware invalidates nothing when TTBRx, TCR or SCTLR
 * change (software must TLBI), and ASIDs keep a context switch from
 * needing that, so a TTBRx write that only changes the ASID, or the table
 * base along with the ASID in use (Linux's switch_mm), drops nothing. A
 * TCR_EL1 write, an SCTLR_EL1 write that turns the MMU on or off, and a
 * TTBRx write that changes the table base under the ASID the old tables
 * were used with, empty what they may have made stale: the model is
 * never left holding translations of tables the guest no longer uses
 * under the same tag, at the price of a few more misses than hardware
 * would have in code that gets away without a TLBI.
 *
 * Not modelled: the instruction side (fetches do not look anything up,
 * so L2 holds data translations only), walk caches, prefetch, replacement
 * other than LRU, the speculative fills of a real core.
 */
#include <string.h>

#include "tlbmodel.h"
#include "count.h"
#include "walk.h"

#define likely(x)	__builtin_expect(!!(x), 1)
#define unlikely(x)	__builtin_expect(!!(x), 0)

#define VA_BITS		((1ull << 56) - 1)	/* VA[55:0]; 55: the half */
#define HINTS		64
#define NO_ASID		0x10000u	/* no TTBRx write seen yet */

struct tlbm_entry {
	uint64_t base;		/* VA[55:shift] of the leaf, the rest 0 */
	uint64_t used;		/* the level's clock when last used; 0: empty */
	uint16_t asid;		/* if !global */
	uint8_t shift;		/* log2 of the size the leaf maps */
	bool global;
};

struct tlbm_level {
	struct tlbm_entry *e;	/* set s, way w: e[s * ways + w] */
	unsigned sets, ways;
	uint64_t clock;
	uint64_t shifts;	/* bit n: some entry maps 2^n bytes */
	unsigned held[64];	/* entries by shift */
	/*
	 * The slot last found for a 4K page (by VA[17:12]): tried first, so
	 * that a lookup that hits does not probe every size class and scan
	 * a fully associative level. Only a shortcut: an entry found there
	 * is checked like any other, and the same entry would be found
	 * without it.
	 */
	uint16_t hint[HINTS];
};

struct tlbm_vcpu {
	struct tlbm_level l1, l2;
	uint64_t gen;		/* broadcast invalidations applied */
	unsigned base_asid[2];	/* ASID in use when TTBRx was written */
} __attribute__((aligned(64)));

/* what a TLBI invalidates */
struct tlbm_inval {
	struct sys_tlbi_range r;
	bool by_asid;		/* asid's entries (global ones too by VA) */
	uint16_t asid;
};

static struct tlbm_vcpu *models;
static unsigned n_models;

/* recent broadcast invalidations; entry g % RING is number g */
#define RING 64
static struct tlbm_inval ring[RING];
static uint64_t ring_gen;	/* broadcasts so far (atomic) */
static GMutex ring_lock;

static void level_init(struct tlbm_level *l, const struct poe_tlb_geometry *g)
{
	l->ways = g->ways;
	l->sets = g->entries / g->ways;
	l->e = g_new0(struct tlbm_entry, g->entries);
}

static void level_flush(struct tlbm_level *l)
{
	memset(l->e, 0, sizeof(*l->e) * l->sets * l->ways);
	memset(l->held, 0, sizeof(l->held));
	l->shifts = 0;
}

static void reset(struct tlbm_vcpu *m)
{
	level_flush(&m->l1);
	level_flush(&m->l2);
	m->base_asid[0] = m->base_asid[1] = NO_ASID;
}

void tlbm_init(unsigned max_vcpus)
{
	unsigned i;

	models = NULL;
	n_models = 0;
	if (!poe_opts.tlb)
		return;
	models = g_aligned_alloc0(max_vcpus, sizeof(*models), 64);
	n_models = max_vcpus;
	for (i = 0; i < max_vcpus; i++) {
		level_init(&models[i].l1, &poe_opts.tlb_l1);
		level_init(&models[i].l2, &poe_opts.tlb_l2);
		reset(&models[i]);
	}
}

bool tlbm_enabled(void)
{
	return models != NULL;
}

static bool match(const struct tlbm_entry *e, uint64_t va, unsigned asid)
{
	return e->used && !((va ^ e->base) >> e->shift) &&
	       (e->global || e->asid == asid);
}

static struct tlbm_entry *set_of(struct tlbm_level *l, uint64_t va,
				 unsigned shift)
{
	return &l->e[((va >> shift) & (l->sets - 1)) * l->ways];
}

static struct tlbm_entry *find_in_set(struct tlbm_level *l, uint64_t va,
				      unsigned shift, unsigned asid)
{
	struct tlbm_entry *set = set_of(l, va, shift);
	unsigned w;

	for (w = 0; w < l->ways; w++)
		if (set[w].shift == shift && match(&set[w], va, asid))
			return &set[w];
	return NULL;
}

/* one set: every entry, whatever its size, in one pass */
static struct tlbm_entry *find_in_all(struct tlbm_level *l, uint64_t va,
				      unsigned asid)
{
	unsigned w;

	for (w = 0; w < l->ways; w++)
		if (match(&l->e[w], va, asid))
			return &l->e[w];
	return NULL;
}

/* The entry that translates va under asid, now the most recently used. */
static struct tlbm_entry *find(struct tlbm_level *l, uint64_t va,
			       unsigned asid)
{
	unsigned h = (va >> 12) % HINTS;
	struct tlbm_entry *e = &l->e[l->hint[h]];
	uint64_t sizes;

	if (!match(e, va, asid)) {
		e = NULL;
		if (l->sets == 1)
			e = find_in_all(l, va, asid);
		for (sizes = l->shifts; l->sets > 1 && sizes && !e;
		     sizes &= sizes - 1)
			e = find_in_set(l, va, __builtin_ctzll(sizes), asid);
		if (!e)
			return NULL;
		l->hint[h] = e - l->e;
	}
	e->used = ++l->clock;
	return e;
}

static void drop(struct tlbm_level *l, struct tlbm_entry *e)
{
	e->used = 0;
	if (!--l->held[e->shift])
		l->shifts &= ~(1ull << e->shift);
}

/* Put the leaf of va in its set, in place of an empty or the LRU entry. */
static void fill(struct tlbm_level *l, uint64_t va, unsigned shift,
		 bool global, unsigned asid)
{
	struct tlbm_entry *set = set_of(l, va, shift), *victim;
	uint64_t oldest = ~0ull;	/* an empty entry (0) is the oldest */
	unsigned w, v = 0;

	for (w = 0; w < l->ways; w++) {
		if (set[w].used < oldest) {
			oldest = set[w].used;
			v = w;
		}
	}
	victim = &set[v];
	if (victim->used)
		drop(l, victim);
	victim->base = va & ~((1ull << shift) - 1);
	victim->shift = shift;
	victim->global = global;
	victim->asid = global ? 0 : asid;
	victim->used = ++l->clock;
	if (!l->held[shift]++)
		l->shifts |= 1ull << shift;
	l->hint[(va >> 12) % HINTS] = victim - l->e;
}

static bool covered(const struct tlbm_entry *e, const struct tlbm_inval *iv)
{
	uint64_t size = 1ull << e->shift;
	uint64_t base = (e->base & iv->r.mask) & ~(size - 1);

	if (!(base < iv->r.end && iv->r.start < base + size))
		return false;
	if (!iv->by_asid)
		return true;
	/* by ASID alone: not the global entries; by VA: those too */
	return e->global ? !sys_tlbi_range_all(&iv->r) : e->asid == iv->asid;
}

static void level_invalidate(struct tlbm_level *l, const struct tlbm_inval *iv)
{
	unsigned i, w;
	uint64_t sizes;

	if (!iv->by_asid && sys_tlbi_range_all(&iv->r)) {
		level_flush(l);
		return;
	}
	if (iv->r.end - iv->r.start == 1) {
		/* by VA: only the sets that VA indexes can hold it */
		for (sizes = l->shifts; sizes; sizes &= sizes - 1) {
			unsigned shift = __builtin_ctzll(sizes);
			struct tlbm_entry *set = set_of(l, iv->r.start, shift);

			for (w = 0; w < l->ways; w++)
				if (set[w].used && set[w].shift == shift &&
				    covered(&set[w], iv))
					drop(l, &set[w]);
		}
		return;
	}
	for (i = 0; i < l->sets * l->ways; i++)
		if (l->e[i].used && covered(&l->e[i], iv))
			drop(l, &l->e[i]);
}

static void invalidate(struct tlbm_vcpu *m, const struct tlbm_inval *iv)
{
	level_invalidate(&m->l1, iv);
	level_invalidate(&m->l2, iv);
}

/* Apply the broadcast invalidations m has not seen yet. */
static void catch_up(struct tlbm_vcpu *m)
{
	uint64_t gen, g;

	g_mutex_lock(&ring_lock);
	gen = ring_gen;
	if (gen - m->gen >= RING) {
		level_flush(&m->l1);
		level_flush(&m->l2);
	} else {
		for (g = m->gen + 1; g <= gen; g++)
			invalidate(m, &ring[g % RING]);
	}
	g_mutex_unlock(&ring_lock);
	m->gen = gen;
}

void tlbm_access(unsigned vcpu, unsigned el, uint64_t va)
{
	struct tlbm_vcpu *m = &models[vcpu];
	struct poe_vcpu *v = poe_vcpu(vcpu);
	const struct poe_tlb_entry *leaf;
	const struct tlbm_entry *e;
	uint64_t key = va & VA_BITS;
	unsigned asid;

	if (unlikely(m->gen != __atomic_load_n(&ring_gen, __ATOMIC_ACQUIRE)))
		catch_up(m);
	asid = poe_asid(v);
	if (likely(find(&m->l1, key, asid) != NULL)) {
		count_tlb(vcpu, el, COUNT_TLB_L1);
		return;
	}
	e = find(&m->l2, key, asid);
	if (e) {
		fill(&m->l1, key, e->shift, e->global, e->asid);
		count_tlb(vcpu, el, COUNT_TLB_L2);
		return;
	}
	leaf = poe_tlb_lookup(v, va);
	if (!leaf)
		return;		/* no stage 1 (MMU off): no TLB */
	fill(&m->l2, key, leaf->shift, !leaf->ng, asid);
	fill(&m->l1, key, leaf->shift, !leaf->ng, asid);
	count_tlb(vcpu, el, COUNT_TLB_WALK);
}

/*
 * After the access; userdata non-NULL: the instruction is in the TTBR1
 * half (EL1), else the vCPU's EL says (the idmap runs at EL1 in TTBR0's).
 * It may walk, which reads the translation registers: R_REGS.
 */
static void mem_cb(unsigned vcpu, qemu_plugin_meminfo_t info, uint64_t va,
		   void *ud)
{
	(void)info;
	if (vcpu >= n_models)
		return;
	tlbm_access(vcpu, ud || poe_vcpu(vcpu)->el ? 1 : 0, va);
}

void tlbm_instrument_insn(struct qemu_plugin_insn *insn, uint64_t vaddr)
{
	if (!models)
		return;
	qemu_plugin_register_vcpu_mem_cb(insn, mem_cb, QEMU_PLUGIN_CB_R_REGS,
					 QEMU_PLUGIN_MEM_RW,
					 (void *)(uintptr_t)(vaddr >> 63));
}

void tlbm_tlbi(struct poe_vcpu *v, uint32_t word, uint64_t xt,
	       const struct sys_tlbi_range *r, bool bcast)
{
	struct tlbm_inval iv = { .r = *r };

	if (!models)
		return;
	iv.by_asid = sys_tlbi_asid(word, xt, &iv.asid);
	if (!bcast) {
		invalidate(&models[v->index], &iv);
		return;
	}
	g_mutex_lock(&ring_lock);
	ring[(ring_gen + 1) % RING] = iv;
	__atomic_store_n(&ring_gen, ring_gen + 1, __ATOMIC_RELEASE);
	g_mutex_unlock(&ring_lock);
}

/* Drop the entries of one half of the address space (VA bit 55). */
static void drop_half(struct tlbm_level *l, unsigned half)
{
	unsigned i;

	for (i = 0; i < l->sets * l->ways; i++)
		if (l->e[i].used && ((l->e[i].base >> 55) & 1) == half)
			drop(l, &l->e[i]);
}

/*
 * TTBRx written: if its table base changes, the old tables' entries are
 * stale only if they are tagged as the new ones will be, i.e. the ASID in
 * use after the write is the one the old base was used with (unknown
 * before the first write since reset: assumed the same).
 */
static void ttbr_write(struct tlbm_vcpu *m, struct poe_vcpu *v, bool ttbr1,
		       uint64_t val)
{
	uint64_t baddr = 0x0000fffffffffffeull;
	uint64_t old = ttbr1 ? v->ttbr1 : v->ttbr0;
	bool a1 = (v->tcr >> 22) & 1;
	uint64_t asid_reg = a1 == ttbr1 ? val : a1 ? v->ttbr1 : v->ttbr0;
	unsigned asid = (asid_reg >> 48) & ((v->tcr >> 36) & 1 ? 0xffff : 0xff);

	if (((old ^ val) & baddr) &&
	    (asid == m->base_asid[ttbr1] || m->base_asid[ttbr1] == NO_ASID)) {
		drop_half(&m->l1, ttbr1);
		drop_half(&m->l2, ttbr1);
	}
	m->base_asid[ttbr1] = asid;
}

void tlbm_mmu_write(struct poe_vcpu *v, unsigned reg, uint64_t val)
{
	struct tlbm_vcpu *m;

	if (!models)
		return;
	m = &models[v->index];
	poe_mmu_load(v);	/* the values before this write */
	switch (reg) {
	case SR_TTBR0_EL1:
	case SR_TTBR1_EL1:
		ttbr_write(m, v, reg == SR_TTBR1_EL1, val);
		break;
	case SR_SCTLR_EL1:
		/* Linux rewrites it on context switches (PAC, MTE bits) */
		if (!((v->sctlr ^ val) & 1))
			break;
		/* fall through */
	default:
		level_flush(&m->l1);
		level_flush(&m->l2);
	}
}

void tlbm_reset(struct poe_vcpu *v)
{
	if (models)
		reset(&models[v->index]);
}
