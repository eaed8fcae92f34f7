/*
 * caller.h - who calls the kernel functions a report names (the leaks of
 * windows=FILE, see window.h; the functions that store to other memory
 * in a window, window_stores=FILE, see store.h)
 *
 * A table of (function, caller) pairs: its owner tells it, at run time,
 * a function and the return address into that function's caller; the
 * caller is the kernel function that holds the address. At exit, one
 * line per (function, caller), after the owner's lines:
 *   LINE: fn=NAME caller=NAME UNIT=N
 * e.g. "poe-window-caller: fn=NAME caller=NAME calls=N"; caller "?"
 * when the address is outside the kernel's text (user space, a module,
 * BPF).
 */
#ifndef POE_CALLER_H
#define POE_CALLER_H

#include <stdint.h>
#include <stdio.h>

struct caller_table;

/*
 * A fresh table, for the functions of the loaded System.map, whose lines
 * start with "LINE:" and count UNIT (both kept, not copied).
 */
struct caller_table *caller_table_new(const char *line, const char *unit);

/*
 * Run time, from a callback on any vCPU: function fn (an index of
 * sysmap_func()) returns to the run-time address ret.
 */
void caller_add(struct caller_table *t, unsigned fn, uint64_t ret);

/*
 * Write the lines of the functions named in fns, in that order (names:
 * functions of one name are added up, callers too), each one's callers
 * most first, then by name; then forget everything (later additions,
 * from a vCPU still running, are dropped).
 */
void caller_write(struct caller_table *t, FILE *out, const char *const *fns,
		  unsigned n);

#endif
