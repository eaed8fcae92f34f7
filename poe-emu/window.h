/*
 * window.h - kernel instructions run in page-table write windows, by
 * function (windows=FILE, with sysmap=FILE and window_allow=FILE)
 *
 * At exit, FILE gets one line per kernel function that ran while the
 * vCPU's page-table window was open (state.c decides, as for the bench
 * counters' window_insns), most instructions first:
 *   poe-window: fn=NAME insns=N allowed=0|1
 * and a total:
 *   poe-window-total: insns=N leaks=N leak_fns=N
 * where leaks are the instructions of the functions not on the allow
 * list, and leak_fns their number; then who called those functions in a
 * window (caller.h):
 *   poe-window-caller: fn=NAME caller=NAME calls=N
 */
#ifndef POE_WINDOW_H
#define POE_WINDOW_H

#include <stdbool.h>
#include <stdint.h>

#include "qemu-plugin-api.h"

/*
 * windows=FILE, window_allow=ALLOW (NULL: nothing allowed), the
 * System.map loaded; false, with a message, if they do not make sense
 */
bool window_open(const char *path, const char *allow);

/* a translation block being instrumented (on tb_trans's stack) */
struct window_tb {
	struct window_seg *seg;	/* its run of instructions in one function */
	uint64_t start, end;	/* where that function's answer holds */
};

/*
 * Every instruction of a block in order, from a zeroed struct window_tb,
 * before the checks and the emulation instrument it.
 */
void window_instrument_insn(struct window_tb *w,
			    struct qemu_plugin_insn *insn, uint64_t vaddr);

void window_exit(void);

#endif
