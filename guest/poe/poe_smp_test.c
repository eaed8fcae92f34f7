/*
 * poe_smp_test.c - user pkeys across CPUs, CPU offline/online, system sleep
 *
 * pkey_mprotect() on one CPU must take effect for a thread on another CPU
 * (the kernel's broadcast TLBI): a thread pinned to CPU B stores to a page
 * in a loop while the main thread, pinned to CPU A, moves the page
 *   - from key 0 to a write-denied key: the thread's next stores must fault
 *     with SIGSEGV/SEGV_PKUERR (the handler skips them);
 *   - back to key 0: the thread's stores must stop faulting.
 * Both directions run for A != B (CPU 0 and 1, both ways round) and, as a
 * control, A == B. Then the same checks run again after
 *   - CPU 1 offline and online again (PSCI CPU_OFF/CPU_ON: the CPU comes
 *     back from reset and the kernel must restore its POE state),
 *   - suspend-to-idle ("freeze") and "mem" (suspend-to-idle too on QEMU
 *     virt, whose /sys/power/mem_sleep is [s2idle]), each woken by the RTC
 *     alarm if /sys/class/rtc/rtc0/wakealarm works, else run as
 *     /sys/power/pm_test "devices" ("core" for a deep "mem") if PM_DEBUG
 *     offers it; without either, skipped with the reason.
 * Without POE (no HWCAP2_POE) or with fewer than 2 CPUs: 1..0 # SKIP.
 *
 * Build: aarch64-linux-gnu-gcc -static -O2 -pthread
 * Output: TAP; exit 0 if all passed, 1 on failure, 4 (KSFT_SKIP) if skipped.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include "poe_user.h"

#define TIMEOUT_S 20

static int tests, failed;
static volatile uint64_t *page;
static long page_size;
static int key_nw;

/* written by the storing thread */
static volatile unsigned long stores, faults, bad_code;
static volatile int stop;

static void result(int ok, const char *name, const char *why)
{
	tests++;
	if (!ok)
		failed++;
	printf("%sok %d %s%s%s\n", ok ? "" : "not ", tests, name,
	       ok ? "" : " # ", ok ? "" : why);
	fflush(stdout);
}

static void skip(const char *name, const char *why)
{
	tests++;
	printf("ok %d %s # SKIP %s\n", tests, name, why);
	fflush(stdout);
}

static void on_segv(int sig, siginfo_t *si, void *ctx)
{
	ucontext_t *uc = ctx;

	(void)sig;
	if (si->si_code != SEGV_PKUERR)
		bad_code = si->si_code ? si->si_code : -1;
	faults++;
	uc->uc_mcontext.pc += 4;	/* skip the store */
}

static int pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set);
}

/* One plain store per iteration, counted when it did not fault. */
static void *storer(void *arg)
{
	int cpu = (int)(long)arg;

	if (pin(cpu))
		return (void *)1;
	while (!stop) {
		unsigned long f = faults;

		asm volatile("str %0, [%1]" : : "r"(stores), "r"(page)
			     : "memory");
		if (faults == f)
			stores++;
	}
	return NULL;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Wait until *counter has moved by n, or the timeout; true if it did. */
static int wait_for(volatile unsigned long *counter, unsigned long n)
{
	unsigned long start = *counter;
	double t0 = now();

	while (*counter - start < n)
		if (now() - t0 > TIMEOUT_S)
			return 0;
		else
			sched_yield();
	return 1;
}

static int set_key(int key)
{
	return syscall(SYS_pkey_mprotect, (void *)page, page_size,
		       PROT_READ | PROT_WRITE, key);
}

/* Both directions with the main thread on cpu_a, the storer on cpu_b. */
static void cross(int cpu_a, int cpu_b, const char *when)
{
	char name[128], why[160];
	pthread_t t;
	int ok;

	if (pin(cpu_a) || set_key(0)) {
		snprintf(name, sizeof(name), "%s setup cpu%d/cpu%d", when,
			 cpu_a, cpu_b);
		result(0, name, strerror(errno));
		return;
	}
	stop = 0;
	stores = faults = bad_code = 0;
	pthread_create(&t, NULL, storer, (void *)(long)cpu_b);

	/* key 0 -> write-denied key: the stores must start faulting */
	ok = wait_for(&stores, 1000) && !set_key(key_nw) &&
	     wait_for(&faults, 3);
	snprintf(name, sizeof(name),
		 "%s%spkey_mprotect on cpu%d denies a store on cpu%d", when,
		 *when ? " " : "", cpu_a, cpu_b);
	snprintf(why, sizeof(why), "stores %lu faults %lu in %ds", stores,
		 faults, TIMEOUT_S);
	result(ok && !bad_code, name, bad_code ? "si_code not SEGV_PKUERR" :
	       why);

	/* and back: the stores must stop faulting */
	ok = ok && !set_key(0) && wait_for(&stores, 1000);
	snprintf(name, sizeof(name),
		 "%s%spkey_mprotect on cpu%d grants a store on cpu%d again",
		 when, *when ? " " : "", cpu_a, cpu_b);
	snprintf(why, sizeof(why), "stores %lu faults %lu in %ds", stores,
		 faults, TIMEOUT_S);
	result(ok, name, why);

	stop = 1;
	pthread_join(t, NULL);
}

static void skip_cross(const char *when, const char *why)
{
	char name[160];
	int i;

	for (i = 0; i < 6; i++) {
		snprintf(name, sizeof(name), "%s cross-CPU check %d", when,
			 i + 1);
		skip(name, why);
	}
}

static void cross_all(const char *when)
{
	cross(0, 1, when);
	cross(1, 0, when);
	cross(0, 0, when);
}

static int write_file(const char *path, const char *val)
{
	FILE *f = fopen(path, "w");
	int ok;

	if (!f)
		return -1;
	ok = fputs(val, f) >= 0;
	ok &= fclose(f) == 0;
	return ok ? 0 : -1;
}

static int file_has(const char *path, const char *word)
{
	char buf[256] = "";
	FILE *f = fopen(path, "r");

	if (!f)
		return 0;
	if (!fgets(buf, sizeof(buf), f))
		buf[0] = 0;
	fclose(f);
	return strstr(buf, word) != NULL;
}

static void cpu_cycle(void)
{
	const char *p = "/sys/devices/system/cpu/cpu1/online";
	int ok;

	pin(0);
	ok = !write_file(p, "0") && !write_file(p, "1");
	result(ok, "cpu1 offline and online", strerror(errno));
	if (ok)
		cross_all("after cpu1 offline/online:");
	else
		skip_cross("after cpu1 offline/online:", "no cycle");
}

/* Arm the wakeup: the RTC alarm in 3 s, or pm_test at level; 0 if none. */
static int arm_wakeup(int use_pm_test, const char *level)
{
	const char *alarm = "/sys/class/rtc/rtc0/wakealarm";

	if (use_pm_test)
		return write_file("/sys/power/pm_test", level) ? -1 : 2;
	write_file(alarm, "0");
	return write_file(alarm, "+3") ? -1 : 1;
}

/*
 * One sleep cycle of kind ("freeze" or "mem"). The wakeup: pm_test at
 * test_level if prefer_pm_test and PM_DEBUG offers it, else the RTC alarm,
 * else pm_test anyway. A transition refused with EAGAIN/EBUSY (a wakeup
 * event still pending from the previous one) is retried. (Suspend-to-idle
 * accepts only the pm_test levels up to "platform", and "mem" is
 * suspend-to-idle where /sys/power/mem_sleep offers nothing deeper, as on
 * QEMU virt.)
 */
static void sleep_cycle(const char *kind, const char *test_level,
			int prefer_pm_test)
{
	int has_alarm = !access("/sys/class/rtc/rtc0/wakealarm", W_OK);
	int has_pm_test = !access("/sys/power/pm_test", W_OK);
	int use_pm_test = has_pm_test && (prefer_pm_test || !has_alarm);
	char name[96], when[64];
	int ok = 0, tries, err = 0;

	snprintf(name, sizeof(name), "echo %s > /sys/power/state (%s)", kind,
		 use_pm_test ? "pm_test" : "RTC alarm");
	snprintf(when, sizeof(when), "after %s:", kind);
	if (!file_has("/sys/power/state", kind)) {
		skip(name, "not offered by /sys/power/state");
		skip_cross(when, "no cycle");
		return;
	}
	if (!has_alarm && !has_pm_test) {
		skip(name, "no wakeup source: no RTC wake alarm "
		     "(CONFIG_RTC_DRV_PL031, RTC_INTF_SYSFS) and no pm_test "
		     "(CONFIG_PM_DEBUG)");
		skip_cross(when, "no cycle");
		return;
	}
	pin(0);
	for (tries = 0; tries < 3 && !ok; tries++) {
		if (tries)
			sleep(2);
		if (arm_wakeup(use_pm_test, test_level) < 0) {
			err = errno;
			break;
		}
		ok = !write_file("/sys/power/state", kind);
		err = errno;
		if (use_pm_test)
			write_file("/sys/power/pm_test", "none");
		if (!ok && err != EAGAIN && err != EBUSY)
			break;
	}
	result(ok, name, strerror(err));
	if (ok)
		cross_all(when);
	else
		skip_cross(when, "no cycle");
}

int main(void)
{
	struct sigaction sa;

	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("TAP version 13\n");
	if (!(getauxval(AT_HWCAP2) & HWCAP2_POE)) {
		printf("1..0 # SKIP POE not supported (no HWCAP2_POE)\n");
		return KSFT_SKIP;
	}
	if (sysconf(_SC_NPROCESSORS_ONLN) < 2) {
		printf("1..0 # SKIP needs 2 CPUs\n");
		return KSFT_SKIP;
	}
	page_size = sysconf(_SC_PAGESIZE);
	page = mmap(NULL, page_size, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	key_nw = syscall(SYS_pkey_alloc, 0, KEY_DENY_WRITE);
	if (page == MAP_FAILED || key_nw <= 0) {
		printf("1..0 # SKIP mmap/pkey_alloc failed: %s\n",
		       strerror(errno));
		return KSFT_SKIP;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_segv;
	sa.sa_flags = SA_SIGINFO;
	sigaction(SIGSEGV, &sa, NULL);

	for (const char **f = (const char *[]){ "/sys/power/state",
		"/sys/power/mem_sleep", "/sys/power/pm_test",
		"/sys/class/rtc/rtc0/name", "/sys/class/rtc/rtc0/wakealarm",
		NULL }; *f; f++) {
		char buf[128] = "(none)";
		FILE *fp = fopen(*f, "r");

		if (fp && !fgets(buf, sizeof(buf), fp))
			strcpy(buf, "(empty)\n");
		if (fp)
			fclose(fp);
		printf("# %s: %s%s", *f, buf, strchr(buf, '\n') ? "" : "\n");
	}
	/* 6 per cross_all, 4 of them plus the 3 cycles themselves */
	printf("1..%d\n", 4 * 6 + 3);
	cross_all("");
	cpu_cycle();
	sleep_cycle("freeze", "devices", 0);
	sleep_cycle("mem", file_has("/sys/power/mem_sleep", "[deep]") ?
		    "core" : "devices", 0);
	printf("# Totals: pass:%d fail:%d\n", tests - failed, failed);
	return failed ? 1 : 0;
}
