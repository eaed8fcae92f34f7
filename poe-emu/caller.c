/*
 * caller.c - who calls the kernel functions a report names (see caller.h)
 *
 * window.c says which functions ran in a window without being allowed
 * to, not why they did: memset() or a lock helper leaks on behalf of its
 * caller, which is the one to fix (call it outside the window) or to
 * allow. So each entry into a leak function while the window is open
 * counts the function holding x30, the call's return address (window.c
 * says why that is the caller, and when it is not). store.c does the
 * same for the functions that store to other memory in a window, with
 * the return address of the function the store is in.
 *
 * Cost: a System.map lookup and a hash table update under a lock that
 * every vCPU shares, only for the events the owners report (leak entries
 * and stores to other memory, in a window). They are the exception the
 * reports are there to remove, so one simple table is kept rather than
 * one per vCPU.
 */
#include <string.h>

#include <glib.h>

#include "caller.h"
#include "sysmap.h"

/* a (function, caller) pair; the key first, as g_int64_hash() reads it */
struct pair {
	gint64 key;		/* function << 32 | caller */
	uint64_t n;		/* events: calls, stores */
};

struct caller_table {
	GMutex lock;
	GHashTable *pairs;	/* struct pair, by key; NULL once written */
	unsigned nfuncs;	/* caller nfuncs: "?" */
	const char *line, *key, *unit;
	const char *(*name)(unsigned id);	/* NULL: callers */
};

struct caller_table *caller_table_new_by(const char *line, const char *key,
					 const char *unit,
					 const char *(*name)(unsigned id))
{
	struct caller_table *t = g_new0(struct caller_table, 1);

	g_mutex_init(&t->lock);
	t->pairs = g_hash_table_new_full(g_int64_hash, g_int64_equal, NULL,
					 g_free);
	t->nfuncs = sysmap_nfuncs();
	t->line = line;
	t->key = key;
	t->unit = unit;
	t->name = name;
	return t;
}

struct caller_table *caller_table_new(const char *line, const char *unit)
{
	return caller_table_new_by(line, "caller", unit, NULL);
}

/* the kernel function holding the run-time address addr, or nfuncs */
static unsigned func_at(const struct caller_table *t, uint64_t addr)
{
	long f = sysmap_func_run(addr);

	return f < 0 ? t->nfuncs : (unsigned)f;
}

void caller_add(struct caller_table *t, unsigned fn, uint64_t ret)
{
	caller_add_id(t, fn, func_at(t, ret));
}

void caller_add_id(struct caller_table *t, unsigned fn, unsigned id)
{
	gint64 key = (gint64)fn << 32 | id;
	struct pair *p;

	g_mutex_lock(&t->lock);
	if (!t->pairs) {	/* a vCPU still running after the exit */
		g_mutex_unlock(&t->lock);
		return;
	}
	p = g_hash_table_lookup(t->pairs, &key);
	if (!p) {
		p = g_new0(struct pair, 1);
		p->key = key;
		g_hash_table_add(t->pairs, p);
	}
	p->n++;
	g_mutex_unlock(&t->lock);
}

/* a line of the output: callers of one name added up */
struct caller_row {
	unsigned rank;		/* of its function in the output, from 1 */
	const char *caller;
	uint64_t n;
};

/* the functions' order, then most first, then by caller's name */
static int row_cmp(const void *a, const void *b)
{
	const struct caller_row *x = *(struct caller_row *const *)a;
	const struct caller_row *y = *(struct caller_row *const *)b;

	if (x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	if (x->n != y->n)
		return x->n > y->n ? -1 : 1;
	return strcmp(x->caller, y->caller);
}

static const char *caller_name(const struct caller_table *t, unsigned id)
{
	if (t->name)
		return t->name(id);
	return id < t->nfuncs ? sysmap_func_name(id) : "?";
}

/* the pairs of the functions in rank (name -> rank), one row per names */
static GPtrArray *rows_by_name(const struct caller_table *t,
			       GHashTable *rank)
{
	GHashTable *by_names = g_hash_table_new_full(g_str_hash, g_str_equal,
						     g_free, NULL);
	GPtrArray *rows = g_ptr_array_new_with_free_func(g_free);
	GHashTableIter it;
	struct pair *p;

	g_hash_table_iter_init(&it, t->pairs);
	while (g_hash_table_iter_next(&it, (gpointer *)&p, NULL)) {
		const char *fn = sysmap_func_name(p->key >> 32);
		const char *caller = caller_name(t, p->key & 0xffffffff);
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
		row->n += p->n;
	}
	g_hash_table_destroy(by_names);
	g_ptr_array_sort(rows, row_cmp);
	return rows;
}

void caller_write(struct caller_table *t, FILE *out, const char *const *fns,
		  unsigned n)
{
	GHashTable *rank = g_hash_table_new(g_str_hash, g_str_equal);
	GPtrArray *rows;
	unsigned i;

	g_mutex_lock(&t->lock);
	if (!t->pairs) {
		g_mutex_unlock(&t->lock);
		g_hash_table_destroy(rank);
		return;
	}
	for (i = 0; i < n; i++)
		g_hash_table_insert(rank, (gpointer)fns[i],
				    GUINT_TO_POINTER(i + 1));
	rows = rows_by_name(t, rank);
	for (i = 0; i < rows->len; i++) {
		const struct caller_row *r = g_ptr_array_index(rows, i);

		fprintf(out, "%s: fn=%s %s=%s %s=%llu\n", t->line,
			fns[r->rank - 1], t->key, r->caller, t->unit,
			(unsigned long long)r->n);
	}
	g_ptr_array_free(rows, true);
	g_hash_table_destroy(rank);
	g_hash_table_destroy(t->pairs);
	t->pairs = NULL;
	g_mutex_unlock(&t->lock);
}
