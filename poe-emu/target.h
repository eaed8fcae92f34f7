/*
 * target.h - where the stores to other memory in a page-table window go
 * (part of window_stores=FILE, see store.h)
 *
 * store.c tells this module the function and the address of each store
 * that goes neither to a page table nor to the kernel stack; at exit,
 * after store.c's caller lines, one line per (function, target):
 *   poe-window-store-target: fn=NAME target=TARGET stores=N
 * TARGET is current (the running task's task_struct), image:OBJECT (a
 * kernel image object), percpu:OBJECT (this CPU's copy of a static
 * per-CPU variable), dynamic (any other kernel address) or user (the
 * TTBR0 half).
 */
#ifndef POE_TARGET_H
#define POE_TARGET_H

#include <stdint.h>
#include <stdio.h>

/* for the loaded System.map */
void target_init(void);

/* run time, from a callback that declared register access */
void target_add(unsigned fn, uint64_t va);

/* the lines of the functions named in fns, in that order (caller.h) */
void target_write(FILE *out, const char *const *fns, unsigned n);

#endif
