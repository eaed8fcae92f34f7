/*
 * store.h - kernel stores in page-table write windows, by target
 * (window_stores=FILE, with sysmap=FILE)
 *
 * Every EL1 store in the TTBR1 half executed while the vCPU's page-table
 * window is open (state.c decides, as for windows= and window_insns) is
 * counted as a store to a page table (its page has a key that POR_EL1
 * denies write to outside windows), to the current kernel stack, or to
 * other memory. At exit, FILE (truncated at start) gets one line per
 * kernel function with stores to other memory, most first (then by name):
 *   poe-window-store: fn=NAME stores=N
 * then the total:
 *   poe-window-stores-total: pgtable=N stack=N other=N other_fns=N
 * then who called those functions (caller.h), in the order of their lines:
 *   poe-window-store-caller: fn=NAME caller=NAME stores=N
 * then where they go (target.h), in the same order:
 *   poe-window-store-target: fn=NAME target=TARGET stores=N
 * then their call paths (path.h), in the same order:
 *   poe-window-store-path: fn=NAME path=CALLER<CALLER'S CALLER<... stores=N
 */
#ifndef POE_STORE_H
#define POE_STORE_H

#include <stdbool.h>
#include <stdint.h>

#include "qemu-plugin-api.h"

/* window_stores=FILE, the System.map loaded; false, with a message, if not */
bool store_open(const char *path);

/* an instruction (its word), after the checks instrumented it */
void store_instrument_insn(struct qemu_plugin_insn *insn, uint32_t word,
			   uint64_t vaddr);

void store_exit(void);

#endif
