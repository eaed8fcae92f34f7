/*
 * count.h - bench counters and row markers (option bench=FILE)
 *
 * Counts, per vCPU, the events a kpkeys benchmark is interested in
 * (instructions by half of the address space, POR_EL1 writes, barriers,
 * broadcast and local TLBIs, exceptions, interrupts, instructions run in
 * the page-table write window) and writes one record per row delimited by
 * the guest's markers (guest/bench/marker.h). Without bench= nothing is
 * instrumented. No icount is needed: instructions are counted by inline
 * per-vCPU adds. With tlb=on, the TLB model (tlbmodel.c) adds its
 * lookups, L1 misses and walks by EL, and the records get those fields.
 */
#ifndef POE_COUNT_H
#define POE_COUNT_H

#include <stdbool.h>
#include <stdint.h>

#include "qemu-plugin-api.h"
#include "sysdec.h"

/* One row's (or the whole run's) sums over every vCPU. */
struct count_sums {
	uint64_t insns, insns_el0, insns_el1, por_el1_writes, isb, dsb, dmb;
	uint64_t tlbi_bcast, tlbi_local, exceptions, irqs, window_insns;
	/* tlb=on: data accesses looked up, L1 misses, L2 misses (walks) */
	uint64_t tlb_access_el0, tlb_access_el1;
	uint64_t tlb_l1_miss_el0, tlb_l1_miss_el1;
	uint64_t tlb_walk_el0, tlb_walk_el1;
};

/* where the TLB model found a translation */
enum count_tlb_found {
	COUNT_TLB_L1,
	COUNT_TLB_L2,
	COUNT_TLB_WALK,
};

#define COUNT_MAGIC_MASK	0xffffffffffff0000ull
#define COUNT_MAGIC		0x6b706b0000000000ull
#define COUNT_OP_BEGIN		1
#define COUNT_OP_END		2
#define COUNT_NAME_MAX		63

/* bench=FILE: open FILE for appending; false on error */
bool count_open(const char *path);
bool count_enabled(void);
/* after the vCPU count is known (qemu_plugin_install) */
void count_init(void);

/* translation time */
void count_instrument_insn(struct qemu_plugin_insn *insn, uint64_t pc);
void count_instrument_sys(struct qemu_plugin_insn *insn,
			  const struct sys_insn *s);

/* run time, from the owner of the event */
void count_por_el1_write(unsigned vcpu);
void count_discon(unsigned vcpu, enum qemu_plugin_discon_type type);
/* the effective EL1 overlay state allows writes to every key, or not */
void count_el1_window(unsigned vcpu, bool open);
/* tlb=on: records carry the TLB fields, or not */
void count_tlb_fields(bool on);
/* a data access of vcpu at EL el, found in the TLB model at found */
void count_tlb(unsigned vcpu, unsigned el, enum count_tlb_found found);
/* a marker executed: x0..x2 as the guest set them */
void count_marker(unsigned vcpu, uint64_t x0, uint64_t x1, uint64_t x2);

void count_exit(void);

/* pure helpers, unit-tested on the host */
int count_marker_op(uint64_t x0);	/* COUNT_OP_*, or 0 if no marker */
void count_sanitize_name(char *name);
int count_format(char *buf, size_t len, const char *prefix,
		 const char *row, uint64_t rep, const struct count_sums *s);
void count_sub(struct count_sums *out, const struct count_sums *a,
	       const struct count_sums *b);

#endif
