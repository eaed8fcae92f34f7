/*
 * path.h - the call paths of the kernel functions a report names (the
 * functions that store to other memory in a window, window_stores=FILE,
 * see store.h)
 *
 * Like caller.h, one level deeper: its owner tells it, at run time, a
 * function and the return addresses of up to PATH_DEPTH frames above it
 * (its caller's first); at exit, one line per (function, path), after the
 * owner's lines:
 *   LINE: fn=NAME path=CALLER<CALLER'S CALLER<... UNIT=N
 * "?" for a return address outside the kernel's text, where the path
 * ends.
 */
#ifndef POE_PATH_H
#define POE_PATH_H

#include <stdint.h>
#include <stdio.h>

#define PATH_DEPTH	4

struct path_table;

/* a fresh table: lines "LINE:", counting UNIT (both kept, not copied) */
struct path_table *path_table_new(const char *line, const char *unit);

/*
 * Run time, from a callback on any vCPU: function fn (an index of
 * sysmap_func()) was called along the run-time return addresses
 * ret[0, n), n <= PATH_DEPTH, its caller's first.
 */
void path_add(struct path_table *t, unsigned fn, const uint64_t *ret,
	      unsigned n);

/*
 * Write the lines of the functions named in fns, in that order
 * (functions of one name and paths of the same names added up), each
 * one's paths most first, then by the path's text; then forget
 * everything.
 */
void path_write(struct path_table *t, FILE *out, const char *const *fns,
		unsigned n);

#endif
