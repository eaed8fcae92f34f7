/*
 * profile.h - where a bench row's kernel instructions go (profile=FILE)
 *
 * With bench=FILE, counts the executions of every EL1 translation block
 * while a row is open and writes, at exit, one line per row and block:
 * "poe-profile: row=NAME pc=0x... insns=N". tools/profile adds them up
 * by function with the kernel's System.map.
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

/* run time, from count.c's markers (under its lock) */
void profile_row_begin(void);
void profile_row_end(const char *row);

void profile_exit(void);

#endif
