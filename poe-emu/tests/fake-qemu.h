/*
 * fake-qemu.h - a fake of the QEMU plugin API for host tests
 *
 * tests/fake-qemu.c implements every plugin API function poe-emu calls,
 * so that the whole plugin can be linked into a host program and driven
 * the way QEMU drives it: install with options, vCPU init, translation of
 * instructions, one per block or a block of several (recording what the
 * plugin registers on each), execution of an instruction's inline ops and
 * callbacks in registration order (conditional ones tested against the
 * scoreboard), discontinuities and exit. Nothing is really executed: a test sets registers and guest
 * memory, "executes" an instruction and looks at what the plugin did:
 * where it moved the PC (a delivered fault), what it wrote to registers.
 */
#ifndef FAKE_QEMU_H
#define FAKE_QEMU_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "../qemu-plugin-api.h"

#define FAKE_VCPUS	4
#define FAKE_MEM	(8u << 20)	/* guest RAM at PA 0 */

/* Registers the fake exposes, by name (fake_reg()). */
struct fake_cpu {
	uint64_t x[31], sp, cpsr;
	uint64_t pc;		/* as QEMU's: see fake_pc_lag */
	uint64_t sys[32];	/* by fake_sysreg_index(name) */
};

extern struct fake_cpu fake_cpus[FAKE_VCPUS];
extern uint8_t fake_mem[FAKE_MEM];
extern unsigned fake_nvcpus;

/* a 64-bit word of the fake guest memory, e.g. a descriptor */
static inline uint64_t fake_rd64(uint64_t pa)
{
	uint64_t x;

	memcpy(&x, fake_mem + pa, 8);
	return x;
}

static inline void fake_wr64(uint64_t pa, uint64_t x)
{
	memcpy(fake_mem + pa, &x, 8);
}

/* qemu_plugin_install with comma-separated options; returns its status */
int fake_install(unsigned nvcpus, const char *opts);
/* the vCPU init callback for every vCPU */
void fake_init_vcpus(void);
/* a system register of a vCPU, by QEMU's name */
uint64_t *fake_sys(unsigned vcpu, const char *name);
/* translate (once per pc/word) and execute one instruction on vcpu:
 * returns the PC the plugin moved to, or pc + 4 if it did not */
uint64_t fake_exec(unsigned vcpu, uint64_t pc, uint32_t word);
/*
 * Execute at run_pc the translation made at vaddr (translated there
 * first if need be), as QEMU runs a position-independent TB at every
 * address of its physical page: returns the PC the plugin moved to, or
 * run_pc + 4.
 */
uint64_t fake_exec_at(unsigned vcpu, uint64_t vaddr, uint64_t run_pc,
		      uint32_t word);
/*
 * Execute an instruction that accesses va (a load, or a store): its ops,
 * then, unless the plugin moved the PC (a fault), the memory callbacks
 * registered for that kind of access, as QEMU runs them after the access.
 * One access per call (QEMU reports each access of an LDP separately).
 */
uint64_t fake_exec_mem(unsigned vcpu, uint64_t pc, uint32_t word,
		       uint64_t va, bool store);
/* how many memory callbacks the plugin put on an instruction */
unsigned fake_mem_cbs_on(uint64_t pc, uint32_t word);
/*
 * Translate (once per pc and words) and execute a block of n
 * instructions from pc, each one's ops in order, the "pc" register
 * holding the block's start throughout: returns the PC the plugin moved
 * to, or pc + 4 * n.
 */
uint64_t fake_exec_tb(unsigned vcpu, uint64_t pc, const uint32_t *words,
		      unsigned n);
/*
 * QEMU writes the PC back only at the start of a TB and at some
 * instructions: while an instruction's callbacks run, the "pc" register
 * reads that many bytes less than its address (0 by default).
 */
extern unsigned fake_pc_lag;
/* qemu_plugin_reset() calls so far (callbacks dropped, code flushed) */
extern unsigned fake_resets;
/*
 * The stand-in of QEMU's CPU object of a vCPU holds x0-x30, sp, pc in
 * slots 0-32, refreshed from fake_cpus before each instruction. From now
 * on, make one slot hold val instead (the object disagrees with the
 * API), or keep a second copy of the 33 slots at offset.
 */
void fake_obj_lie(unsigned vcpu, unsigned slot, uint64_t val);
void fake_obj_mirror(unsigned vcpu, size_t offset);
/* how many inline ops and callbacks the plugin put on an instruction */
unsigned fake_ops_on(uint64_t pc, uint32_t word);
/* how many callbacks the last fake_exec() ran */
unsigned fake_callbacks_run(void);
void fake_discon(unsigned vcpu, enum qemu_plugin_discon_type type,
		 uint64_t from, uint64_t to);
void fake_exit(void);

/* guest virtual memory for qemu_plugin_read_memory_vaddr: identity */
void fake_poke(uint64_t pa, const void *src, size_t len);

#endif
