/*
 * poe_pcrel_test.c - user pkeys in code that runs at two addresses
 *
 * QEMU's aarch64 system emulation translates position-independent TBs
 * (CF_PCREL) and shares them between every virtual address that maps the
 * same physical page: the text of a program run twice, at two load
 * addresses (ASLR), is translated once. An emulator that kept a virtual
 * address seen at translation time would be wrong in the second run. So
 * this program runs itself twice, each time in a new exec (a new random
 * load address), and each run, in its own text:
 *   - stores to a write-denied key: SIGSEGV/SEGV_PKUERR, si_addr the
 *     address stored to, the signal frame's PC the store (the handler
 *     resumes after it);
 *   - loads a PC-relative literal from an access-denied key: the same,
 *     si_addr the literal's address;
 *   - calls a function on a page of its text moved to an execute-denied
 *     key: SEGV_PKUERR at the function, PC the function;
 *   - writes POR_EL0 with MSR (emulated by the plugin, which skips the
 *     instruction) and reads it back with MRS: it must go on after each,
 *     and a store on the key it opened must succeed.
 * Any other SIGSEGV (e.g. SEGV_MAPERR at a first-run address) ends the run
 * with a diagnostic; the parent reports the tests it did not finish.
 * Without POE (no HWCAP2_POE): 1..0 # SKIP.
 *
 * Build: aarch64-linux-gnu-gcc -O2 -fPIE -pie (dynamically linked, so
 * that libc moves too).
 * Output: TAP; exit 0 if all passed, 1 on failure, 4 (KSFT_SKIP) if
 * skipped.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <ucontext.h>
#include <unistd.h>

#include "poe_user.h"

#define RUNS 2
#define RUN_TESTS 5		/* per run, see run_tests() */
#define ATTEMPTS 5		/* execs to get two different addresses */

/* a page of its own in the text: moved to an execute-denied key */
asm(".pushsection .text.poe_pcrel_nx, \"ax\"\n"
    ".balign 4096\n"
    ".globl nx_fn\n"
    ".type nx_fn, %function\n"
    "nx_fn:\n"
    "	mov x0, #42\n"
    "	ret\n"
    ".balign 4096\n"
    ".popsection");
int nx_fn(void);

/* the target of a PC-relative literal load, a page of its own */
static uint64_t lit_page[4096 / 8] __attribute__((aligned(4096)));

/* set before an expected fault, read by the handler */
static volatile int expect_fault;
static volatile int resume_at_lr;	/* else after the access */
static volatile uintptr_t access_pc;	/* the access, set by its asm */
/* filled in by the handler */
static volatile int got_sig, got_code;
static volatile uintptr_t got_addr, got_pc;

static int run_no, test_no;
static long page;

static void on_segv(int sig, siginfo_t *si, void *ctx)
{
	ucontext_t *uc = ctx;
	char line[200];
	int n;

	got_sig = sig;
	got_code = si->si_code;
	got_addr = (uintptr_t)si->si_addr;
	got_pc = uc->uc_mcontext.pc;
	if (!expect_fault) {
		n = snprintf(line, sizeof(line),
			     "# run %d: unexpected signal %d code %d addr %#lx "
			     "pc %#lx\n", run_no, sig, si->si_code,
			     (unsigned long)si->si_addr,
			     (unsigned long)uc->uc_mcontext.pc);
		write(1, line, n);
		_exit(3);
	}
	expect_fault = 0;
	/*
	 * Resume after the access (at the address the test recorded, not
	 * got_pc + 4, which would crash if got_pc were wrong: got_pc is
	 * checked separately), or at the caller of a function whose fetch
	 * faulted.
	 */
	uc->uc_mcontext.pc = resume_at_lr ? uc->uc_mcontext.regs[30] :
					    access_pc + 4;
}

static void result(int ok, const char *name, const char *why)
{
	test_no++;
	printf("%sok %d run%d-%s%s%s\n", ok ? "" : "not ", test_no, run_no,
	       name, ok ? "" : " # ", ok ? "" : why);
	fflush(stdout);
}

/* "want SEGV_PKUERR at addr, pc": the reason it is not, or "" */
static const char *pkey_fault_why(uintptr_t addr, uintptr_t pc, char *why,
				  size_t len)
{
	if (!got_sig)
		snprintf(why, len, "no signal");
	else if (got_code != SEGV_PKUERR)
		snprintf(why, len, "si_code %d, want SEGV_PKUERR", got_code);
	else if (got_addr != addr)
		snprintf(why, len, "si_addr %#lx, want %#lx",
			 (unsigned long)got_addr, (unsigned long)addr);
	else if (got_pc != pc)
		snprintf(why, len, "pc %#lx, want %#lx",
			 (unsigned long)got_pc, (unsigned long)pc);
	else
		why[0] = 0;
	return why;
}

static void arm_fault(int at_lr)
{
	got_sig = got_code = 0;
	got_addr = got_pc = 0;
	access_pc = 0;
	resume_at_lr = at_lr;
	expect_fault = 1;
}

/* str x10, [base], its address in access_pc first */
static void store_at(uint64_t *base)
{
	uintptr_t where;

	asm volatile("adr %0, 1f\n\t"
		     "str %0, [%1]\n\t"
		     "mov x10, #0x77\n"
		     "1:	str x10, [%2]"
		     : "=&r"(where)
		     : "r"(&access_pc), "r"(base)
		     : "x10", "memory");
}

/* ldr x10, lit_page (PC-relative), its address in access_pc first */
static void literal_load(void)
{
	uintptr_t where;

	asm volatile("adr %0, 1f\n\t"
		     "str %0, [%1]\n"
		     "1:	ldr x10, lit_page"
		     : "=&r"(where)
		     : "r"(&access_pc)
		     : "x10", "memory");
}

static int pkey_alloc_(unsigned rights)
{
	return syscall(SYS_pkey_alloc, 0, rights);
}

static int pkey_mprotect_(void *p, size_t len, int prot, int key)
{
	return syscall(SYS_pkey_mprotect, p, len, prot, key);
}

static void denied_store(uint64_t *data)
{
	char why[160];

	arm_fault(0);
	store_at(data);
	pkey_fault_why((uintptr_t)data, access_pc, why, sizeof(why));
	result(!why[0], "store-denied", why);
}

static void denied_literal(void)
{
	char why[160];

	arm_fault(0);
	literal_load();
	pkey_fault_why((uintptr_t)lit_page, access_pc, why, sizeof(why));
	result(!why[0], "literal-load-denied", why);
}

static void denied_fetch(int key_nx)
{
	void *fpage = (void *)((uintptr_t)nx_fn & ~(uintptr_t)(page - 1));
	char why[160];
	int r;

	r = nx_fn();				/* translated here, allowed */
	if (r != 42 || pkey_mprotect_(fpage, page, PROT_READ | PROT_EXEC,
				      key_nx)) {
		result(0, "exec-denied-call", "nx_fn or pkey_mprotect failed");
		return;
	}
	arm_fault(1);				/* back to the caller */
	nx_fn();
	pkey_fault_why((uintptr_t)nx_fn, (uintptr_t)nx_fn, why, sizeof(why));
	pkey_mprotect_(fpage, page, PROT_READ | PROT_EXEC, 0);
	result(!why[0], "exec-denied-call", why);
}

static void por_round_trip(int key_nw, uint64_t *data)
{
	uint64_t por = por_read(), want, now;
	char why[160];

	want = por | 0x4ull << (4 * key_nw);	/* grant W */
	por_write(want);
	now = por_read();
	snprintf(why, sizeof(why), "POR_EL0 %#llx, want %#llx",
		 (unsigned long long)now, (unsigned long long)want);
	result(now == want, "msr-mrs-por_el0", why);

	got_sig = 0;
	data[1] = 0x55;				/* must not fault now */
	result(!got_sig && data[1] == 0x55, "store-granted-by-msr",
	       "the store faulted");
	por_write(por);
}

/* One run, in a fresh exec: RUN_TESTS results. */
static int run_tests(void)
{
	int key_nw = pkey_alloc_(KEY_DENY_WRITE);
	int key_na = pkey_alloc_(KEY_DENY_ACCESS);
	int key_nx = pkey_alloc_(KEY_DENY_EXECUTE);
	uint64_t *data = mmap(NULL, page, PROT_READ | PROT_WRITE,
			      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_segv;
	sa.sa_flags = SA_SIGINFO;
	sigaction(SIGSEGV, &sa, NULL);

	printf("# run %d: nx_fn at %p, lit_page at %p\n", run_no,
	       (void *)nx_fn, (void *)lit_page);
	if (key_nw <= 0 || key_na <= 0 || key_nx <= 0 || data == MAP_FAILED ||
	    pkey_mprotect_(data, page, PROT_READ | PROT_WRITE, key_nw) ||
	    pkey_mprotect_(lit_page, page, PROT_READ | PROT_WRITE, key_na)) {
		printf("# run %d: pkey set-up failed\n", run_no);
		return 1;
	}
	denied_store(data);
	denied_literal();
	denied_fetch(key_nx);
	por_round_trip(key_nw, data);	/* last: MSR/MRS at EL0 */
	return 0;
}

/* What one run printed. */
struct run_out {
	char text[4096];
	size_t len;
	int results, failures, status;
	uintptr_t nx_fn;
};

/* Exec ourselves for run r, its tests numbered from base + 1. */
static void spawn_run(int r, int base, struct run_out *out)
{
	char arg_run[16], arg_base[16], line[512];
	int fd[2];
	FILE *f;
	pid_t pid;

	memset(out, 0, sizeof(*out));
	snprintf(arg_run, sizeof(arg_run), "%d", r);
	snprintf(arg_base, sizeof(arg_base), "%d", base);
	if (pipe(fd)) {
		out->status = -1;
		return;
	}
	fflush(stdout);
	pid = fork();
	if (!pid) {
		dup2(fd[1], 1);
		close(fd[0]);
		close(fd[1]);
		execl("/proc/self/exe", "poe_pcrel_test", "run", arg_run,
		      arg_base, (char *)NULL);
		_exit(127);
	}
	close(fd[1]);
	f = fdopen(fd[0], "r");
	while (fgets(line, sizeof(line), f)) {
		void *p;

		if (sscanf(line, "# run %*d: nx_fn at %p", &p) == 1)
			out->nx_fn = (uintptr_t)p;
		if (!strncmp(line, "ok ", 3))
			out->results++;
		if (!strncmp(line, "not ok ", 7)) {
			out->results++;
			out->failures++;
		}
		if (out->len + strlen(line) < sizeof(out->text)) {
			strcpy(out->text + out->len, line);
			out->len += strlen(line);
		}
	}
	fclose(f);
	waitpid(pid, &out->status, 0);
}

int main(int argc, char **argv)
{
	struct run_out out;
	uintptr_t addr[RUNS] = { 0 };
	int r, attempt, failures = 0;

	setvbuf(stdout, NULL, _IOLBF, 0);
	page = sysconf(_SC_PAGESIZE);
	if (argc == 4 && !strcmp(argv[1], "run")) {
		run_no = atoi(argv[2]);
		test_no = atoi(argv[3]);
		return run_tests();
	}
	printf("TAP version 13\n");
	if (!(getauxval(AT_HWCAP2) & HWCAP2_POE)) {
		printf("1..0 # SKIP POE not supported (no HWCAP2_POE)\n");
		return KSFT_SKIP;
	}
	printf("1..%d\n", RUNS * RUN_TESTS + 1);
	for (r = 1; r <= RUNS; r++) {
		/* a later run at the first run's address tests nothing */
		for (attempt = 0; attempt < ATTEMPTS; attempt++) {
			spawn_run(r, test_no, &out);
			if (r == 1 || out.nx_fn != addr[0])
				break;
			printf("# run %d loaded at the first run's address, "
			       "again\n", r);
		}
		addr[r - 1] = out.nx_fn;
		fputs(out.text, stdout);
		test_no += out.results;
		failures += out.failures;
		run_no = r;
		while (test_no < r * RUN_TESTS) {
			failures++;
			result(0, "unfinished", WIFSIGNALED(out.status) ?
			       "the run was killed by a signal" :
			       "the run stopped before this test");
		}
	}
	run_no = 0;
	result(addr[0] && addr[1] && addr[0] != addr[1], "two-load-addresses",
	       "the runs did not load at two addresses (ASLR off?)");
	failures += !(addr[0] && addr[1] && addr[0] != addr[1]);
	return failures ? 1 : 0;
}
