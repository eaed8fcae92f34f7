/*
 * state.h - the options and the per-vCPU state of poe-emu
 *
 * This module owns both: the options are parsed here once, at install,
 * and read by everyone; each vCPU's emulated registers (POR_EL0, POR_EL1,
 * TCR2_EL1's enables, as written and as in effect), its current EL, soft
 * TLB, the fault being delivered and statistics live in a struct
 * poe_vcpu, touched only by that vCPU's thread, except the soft TLB
 * generation (broadcast TLBI) which is global. The words that conditional
 * callbacks test are kept here, in a QEMU scoreboard (struct poe_score).
 * Every other module depends on this one, never the reverse (except the
 * bench counters, which are told of EL1 window transitions).
 */
#ifndef POE_STATE_H
#define POE_STATE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "qemu-plugin-api.h"

/* Architectural bits used throughout. */
#define TCR2_PIE	(1ull << 1)
#define TCR2_E0POE	(1ull << 2)
#define TCR2_POE	(1ull << 3)
#define CPACR_E0POE	(1ull << 29)
#define MMFR3_S1POE_SHIFT 16
#define MMFR2_BBM_SHIFT 52
/* POR permission bits, and what por_denies() reports */
#define POE_R		1
#define POE_X		2
#define POE_W		4
#define DENY_R		1
#define DENY_W		2
#define DENY_X		4

/* a level of the TLB model: ENTRIES[:WAYS] (tlbmodel.c) */
struct poe_tlb_geometry {
	unsigned entries, ways;
};

struct poe_opts {
	bool stats, strict, verbose, force_el1;
	bool fastregs;		/* default on: see regs.c */
	const char *sysmap;	/* strict=on: the kernel's System.map */
	/* strict_allow=FUNCTION (repeatable): see poe_strict_allowed() */
	char **strict_allow;
	unsigned n_strict_allow;
	const char *bench;	/* bench=FILE */
	const char *profile;	/* profile=FILE, with bench= */
	const char *windows;	/* windows=FILE, with sysmap= */
	const char *window_allow;	/* window_allow=FILE */
	const char *window_stores;	/* window_stores=FILE, with sysmap= */
	/* bbm=N: ID_AA64MMFR2_EL1.BBM as EL1 reads it; -1: QEMU's value */
	int bbm;
	bool tlb;		/* tlb=on: the TLB model, with bench= */
	bool tlb_sized;		/* tlb_l1= or tlb_l2= given */
	struct poe_tlb_geometry tlb_l1, tlb_l2;
	FILE *log;		/* log=FILE */
};
extern struct poe_opts poe_opts;

/* Values read by conditional callbacks; one element per vCPU. */
struct poe_score {
	/*
	 * Gates, per EL whose permissions apply: non-zero while that EL's
	 * overlay is enabled and its POR value denies some key R (rd), W
	 * (wr), or either (rw), in the effective or (until the next context
	 * synchronisation) the written value. "unpriv" is the set of
	 * LDTR/STTR-class accesses in the TTBR1 half: EL0's, and EL1's too
	 * while PSTATE.UAO may be set (they are privileged then). "cur" is
	 * the set of the EL the vCPU is at, for code in the TTBR0 half that
	 * may run at either EL; rw_any is rw_el1 | rw_unpriv.
	 */
	uint64_t rd_el1, wr_el1, rw_el1;
	uint64_t rd_unpriv, wr_unpriv, rw_unpriv;
	uint64_t rd_cur, wr_cur, rw_cur;
	uint64_t rw_any;
	uint64_t pending;	/* a fault is being delivered: patch MRS */
	uint64_t unsynced;	/* a POR/TCR2 write awaits an ISB */
	/*
	 * Instruction fetch, TTBR1 half: pages [xlo_el1, xhi_el1] (start
	 * addresses) are known executable; lo > hi: none; 0, ~0: all (no
	 * key lacks X). TTBR0 half: x_cur is non-zero while some key lacks
	 * X at the EL the vCPU is at (its bounds are in struct poe_vcpu,
	 * see check.c for why they cannot be a gate).
	 */
	uint64_t xlo_el1, xhi_el1, x_cur;
	/*
	 * The page-table write window is open: the effective EL1 overlay
	 * is on and denies write to no key (window.c, store.c, and
	 * count.c's window_insns).
	 */
	uint64_t window;
	uint64_t isb;		/* stats: ISBs executed (inline counter) */
};

/* The emulated POE registers. */
struct poe_regs {
	uint64_t por_el0, por_el1;
	uint64_t tcr2;		/* as written (QEMU drops POE/E0POE) */
};

#define POE_TLB_SIZE 1024

struct poe_tlb_entry {
	uint64_t tag;		/* VA of the 4K page | 1, 0 = invalid */
	uint8_t po;		/* POIndex of the leaf */
	uint8_t pi;		/* PIIndex of the leaf */
	int8_t level;		/* level of the leaf */
	uint8_t shift;		/* log2 of the size the leaf maps */
	bool cont_mixed;	/* in a contiguous group of mixed POIndex */
	bool ng;		/* not global: tagged by ASID (TLB model) */
	uint64_t pa;		/* the page's physical address (store.c) */
};

/* A fault being delivered (fault.c). */
struct poe_fault {
	uint8_t el;		/* EL of the access */
	bool exec;		/* instruction abort */
	bool wnr, cm;		/* syndrome bits */
	uint64_t pc, va;
	int level;
	/* what the handler's MRS ELR/ESR/FAR must read */
	bool elr_pending, esr_pending, far_pending;
	/* for the log */
	unsigned key;
	uint64_t por;
	const char *what, *kind;
};

struct poe_stats {
	uint64_t por_el1_writes, por_el0_writes, tlbi, faults, walks;
	uint64_t fetch_calls, fetch_checks, resets, flushes;
};

struct poe_vcpu {
	/*
	 * Read by every check: together at the start, in one cache line
	 * (the callbacks run between long stretches of QEMU's own work).
	 */
	uint8_t el;		/* current EL: 1 after an exception, ERET's */
	bool aarch32;		/* EL0 in AArch32: not instrumented */
	bool redirect;		/* a fault is being delivered (fault.c) */
	bool unsynced;		/* wr != eff until a context sync event */
	/* overlay enabled and POR restricting, per EL (effective values) */
	bool live_el1, live_el0;
	bool x_el1, x_el0;	/* some key lacks X */
	/*
	 * PSTATE.UAO may be set: an MSR UAO or an ERET to EL1 may have set
	 * it since the last exception entry (which clears it). Only then is
	 * PSTATE read (check.c).
	 */
	bool uao_maybe;
	/* TTBR0 half: pages [xlo_cur, xhi_cur] are known executable */
	uint64_t xlo_cur, xhi_cur;
	struct poe_regs eff;	/* in effect: what the checks use */
	uint64_t tlb_gen;	/* broadcast invalidations applied (walk.c) */
	uint64_t pir_el1, pire0_el1;
	uint64_t checked;	/* statistics: accesses checked */

	unsigned index;
	struct poe_regs wr;	/* as last written: what MRS reads */
	/*
	 * The keys (bit k: key k) that the last effective POR_EL1 outside a
	 * window denied write to, the overlay on: the page-table keys of a
	 * window (store.c). 0 until such a value took effect.
	 */
	uint8_t wp_keys;
	/* the EL0 fetch bounds, kept while the vCPU is at EL1 */
	bool x0_saved;
	uint64_t x0_lo, x0_hi;
	/* runs of pages found executable lately, by "who" (check.c) */
	struct poe_xrun {
		uint64_t lo, hi;
		unsigned who;
	} xruns[8];
	unsigned xruns_n, xruns_next;

	/* translation registers, read lazily (mmu_valid) */
	bool mmu_valid;
	uint64_t tcr, ttbr0, ttbr1, sctlr;
	struct poe_tlb_entry tlb[POE_TLB_SIZE];

	struct poe_fault f;
	struct poe_stats st;
} __attribute__((aligned(64)));

/* parse "key=value" plugin options into poe_opts; false on a bad one */
bool poe_opts_parse(int argc, char **argv);

void poe_state_init(unsigned max_vcpus);
unsigned poe_max_vcpus(void);
struct poe_vcpu *poe_vcpu(unsigned index);
struct poe_score *poe_score_of(unsigned index);
/* a scoreboard word, for conditional callbacks and inline ops */
qemu_plugin_u64 poe_score_u64(size_t offset);

/* the reset values: at vCPU init, and when PSCI powers a vCPU down */
void poe_vcpu_reset(struct poe_vcpu *v);

/* MSR POR_EL0/POR_EL1/TCR2_EL1: take effect at poe_context_sync() */
void poe_write_por_el0(struct poe_vcpu *v, uint64_t val);
void poe_write_por_el1(struct poe_vcpu *v, uint64_t val);
void poe_write_tcr2(struct poe_vcpu *v, uint64_t val);
/* ISB, exception entry, ERET */
void poe_context_sync(struct poe_vcpu *v);
/* the EL the vCPU runs at (exception entry: 1; ERET: SPSR's) */
void poe_set_el(struct poe_vcpu *v, unsigned el, bool aarch32);
/* PSTATE.UAO may have been set (MSR UAO, ERET), or is clear (entry) */
void poe_set_uao(struct poe_vcpu *v, bool maybe);
/* forget the fetch pages found executable (TLB or mapping changes) */
void poe_fetch_forget(struct poe_vcpu *v);
/* the fetch pages of one half found executable: [lo, hi] */
void poe_fetch_known(struct poe_vcpu *v, bool high, uint64_t lo,
		     uint64_t hi);

/*
 * Translation policy. QEMU's translated code keeps the instrumentation it
 * got; poe_flush_translations() has it all translated again (plugin.c
 * registers how), for a vCPU v that asks (statistics).
 */
void poe_set_flush_hook(void (*hook)(void));
void poe_flush_translations(struct poe_vcpu *v);
/*
 * Must loads in the TTBR1 half (EL1 permissions) be instrumented? Not
 * until some vCPU's EL1 overlay denies R to some key (kpkeys never does):
 * then translations are flushed once, and they are from then on.
 */
bool poe_el1_reads_checked(void);

/* Which of R, W, X does POR value por deny some key (DENY_*)? */
unsigned poe_por_denies(uint64_t por);
bool poe_por_restricts(uint64_t por);

#endif
