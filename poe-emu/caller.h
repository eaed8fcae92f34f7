/*
 * caller.h - who calls the functions that leak into page-table windows
 * (part of windows=FILE, see window.h)
 *
 * window.c tells this module when a function not on the allow list is
 * entered (a block starts at its first instruction) while the vCPU's
 * window is open; the caller is the function that holds the return
 * address in x30 at that moment. At exit, after window.c's lines, one
 * line per (function, caller):
 *   poe-window-caller: fn=NAME caller=NAME calls=N
 * caller "?" when x30 is outside the kernel's text (user space, a
 * module, BPF).
 */
#ifndef POE_CALLER_H
#define POE_CALLER_H

#include <stdio.h>

/* a fresh table, for the functions of the loaded System.map */
void caller_init(void);

/*
 * Run time, from a callback that declared register access, on vcpu:
 * function fn (an index of sysmap_func()) was just entered.
 */
void caller_record(unsigned vcpu, unsigned fn);

/*
 * Write the lines of the functions named in fns, in that order (names:
 * functions of one name are added up, callers too), each one's callers
 * most calls first, then by name; then forget everything.
 */
void caller_write(FILE *out, const char *const *fns, unsigned n);

#endif
