/*
 * regs.c - guest register access (see regs.h)
 *
 * qemu_plugin_get_registers() lists the registers QEMU's gdbstub knows,
 * by name (QEMU's names for system registers); the handles are the same
 * on every vCPU. Reads and writes are only valid from callbacks that
 * declared register access (QEMU_PLUGIN_CB_R_REGS or more).
 *
 * The general-purpose registers, SP and PC, read on every checked access,
 * have a faster path. qemu_plugin_read_register() goes through QEMU's
 * gdbstub (a lookup of the register's set, QOM casts, an append to a
 * GByteArray): in a boot where every EL1 store is checked it took about a
 * quarter of QEMU's CPU time, more than the checks themselves (see
 * README.md). What it returns for x0-x30, sp and pc are the fields
 * xregs[0..31] and pc of QEMU's CPUARMState, in that order, which QEMU
 * writes back before a callback that declared register access. So once a
 * vCPU's registers are distinctive enough (at least 12 different values),
 * the plugin looks for the 33 values the API gave, in a row, in the vCPU's
 * CPU object (QEMU's current_cpu, found with dlsym()), and reads them
 * there from then on. The layout is QEMU's private business, so the fast
 * path checks itself: for the first 1024 reads on each vCPU and every
 * 65536th after, the value is read through the API as well, and one
 * difference (or a second place holding the same 33 values) turns the
 * fast path off for good, with a warning. fastregs=off uses the API only.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <malloc.h>
#include <stdio.h>
#include <string.h>

#include "regs.h"

#define likely(x)	__builtin_expect(!!(x), 1)
#define unlikely(x)	__builtin_expect(!!(x), 0)

static struct qemu_plugin_register *reg[R_NUM];
static struct qemu_plugin_register *xreg[31];
static bool ready;
static __thread GByteArray *buf __attribute__((tls_model("initial-exec")));

/* the fast path: slots 0-30 x0-x30, 31 sp, 32 pc */
#define SLOT_SP		31
#define SLOT_PC		32
#define NSLOTS		33
#define FAST_CHECK_FIRST	1024
#define FAST_CHECK_EVERY	65536
#define FAST_ATTEMPTS		64	/* calibrations tried per vCPU */
#define FAST_SCAN_MAX		(64 << 10)	/* if the size is unknown */

struct fast_vcpu {
	const volatile uint64_t *slots;	/* NULL: use the API */
	uint64_t reads;
	unsigned attempts;
} __attribute__((aligned(64)));

static struct fast_vcpu *fast;
static unsigned fast_n;
static bool fast_off;		/* disabled (option, or a mismatch) */
static bool fast_verbose;
static long fast_offset = -1;	/* of xregs in QEMU's CPU object */
static GMutex fast_lock;

static const char *const reg_names[R_NUM] = {
	[R_TCR_EL1] = "TCR_EL1", [R_TTBR0_EL1] = "TTBR0_EL1",
	[R_TTBR1_EL1] = "TTBR1_EL1", [R_SCTLR_EL1] = "SCTLR_EL1",
	[R_TCR2_EL1] = "TCR2_EL1", [R_PIR_EL1] = "PIR_EL1",
	[R_PIRE0_EL1] = "PIRE0_EL1", [R_CPACR_EL1] = "CPACR_EL1",
	[R_ID_AA64MMFR3_EL1] = "ID_AA64MMFR3_EL1", [R_ESR_EL1] = "ESR_EL1",
	[R_FAR_EL1] = "FAR_EL1", [R_VBAR_EL1] = "VBAR_EL1",
	[R_DCZID_EL0] = "DCZID_EL0", [R_CPSR] = "cpsr", [R_SP] = "sp",
	[R_ELR_EL1] = "ELR_EL1", [R_SPSR_EL1] = "SPSR_EL1", [R_PC] = "pc",
	[R_ID_AA64MMFR2_EL1] = "ID_AA64MMFR2_EL1",
	[R_TPIDR_EL1] = "TPIDR_EL1", [R_SP_EL0] = "SP_EL0",
};

/*
 * Optional: DCZID_EL0 (the ZVA size defaults to 64), ID_AA64MMFR2_EL1
 * (only bbm= needs it; plugin.c says so if it lacks), TPIDR_EL1 and
 * SP_EL0 (only window_stores= reads them: Linux's per-CPU offset and
 * current task at EL1; plugin.c says so).
 */
static bool reg_optional(enum poe_reg_id id)
{
	return id == R_DCZID_EL0 || id == R_ID_AA64MMFR2_EL1 ||
	       id == R_TPIDR_EL1 || id == R_SP_EL0;
}

bool poe_regs_init(bool verbose, unsigned max_vcpus, bool fastregs)
{
	GArray *regs = qemu_plugin_get_registers();
	bool ok = true;
	unsigned i, j;
	char name[8];

	for (i = 0; i < regs->len; i++) {
		qemu_plugin_reg_descriptor *r =
			&g_array_index(regs, qemu_plugin_reg_descriptor, i);

		for (j = 0; j < R_NUM; j++)
			if (!strcmp(r->name, reg_names[j]))
				reg[j] = r->handle;
		for (j = 0; j < 31; j++) {
			snprintf(name, sizeof(name), "x%u", j);
			if (!strcmp(r->name, name))
				xreg[j] = r->handle;
		}
	}
	g_array_free(regs, true);
	for (j = 0; j < R_NUM; j++) {
		if (!reg[j] && reg_optional(j)) {
			continue;
		} else if (!reg[j]) {
			fprintf(stderr, "poe-emu: register %s not found\n",
				reg_names[j]);
			ok = false;
		} else if (verbose) {
			fprintf(stderr, "poe-emu: register %s found\n",
				reg_names[j]);
		}
	}
	for (j = 0; j < 31; j++)
		if (!xreg[j])
			ok = false;
	fast = g_new0(struct fast_vcpu, max_vcpus);
	fast_n = max_vcpus;
	fast_off = !fastregs || !ok || !reg[R_SP] || !reg[R_PC];
	fast_verbose = verbose;
	ready = true;
	return ok;
}

bool poe_regs_ready(void)
{
	return ready;
}

bool poe_reg_found(enum poe_reg_id id)
{
	return reg[id] != NULL;
}

static uint64_t read_handle(struct qemu_plugin_register *h)
{
	uint64_t x = 0;

	if (!h)
		return 0;
	if (!buf)
		buf = g_byte_array_new();
	buf->len = 0;		/* faster than g_byte_array_set_size() */
	if (qemu_plugin_read_register(h, buf))
		memcpy(&x, buf->data, MIN(buf->len, sizeof(x)));
	return x;
}

uint64_t poe_reg_read(enum poe_reg_id id)
{
	return read_handle(reg[id]);
}

static struct qemu_plugin_register *slot_handle(unsigned slot)
{
	return slot < 31 ? xreg[slot] : slot == SLOT_SP ? reg[R_SP] :
	       reg[R_PC];
}

static void fast_disable(const char *why)
{
	unsigned i;

	g_mutex_lock(&fast_lock);
	if (!fast_off)
		fprintf(stderr, "poe-emu: reading registers from QEMU's CPU "
			"state turned off: %s; using the plugin API\n", why);
	fast_off = true;
	for (i = 0; i < fast_n; i++)
		fast[i].slots = NULL;
	g_mutex_unlock(&fast_lock);
}

/* How many different values? Few (early boot) could match by chance. */
static unsigned distinct(const uint64_t *v, unsigned n)
{
	unsigned i, j, d = 0;

	for (i = 0; i < n; i++) {
		for (j = 0; j < i && v[j] != v[i]; j++)
			;
		d += j == i;
	}
	return d;
}

/* Where in the CPU object are the 33 values (-1: nowhere, -2: twice)? */
static long find_slots(const uint8_t *cpu, const uint64_t *want)
{
	size_t size = malloc_usable_size((void *)cpu), off;
	long found = -1;

	if (!size || size > (16u << 20))
		size = FAST_SCAN_MAX;
	for (off = 0; off + NSLOTS * 8 <= size; off += 8) {
		if (memcmp(cpu + off, want, NSLOTS * 8))
			continue;
		if (found >= 0)
			return -2;
		found = off;
	}
	return found;
}

/* From a callback on vCPU f: find its registers in QEMU's CPU object. */
static void calibrate(struct fast_vcpu *f)
{
	uint64_t want[NSLOTS];
	const uint8_t *cpu;
	void **cur;
	unsigned i;
	long off;

	f->attempts++;
	for (i = 0; i < NSLOTS; i++)
		want[i] = read_handle(slot_handle(i));
	if (distinct(want, NSLOTS) < 12)
		return;			/* try again later */
	cur = dlsym(RTLD_DEFAULT, "current_cpu");	/* this thread's */
	if (!cur || !*cur) {
		fast_disable("no current_cpu in QEMU");
		return;
	}
	cpu = *cur;
	g_mutex_lock(&fast_lock);
	if (fast_offset < 0) {
		off = find_slots(cpu, want);
		if (off >= 0)
			fast_offset = off;
	} else {
		off = memcmp(cpu + fast_offset, want, sizeof(want)) ? -1 :
		      fast_offset;
	}
	if (off >= 0 && !fast_off) {
		f->slots = (const volatile uint64_t *)(cpu + off);
		f->reads = 0;
		if (fast_verbose)
			fprintf(stderr, "poe-emu: vcpu %td reads its registers "
				"from QEMU's CPU state (offset %ld)\n",
				f - fast, off);
	}
	g_mutex_unlock(&fast_lock);
	if (off == -2)
		fast_disable("the registers are in two places");
	else if (off == -1 && f->attempts >= FAST_ATTEMPTS)
		fast_disable("the registers are not in the CPU object");
}

static uint64_t read_slot(unsigned vcpu, unsigned slot)
{
	struct fast_vcpu *f = &fast[vcpu];
	const volatile uint64_t *slots = f->slots;
	uint64_t x;

	if (likely(slots)) {
		x = slots[slot];
		f->reads++;
		if (likely(f->reads > FAST_CHECK_FIRST &&
			   f->reads % FAST_CHECK_EVERY))
			return x;
		if (read_handle(slot_handle(slot)) == x)
			return x;
		fast_disable("a value differs from the API's");
	} else if (!fast_off && vcpu < fast_n &&
		   f->attempts < FAST_ATTEMPTS && !(f->reads++ % 256)) {
		calibrate(f);
	}
	return read_handle(slot_handle(slot));
}

uint64_t poe_gpr_read(unsigned vcpu, unsigned n, bool sp)
{
	if (n == 31)
		return sp ? read_slot(vcpu, SLOT_SP) : 0;
	return read_slot(vcpu, n);
}

bool poe_regs_fast(unsigned vcpu)
{
	return vcpu < fast_n && fast[vcpu].slots;
}

void poe_gpr_write(unsigned n, uint64_t val)
{
	if (n == 31 || !xreg[n])
		return;
	if (!buf)
		buf = g_byte_array_new();
	g_byte_array_set_size(buf, sizeof(val));
	memcpy(buf->data, &val, sizeof(val));
	qemu_plugin_write_register(xreg[n], buf);
}

/*
 * QEMU's aarch64 system-mode TBs are position independent (CF_PCREL): a
 * TB is looked up by physical address and runs at every virtual address
 * that maps the same physical page (a program's text in two processes, a
 * shared library). So the vaddr the plugin saw at translation is only
 * where the instruction ran first, and its page may be another process's.
 * The "pc" register, read in a callback, is not that instruction's address
 * either: QEMU writes the PC back only at the start of a TB and before
 * some instructions, so it is the address of the TB's first instruction or
 * of a later one up to this one, which is less than 4K before (a TB has at
 * most 512 instructions). The two addresses of a shared page differ by a
 * multiple of the page size, so an instruction keeps its offset in its
 * page, and this one runs at the only address at or after that PC, less
 * than 4K on, with vaddr's offset.
 */
uint64_t poe_insn_pc(unsigned vcpu, uint64_t vaddr)
{
	uint64_t pc = read_slot(vcpu, SLOT_PC);

	return pc + ((vaddr - pc) & 0xfff);
}
