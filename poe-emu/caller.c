/*
 * caller.c - who calls the functions that leak into page-table windows
 * (see caller.h)
 *
 * window.c says which functions ran in a window without being allowed
 * to, not why they did: memset() or a lock helper leaks on behalf of its
 * caller, which is the one to fix (call it outside the window) or to
 * allow. So each entry into a leak function while the window is open
 * counts the function holding x30, the call's return address.
 *
 * An entry is a block that starts at the function's first instruction
 * (window.c registers nothing else): a BL ends QEMU's block, so every
 * call starts one there. Other ways in count too, with whatever x30
 * holds: a tail call names the caller's caller, which is still the code
 * that made the window's call chain. Falling through into the next
 * function is no entry. x30 is the return address, not the call's: a
 * call that ends its function (to a noreturn function) names the one
 * after it.
 *
 * Cost: only a leak function's entry block carries this, and only while
 * the window is open (window.c's gate): a register read, a System.map
 * lookup and a hash table update under a lock that every vCPU shares. Leaks are the exception the report is there to remove, so one
 * simple table is kept rather than one per vCPU.
 */
#include <string.h>

#include <glib.h>

#include "caller.h"
#include "regs.h"
#include "sysmap.h"

/* a (function, caller) pair; the key first, as g_int64_hash() reads it */
struct pair {
	gint64 key;		/* function << 32 | caller */
	uint64_t calls;
};

static GMutex lock;
static GHashTable *pairs;	/* struct pair, by key */
static unsigned nfuncs;		/* caller nfuncs: "?" */

void caller_init(void)
{
	if (pairs)
		g_hash_table_destroy(pairs);
	pairs = g_hash_table_new_full(g_int64_hash, g_int64_equal, NULL,
				      g_free);
	nfuncs = sysmap_nfuncs();
}

/* the kernel function holding the run-time address addr, or nfuncs */
static unsigned func_at(uint64_t addr)
{
	uint64_t start, end;
	long f;

	if (!(addr >> 63))	/* the TTBR0 half: user space */
		return nfuncs;
	f = sysmap_func(addr - sysmap_slide(), &start, &end);
	return f < 0 ? nfuncs : (unsigned)f;
}

void caller_record(unsigned vcpu, unsigned fn)
{
	gint64 key = (gint64)fn << 32 |
		     func_at(poe_gpr_read(vcpu, 30, false));
	struct pair *p;

	g_mutex_lock(&lock);
	if (!pairs) {		/* a vCPU still running after the exit */
		g_mutex_unlock(&lock);
		return;
	}
	p = g_hash_table_lookup(pairs, &key);
	if (!p) {
		p = g_new0(struct pair, 1);
		p->key = key;
		g_hash_table_add(pairs, p);
	}
	p->calls++;
	g_mutex_unlock(&lock);
}

/* a line of the output: callers of one name added up */
struct caller_row {
	unsigned rank;		/* of its function in the output, from 1 */
	const char *caller;
	uint64_t calls;
};

/* the functions' order, then most calls first, then by caller's name */
static int row_cmp(const void *a, const void *b)
{
	const struct caller_row *x = *(struct caller_row *const *)a;
	const struct caller_row *y = *(struct caller_row *const *)b;

	if (x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	if (x->calls != y->calls)
		return x->calls > y->calls ? -1 : 1;
	return strcmp(x->caller, y->caller);
}

static const char *caller_name(unsigned caller)
{
	return caller < nfuncs ? sysmap_func_name(caller) : "?";
}

/* the pairs of the functions in rank (name -> rank), one row per names */
static GPtrArray *rows_by_name(GHashTable *rank)
{
	GHashTable *by_names = g_hash_table_new_full(g_str_hash, g_str_equal,
						     g_free, NULL);
	GPtrArray *rows = g_ptr_array_new_with_free_func(g_free);
	GHashTableIter it;
	struct pair *p;

	g_hash_table_iter_init(&it, pairs);
	while (g_hash_table_iter_next(&it, (gpointer *)&p, NULL)) {
		const char *fn = sysmap_func_name(p->key >> 32);
		const char *caller = caller_name(p->key & 0xffffffff);
		unsigned r = GPOINTER_TO_UINT(g_hash_table_lookup(rank, fn));
		char *names;
		struct caller_row *row;

		if (!r)		/* not asked for */
			continue;
		names = g_strdup_printf("%u %s", r, caller);
		row = g_hash_table_lookup(by_names, names);
		if (row) {
			g_free(names);
		} else {
			row = g_new0(struct caller_row, 1);
			row->rank = r;
			row->caller = caller;
			g_hash_table_insert(by_names, names, row);
			g_ptr_array_add(rows, row);
		}
		row->calls += p->calls;
	}
	g_hash_table_destroy(by_names);
	g_ptr_array_sort(rows, row_cmp);
	return rows;
}

void caller_write(FILE *out, const char *const *fns, unsigned n)
{
	GHashTable *rank = g_hash_table_new(g_str_hash, g_str_equal);
	GPtrArray *rows;
	unsigned i;

	g_mutex_lock(&lock);
	for (i = 0; i < n; i++)
		g_hash_table_insert(rank, (gpointer)fns[i],
				    GUINT_TO_POINTER(i + 1));
	rows = rows_by_name(rank);
	for (i = 0; i < rows->len; i++) {
		const struct caller_row *r = g_ptr_array_index(rows, i);

		fprintf(out, "poe-window-caller: fn=%s caller=%s calls=%llu\n",
			fns[r->rank - 1], r->caller,
			(unsigned long long)r->calls);
	}
	g_ptr_array_free(rows, true);
	g_hash_table_destroy(rank);
	g_hash_table_destroy(pairs);
	pairs = NULL;
	g_mutex_unlock(&lock);
}
