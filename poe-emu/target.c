/*
 * target.c - where the stores to other memory in a page-table window go
 * (see target.h)
 *
 * Whether an attacker can steer a store depends on where its address
 * comes from. The running task, found through SP_EL0, a kernel image
 * object (a global variable) or this CPU's copy of a static per-CPU
 * variable has an address no pointer in memory gives; any other kernel
 * address came through a pointer (slab, page allocator, struct pages,
 * vmalloc, dynamic per-CPU memory, another CPU's per-CPU copy). So:
 *
 * - current: the task_struct of the task running, which SP_EL0 points to
 *   at EL1 in Linux (its preempt count, flags, lazy MMU state): as large
 *   as the System.map's init_task (up to the next object);
 * - image:OBJECT: the address, the KASLR slide taken off, is in
 *   [_text, _end) of the System.map; OBJECT is its last object (a symbol
 *   other than a function) at or before the address;
 * - percpu:OBJECT: the address minus TPIDR_EL1 (where Linux keeps this
 *   CPU's per-CPU offset at EL1), the slide taken off, is in
 *   [__per_cpu_start, __per_cpu_end): OBJECT as above;
 * - dynamic: any other address in the TTBR1 half;
 * - user: the TTBR0 half (unprivileged stores).
 *
 * A tag in the top byte is ignored. Without TPIDR_EL1 or SP_EL0 in
 * QEMU's register list there is no percpu or current target (plugin.c
 * says so at start).
 *
 * Cost: only for the stores store.c reports, in a window: an SP_EL0
 * read through the plugin API, a TPIDR_EL1 read for an address outside
 * the task and the image, a System.map lookup, caller.c's table update
 * under its lock.
 */
#include <glib.h>

#include "target.h"
#include "caller.h"
#include "regs.h"
#include "sysmap.h"

/* ids: user, dynamic, current, then image objects, then per-CPU ones */
enum { T_USER, T_DYNAMIC, T_CURRENT, T_OBJ };

static struct caller_table *targets;
static uint64_t text, end, pcpu_start, pcpu_end, task_size;
static unsigned nobjs;

static const char *target_name(unsigned id)
{
	char *s;
	const char *name;

	if (id == T_USER)
		return "user";
	if (id == T_DYNAMIC)
		return "dynamic";
	if (id == T_CURRENT)
		return "current";
	id -= T_OBJ;
	s = id < nobjs ? g_strdup_printf("image:%s", sysmap_obj_name(id)) :
			 g_strdup_printf("percpu:%s",
					 sysmap_obj_name(id - nobjs));
	name = g_intern_string(s);
	g_free(s);
	return name;
}

void target_init(void)
{
	uint64_t task;
	long last, obj;

	text = sysmap_addr("_text");
	end = sysmap_addr("_end");
	pcpu_start = sysmap_addr("__per_cpu_start");
	pcpu_end = sysmap_addr("__per_cpu_end");
	last = sysmap_obj(~0ull);
	nobjs = last + 1;
	task = sysmap_addr("init_task");
	obj = task ? sysmap_obj(task) : -1;
	task_size = obj >= 0 && sysmap_obj_end(obj) > task ?
		    sysmap_obj_end(obj) - task : 0;
	targets = caller_table_new_by("poe-window-store-target", "target",
				      "stores", target_name);
}

static unsigned target_of(uint64_t va)
{
	uint64_t slide = sysmap_slide(), a;
	long obj;

	if (!((va >> 55) & 1))
		return T_USER;
	va |= 0xffull << 56;
	if (poe_reg_found(R_SP_EL0) &&
	    va - poe_reg_read(R_SP_EL0) < task_size)
		return T_CURRENT;
	a = va - slide;
	if (text <= a && a < end && (obj = sysmap_obj(a)) >= 0)
		return T_OBJ + obj;
	if (!poe_reg_found(R_TPIDR_EL1))
		return T_DYNAMIC;
	a = va - poe_reg_read(R_TPIDR_EL1) - slide;
	if (pcpu_start <= a && a < pcpu_end && (obj = sysmap_obj(a)) >= 0)
		return T_OBJ + nobjs + obj;
	return T_DYNAMIC;
}

void target_add(unsigned fn, uint64_t va)
{
	caller_add_id(targets, fn, target_of(va));
}

void target_write(FILE *out, const char *const *fns, unsigned n)
{
	caller_write(targets, out, fns, n);
}
