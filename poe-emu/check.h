/*
 * check.h - the run-time checks of data accesses and instruction fetches
 */
#ifndef POE_CHECK_H
#define POE_CHECK_H

#include <stdbool.h>
#include <stdint.h>

#include "qemu-plugin-api.h"

/*
 * vaddr: the instruction's address at translation, which may not be the
 * one it runs at (see poe_insn_pc())
 */
/* a data access instruction (decode.c): a conditional check callback */
bool poe_check_instrument_access(struct qemu_plugin_insn *insn,
				 uint32_t word, uint64_t vaddr);
/* the first instruction of a TB, or of its second page */
void poe_check_instrument_fetch(struct qemu_plugin_insn *insn,
				uint64_t vaddr);

#endif
