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
 */
#include <stdio.h>

#include "profile.h"

struct profile_tb {
	uint64_t pc;
	uint64_t n_insns;
	uint64_t execs;
};

static FILE *profile_file;
static GMutex lock;		/* blocks, rows */
static GPtrArray *blocks;	/* every profile_tb, never freed */
static GHashTable *rows;	/* row name -> (block pc -> insns) */

bool profile_open(const char *path)
{
	profile_file = fopen(path, "w");
	if (!profile_file)
		return false;
	blocks = g_ptr_array_new();
	rows = g_hash_table_new_full(g_str_hash, g_str_equal, g_free,
				     (GDestroyNotify)g_hash_table_unref);
	return true;
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
	g_mutex_unlock(&lock);
}

void profile_row_end(const char *row)
{
	GHashTable *t;
	unsigned i;

	if (!profile_file)
		return;
	g_mutex_lock(&lock);
	t = g_hash_table_lookup(rows, row);
	if (!t) {
		t = g_hash_table_new_full(g_int64_hash, g_int64_equal,
					  g_free, g_free);
		g_hash_table_insert(rows, g_strdup(row), t);
	}
	for (i = 0; i < blocks->len; i++) {
		struct profile_tb *b = g_ptr_array_index(blocks, i);
		uint64_t *sum;

		if (!b->execs)
			continue;
		sum = g_hash_table_lookup(t, &b->pc);
		if (!sum) {
			sum = g_new0(uint64_t, 1);
			g_hash_table_insert(t, g_memdup2(&b->pc, sizeof(b->pc)),
					    sum);
		}
		*sum += b->execs * b->n_insns;
		b->execs = 0;
	}
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

void profile_exit(void)
{
	if (!profile_file)
		return;
	g_hash_table_foreach(rows, write_row, NULL);
	fclose(profile_file);
	profile_file = NULL;
}
