/*
 * sysmap.h - the guest kernel's System.map (option sysmap=FILE)
 *
 * Loaded once, at install, for strict mode's reports and for the window
 * reports (window.c, store.c): the kernel's functions by address, and the
 * few symbols the plugin needs by name. Addresses here are the
 * System.map's (link-time); the kernel runs them shifted by its KASLR
 * slide, which is VBAR_EL1 minus "vectors".
 */
#ifndef POE_SYSMAP_H
#define POE_SYSMAP_H

#include <stdbool.h>
#include <stdint.h>

#include <glib.h>

/* read FILE; false (with a message) if it cannot be read */
bool sysmap_load(const char *path);
bool sysmap_loaded(void);

/*
 * The address of "vectors", "__start___ex_table", "__stop___ex_table",
 * "__start_init_stack", "__end_init_stack", "_text", "_end",
 * "__per_cpu_start", "__per_cpu_end" or "init_task" (the only names
 * kept), 0 if the System.map lacks it.
 */
uint64_t sysmap_addr(const char *name);

/* the last function at or before addr and addr's offset in it, or "?" */
const char *sysmap_name(uint64_t addr, uint64_t *off);

/*
 * The function that contains addr, as an index in [0, sysmap_nfuncs()),
 * or -1 when addr is in no function: before the first, or after another
 * kind of symbol (data, the end of the image: code there, such as a
 * module's, is not the kernel's text). [*start, *end) is the stretch
 * around addr with the same answer.
 */
long sysmap_func(uint64_t addr, uint64_t *start, uint64_t *end);
unsigned sysmap_nfuncs(void);
const char *sysmap_func_name(unsigned i);

/*
 * Objects: the symbols that are no functions (data, read-only data, the
 * image's markers). The last one at or before addr, as an index, or -1.
 */
long sysmap_obj(uint64_t addr);
const char *sysmap_obj_name(unsigned i);
/* where the next object at a higher address starts (0: none) */
uint64_t sysmap_obj_end(unsigned i);

/* a function name and a count: a line of a report */
struct sysmap_row {
	const char *name;
	uint64_t n;
};

/*
 * counts[0, sysmap_nfuncs()], one per function and the last for "?"
 * (code in no function), as rows: one per name (functions of one name,
 * static ones in different files, added up), none for a zero count, most
 * first, then by name. Free with g_ptr_array_free(rows, true).
 */
GPtrArray *sysmap_rows(const uint64_t *counts);

/*
 * The kernel installed its vectors at vbar: the slide of its addresses
 * from the System.map's, for sysmap_slide() (0 until then).
 */
void sysmap_set_vbar(uint64_t vbar);
uint64_t sysmap_slide(void);

/*
 * The function that holds the run-time address addr (the slide taken
 * off), -1 if none or if addr is in the TTBR0 half (user space).
 */
long sysmap_func_run(uint64_t addr);

#endif
