/*
 * path.c - the call paths of the kernel functions a report names (see
 * path.h)
 *
 * caller.c names the function a store's function returns to; when that
 * is a helper too (mod_node_page_state() for mod_node_state()), the code
 * that opened the window is further up. store.c reads those frames
 * (frame records) and this module counts each path of up to PATH_DEPTH
 * functions above the one that stored.
 *
 * Cost: as caller.c's, a System.map lookup per frame and a hash table
 * update under a lock every vCPU shares, only for the events the owner
 * reports.
 */
#include <string.h>

#include <glib.h>

#include "path.h"
#include "sysmap.h"

#define NONE	0xffffffffu	/* past the path's end */

/* a function and its path, in function indices; nfuncs: "?" */
struct chain {
	uint32_t f[PATH_DEPTH + 1];
	uint64_t n;
};

struct path_table {
	GMutex lock;
	GHashTable *chains;	/* struct chain as its own key; NULL: written */
	unsigned nfuncs;
	const char *line, *unit;
};

static guint chain_hash(gconstpointer p)
{
	const struct chain *c = p;
	guint h = 0;
	unsigned i;

	for (i = 0; i <= PATH_DEPTH; i++)
		h = h * 31 + c->f[i];
	return h;
}

static gboolean chain_equal(gconstpointer a, gconstpointer b)
{
	const struct chain *x = a, *y = b;

	return !memcmp(x->f, y->f, sizeof(x->f));
}

struct path_table *path_table_new(const char *line, const char *unit)
{
	struct path_table *t = g_new0(struct path_table, 1);

	g_mutex_init(&t->lock);
	t->chains = g_hash_table_new_full(chain_hash, chain_equal, g_free,
					  NULL);
	t->nfuncs = sysmap_nfuncs();
	t->line = line;
	t->unit = unit;
	return t;
}

void path_add(struct path_table *t, unsigned fn, const uint64_t *ret,
	      unsigned n)
{
	struct chain key, *c;
	unsigned i;

	key.f[0] = fn;
	for (i = 0; i < PATH_DEPTH; i++)
		key.f[i + 1] = NONE;
	if (!n)			/* not even a caller: "?" */
		key.f[1] = t->nfuncs;
	for (i = 0; i < n && i < PATH_DEPTH; i++) {
		long f = sysmap_func_run(ret[i]);

		key.f[i + 1] = f < 0 ? t->nfuncs : (uint32_t)f;
		if (f < 0)	/* "?" ends the path */
			break;
	}
	g_mutex_lock(&t->lock);
	if (!t->chains) {	/* a vCPU still running after the exit */
		g_mutex_unlock(&t->lock);
		return;
	}
	c = g_hash_table_lookup(t->chains, &key);
	if (!c) {
		c = g_memdup2(&key, sizeof(key));
		c->n = 0;
		g_hash_table_add(t->chains, c);
	}
	c->n++;
	g_mutex_unlock(&t->lock);
}

/* a line of the output: paths of the same names added up */
struct path_row {
	unsigned rank;		/* of its function in the output, from 1 */
	char *text;		/* "A<B<C" */
	uint64_t n;
};

static int row_cmp(const void *a, const void *b)
{
	const struct path_row *x = *(struct path_row *const *)a;
	const struct path_row *y = *(struct path_row *const *)b;

	if (x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	if (x->n != y->n)
		return x->n > y->n ? -1 : 1;
	return strcmp(x->text, y->text);
}

static void row_free(gpointer p)
{
	struct path_row *r = p;

	g_free(r->text);
	g_free(r);
}

static char *path_text(const struct path_table *t, const struct chain *c)
{
	GString *s = g_string_new(NULL);
	unsigned i;

	for (i = 1; i <= PATH_DEPTH && c->f[i] != NONE; i++)
		g_string_append_printf(s, "%s%s", i > 1 ? "<" : "",
				       c->f[i] < t->nfuncs ?
				       sysmap_func_name(c->f[i]) : "?");
	return g_string_free(s, false);
}

/* the chains of the functions in rank (name -> rank), one row per names */
static GPtrArray *rows_by_name(const struct path_table *t, GHashTable *rank)
{
	GHashTable *by_names = g_hash_table_new_full(g_str_hash, g_str_equal,
						     g_free, NULL);
	GPtrArray *rows = g_ptr_array_new_with_free_func(row_free);
	GHashTableIter it;
	struct chain *c;

	g_hash_table_iter_init(&it, t->chains);
	while (g_hash_table_iter_next(&it, (gpointer *)&c, NULL)) {
		unsigned r = GPOINTER_TO_UINT(g_hash_table_lookup(
					rank, sysmap_func_name(c->f[0])));
		struct path_row *row;
		char *text, *names;

		if (!r)		/* not asked for */
			continue;
		text = path_text(t, c);
		names = g_strdup_printf("%u %s", r, text);
		row = g_hash_table_lookup(by_names, names);
		if (row) {
			g_free(names);
			g_free(text);
		} else {
			row = g_new0(struct path_row, 1);
			row->rank = r;
			row->text = text;
			g_hash_table_insert(by_names, names, row);
			g_ptr_array_add(rows, row);
		}
		row->n += c->n;
	}
	g_hash_table_destroy(by_names);
	g_ptr_array_sort(rows, row_cmp);
	return rows;
}

void path_write(struct path_table *t, FILE *out, const char *const *fns,
		unsigned n)
{
	GHashTable *rank = g_hash_table_new(g_str_hash, g_str_equal);
	GPtrArray *rows;
	unsigned i;

	g_mutex_lock(&t->lock);
	if (!t->chains) {
		g_mutex_unlock(&t->lock);
		g_hash_table_destroy(rank);
		return;
	}
	for (i = 0; i < n; i++)
		g_hash_table_insert(rank, (gpointer)fns[i],
				    GUINT_TO_POINTER(i + 1));
	rows = rows_by_name(t, rank);
	for (i = 0; i < rows->len; i++) {
		const struct path_row *r = g_ptr_array_index(rows, i);

		fprintf(out, "%s: fn=%s path=%s %s=%llu\n", t->line,
			fns[r->rank - 1], r->text, t->unit,
			(unsigned long long)r->n);
	}
	g_ptr_array_free(rows, true);
	g_hash_table_destroy(rank);
	g_hash_table_destroy(t->chains);
	t->chains = NULL;
	g_mutex_unlock(&t->lock);
}
