/*
 * strict.c - strict mode and the fault log
 *
 * In strict mode an EL1 access that the overlay denies at a PC without an
 * exception-table fixup stops QEMU: on hardware the kernel would oops, and
 * under test it means a missing kpkeys switch. So do, in strict mode, an
 * EL1 access between a POR_EL1/TCR2_EL1 write and the next context
 * synchronisation event whose verdict differs between the old and the new
 * value (a missing ISB), and an access through a contiguous group whose
 * POIndex is not uniform (check.c decides; this file reports). The kernel's
 * System.map (sysmap.c) gives symbol names and the exception table's
 * bounds; the table itself is read from guest memory, the KASLR slide
 * being VBAR_EL1 minus the address of "vectors".
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "strict.h"
#include "regs.h"
#include "sysmap.h"

static uint64_t sym_vectors, sym_ex_start, sym_ex_stop;
static GMutex log_lock;

bool poe_strict_init(void)
{
	sym_vectors = sysmap_addr("vectors");
	sym_ex_start = sysmap_addr("__start___ex_table");
	sym_ex_stop = sysmap_addr("__stop___ex_table");
	if (!sysmap_loaded())
		return false;
	if (!sym_vectors || !sym_ex_start || sym_ex_stop <= sym_ex_start) {
		fprintf(stderr, "poe-emu: the sysmap lacks vectors/"
			"__start___ex_table/__stop___ex_table\n");
		return false;
	}
	return true;
}

/* Entries: s32 insn, s32 fixup, s16 type, s16 data, relative offsets. */
bool poe_strict_expected(uint64_t pc)
{
	uint64_t slide = poe_reg_read(R_VBAR_EL1) - sym_vectors;
	uint64_t start = sym_ex_start + slide, len = sym_ex_stop - sym_ex_start;
	GByteArray *tab = g_byte_array_new();
	bool found = false;
	uint64_t i;

	if (qemu_plugin_read_memory_vaddr(start, tab, len) && tab->len == len) {
		for (i = 0; i + 12 <= len; i += 12) {
			int32_t rel;

			memcpy(&rel, tab->data + i, 4);
			if (start + i + (int64_t)rel == pc) {
				found = true;
				break;
			}
		}
	} else {
		fprintf(stderr, "poe-emu: strict: cannot read __ex_table\n");
	}
	g_byte_array_free(tab, true);
	return found;
}

bool poe_strict_allowed(struct poe_vcpu *v, uint64_t pc, uint64_t va,
			unsigned key, uint64_t por)
{
	uint64_t slide = poe_reg_read(R_VBAR_EL1) - sym_vectors;
	uint64_t off = 0;
	const char *fn = sysmap_name(pc - slide, &off);
	unsigned i;

	for (i = 0; i < poe_opts.n_strict_allow; i++)
		if (!strcmp(fn, poe_opts.strict_allow[i]))
			break;
	if (i == poe_opts.n_strict_allow)
		return false;
	fprintf(stderr, "poe-emu: strict: allowed denied EL1 access: vcpu %u "
		"pc 0x%llx (%s+0x%llx) va 0x%llx pkey %u POR_EL1 0x%llx\n",
		v->index, (unsigned long long)pc, fn, (unsigned long long)off,
		(unsigned long long)va, key, (unsigned long long)por);
	if (poe_opts.log) {
		g_mutex_lock(&log_lock);
		fprintf(poe_opts.log, "poe-strict-allowed: vcpu=%u pc=0x%llx "
			"sym=%s+0x%llx va=0x%llx pkey=%u por=0x%llx\n",
			v->index, (unsigned long long)pc, fn,
			(unsigned long long)off, (unsigned long long)va, key,
			(unsigned long long)por);
		fflush(poe_opts.log);
		g_mutex_unlock(&log_lock);
	}
	return true;
}

void poe_strict_abort(struct poe_vcpu *v, const char *why, uint64_t pc,
		      uint32_t word, const char *what, uint64_t va,
		      unsigned key, uint64_t por)
{
	uint64_t slide = poe_reg_read(R_VBAR_EL1) - sym_vectors;
	uint64_t off = 0;
	const char *fn = sysmap_name(pc - slide, &off);

	fprintf(stderr,
		"poe-emu: strict: %s\n"
		"poe-emu:   vcpu %u pc 0x%llx (%s+0x%llx) insn %08x (%s)\n"
		"poe-emu:   va 0x%llx pkey %u POR_EL1 0x%llx\n"
		"poe-emu:   the kernel would misbehave on hardware; aborting\n",
		why, v->index, (unsigned long long)pc, fn,
		(unsigned long long)off, word, what,
		(unsigned long long)va, key, (unsigned long long)por);
	if (poe_opts.log) {
		fprintf(poe_opts.log, "poe-strict: vcpu=%u pc=0x%llx "
			"sym=%s+0x%llx va=0x%llx pkey=%u por=0x%llx why=%s\n",
			v->index, (unsigned long long)pc, fn,
			(unsigned long long)off, (unsigned long long)va, key,
			(unsigned long long)por, why);
		fflush(poe_opts.log);
	}
	fflush(stderr);
	_exit(3);
}

void poe_log_fault(struct poe_vcpu *v)
{
	const struct poe_fault *f = &v->f;

	if (!poe_opts.log)
		return;
	g_mutex_lock(&log_lock);
	fprintf(poe_opts.log,
		"poe-fault: vcpu=%u el=%u pc=0x%llx va=0x%llx pkey=%u "
		"por=0x%llx kind=%s class=%s wnr=%d level=%d\n",
		v->index, f->el, (unsigned long long)f->pc,
		(unsigned long long)f->va, f->key,
		(unsigned long long)f->por, f->kind, f->what, f->wnr,
		f->level);
	fflush(poe_opts.log);
	g_mutex_unlock(&log_lock);
}

void poe_log_line(const char *line)
{
	if (!poe_opts.log)
		return;
	g_mutex_lock(&log_lock);
	fputs(line, poe_opts.log);
	g_mutex_unlock(&log_lock);
}
