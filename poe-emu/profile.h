/*
 * profile.h - where a bench row's kernel instructions go (profile=FILE)
 *
 * With bench=FILE, counts the executions of every EL1 translation block
 * while a row is open and writes, at exit, one line per row and block:
 * "poe-profile: row=NAME pc=0x... insns=N"; and the POR_EL1 writes, one
 * line per row, MSR and x30 at the MSR: "poe-profile-por: row=NAME
 * pc=0x... lr=0x... opens=N other=N", where opens are the writes that
 * grant write to every key (a page-table write window's value) and other
 * the rest (closes, and restores on exception entry and return). x30
 * names the caller of an out-of-line opener (kpkeys_open_write_window());
 * where the MSR is inlined after a call, it is that call's return address.
 * tools/profile adds them up by function with the kernel's System.map.
 */
#ifndef POE_PROFILE_H
#define POE_PROFILE_H

#include <stdbool.h>
#include <stdint.h>

#include "qemu-plugin-api.h"

/* profile=FILE: false if FILE cannot be written */
bool profile_open(const char *path);

/* translation time: the first instruction of a block of n at vaddr */
void profile_instrument_tb(struct qemu_plugin_insn *first, uint64_t vaddr,
			   size_t n);

/*
 * run time, an MSR POR_EL1 at pc with x30 = lr; opens: its value grants
 * write to every key
 */
void profile_por_el1_write(uint64_t pc, uint64_t lr, bool opens);

/* run time, from count.c's markers (under its lock) */
void profile_row_begin(void);
void profile_row_end(const char *row);

void profile_exit(void);

#endif
