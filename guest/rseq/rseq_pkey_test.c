/*
 * rseq_pkey_test.c - the kernel's rseq accesses must not depend on POR_EL0
 *
 * glibc registers an rseq area in every thread's TLS, which has pkey 0.
 * The kernel writes that area on the way back to user space after the
 * thread was scheduled, and reads it when it delivers a signal, at times
 * the thread does not choose. A thread that has dropped its rights to
 * key 0 (here: execute only, what mm/pkey_sighandler_tests does) must
 * neither get SIGSEGV for sleeping nor have a SIGSEGV of its own made
 * fatal (such a fatal SIGSEGV stays blocked, and unseen, while the handler
 * runs, and kills the process when the handler returns). Each case runs
 * in a child process, so that a killed child is a failed case rather than
 * a truncated report.
 *
 * Build: aarch64-linux-gnu-gcc -static -O2 -pthread
 * Output: TAP; exit 0 if all passed, 1 on failure, 4 (KSFT_SKIP) without
 * POE or without an rseq registration.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#ifndef HWCAP2_POE
#define HWCAP2_POE (1UL << 63)
#endif
#define KSFT_SKIP 4
#define POE_X 0x2UL
#define POE_RW 0x5UL
#define POE_RWX 0x7UL
#define POR_PERM(key, perm) ((uint64_t)(perm) << (4 * (key)))

/* glibc >= 2.35: size of the rseq area it registered, 0 if none */
extern const unsigned int __rseq_size __attribute__((weak));

static struct timespec *sleep_ts;	/* in a page with its own key */
static int other_key;
static volatile sig_atomic_t sig_code;

static inline void write_por_el0(uint64_t v)
{
	asm volatile("msr S3_3_C10_C2_4, %0\n\tisb" : : "r"(v) : "memory");
}

/* A syscall that touches nothing in key 0, not even the stack. */
static inline long raw_syscall2(long nr, long a0, long a1)
{
	register long x0 asm("x0") = a0;
	register long x1 asm("x1") = a1;
	register long x8 asm("x8") = nr;

	asm volatile("svc #0" : "+r"(x0) : "r"(x1), "r"(x8) : "memory");
	return x0;
}

static void record_and_exit(int sig, siginfo_t *si, void *uc)
{
	sig_code = si->si_code;
	syscall(SYS_exit, 0);
}

/* Return past the faulting store, to the thread's own POR_EL0. */
static void record_and_skip(int sig, siginfo_t *si, void *uc)
{
	sig_code = si->si_code;
	((ucontext_t *)uc)->uc_mcontext.pc += 4;
}

/*
 * Sleeping makes the thread go through schedule(), after which the kernel
 * updates the IDs in its rseq area on the way back to user space.
 */
static void *sleep_with_key0_denied(void *arg)
{
	/* Everything that lives in key 0 is read before key 0 is denied. */
	uint64_t deny = POR_PERM(0, POE_X) | POR_PERM(other_key, POE_RW);
	uint64_t allow = POR_PERM(0, POE_RWX) | POR_PERM(other_key, POE_RW);
	long ts = (long)sleep_ts;
	int i;

	for (i = 0; i < 5; i++) {
		write_por_el0(deny);
		raw_syscall2(SYS_nanosleep, ts, 0);
		write_por_el0(allow);
	}
	return NULL;
}

/*
 * A SIGSEGV (a store to NULL) while key 0 is denied: the kernel reads
 * rseq_cs to deliver it. The handler skips the store and returns; the
 * thread gets key 0 back and returns.
 */
static void *fault_with_key0_denied(void *arg)
{
	write_por_el0(POR_PERM(0, POE_X));
	asm volatile("str wzr, [%0]" : : "r"(0UL) : "memory");
	write_por_el0(POR_PERM(0, POE_RWX));
	return NULL;
}

/* Child: run @fn in a thread; exit 0 if @expect_code was seen (0: none). */
static int child(void *(*fn)(void *), int expect_code)
{
	struct sigaction sa = { .sa_flags = SA_SIGINFO };
	pthread_t t;

	sa.sa_sigaction = expect_code ? record_and_skip : record_and_exit;
	sigaction(SIGSEGV, &sa, NULL);
	sig_code = 0;
	if (pthread_create(&t, NULL, fn, NULL))
		return 2;
	pthread_join(t, NULL);
	if (sig_code != expect_code) {
		printf("# expected si_code %d, got %d\n", expect_code, (int)sig_code);
		fflush(stdout);
		return 1;
	}
	return 0;
}

static int tests, failed;

static void run(const char *name, void *(*fn)(void *), int expect_code)
{
	int status;
	pid_t pid;

	fflush(stdout);
	pid = fork();
	if (pid == 0)
		_exit(child(fn, expect_code));
	waitpid(pid, &status, 0);
	tests++;
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
		printf("ok %d %s\n", tests, name);
		return;
	}
	failed++;
	if (WIFSIGNALED(status))
		printf("# killed by signal %d\n", WTERMSIG(status));
	printf("not ok %d %s\n", tests, name);
}

int main(void)
{
	printf("TAP version 13\n1..2\n");
	if (!(getauxval(AT_HWCAP2) & HWCAP2_POE)) {
		printf("ok 1 # SKIP no POE\nok 2 # SKIP no POE\n");
		return KSFT_SKIP;
	}
	if (!&__rseq_size || !__rseq_size) {
		printf("ok 1 # SKIP libc registered no rseq area\n"
		       "ok 2 # SKIP libc registered no rseq area\n");
		return KSFT_SKIP;
	}

	sleep_ts = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	other_key = syscall(SYS_pkey_alloc, 0, 0);
	if (sleep_ts == MAP_FAILED || other_key <= 0 ||
	    syscall(SYS_pkey_mprotect, sleep_ts, 4096, PROT_READ | PROT_WRITE, other_key)) {
		printf("Bail out! cannot set up a page with its own pkey\n");
		return 1;
	}
	sleep_ts->tv_sec = 0;
	sleep_ts->tv_nsec = 1000000;

	run("rseq_update_after_sleep_with_key0_denied", sleep_with_key0_denied, 0);
	run("sigsegv_handler_returns_with_key0_denied", fault_with_key0_denied, SEGV_MAPERR);
	printf("# Totals: pass:%d fail:%d\n", tests - failed, failed);
	return failed ? 1 : 0;
}
