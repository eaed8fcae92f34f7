/*
 * poe_user_test.c - EL0 negative and positive controls for user pkeys
 *
 * On pages that are already populated, every access class the emulator
 * decodes is tried against a key that denies it: each must raise SIGSEGV
 * with si_code SEGV_PKUERR and si_addr the exact first denied byte, leave
 * memory unchanged and leave the base register as it was (no writeback).
 * The same accesses with the key's permission granted must succeed.
 * Without POE (no HWCAP2_POE) the whole test is skipped, kselftest style.
 *
 * Build: aarch64-linux-gnu-gcc -static -O2 -march=armv8.2-a+lse
 * Output: TAP ("ok N name" / "not ok N name"), then a Totals line; exit 0
 * if all passed, 1 on failure, 4 (KSFT_SKIP) without POE.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

#include "poe_user.h"

static long page;
static int tests, passed, failed;

/* filled in by the SIGSEGV handler */
static volatile int got_sig, got_code;
static volatile uintptr_t got_addr, got_x9, got_sp;
static volatile unsigned skip_bytes = 4;
static volatile int fetch_fault;	/* return to the caller (lr) */

static void on_segv(int sig, siginfo_t *si, void *ctx)
{
	ucontext_t *uc = ctx;

	got_sig = sig;
	got_code = si->si_code;
	got_addr = (uintptr_t)si->si_addr;
	got_x9 = uc->uc_mcontext.regs[9];
	got_sp = uc->uc_mcontext.sp;
	if (fetch_fault)
		uc->uc_mcontext.pc = uc->uc_mcontext.regs[30];
	else
		uc->uc_mcontext.pc += skip_bytes;	/* skip the access */
}

static void result(int ok, const char *name, const char *why)
{
	tests++;
	if (ok) {
		passed++;
		printf("ok %d %s\n", tests, name);
	} else {
		failed++;
		printf("not ok %d %s # %s\n", tests, name, why);
	}
	fflush(stdout);
}

/* Each accessor runs one instruction with its base address in x9. */
#define ACCESSOR(fn, insn)						\
	static void fn(uintptr_t base)					\
	{								\
		asm volatile("mov x9, %0\n\t"				\
			     "mov x10, #0x77\n\t"			\
			     "mov x11, #0x66\n\t"			\
			     "movi v0.16b, #0x55\n\t"			\
			     insn "\n\t"				\
			     : : "r"(base)				\
			     : "x9", "x10", "x11", "x12", "x13", "v0",	\
			       "memory");				\
	}

ACCESSOR(do_ldr, "ldr x10, [x9]")
ACCESSOR(do_ldrb, "ldrb w10, [x9]")
ACCESSOR(do_ldp, "ldp x10, x11, [x9, #16]")
ACCESSOR(do_ldr_q, "ldr q0, [x9, #32]")
ACCESSOR(do_ld1, "ld1 {v0.16b}, [x9]")
ACCESSOR(do_ldxr, "ldxr x10, [x9]")
ACCESSOR(do_ldar, "ldar x10, [x9]")
ACCESSOR(do_ldr_post, "ldr x10, [x9], #8")
ACCESSOR(do_str, "str x10, [x9]")
ACCESSOR(do_strh, "strh w10, [x9, #2]")
ACCESSOR(do_str_pre, "str x10, [x9, #8]!")
ACCESSOR(do_str_post, "str x10, [x9], #8")
ACCESSOR(do_stp, "stp x10, x11, [x9, #16]")
ACCESSOR(do_stp_pre, "stp x10, x11, [x9, #-16]!")
ACCESSOR(do_str_q, "str q0, [x9, #32]")
ACCESSOR(do_st1, "st1 {v0.16b}, [x9]")
ACCESSOR(do_stxr, "ldxr x11, [x9]\n\tstxr w12, x10, [x9]")
ACCESSOR(do_stlr, "stlr x10, [x9]")
ACCESSOR(do_ldadd, "ldadd x10, x11, [x9]")
ACCESSOR(do_swp, "swp x10, x11, [x9]")
ACCESSOR(do_cas, "cas x10, x11, [x9]")
ACCESSOR(do_dczva, "dc zva, x9")
ACCESSOR(do_regoff, "mov x12, #24\n\tstr x10, [x9, x12]")
ACCESSOR(do_str_sp, "mov x13, sp\n\tmov sp, x9\n\t"
		    "str x10, [sp, #40]\n\tmov sp, x13")
/* MOPS memset of 64 bytes: a fault in the prologue skips all three */
ACCESSOR(do_mops_set, "mov x12, #64\n\t"
		      ".arch_extension mops\n\t"
		      "setp [x9]!, x12!, x10\n\t"
		      "setm [x9]!, x12!, x10\n\t"
		      "sete [x9]!, x12!, x10")

struct access {
	const char *name;
	void (*fn)(uintptr_t base);
	unsigned offset;	/* of the first byte accessed, from base */
	int is_write;
	int wb;			/* base register must read back unchanged */
	int sp_base;
	unsigned skip;		/* bytes to skip after a fault (0: 4) */
	int mops;		/* needs HWCAP2_MOPS */
};

static const struct access accesses[] = {
	{ "ldr", do_ldr, 0, 0, 0, 0 },
	{ "ldrb", do_ldrb, 0, 0, 0, 0 },
	{ "ldp", do_ldp, 16, 0, 0, 0 },
	{ "ldr-q", do_ldr_q, 32, 0, 0, 0 },
	{ "ld1", do_ld1, 0, 0, 0, 0 },
	{ "ldxr", do_ldxr, 0, 0, 0, 0 },
	{ "ldar", do_ldar, 0, 0, 0, 0 },
	{ "ldr-post", do_ldr_post, 0, 0, 1, 0 },
	{ "str", do_str, 0, 1, 0, 0 },
	{ "strh", do_strh, 2, 1, 0, 0 },
	{ "str-pre", do_str_pre, 8, 1, 1, 0 },
	{ "str-post", do_str_post, 0, 1, 1, 0 },
	{ "stp", do_stp, 16, 1, 0, 0 },
	{ "stp-pre", do_stp_pre, -16 & 0xfff, 1, 1, 0 },
	{ "str-q", do_str_q, 32, 1, 0, 0 },
	{ "st1", do_st1, 0, 1, 0, 0 },
	{ "ldxr-stxr", do_stxr, 0, 1, 0, 0 },
	{ "stlr", do_stlr, 0, 1, 0, 0 },
	{ "ldadd", do_ldadd, 0, 1, 0, 0 },
	{ "swp", do_swp, 0, 1, 0, 0 },
	{ "cas", do_cas, 0, 1, 0, 0 },
	{ "dc-zva", do_dczva, 0, 1, 0, 0 },
	{ "str-regoff", do_regoff, 24, 1, 0, 0 },
	{ "str-sp-base", do_str_sp, 40, 1, 1, 1 },
	{ "mops-set", do_mops_set, 0, 1, 1, 0, 12, 1 },
};

static int have_mops;

/* run one accessor; a MOPS one is skipped (counted as passed) without
 * FEAT_MOPS */
static int run(const struct access *a, uintptr_t base)
{
	if (a->mops && !have_mops)
		return 0;
	skip_bytes = a->skip ? a->skip : 4;
	a->fn(base);
	return 1;
}

static int pkey_alloc_(unsigned rights)
{
	return syscall(SYS_pkey_alloc, 0, rights);
}

static int pkey_mprotect_(void *p, size_t len, int prot, int key)
{
	return syscall(SYS_pkey_mprotect, p, len, prot, key);
}

/* one page pair: the tested page at base, the page before it untouched */
static unsigned char *new_pages(void)
{
	unsigned char *p = mmap(NULL, 3 * page, PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED) {
		perror("mmap");
		exit(1);
	}
	memset(p, 0x5a, 3 * page);	/* populate */
	return p + page;
}

static int unchanged(const unsigned char *p)
{
	long i;

	for (i = 0; i < page; i++)
		if (p[i] != 0x5a)
			return 0;
	return 1;
}

/* Is the page still all 0x5a? Read with the key's RW granted. */
static int unchanged_key(const unsigned char *p, int key)
{
	uint64_t por = por_read();
	int ret;

	por_write((por & ~(0xfull << (4 * key))) | 0x5ull << (4 * key));
	ret = unchanged(p);
	por_write(por);
	return ret;
}

/* A denied access: must fault with SEGV_PKUERR at the exact address. */
static void negative(const struct access *a, unsigned char *pg, int key,
		     const char *keyname)
{
	/* stp-pre accesses below its base: put the base at the page end */
	uintptr_t base = (uintptr_t)pg + (a->offset > 0x800 ? page : 0);
	uintptr_t want = a->offset > 0x800 ? base - 16 : base + a->offset;
	char name[96], why[200];

	snprintf(name, sizeof(name), "%s-denied-%s", keyname, a->name);
	got_sig = got_code = 0;
	got_addr = got_x9 = got_sp = 0;
	if (!run(a, base)) {
		tests++;
		passed++;
		printf("ok %d %s # SKIP no FEAT_MOPS\n", tests, name);
		return;
	}
	if (!got_sig)
		snprintf(why, sizeof(why), "no signal");
	else if (got_code != SEGV_PKUERR)
		snprintf(why, sizeof(why), "si_code %d, want SEGV_PKUERR",
			 got_code);
	else if (got_addr != want)
		snprintf(why, sizeof(why), "si_addr %#lx, want %#lx",
			 (unsigned long)got_addr, (unsigned long)want);
	else if (a->wb && !a->sp_base && got_x9 != base)
		snprintf(why, sizeof(why), "x9 %#lx after fault, want %#lx",
			 (unsigned long)got_x9, (unsigned long)base);
	else if (a->sp_base && got_sp != base)
		snprintf(why, sizeof(why), "sp %#lx after fault, want %#lx",
			 (unsigned long)got_sp, (unsigned long)base);
	else if (!unchanged_key(pg, key))
		snprintf(why, sizeof(why), "memory changed");
	else
		why[0] = 0;
	result(!why[0], name, why);
}

/* The same access, allowed: no signal, and a store really writes. */
static void positive(const struct access *a, unsigned char *pg)
{
	uintptr_t base = (uintptr_t)pg + (a->offset > 0x800 ? page : 0);
	char name[96], why[100] = "";

	snprintf(name, sizeof(name), "granted-%s", a->name);
	memset(pg, 0x5a, page);
	got_sig = 0;
	if (!run(a, base)) {
		tests++;
		passed++;
		printf("ok %d %s # SKIP no FEAT_MOPS\n", tests, name);
		return;
	}
	if (got_sig)
		snprintf(why, sizeof(why), "signal %d code %d addr %#lx",
			 got_sig, got_code, (unsigned long)got_addr);
	else if (a->is_write && strcmp(a->name, "cas") && unchanged(pg))
		snprintf(why, sizeof(why), "store did not happen");
	result(!why[0], name, why);
	memset(pg, 0x5a, page);
}

static sigjmp_buf looped;

static void on_alarm(int sig)
{
	(void)sig;
	siglongjmp(looped, 1);
}

ACCESSOR(do_ldadd_x9, "ldadd x10, x11, [x9]")

/*
 * Instruction fetch from a key without X, and an atomic on a key without
 * R (but W): both fault with SEGV_PKUERR at the exact address. The atomic
 * must not loop (a fault reported as a write would be retried forever,
 * since the key allows writes): an alarm catches that.
 */
#define EXTRA_TESTS 5
static void exec_and_read_denied(void)
{
	int key_nx = pkey_alloc_(KEY_DENY_EXECUTE);
	int key_nr = pkey_alloc_(KEY_DENY_READ);
	unsigned char *code = mmap(NULL, page, PROT_READ | PROT_WRITE,
				   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	unsigned char *data = new_pages();
	uint32_t ret_insn = 0xd65f03c0;		/* ret */
	void (*fn)(void) = (void (*)(void))code;
	uint64_t por;
	char why[160];

	result(key_nx > 0 && key_nr > 0 && code != MAP_FAILED,
	       "pkey_alloc execute-/read-denied keys", "pkey_alloc failed");
	memcpy(code, &ret_insn, 4);
	__builtin___clear_cache((char *)code, (char *)code + 4);
	pkey_mprotect_(code, page, PROT_READ | PROT_EXEC, key_nx);

	got_sig = got_code = 0;
	got_addr = 0;
	fetch_fault = 1;
	fn();
	fetch_fault = 0;
	snprintf(why, sizeof(why), "sig %d code %d addr %#lx, want %p",
		 got_sig, got_code, (unsigned long)got_addr, code);
	result(got_sig == SIGSEGV && got_code == SEGV_PKUERR &&
	       got_addr == (uintptr_t)code, "exec-denied-call", why);

	por = por_read();
	por_write(por | 0x2ull << (4 * key_nx));	/* grant X */
	got_sig = 0;
	fn();
	por_write(por);
	result(!got_sig, "exec-granted-call", "signal on a granted call");

	pkey_mprotect_(data, page, PROT_READ | PROT_WRITE, key_nr);
	got_sig = got_code = 0;
	got_addr = 0;
	skip_bytes = 4;
	signal(SIGALRM, on_alarm);
	alarm(10);
	if (!sigsetjmp(looped, 1)) {
		do_ldadd_x9((uintptr_t)data);
		alarm(0);
		snprintf(why, sizeof(why), "sig %d code %d addr %#lx, want %p",
			 got_sig, got_code, (unsigned long)got_addr, data);
		result(got_sig == SIGSEGV && got_code == SEGV_PKUERR &&
		       got_addr == (uintptr_t)data, "read-denied-ldadd", why);
	} else {
		result(0, "read-denied-ldadd",
		       "no signal in 10 s: the fault is retried forever");
	}
	got_sig = 0;
	do_str((uintptr_t)data);
	result(!got_sig, "read-denied-key-store-ok",
	       "store to a key that only denies R faulted");
}

int main(void)
{
	unsigned n = sizeof(accesses) / sizeof(accesses[0]), i;
	unsigned char *rd_denied, *wr_denied;
	int key_na, key_nw;
	uint64_t por_saved;
	struct sigaction sa;
	stack_t ss;

	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("TAP version 13\n");
	if (!(getauxval(AT_HWCAP2) & HWCAP2_POE)) {
		printf("1..0 # SKIP POE not supported (no HWCAP2_POE)\n");
		return KSFT_SKIP;
	}
	page = sysconf(_SC_PAGESIZE);
	have_mops = !!(getauxval(AT_HWCAP2) & (1UL << 43));	/* MOPS */

	ss.ss_sp = malloc(1 << 16);
	ss.ss_size = 1 << 16;
	ss.ss_flags = 0;
	sigaltstack(&ss, NULL);
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_segv;
	sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
	sigaction(SIGSEGV, &sa, NULL);

	/* 2 setup tests, then each access class on each key, then granted */
	printf("1..%u\n", 2 + n + n + n + EXTRA_TESTS);
	key_na = pkey_alloc_(KEY_DENY_ACCESS);
	key_nw = pkey_alloc_(KEY_DENY_WRITE);
	result(key_na > 0 && key_nw > 0, "pkey_alloc", "pkey_alloc failed");
	rd_denied = new_pages();
	wr_denied = new_pages();
	result(!pkey_mprotect_(rd_denied, page, PROT_READ | PROT_WRITE,
			       key_na) &&
	       !pkey_mprotect_(wr_denied, page, PROT_READ | PROT_WRITE,
			       key_nw),
	       "pkey_mprotect", "pkey_mprotect failed");

	/* every access class on the access-denied key faults */
	for (i = 0; i < n; i++)
		negative(&accesses[i], rd_denied, key_na, "access");
	/* stores and read-modify-writes fault on the write-denied key,
	 * plain loads succeed there */
	for (i = 0; i < n; i++) {
		if (accesses[i].is_write) {
			negative(&accesses[i], wr_denied, key_nw, "write");
		} else {
			char name[96];

			snprintf(name, sizeof(name), "write-denied-load-ok-%s",
				 accesses[i].name);
			got_sig = 0;
			accesses[i].fn((uintptr_t)wr_denied);
			result(!got_sig && unchanged(wr_denied), name,
			       "load from a read-allowed key faulted");
		}
	}
	/* grant RW on both keys through POR_EL0: everything succeeds */
	por_saved = por_read();
	por_write(por_saved | 0x5ull << (4 * key_na) |
		  0x5ull << (4 * key_nw));
	for (i = 0; i < n; i++)
		positive(&accesses[i], rd_denied);
	por_write(por_saved);

	exec_and_read_denied();

	printf("# Totals: pass:%d fail:%d xfail:0 xpass:0 skip:0 error:0\n",
	       passed, failed);
	return failed ? 1 : 0;
}
