/*
 * count.c - bench counters and row markers (option bench=FILE)
 *
 * Every counter lives in a per-vCPU scoreboard element. Instructions,
 * barriers and TLBIs are counted by inline adds that QEMU emits in the
 * translated code (exact, no icount, no callback); POR_EL1 writes,
 * exceptions and interrupts by the callbacks that see those events anyway.
 * Instructions are counted before they execute, so one that takes an
 * exception (a fault, SVC) counts once, and again if it is re-executed.
 *
 * With tlb=on, the TLB model (tlbmodel.c) reports every data access it
 * looks up, by EL: counted in the same per-vCPU element, and written at
 * the end of the records (after dmb, so that readers of the fields before
 * see no change), only then: without tlb=on the records are as before.
 *
 * window_insns counts EL1 instructions run while the effective EL1 overlay
 * denies write to no key (kpkeys' page-table context): instead of a
 * conditional add on every instruction, the EL1 instruction count is
 * sampled when the window opens and closes (count_el1_window(), called by
 * the owner of the effective POR_EL1/TCR2_EL1 values).
 *
 * A row starts at a BEGIN marker and ends at the next END marker, on any
 * vCPU; both take a snapshot of the sums over all vCPUs. The inline add of
 * the marker itself runs before its callback, so the BEGIN marker is not
 * part of its row and the END marker is. Other vCPUs run concurrently
 * (MTTCG): their part of a snapshot is read without stopping them, exact
 * for an idle vCPU, within a few instructions otherwise.
 */
#include <stdio.h>
#include <string.h>

#include "count.h"
#include "profile.h"
#include "regs.h"

struct count_vcpu {
	/* inline adds */
	uint64_t insns_el0, insns_el1, isb, dsb, dmb, tlbi_bcast, tlbi_local;
	/* the vCPU's own callbacks */
	uint64_t por_el1_writes, exceptions, irqs;
	uint64_t window_insns;	/* of the windows already closed */
	uint64_t window_open, window_mark;	/* insns_el1 at opening */
	/* the TLB model, by EL */
	uint64_t tlb_access[2], tlb_l1_miss[2], tlb_walk[2];
};

static FILE *bench_file;
static struct qemu_plugin_scoreboard *score;
static GMutex lock;		/* the row, the file, buf */
static GByteArray *buf;
static bool row_open;
static char row_name[COUNT_NAME_MAX + 1];
static uint64_t row_rep;
static struct count_sums row_start;
static bool tlb_fields;

bool count_open(const char *path)
{
	bench_file = fopen(path, "a");
	return bench_file != NULL;
}

bool count_enabled(void)
{
	return bench_file != NULL;
}

void count_init(void)
{
	if (!bench_file)
		return;
	score = qemu_plugin_scoreboard_new(sizeof(struct count_vcpu));
	buf = g_byte_array_new();
}

static struct count_vcpu *cv(unsigned vcpu)
{
	return qemu_plugin_scoreboard_find(score, vcpu);
}

void count_tlb_fields(bool on)
{
	tlb_fields = on;
}

void count_tlb(unsigned vcpu, unsigned el, enum count_tlb_found found)
{
	struct count_vcpu *c = cv(vcpu);

	c->tlb_access[el]++;
	if (found >= COUNT_TLB_L2)
		c->tlb_l1_miss[el]++;
	if (found == COUNT_TLB_WALK)
		c->tlb_walk[el]++;
}

static void inline_add(struct qemu_plugin_insn *insn, size_t offset)
{
	qemu_plugin_register_vcpu_insn_exec_inline_per_vcpu(
		insn, QEMU_PLUGIN_INLINE_ADD_U64,
		(qemu_plugin_u64){ score, offset }, 1);
}

static void marker_cb(unsigned vcpu, void *ud);

/*
 * Must be the first instrumentation of each instruction: the callbacks
 * registered after it (the marker's, the POR_EL1 write's) see the
 * instruction already counted.
 */
void count_instrument_insn(struct qemu_plugin_insn *insn, uint64_t pc)
{
	if (!bench_file)
		return;
	inline_add(insn, pc >> 63 ? offsetof(struct count_vcpu, insns_el1)
				  : offsetof(struct count_vcpu, insns_el0));
}

void count_instrument_sys(struct qemu_plugin_insn *insn,
			  const struct sys_insn *s)
{
	if (!bench_file)
		return;
	switch (s->kind) {
	case SYS_ISB:
		inline_add(insn, offsetof(struct count_vcpu, isb));
		break;
	case SYS_DSB:
		inline_add(insn, offsetof(struct count_vcpu, dsb));
		break;
	case SYS_DMB:
		inline_add(insn, offsetof(struct count_vcpu, dmb));
		break;
	case SYS_TLBI:
		inline_add(insn, s->bcast ?
			   offsetof(struct count_vcpu, tlbi_bcast) :
			   offsetof(struct count_vcpu, tlbi_local));
		break;
	case SYS_MARKER:
		qemu_plugin_register_vcpu_insn_exec_cb(
			insn, marker_cb, QEMU_PLUGIN_CB_R_REGS, NULL);
		break;
	}
}

void count_por_el1_write(unsigned vcpu)
{
	if (bench_file)
		cv(vcpu)->por_el1_writes++;
}

void count_discon(unsigned vcpu, enum qemu_plugin_discon_type type)
{
	if (!bench_file)
		return;
	if (type == QEMU_PLUGIN_DISCON_EXCEPTION)
		cv(vcpu)->exceptions++;
	else if (type == QEMU_PLUGIN_DISCON_INTERRUPT)
		cv(vcpu)->irqs++;
}

void count_el1_window(unsigned vcpu, bool open)
{
	struct count_vcpu *c;

	if (!bench_file)
		return;
	c = cv(vcpu);
	if (open && !c->window_open) {
		c->window_mark = c->insns_el1;
		c->window_open = 1;
	} else if (!open && c->window_open) {
		c->window_insns += c->insns_el1 - c->window_mark;
		c->window_open = 0;
	}
}

static void snapshot(struct count_sums *s)
{
	unsigned i, n = qemu_plugin_num_vcpus();

	memset(s, 0, sizeof(*s));
	for (i = 0; i < n; i++) {
		const volatile struct count_vcpu *c = cv(i);
		uint64_t el1 = c->insns_el1;

		s->insns_el0 += c->insns_el0;
		s->insns_el1 += el1;
		s->por_el1_writes += c->por_el1_writes;
		s->isb += c->isb;
		s->dsb += c->dsb;
		s->dmb += c->dmb;
		s->tlbi_bcast += c->tlbi_bcast;
		s->tlbi_local += c->tlbi_local;
		s->exceptions += c->exceptions;
		s->irqs += c->irqs;
		s->window_insns += c->window_insns;
		if (c->window_open)
			s->window_insns += el1 - c->window_mark;
		s->tlb_access_el0 += c->tlb_access[0];
		s->tlb_access_el1 += c->tlb_access[1];
		s->tlb_l1_miss_el0 += c->tlb_l1_miss[0];
		s->tlb_l1_miss_el1 += c->tlb_l1_miss[1];
		s->tlb_walk_el0 += c->tlb_walk[0];
		s->tlb_walk_el1 += c->tlb_walk[1];
	}
	s->insns = s->insns_el0 + s->insns_el1;
}

int count_marker_op(uint64_t x0)
{
	if ((x0 & COUNT_MAGIC_MASK) != COUNT_MAGIC)
		return 0;
	x0 &= ~COUNT_MAGIC_MASK;
	return x0 == COUNT_OP_BEGIN || x0 == COUNT_OP_END ? (int)x0 : 0;
}

/* Keep the record parseable: anything outside [A-Za-z0-9_.:/+-] -> '?' */
void count_sanitize_name(char *name)
{
	static const char ok[] = "abcdefghijklmnopqrstuvwxyz"
				 "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.:/+-";

	if (!*name) {
		strcpy(name, "?");
		return;
	}
	for (; *name; name++)
		if (!strchr(ok, *name))
			*name = '?';
}

/* the TLB fields, appended to a record when tlb=on */
static int format_tlb(char *out, size_t len, const struct count_sums *s)
{
	if (!tlb_fields)
		return snprintf(out, len, "\n");
	return snprintf(out, len,
		" tlb_access_el0=%llu tlb_access_el1=%llu "
		"tlb_l1_miss_el0=%llu tlb_l1_miss_el1=%llu "
		"tlb_walk_el0=%llu tlb_walk_el1=%llu\n",
		(unsigned long long)s->tlb_access_el0,
		(unsigned long long)s->tlb_access_el1,
		(unsigned long long)s->tlb_l1_miss_el0,
		(unsigned long long)s->tlb_l1_miss_el1,
		(unsigned long long)s->tlb_walk_el0,
		(unsigned long long)s->tlb_walk_el1);
}

int count_format(char *out, size_t len, const char *prefix, const char *row,
		 uint64_t rep, const struct count_sums *s)
{
	char head[128];
	int n;

	if (row)
		snprintf(head, sizeof(head), "%s row=%s rep=%llu", prefix, row,
			 (unsigned long long)rep);
	else
		snprintf(head, sizeof(head), "%s", prefix);
	n = snprintf(out, len,
		"%s insns=%llu insns_el0=%llu insns_el1=%llu "
		"por_el1_writes=%llu isb=%llu dsb=%llu tlbi_bcast=%llu "
		"tlbi_local=%llu exceptions=%llu irqs=%llu window_insns=%llu "
		"dmb=%llu", head,
		(unsigned long long)s->insns, (unsigned long long)s->insns_el0,
		(unsigned long long)s->insns_el1,
		(unsigned long long)s->por_el1_writes,
		(unsigned long long)s->isb, (unsigned long long)s->dsb,
		(unsigned long long)s->tlbi_bcast,
		(unsigned long long)s->tlbi_local,
		(unsigned long long)s->exceptions,
		(unsigned long long)s->irqs,
		(unsigned long long)s->window_insns,
		(unsigned long long)s->dmb);
	if (n < 0 || (size_t)n >= len)
		return n;
	return n + format_tlb(out + n, len - n, s);
}

void count_sub(struct count_sums *out, const struct count_sums *a,
	       const struct count_sums *b)
{
	const uint64_t *pa = (const uint64_t *)a, *pb = (const uint64_t *)b;
	uint64_t *po = (uint64_t *)out;
	size_t i;

	for (i = 0; i < sizeof(*out) / sizeof(uint64_t); i++)
		po[i] = pa[i] - pb[i];
}

/* The row name at va, NUL-terminated within COUNT_NAME_MAX bytes. */
static void read_name(uint64_t va, char *name)
{
	unsigned i;

	for (i = 0; i < COUNT_NAME_MAX; i++) {
		g_byte_array_set_size(buf, 0);
		if (!qemu_plugin_read_memory_vaddr(va + i, buf, 1) ||
		    buf->len != 1 || !buf->data[0])
			break;
		name[i] = buf->data[0];
	}
	name[i] = 0;
	count_sanitize_name(name);
}

void count_marker(unsigned vcpu, uint64_t x0, uint64_t x1, uint64_t x2)
{
	struct count_sums now, row;
	char line[1024];

	switch (count_marker_op(x0)) {
	case COUNT_OP_BEGIN:
		g_mutex_lock(&lock);
		read_name(x1, row_name);
		row_rep = x2;
		row_open = true;
		snapshot(&row_start);
		profile_row_begin();
		g_mutex_unlock(&lock);
		break;
	case COUNT_OP_END:
		g_mutex_lock(&lock);
		snapshot(&now);
		if (!row_open) {
			fprintf(stderr, "poe-emu: bench: END without BEGIN on "
				"vcpu %u, ignored\n", vcpu);
		} else {
			count_sub(&row, &now, &row_start);
			count_format(line, sizeof(line), "poe-bench:",
				     row_name, row_rep, &row);
			fputs(line, bench_file);
			fflush(bench_file);
			profile_row_end(row_name);
			row_open = false;
		}
		g_mutex_unlock(&lock);
		break;
	}
}

static void marker_cb(unsigned vcpu, void *ud)
{
	uint64_t x0, x1, x2;

	(void)ud;
	g_mutex_lock(&lock);
	x0 = poe_gpr_read(vcpu, 0, false);
	x1 = poe_gpr_read(vcpu, 1, false);
	x2 = poe_gpr_read(vcpu, 2, false);
	g_mutex_unlock(&lock);
	count_marker(vcpu, x0, x1, x2);
}

void count_exit(void)
{
	struct count_sums total;
	char line[1024];

	if (!bench_file)
		return;
	snapshot(&total);
	count_format(line, sizeof(line), "poe-bench-total:", NULL, 0, &total);
	fputs(line, bench_file);
	fclose(bench_file);
	bench_file = NULL;
}
