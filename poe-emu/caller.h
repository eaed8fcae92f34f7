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
 * BPF). Or pairs of a function and an id its owner names
 * (caller_table_new_by(): target.c's targets).
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
 * The same table for pairs of a function and something else, an id that
 * name() names at exit: lines "LINE: fn=NAME KEY=name(id) UNIT=N" (ids
 * of one name added up). target.c's targets of stores, for one.
 */
struct caller_table *caller_table_new_by(const char *line, const char *key,
					 const char *unit,
					 const char *(*name)(unsigned id));

/*
 * Run time, from a callback on any vCPU: function fn (an index of
 * sysmap_func()) returns to the run-time address ret.
 */
void caller_add(struct caller_table *t, unsigned fn, uint64_t ret);

/* Run time, on any vCPU: count the pair (fn, id) */
void caller_add_id(struct caller_table *t, unsigned fn, unsigned id);

/*
 * Write the lines of the functions named in fns, in that order (names:
 * functions of one name are added up, callers too), each one's callers
 * most first, then by name; then forget everything (later additions,
 * from a vCPU still running, are dropped).
 */
void caller_write(struct caller_table *t, FILE *out, const char *const *fns,
		  unsigned n);

#endif
