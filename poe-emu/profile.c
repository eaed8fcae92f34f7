/*
 * profile.c - where a bench row's kernel instructions go (profile=FILE)
 *
 * The bench records say how many instructions a row executed; this says
 * in which functions, so that two kernels' rows can be compared function
 * by function. Each EL1 translation block gets a callback on its first
 * instruction that counts its executions. A row's BEGIN marker zeroes the
 * counts; its END marker adds executions times block length to the row's
 * table, by block start. A block left early (an exception in its middle)
 * counts whole, so the figures are close to, not exactly, the record's
 * insns_el1. The callbacks execute no guest instruction: the records of
 * a profiled boot are those of a plain bench boot, only slower to get.
 *
 * Blocks are found by the address they were translated at, which for
 * kernel text is the one they run at (see poe_insn_pc() for user code).
 * EL0 blocks are not profiled.
 *
 * The POR_EL1 writes of a row are counted by the address of their MSR, as
 * sysreg.c emulates each one: the functions that open page-table write
 * windows, and how often, which the instruction counts do not say.
 */
#include <stdio.h>

#include "profile.h"

struct profile_tb {
	uint64_t pc;
	uint64_t n_insns;
	uint64_t execs;
};

/* The POR_EL1 writes of one MSR and x30, in the open row or a row's sum. */
struct profile_por {
	uint64_t pc, lr;	/* the key */
	uint64_t opens, other;
};

static FILE *profile_file;
static GMutex lock;		/* blocks, rows, por, por_rows, row_open */
static GPtrArray *blocks;	/* every profile_tb, never freed */
static GHashTable *rows;	/* row name -> (block pc -> insns) */
static GHashTable *por;		/* profile_por by pc and lr, the open row's */
static GHashTable *por_rows;	/* row name -> (profile_por by pc and lr) */
static bool row_open;

static GHashTable *pc_table(void)
{
	return g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free,
				     g_free);
}

static guint por_hash(gconstpointer p)
{
	const struct profile_por *w = p;

	return g_int64_hash(&w->pc) ^ (g_int64_hash(&w->lr) * 31);
}

static gboolean por_equal(gconstpointer a, gconstpointer b)
{
	const struct profile_por *x = a, *y = b;

	return x->pc == y->pc && x->lr == y->lr;
}

/* profile_por entries, each its own key */
static GHashTable *por_table(void)
{
	return g_hash_table_new_full(por_hash, por_equal, g_free, NULL);
}

/* the entry of (pc, lr) in t, created zeroed */
static struct profile_por *por_entry(GHashTable *t, uint64_t pc, uint64_t lr)
{
	struct profile_por key = { .pc = pc, .lr = lr }, *e;

	e = g_hash_table_lookup(t, &key);
	if (!e) {
		e = g_memdup2(&key, sizeof(key));
		g_hash_table_add(t, e);
	}
	return e;
}

bool profile_open(const char *path)
{
	profile_file = fopen(path, "w");
	if (!profile_file)
		return false;
	blocks = g_ptr_array_new();
	rows = g_hash_table_new_full(g_str_hash, g_str_equal, g_free,
				     (GDestroyNotify)g_hash_table_unref);
	por = por_table();
	por_rows = g_hash_table_new_full(g_str_hash, g_str_equal, g_free,
					 (GDestroyNotify)g_hash_table_unref);
	return true;
}

/* the instructions of the block at pc in a row's table, created zeroed */
static uint64_t *insns_entry(GHashTable *t, uint64_t pc)
{
	uint64_t *e = g_hash_table_lookup(t, &pc);

	if (!e) {
		e = g_new0(uint64_t, 1);
		g_hash_table_insert(t, g_memdup2(&pc, sizeof(pc)), e);
	}
	return e;
}

void profile_por_el1_write(uint64_t pc, uint64_t lr, bool opens)
{
	struct profile_por *e;

	if (!profile_file)
		return;
	g_mutex_lock(&lock);
	if (row_open) {
		e = por_entry(por, pc, lr);
		if (opens)
			e->opens++;
		else
			e->other++;
	}
	g_mutex_unlock(&lock);
}

static void tb_exec(unsigned vcpu, void *ud)
{
	struct profile_tb *b = ud;

	(void)vcpu;
	__atomic_add_fetch(&b->execs, 1, __ATOMIC_RELAXED);
}

void profile_instrument_tb(struct qemu_plugin_insn *first, uint64_t vaddr,
			   size_t n)
{
	struct profile_tb *b;

	if (!profile_file || !(vaddr >> 63))
		return;
	b = g_new0(struct profile_tb, 1);
	b->pc = vaddr;
	b->n_insns = n;
	g_mutex_lock(&lock);
	g_ptr_array_add(blocks, b);
	g_mutex_unlock(&lock);
	qemu_plugin_register_vcpu_insn_exec_cb(first, tb_exec,
					       QEMU_PLUGIN_CB_NO_REGS, b);
}

void profile_row_begin(void)
{
	unsigned i;

	if (!profile_file)
		return;
	g_mutex_lock(&lock);
	for (i = 0; i < blocks->len; i++)
		((struct profile_tb *)g_ptr_array_index(blocks, i))->execs = 0;
	g_hash_table_remove_all(por);
	row_open = true;
	g_mutex_unlock(&lock);
}

/* the table of row in rows_table, created empty by new() */
static GHashTable *row_table(GHashTable *rows_table, const char *row,
			     GHashTable *(*new)(void))
{
	GHashTable *t = g_hash_table_lookup(rows_table, row);

	if (!t) {
		t = new();
		g_hash_table_insert(rows_table, g_strdup(row), t);
	}
	return t;
}

void profile_row_end(const char *row)
{
	GHashTableIter it;
	gpointer value;
	GHashTable *t;
	unsigned i;

	if (!profile_file)
		return;
	g_mutex_lock(&lock);
	t = row_table(rows, row, pc_table);
	for (i = 0; i < blocks->len; i++) {
		struct profile_tb *b = g_ptr_array_index(blocks, i);
		uint64_t *sum;

		if (!b->execs)
			continue;
		sum = insns_entry(t, b->pc);
		*sum += b->execs * b->n_insns;
		b->execs = 0;
	}
	t = row_table(por_rows, row, por_table);
	g_hash_table_iter_init(&it, por);
	while (g_hash_table_iter_next(&it, &value, NULL)) {
		const struct profile_por *w = value;
		struct profile_por *sum = por_entry(t, w->pc, w->lr);

		sum->opens += w->opens;
		sum->other += w->other;
	}
	g_hash_table_remove_all(por);
	row_open = false;
	g_mutex_unlock(&lock);
}

static void write_row(gpointer key, gpointer value, gpointer ud)
{
	GHashTableIter it;
	gpointer pc, sum;

	(void)ud;
	g_hash_table_iter_init(&it, value);
	while (g_hash_table_iter_next(&it, &pc, &sum))
		fprintf(profile_file, "poe-profile: row=%s pc=0x%llx insns=%llu\n",
			(const char *)key,
			(unsigned long long)*(uint64_t *)pc,
			(unsigned long long)*(uint64_t *)sum);
}

static void write_por_row(gpointer key, gpointer value, gpointer ud)
{
	GHashTableIter it;
	gpointer e;

	(void)ud;
	g_hash_table_iter_init(&it, value);
	while (g_hash_table_iter_next(&it, &e, NULL)) {
		const struct profile_por *w = e;

		fprintf(profile_file,
			"poe-profile-por: row=%s pc=0x%llx lr=0x%llx opens=%llu other=%llu\n",
			(const char *)key, (unsigned long long)w->pc,
			(unsigned long long)w->lr, (unsigned long long)w->opens,
			(unsigned long long)w->other);
	}
}

void profile_exit(void)
{
	if (!profile_file)
		return;
	g_hash_table_foreach(rows, write_row, NULL);
	g_hash_table_foreach(por_rows, write_por_row, NULL);
	fclose(profile_file);
	profile_file = NULL;
}
