/*
 * test-plugin.c - scenarios through the whole plugin on the fake QEMU API
 *
 * Each scenario runs in a forked child (fresh plugin state, and strict
 * mode may exit): guest page tables are built in the fake guest RAM, the
 * plugin is installed with options, instructions are "executed" on one
 * vCPU or another, and what the plugin does is checked: an access it
 * denies moves the PC to the unfetchable address, and the handler's
 * MRS ESR/FAR/ELR_EL1 then read the syndrome the plugin built.
 * Prints TAP and "N passed, N failed"; exits 1 on failure.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fake-qemu.h"
#include "../regs.h"

#define BAD_PC		0x0080000000000000ull
#define NOP		0xd503201fu
#define ISB		0xd5033fdfu
#define ERET		0xd69f03e0u
#define HVC0		0xd4000002u
#define SMC0		0xd4000003u
#define STR_X1_X2	0xf9000041u	/* str x1, [x2] */
#define LDR_X1_X2	0xf9400041u	/* ldr x1, [x2] */
#define LDADD_X1_X3_X2	0xf8210043u	/* ldadd x1, x3, [x2] */
#define LDRAA_X1_X2	0xf8200441u	/* ldraa x1, [x2] */
#define STTR_X1_X2	0xf8000841u	/* sttr x1, [x2] */
#define LDTR_X1_X2	0xf8400841u	/* ldtr x1, [x2] */
#define SETPT_X2_X5_X1	0x19c114a2u	/* setpt [x2]!, x5!, x1 */
#define MSR_UAO_0	0xd500407fu	/* msr uao, #0 */
#define MSR_UAO_1	0xd500417fu	/* msr uao, #1 */
#define MSR_UAO_X3	0xd5184283u	/* msr uao, x3 */
#define PSTATE_UAO	(1ull << 23)
#define DC_ZVA_XZR	0xd50b743fu	/* dc zva, xzr */
#define DC_IVAC_X2	0xd5087622u	/* dc ivac, x2 */
#define SETP_X2_X5_X1	0x19c104a2u	/* setp [x2]!, x5!, x1 */
#define SETM_X2_X5_X1	0x19c144a2u	/* setm [x2]!, x5!, x1 */
#define SETE_X2_X5_X1	0x19c184a2u	/* sete [x2]!, x5!, x1 */
#define CPYFPWT_X6_X1_X2 0x19011446u	/* cpyfpwt [x6]!, [x1]!, x2! */
#define TLBI_VALE1IS_X1	0xd50883a1u
#define TLBI_VALE1_X1	0xd50887a1u
#define TLBI_RVALE1IS_X1 0xd50882a1u
#define MSR_POR_EL0_X3	0xd51ba283u
#define MSR_POR_EL1_X3	0xd518a283u
#define MSR_TCR2_X4	0xd5182064u
#define MSR_VBAR_X5	0xd518c005u
#define MRS_X0_POR_EL0	0xd53ba280u
#define MRS_X0_POR_EL1	0xd538a280u
#define LDR_X1_LIT_4K	0x58008001u	/* ldr x1, . + 0x1000 */
#define MRS_X0_TCR2	0xd5382060u
#define MRS_X0_ESR	0xd5385200u
#define MRS_X0_FAR	0xd5386000u
#define MRS_X0_ELR	0xd5384020u
#define MRS_X0_MMFR2	0xd5380740u	/* mrs x0, id_aa64mmfr2_el1 */
#define MRS_X0_MMFR3	0xd5380760u	/* mrs x0, id_aa64mmfr3_el1 */

/* guest layout: 4K granule, 48-bit VAs, tables from PA 0x10000 */
#define KT	0xffff000000100000ull	/* kernel text */
#define KD	0xffff000000200000ull	/* kernel data */
#define UT	0x0000000000400000ull	/* user text */
#define UD	0x0000000000600000ull	/* user data */
#define UT2	0x0000000000a00000ull	/* the user text again (pcrel) */
#define VECTORS	0xffff000000000000ull
#define PO(k)	((uint64_t)(k) << 60)
#define CONT	(1ull << 52)
#define TCR2_E0POE 4
#define TCR2_POE   8

static uint64_t next_table, root0, root1;

/* the level-3 descriptor slot of va, allocating tables on the way */
static uint64_t slot(uint64_t va)
{
	uint64_t table = va >> 63 ? root1 : root0, s;
	int lvl;

	for (lvl = 0;; lvl++) {
		s = table + ((va >> (39 - 9 * lvl)) & 511) * 8;
		if (lvl == 3)
			return s;
		if (!(fake_rd64(s) & 1)) {
			fake_wr64(s, next_table | 3);
			memset(fake_mem + next_table, 0, 4096);
			next_table += 4096;
		}
		table = fake_rd64(s) & 0x0000fffffffff000ull;
	}
}

/* map the 4K page at va (output address 0x100000 + low bits) */
static void map(uint64_t va, uint64_t attrs)
{
	fake_wr64(slot(va), 0x100000 | (va & 0xff000) | attrs | 3 | 1 << 10);
}

/* map the 2M block at va (a level-2 block descriptor) */
static void map_block(uint64_t va, uint64_t attrs)
{
	uint64_t s = slot(va) & ~0xfffull;	/* the level-3 table... */
	uint64_t table = va >> 63 ? root1 : root0, d;
	int lvl;

	(void)s;
	for (lvl = 0; lvl < 2; lvl++) {		/* ...is replaced */
		d = fake_rd64(table + ((va >> (39 - 9 * lvl)) & 511) * 8);
		table = d & 0x0000fffffffff000ull;
	}
	fake_wr64(table + ((va >> 21) & 511) * 8, 0x200000 | attrs | 1 | 1 << 10);
}

static void setup(unsigned ncpu, const char *opts)
{
	unsigned i;

	if (fake_install(ncpu, opts)) {
		printf("# install failed\n");
		exit(1);
	}
	fake_init_vcpus();
	/* different values, so that the plugin reads them from the stand-in
	 * of QEMU's CPU object after checking them (regs.c); tests set the
	 * registers they use */
	for (i = 0; i < ncpu; i++) {
		unsigned r;

		for (r = 0; r < 31; r++)
			fake_cpus[i].x[r] = 0x5a5a000000000000ull | r << 12 | i;
		fake_cpus[i].sp = 0x5a5a0000ffff0000ull | i;
	}
	memset(fake_mem, 0, 0x100000);
	next_table = 0x10000;
	root0 = next_table;
	root1 = next_table + 4096;
	next_table += 8192;
	for (i = 0; i < ncpu; i++) {
		*fake_sys(i, "TCR_EL1") = 16 | 16 << 16 | 2ull << 30;
		*fake_sys(i, "TTBR0_EL1") = root0;
		*fake_sys(i, "TTBR1_EL1") = root1;
		*fake_sys(i, "SCTLR_EL1") = 1;
		*fake_sys(i, "VBAR_EL1") = VECTORS;
	}
	map(KT, PO(0));
	map(UT, PO(0));
}

static int failed;

static void expect(int ok, const char *fmt, ...)
{
	va_list ap;

	if (ok)
		return;
	failed = 1;
	printf("# failed: ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
}

static uint64_t msr(unsigned cpu, uint32_t insn, unsigned rt, uint64_t val)
{
	fake_cpus[cpu].x[rt] = val;
	return fake_exec(cpu, KT + 0x800, insn);
}

static void sync_(unsigned cpu)
{
	fake_exec(cpu, KT + 0x900, ISB);
}

/* ERET to EL0 (SPSR_EL1.M = EL0t) */
static void to_el0(unsigned cpu)
{
	*fake_sys(cpu, "SPSR_EL1") = 0;
	fake_exec(cpu, KT + 0xa00, ERET);
}

/*
 * One access at pc; true if the plugin delivered a fault. The exception
 * is then taken and returned from (to EL0 for a TTBR0-half pc), so that
 * the next access is checked again.
 */
static bool try_access(unsigned cpu, uint64_t pc, uint32_t insn, uint64_t x2)
{
	fake_cpus[cpu].x[2] = x2;
	if (fake_exec(cpu, pc, insn) != BAD_PC)
		return false;
	fake_discon(cpu, QEMU_PLUGIN_DISCON_EXCEPTION, BAD_PC, VECTORS + 0x200);
	*fake_sys(cpu, "SPSR_EL1") = pc >> 63 ? 5 : 0;
	fake_exec(cpu, KT + 0xa04, ERET);
	return true;
}

/* the exception for a delivered fault, and what the handler reads */
static void take(unsigned cpu, uint64_t *esr, uint64_t *far, uint64_t *elr)
{
	fake_discon(cpu, QEMU_PLUGIN_DISCON_EXCEPTION, BAD_PC, VECTORS + 0x200);
	fake_exec(cpu, VECTORS + 0x200, MRS_X0_ESR);
	*esr = fake_cpus[cpu].x[0];
	fake_exec(cpu, VECTORS + 0x204, MRS_X0_FAR);
	*far = fake_cpus[cpu].x[0];
	fake_exec(cpu, VECTORS + 0x208, MRS_X0_ELR);
	*elr = fake_cpus[cpu].x[0];
}

static void user_pkeys(unsigned cpu, uint64_t por_el0)
{
	msr(cpu, MSR_TCR2_X4, 4, TCR2_E0POE);
	*fake_sys(cpu, "CPACR_EL1") = 1ull << 29;
	msr(cpu, MSR_POR_EL0_X3, 3, por_el0);
	sync_(cpu);
}

/* 1: a broadcast TLBI reaches the other vCPU's soft TLB; a local one
 * the issuer's */
static void tlbi_broadcast(void)
{
	setup(2, "");
	map(UD, PO(0));
	user_pkeys(0, 0x107);		/* key 0 RWX, key 2 R, others none */
	user_pkeys(1, 0x107);
	to_el0(1);
	expect(!try_access(1, UT, STR_X1_X2, UD), "key 0 store faulted");
	map(UD, PO(2));			/* vCPU 0 moves the page to key 2 */
	fake_cpus[0].x[1] = UD >> 12;		/* TLBI operand: VA[55:12] */
	fake_exec(0, KT, TLBI_VALE1IS_X1);
	expect(try_access(1, UT, STR_X1_X2, UD),
	       "vCPU 1 stored to a key-2 page after TLBI VALE1IS on vCPU 0");
	map(UD, PO(0));			/* and back */
	fake_cpus[0].x[1] = UD >> 12;
	fake_exec(0, KT, TLBI_VALE1IS_X1);
	expect(!try_access(1, UT, STR_X1_X2, UD),
	       "vCPU 1 still faults on key 0 after TLBI VALE1IS on vCPU 0");
	/* by VA: the whole block of that VA goes, other pages stay */
	map(UD + 0x1000, PO(0));
	map_block(0x40000000, PO(0));
	expect(!try_access(1, UT, STR_X1_X2, 0x40000000) &&
	       !try_access(1, UT, STR_X1_X2, 0x40123000) &&
	       !try_access(1, UT, STR_X1_X2, UD + 0x1000),
	       "key 0 stores faulted");
	map_block(0x40000000, PO(2));
	map(UD + 0x1000, PO(2));		/* changed, not invalidated */
	fake_cpus[0].x[1] = 0x40000000 >> 12;
	fake_exec(0, KT, TLBI_VALE1IS_X1);
	expect(try_access(1, UT, STR_X1_X2, 0x40123000),
	       "block re-keyed, TLBI of its first page: other page kept");
	expect(!try_access(1, UT, STR_X1_X2, UD + 0x1000),
	       "TLBI by VA dropped an unrelated page (over-invalidation "
	       "is allowed, but this one is cheap to keep)");
	/* by range: TLBI RVALE1IS, 4K pages, NUM 1 SCALE 0: 4 pages */
	fake_cpus[0].x[1] = 1ull << 46 | 1ull << 39 | (UD + 0x1000) >> 12;
	fake_exec(0, KT, TLBI_RVALE1IS_X1);
	expect(try_access(1, UT, STR_X1_X2, UD + 0x1000),
	       "TLBI RVALE1IS did not reach the page in its range");
	/* local: reaches the issuer */
	to_el0(0);
	expect(!try_access(0, UT, STR_X1_X2, UD), "vCPU 0 key 0 store faulted");
	map(UD, PO(2));
	fake_discon(0, QEMU_PLUGIN_DISCON_EXCEPTION, UT, VECTORS + 0x400);
	fake_cpus[0].x[1] = UD >> 12;
	fake_exec(0, KT, TLBI_VALE1_X1);
	to_el0(0);
	expect(try_access(0, UT, STR_X1_X2, UD),
	       "vCPU 0 stored to key 2 after its own TLBI VALE1");
}

/* 2: instruction fetch from a page whose key lacks X */
static void fetch_x(void)
{
	uint64_t esr, far, elr;

	setup(1, "");
	map(KT + 0x1000, PO(3));
	msr(0, MSR_TCR2_X4, 4, TCR2_POE | TCR2_E0POE);
	msr(0, MSR_POR_EL1_X3, 3, 0x77775777);	/* key 3 RW, no X */
	sync_(0);
	expect(fake_exec(0, KT + 0x1010, NOP) == BAD_PC,
	       "EL1 fetch from a key without X did not fault");
	take(0, &esr, &far, &elr);
	expect((esr >> 26 & 0x3f) == 0x21 && (esr & 0x3f) == 0xf &&
	       (esr >> 38 & 1) && elr == KT + 0x1010 && far == KT + 0x1010,
	       "EL1 fetch: ESR %#llx FAR %#llx ELR %#llx", esr, far, elr);
	expect(fake_exec(0, KT + 0x10, NOP) == KT + 0x14,
	       "EL1 fetch from key 0 (RWX) faulted");
	/* the run of executable pages found at KT stops before KT + 4K */
	expect(fake_exec(0, KT + 0x1010, NOP) == BAD_PC,
	       "EL1 fetch from the next page (key 3) after key 0 allowed");
	take(0, &esr, &far, &elr);
	/* user: key 2 RW without X */
	map(UT + 0x1000, PO(2));
	*fake_sys(0, "CPACR_EL1") = 1ull << 29;
	msr(0, MSR_POR_EL0_X3, 3, 0x507);
	sync_(0);
	to_el0(0);
	expect(fake_exec(0, UT + 0x1000, NOP) == BAD_PC,
	       "EL0 fetch from a key without X did not fault");
	take(0, &esr, &far, &elr);
	expect((esr >> 26 & 0x3f) == 0x20 && (esr >> 38 & 1) && far == UT + 0x1000,
	       "EL0 fetch: ESR %#llx FAR %#llx", esr, far);
}

/*
 * Fetch runs remembered across an invalidation (issue 34): pages of one
 * key, each its own run of executable entries (the pages between them are
 * not mapped), fetched so that several runs are remembered (fewer than
 * the 8 the plugin keeps, so that the next one goes in the middle) before
 * the key loses X; every later fetch from those pages must be checked.
 */
#define KX(i)	(KT + 0x10000 + (uint64_t)(i) * 0x2000)
#define UX(i)	(UT + 0x10000 + (uint64_t)(i) * 0x2000)

/* EL0: key change, then a local TLBI VALE1 by the kernel */
static void stale_runs_el0_tlbi(void)
{
	uint64_t esr, far, elr;
	unsigned i;

	setup(1, "");
	for (i = 0; i < 3; i++)
		map(UX(i), PO(0));
	*fake_sys(0, "CPACR_EL1") = 1ull << 29;
	msr(0, MSR_TCR2_X4, 4, TCR2_E0POE);
	msr(0, MSR_POR_EL0_X3, 3, 0x507);	/* key 2 RW without X */
	sync_(0);
	to_el0(0);
	fake_cpus[0].cpsr = 0;			/* EL0t */
	for (i = 0; i < 3; i++)
		expect(fake_exec(0, UX(i), NOP) == UX(i) + 4,
		       "EL0 fetch %u from key 0 denied", i);
	/* the kernel moves the first page to key 2 and invalidates it */
	fake_discon(0, QEMU_PLUGIN_DISCON_EXCEPTION, UX(2), VECTORS + 0x400);
	fake_cpus[0].cpsr = 0x3c5;
	map(UX(0), PO(2));
	fake_cpus[0].x[1] = UX(0) >> 12;
	fake_exec(0, KT, TLBI_VALE1_X1);
	to_el0(0);
	fake_cpus[0].cpsr = 0;
	expect(fake_exec(0, UX(2), NOP) == UX(2) + 4,
	       "EL0 fetch from key 0 denied after the TLBI");
	if (fake_exec(0, UX(0), NOP) != BAD_PC) {
		expect(0, "EL0 fetch from a page moved to a key without X, "
		       "after a local TLBI VALE1, allowed");
		return;
	}
	take(0, &esr, &far, &elr);
	expect(elr == UX(0), "EL0 fetch fault: ELR %#llx", elr);
}

/* record a run for each of n key-1 pages at EL1, X granted */
static void el1_runs(unsigned n)
{
	unsigned i;

	for (i = 0; i < 8; i++)
		map(KX(i), PO(1));
	msr(0, MSR_TCR2_X4, 4, TCR2_POE);
	msr(0, MSR_POR_EL1_X3, 3, 0x57777777);	/* key 7 RW without X */
	sync_(0);
	for (i = 0; i < n; i++)
		expect(fake_exec(0, KX(i), NOP) == KX(i) + 4,
		       "EL1 fetch %u from key 1 (X) denied", i);
}

/*
 * EL1: key 1 loses X (MSR + ISB); 8 fetches from its pages, 5 of them
 * with a remembered run, each fault taken and returned from
 */
static void stale_runs_el1_msr(void)
{
	uint64_t esr, far, elr;
	unsigned i, allowed = 0;

	setup(1, "");
	el1_runs(5);
	msr(0, MSR_POR_EL1_X3, 3, 0x57777757);	/* key 1 RW without X */
	sync_(0);
	for (i = 0; i < 8; i++) {
		if (fake_exec(0, KX(i), NOP) != BAD_PC) {
			printf("# fetch %u (%#llx) allowed\n", i,
			       (unsigned long long)KX(i));
			allowed++;
			continue;
		}
		take(0, &esr, &far, &elr);
		*fake_sys(0, "SPSR_EL1") = 5;
		fake_exec(0, KT + 0xa04, ERET);
	}
	expect(!allowed, "%u of 8 EL1 fetches from a key whose X was removed "
	       "allowed", allowed);
}

/*
 * Strict mode: the same, in 8 runs of the plugin, fetching from the k-th
 * page after a fetch from key 0: each must stop QEMU (exit status 3).
 */
static void stale_runs_strict(void)
{
	unsigned k, not_stopped = 0;

	for (k = 0; k < 8; k++) {
		int status;
		pid_t pid;

		fflush(stdout);
		pid = fork();
		if (!pid) {
			setup(1, "strict=on,sysmap=/tmp/poe-test-sysmap");
			el1_runs(5);
			msr(0, MSR_POR_EL1_X3, 3, 0x57777757);
			sync_(0);
			fake_exec(0, KT + 0x40, NOP);	/* key 0 */
			fake_exec(0, KX(k), NOP);	/* must exit 3 */
			fflush(stdout);
			_exit(0);
		}
		waitpid(pid, &status, 0);
		if (!WIFEXITED(status) || WEXITSTATUS(status) != 3) {
			printf("# run %u: fetch from page %u not stopped\n",
			       k, k);
			not_stopped++;
		}
	}
	expect(!not_stopped, "strict: %u of 8 runs not stopped at an EL1 "
	       "fetch from a key whose X was removed", not_stopped);
}

/* 3: POR_EL1 writes take effect at the next context synchronisation */
static void isb_semantics(void)
{
	setup(1, "");
	map(KD, PO(1));
	msr(0, MSR_TCR2_X4, 4, TCR2_POE);
	msr(0, MSR_POR_EL1_X3, 3, 0x77777777);
	sync_(0);
	msr(0, MSR_POR_EL1_X3, 3, 0x77777717);	/* key 1 read-only */
	fake_exec(0, KT, MRS_X0_POR_EL1);
	expect(fake_cpus[0].x[0] == 0x77777717,
	       "MRS after MSR reads %#llx", fake_cpus[0].x[0]);
	expect(!try_access(0, KT + 4, STR_X1_X2, KD),
	       "store denied before the ISB (the old value allows it)");
	sync_(0);
	expect(try_access(0, KT + 8, STR_X1_X2, KD),
	       "store allowed after the ISB");
	/* an exception entry synchronises too */
	fake_discon(0, QEMU_PLUGIN_DISCON_EXCEPTION, 0, VECTORS);
	msr(0, MSR_POR_EL1_X3, 3, 0x77777777);
	expect(try_access(0, KT + 12, STR_X1_X2, KD),
	       "store allowed before synchronisation");
	fake_discon(0, QEMU_PLUGIN_DISCON_INTERRUPT, KT, VECTORS + 0x280);
	expect(!try_access(0, KT + 16, STR_X1_X2, KD),
	       "store denied after an exception entry");
	/* and ERET */
	msr(0, MSR_POR_EL1_X3, 3, 0x77777717);
	*fake_sys(0, "SPSR_EL1") = 5;		/* back to EL1h */
	fake_exec(0, KT + 20, ERET);
	expect(try_access(0, KT + 24, STR_X1_X2, KD),
	       "store allowed after ERET");
}

/* 3, strict: an access between MSR and ISB whose verdict differs */
static void isb_strict(void)
{
	setup(1, "strict=on,sysmap=" "/tmp/poe-test-sysmap");
	map(KD, PO(1));
	msr(0, MSR_TCR2_X4, 4, TCR2_POE);
	msr(0, MSR_POR_EL1_X3, 3, 0x77777717);
	sync_(0);
	msr(0, MSR_POR_EL1_X3, 3, 0x77777777);	/* open, no ISB yet */
	try_access(0, KT + 4, STR_X1_X2, KD);	/* must exit 3 */
	expect(0, "strict mode did not report the unsynchronised store");
}

/* 4: an atomic denied for lack of R reports WnR = 0 */
static void wnr_atomic(void)
{
	uint64_t esr, far, elr;

	setup(1, "");
	map(UD, PO(2));
	user_pkeys(0, 0x407);			/* key 2: W only */
	to_el0(0);
	expect(try_access(0, UT, LDADD_X1_X3_X2, UD), "LDADD not denied");
	take(0, &esr, &far, &elr);
	expect(!(esr & 1 << 6), "LDADD without R: WnR set (ESR %#llx)", esr);
	to_el0(0);
	user_pkeys(0, 0x107);			/* key 2: R only */
	to_el0(0);
	expect(try_access(0, UT, LDADD_X1_X3_X2, UD), "LDADD not denied");
	take(0, &esr, &far, &elr);
	expect(esr & 1 << 6, "LDADD without W: WnR clear (ESR %#llx)", esr);
}

/* 5: strict mode covers an EL1 MOPS prologue */
static void mops_strict(void)
{
	setup(1, "strict=on,sysmap=/tmp/poe-test-sysmap");
	map(KD, PO(1));
	msr(0, MSR_TCR2_X4, 4, TCR2_POE);
	msr(0, MSR_POR_EL1_X3, 3, 0x77777717);
	sync_(0);
	fake_cpus[0].x[5] = 64;
	fake_cpus[0].x[1] = 0;
	try_access(0, KT + 4, SETP_X2_X5_X1, KD);	/* must exit 3 */
	expect(0, "strict mode let an EL1 SETP fault be delivered");
}

static bool mops(uint32_t insn, uint64_t xd, uint64_t xn, uint64_t *far)
{
	uint64_t esr, elr;

	fake_cpus[0].x[5] = xn;
	if (!try_access(0, UT + 0x10, insn, xd))
		return false;
	take(0, &esr, far, &elr);
	to_el0(0);
	return true;
}

/*
 * 5: each MOPS stage is checked for the bytes QEMU's implementation of it
 * processes (registers in the option A format after the prologue): a
 * denied page faults at the stage that would write it
 */
static void mops_stages(void)
{
	uint64_t far = 0;

	setup(1, "");
	map(UD, PO(0));
	map(UD + 0x1000, PO(0));
	map(UD + 0x2000, PO(2));
	user_pkeys(0, 0x007);			/* key 2: no access */
	to_el0(0);
	/* 8K from UD + 0x800: P does up to UD + 0x1000, M the page after,
	 * E the 0x800 bytes on the denied page */
	expect(!mops(SETP_X2_X5_X1, UD + 0x800, 0x2000, &far),
	       "SETP faulted (its part is allowed)");
	expect(!mops(SETM_X2_X5_X1, UD + 0x2800, -0x1800ull, &far),
	       "SETM faulted (its whole page is allowed)");
	expect(mops(SETE_X2_X5_X1, UD + 0x2800, -0x800ull, &far) &&
	       far == UD + 0x2000, "SETE on the denied page: FAR %#llx", far);
	/* 12K: the denied page is in SETM's part */
	expect(mops(SETM_X2_X5_X1, UD + 0x3800, -0x2800ull, &far) &&
	       far == UD + 0x2000, "SETM over the denied page: FAR %#llx",
	       far);
	/* denied from its first byte: the prologue faults */
	expect(mops(SETP_X2_X5_X1, UD + 0x2000, 0x40, &far) &&
	       far == UD + 0x2000, "SETP on the denied page: FAR %#llx", far);
}

/* 6: strict mode reports a contiguous group with mixed POIndex */
static void contiguous_strict(void)
{
	unsigned i;

	setup(1, "strict=on,sysmap=/tmp/poe-test-sysmap");
	for (i = 0; i < 16; i++)
		map(KD + i * 4096, CONT | PO(i == 5 ? 1 : 0));
	msr(0, MSR_TCR2_X4, 4, TCR2_POE);
	msr(0, MSR_POR_EL1_X3, 3, 0x77777717);
	sync_(0);
	try_access(0, KT + 4, STR_X1_X2, KD);	/* must exit 3 */
	expect(0, "strict mode accepted a contiguous group with keys 0 and 1");
}

/* 7: LDRAA strips the PAC; DC ZVA, XZR does not use SP */
static void decoder_gaps(void)
{
	setup(1, "");
	map(UD, PO(2));
	user_pkeys(0, 0x007);			/* key 2: no access */
	to_el0(0);
	expect(try_access(0, UT, LDRAA_X1_X2, UD | 0x002a000000000000ull),
	       "LDRAA with a signed pointer to a denied page not denied");
	fake_cpus[0].sp = UD;
	expect(!try_access(0, UT + 4, DC_ZVA_XZR, 0),
	       "DC ZVA, XZR checked the page of SP");
}

/* 7: DC IVAC needs W (ESR.CM); AArch32 EL0 is not instrumented */
static void ivac_aarch32(void)
{
	uint64_t esr, far, elr;

	setup(1, "");
	map(KD, PO(1));
	msr(0, MSR_TCR2_X4, 4, TCR2_POE | TCR2_E0POE);
	msr(0, MSR_POR_EL1_X3, 3, 0x77777717);
	sync_(0);
	fake_cpus[0].x[2] = KD + 0x40;
	expect(fake_exec(0, KT + 8, DC_IVAC_X2) == BAD_PC,
	       "DC IVAC on a read-only key not denied");
	take(0, &esr, &far, &elr);
	expect((esr & (1 << 8)) && (esr & (1 << 6)) && far == KD + 0x40,
	       "DC IVAC: ESR %#llx (want CM and WnR) FAR %#llx", esr, far);
	/* an AArch32 EL0 word that decodes as an A64 store: not checked */
	map(UD, PO(2));
	*fake_sys(0, "CPACR_EL1") = 1ull << 29;
	msr(0, MSR_POR_EL0_X3, 3, 0x007);		/* key 2: none */
	sync_(0);
	*fake_sys(0, "SPSR_EL1") = 0x10;		/* M[4]: AArch32 usr */
	fake_exec(0, KT + 12, ERET);
	expect(!try_access(0, UT, STR_X1_X2, UD),
	       "AArch32 EL0 code checked as A64");
	*fake_sys(0, "SPSR_EL1") = 0;			/* AArch64 EL0t */
	fake_discon(0, QEMU_PLUGIN_DISCON_INTERRUPT, UT, VECTORS + 0x480);
	fake_exec(0, KT + 16, ERET);
	expect(try_access(0, UT, STR_X1_X2, UD),
	       "AArch64 EL0 store to a no-access key not denied");
}

/*
 * PSTATE.UAO: LDTR/STTR-class accesses at EL1, and the unprivileged side
 * of a MOPS instruction, are privileged accesses (POR_EL1) while it is
 * set, unprivileged ones (POR_EL0) while it is clear. Key 1 (kernel data)
 * is read-only for EL1 and RWX for EL0, key 2 (user data) read-only for
 * EL0 and RWX for EL1. UAO is set by an ERET whose SPSR has it and by
 * MSR UAO, cleared by MSR UAO and exception entry.
 */
/* as try_access() at EL1, the handler returning with UAO as it was */
static bool try_uao(uint64_t pc, uint32_t insn, uint64_t va)
{
	uint64_t uao = fake_cpus[0].cpsr & PSTATE_UAO;

	fake_cpus[0].x[2] = va;
	if (fake_exec(0, pc, insn) != BAD_PC)
		return false;
	fake_discon(0, QEMU_PLUGIN_DISCON_EXCEPTION, BAD_PC, VECTORS + 0x200);
	fake_cpus[0].cpsr &= ~PSTATE_UAO;
	*fake_sys(0, "SPSR_EL1") = 5 | uao;
	fake_exec(0, KT + 0xa04, ERET);
	fake_cpus[0].cpsr |= uao;
	return true;
}

static bool sttr(uint64_t pc, uint64_t va)
{
	return try_uao(pc, STTR_X1_X2, va);
}

static void uao_set(uint32_t how)
{
	fake_cpus[0].cpsr = 0x3c5 | PSTATE_UAO;
	if (how == ERET) {
		*fake_sys(0, "SPSR_EL1") = 5 | PSTATE_UAO;
		fake_exec(0, KT + 0xa08, ERET);
	} else {
		fake_cpus[0].x[3] = PSTATE_UAO;
		fake_exec(0, KT + 0xb00, how);
	}
}

static void uao(void)
{
	uint64_t esr, far, elr;

	setup(1, "");
	map(KD, PO(1));
	map(UD, PO(2));
	*fake_sys(0, "CPACR_EL1") = 1ull << 29;
	msr(0, MSR_TCR2_X4, 4, TCR2_POE | TCR2_E0POE);
	msr(0, MSR_POR_EL0_X3, 3, 0x177);	/* key 2 R, key 1 RWX */
	msr(0, MSR_POR_EL1_X3, 3, 0x77777717);	/* key 1 R, key 2 RWX */
	sync_(0);
	/* UAO = 0: EL0's permissions */
	expect(sttr(KT + 0x10, UD), "UAO=0: STTR to a key EL0 may not write "
	       "allowed");
	expect(!sttr(KT + 0x14, KD), "UAO=0: STTR to a key EL0 may write "
	       "denied");
	/* UAO = 1 (ERET): EL1's, with EL1's syndrome */
	uao_set(ERET);
	expect(!sttr(KT + 0x20, UD), "UAO=1 (ERET): STTR to a key EL1 may "
	       "write denied");
	fake_cpus[0].x[2] = KD;
	if (fake_exec(0, KT + 0x24, STTR_X1_X2) != BAD_PC) {
		expect(0, "UAO=1 (ERET): STTR to a key EL1 may not write "
		       "allowed");
	} else {
		take(0, &esr, &far, &elr);
		expect((esr >> 26 & 0x3f) == 0x25 && far == KD &&
		       elr == KT + 0x24, "UAO=1: STTR fault ESR %#llx FAR "
		       "%#llx ELR %#llx", esr, far, elr);
		*fake_sys(0, "SPSR_EL1") = 5 | PSTATE_UAO;
		fake_exec(0, KT + 0xa04, ERET);
	}
	fake_cpus[0].x[5] = 64;
	fake_cpus[0].x[1] = 0;
	expect(try_uao(KT + 0x28, SETPT_X2_X5_X1, KD),
	       "UAO=1: SETPT to a key EL1 may not write allowed");
	expect(!try_uao(KT + 0x2c, SETPT_X2_X5_X1, UD),
	       "UAO=1: SETPT to a key EL1 may write denied");
	/* an exception entry clears it */
	fake_discon(0, QEMU_PLUGIN_DISCON_INTERRUPT, KT, VECTORS + 0x280);
	fake_cpus[0].cpsr = 0x3c5;
	expect(sttr(KT + 0x30, UD) && !sttr(KT + 0x34, KD),
	       "UAO cleared by exception entry: STTR not by EL0's rules");
	/* MSR UAO, #1 / #0 and MSR UAO, Xt */
	uao_set(MSR_UAO_1);
	expect(!sttr(KT + 0x40, UD) && sttr(KT + 0x44, KD),
	       "UAO=1 (MSR UAO, #1): STTR not by EL1's rules");
	fake_cpus[0].cpsr = 0x3c5;
	fake_exec(0, KT + 0xb04, MSR_UAO_0);
	expect(sttr(KT + 0x48, UD) && !sttr(KT + 0x4c, KD),
	       "UAO=0 (MSR UAO, #0): STTR not by EL0's rules");
	uao_set(MSR_UAO_X3);
	expect(!sttr(KT + 0x50, UD) && sttr(KT + 0x54, KD),
	       "UAO=1 (MSR UAO, Xt): STTR not by EL1's rules");
	fake_cpus[0].x[2] = UD;
	expect(fake_exec(0, KT + 0x58, LDTR_X1_X2) == KT + 0x5c,
	       "UAO=1: LDTR from a key both may read denied");
	/* the EL0 overlay off: with UAO set, POR_EL1 still applies */
	msr(0, MSR_TCR2_X4, 4, TCR2_POE);
	sync_(0);
	expect(sttr(KT + 0x60, KD), "UAO=1, EL0 overlay off: STTR to a key "
	       "EL1 may not write allowed");
	fake_cpus[0].cpsr = 0x3c5;
	fake_exec(0, KT + 0xb04, MSR_UAO_0);
	expect(!sttr(KT + 0x64, KD), "UAO=0, EL0 overlay off: STTR denied");
}

/* 8: PSCI CPU_OFF and CPU_ON reset the vCPU's POE state */
static void cpu_reset(void)
{
	setup(2, "");
	map(KD, PO(1));
	msr(1, MSR_TCR2_X4, 4, TCR2_POE);
	msr(1, MSR_POR_EL1_X3, 3, 0x77777717);
	sync_(1);
	expect(try_access(1, KT, STR_X1_X2, KD), "setup: store not denied");
	fake_cpus[1].x[0] = 0x84000002;		/* CPU_OFF */
	fake_exec(1, KT + 4, HVC0);
	memset(&fake_cpus[1], 0, sizeof(fake_cpus[1]));	/* QEMU resets it */
	fake_cpus[1].cpsr = 0x3c5;
	*fake_sys(1, "TCR_EL1") = 16 | 16 << 16 | 2ull << 30;
	*fake_sys(1, "TTBR1_EL1") = root1;
	*fake_sys(1, "SCTLR_EL1") = 1;
	fake_cpus[0].x[0] = 0xc4000003;		/* CPU_ON, cpu 1 */
	fake_cpus[0].x[1] = 1;
	fake_exec(0, KT + 4, HVC0);
	fake_exec(1, KT + 8, MRS_X0_POR_EL1);
	expect(fake_cpus[1].x[0] == 0, "POR_EL1 after CPU_ON: %#llx",
	       fake_cpus[1].x[0]);
	fake_exec(1, KT + 12, MRS_X0_TCR2);
	expect(!(fake_cpus[1].x[0] & TCR2_POE), "TCR2_EL1.POE after CPU_ON");
	expect(!try_access(1, KT + 16, STR_X1_X2, KD),
	       "store denied after CPU_ON (overlay still on)");
}

/*
 * HVC/SMC are UNDEFINED at EL0: a program that calls them with a PSCI
 * CPU_OFF function id in w0 powers nothing down and must not reset the
 * POE state of its vCPU. At EL1 the call still does.
 */
static void psci_el0(void)
{
	static const uint32_t call[2] = { HVC0, SMC0 };
	unsigned i;

	setup(1, "");
	map(KD, PO(1));
	map(UD, PO(2));
	*fake_sys(0, "CPACR_EL1") = 1ull << 29;
	for (i = 0; i < 2; i++) {
		msr(0, MSR_TCR2_X4, 4, TCR2_POE | TCR2_E0POE);
		msr(0, MSR_POR_EL0_X3, 3, 0x107);	/* key 2 read-only */
		msr(0, MSR_POR_EL1_X3, 3, 0x77777717);	/* key 1 read-only */
		sync_(0);
		to_el0(0);
		fake_cpus[0].cpsr = 0;		/* EL0t */
		fake_cpus[0].x[0] = 0x84000002;	/* CPU_OFF */
		fake_exec(0, UT + 0x100 + 4 * i, call[i]);
		expect(try_access(0, UT + 0x200, STR_X1_X2, UD),
		       "EL0 %s CPU_OFF: EL0 store to a read-only key allowed "
		       "after it", i ? "SMC" : "HVC");
		/* the UNDEF exception, to EL1 */
		fake_discon(0, QEMU_PLUGIN_DISCON_EXCEPTION, UT + 0x100,
			    VECTORS + 0x400);
		fake_cpus[0].cpsr = 0x3c5;
		fake_exec(0, KT + 0x10, MRS_X0_POR_EL1);
		expect(fake_cpus[0].x[0] == 0x77777717, "EL0 %s CPU_OFF: "
		       "POR_EL1 then reads %#llx", i ? "SMC" : "HVC",
		       fake_cpus[0].x[0]);
		fake_exec(0, KT + 0x14, MRS_X0_TCR2);
		expect((fake_cpus[0].x[0] & (TCR2_POE | TCR2_E0POE)) ==
		       (TCR2_POE | TCR2_E0POE), "EL0 %s CPU_OFF: TCR2_EL1 "
		       "then reads %#llx", i ? "SMC" : "HVC",
		       fake_cpus[0].x[0]);
		expect(try_access(0, KT + 0x18, STR_X1_X2, KD),
		       "EL0 %s CPU_OFF: EL1 store to a read-only key allowed "
		       "after it", i ? "SMC" : "HVC");
	}
	fake_cpus[0].x[0] = 0x84000002;		/* at EL1: powered down */
	fake_exec(0, KT + 0x20, HVC0);
	fake_exec(0, KT + 0x24, MRS_X0_POR_EL1);
	expect(fake_cpus[0].x[0] == 0, "EL1 HVC CPU_OFF: POR_EL1 then reads "
	       "%#llx, want the reset value 0", fake_cpus[0].x[0]);
}

/* 12, strict: strict_allow= names a function whose denied stores fault */
static void strict_allow_named(void)
{
	setup(1, "strict=on,sysmap=/tmp/poe-test-sysmap,"
		 "strict_allow=allowed_writer");
	map(KD, PO(1));
	msr(0, MSR_TCR2_X4, 4, TCR2_POE);
	msr(0, MSR_POR_EL1_X3, 3, 0x77777717);
	sync_(0);
	expect(try_access(0, KT + 0x104, STR_X1_X2, KD),
	       "store in allowed_writer not delivered as a fault");
}

/* 13, strict: ...and only that function */
static void strict_allow_other(void)
{
	setup(1, "strict=on,sysmap=/tmp/poe-test-sysmap,"
		 "strict_allow=allowed_writer");
	map(KD, PO(1));
	msr(0, MSR_TCR2_X4, 4, TCR2_POE);
	msr(0, MSR_POR_EL1_X3, 3, 0x77777717);
	sync_(0);
	try_access(0, KT + 0x204, STR_X1_X2, KD);	/* must exit 3 */
	expect(0, "strict mode let a store outside allowed_writer fault");
}

/*
 * A translation executed at a second address, as QEMU's TBs (CF_PCREL)
 * run at every address of their physical page: a program's text at UT in
 * one process and at UT2 in the next. Everything the plugin does must use
 * the address it runs at, which the "pc" register gives only up to the
 * start of the TB (fake_pc_lag).
 */
static void pcrel(void)
{
	uint64_t esr, far, elr, pc;

	setup(1, "");
	map(UT + 0x1000, PO(0));
	map(UT + 0x2000, PO(0));
	map(UT2, PO(0));
	map(UT2 + 0x1000, PO(3));		/* the literal: no access */
	map(UT2 + 0x2000, PO(2));		/* the text: no X */
	map(UD, PO(2));
	user_pkeys(0, 0x107);			/* key 0 RWX, key 2 R */
	to_el0(0);

	/* MSR/MRS POR_EL0: skipped where they run */
	fake_cpus[0].x[3] = 0x107;
	expect(fake_exec(0, UT + 0x10, MSR_POR_EL0_X3) == UT + 0x14,
	       "MSR POR_EL0 at its translation address not skipped");
	fake_pc_lag = 8;
	pc = fake_exec_at(0, UT + 0x10, UT2 + 0x10, MSR_POR_EL0_X3);
	expect(pc == UT2 + 0x14, "MSR POR_EL0 at a second address "
	       "resumes at %#llx, want %#llx", pc, UT2 + 0x14);
	fake_exec(0, UT + 0x18, MRS_X0_POR_EL0);
	pc = fake_exec_at(0, UT + 0x18, UT2 + 0x18, MRS_X0_POR_EL0);
	expect(pc == UT2 + 0x1c, "MRS POR_EL0 at a second address "
	       "resumes at %#llx, want %#llx", pc, UT2 + 0x1c);

	/* a denied store: ELR where it runs */
	fake_cpus[0].x[2] = UD;
	expect(fake_exec_at(0, UT + 0x20, UT2 + 0x20, STR_X1_X2) == BAD_PC,
	       "store to a read-only key not denied");
	take(0, &esr, &far, &elr);
	expect(elr == UT2 + 0x20 && far == UD, "store at a second address: "
	       "ELR %#llx FAR %#llx, want %#llx %#llx", elr, far,
	       UT2 + 0x20, UD);
	to_el0(0);

	/* a literal: its address from where the load runs */
	expect(fake_exec(0, UT + 0x30, LDR_X1_LIT_4K) == UT + 0x34,
	       "literal load from key 0 denied");
	expect(fake_exec_at(0, UT + 0x30, UT2 + 0x30, LDR_X1_LIT_4K) == BAD_PC,
	       "literal load at a second address, into a no-access key, "
	       "not denied");
	take(0, &esr, &far, &elr);
	expect(elr == UT2 + 0x30 && far == UT2 + 0x1030, "literal at a second "
	       "address: ELR %#llx FAR %#llx, want %#llx %#llx", elr, far,
	       UT2 + 0x30, UT2 + 0x1030);
	to_el0(0);

	/* a fetch: allowed at UT + 0x2000 (key 0), denied at UT2 + 0x2000
	 * (key 2), though UT + 0x2000 is then known executable */
	expect(fake_exec(0, UT + 0x2000, NOP) == UT + 0x2004,
	       "fetch from key 0 denied");
	expect(fake_exec_at(0, UT + 0x2000, UT2 + 0x2000, NOP) == BAD_PC,
	       "fetch at a second address, from a key without X, not denied");
	take(0, &esr, &far, &elr);
	expect((esr >> 26 & 0x3f) == 0x20 && elr == UT2 + 0x2000 &&
	       far == UT2 + 0x2000, "fetch at a second address: ESR %#llx "
	       "ELR %#llx FAR %#llx", esr, elr, far);
	to_el0(0);
	expect(fake_exec(0, UT + 0x2000, NOP) == UT + 0x2004,
	       "fetch from key 0 denied after the other address faulted");
	expect(poe_regs_fast(0), "registers not read from the CPU object");
}

/*
 * The kernel installing its vectors in the TTBR1 half flushes QEMU's
 * translations (a plugin reset): code translated in the TTBR0 half (MMU
 * off, idmap) must not run, with that instrumentation, at the kernel's
 * virtual address. The plugin's callbacks come back; a VBAR_EL1 in the
 * TTBR0 half flushes nothing.
 */
static void vectors_flush(void)
{
	uint64_t esr, far, elr;

	setup(1, "");
	map(KD, PO(1));
	fake_cpus[0].x[5] = 0x40081000;
	fake_exec(0, 0x40080000, MSR_VBAR_X5);
	expect(fake_resets == 0, "VBAR_EL1 at a physical address: flushed");
	fake_cpus[0].x[5] = VECTORS;
	fake_exec(0, KT + 0x10, MSR_VBAR_X5);
	expect(fake_resets == 1, "vectors installed: %u flushes, want 1",
	       fake_resets);
	/* instrumented again after the flush */
	msr(0, MSR_TCR2_X4, 4, TCR2_POE);
	msr(0, MSR_POR_EL1_X3, 3, 0x77777717);
	sync_(0);
	fake_cpus[0].x[2] = KD;
	expect(fake_exec(0, KT + 0x20, STR_X1_X2) == BAD_PC,
	       "store to a read-only key not denied after the flush");
	take(0, &esr, &far, &elr);
	expect(elr == KT + 0x20 && far == KD, "after the flush: ELR %#llx "
	       "FAR %#llx", elr, far);
}

/*
 * The registers read from QEMU's CPU object (regs.c): found there, and
 * when the object disagrees with the API (or holds them twice), the API
 * wins and the fast path is off for good.
 */
static void fastregs(void)
{
	setup(1, "");
	map(KD, PO(1));
	map(KD + 0x1000, PO(0));
	msr(0, MSR_TCR2_X4, 4, TCR2_POE);
	msr(0, MSR_POR_EL1_X3, 3, 0x77777717);
	sync_(0);
	expect(try_access(0, KT + 0x10, STR_X1_X2, KD), "store not denied");
	expect(poe_regs_fast(0), "registers not read from the CPU object");
	fake_obj_lie(0, 2, KD + 0x1000);	/* a key-0 page there */
	expect(try_access(0, KT + 0x14, STR_X1_X2, KD),
	       "the CPU object's x2 was used, not the API's");
	expect(!poe_regs_fast(0), "fast path still on after a difference");
}

static void fastregs_twice(void)
{
	setup(1, "");
	fake_obj_mirror(0, 0x100);		/* the registers twice */
	map(KD, PO(1));
	msr(0, MSR_TCR2_X4, 4, TCR2_POE);
	msr(0, MSR_POR_EL1_X3, 3, 0x77777717);
	sync_(0);
	expect(try_access(0, KT + 0x10, STR_X1_X2, KD), "store not denied");
	expect(!poe_regs_fast(0), "fast path on with the registers twice");
}

/*
 * Loads in the TTBR1 half are not instrumented until an EL1 overlay
 * denies R (kpkeys never does); then, at the ISB, the translations are
 * flushed and they are checked.
 */
static void el1_reads(void)
{
	setup(1, "");
	map(KD, PO(1));
	msr(0, MSR_TCR2_X4, 4, TCR2_POE);
	msr(0, MSR_POR_EL1_X3, 3, 0x77777717);	/* key 1 read-only */
	sync_(0);
	expect(fake_ops_on(KT + 0x40, LDR_X1_X2) == fake_ops_on(KT + 0x44, NOP),
	       "EL1 load instrumented while no key lacks R");
	expect(fake_ops_on(UT + 0x40, LDR_X1_X2) > fake_ops_on(UT + 0x44, NOP),
	       "TTBR0-half load not instrumented");
	expect(fake_resets == 0, "flushed while no key lacks R");
	msr(0, MSR_POR_EL1_X3, 3, 0x77777707);	/* key 1: no access */
	expect(fake_resets == 0, "flushed before the ISB");
	sync_(0);
	expect(fake_resets == 1, "%u flushes when a key lacks R, want 1",
	       fake_resets);
	expect(try_access(0, KT + 0x40, LDR_X1_X2, KD),
	       "EL1 load from a no-access key not denied");
	msr(0, MSR_POR_EL1_X3, 3, 0x77777717);
	msr(0, MSR_POR_EL1_X3, 3, 0x77777707);
	expect(fake_resets == 1, "flushed again");
}

static void fastregs_off(void)
{
	setup(1, "fastregs=off");
	map(KD, PO(1));
	msr(0, MSR_TCR2_X4, 4, TCR2_POE);
	msr(0, MSR_POR_EL1_X3, 3, 0x77777717);
	sync_(0);
	expect(try_access(0, KT + 0x10, STR_X1_X2, KD), "store not denied");
	expect(!poe_regs_fast(0), "fastregs=off: fast path on");
}

/*
 * 5: POR_EL1 applies to no access while TCR2_EL1.POE is clear, even to
 * the privileged side of an instruction whose other side the EL0 overlay
 * checks (copy_to_user's CPYFPWT: kernel reads, unprivileged writes), and
 * to an EL1 access between a TCR2_EL1 write and the ISB after it
 */
static void el1_overlay_off(void)
{
	setup(1, "");
	map(KD, PO(0));
	map(UD, PO(0));
	user_pkeys(0, 0x007);		/* E0POE only; POR_EL1 as at reset: 0 */
	fake_cpus[0].x[6] = UD;
	fake_cpus[0].x[1] = KD;
	expect(!try_access(0, KT + 0x10, CPYFPWT_X6_X1_X2, 0x40),
	       "kernel read of CPYFPWT denied by POR_EL1 with TCR2_EL1.POE clear");
	msr(0, MSR_TCR2_X4, 4, 0);		/* unsynced until the ISB */
	expect(!try_access(0, KT + 0x20, LDR_X1_X2, KD),
	       "EL1 load denied by POR_EL1 before an ISB, TCR2_EL1.POE clear");
	sync_(0);
	msr(0, MSR_TCR2_X4, 4, TCR2_E0POE | TCR2_POE);
	sync_(0);
	expect(try_access(0, KT + 0x30, LDR_X1_X2, KD),
	       "EL1 load not denied once TCR2_EL1.POE is set (POR_EL1 0)");
}

/*
 * MRS of the ID registers at EL1: MMFR3 gains S1POE; with bbm=3, MMFR2
 * gets BBM (bits [55:52]) = 3 and keeps its other fields; at EL0 both are
 * left to QEMU (which traps them to the kernel); without bbm=, MMFR2 is
 * QEMU's. Values outside 0-3 are refused.
 */
#define MMFR2_QEMU	0x1221011110101011ull	/* BBM = 2 */

static uint64_t mrs_x0(uint64_t pc, uint32_t insn)
{
	fake_cpus[0].x[0] = 0x5a5a;	/* what QEMU's MRS would replace */
	fake_exec(0, pc, insn);
	return fake_cpus[0].x[0];
}

static void id_registers(void)
{
	uint64_t val;

	expect(fake_install(1, "bbm=4") != 0 && fake_install(1, "bbm=") != 0 &&
	       fake_install(1, "bbm=3x") != 0, "bbm=4, bbm=, bbm=3x accepted");
	setup(1, "bbm=3");
	*fake_sys(0, "ID_AA64MMFR2_EL1") = MMFR2_QEMU;
	*fake_sys(0, "ID_AA64MMFR3_EL1") = 0x1000;
	val = mrs_x0(KT + 0x10, MRS_X0_MMFR2);
	expect(val == 0x1231011110101011ull, "bbm=3: MMFR2 read %#llx", val);
	val = mrs_x0(KT + 0x14, MRS_X0_MMFR3);
	expect(val == 0x11000, "MMFR3 read %#llx", val);
	to_el0(0);
	fake_cpus[0].cpsr = 0;			/* EL0t */
	expect(mrs_x0(UT + 0x10, MRS_X0_MMFR2) == 0x5a5a &&
	       mrs_x0(UT + 0x14, MRS_X0_MMFR3) == 0x5a5a,
	       "EL0 MRS of the ID registers not left to QEMU");

	setup(1, "");
	*fake_sys(0, "ID_AA64MMFR2_EL1") = MMFR2_QEMU;
	expect(mrs_x0(KT + 0x10, MRS_X0_MMFR2) == 0x5a5a,
	       "without bbm=, MRS ID_AA64MMFR2_EL1 was emulated");
}

static const struct {
	const char *name;
	void (*fn)(void);
	int want_exit;
} scenarios[] = {
	{ "broadcast TLBI reaches every vCPU, local TLBI the issuer",
	  tlbi_broadcast, 0 },
	{ "instruction fetch from a key without X: instruction abort",
	  fetch_x, 0 },
	{ "EL0 fetch after a key change and a local TLBI: runs forgotten",
	  stale_runs_el0_tlbi, 0 },
	{ "EL1 fetches after MSR+ISB removed X: runs forgotten",
	  stale_runs_el1_msr, 0 },
	{ "strict: EL1 fetches after X removed stop QEMU in every run",
	  stale_runs_strict, 0 },
	{ "POR_EL1 writes take effect at ISB, exception entry, ERET",
	  isb_semantics, 0 },
	{ "strict: access between MSR POR_EL1 and ISB with another verdict",
	  isb_strict, 3 },
	{ "atomic denied for lack of R: WnR = 0", wnr_atomic, 0 },
	{ "strict: EL1 MOPS prologue into a denied key stops QEMU",
	  mops_strict, 3 },
	{ "MOPS: each stage checks the bytes it processes", mops_stages, 0 },
	{ "POR_EL1 applies to nothing while TCR2_EL1.POE is clear",
	  el1_overlay_off, 0 },
	{ "strict: contiguous group with non-uniform POIndex",
	  contiguous_strict, 3 },
	{ "LDRAA strips the PAC, DC ZVA XZR does not use SP",
	  decoder_gaps, 0 },
	{ "PSCI CPU_OFF/CPU_ON reset POR_EL1 and TCR2_EL1", cpu_reset, 0 },
	{ "PSTATE.UAO: LDTR/STTR and unprivileged MOPS by EL1's rules",
	  uao, 0 },
	{ "PSCI CPU_OFF from EL0 (UNDEFINED) resets nothing",
	  psci_el0, 0 },
	{ "DC IVAC needs W (ESR.CM), AArch32 EL0 is not instrumented",
	  ivac_aarch32, 0 },
	{ "strict: a denied store in a strict_allow function faults",
	  strict_allow_named, 0 },
	{ "strict: a denied store in another function stops QEMU",
	  strict_allow_other, 3 },
	{ "a translation executed at a second address (CF_PCREL)",
	  pcrel, 0 },
	{ "installing the kernel's vectors flushes the translations",
	  vectors_flush, 0 },
	{ "registers from QEMU's CPU object, checked against the API",
	  fastregs, 0 },
	{ "registers twice in QEMU's CPU object: API only",
	  fastregs_twice, 0 },
	{ "fastregs=off: registers through the API only", fastregs_off, 0 },
	{ "EL1 loads instrumented once an EL1 overlay denies R", el1_reads,
	  0 },
	{ "ID registers: MMFR3.S1POE, MMFR2.BBM with bbm=3, not without",
	  id_registers, 0 },
};

int main(void)
{
	unsigned n = sizeof(scenarios) / sizeof(scenarios[0]), i, fails = 0;
	FILE *f = fopen("/tmp/poe-test-sysmap", "w");

	/* strict mode: vectors at VBAR_EL1 (no KASLR slide), a one-entry
	 * exception table that covers none of the test PCs, two functions
	 * in the kernel text for strict_allow= */
	fprintf(f, "ffff000000000000 T vectors\n"
		   "ffff000000003000 D __start___ex_table\n"
		   "ffff00000000300c D __stop___ex_table\n"
		   "ffff000000100100 t allowed_writer\n"
		   "ffff000000100200 t other_fn\n");
	fclose(f);
	printf("TAP version 13\n1..%u\n", n);
	for (i = 0; i < n; i++) {
		int status, code;
		pid_t pid;

		fflush(stdout);
		pid = fork();
		if (!pid) {
			scenarios[i].fn();
			fflush(stdout);
			_exit(failed);
		}
		waitpid(pid, &status, 0);
		code = WIFEXITED(status) ? WEXITSTATUS(status) : 128;
		if (code == scenarios[i].want_exit) {
			printf("ok %u - %s\n", i + 1, scenarios[i].name);
		} else {
			printf("not ok %u - %s # exit %d, want %d\n", i + 1,
			       scenarios[i].name, code, scenarios[i].want_exit);
			fails++;
		}
	}
	unlink("/tmp/poe-test-sysmap");
	printf("%u passed, %u failed\n", n - fails, fails);
	return fails ? 1 : 0;
}
