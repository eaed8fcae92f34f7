/*
 * test-tlb.c - host test of the TLB model (tlbmodel.c, tlb=on) through the
 * whole plugin on the fake QEMU API (tests/fake-qemu.c)
 *
 * Guest tables in the fake RAM (4K granule, 48-bit VAs, ASID in TTBR1,
 * 16 bits); accesses are loads "executed" with the address QEMU would
 * report to the memory callback. Where the model found each translation
 * (L1, L2, a walk) is read back from the bench record of a row around the
 * access. Checks: the options; a block leaf covers its 2M (one walk for
 * accesses spread over it), pages walk each, a contiguous group once;
 * LRU and capacity in sets and in a fully associative L1; TLBI by VA
 * (a block goes whole), by ASID (global entries stay), all-ASID, VMALL,
 * broadcast and local; ASID tags across TTBR writes, a table base changed
 * under one ASID, TCR/SCTLR writes, PSCI CPU_OFF; counts by EL; the
 * record fields only with tlb=on.
 * Prints TAP and "N passed, N failed"; exits 1 on failure.
 *
 * "test-tlb cost" (make tlb-cost) measures instead what the model costs
 * per access on this host, for a few access patterns.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fake-qemu.h"
#include "tap.h"
#include "../count.h"
#include "../tlbmodel.h"

#define LDR_X1_X2	0xf9400041u	/* ldr x1, [x2] */
#define MARKER		0xd5032ebfu	/* hint #0x75 */
#define ERET		0xd69f03e0u
#define HVC0		0xd4000002u
#define TLBI_VAE1_X1	0xd5088721u
#define TLBI_VALE1_X1	0xd50887a1u
#define TLBI_VAE1IS_X1	0xd5088321u
#define TLBI_VAAE1_X1	0xd5088761u
#define TLBI_ASIDE1_X1	0xd5088741u
#define TLBI_VMALLE1	0xd508871fu
#define MSR_TCR_X1	0xd5182041u
#define MSR_SCTLR_X1	0xd5181001u
#define MSR_TTBR0_X1	0xd5182001u
#define MSR_TTBR1_X1	0xd5182021u

#define KT	0xffff000000100000ull	/* kernel text */
#define KP	0xffff000000400000ull	/* kernel data, 4K pages */
#define KB	0xffff000000800000ull	/* kernel data, a 2M block */
#define KC	0xffff000000a00000ull	/* kernel data, contiguous */
#define UT	0x0000000000400000ull	/* user text */
#define UP	0x0000000000600000ull	/* user data, nG pages */

#define TCR	(16 | 16ull << 16 | 2ull << 30 | 1ull << 22 | 1ull << 36)
#define NG	(1ull << 11)
#define CONT	(1ull << 52)
#define AF	(1ull << 10)
#define NAME_PA	0x1000

static uint64_t next_table, root0, root1, root0b;
static char bench[] = "/tmp/poe-tlb-test.XXXXXX";

static uint64_t new_table(void)
{
	uint64_t t = next_table;

	memset(fake_mem + t, 0, 4096);
	next_table += 4096;
	return t;
}

/* the descriptor slot of va at level lvl (1-3), with tables above it */
static uint64_t slot_at(uint64_t root, uint64_t va, int lvl)
{
	uint64_t table = root, s;
	int l;

	for (l = 0;; l++) {
		s = table + ((va >> (39 - 9 * l)) & 511) * 8;
		if (l == lvl)
			return s;
		if (!(fake_rd64(s) & 1))
			fake_wr64(s, new_table() | 3);
		table = fake_rd64(s) & 0x0000fffffffff000ull;
	}
}

static uint64_t root_of(uint64_t va)
{
	return va >> 63 ? root1 : root0;
}

static void map_page(uint64_t va, uint64_t attrs)
{
	fake_wr64(slot_at(root_of(va), va, 3), 0x100000 | AF | attrs | 3);
}

static void map_block(uint64_t va, uint64_t attrs)
{
	fake_wr64(slot_at(root_of(va), va, 2), 0x200000 | AF | attrs | 1);
}

static void setup(unsigned ncpu, const char *extra)
{
	static bool made;
	char opts[256];
	unsigned i;

	if (!made)
		close(mkstemp(bench));
	made = true;
	snprintf(opts, sizeof(opts), "bench=%s,tlb=on%s", bench, extra);
	if (fake_install(ncpu, opts)) {
		printf("# install failed: %s\n", opts);
		exit(1);
	}
	fake_init_vcpus();
	memset(fake_mem, 0, FAKE_MEM);
	next_table = 0x10000;
	root0 = new_table();
	root1 = new_table();
	root0b = new_table();		/* other user tables: empty */
	for (i = 0; i < ncpu; i++) {
		*fake_sys(i, "TCR_EL1") = TCR;
		*fake_sys(i, "TTBR0_EL1") = root0;
		*fake_sys(i, "TTBR1_EL1") = root1 | 5ull << 48; /* ASID 5 */
		*fake_sys(i, "SCTLR_EL1") = 1;
	}
	map_page(KT, 0);
	map_page(UT, NG);
}

static const char *last_record(void)
{
	static char text[1 << 16];
	FILE *f = fopen(bench, "r");
	size_t len = f ? fread(text, 1, sizeof(text) - 1, f) : 0;
	char *line;

	if (f)
		fclose(f);
	text[len] = 0;
	line = strrchr(text, '\n');
	if (!line)
		return "";
	*line = 0;
	line = strrchr(text, '\n');
	return line ? line + 1 : text;
}

/* the value of " key=" in the last record, or -1 */
static long long field(const char *key)
{
	const char *rec = last_record(), *p;
	char pat[64];

	snprintf(pat, sizeof(pat), " %s=", key);
	p = strstr(rec, pat);
	return p ? atoll(p + strlen(pat)) : -1;
}

static void marker(unsigned cpu, uint64_t op)
{
	fake_poke(NAME_PA, "t", 2);
	fake_cpus[cpu].x[0] = COUNT_MAGIC | op;
	fake_cpus[cpu].x[1] = NAME_PA;
	fake_cpus[cpu].x[2] = 0;
	fake_exec(cpu, KT + 0x800, MARKER);
}

static void load(unsigned cpu, uint64_t pc, uint64_t va)
{
	fake_cpus[cpu].x[2] = va;
	fake_exec_mem(cpu, pc, LDR_X1_X2, va, false);
}

/*
 * One load of va by code at pc: where the model found it, 1 (L1), 2
 * (L2), 3 (a walk), 0 (not counted), from the EL the record says.
 */
static int where(unsigned cpu, uint64_t pc, uint64_t va)
{
	const char *el;
	char key[32];

	marker(cpu, COUNT_OP_BEGIN);
	load(cpu, pc, va);
	marker(cpu, COUNT_OP_END);
	el = field("tlb_access_el1") ? "el1" : "el0";
	snprintf(key, sizeof(key), "tlb_access_%s", el);
	if (field(key) != 1)
		return 0;
	snprintf(key, sizeof(key), "tlb_walk_%s", el);
	if (field(key))
		return 3;
	snprintf(key, sizeof(key), "tlb_l1_miss_%s", el);
	return field(key) ? 2 : 1;
}

/* EL1 loads, from kernel text: where each was found, as "3 1 2..." */
static const char *trace(unsigned cpu, const uint64_t *va, unsigned n)
{
	static char out[256];
	unsigned i;

	out[0] = 0;
	for (i = 0; i < n; i++)
		snprintf(out + strlen(out), sizeof(out) - strlen(out), "%s%d",
			 i ? " " : "", where(cpu, KT + 0x10, va[i]));
	return out;
}

static void sys_op(unsigned cpu, uint32_t word, uint64_t x1)
{
	fake_cpus[cpu].x[1] = x1;
	fake_exec(cpu, KT + 0x900, word);
}

/* MSR of a translation register: the plugin's callback, then QEMU's write */
static void msr(unsigned cpu, uint32_t word, const char *reg, uint64_t val)
{
	sys_op(cpu, word, val);
	*fake_sys(cpu, reg) = val;
}

static void to_el0(unsigned cpu)
{
	*fake_sys(cpu, "SPSR_EL1") = 0;
	fake_exec(cpu, KT + 0xa00, ERET);
}

static void to_el1(unsigned cpu)
{
	fake_discon(cpu, QEMU_PLUGIN_DISCON_EXCEPTION, UT, KT + 0x400);
}

static void options(void)
{
	static const char *const bad[] = {
		"tlb=on", "tlb_l1=48", "bench=/dev/null,tlb_l2=2048:8",
		"bench=/dev/null,tlb=on,tlb_l2=100:3",
		"bench=/dev/null,tlb=on,tlb_l2=96:8",
		"bench=/dev/null,tlb=on,tlb_l1=0",
		"bench=/dev/null,tlb=on,tlb_l1=4:0",
		"bench=/dev/null,tlb=on,tlb_l1=x",
		"bench=/dev/null,tlb=on,tlb_l1=48:",
		"bench=/dev/null,tlb=on,tlb_l1=131072",
	};
	unsigned i, refused = 0;
	int saved = dup(2), null = open("/dev/null", O_WRONLY);

	dup2(null, 2);		/* the plugin says why: expected */
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		refused += fake_install(1, bad[i]) != 0;
	dup2(saved, 2);
	close(saved);
	close(null);
	check(refused == sizeof(bad) / sizeof(bad[0]),
	      "refused: tlb=on without bench=, sizes without tlb=on, sizes "
	      "that do not make a power of two of sets");
	check(fake_install(1, "bench=/dev/null,tlb=on,tlb_l1=32:4,"
			      "tlb_l2=1536:6") == 0,
	      "accepted: tlb_l1=32:4, tlb_l2=1536:6 (256 sets)");
	check(fake_install(1, "bench=/dev/null") == 0 &&
	      fake_mem_cbs_on(KT, LDR_X1_X2) == 0,
	      "without tlb=on: no memory callback");
	check(fake_install(1, "bench=/dev/null,tlb=on") == 0 &&
	      fake_mem_cbs_on(KT, LDR_X1_X2) == 1,
	      "with tlb=on: a memory callback");
}

static void reach(void)
{
	unsigned i;

	setup(1, "");
	map_block(KB, 0);
	for (i = 0; i < 16; i++) {
		map_page(KP + i * 0x1000, 0);
		map_page(KC + i * 0x1000, CONT);
	}
	marker(0, COUNT_OP_BEGIN);
	for (i = 0; i < 64; i++)
		load(0, KT + 0x10, KB + i * 0x8000);
	marker(0, COUNT_OP_END);
	check(field("tlb_access_el1") == 64 && field("tlb_l1_miss_el1") == 1 &&
	      field("tlb_walk_el1") == 1 && field("tlb_access_el0") == 0,
	      "64 loads spread over a 2M block: one L1 miss, one walk");
	marker(0, COUNT_OP_BEGIN);
	for (i = 0; i < 64; i++)
		load(0, KT + 0x10, KP + (i % 16) * 0x1000 + (i / 16) * 8);
	marker(0, COUNT_OP_END);
	check(field("tlb_access_el1") == 64 && field("tlb_l1_miss_el1") == 16 &&
	      field("tlb_walk_el1") == 16,
	      "64 loads over 16 pages: 16 L1 misses, 16 walks");
	marker(0, COUNT_OP_BEGIN);
	for (i = 0; i < 64; i++)
		load(0, KT + 0x10, KC + (i % 16) * 0x1000);
	marker(0, COUNT_OP_END);
	check(field("tlb_l1_miss_el1") == 1 && field("tlb_walk_el1") == 1,
	      "64 loads over a contiguous group of 16 pages: one walk");
}

/* L1 4 entries in 2 sets, L2 8 in 4: 4K pages by VA[12] and VA[13:12] */
static void lru_sets(void)
{
	uint64_t p[9];
	static const unsigned n[9] = { 0, 2, 0, 4, 0, 2, 8, 0, 2 };
	const char *got;
	unsigned i;

	setup(1, ",tlb_l1=4:2,tlb_l2=8:2");
	for (i = 0; i < 16; i++)
		map_page(KP + i * 0x1000, 0);
	for (i = 0; i < 9; i++)
		p[i] = KP + n[i] * 0x1000;
	got = trace(0, p, 9);
	printf("# pages 0 2 0 4 0 2 8 0 2: %s\n", got);
	/*
	 * 4 replaces 2 in L1 (0 was used since: LRU, not FIFO); 2 comes
	 * back from L2; 8 replaces 0 in L2 set 0 (filled first), so 0 walks
	 * again, while 2 (L2 set 2) is still there
	 */
	check(!strcmp(got, "3 3 1 3 1 2 3 3 2"),
	      "LRU in a set of L1, capacity of a set of L2");
}

/* the default L1 (48 entries, fully associative) and L2 (2048, 8 ways) */
static void lru_full(void)
{
	uint64_t p[4];
	unsigned i;

	setup(1, "");
	for (i = 0; i < 64; i++)
		map_page(KP + i * 0x1000, 0);
	marker(0, COUNT_OP_BEGIN);
	for (i = 0; i < 48; i++)
		load(0, KT + 0x10, KP + i * 0x1000);
	marker(0, COUNT_OP_END);
	check(field("tlb_walk_el1") == 48, "48 pages: 48 walks");
	p[0] = KP;			/* still there */
	p[1] = KP + 48 * 0x1000;	/* replaces page 1, the LRU one */
	p[2] = KP;
	p[3] = KP + 1 * 0x1000;		/* from L2 */
	check(!strcmp(trace(0, p, 4), "1 3 1 2"),
	      "a fully associative L1 of 48 replaces its LRU entry");
	marker(0, COUNT_OP_BEGIN);
	for (i = 0; i < 64; i++)
		load(0, KT + 0x10, KP + i * 0x1000);
	marker(0, COUNT_OP_END);
	check(field("tlb_walk_el1") == 15, "64 pages: the 15 new ones walk");
	marker(0, COUNT_OP_BEGIN);
	for (i = 0; i < 64; i++)
		load(0, KT + 0x10, KP + i * 0x1000);
	marker(0, COUNT_OP_END);
	check(field("tlb_l1_miss_el1") == 64 && field("tlb_walk_el1") == 0,
	      "64 pages round again: every L1 lookup misses, L2 has them");
}

static void tlbi(void)
{
	uint64_t k = KP, k2 = KP + 0x1000, u = UP;

	setup(2, "");
	map_page(k, 0);
	map_page(k2, 0);
	map_block(KB, 0);
	map_page(u, NG);
	where(0, KT, k);
	where(0, KT, k2);
	sys_op(0, TLBI_VALE1_X1, k >> 12);
	check(where(0, KT, k) == 3 && where(0, KT, k2) == 1,
	      "TLBI VALE1: that page walks again, the next one stays");
	where(1, KT, k);
	sys_op(1, TLBI_VALE1_X1, k >> 12);
	check(where(0, KT, k) == 1, "a local TLBI on vCPU 1 leaves vCPU 0's");
	sys_op(1, TLBI_VAE1IS_X1, k >> 12);
	check(where(0, KT, k) == 3 && where(0, KT, k2) == 1,
	      "TLBI VAE1IS on vCPU 1 reaches vCPU 0");
	where(0, KT, KB);
	sys_op(0, TLBI_VAE1_X1, (KB + 0x123000) >> 12);
	check(where(0, KT, KB + 0x1ff000) == 3,
	      "TLBI VAE1 of one page of a block drops the block");

	to_el0(0);
	where(0, UT, u);
	check(where(0, UT, u) == 1, "an EL0 nG page, then an L1 hit");
	to_el1(0);
	where(0, KT, k);
	sys_op(0, TLBI_ASIDE1_X1, 6ull << 48);
	check(where(0, KT, u) == 1, "TLBI ASIDE1 of ASID 6 keeps ASID 5's");
	sys_op(0, TLBI_VAE1_X1, 6ull << 48 | u >> 12);
	check(where(0, KT, u) == 1, "TLBI VAE1 for ASID 6 keeps ASID 5's");
	sys_op(0, TLBI_ASIDE1_X1, 5ull << 48);
	check(where(0, KT, u) == 3 && where(0, KT, k) == 1,
	      "TLBI ASIDE1 of ASID 5 drops its page, not a global one");
	sys_op(0, TLBI_VAE1_X1, 6ull << 48 | k >> 12);
	check(where(0, KT, k) == 3,
	      "TLBI VAE1 (any ASID) drops a global entry at its VA");
	sys_op(0, TLBI_VAAE1_X1, u >> 12);
	check(where(0, KT, u) == 3, "TLBI VAAE1 drops every ASID's");
	sys_op(0, TLBI_VMALLE1, 0);
	check(where(0, KT, k2) == 3 && where(0, KT, u) == 3,
	      "TLBI VMALLE1 drops everything");
}

static void registers(void)
{
	uint64_t k = KP, u = UP;

	setup(1, "");
	map_page(k, 0);
	map_page(u, NG);
	msr(0, MSR_TTBR0_X1, "TTBR0_EL1", root0);	/* used under ASID 5 */
	where(0, KT, k);
	where(0, KT, u);
	msr(0, MSR_TTBR1_X1, "TTBR1_EL1", root1 | 6ull << 48);
	check(where(0, KT, u) == 3 && where(0, KT, k) == 1,
	      "ASID 6: ASID 5's nG entry does not match, a global one does");
	msr(0, MSR_TTBR1_X1, "TTBR1_EL1", root1 | 5ull << 48);
	check(where(0, KT, u) == 1, "back to ASID 5: its entry was kept");
	/* a context switch as Linux does it: ASID, then TTBR0's base */
	msr(0, MSR_TTBR1_X1, "TTBR1_EL1", root1 | 6ull << 48);
	msr(0, MSR_TTBR0_X1, "TTBR0_EL1", root0b);
	msr(0, MSR_TTBR1_X1, "TTBR1_EL1", root1 | 5ull << 48);
	msr(0, MSR_TTBR0_X1, "TTBR0_EL1", root0);
	check(where(0, KT, u) == 1,
	      "switch_mm there and back (ASID with each base): kept");
	msr(0, MSR_TTBR0_X1, "TTBR0_EL1", root0b);
	msr(0, MSR_TTBR0_X1, "TTBR0_EL1", root0);
	check(where(0, KT, u) == 3 && where(0, KT, k) == 1,
	      "TTBR0's base changed under one ASID: its half dropped");
	msr(0, MSR_SCTLR_X1, "SCTLR_EL1", 1 | 1ull << 31);
	check(where(0, KT, k) == 1, "an SCTLR_EL1 write keeping M: kept");
	msr(0, MSR_TCR_X1, "TCR_EL1", TCR);
	check(where(0, KT, k) == 3, "a TCR_EL1 write empties the model");
	msr(0, MSR_SCTLR_X1, "SCTLR_EL1", 0);
	check(where(0, KT, k) == 0, "MMU off: not counted");
	msr(0, MSR_SCTLR_X1, "SCTLR_EL1", 1);
	check(where(0, KT, k) == 3, "MMU on again: the model was emptied");
	fake_cpus[0].x[0] = 0x84000002;		/* PSCI CPU_OFF */
	fake_exec(0, KT + 0xb00, HVC0);
	*fake_sys(0, "TCR_EL1") = TCR;
	check(where(0, KT, k) == 3, "PSCI CPU_OFF empties the model");
}

static void by_el(void)
{
	unsigned i;

	setup(1, "");
	map_page(KP, 0);
	map_page(UP, NG);
	marker(0, COUNT_OP_BEGIN);
	to_el0(0);
	for (i = 0; i < 3; i++)
		load(0, UT + 0x10, UP + i * 8);
	to_el1(0);
	for (i = 0; i < 2; i++)
		load(0, KT + 0x10, KP + i * 8);
	load(0, UT + 0x20, UP);		/* EL1 code in the TTBR0 half */
	marker(0, COUNT_OP_END);
	printf("# %s\n", last_record());
	check(field("tlb_access_el0") == 3 && field("tlb_walk_el0") == 1 &&
	      field("tlb_l1_miss_el0") == 1 && field("tlb_access_el1") == 3 &&
	      field("tlb_walk_el1") == 1 && field("tlb_l1_miss_el1") == 1,
	      "counted by the EL of the code (the idmap's at EL1)");
	check(strstr(last_record(), " dmb=0 tlb_access_el0=3 tlb_access_el1=3 "
		     "tlb_l1_miss_el0=1 tlb_l1_miss_el1=1 tlb_walk_el0=1 "
		     "tlb_walk_el1=1") != NULL,
	      "the record's TLB fields, after dmb");
	fake_exit();
	check(strstr(last_record(), "poe-bench-total:") &&
	      strstr(last_record(), " tlb_access_el0=3 "),
	      "the total line has them too");
}

static void without(void)
{
	char opts[128];

	snprintf(opts, sizeof(opts), "bench=%s", bench);
	fake_install(1, opts);
	fake_init_vcpus();
	marker(0, COUNT_OP_BEGIN);
	marker(0, COUNT_OP_END);
	check(strstr(last_record(), " dmb=0") &&
	      !strstr(last_record(), "tlb_"),
	      "without tlb=on: no TLB field in the record");
}

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec * 1e-9;
}

/*
 * ns per access of the model (the memory callback's work, without QEMU's
 * call into it) for n accesses to the pages page(i), best of 3 runs
 */
static void cost_of(const char *what, uint64_t (*page)(unsigned i))
{
	const unsigned n = 1u << 22;
	double best = 1e9, t;
	unsigned run, i;

	for (run = 0; run < 3; run++) {
		t = now();
		for (i = 0; i < n; i++)
			tlbm_access(0, 1, page(i));
		t = now() - t;
		if (t < best)
			best = t;
	}
	printf("%-58s %6.1f ns\n", what, best * 1e9 / n);
}

static uint64_t one_page(unsigned i)
{
	return KP + (i & 0x1f8);
}

static uint64_t pages_32(unsigned i)
{
	return KP + (i % 32) * 0x1000 + (i & 0x38);
}

/* 40 pages 64 apart: one hint slot, the scan of the 48 entries */
static uint64_t pages_40_apart(unsigned i)
{
	return KP + (i % 40) * 0x40000;
}

static uint64_t pages_256(unsigned i)
{
	return KP + (i % 256) * 0x1000;
}

static uint64_t pages_4096(unsigned i)
{
	return KP + (i % 4096) * 0x1000;
}

static uint64_t in_block(unsigned i)
{
	return KB + (i * 0x9e3779b1u) % 0x200000;
}

/* 9 of 10 to 8 hot pages, the rest spread over 2048 */
static uint64_t mixed(unsigned i)
{
	uint32_t h = i * 0x9e3779b1u;

	if (h % 10)
		return KP + ((h >> 8) % 8) * 0x1000;
	return KP + ((h >> 8) % 2048) * 0x1000;
}

static int cost(void)
{
	unsigned i;

	setup(1, "");
	for (i = 0; i < 0x40000 / 0x1000 * 40; i++)
		map_page(KP + i * 0x1000, 0);
	map_block(KB, 0);
	where(0, KT, KP);		/* registers read: poe_asid() */
	printf("TLB model, default sizes (L1 48 fully associative, "
	       "L2 2048 8-way):\n");
	cost_of("1 page (L1 hit, first try)", one_page);
	cost_of("32 pages round (L1 hits, first try)", pages_32);
	cost_of("40 pages 256K apart (L1 hits after a scan)", pages_40_apart);
	cost_of("random over a 2M block (L1 hit, first try)", in_block);
	cost_of("256 pages round (L1 misses, L2 hits)", pages_256);
	cost_of("4096 pages round (L2 misses: soft TLB, walks in fake RAM)",
		pages_4096);
	cost_of("9/10 to 8 pages, 1/10 over 2048 pages", mixed);
	unlink(bench);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "cost"))
		return cost();
	printf("TAP version 13\n");
	options();
	reach();
	lru_sets();
	lru_full();
	tlbi();
	registers();
	by_el();
	without();
	unlink(bench);
	return tap_done();
}
