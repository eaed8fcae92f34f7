/*
 * sysmap.c - the guest kernel's System.map (see sysmap.h)
 *
 * Lines are "ADDRESS TYPE NAME". Functions are the text symbols: t and T,
 * and W (weak symbols, which in a kernel are weak functions); a function
 * runs up to the next symbol. Every other symbol with an address (data,
 * read-only data, the end of the image...) is an object, and a boundary
 * of functions, so that an address past the kernel's text, or in data
 * between functions, is in no function rather than in the one before it;
 * strict mode's reports still name the function before (sysmap_name()).
 * Absolute (a, A) and undefined weak (w) symbols place nothing.
 */
#include <stdio.h>
#include <string.h>

#include <glib.h>

#include "sysmap.h"

struct sym {
	uint64_t addr;
	char *name;
};

static GArray *funcs;		/* struct sym, by address */
static GArray *objs;		/* struct sym: the other symbols, by address */
static uint64_t vbar_slide;
static unsigned load_gen;	/* System.maps loaded so far */

/* the symbols sysmap_addr() knows, and their addresses */
static const char *const kept[] = {
	"vectors", "__start___ex_table", "__stop___ex_table",
	"__start_init_stack", "__end_init_stack", "_text", "_end",
	"__per_cpu_start", "__per_cpu_end", "init_task",
};
#define NKEPT (sizeof(kept) / sizeof(kept[0]))
static uint64_t kept_addr[NKEPT];

static int sym_cmp(const void *a, const void *b)
{
	const struct sym *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static void keep_by_name(const char *name, uint64_t addr)
{
	unsigned i;

	for (i = 0; i < NKEPT; i++)
		if (!strcmp(name, kept[i]))
			kept_addr[i] = addr;
}

bool sysmap_load(const char *path)
{
	char line[512], name[400], type;
	unsigned long long addr;
	FILE *f = fopen(path, "r");

	if (!f) {
		fprintf(stderr, "poe-emu: cannot open sysmap %s\n", path);
		return false;
	}
	memset(kept_addr, 0, sizeof(kept_addr));
	load_gen++;
	funcs = g_array_new(false, false, sizeof(struct sym));
	objs = g_array_new(false, false, sizeof(struct sym));
	while (fgets(line, sizeof(line), f)) {
		struct sym s;

		if (sscanf(line, "%llx %c %399s", &addr, &type, name) != 3)
			continue;
		keep_by_name(name, addr);
		if (strchr("aAw", type))
			continue;
		s.addr = addr;
		s.name = g_strdup(name);
		g_array_append_val(strchr("tTW", type) ? funcs : objs, s);
	}
	fclose(f);
	g_array_sort(funcs, sym_cmp);	/* stable: aliases in file order */
	g_array_sort(objs, sym_cmp);
	return true;
}

bool sysmap_loaded(void)
{
	return funcs != NULL;
}

uint64_t sysmap_addr(const char *name)
{
	unsigned i;

	for (i = 0; i < NKEPT; i++)
		if (!strcmp(name, kept[i]))
			return kept_addr[i];
	return 0;
}

/* index of the last symbol of syms at or before addr, -1 if none */
static long last_sym(GArray *syms, uint64_t addr)
{
	long lo = 0, hi = syms ? (long)syms->len : 0, best = -1;

	while (lo < hi) {
		long mid = (lo + hi) / 2;

		if (g_array_index(syms, struct sym, mid).addr <= addr) {
			best = mid;
			lo = mid + 1;
		} else {
			hi = mid;
		}
	}
	return best;
}

const char *sysmap_name(uint64_t addr, uint64_t *off)
{
	long i = last_sym(funcs, addr);
	const struct sym *s;

	if (i < 0)
		return "?";
	s = &g_array_index(funcs, struct sym, i);
	*off = addr - s->addr;
	return s->name;
}

long sysmap_func(uint64_t addr, uint64_t *start, uint64_t *end)
{
	long i = last_sym(funcs, addr), b = last_sym(objs, addr);
	uint64_t fstart = i < 0 ? 0 : g_array_index(funcs, struct sym, i).addr;
	uint64_t bound = b < 0 ? 0 : g_array_index(objs, struct sym, b).addr;
	uint64_t fnext = (unsigned long)(i + 1) < funcs->len ?
			 g_array_index(funcs, struct sym, i + 1).addr : ~0ull;
	uint64_t bnext = (unsigned long)(b + 1) < objs->len ?
			 g_array_index(objs, struct sym, b + 1).addr : ~0ull;

	/* a function and a boundary at one address: the function */
	if (i >= 0 && !(b >= 0 && bound > fstart)) {
		*start = fstart;
		*end = MIN(fnext, bnext);
		return i;
	}
	/* in no function: until the next function starts */
	*start = MAX(fstart, bound);
	*end = fnext;
	return -1;
}

unsigned sysmap_nfuncs(void)
{
	return funcs ? funcs->len : 0;
}

const char *sysmap_func_name(unsigned i)
{
	return g_array_index(funcs, struct sym, i).name;
}

long sysmap_obj(uint64_t addr)
{
	return last_sym(objs, addr);
}

const char *sysmap_obj_name(unsigned i)
{
	return g_array_index(objs, struct sym, i).name;
}

uint64_t sysmap_obj_end(unsigned i)
{
	unsigned j;

	for (j = i + 1; j < objs->len; j++) {
		uint64_t a = g_array_index(objs, struct sym, j).addr;

		if (a > g_array_index(objs, struct sym, i).addr)
			return a;
	}
	return 0;
}

/* most first, then by name: the same run, the same file */
static int row_cmp(const void *a, const void *b)
{
	const struct sysmap_row *x = *(struct sysmap_row *const *)a;
	const struct sysmap_row *y = *(struct sysmap_row *const *)b;

	if (x->n != y->n)
		return x->n > y->n ? -1 : 1;
	return strcmp(x->name, y->name);
}

GPtrArray *sysmap_rows(const uint64_t *counts)
{
	GHashTable *by_name = g_hash_table_new(g_str_hash, g_str_equal);
	GPtrArray *rows = g_ptr_array_new_with_free_func(g_free);
	unsigned i, n = sysmap_nfuncs();

	for (i = 0; i <= n; i++) {
		uint64_t c = __atomic_load_n(&counts[i], __ATOMIC_RELAXED);
		const char *name = i < n ? sysmap_func_name(i) : "?";
		struct sysmap_row *r;

		if (!c)
			continue;
		r = g_hash_table_lookup(by_name, name);
		if (!r) {
			r = g_new0(struct sysmap_row, 1);
			r->name = name;
			g_hash_table_insert(by_name, (gpointer)name, r);
			g_ptr_array_add(rows, r);
		}
		r->n += c;
	}
	g_hash_table_destroy(by_name);
	g_ptr_array_sort(rows, row_cmp);
	return rows;
}

void sysmap_set_vbar(uint64_t vbar)
{
	uint64_t vectors = sysmap_addr("vectors");

	if (vectors)
		__atomic_store_n(&vbar_slide, vbar - vectors, __ATOMIC_RELAXED);
}

uint64_t sysmap_slide(void)
{
	return __atomic_load_n(&vbar_slide, __ATOMIC_RELAXED);
}

/*
 * Return addresses repeat (the same call sites, over and over): the
 * answers for the last run-time addresses, per thread, a direct-mapped
 * cache checked against the slide and the System.map loaded.
 */
#define RUN_CACHE 256

struct run_cache {
	uint64_t addr, slide;
	unsigned gen;
	long f;
};

long sysmap_func_run(uint64_t addr)
{
	static __thread struct run_cache *cache
		__attribute__((tls_model("initial-exec")));
	uint64_t slide = sysmap_slide(), start, end;
	unsigned i = (addr >> 2) % RUN_CACHE;

	if (!(addr >> 63))
		return -1;
	if (!cache)
		cache = g_new0(struct run_cache, RUN_CACHE);
	if (cache[i].addr != addr || cache[i].slide != slide ||
	    cache[i].gen != load_gen) {
		cache[i].addr = addr;
		cache[i].slide = slide;
		cache[i].gen = load_gen;
		cache[i].f = sysmap_func(addr - slide, &start, &end);
	}
	return cache[i].f;
}
